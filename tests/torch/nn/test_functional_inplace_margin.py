"""torch.nn.functional's in-place activations, *_with_indices pooling, multi_margin_loss,
multilabel_margin_loss, gumbel_softmax, triplet_margin_with_distance_loss and the names it
takes from torch's top level, against PyTorch 2.13: values, gradients, seeds, errors."""
import numpy as np
import pytest

import fgrad.torch as ft

torch = pytest.importorskip("torch")
F, TF = ft.nn.functional, torch.nn.functional
X = np.random.default_rng(0).standard_normal((2, 3, 6, 6)).astype(np.float32)


def _close(a, b, tol=1e-6):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("name,args", [("relu_", ()), ("elu_", (0.5,)), ("leaky_relu_", (0.2,)),
                                       ("hardtanh_", (-0.5, 0.5)), ("celu_", (0.7,)), ("selu_", ()),
                                       ("threshold_", (0.1, 2.0)), ("rrelu_", ())])
def test_inplace_activations(name, args):
    a, b = ft.tensor(X, requires_grad=True), torch.tensor(X, requires_grad=True)
    ca, cb = a * 1, b * 1
    assert getattr(F, name)(ca, *args) is ca
    getattr(TF, name)(cb, *args)
    ca.sum().backward()
    cb.sum().backward()
    _close(ca, cb)
    _close(a.grad, b.grad)
    assert ca._version == cb._version == 1
    with pytest.raises(RuntimeError, match="leaf"):
        getattr(F, name)(a, *args)
    with pytest.raises(TypeError, match="must be a Tensor"):
        getattr(F, name)(X, *args)


@pytest.mark.parametrize("name,args", [("max_pool1d_with_indices", (3, 2, 1)),
                                       ("max_pool2d_with_indices", (3, 2, 1)),
                                       ("adaptive_max_pool1d_with_indices", (4,)),
                                       ("adaptive_max_pool2d_with_indices", ((4, 3),))])
def test_with_indices(name, args):
    x = X if "2d" in name else X[0]
    va, ia = getattr(F, name)(ft.tensor(x), *args)
    vb, ib = getattr(TF, name)(torch.tensor(x), *args)
    _close(va, vb, 0)
    np.testing.assert_array_equal(ia.numpy(), ib.numpy())


@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("reduction", ["mean", "none", "sum"])
def test_multi_margin_loss(p, weighted, reduction):
    x, y = X[0, 0, :4, :5], np.array([0, 3, 4, 1])
    w = np.linspace(0.5, 2, 5).astype(np.float32)
    a, b = ft.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    la = F.multi_margin_loss(a, ft.tensor(y), p=p, margin=0.7, weight=ft.tensor(w) if weighted else None,
                             reduction=reduction)
    lb = TF.multi_margin_loss(b, torch.tensor(y), p=p, margin=0.7, weight=torch.tensor(w) if weighted else None,
                              reduction=reduction)
    la.sum().backward()
    lb.sum().backward()
    _close(la, lb)
    _close(a.grad, b.grad)
    assert la.grad_fn.name() == lb.grad_fn.name()


def test_multi_margin_loss_unbatched_and_errors():
    x = X[0, 0, 0]
    _close(F.multi_margin_loss(ft.tensor(x), ft.tensor(2)), TF.multi_margin_loss(torch.tensor(x), torch.tensor(2)))
    with pytest.raises(ValueError, match="only p == 1 and p == 2 supported"):
        F.multi_margin_loss(ft.tensor(X[0, 0]), ft.tensor([0] * 6), p=3)
    with pytest.raises(RuntimeError, match="inconsistent target size"):
        F.multi_margin_loss(ft.tensor(X[0, 0]), ft.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="target out of range"):
        F.multi_margin_loss(ft.tensor(X[0, 0]), ft.tensor([6] * 6))


def test_multilabel_margin_loss():
    x = X[0, 0, :4, :5]
    t = np.array([[3, 0, -1, 1, 2], [1, 1, -1, 0, 0], [4, -1, 2, 0, 0], [-1, 0, 0, 0, 0]])
    for reduction in ("none", "mean", "sum"):
        a, b = ft.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        la = F.multilabel_margin_loss(a, ft.tensor(t), reduction=reduction)
        lb = TF.multilabel_margin_loss(b, torch.tensor(t), reduction=reduction)
        la.sum().backward()
        lb.sum().backward()
        _close(la, lb)
        _close(a.grad, b.grad)
    _close(F.multilabel_margin_loss(ft.tensor(x[0]), ft.tensor(t[0])),
           TF.multilabel_margin_loss(torch.tensor(x[0]), torch.tensor(t[0])))
    with pytest.raises(RuntimeError, match="inconsistent target size"):
        F.multilabel_margin_loss(ft.tensor(x), ft.tensor(t[:, :3]))
    with pytest.raises(RuntimeError, match="expected an integer"):
        F.multilabel_margin_loss(ft.tensor(x), ft.tensor(x))


@pytest.mark.parametrize("tau,hard", [(1.0, False), (0.5, True)])
def test_gumbel_softmax_follows_torch_stream(tau, hard):
    ft.manual_seed(5)
    torch.manual_seed(5)
    la, lb = ft.tensor(X[0, 0], requires_grad=True), torch.tensor(X[0, 0], requires_grad=True)
    ga, gb = F.gumbel_softmax(la, tau, hard), TF.gumbel_softmax(lb, tau, hard)
    (ga * ft.arange(6.0)).sum().backward()
    (gb * torch.arange(6.0)).sum().backward()
    _close(ga, gb, 1e-6)
    _close(la.grad, lb.grad, 1e-5)
    if hard:
        assert sorted(np.unique(ga.detach().numpy())) == [0.0, 1.0]


@pytest.mark.parametrize("kw", [dict(), dict(swap=True, margin=0.5, reduction="none"), "cosine"])
def test_triplet_margin_with_distance_loss(kw):
    r = np.random.default_rng(1)
    arrays = [r.standard_normal((5, 4)).astype(np.float32) for _ in range(3)]
    fkw, tkw = (dict(kw), dict(kw)) if kw != "cosine" else (
        dict(distance_function=lambda u, v: 1 - F.cosine_similarity(u, v)),
        dict(distance_function=lambda u, v: 1 - TF.cosine_similarity(u, v)))
    ts = [ft.tensor(a, requires_grad=True) for a in arrays]
    us = [torch.tensor(a, requires_grad=True) for a in arrays]
    la, lb = F.triplet_margin_with_distance_loss(*ts, **fkw), TF.triplet_margin_with_distance_loss(*us, **tkw)
    la.sum().backward()
    lb.sum().backward()
    _close(la, lb)
    for t, u in zip(ts, us):
        _close(t.grad, u.grad)
    with pytest.raises(ValueError, match="expected margin to be greater than 0"):
        F.triplet_margin_with_distance_loss(*ts, margin=0.0)
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        F.triplet_margin_with_distance_loss(ts[0], ts[1], ts[2][0])


def test_top_level_names():
    a = X[0, 0]
    _close(F.pdist(ft.tensor(a)), TF.pdist(torch.tensor(a)))
    _close(F.max_pool3d(ft.tensor(X), 2), TF.max_pool3d(torch.tensor(X), 2))
    _close(F.max_pool3d(ft.tensor(X), 3, 2, 1), TF.max_pool3d(torch.tensor(X), 3, 2, 1))
    x4 = np.concatenate([X, X[:, :1]], 1)
    _close(F.channel_shuffle(ft.tensor(x4), 2), TF.channel_shuffle(torch.tensor(x4), 2))
    _close(F.native_channel_shuffle(ft.tensor(x4), 4), TF.native_channel_shuffle(torch.tensor(x4), 4))
    w = np.random.default_rng(2).standard_normal((3, 2, 2, 2, 2)).astype(np.float32)
    x5 = X[:, :, :3, :3].reshape(1, 3, 2, 3, 3)
    _close(F.conv_transpose3d(ft.tensor(x5), ft.tensor(w), stride=2),
           TF.conv_transpose3d(torch.tensor(x5), torch.tensor(w), stride=2), 1e-5)
    wt = np.random.default_rng(3).standard_normal((3, 6, 2)).astype(np.float32)
    bt = np.zeros(2, np.float32)
    _close(F.conv_tbc(ft.tensor(X[0]), ft.tensor(wt), ft.tensor(bt), 1),
           TF.conv_tbc(torch.tensor(X[0]), torch.tensor(wt), torch.tensor(bt), 1), 1e-5)
    lp = np.log(np.random.default_rng(4).dirichlet(np.ones(5), (8, 2))).astype(np.float32)
    tg, il, tl = np.array([[1, 2, 1], [3, 4, 0]]), np.array([8, 7]), np.array([3, 2])
    _close(F.ctc_loss(ft.tensor(lp), ft.tensor(tg), ft.tensor(il), ft.tensor(tl)),
           TF.ctc_loss(torch.tensor(lp), torch.tensor(tg), torch.tensor(il), torch.tensor(tl)), 1e-5)
