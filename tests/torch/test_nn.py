"""fgrad.torch.nn layers and fgrad.torch.nn.functional: values and gradients against PyTorch (when
installed) and against finite differences (always, float64, second order)."""
import numpy as np
import pytest

import fgrad
import fgrad.torch.nn as nn
import fgrad.torch.nn.functional as F
import fgrad.ops.nn as N
from fgrad.test_util import check_grads

RNG = np.random.default_rng(0)


def rand(*shape, dtype=np.float64, lo=-1.0, hi=1.0):
    return RNG.uniform(lo, hi, shape).astype(dtype)


def distinct(*shape):
    n = int(np.prod(shape))
    return ((RNG.permutation(n).reshape(shape) + 0.5) / n).astype(np.float64)


# --- functional ops: finite differences, order 2, forward and reverse (float64) --------------

FD_CASES = {
    "conv2d": (lambda x, w, b: F.conv2d(x, w, b, stride=1, padding=1), (rand(1, 2, 4, 4), rand(3, 2, 3, 3), rand(3))),
    "conv2d_strided_dilated": (lambda x, w: F.conv2d(x, w, stride=2, padding=2, dilation=2),
                               (rand(2, 2, 6, 5), rand(2, 2, 2, 3))),
    "conv2d_unbatched": (lambda x, w: F.conv2d(x, w), (rand(2, 5, 4), rand(3, 2, 2, 2))),
    "max_pool2d": (lambda x: F.max_pool2d(x, 2), (distinct(1, 2, 4, 6),)),
    "max_pool2d_overlap": (lambda x: F.max_pool2d(x, 3, 1, 1), (distinct(1, 1, 5, 4),)),
    "avg_pool2d": (lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False), (rand(1, 2, 5, 5),)),
    "relu": (F.relu, (rand(4, 3),)),
    "sigmoid": (F.sigmoid, (rand(4, 3),)),
    "tanh": (F.tanh, (rand(4, 3),)),
    "softmax": (lambda x: F.softmax(x, dim=1), (rand(3, 4),)),
    "log_softmax": (lambda x: F.log_softmax(x, dim=0), (rand(3, 4),)),
    "cross_entropy": (lambda x: F.cross_entropy(x, np.array([0, 2, 1]), label_smoothing=0.1), (rand(3, 4),)),
    "cross_entropy_weighted": (lambda x, w: F.cross_entropy(x, np.array([0, 2, 1]), w, reduction="sum"),
                               (rand(3, 4), rand(4, lo=0.5, hi=2.0))),
    "cross_entropy_probs": (lambda x, p: F.cross_entropy(x, p), (rand(3, 4), rand(3, 4, lo=0.0, hi=1.0))),
    "nll_loss": (lambda x: F.nll_loss(x, np.array([1, 0, 3]), ignore_index=0), (rand(3, 4),)),
    "mse_loss": (F.mse_loss, (rand(3, 4), rand(3, 4))),
    "linear": (F.linear, (rand(2, 3, 4), rand(5, 4), rand(5))),
    "batch_norm_train": (lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
                         (rand(4, 3), rand(3, lo=0.5, hi=1.5), rand(3))),
    "batch_norm_eval": (lambda x: F.batch_norm(x, np.array([0.1, -0.2]), np.array([1.5, 0.5]), training=False),
                        (rand(2, 2, 3, 3),)),
    "flatten": (lambda x: F.flatten(x, 1), (rand(2, 3, 2),)),
}


@pytest.mark.parametrize("name", sorted(FD_CASES))
def test_functional_check_grads(name):
    fn, args = FD_CASES[name]
    check_grads(fn, args, order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("algo", ["gemm", "fft"])
def test_conv_algorithms_agree_to_second_order(algo, monkeypatch):
    monkeypatch.setattr(N, "conv_algorithm", algo)
    x, w = rand(2, 3, 6, 5), rand(4, 3, 3, 3)
    fn = lambda x, w: N.conv2d(x, w, padding=((1, 2), (0, 1)))  # noqa: E731
    check_grads(fn, (x, w), order=2, modes=("fwd", "rev"))
    monkeypatch.setattr(N, "conv_algorithm", "gemm")
    want = N.conv2d(x, w, padding=((1, 2), (0, 1)))
    monkeypatch.setattr(N, "conv_algorithm", algo)
    np.testing.assert_allclose(fn(x, w), want, rtol=1e-12, atol=1e-12)


def test_conv_fft_path_float32_and_cached_weight_spectrum(monkeypatch):
    """The FFT path keeps float32, and a kernel changed in place between steps is not
    served from the cache."""
    monkeypatch.setattr(N, "conv_algorithm", "fft")
    x, w = rand(4, 3, 9, 9, dtype=np.float32), rand(5, 3, 5, 5, dtype=np.float32)
    y1 = N.conv2d(x, w, padding=2)
    assert y1.dtype == np.float32
    w *= 2  # in place, as an optimiser step does
    y2 = N.conv2d(x, w, padding=2)
    np.testing.assert_allclose(y2, 2 * y1, rtol=1e-4, atol=1e-4)
    loss = lambda w: (N.conv2d(x, w, padding=2) ** 2).sum()  # noqa: E731
    g1 = fgrad.grad(loss)(w)
    w -= 0.5 * w
    g2 = fgrad.grad(loss)(w)
    np.testing.assert_allclose(g2, 0.5 * g1, rtol=1e-3, atol=1e-3)
    monkeypatch.setattr(N, "conv_algorithm", "gemm")
    np.testing.assert_allclose(fgrad.grad(loss)(w), g2, rtol=1e-3, atol=1e-2)



def test_conv_algorithm_set_on_the_package_reaches_the_impls(monkeypatch):
    """fgrad.ops.nn is a package: its conv_algorithm forwards to the global conv.py reads."""
    import fgrad.ops.nn.conv as conv_module
    params = dict(stride=(1, 1), padding=((1, 1), (1, 1)), dilation=(1, 1), dtype=np.float64)
    pick = lambda: conv_module._use_fft(np, (1, 1, 4, 4), (1, 1, 3, 3), params,  # noqa: E731
                                        lambda n, c, o: 1)
    monkeypatch.setattr(N, "conv_algorithm", "fft")
    assert conv_module.conv_algorithm == N.conv_algorithm == "fft" and pick() is not None
    monkeypatch.setattr(N, "conv_algorithm", "gemm")
    assert conv_module.conv_algorithm == "gemm" and pick() is None

def test_max_pool_ties_go_to_the_first_maximum():
    x = np.zeros((1, 1, 2, 4))
    x[0, 0, 1, 2] = x[0, 0, 0, 3] = 1.0
    g = fgrad.grad(lambda x: F.max_pool2d(x, 2).sum())(x)
    np.testing.assert_array_equal(g[0, 0], [[1, 0, 0, 1], [0, 0, 0, 0]])


def test_relu_derivative_at_zero_is_zero():
    g = fgrad.grad(lambda x: F.relu(x).sum())(np.array([-1.0, 0.0, 2.0]))
    np.testing.assert_array_equal(g, [0.0, 0.0, 1.0])


def test_hessian_through_a_small_cnn():
    x = rand(1, 1, 5, 5)

    def f(w):
        h = F.max_pool2d(F.relu(F.conv2d(x, w.reshape(2, 1, 2, 2), padding=1)), 2)
        return F.cross_entropy(h.reshape(1, -1), np.array([3]))
    w = rand(8)
    h = fgrad.hessian(f)(w)
    np.testing.assert_allclose(h, h.T, atol=1e-10)
    np.testing.assert_allclose(h, fgrad.jacrev(fgrad.grad(f))(w), atol=1e-10)


def test_cross_entropy_errors():
    x = rand(3, 4)
    with pytest.raises(IndexError, match="out of bounds"):
        F.cross_entropy(x, np.array([0, 4, 1]))
    with pytest.raises(ValueError, match="reduction"):
        F.cross_entropy(x, np.array([0, 1, 1]), reduction="avg")
    with pytest.raises(ValueError, match="target"):
        F.cross_entropy(x, np.array([0, 1]))


def test_conv_errors_name_shapes():
    with pytest.raises(ValueError, match=r"\(2, 3, 5, 5\).*\(4, 2, 3, 3\)"):
        F.conv2d(rand(2, 3, 5, 5), rand(4, 2, 3, 3))
    with pytest.raises(ValueError, match="smaller than the kernel"):
        F.conv2d(rand(1, 1, 2, 2), rand(1, 1, 3, 3))
    with pytest.raises(RuntimeError, match=r"groups=2.*divisible by 2.*\[3, 1, 3, 3\]"):
        F.conv2d(rand(1, 2, 4, 4), rand(3, 1, 3, 3), groups=2)
    with pytest.raises(RuntimeError, match=r"groups=2.*expected input\[1, 3, 4, 4\] to have 2 channels"):
        F.conv2d(rand(1, 3, 4, 4), rand(2, 1, 3, 3), groups=2)


def test_functional_accepts_tensors_and_arrays_alike():
    x, w, b = rand(2, 4, dtype=np.float32), rand(3, 4, dtype=np.float32), rand(3, dtype=np.float32)
    out_np = F.linear(x, w, b)
    tw = fgrad.torch.tensor(w, requires_grad=True)
    out_t = F.linear(fgrad.torch.tensor(x), tw, fgrad.torch.tensor(b))
    assert isinstance(out_t, fgrad.torch.Tensor) and out_t.grad_fn is not None
    np.testing.assert_allclose(out_t.detach().numpy(), out_np, rtol=1e-6)
    out_t.sum().backward()
    np.testing.assert_allclose(tw.grad.numpy(), np.broadcast_to(x.sum(0), (3, 4)), rtol=1e-6)


def test_grad_fn_names_follow_pytorch():
    x = fgrad.torch.randn(2, 1, 4, 4, requires_grad=True)
    conv = nn.Conv2d(1, 2, 3)
    assert F.relu(x).grad_fn.name() == "ReluBackward0"
    assert F.max_pool2d(x, 2).grad_fn.name() == "MaxPool2DWithIndicesBackward0"
    assert F.avg_pool2d(x, 2).grad_fn.name() == "AvgPool2DBackward0"
    assert F.log_softmax(x, 1).grad_fn.name() == "LogSoftmaxBackward0"
    loss = F.cross_entropy(conv(x).reshape(2, -1), fgrad.torch.tensor([1, 0]))
    assert loss.grad_fn.name() == "NllLossBackward0"


def test_float32_stays_float32():
    x = fgrad.torch.randn(2, 1, 6, 6)
    net = nn.Sequential(nn.Conv2d(1, 2, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.AvgPool2d(1),
                        nn.Flatten(), nn.Linear(18, 3), nn.Tanh(), nn.Dropout(0.5))
    out = net(x)
    assert out.dtype == fgrad.torch.float32
    F.cross_entropy(out, fgrad.torch.tensor([0, 2])).backward()
    for p in net.parameters():
        assert p.grad.dtype == fgrad.torch.float32


# --- against PyTorch ---------------------------------------------------------------------------

torch_cases = {
    "conv2d": lambda m: (m.conv2d, dict(stride=2, padding=1), [(2, 3, 7, 6), (4, 3, 3, 3), (4,)]),
    "conv2d_5x5_same": lambda m: (m.conv2d, dict(padding=2), [(3, 4, 14, 14), (6, 4, 5, 5), (6,)]),
    "conv2d_dilated": lambda m: (m.conv2d, dict(dilation=2, padding=(1, 2)), [(2, 2, 8, 7), (3, 2, 3, 2), None]),
    "max_pool2d": lambda m: (m.max_pool2d, dict(kernel_size=2), [(2, 3, 8, 6)]),
    "max_pool2d_3_2_1_ceil": lambda m: (m.max_pool2d, dict(kernel_size=3, stride=2, padding=1, ceil_mode=True), [(2, 3, 8, 7)]),
    "avg_pool2d": lambda m: (m.avg_pool2d, dict(kernel_size=3, stride=2, padding=1), [(2, 3, 8, 7)]),
    "avg_pool2d_exclude_pad_ceil": lambda m: (m.avg_pool2d, dict(kernel_size=2, padding=1, ceil_mode=True, count_include_pad=False), [(1, 2, 5, 5)]),
    "relu": lambda m: (m.relu, {}, [(5, 7)]),
    "sigmoid": lambda m: (m.sigmoid, {}, [(5, 7)]),
    "tanh": lambda m: (m.tanh, {}, [(5, 7)]),
    "softmax": lambda m: (m.softmax, dict(dim=1), [(5, 7)]),
    "log_softmax": lambda m: (m.log_softmax, dict(dim=0), [(5, 7)]),
    "linear": lambda m: (m.linear, {}, [(4, 6), (3, 6), (3,)]),
    "mse_loss": lambda m: (m.mse_loss, {}, [(4, 6), (4, 6)]),
    "mse_loss_sum": lambda m: (m.mse_loss, dict(reduction="sum"), [(4, 6), (4, 6)]),
}


def _to_torch(torch, arrays):
    return [None if a is None else torch.tensor(a, requires_grad=True) for a in arrays]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(torch_cases))
def test_functional_matches_pytorch(name, dtype):
    torch = pytest.importorskip("torch")
    fg_fn, kw, shapes = torch_cases[name](F)
    th_fn = torch_cases[name](torch.nn.functional)[0]
    arrays = [None if s is None else rand(*s, dtype=dtype) for s in shapes]
    ours = [None if a is None else fgrad.torch.tensor(a, requires_grad=True) for a in arrays]
    theirs = _to_torch(torch, arrays)
    out, want = fg_fn(*ours, **kw), th_fn(*theirs, **kw)
    tol = 1e-5 if dtype == np.float32 else 1e-10
    assert out.dtype == (fgrad.torch.float32 if dtype == np.float32 else fgrad.torch.float64)
    np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), rtol=tol, atol=tol)
    ct = rand(*tuple(want.shape), dtype=dtype)
    out.backward(fgrad.torch.tensor(ct))
    want.backward(torch.tensor(ct))
    for o, t in zip(ours, theirs):
        if o is not None:
            np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=tol * 10, atol=tol * 10)


@pytest.mark.parametrize("kw", [dict(), dict(reduction="sum"), dict(reduction="none"),
                                dict(label_smoothing=0.2), dict(ignore_index=1),
                                dict(weight=True), dict(weight=True, label_smoothing=0.1, ignore_index=0)])
def test_cross_entropy_and_nll_match_pytorch(kw):
    torch = pytest.importorskip("torch")
    x = rand(6, 5, dtype=np.float32)
    t = np.array([0, 1, 4, 1, 2, 3])
    kw = dict(kw)
    w = rand(5, dtype=np.float32, lo=0.5, hi=2.0) if kw.pop("weight", False) else None
    ours = fgrad.torch.tensor(x, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    out = F.cross_entropy(ours, fgrad.torch.tensor(t), None if w is None else fgrad.torch.tensor(w), **kw)
    want = torch.nn.functional.cross_entropy(theirs, torch.tensor(t), None if w is None else torch.tensor(w), **kw)
    np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-6)
    out.sum().backward()
    want.sum().backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-5, atol=1e-6)
    kw.pop("label_smoothing", None)
    lp = np.log(np.exp(x) / np.exp(x).sum(1, keepdims=True)).astype(np.float32)
    out = F.nll_loss(fgrad.torch.tensor(lp), fgrad.torch.tensor(t), None if w is None else fgrad.torch.tensor(w), **kw)
    want = torch.nn.functional.nll_loss(torch.tensor(lp), torch.tensor(t), None if w is None else torch.tensor(w), **kw)
    np.testing.assert_allclose(out.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


def test_cross_entropy_spatial_and_probabilities_match_pytorch():
    torch = pytest.importorskip("torch")
    x = rand(2, 4, 3, 3, dtype=np.float32)
    t = RNG.integers(0, 4, (2, 3, 3))
    p = rand(2, 4, 3, 3, dtype=np.float32, lo=0, hi=1)
    for target, th_target in ((t, torch.tensor(t)), (p, torch.tensor(p))):
        out = F.cross_entropy(fgrad.torch.tensor(x), fgrad.torch.tensor(target), label_smoothing=0.05)
        want = torch.nn.functional.cross_entropy(torch.tensor(x), th_target, label_smoothing=0.05)
        np.testing.assert_allclose(out.numpy(), want.numpy(), rtol=1e-5)


def _copy_params(ours, theirs, torch):
    with torch.no_grad():
        for (n1, p1), (n2, p2) in zip(ours.named_parameters(), theirs.named_parameters()):
            assert n1 == n2 and tuple(p1.shape) == tuple(p2.shape)
            p2.copy_(torch.tensor(p1.detach().numpy()))


def _seed_cnn(nn_mod):
    return nn_mod.Sequential(
        nn_mod.Conv2d(1, 16, 5, padding=2), nn_mod.ReLU(), nn_mod.MaxPool2d(2),
        nn_mod.Conv2d(16, 32, 5, padding=2), nn_mod.ReLU(), nn_mod.MaxPool2d(2),
        nn_mod.Flatten(), nn_mod.Linear(32 * 7 * 7, 10))


@pytest.mark.parametrize("algo", ["auto", "gemm", "fft"])
def test_seed_cnn_forward_and_gradients_match_pytorch(algo, monkeypatch):
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(N, "conv_algorithm", algo)
    fgrad.torch.manual_seed(0)
    ours, theirs = _seed_cnn(nn), _seed_cnn(torch.nn)
    _copy_params(ours, theirs, torch)
    x = rand(8, 1, 28, 28, dtype=np.float32, lo=0, hi=1)
    y = RNG.integers(0, 10, 8)
    data = fgrad.torch.tensor(x).clone().requires_grad_(True)
    tdata = torch.tensor(x).requires_grad_(True)
    loss = nn.CrossEntropyLoss()(ours(data), fgrad.torch.tensor(y))
    tloss = torch.nn.CrossEntropyLoss()(theirs(tdata), torch.tensor(y))
    np.testing.assert_allclose(loss.item(), tloss.item(), rtol=1e-5)
    loss.backward()
    tloss.backward()
    for (name, p), tp in zip(ours.named_parameters(), theirs.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-3, atol=2e-5, err_msg=name)
    np.testing.assert_allclose(data.grad.numpy(), tdata.grad.numpy(), rtol=1e-3, atol=1e-6)


def test_default_initialisation_matches_pytorch_bounds():
    fgrad.torch.manual_seed(1)
    lin = nn.Linear(50, 7)
    conv = nn.Conv2d(3, 4, (5, 2))
    for layer, fan_in in ((lin, 50), (conv, 3 * 5 * 2)):
        bound = 1 / np.sqrt(fan_in)
        for p in (layer.weight, layer.bias):
            v = p.detach().numpy()
            assert v.dtype == np.float32
            assert np.abs(v).max() <= bound + 1e-7
            assert np.abs(v).max() > 0.6 * bound  # spread over the range, not a constant
    assert tuple(lin.weight.shape) == (7, 50) and tuple(conv.weight.shape) == (4, 3, 5, 2)
    w = nn.Linear(400, 300).weight.detach().numpy()
    assert abs(w.std() - (1 / np.sqrt(400)) / np.sqrt(3)) < 2e-3  # uniform(-b, b) has std b/sqrt(3)


def test_batchnorm_matches_pytorch_train_and_eval():
    torch = pytest.importorskip("torch")
    for ours, theirs, shape in ((nn.BatchNorm2d(3, momentum=0.2), torch.nn.BatchNorm2d(3, momentum=0.2), (4, 3, 5, 5)),
                                (nn.BatchNorm1d(3), torch.nn.BatchNorm1d(3), (6, 3)),
                                (nn.BatchNorm1d(3, momentum=None), torch.nn.BatchNorm1d(3, momentum=None), (6, 3, 4))):
        with torch.no_grad():
            theirs.weight.copy_(torch.tensor(rand(3, dtype=np.float32, lo=0.5, hi=1.5)))
            theirs.bias.copy_(torch.tensor(rand(3, dtype=np.float32)))
        ours.load_state_dict({k: fgrad.torch.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
        for step in range(3):
            x = rand(*shape, dtype=np.float32)
            xo = fgrad.torch.tensor(x, requires_grad=True)
            xt = torch.tensor(x, requires_grad=True)
            out, want = ours(xo), theirs(xt)
            np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), rtol=1e-4, atol=1e-5)
            ct = rand(*shape, dtype=np.float32)
            out.backward(fgrad.torch.tensor(ct))
            want.backward(torch.tensor(ct))
            np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), rtol=1e-3, atol=1e-5)
            np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-4, atol=1e-5)
        for k, v in theirs.state_dict().items():
            np.testing.assert_allclose(ours.state_dict()[k].numpy(), v.numpy(), rtol=1e-5, atol=1e-6, err_msg=k)
        ours.eval()
        theirs.eval()
        x = rand(*shape, dtype=np.float32)
        np.testing.assert_allclose(ours(fgrad.torch.tensor(x)).detach().numpy(), theirs(torch.tensor(x)).detach().numpy(),
                                   rtol=1e-4, atol=1e-5)


def test_dropout_train_and_eval():
    fgrad.torch.manual_seed(0)
    d = nn.Dropout(0.25)
    x = fgrad.torch.ones(200, 50)
    y = d(x).numpy()
    kept = y != 0
    assert 0.7 < kept.mean() < 0.8
    np.testing.assert_allclose(y[kept], 1 / 0.75, rtol=1e-6)
    d.eval()
    assert np.array_equal(d(x).numpy(), x.numpy())
    assert np.all(F.dropout(x, 1.0).numpy() == 0)
    with pytest.raises(ValueError):
        nn.Dropout(1.5)
    # the gradient is the same mask
    xr = fgrad.torch.ones(4, 5, requires_grad=True)
    d.train()
    out = d(xr)
    out.sum().backward()
    np.testing.assert_allclose(xr.grad.numpy(), out.detach().numpy())


def test_losses_modules():
    x = fgrad.torch.tensor(rand(4, 3, dtype=np.float32), requires_grad=True)
    y = fgrad.torch.tensor([0, 2, 1, 1])
    ce = nn.CrossEntropyLoss(reduction="sum")(x, y)
    nll = nn.NLLLoss(reduction="sum")(F.log_softmax(x, dim=1), y)
    np.testing.assert_allclose(ce.item(), nll.item(), rtol=1e-6)
    t = fgrad.torch.tensor(rand(4, 3, dtype=np.float32))
    np.testing.assert_allclose(nn.MSELoss()(x, t).item(), ((x.detach().numpy() - t.numpy()) ** 2).mean(), rtol=1e-6)
    assert tuple(nn.MSELoss(reduction="none")(x, t).shape) == (4, 3)


def test_vmap_through_cnn_ops_equals_a_loop():
    x = rand(5, 2, 1, 6, 6)
    w, b = rand(3, 1, 3, 3), rand(3)
    t = np.array([1, 0])

    def f(xi):
        h = F.max_pool2d(F.relu(F.conv2d(xi, w, b, padding=1)), 2)
        h = F.avg_pool2d(h, 3, 1, 1)
        return F.cross_entropy(F.log_softmax(h.reshape(2, -1), dim=1), t)
    for fn in (f, fgrad.grad(f)):
        got = fgrad.vmap(fn)(x)
        want = np.stack([fn(xi) for xi in x])
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)

    def per_example(w, xi):  # per-example weight gradients (weights unbatched)
        return F.conv2d(xi[None], w, padding=1).sum()
    got = fgrad.vmap(fgrad.grad(per_example), in_axes=(None, 0))(w, x[:, 0])
    want = np.stack([fgrad.grad(per_example)(w, xi) for xi in x[:, 0]])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_clip_grad_norm_and_value_match_pytorch():
    torch = pytest.importorskip("torch")
    arrays = [rand(3, 4, dtype=np.float32), rand(5, dtype=np.float32)]
    ours = [nn.Parameter(fgrad.torch.tensor(a)) for a in arrays]
    theirs = [torch.nn.Parameter(torch.tensor(a)) for a in arrays]
    for ps, lib in ((ours, fgrad.torch), (theirs, torch)):
        sum(((p * p) * (i + 1.0)).sum() for i, p in enumerate(ps)).backward()
    for norm_type in (2.0, float("inf")):
        n1 = nn.utils.clip_grad_norm_(ours, 0.5, norm_type)
        n2 = torch.nn.utils.clip_grad_norm_(theirs, 0.5, norm_type)
        np.testing.assert_allclose(float(n1), float(n2), rtol=1e-5)
        for p, q in zip(ours, theirs):
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-5, atol=1e-7)
    nn.utils.clip_grad_value_(ours, 0.01)
    torch.nn.utils.clip_grad_value_(theirs, 0.01)
    for p, q in zip(ours, theirs):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-6)
    vec = nn.utils.parameters_to_vector(ours)
    assert tuple(vec.shape) == (17,)
    nn.utils.vector_to_parameters(vec * 2, ours)
    np.testing.assert_allclose(ours[1].detach().numpy(), 2 * arrays[1], rtol=1e-6)


@pytest.mark.parametrize("kw", [dict(), dict(reduction="sum", label_smoothing=0.3),
                                dict(reduction="none", ignore_index=2), dict(weight=True),
                                dict(weight=True, label_smoothing=0.1, ignore_index=0)])
def test_cross_entropy_traced_targets_equal_concrete_targets(kw):
    """Concrete NumPy targets take a direct path; traced targets (jit) the primitive path."""
    x = rand(2, 4, 3)
    t = np.array([[0, 2, 1], [3, 2, 2]])
    kw = dict(kw)
    w = rand(4, lo=0.5, hi=2.0) if kw.pop("weight", False) else None
    eager = F.cross_entropy(x, t, w, **kw)
    staged = fgrad.jit(lambda x, t: F.cross_entropy(x, t, w, **kw))(x, t)
    np.testing.assert_allclose(staged, eager, rtol=1e-12, atol=1e-14)
    g1 = fgrad.grad(lambda x: F.cross_entropy(x, t, w, **kw).sum())(x)
    g2 = fgrad.jit(fgrad.grad(lambda x, t: F.cross_entropy(x, t, w, **kw).sum()))(x, t)
    np.testing.assert_allclose(g2, g1, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("algo", ["gemm", "fft"])
def test_conv_caches_are_safe_across_threads(algo, monkeypatch):
    import threading
    monkeypatch.setattr(N, "conv_algorithm", algo)
    x, w = rand(4, 3, 10, 10, dtype=np.float32), rand(5, 3, 5, 5, dtype=np.float32)
    loss = lambda w: (F.relu(F.conv2d(x, w, padding=2)) ** 2).sum()  # noqa: E731
    want = fgrad.grad(loss)(w)
    bad = []

    def work(seed):
        wi = w * (1 + seed)  # every thread its own kernel
        for _ in range(10):
            if not np.allclose(fgrad.grad(loss)(wi), fgrad.grad(loss)(w * (1 + seed)), rtol=1e-4, atol=1e-3):
                bad.append(seed)
            if not np.allclose(fgrad.grad(loss)(w), want, rtol=1e-4, atol=1e-3):
                bad.append(seed)
    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not bad
