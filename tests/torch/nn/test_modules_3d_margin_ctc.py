"""BatchNorm3d, MaxPool3d, ConvTranspose3d, Softmax2d, Bilinear, ChannelShuffle, the margin
losses over classes, TripletMarginWithDistanceLoss, CTCLoss, NLLLoss2d, Container,
DataParallel and factory_kwargs against PyTorch 2.13: initial parameters from the same seed,
state_dict keys, repr, forward values and gradients, errors."""
import warnings

import numpy as np
import pytest

import fgrad.torch as ft

torch = pytest.importorskip("torch")
R = np.random.default_rng(0)
X5 = R.standard_normal((2, 4, 3, 4, 4)).astype(np.float32)
X4 = X5[:, :, 0]


def _run(lib, build, inputs, train=True):
    lib.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = build(lib)
    m.train(train)
    xs = [lib.tensor(a, requires_grad=a.dtype.kind == "f") if isinstance(a, np.ndarray) else a for a in inputs]
    y = m(*xs)
    (y * y).sum().backward() if y.dtype.is_floating_point else None
    sd = m.state_dict()
    return (repr(m), list(sd), [v.detach().numpy() for v in sd.values()], y.detach().numpy(),
            [x.grad.numpy() for x in xs if hasattr(x, "grad") and x.grad is not None],
            [p.grad.numpy() for p in m.parameters()])


TGT = np.array([0, 3])
LABELS = np.array([[3, 0, -1, 1], [1, -1, 0, 0]])
CASES = {
    "SyncBatchNorm": (lambda lib: lib.nn.SyncBatchNorm(4, momentum=None), [X5]),
    "SyncBatchNorm-2d": (lambda lib: lib.nn.SyncBatchNorm(4, affine=False), [X4[:, :, 0]]),
    "BatchNorm3d": (lambda lib: lib.nn.BatchNorm3d(4, momentum=0.2), [X5]),
    "MaxPool3d": (lambda lib: lib.nn.MaxPool3d((2, 2, 2), stride=1, padding=1), [X5]),
    "AvgPool3d": (lambda lib: lib.nn.AvgPool3d(3, 2, 1, ceil_mode=True, count_include_pad=False), [X5]),
    "LPPool3d": (lambda lib: lib.nn.LPPool3d(2, (2, 2, 3), stride=1), [np.abs(X5)]),
    "AdaptiveMaxPool3d": (lambda lib: lib.nn.AdaptiveMaxPool3d((2, None, 3)), [X5]),
    "ConvTranspose3d": (lambda lib: lib.nn.ConvTranspose3d(4, 2, 2, stride=2, padding=1, output_padding=1), [X5]),
    "ConvTranspose3d-groups": (lambda lib: lib.nn.ConvTranspose3d(4, 6, (1, 2, 3), groups=2, bias=False), [X5]),
    "Softmax2d": (lambda lib: lib.nn.Softmax2d(), [X4]),
    "Bilinear": (lambda lib: lib.nn.Bilinear(4, 3, 5), [X4[:, 0, 0], X4[:, 1, 1, :3]]),
    "Bilinear-nobias": (lambda lib: lib.nn.Bilinear(4, 4, 2, bias=False, dtype=getattr(lib, "float64")),
                        [X4[:, 0].astype(np.float64), X4[:, 1].astype(np.float64)]),
    "ChannelShuffle": (lambda lib: lib.nn.ChannelShuffle(2), [X4]),
    "MultiMarginLoss": (lambda lib: lib.nn.MultiMarginLoss(p=2, margin=0.5, weight=lib.tensor([1.0, 2, 3, 4])),
                        [X4[:, 0, 0], TGT]),
    "MultiLabelMarginLoss": (lambda lib: lib.nn.MultiLabelMarginLoss(reduction="sum"), [X4[:, 0, 0], LABELS]),
    "TripletMarginWithDistanceLoss": (lambda lib: lib.nn.TripletMarginWithDistanceLoss(margin=2.0, swap=True),
                                      [X4[:, 0], X4[:, 1], X4[:, 2]]),
    "NLLLoss2d": (lambda lib: lib.nn.NLLLoss2d(), [X4, np.zeros((2, 4, 4), np.int64) + 1]),
    "DataParallel": (lambda lib: lib.nn.DataParallel(lib.nn.Linear(4, 3)), [X4[:, 0]]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_module_matches_torch(name):
    build, inputs = CASES[name]
    f, t = _run(ft, build, inputs), _run(torch, build, inputs)
    assert f[0] == t[0]  # repr
    assert f[1] == t[1]  # state_dict keys
    np.testing.assert_allclose(f[3], t[3], rtol=2e-5, atol=2e-5)  # forward
    for group in (2, 4, 5):  # buffers/parameters, input grads, parameter grads
        assert len(f[group]) == len(t[group])
        for a, b in zip(f[group], t[group]):
            np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-5)


def test_maxpool3d_indices_and_unpool():
    outs = []
    for lib in (ft, torch):
        x = lib.tensor(X5, requires_grad=True)
        y, idx = lib.nn.MaxPool3d(2, return_indices=True)(x)
        z = lib.nn.MaxUnpool3d(2)(y, idx, output_size=X5.shape[2:])
        (z * z).sum().backward()
        outs.append((y.detach().numpy(), idx.numpy(), z.detach().numpy(), x.grad.numpy()))
    for a, b in zip(*outs):
        np.testing.assert_array_equal(a, b)
    assert repr(ft.nn.MaxUnpool3d(2)) == repr(torch.nn.MaxUnpool3d(2))


def test_batchnorm3d_eval_and_input_check():
    f = _run(ft, CASES["BatchNorm3d"][0], [X5], train=False)
    t = _run(torch, CASES["BatchNorm3d"][0], [X5], train=False)
    np.testing.assert_allclose(f[3], t[3], rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="expected 5D input"):
        ft.nn.BatchNorm3d(4)(ft.tensor(X4))


def test_ctc_loss_module():
    lp = np.log(np.random.default_rng(4).dirichlet(np.ones(5), (8, 2))).astype(np.float32)
    tg, il, tl = np.array([[1, 2, 1], [3, 4, 0]]), np.array([8, 7]), np.array([3, 2])
    for red in ("mean", "sum", "none"):
        a, b = ft.tensor(lp, requires_grad=True), torch.tensor(lp, requires_grad=True)
        la = ft.nn.CTCLoss(reduction=red)(a, ft.tensor(tg), ft.tensor(il), ft.tensor(tl))
        lb = torch.nn.CTCLoss(reduction=red)(b, torch.tensor(tg), torch.tensor(il), torch.tensor(tl))
        la.sum().backward()
        lb.sum().backward()
        np.testing.assert_allclose(la.detach().numpy(), lb.detach().numpy(), rtol=1e-5)
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-4, atol=1e-6)
    assert repr(ft.nn.CTCLoss(blank=2)) == repr(torch.nn.CTCLoss(blank=2))


def test_errors_and_deprecations():
    with pytest.raises(ValueError, match="Softmax2d: expected input to be 3D or 4D, got 2D"):
        ft.nn.Softmax2d()(ft.zeros(2, 3))
    with pytest.raises(ValueError, match="only p == 1 and p == 2 supported"):
        ft.nn.MultiMarginLoss(p=3)
    with pytest.raises(ValueError, match="expected weight to be None or 1D tensor, got 2D"):
        ft.nn.MultiMarginLoss(weight=ft.ones(2, 2))
    with pytest.raises(ValueError, match="expected margin to be greater than 0"):
        ft.nn.TripletMarginWithDistanceLoss(margin=0)
    with pytest.warns(UserWarning, match="NLLLoss2d has been deprecated"):
        ft.nn.NLLLoss2d()
    with pytest.warns(UserWarning, match="nn.Container is deprecated"):
        c = ft.nn.Container(a=ft.nn.Linear(2, 2))
    assert list(c.state_dict()) == ["a.weight", "a.bias"]


def test_sync_batchnorm_conversion_and_errors():
    for lib in (ft, torch):
        lib.manual_seed(0)
        net = lib.nn.Sequential(lib.nn.Conv2d(3, 4, 1), lib.nn.BatchNorm2d(4), lib.nn.Sequential(lib.nn.BatchNorm1d(2)))
        conv = lib.nn.SyncBatchNorm.convert_sync_batchnorm(net)
        assert [type(m).__name__ for m in conv.modules()] == ["Sequential", "Conv2d", "SyncBatchNorm", "Sequential",
                                                              "SyncBatchNorm"]
        assert conv[1].weight is net[1].weight and conv[1].running_mean is net[1].running_mean
    assert repr(ft.nn.SyncBatchNorm(3)) == repr(torch.nn.SyncBatchNorm(3))
    with pytest.raises(ValueError, match="expected at least 2D input"):
        ft.nn.SyncBatchNorm(3)(ft.zeros(3))
    with pytest.raises(ValueError, match="number of input channels should be non-zero"):
        ft.nn.SyncBatchNorm(3)(ft.zeros(2, 0))


def test_assert_int_or_pair():
    ft.nn.functional.assert_int_or_pair(3, "k", "{} must be an int or a pair")
    ft.nn.functional.assert_int_or_pair((3, 4), "k", "{} must be an int or a pair")
    with pytest.raises(AssertionError, match="k must be an int or a pair"):
        ft.nn.functional.assert_int_or_pair((1, 2, 3), "k", "{} must be an int or a pair")


def test_factory_kwargs():
    for kw in (None, {}, {"device": "cpu", "dtype": 1}, {"factory_kwargs": {"dtype": 2}, "device": "cpu"}):
        assert ft.nn.factory_kwargs(kw) == torch.nn.factory_kwargs(kw)
    with pytest.raises(TypeError, match="unexpected kwargs"):
        ft.nn.factory_kwargs({"bias": True})
    with pytest.raises(TypeError, match="dtype specified twice"):
        ft.nn.factory_kwargs({"dtype": 1, "factory_kwargs": {"dtype": 2}})


def test_buffer_registers_as_torch():
    out = []
    for lib in (ft, torch):
        m = lib.nn.Linear(2, 2)
        data = lib.ones(3)
        m.stats = lib.nn.Buffer(data)
        m.scratch = lib.nn.Buffer(lib.zeros(2), persistent=False)
        m.stats.add_(1)  # shares data's storage
        out.append((list(m.state_dict()), [n for n, _ in m.named_buffers()], m.stats.numpy().tolist(),
                    data.numpy().tolist(), isinstance(m.stats, lib.nn.Buffer), isinstance(lib.ones(1), lib.nn.Buffer),
                    m.scratch.persistent, repr(lib.nn.Buffer())))
    assert out[0] == out[1]
    m = ft.nn.Module()
    m.plain = 3
    with pytest.raises(KeyError, match="attribute 'plain' already exists"):
        m.plain = ft.nn.Buffer(ft.ones(1))


@pytest.mark.parametrize("size,channels", [(5, 6), (3, 4), (2, 7), (6, 3)])
def test_cross_map_lrn2d_matches_torch(size, channels):
    shape = (2, channels, 3, 4)
    x = np.random.default_rng(channels).standard_normal(shape).astype(np.float32) * 3
    w = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    out = []
    for lib in (ft, torch):
        a = lib.tensor(x, requires_grad=True)
        m = lib.nn.CrossMapLRN2d(size, alpha=0.1, beta=0.75, k=2.0)
        y = m(a)
        (y * lib.tensor(w)).sum().backward()
        out.append((y.detach().numpy(), a.grad.numpy(), repr(m), y.grad_fn.name()))
    np.testing.assert_allclose(out[0][0], out[1][0], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(out[0][1], out[1][1], rtol=1e-5, atol=1e-5)
    assert out[0][2:] == out[1][2:]
    with pytest.raises(ValueError, match="Expected input to be 4D, got 3D"):
        ft.nn.CrossMapLRN2d(3)(ft.zeros(2, 3, 4))
