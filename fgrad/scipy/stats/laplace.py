"""fgrad.scipy.stats.laplace: the Laplace (double exponential) distribution with SciPy's
signatures (loc, scale). The density has a kink at x = loc, where the derivative of logpdf in
x is taken as 0 (|y|'s convention, sign(0) = 0, as JAX) and the CDFs take the branch of
y >= 0 (their first derivative there is exact, the density); differentiable to any order
elsewhere. A scale <= 0 gives NaN, as in SciPy."""
from __future__ import annotations

import math
from typing import Any

from ... import numpy as fnp
from ._common import inside, location_scale, quantile, quiet

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]

_LN2 = math.log(2.0)


def _logpdf(y: Any) -> Any:
    return -fnp.abs(y) - _LN2


def _halves(y: Any) -> tuple:
    """(y < 0, exp(y) / 2 for y < 0, exp(-y) / 2 for y >= 0): each side's tail mass, computed
    on that side only (the other side's exp would overflow into the derivatives)."""
    below = fnp.less(y, 0.0)
    return below, 0.5 * fnp.exp(inside(below, y, 0.0)), 0.5 * fnp.exp(-inside(below, 0.0, y))


def _cdf(y: Any) -> Any:
    below, left, right = _halves(y)
    return fnp.where(below, left, 1.0 - right)


def _logcdf(y: Any) -> Any:
    below = fnp.less(y, 0.0)
    return fnp.where(below, inside(below, y, 0.0) - _LN2,
                     fnp.log1p(-0.5 * fnp.exp(-inside(below, 0.0, y))))


def _standard_ppf(q: Any) -> Any:
    """log(2 q) for q <= 1/2, -log(2 - 2 q) above (each on a safe value where not taken)."""
    low = fnp.less_equal(q, 0.5)
    return fnp.where(low, fnp.log(2.0 * inside(low, q, 0.25)), -fnp.log(2.0 - 2.0 * inside(low, 0.75, q)))


@quiet
def logpdf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """log of the density: -|x - loc| / scale - log(2 scale)."""
    return location_scale("laplace.logpdf", _logpdf, x, loc, scale, density=True)


@quiet
def pdf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """The density exp(-|x - loc| / scale) / (2 scale)."""
    return fnp.exp(logpdf(x, loc, scale))


@quiet
def cdf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """P(X <= x): exp(y) / 2 for y < 0, 1 - exp(-y) / 2 above, y = (x - loc) / scale."""
    return location_scale("laplace.cdf", _cdf, x, loc, scale)


@quiet
def logcdf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """log P(X <= x): y - log 2 for y < 0, log1p(-exp(-y) / 2) above."""
    return location_scale("laplace.logcdf", _logcdf, x, loc, scale)


@quiet
def sf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """P(X > x) = cdf at -y (by symmetry), accurate in the upper tail."""
    return location_scale("laplace.sf", lambda y: _cdf(-y), x, loc, scale)


@quiet
def logsf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """log P(X > x) = logcdf at -y."""
    return location_scale("laplace.logsf", lambda y: _logcdf(-y), x, loc, scale)


@quiet
def ppf(q: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """The quantile function: loc + scale log(2 q) for q <= 1/2, loc - scale log(2 - 2 q) above."""
    return quantile("laplace.ppf", _standard_ppf, q, loc, scale)


@quiet
def isf(q: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """The inverse of sf: loc - scale * ppf(q) of the standard distribution (by symmetry)."""
    return quantile("laplace.isf", lambda p: -_standard_ppf(p), q, loc, scale)
