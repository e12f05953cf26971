"""Exponential and trigonometric integrals and their relatives: exp1, expi, expn, the sine and
cosine integrals (sici), the Fresnel integrals, Dawson's integral and Spence's function
(the dilogarithm). SciPy's ufuncs compute the values (series and asymptotic expansions);
every derivative is a closed form in elementary functions or these same primitives, so every
order is exact:

  exp1' = -exp(-x) / x            expi' = exp(x) / x        expn(n, x)' = -expn(n - 1, x)
  Si' = sin(x) / x (1 at 0)       Ci' = cos(x) / x          dawsn' = 1 - 2 x dawsn(x)
  S' = sin(pi x^2 / 2)            C' = cos(pi x^2 / 2)      spence'(z) = log(z) / (1 - z)

expn's recurrence reaches negative orders, where SciPy returns NaN: the primitive extends E_n
to n < 0 by E_n = (exp(-x) - n E_{n+1}) / x (the public expn puts SciPy's NaN back for n < 0).
spence' at z = 1 is 0/0 with limit -1: near 1 it is the series -sum (1 - z)^k / (k + 1), an
exact form of the same analytic function, so the switch between the two is no kink."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core.avals import float_dtype
from ._special import define, no_partial, scipy_special
from .elementwise import abs, add, const, cos, div, eq, exp, log, lt, mul, neg, select, sin, sub
from .float_parts import sinc_maclaurin


def host_impl(fn):
    """An impl `(*arrays, xp) -> array` computing fn(sc, *arrays) with sc = scipy.special (or
    the host's, for CuPy arrays: cupyx lacks most of these functions), in the float dtype of
    the first operand (SciPy's loops may widen float32)."""

    def impl(*args, xp):
        host = [a if xp is np else xp.asnumpy(a) for a in args]
        with np.errstate(all="ignore"):  # poles and domain edges give inf/NaN, as in SciPy
            out = np.asarray(fn(scipy_special(np), *host))
        dtype = float_dtype(args[0].dtype)
        out = out if out.dtype == dtype else out.astype(dtype)
        return out if xp is np else xp.asarray(out)

    impl.__name__ = f"{getattr(fn, '__name__', 'special')}_impl"
    return impl


# --- exponential integrals ---------------------------------------------------------------------

exp1_p = define("exp1", "exp1", lambda x, out: neg(div(exp(neg(x)), x)))
expi_p = define("expi", "expi", lambda x, out: div(exp(x), x))


def _expn_all_orders(sc, n, x):
    """E_n(x) for integer n, negative n too: SciPy's for n >= 0; below, the downward
    recurrence E_n = (exp(-x) - n E_{n+1}) / x from E_0 = exp(-x) / x."""
    n = np.asarray(n)
    out = np.asarray(sc.expn(np.maximum(n, 0), x), dtype=np.result_type(x, np.float64))
    lowest = int(np.min(n)) if n.size else 0
    if lowest < 0:
        e = np.exp(-x) / x
        for k in range(-1, lowest - 1, -1):
            e = (np.exp(-x) - k * e) / x
            out = np.where(n == k, e, out)
    return out


_EXPN_WHY = "the order n is an integer"
expn_p = define("expn", host_impl(_expn_all_orders), no_partial("expn", 0, "n", _EXPN_WHY),
                lambda n, x, out: neg(expn(sub(n, const(n, 1.0)), x)))


def exp1(x: Any) -> Any:
    """E_1(x) = integral_x^inf exp(-t) / t dt for x > 0 (NaN for x < 0, inf at 0)."""
    return exp1_p.bind(x)


def expi(x: Any) -> Any:
    """The exponential integral Ei(x) (principal value), -inf at 0."""
    return expi_p.bind(x)


def expn(n: Any, x: Any) -> Any:
    """E_n(x) = integral_1^inf exp(-x t) / t^n dt, integer n (extended below 0 by recurrence);
    differentiable in x."""
    return expn_p.bind(n, x)


# --- sine and cosine integrals, Fresnel integrals, Dawson's integral ------------------------------------


def _sin_over(x):
    """sin(x) / x, exact at 0 to every order (sinc_maclaurin there)."""
    at_zero = eq(x, const(x, 0.0))
    safe = select(at_zero, const(x, 1.0), x)  # no 0 / 0 in the branch not taken
    return select(at_zero, sinc_maclaurin(x, 0), div(sin(safe), safe))


si_p = define("sici_si", host_impl(lambda sc, x: sc.sici(x)[0]), lambda x, out: _sin_over(x))
ci_p = define("sici_ci", host_impl(lambda sc, x: sc.sici(x)[1]), lambda x, out: div(cos(x), x))


def _half_pi_square(x):
    return mul(const(x, math.pi / 2.0), mul(x, x))


fresnel_s_p = define("fresnel_s", host_impl(lambda sc, x: sc.fresnel(x)[0]), lambda x, out: sin(_half_pi_square(x)))
fresnel_c_p = define("fresnel_c", host_impl(lambda sc, x: sc.fresnel(x)[1]), lambda x, out: cos(_half_pi_square(x)))
dawsn_p = define("dawsn", "dawsn", lambda x, out: sub(const(x, 1.0), mul(mul(const(x, 2.0), x), out)))


def sici(x: Any) -> tuple:
    """(Si(x), Ci(x)): integral_0^x sin(t) / t dt and gamma + log|x| + integral_0^x (cos t - 1) / t dt
    (SciPy's real Ci: Ci(|x|) for x < 0)."""
    return si_p.bind(x), ci_p.bind(x)


def fresnel(x: Any) -> tuple:
    """(S(x), C(x)): integral_0^x sin(pi t^2 / 2) dt and integral_0^x cos(pi t^2 / 2) dt."""
    return fresnel_s_p.bind(x), fresnel_c_p.bind(x)


def dawsn(x: Any) -> Any:
    """Dawson's integral exp(-x^2) integral_0^x exp(t^2) dt."""
    return dawsn_p.bind(x)


# --- Spence's function -------------------------------------------------------------------------------

_SPENCE_SERIES_RADIUS = 0.25
_SPENCE_TERMS = 32  # 0.25^32 / 33 < 1e-20: the truncated series is exact in float64 (and its derivatives)


def _log_over_one_minus(z, out):
    """log(z) / (1 - z): with u = z - 1, -log1p(u) / u = -sum_k (-u)^k / (k + 1) for |u| <= 1/4
    (Horner), the quotient elsewhere, each evaluated where the other is taken at a point
    where it is finite."""
    u = sub(z, const(z, 1.0))
    near = lt(abs(u), const(u, _SPENCE_SERIES_RADIUS))
    un = select(near, u, const(u, 0.0))
    zf = select(near, const(z, 2.0), z)
    series = const(un, -1.0 / _SPENCE_TERMS)
    for k in range(_SPENCE_TERMS - 2, -1, -1):
        series = add(mul(series, neg(un)), const(un, -1.0 / (k + 1)))
    return select(near, series, div(log(zf), sub(const(zf, 1.0), zf)))


spence_p = define("spence", "spence", _log_over_one_minus)


def spence(z: Any) -> Any:
    """Spence's function integral_1^z log(t) / (1 - t) dt for real z >= 0 (NaN below)."""
    return spence_p.bind(z)
