"""fgrad.scipy.stats.expon: the exponential distribution with SciPy's signatures (loc, scale).
Differentiable in x, loc and scale to any order; below the support (x < loc) the density is 0
(logpdf -inf) and the CDF 0; a scale <= 0 gives NaN, as in SciPy. The tails go through
expm1, log1p and log1mexp, so that no digits are lost near 0 or 1."""
from __future__ import annotations

from typing import Any

from ... import numpy as fnp
from ._common import inside, location_scale, log1mexp, quantile, quiet

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]


def _support(y: Any) -> tuple:
    """(y >= 0, y there and 0 elsewhere: the operand the formulas see)."""
    supported = fnp.greater_equal(y, 0.0)
    return supported, inside(supported, y, 0.0)


def _logpdf(y: Any) -> Any:
    supported, ys = _support(y)
    return fnp.where(supported, -ys, -fnp.inf)


def _cdf(y: Any) -> Any:
    supported, ys = _support(y)
    return fnp.where(supported, -fnp.expm1(-ys), 0.0)


def _logcdf(y: Any) -> Any:
    supported, ys = _support(y)
    return fnp.where(supported, log1mexp(ys), -fnp.inf)


def _sf(y: Any) -> Any:
    supported, ys = _support(y)
    return fnp.where(supported, fnp.exp(-ys), 1.0)


def _logsf(y: Any) -> Any:
    supported, ys = _support(y)
    return fnp.where(supported, -ys, 0.0)


@quiet
def logpdf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """log of the density: -(x - loc) / scale - log(scale) for x >= loc, -inf below."""
    return location_scale("expon.logpdf", _logpdf, x, loc, scale, density=True)


@quiet
def pdf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """The density exp(-(x - loc) / scale) / scale for x >= loc, 0 below."""
    return fnp.exp(logpdf(x, loc, scale))


@quiet
def cdf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """P(X <= x) = -expm1(-(x - loc) / scale)."""
    return location_scale("expon.cdf", _cdf, x, loc, scale)


@quiet
def logcdf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """log P(X <= x) = log(1 - exp(-y)), accurate near the start of the support and far out."""
    return location_scale("expon.logcdf", _logcdf, x, loc, scale)


@quiet
def sf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """P(X > x) = exp(-(x - loc) / scale)."""
    return location_scale("expon.sf", _sf, x, loc, scale)


@quiet
def logsf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """log P(X > x) = -(x - loc) / scale (0 below the support)."""
    return location_scale("expon.logsf", _logsf, x, loc, scale)


@quiet
def ppf(q: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """The quantile function loc - scale * log1p(-q), q in [0, 1]."""
    return quantile("expon.ppf", lambda p: -fnp.log1p(-p), q, loc, scale)


@quiet
def isf(q: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """The inverse of sf: loc - scale * log(q)."""
    return quantile("expon.isf", lambda p: -fnp.log(p), q, loc, scale)
