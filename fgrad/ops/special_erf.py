"""The error-function family beyond erf (which is in elementwise.py): erfc, the scaled erfcx,
the inverses erfinv and erfcinv, and the normal distribution's quantile ndtri and log-CDF
log_ndtr. Each is a primitive because its composition from erf loses the tails (1 - erf(x) is
0 for x > 6, log(ndtr(x)) is -inf below -38) or has no closed form (the inverses)."""
from __future__ import annotations

import math
from typing import Any

from ._special import define
from .elementwise import const, div, exp, mul, neg, sub

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _erfc_deriv(x, out):
    return mul(const(x, -_TWO_OVER_SQRT_PI), exp(neg(mul(x, x))))


def _inverse_erf_deriv(sign):
    # (erf^-1)'(y) = 1 / erf'(x) at x = erf^-1(y): sqrt(pi) / 2 * exp(x^2), inf at y = +-1
    return lambda y, out: mul(const(y, sign * math.sqrt(math.pi) / 2.0), exp(mul(out, out)))


erfc_p = define("erfc", "erfc", _erfc_deriv)
# erfcx(x) = exp(x^2) erfc(x), so erfcx' = 2 x erfcx(x) - 2 / sqrt(pi)
erfcx_p = define("erfcx", "erfcx",
                 lambda x, out: sub(mul(mul(const(x, 2.0), x), out), const(x, _TWO_OVER_SQRT_PI)))
erfinv_p = define("erfinv", "erfinv", _inverse_erf_deriv(1.0))
erfcinv_p = define("erfcinv", "erfcinv", _inverse_erf_deriv(-1.0))
# ndtri'(p) = 1 / pdf(ndtri(p)) = sqrt(2 pi) exp(x^2 / 2)
ndtri_p = define("ndtri", "ndtri",
                 lambda p, out: mul(const(p, math.sqrt(2.0 * math.pi)), exp(mul(const(p, 0.5), mul(out, out)))))


def _log_ndtr_deriv(x, out):
    # pdf(x) / ndtr(x), written without either: ndtr(x) = exp(-x^2/2) erfcx(-x/sqrt2) / 2, so the
    # ratio is sqrt(2/pi) / erfcx(-x/sqrt2) -- no underflow for x << 0 (where it tends to -x)
    # and no 0/0; for x > 38 erfcx overflows to inf and the ratio is its limit, 0
    return div(const(x, math.sqrt(2.0 / math.pi)), erfcx(mul(const(x, -1.0 / math.sqrt(2.0)), x)))


log_ndtr_p = define("log_ndtr", "log_ndtr", _log_ndtr_deriv)


def erfc(x: Any) -> Any:
    """The complementary error function 1 - erf(x), accurate where erf(x) is near 1."""
    return erfc_p.bind(x)


def erfcx(x: Any) -> Any:
    """The scaled complementary error function exp(x**2) * erfc(x)."""
    return erfcx_p.bind(x)


def erfinv(y: Any) -> Any:
    """The inverse of erf on (-1, 1): +-inf at +-1, NaN outside."""
    return erfinv_p.bind(y)


def erfcinv(y: Any) -> Any:
    """The inverse of erfc on (0, 2): +inf at 0, -inf at 2, NaN outside."""
    return erfcinv_p.bind(y)


def ndtri(p: Any) -> Any:
    """The standard normal quantile: x with ndtr(x) == p, for p in [0, 1]."""
    return ndtri_p.bind(p)


def log_ndtr(x: Any) -> Any:
    """log of the standard normal CDF, accurate far in the lower tail."""
    return log_ndtr_p.bind(x)
