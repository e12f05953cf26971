"""fgrad.torch.fft (torch.fft) differentially against PyTorch: values, dtypes, shapes and grad_fn
names of every transform for real, complex and integer input, each norm, n/s and dim; first and
second-order gradients (complex results are compared through their real and imaginary parts,
complex inputs built from real leaves); out=; and PyTorch's error types for bad input."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad
from tests.torch.test_tensor_ops import R, _raises_like_torch, check

torch = pytest.importorskip("torch")

C2C = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn"]
R2C = ["rfft", "rfft2", "rfftn", "ihfft", "ihfft2", "ihfftn"]
C2R = ["irfft", "irfft2", "irfftn", "hfft", "hfft2", "hfftn"]
NORMS = [None, "backward", "forward", "ortho"]


def parts(y):
    """A real tensor carrying both parts of a complex result (a real result as it is)."""
    return (y.real * 1.25 + y.imag * 0.75) if y.is_complex() else y


def squared(L, y):
    """parts(y) squared: a nonlinear function, so that the second-order gradient is not zero."""
    r = parts(y)
    return r * r


def _grad_fn_name(y):
    return type(y.grad_fn).__name__


@pytest.mark.parametrize("name", C2C + R2C + C2R)
def test_real_input_values_dtypes_gradients(name):
    check(lambda L, x: squared(L, getattr(L.fft, name)(x)), R(4, 6))


@pytest.mark.slow
@pytest.mark.parametrize("name", C2C + R2C + C2R)
def test_ortho_first_order(name):
    check(lambda L, x: parts(getattr(L.fft, name)(x, norm="ortho")), R(3, 4), order=1)


@pytest.mark.parametrize("name", C2C + C2R)
def test_complex_input(name):
    check(lambda L, x, y: squared(L, getattr(L.fft, name)(L.complex(x, y * 1.5), norm="forward")), R(3, 4),
          R(3, 4, seed=1), dtypes=("float64",))


@pytest.mark.slow
@pytest.mark.parametrize("name", C2C + R2C + C2R)
@pytest.mark.parametrize("norm", NORMS)
def test_norms_lengths_and_dims(name, norm):
    one = name in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")
    if one:
        cases = [dict(n=5), dict(n=8, dim=0), dict(dim=-2)]
    else:
        cases = [dict(s=(3, 5)), dict(s=(5, 2), dim=(0, 2)), dict(dim=(2, 0))]
        if name.endswith("n"):
            cases += [dict(), dict(s=(4,)), dict(dim=(1,))]
    for kw in cases:
        check(lambda L, x: squared(L, getattr(L.fft, name)(x, norm=norm, **kw)), R(4, 3, 6))
        if name not in R2C:
            check(lambda L, x, y: squared(L, getattr(L.fft, name)(L.complex(x, y * 1.5), norm=norm, **kw)),
                  R(4, 3, 6), R(4, 3, 6, seed=1), order=1)


@pytest.mark.parametrize("name", C2C + R2C + C2R + ["fftshift", "ifftshift"])
def test_grad_fn_names(name):
    for x in (R(4, 6), R(4, 6) + 1j * R(4, 6, seed=1)):
        if name in R2C and x.dtype.kind == "c":
            continue
        got = getattr(fgrad.torch.fft, name)(fgrad.torch.tensor(x, requires_grad=True))
        want = getattr(torch.fft, name)(torch.tensor(x, requires_grad=True))
        assert _grad_fn_name(got) == _grad_fn_name(want), (name, x.dtype)


@pytest.mark.parametrize("name", C2C + R2C + C2R)
def test_integer_and_bool_input_dtypes(name):
    for data in (np.arange(12).reshape(3, 4), np.arange(12).reshape(3, 4) % 3 == 0):
        got = getattr(fgrad.torch.fft, name)(fgrad.torch.tensor(data))
        want = getattr(torch.fft, name)(torch.tensor(data))
        assert str(got.dtype) == str(want.dtype) and tuple(got.shape) == tuple(want.shape)
        np.testing.assert_allclose(got.numpy(), want.resolve_conj().numpy(), rtol=1e-5, atol=1e-4)


def test_shifts():
    check(lambda L, x: squared(L, L.fft.fftshift(x)), R(4, 5))
    check(lambda L, x: squared(L, L.fft.ifftshift(x, dim=1)), R(4, 5))
    check(lambda L, x: squared(L, L.fft.fftshift(x, dim=(0, -1))), R(3, 4, 5))
    check(lambda L, x: squared(L, L.fft.ifftshift(L.fft.fftshift(x, (0, 1)), (0, 1))), R(3, 5))


def test_frequencies():
    for n, d in ((1, 1.0), (5, 1.0), (8, 0.1), (0, 1.0)):
        for name in ("fftfreq", "rfftfreq"):
            got, want = getattr(fgrad.torch.fft, name)(n, d), getattr(torch.fft, name)(n, d)
            assert str(got.dtype) == str(want.dtype) and tuple(got.shape) == tuple(want.shape)
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    got = fgrad.torch.fft.fftfreq(6, 0.5, dtype=fgrad.torch.float64, requires_grad=True)
    want = torch.fft.fftfreq(6, 0.5, dtype=torch.float64, requires_grad=True)
    assert got.dtype == fgrad.torch.float64 and got.requires_grad and got.is_leaf
    np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())


def test_out():
    x = R(4, 6)
    for L in (fgrad.torch, torch):
        out = L.empty(0, dtype=L.complex128)
        res = L.fft.fft(L.tensor(x), out=out)
        assert res is out and tuple(out.shape) == (4, 6)
        np.testing.assert_allclose(out.numpy(), np.fft.fft(x), rtol=1e-12, atol=1e-12)


def test_inverse_round_trips():
    x = fgrad.torch.tensor(R(4, 6))
    F = fgrad.torch.fft
    np.testing.assert_allclose(F.ifftn(F.fftn(x)).real.numpy(), x.numpy(), atol=1e-12)
    np.testing.assert_allclose(F.irfftn(F.rfftn(x), s=(4, 6)).numpy(), x.numpy(), atol=1e-12)
    np.testing.assert_allclose(F.hfft(F.ihfft(x), n=6).numpy(), x.numpy(), atol=1e-12)
    np.testing.assert_allclose(F.hfft2(F.ihfft2(x), s=(4, 6)).numpy(), x.numpy(), atol=1e-12)


@pytest.mark.parametrize("fn, args", [
    (lambda L, x: L.fft.fft(x, norm="bogus"), (R(4),)),
    (lambda L, x: L.fft.fft(x, n=0), (R(4),)),
    (lambda L, x: L.fft.fft(x, dim=2), (R(4, 3),)),
    (lambda L, x: L.fft.fftn(x, dim=(0, 0)), (R(4, 3),)),
    (lambda L, x: L.fft.fftn(x, s=(2, 2), dim=(0,)), (R(4, 3),)),
    (lambda L, x: L.fft.fftn(x, s=(2, 2, 2)), (R(4, 3),)),
    (lambda L, x: L.fft.rfft(L.complex(x, x)), (R(4),)),
    (lambda L, x: L.fft.ihfft2(L.complex(x, x)), (R(4, 4),)),
    (lambda L, x: L.fft.irfft(x), (R(1),)),
    (lambda L, x: L.fft.fftshift(x, dim=3), (R(4, 3),)),
    (lambda L, x: L.fft.fft(x.detach().numpy()), (R(4),)),
    (lambda L, x: L.fft.rfft(x, out=L.empty(3, dtype=L.complex64)), (R(4),)),
])
def test_errors_have_pytorchs_types(fn, args):
    _raises_like_torch(fn, *args)
