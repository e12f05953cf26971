"""fgrad.scipy.stats.truncnorm: the normal distribution truncated to [a, b] with SciPy's
signatures (a, b, loc, scale; a and b are standardised bounds, as SciPy's). The normal mass
between two points is computed in log space from log_ndtr on the side away from the mode, as
SciPy's _log_gauss_mass, so that far tails (a = 39, b = 41) keep their digits. Differentiable
in x, a, b, loc and scale to any order; outside [a, b] the density is 0 (logpdf -inf) and the
CDF 0 or 1; a >= b or scale <= 0 give NaN, as in SciPy."""
from __future__ import annotations

import math
from typing import Any

from ... import numpy as fnp
from .. import special
from ._common import inside, location_scale, log1mexp, quiet

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]

_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


def _log_mass_left(a: Any, b: Any) -> Any:
    """log(ndtr(b) - ndtr(a)) for a <= b <= 0, from the log CDFs (no cancellation)."""
    lb = special.log_ndtr(b)
    return lb + log1mexp(lb - special.log_ndtr(a))


def log_gauss_mass(a: Any, b: Any) -> Any:
    """log P(a <= Z <= b) for a standard normal Z and a <= b: both bounds left of 0, both right
    of it (by symmetry), or the mode between them (1 minus the two tails). Each case runs on
    safe bounds where it is not taken, so that its -inf reaches no derivative."""
    left = fnp.less_equal(b, 0.0)
    right = fnp.greater(a, 0.0)
    central = fnp.logical_not(fnp.logical_or(left, right))
    on_left = _log_mass_left(inside(left, a, -2.0), inside(left, b, -1.0))
    on_right = _log_mass_left(-inside(right, b, 2.0), -inside(right, a, 1.0))
    around = fnp.log1p(-special.ndtr(inside(central, a, -1.0)) - special.ndtr(-inside(central, b, 1.0)))
    return fnp.where(left, on_left, fnp.where(right, on_right, around))


def _valid(a: Any, b: Any) -> Any:
    return fnp.less(a, b)


def _logpdf(y: Any, a: Any, b: Any) -> Any:
    supported = fnp.logical_and(fnp.greater_equal(y, a), fnp.less_equal(y, b))
    ys = inside(supported, y, 0.0)
    out = -0.5 * ys * ys - _HALF_LOG_2PI - log_gauss_mass(a, b)
    return fnp.where(supported, out, -fnp.inf)


def _log_tails(y: Any, a: Any, b: Any) -> tuple:
    """(log P(Y <= y), log P(Y > y)) for y in [a, b] (clamped into it: 0 and -inf outside,
    where the clamped point's mass is exact), each from the normal mass of its own side."""
    below, above = fnp.less(y, a), fnp.greater(y, b)
    ys = fnp.where(below, a, fnp.where(above, b, y))
    total = log_gauss_mass(a, b)
    # the masses are evaluated where they are finite: at the ends the empty side is -inf
    lower_empty, upper_empty = fnp.less_equal(ys, a), fnp.greater_equal(ys, b)
    lower = fnp.where(lower_empty, -fnp.inf, log_gauss_mass(a, inside(lower_empty, 0.5 * (a + b), ys)) - total)
    upper = fnp.where(upper_empty, -fnp.inf, log_gauss_mass(inside(upper_empty, 0.5 * (a + b), ys), b) - total)
    # the larger probability is 1 minus the smaller one: log1p(-exp(smaller)) keeps the digits
    # that the difference of two large log masses loses (log P = -3e-9 at a = 39, y = 39.5)
    lower_larger = fnp.greater(lower, upper)
    return (fnp.where(lower_larger, log1mexp(-inside(lower_larger, upper, -1.0)), lower),
            fnp.where(lower_larger, upper, log1mexp(-inside(lower_larger, -1.0, lower))))


@quiet
def logpdf(x: Any, a: Any, b: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """log of the density: -y**2/2 - log(2 pi)/2 - log(ndtr(b) - ndtr(a)) - log(scale) on [a, b]."""
    return location_scale("truncnorm.logpdf", _logpdf, x, loc, scale, a, b, valid=_valid, density=True)


@quiet
def pdf(x: Any, a: Any, b: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """The truncated normal density."""
    return fnp.exp(logpdf(x, a, b, loc, scale))


@quiet
def logcdf(x: Any, a: Any, b: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """log P(X <= x) = log(ndtr(y) - ndtr(a)) - log(ndtr(b) - ndtr(a)), in log space."""
    return location_scale("truncnorm.logcdf", lambda y, a, b: _log_tails(y, a, b)[0], x, loc, scale, a, b,
                          valid=_valid)


@quiet
def logsf(x: Any, a: Any, b: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """log P(X > x) = log(ndtr(b) - ndtr(y)) - log(ndtr(b) - ndtr(a)), in log space."""
    return location_scale("truncnorm.logsf", lambda y, a, b: _log_tails(y, a, b)[1], x, loc, scale, a, b,
                          valid=_valid)


@quiet
def cdf(x: Any, a: Any, b: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """P(X <= x)."""
    return fnp.exp(logcdf(x, a, b, loc, scale))


@quiet
def sf(x: Any, a: Any, b: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """P(X > x), accurate in the upper tail."""
    return fnp.exp(logsf(x, a, b, loc, scale))
