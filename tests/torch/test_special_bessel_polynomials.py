"""fgrad.torch.special's Airy, modified Bessel (I, K and scaled K), spherical Bessel, sinc and
zeta functions and the orthogonal polynomials, differentially against PyTorch: values and dtypes
(float32, float64, integer inputs, Python-number operands), which results require grad (only
sinc and zeta's q have derivatives, as in PyTorch), first and second-order gradients, the
polynomials' degree handling (truncated, negative, at x = +-1) and errors."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad
from tests.torch.test_tensor_ops import R, _raises_like_torch, check

torch = pytest.importorskip("torch")

POLYNOMIALS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
               "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
               "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
               "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p"]
UNARY = {"airy_ai": (-5.0, 4.0), "modified_bessel_i0": (-5.0, 5.0), "modified_bessel_i1": (-5.0, 5.0),
         "modified_bessel_k0": (0.05, 8.0), "modified_bessel_k1": (0.05, 8.0),
         "scaled_modified_bessel_k0": (0.05, 30.0), "scaled_modified_bessel_k1": (0.05, 30.0),
         "spherical_bessel_j0": (-10.0, 10.0)}
# PyTorch's airy_ai is its own approximation, less accurate than SciPy's (which fgrad uses) in float32
TOL = {"airy_ai": {"rtol": 1e-4, "atol": 1e-6}}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_functions_without_gradient(name):
    lo, hi = UNARY[name]
    x = np.concatenate([R(20, lo=lo, hi=hi), [0.0] if lo < 0 else []])
    check(lambda L, v: getattr(L.special, name)(v), x, grad=False, tol=TOL.get(name))
    for L in (fgrad.torch, torch):  # PyTorch gives these no derivative: the result requires no grad
        assert not getattr(L.special, name)(L.tensor(x, requires_grad=True)).requires_grad
    got = getattr(fgrad.torch.special, name)(fgrad.torch.tensor([1, 2, 3]))
    want = getattr(torch.special, name)(torch.tensor([1, 2, 3]))
    assert str(got.dtype) == str(want.dtype) == "torch.float32"
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5)


def test_sinc():
    check(lambda L, x: L.special.sinc(x), R(3, 4) + 0.05)
    x = np.array([0.0, 0.5, -1.5, 2.0])
    check(lambda L, v: L.special.sinc(v), x, order=1)  # d/dx sinc = 0 at 0, as PyTorch's
    for L in (fgrad.torch, torch):
        assert type(L.special.sinc(L.tensor(x, requires_grad=True)).grad_fn).__name__ == "SincBackward0"


def test_zeta():
    q = R(3, 4, lo=0.5, hi=3.0)
    s = np.linspace(1.5, 5.0, 12).reshape(3, 4)
    check(lambda L, q: L.special.zeta(L.tensor(s, dtype=q.dtype), q), q)
    check(lambda L, q: L.special.zeta(2.5, q), q)       # a number for x
    check(lambda L, x: L.special.zeta(x + 2.0, 1.5), q, grad=False)     # a number for q
    for L in (fgrad.torch, torch):
        z = L.special.zeta(L.tensor(s), L.tensor(q, requires_grad=True))
        assert type(z.grad_fn).__name__ == "SpecialZetaBackward0"
        # no derivative in x: the backward raises as soon as x requires grad
        z = L.special.zeta(L.tensor(s, requires_grad=True), L.tensor(q, requires_grad=True))
        assert type(z.grad_fn).__name__ == "SpecialZetaBackward0"
        with pytest.raises(NotImplementedError, match="derivative for 'zeta' is not implemented"):
            z.sum().backward()


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomials(name):
    x = np.concatenate([np.linspace(-1.5, 1.5, 13), [-1.0, 1.0, 0.0, 0.5]])
    degrees = np.array([-2, 0, 1, 2, 3, 5, 7, 9, 12, 2.7, -0.5])
    for n in degrees:
        check(lambda L, v: getattr(L.special, name)(v, float(n)), x, grad=False)
    # a tensor of degrees (broadcast), integer tensors, and a number for x
    check(lambda L, v: getattr(L.special, name)(v[:, None], L.tensor(degrees)), x, grad=False)
    for L in (fgrad.torch, torch):
        out = getattr(L.special, name)(L.tensor(x, requires_grad=True), 3)
        assert not out.requires_grad
    got = getattr(fgrad.torch.special, name)(fgrad.torch.tensor([1, 2, 3]), fgrad.torch.tensor([2, 3, 4]))
    want = getattr(torch.special, name)(torch.tensor([1, 2, 3]), torch.tensor([2, 3, 4]))
    assert str(got.dtype) == str(want.dtype)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    got = getattr(fgrad.torch.special, name)(0.3, fgrad.torch.tensor([2.0, 5.0], dtype=fgrad.torch.float64))
    want = getattr(torch.special, name)(0.3, torch.tensor([2.0, 5.0], dtype=torch.float64))
    assert str(got.dtype) == str(want.dtype)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


@pytest.mark.parametrize("fn, args", [
    (lambda L, x: L.special.airy_ai(x, x), (R(3),)),
    (lambda L, x: L.special.chebyshev_polynomial_t(1.0, 2), (R(3),)),
    (lambda L, x: L.special.zeta(1.0, 2.0), (R(3),)),
    (lambda L, x: L.special.sinc(x, x), (R(3),)),
])
def test_errors_have_pytorchs_types(fn, args):
    _raises_like_torch(fn, *args)
