"""The classical orthogonal polynomials of integer degree n, evaluated by scipy.special's
eval_* functions: Chebyshev T and U (and their shifted forms on [0, 1]), Hermite (physicists'
H and probabilists' He), Laguerre and generalized Laguerre, Legendre and Gegenbauer.

Derivatives in x are the polynomials' own differentiation identities, written with these same
primitives, so every order is exact: T_n' = n U_{n-1}, U_n' = 2 C^(2)_{n-1}, P_n' = C^(3/2)_{n-1},
C^(a)_n' = 2a C^(a+1)_{n-1}, H_n' = 2n H_{n-1}, He_n' = n He_{n-1}, L^(a)_n' = -L^(a+1)_{n-1}
(the degree n - 1 clamped at 0 and, where no factor n does it, a factor that is 0 for n = 0:
the constant polynomial's derivative). The degree is an integer: a derivative in n raises
DifferentiationError, as does one in the Gegenbauer/Laguerre parameter a (no closed form)."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..core.avals import float_dtype
from ._special import define, no_partial, scipy_special
from .elementwise import add, const, maximum, mul, neg, sub

_DEGREE_WHY = "the degree n is an integer"
_PARAM_WHY = "the derivative of the polynomial in its parameter has no closed form here"


def _impl(scipy_name: str):
    """scipy.special.<scipy_name>(n, ..., x) with n passed as integers where every degree is a
    whole number (SciPy's exact recurrence; non-integral degrees take its analytic continuation)."""
    def impl(n, *rest, xp):
        f = getattr(scipy_special(xp), scipy_name, None)
        with np.errstate(all="ignore"):
            whole = bool(xp.all(xp.isfinite(n) & (n == xp.round(n))))
            args = (n.astype(np.int64) if whole else n, *rest)
            if f is None:  # cupyx.scipy.special lacks it: the host computes it
                out = xp.asarray(getattr(scipy_special(np), scipy_name)(*[xp.asnumpy(a) for a in args]))
            else:
                out = f(*args)
        dtype = float_dtype(rest[-1].dtype)
        return out if out.dtype == dtype else out.astype(dtype)
    impl.__name__ = f"{scipy_name}_impl"
    return impl


def _lower(n):
    """n - 1, clamped at 0 (a degree that the derivative's factor, or the constant polynomial, zeroes)."""
    return maximum(sub(n, const(n, 1.0)), const(n, 0.0))


def _step(n):
    """1 for a degree n >= 1, 0 for n = 0 (the constant polynomial)."""
    return sub(n, _lower(n))


def _times(c, n, y):
    return mul(mul(const(y, c), n), y)


def _shifted(x):
    return sub(mul(const(x, 2.0), x), const(x, 1.0))


def _nope(fn, arg, name, why):
    return no_partial(fn, arg, name, why)


chebyt_p = define("eval_chebyt", _impl("eval_chebyt"), _nope("eval_chebyt", 0, "n", _DEGREE_WHY),
                  lambda n, x, out: _times(1.0, n, eval_chebyu(_lower(n), x)))
chebyu_p = define("eval_chebyu", _impl("eval_chebyu"), _nope("eval_chebyu", 0, "n", _DEGREE_WHY),
                  lambda n, x, out: mul(mul(const(x, 2.0), _step(n)), eval_gegenbauer(_lower(n), const(x, 2.0), x)))
sh_chebyt_p = define("eval_sh_chebyt", _impl("eval_sh_chebyt"), _nope("eval_sh_chebyt", 0, "n", _DEGREE_WHY),
                     lambda n, x, out: _times(2.0, n, eval_chebyu(_lower(n), _shifted(x))))
sh_chebyu_p = define("eval_sh_chebyu", _impl("eval_sh_chebyu"), _nope("eval_sh_chebyu", 0, "n", _DEGREE_WHY),
                     lambda n, x, out: mul(mul(const(x, 4.0), _step(n)),
                                           eval_gegenbauer(_lower(n), const(x, 2.0), _shifted(x))))
legendre_p = define("eval_legendre", _impl("eval_legendre"), _nope("eval_legendre", 0, "n", _DEGREE_WHY),
                    lambda n, x, out: mul(_step(n), eval_gegenbauer(_lower(n), const(x, 1.5), x)))
gegenbauer_p = define(
    "eval_gegenbauer", _impl("eval_gegenbauer"), _nope("eval_gegenbauer", 0, "n", _DEGREE_WHY),
    _nope("eval_gegenbauer", 1, "alpha", _PARAM_WHY),
    lambda n, a, x, out: mul(mul(mul(const(x, 2.0), a), _step(n)),
                             eval_gegenbauer(_lower(n), add(a, const(a, 1.0)), x)))
hermite_p = define("eval_hermite", _impl("eval_hermite"), _nope("eval_hermite", 0, "n", _DEGREE_WHY),
                   lambda n, x, out: _times(2.0, n, eval_hermite(_lower(n), x)))
hermitenorm_p = define("eval_hermitenorm", _impl("eval_hermitenorm"),
                       _nope("eval_hermitenorm", 0, "n", _DEGREE_WHY),
                       lambda n, x, out: _times(1.0, n, eval_hermitenorm(_lower(n), x)))
genlaguerre_p = define(
    "eval_genlaguerre", _impl("eval_genlaguerre"), _nope("eval_genlaguerre", 0, "n", _DEGREE_WHY),
    _nope("eval_genlaguerre", 1, "alpha", _PARAM_WHY),
    lambda n, a, x, out: neg(mul(_step(n), eval_genlaguerre(_lower(n), add(a, const(a, 1.0)), x))))
laguerre_p = define("eval_laguerre", _impl("eval_laguerre"), _nope("eval_laguerre", 0, "n", _DEGREE_WHY),
                    lambda n, x, out: neg(mul(_step(n), eval_genlaguerre(_lower(n), const(x, 1.0), x))))


def eval_chebyt(n: Any, x: Any) -> Any:
    """The Chebyshev polynomial of the first kind T_n(x)."""
    return chebyt_p.bind(n, x)


def eval_chebyu(n: Any, x: Any) -> Any:
    """The Chebyshev polynomial of the second kind U_n(x)."""
    return chebyu_p.bind(n, x)


def eval_sh_chebyt(n: Any, x: Any) -> Any:
    """The shifted Chebyshev polynomial T_n(2x - 1)."""
    return sh_chebyt_p.bind(n, x)


def eval_sh_chebyu(n: Any, x: Any) -> Any:
    """The shifted Chebyshev polynomial U_n(2x - 1)."""
    return sh_chebyu_p.bind(n, x)


def eval_legendre(n: Any, x: Any) -> Any:
    """The Legendre polynomial P_n(x)."""
    return legendre_p.bind(n, x)


def eval_gegenbauer(n: Any, alpha: Any, x: Any) -> Any:
    """The Gegenbauer polynomial C^(alpha)_n(x)."""
    return gegenbauer_p.bind(n, alpha, x)


def eval_hermite(n: Any, x: Any) -> Any:
    """The physicists' Hermite polynomial H_n(x)."""
    return hermite_p.bind(n, x)


def eval_hermitenorm(n: Any, x: Any) -> Any:
    """The probabilists' Hermite polynomial He_n(x)."""
    return hermitenorm_p.bind(n, x)


def eval_genlaguerre(n: Any, alpha: Any, x: Any) -> Any:
    """The generalized Laguerre polynomial L^(alpha)_n(x)."""
    return genlaguerre_p.bind(n, alpha, x)


def eval_laguerre(n: Any, x: Any) -> Any:
    """The Laguerre polynomial L_n(x)."""
    return laguerre_p.bind(n, x)
