"""fgrad.scipy.stats.uniform: the uniform distribution on [loc, loc + scale] with SciPy's
signatures. Its CDF is piecewise linear, with kinks at the ends of the support: there the
derivative is that of the inside piece (the density), and it is 0 outside. A scale <= 0 gives
NaN, as in SciPy."""
from __future__ import annotations

from typing import Any

from ... import numpy as fnp
from ._common import inside, location_scale, quantile, quiet

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]


def _within(y: Any, below: float, above: float) -> Any:
    """y on [0, 1], `below` left of it and `above` right of it."""
    return fnp.where(fnp.less(y, 0.0), below, fnp.where(fnp.greater(y, 1.0), above, y))


def _logpdf(y: Any) -> Any:
    supported = fnp.logical_and(fnp.greater_equal(y, 0.0), fnp.less_equal(y, 1.0))
    return fnp.where(supported, fnp.zeros_like(y), -fnp.inf)  # (zeros_like: y's dtype, no 0 * inf)


def _logcdf(y: Any) -> Any:
    p = _within(y, 0.0, 1.0)
    positive = fnp.greater(p, 0.0)
    return fnp.where(positive, fnp.log(inside(positive, p, 1.0)), -fnp.inf)


def _logsf(y: Any) -> Any:
    p = _within(y, 0.0, 1.0)
    below_one = fnp.less(p, 1.0)  # (log1p(-p): log P(X > x) = -1e-20 at y = 1e-20, not 0)
    return fnp.where(below_one, fnp.log1p(-inside(below_one, p, 0.0)), -fnp.inf)


@quiet
def logpdf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """log of the density: -log(scale) on [loc, loc + scale], -inf outside."""
    return location_scale("uniform.logpdf", _logpdf, x, loc, scale, density=True)


@quiet
def pdf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """The density 1 / scale on [loc, loc + scale], 0 outside."""
    return fnp.exp(logpdf(x, loc, scale))


@quiet
def cdf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """P(X <= x) = (x - loc) / scale on the support, 0 below, 1 above."""
    return location_scale("uniform.cdf", lambda y: _within(y, 0.0, 1.0), x, loc, scale)


@quiet
def logcdf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """log P(X <= x)."""
    return location_scale("uniform.logcdf", _logcdf, x, loc, scale)


@quiet
def sf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """P(X > x) = 1 - (x - loc) / scale on the support."""
    return location_scale("uniform.sf", lambda y: 1.0 - _within(y, 0.0, 1.0), x, loc, scale)


@quiet
def logsf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """log P(X > x)."""
    return location_scale("uniform.logsf", _logsf, x, loc, scale)


@quiet
def ppf(q: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """The quantile function loc + scale * q, q in [0, 1]."""
    return quantile("uniform.ppf", lambda p: p, q, loc, scale)


@quiet
def isf(q: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """The inverse of sf: loc + scale * (1 - q)."""
    return quantile("uniform.isf", lambda p: 1.0 - p, q, loc, scale)
