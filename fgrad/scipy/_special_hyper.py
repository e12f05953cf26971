"""fgrad.scipy.special's hypergeometric and combinatorial functions and the rest of SciPy's
smooth special functions JAX differentiates: hyp1f1, hyp2f1, zeta, owens_t, comb, factorial,
poch, loggamma, boxcox, boxcox1p, wofz and sph_harm_y. Values are SciPy's; derivatives of every
order are closed forms (fgrad/ops/special_hyper.py). Parameters without one (the a, b, c of the
hypergeometric functions, zeta's exponent, sph_harm_y's degree and order) raise
DifferentiationError naming the argument."""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import numpy as fnp
from ..core.avals import float_dtype
from ..core.errors import ConcretizationError, FgradTypeError, FgradValueError
from ..numpy._util import as_value, cast, dtype_of, is_traced
from ..ops import special_gamma as sg
from ..ops._special import scipy_special
from ..ops import special_hyper as sh
from ..ops.complex import complex_dtype
from ._args import float_args

__all__ = ["hyp1f1", "hyp2f1", "zeta", "owens_t", "comb", "factorial", "poch", "loggamma", "boxcox",
           "boxcox1p", "wofz", "sph_harm_y"]


def hyp1f1(a: Any, b: Any, x: Any) -> Any:
    """Kummer's confluent hypergeometric function 1F1(a; b; x). Differentiable in x
    (a/b 1F1(a+1; b+1; x)); a derivative in a or b raises DifferentiationError."""
    a, b, x = float_args("hyp1f1", a, b, x)
    return sh.hyp1f1(a, b, x)


def hyp2f1(a: Any, b: Any, c: Any, z: Any) -> Any:
    """Gauss's hypergeometric function 2F1(a, b; c; z) for real z. Differentiable in z
    (ab/c 2F1(a+1, b+1; c+1; z)); a derivative in a, b or c raises DifferentiationError."""
    a, b, c, z = float_args("hyp2f1", a, b, c, z)
    return sh.hyp2f1(a, b, c, z)


def zeta(x: Any, q: Any = None) -> Any:
    """The Hurwitz zeta function sum_k (k + q)^-x (x > 1), the Riemann zeta function with
    q=None (continued analytically below x = 1, as SciPy's). Differentiable in q
    (-x zeta(x + 1, q)); the exponent x has no closed-form derivative: asking for one raises
    DifferentiationError (JAX differentiates in q only too)."""
    if q is None:
        (x,) = float_args("zeta", x)
        return sh.riemann_zeta(x)
    x, q = float_args("zeta", x, q)
    return sh.zeta(x, q)


def owens_t(h: Any, a: Any) -> Any:
    """Owen's T function T(h, a) = integral_0^a exp(-h^2 (1 + x^2) / 2) / (2 pi (1 + x^2)) dx;
    differentiable in both."""
    h, a = float_args("owens_t", h, a)
    return sh.owens_t(h, a)


def _exact(fn, name, *args):
    """SciPy's exact (integer) result: needs concrete arguments, and has no derivative."""
    if any(is_traced(a) for a in args):
        raise ConcretizationError(f"{name}: exact=True computes integers with SciPy and needs concrete "
                                  f"arguments, not traced values; use exact=False (the gamma-function form, "
                                  f"differentiable) under a transform")
    try:
        return fn(*[np.asarray(a) for a in args])
    except ValueError as e:
        raise FgradValueError(f"{name}: {e}") from None


def comb(N: Any, k: Any, *, exact: bool = False, repetition: bool = False) -> Any:
    """The number of combinations of N things taken k at a time, binom(N, k) for 0 <= k <= N
    (real N, k; 0 elsewhere, as SciPy), or with repetition binom(N + k - 1, k). Differentiable
    in N and k inside that range (digamma differences); the jump to 0 at its edges is a
    discontinuity. exact=True gives SciPy's integers (concrete arguments only)."""
    if exact:
        sc = scipy_special(np)  # (SciPy's integers: scipy.special is imported on first use)
        return _exact(lambda n, kk: sc.comb(n, kk, exact=True, repetition=repetition), "comb", N, k)
    N, k = float_args("comb", N, k)
    if repetition:
        N = fnp.add(N, fnp.subtract(k, 1.0))
    valid = fnp.logical_and(fnp.logical_and(fnp.less_equal(k, N), fnp.greater_equal(N, 0.0)),
                            fnp.greater_equal(k, 0.0))
    # the branch not taken is evaluated at a point where it is finite (no NaN in its gradient)
    out = sh.binom(fnp.where(valid, N, 1.0), fnp.where(valid, k, 0.0))
    return fnp.where(valid, out, 0.0)


def factorial(n: Any, exact: bool = False, extend: str = "zero") -> Any:
    """n! = gamma(n + 1) for real n >= 0; for n < 0, 0 (extend='zero', SciPy's default) or
    gamma(n + 1) (extend='complex'; its poles at negative integers are inf/NaN). exact=True
    gives SciPy's integers (concrete arguments only)."""
    if extend not in ("zero", "complex"):
        raise FgradValueError(f"factorial: extend must be 'zero' or 'complex', got {extend!r}")
    if exact:
        sc = scipy_special(np)  # (SciPy's integers: scipy.special is imported on first use)
        return _exact(lambda v: sc.factorial(v, exact=True, extend=extend), "factorial", n)
    (n,) = float_args("factorial", n)
    if extend == "complex":
        return sg.gamma(fnp.add(n, 1.0))
    neg = fnp.less(n, 0.0)
    return fnp.where(neg, 0.0, sg.gamma(fnp.add(fnp.where(neg, 0.0, n), 1.0)))


def poch(z: Any, m: Any) -> Any:
    """The Pochhammer symbol (rising factorial) gamma(z + m) / gamma(z); differentiable in both
    (poch (digamma(z + m) - digamma(z)) and poch digamma(z + m))."""
    z, m = float_args("poch", z, m)
    return sh.poch(z, m)


def loggamma(x: Any) -> Any:
    """The principal branch of log gamma(x) for real x: gammaln(x) for x > 0, NaN for x < 0
    (SciPy's real loggamma); loggamma' = digamma. Complex arguments are not supported yet."""
    x = as_value(x, "loggamma")
    if dtype_of(x).kind == "c":
        raise FgradTypeError(f"loggamma: complex arguments (dtype {dtype_of(x)}) are not supported yet; fgrad's "
                             "loggamma takes real arrays (pass x.real, or gammaln for log|gamma|)")
    (x,) = float_args("loggamma", x)
    return sh.loggamma(x)


def boxcox(x: Any, lmbda: Any) -> Any:
    """The Box-Cox transform (x^lmbda - 1) / lmbda, log(x) at lmbda = 0. Differentiable in x
    and lmbda to every order, through lmbda = 0 too (no switch of formulas)."""
    x, lmbda = float_args("boxcox", x, lmbda)
    return sh.boxcox(x, lmbda)


def boxcox1p(x: Any, lmbda: Any) -> Any:
    """The Box-Cox transform of 1 + x, ((1 + x)^lmbda - 1) / lmbda, log1p(x) at lmbda = 0,
    accurate for small x. Differentiable in x and lmbda."""
    x, lmbda = float_args("boxcox1p", x, lmbda)
    return sh.boxcox1p(x, lmbda)


def wofz(z: Any) -> Any:
    """The Faddeeva function w(z) = exp(-z^2) erfc(-i z) (complex result; real z is taken as
    complex). Holomorphic: w'(z) = -2 z w(z) + 2i / sqrt(pi)."""
    z = as_value(z, "wofz")
    z = cast(z, complex_dtype(float_dtype(dtype_of(z))))
    return sh.wofz(z)


def sph_harm_y(n: Any, m: Any, theta: Any, phi: Any, *, diff_n: int = 0) -> Any:
    """The spherical harmonic Y_n^m(theta, phi) of integer degree n >= 0 and order m (theta the
    polar, phi the azimuthal angle; SciPy's convention, with the Condon-Shortley phase):
    sph_legendre_p(n, m, theta) e^{i m phi} (complex result; 0 for |m| > n). Differentiable in
    theta and phi; n and m are integers. diff_n > 0 (SciPy's derivative arrays) is not
    supported: take fgrad.grad/jacfwd of the real and imaginary parts."""
    if diff_n:
        raise FgradValueError(f"sph_harm_y: diff_n={diff_n!r} is not supported; differentiate the result with "
                              "fgrad's transforms (e.g. fgrad.jacfwd of its real and imaginary parts)")
    n, m, theta, phi = float_args("sph_harm_y", n, m, theta, phi)
    p = sh.sph_legendre_p(n, m, theta)
    mphi = fnp.multiply(m, phi)
    return fnp.multiply(p, fnp.add(fnp.cos(mphi), fnp.multiply(1j, fnp.sin(mphi))))
