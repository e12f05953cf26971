"""Lazy modules and their placeholders against PyTorch 2.13: repr and state_dict keys before
and after the first forward, the class they become, the materialised parameters' values from
the same seed (and the generator left in the same state), outputs, gradients, errors."""
import warnings

import numpy as np
import pytest

import fgrad.torch as ft

torch = pytest.importorskip("torch")

CASES = [("LazyLinear", (5,), (3, 4)), ("LazyLinear", (2, False), (2, 3, 6)),
         ("LazyConv1d", (4, 3, 2), (3, 7)), ("LazyConv2d", (4, 3), (2, 3, 6, 6)),
         ("LazyConv3d", (2, 2), (1, 3, 4, 4, 4)), ("LazyConvTranspose1d", (2, 3), (2, 4, 5)),
         ("LazyConvTranspose2d", (4, 3, 2), (2, 3, 5, 5)), ("LazyConvTranspose3d", (4, 2), (1, 2, 3, 3, 3)),
         ("LazyBatchNorm1d", (), (4, 3)), ("LazyBatchNorm2d", (), (2, 3, 4, 4)),
         ("LazyBatchNorm3d", (1e-3, 0.2), (2, 3, 2, 2, 2)), ("LazyInstanceNorm1d", (), (2, 3, 4)),
         ("LazyInstanceNorm2d", (), (2, 3, 4, 4)), ("LazyInstanceNorm3d", (1e-5, 0.1, False, False), (2, 3, 2, 2, 2))]


def _run(lib, name, args, shape):
    lib.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = getattr(lib.nn, name)(*args)
    before = (repr(m), list(m.state_dict()), m.has_uninitialized_params())
    x = lib.tensor(np.random.default_rng(1).standard_normal(shape).astype(np.float32), requires_grad=True)
    y = m(x)
    (y * y).sum().backward()
    sd = m.state_dict()
    return (before, repr(m), type(m).__name__, list(sd), [v.detach().numpy() for v in sd.values()],
            y.detach().numpy(), x.grad.numpy(), lib.rand(3).numpy(), m.has_uninitialized_params()
            if hasattr(m, "has_uninitialized_params") else None)


@pytest.mark.filterwarnings("ignore:input.s size at dim=1")
@pytest.mark.parametrize("name,args,shape", CASES, ids=[f"{c[0]}{c[1]}" for c in CASES])
def test_lazy_module_matches_torch(name, args, shape):
    f, t = _run(ft, name, args, shape), _run(torch, name, args, shape)
    assert f[0] == t[0]  # repr, keys and state before the first forward
    assert f[1:4] == t[1:4]  # repr, class and keys after it
    assert f[8] == t[8]
    for a, b in zip(f[4], t[4]):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(f[5], t[5], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(f[6], t[6], rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(f[7], t[7])  # the generator advanced alike


def test_placeholders():
    p = ft.nn.UninitializedParameter()
    assert repr(p) == "<UninitializedParameter>" and isinstance(p, ft.nn.Parameter)
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized parameter"):
        p.shape
    p.materialize((2, 3), dtype=ft.float64)
    assert type(p) is ft.nn.Parameter and tuple(p.shape) == (2, 3) and p.dtype == ft.float64
    b = ft.nn.UninitializedBuffer()
    assert repr(b) == "<UninitializedBuffer>"
    b.materialize((4,))
    assert type(b) is ft.Tensor and tuple(b.shape) == (4,) and b.dtype == ft.float32


def test_lazy_errors():
    with pytest.raises(RuntimeError, match=r"Expected 3D \(unbatched\) or 4D \(batched\) input to LazyConv2d"):
        ft.nn.LazyConv2d(2, 3)(ft.zeros(5, 5))
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        ft.nn.LazyConv2d(4, 3, groups=2)(ft.zeros(1, 3, 5, 5))
