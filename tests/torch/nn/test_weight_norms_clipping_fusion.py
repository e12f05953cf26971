"""torch.nn.utils' weight_norm / spectral_norm (and their removal), get_total_norm,
clip_grads_with_norm_, clip_grad_norm, the conv/linear-batchnorm fusions and skip_init,
against PyTorch 2.13: parameters, buffers, state_dict keys, random draws, values, gradients,
errors."""
import warnings

import numpy as np
import pytest

import fgrad.torch as ft

torch = pytest.importorskip("torch")


def _np(t):
    return t.detach().numpy()


def _both(build):
    """build(lib) run under fgrad.torch and torch from the same seed."""
    out = []
    for lib in (ft, torch):
        lib.manual_seed(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            out.append(build(lib))
    return out


@pytest.mark.parametrize("case", ["linear", "conv-dim1", "conv-whole"])
def test_weight_norm_matches_torch(case):
    def build(lib):
        if case == "linear":
            m, dim, x = lib.nn.Linear(4, 3), 0, lib.ones(2, 4)
        else:
            m, x = lib.nn.Conv2d(2, 3, 3), lib.ones(1, 2, 5, 5)
            dim = 1 if case == "conv-dim1" else None
        lib.nn.utils.weight_norm(m, dim=dim)
        y = m(x * 0.5)
        (y * y).sum().backward()
        keys = list(m.state_dict())
        shapes = [tuple(v.shape) for v in m.state_dict().values()]
        grads = (_np(m.weight_g.grad), _np(m.weight_v.grad))
        lib.nn.utils.remove_weight_norm(m)
        return keys, shapes, _np(y), grads, list(m.state_dict()), _np(m.weight), type(m.weight).__name__
    f, t = _both(build)
    assert f[0] == t[0] and f[1] == t[1] and f[4] == t[4] and f[6] == t[6] == "Parameter"
    np.testing.assert_allclose(f[2], t[2], rtol=1e-5, atol=1e-6)
    for a, b in zip(f[3], t[3]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(f[5], t[5], rtol=1e-6, atol=1e-6)


def test_weight_norm_errors_and_warning():
    m = ft.nn.Linear(2, 2)
    with pytest.warns(FutureWarning, match="deprecated"):
        ft.nn.utils.weight_norm(m)
    with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks"), \
            pytest.warns(FutureWarning):
        ft.nn.utils.weight_norm(m)
    with pytest.raises(ValueError, match="weight_norm of 'bias' not found"):
        ft.nn.utils.remove_weight_norm(m, "bias")


@pytest.mark.parametrize("case", ["conv", "convT", "linear-3it"])
def test_spectral_norm_matches_torch(case):
    def build(lib):
        if case == "conv":
            m, x, kw = lib.nn.Conv2d(2, 3, 3), lib.ones(1, 2, 5, 5), {}
        elif case == "convT":
            m, x, kw = lib.nn.ConvTranspose2d(2, 3, 3), lib.ones(1, 2, 4, 4), {}
        else:
            m, x, kw = lib.nn.Linear(5, 4), lib.ones(3, 5), {"n_power_iterations": 3}
        lib.nn.utils.spectral_norm(m, **kw)
        for _ in range(3):
            y = m(x)
        y.sum().backward()
        train = (list(m.state_dict()), _np(y), _np(m.weight_orig.grad), _np(m.weight_u), _np(m.weight_v))
        m.eval()
        ye = _np(m(x))
        lib.nn.utils.remove_spectral_norm(m)
        return train, ye, list(m.state_dict()), _np(m.weight)
    f, t = _both(build)
    assert f[0][0] == t[0][0] and f[2] == t[2]
    for a, b in zip(f[0][1:], t[0][1:]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(f[1], t[1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(f[3], t[3], rtol=1e-5, atol=1e-6)


def test_spectral_norm_errors():
    m = ft.nn.Linear(2, 2)
    with pytest.raises(ValueError, match="Expected n_power_iterations to be positive"):
        ft.nn.utils.spectral_norm(m, n_power_iterations=0)
    ft.nn.utils.spectral_norm(m)
    with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks"):
        ft.nn.utils.spectral_norm(m)
    with pytest.raises(ValueError, match="spectral_norm of 'bias' not found"):
        ft.nn.utils.remove_spectral_norm(m, "bias")
    with pytest.raises(ValueError, match="cannot be applied as parameter `bias` is None"):
        ft.nn.utils.spectral_norm(ft.nn.Linear(2, 2, bias=False), name="bias")


@pytest.mark.parametrize("p", [2.0, 1.0, float("inf"), 3.0])
def test_total_norm_and_clip_with_norm(p):
    r = np.random.default_rng(0)
    arrays = [r.standard_normal(s).astype(np.float32) for s in ((3, 4), (5,), (2, 2, 2))]

    def build(lib):
        ps = [lib.nn.Parameter(lib.zeros(a.shape)) for a in arrays]
        for q, a in zip(ps, arrays):
            q.grad = lib.tensor(a)
        total = lib.nn.utils.get_total_norm([q.grad for q in ps], p)
        lib.nn.utils.clip_grads_with_norm_(ps, 0.5, total)
        return _np(total), [_np(q.grad) for q in ps], total.dtype
    f, t = _both(build)
    np.testing.assert_allclose(f[0], t[0], rtol=1e-6)
    assert str(f[2]).rsplit(".")[-1] == str(t[2]).rsplit(".")[-1]
    for a, b in zip(f[1], t[1]):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_total_norm_edges():
    assert float(ft.nn.utils.get_total_norm([])) == 0.0
    with pytest.raises(RuntimeError, match="non-finite"):
        ft.nn.utils.get_total_norm([ft.tensor([1.0, float("inf")])], error_if_nonfinite=True)
    q = ft.nn.Parameter(ft.zeros(2))
    q.grad = ft.tensor([3.0, 4.0])
    with pytest.warns(FutureWarning, match="clip_grad_norm_"):
        assert float(ft.nn.utils.clip_grad_norm([q], 1.0)) == pytest.approx(5.0)
    np.testing.assert_allclose(q.grad.numpy(), [0.6, 0.8], rtol=1e-5)


@pytest.mark.parametrize("kind", ["conv", "convT", "linear"])
def test_fusion_matches_torch_and_the_pair(kind):
    def build(lib):
        if kind == "linear":
            a, bn, x = lib.nn.Linear(4, 3), lib.nn.BatchNorm1d(3), lib.randn(6, 4)
        elif kind == "conv":
            a, bn, x = lib.nn.Conv2d(2, 3, 3), lib.nn.BatchNorm2d(3), lib.randn(2, 2, 5, 5)
        else:
            a, bn, x = lib.nn.ConvTranspose2d(2, 3, 3, bias=False), lib.nn.BatchNorm2d(3), lib.randn(2, 2, 4, 4)
        bn(a(x))  # running statistics
        with lib.no_grad():
            bn.weight.mul_(1.5)
            bn.bias.add_(0.25)
        a.eval()
        bn.eval()
        if kind == "linear":
            fused = lib.nn.utils.fuse_linear_bn_eval(a, bn)
        else:
            fused = lib.nn.utils.fuse_conv_bn_eval(a, bn, transpose=kind == "convT")
        return _np(fused(x)), _np(bn(a(x))), _np(fused.weight), _np(fused.bias), fused.training
    f, t = _both(build)
    np.testing.assert_allclose(f[0], f[1], rtol=1e-4, atol=1e-5)
    for a, b in zip(f[:4], t[:4]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    with pytest.raises(AssertionError, match="Fusion only for eval"):
        ft.nn.utils.fuse_conv_bn_eval(ft.nn.Conv2d(1, 1, 1), ft.nn.BatchNorm2d(1))
    with pytest.raises(AssertionError, match="To fuse"):
        ft.nn.utils.fuse_linear_bn_eval(ft.nn.Linear(2, 3).eval(), ft.nn.BatchNorm1d(2).eval())


def test_skip_init_leaves_the_generator():
    ft.manual_seed(3)
    m = ft.nn.utils.skip_init(ft.nn.Linear, 5, 2)
    assert isinstance(m, ft.nn.Linear) and tuple(m.weight.shape) == (2, 5)
    after = ft.rand(3)
    ft.manual_seed(3)
    np.testing.assert_array_equal(after.numpy(), ft.rand(3).numpy())
    with pytest.raises(RuntimeError, match="Expected a Module"):
        ft.nn.utils.skip_init(int)

    class NoDevice(ft.nn.Module):
        def __init__(self):
            super().__init__()
    with pytest.raises(RuntimeError, match="Module must support a 'device' arg"):
        ft.nn.utils.skip_init(NoDevice)
