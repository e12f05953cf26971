"""fgrad.scipy.stats.gumbel_r: the right-skewed Gumbel (extreme value type I) distribution
with SciPy's signatures (loc, scale). Differentiable in x, loc and scale to any order; a
scale <= 0 gives NaN, as in SciPy. cdf = exp(-exp(-y)); the survival function and its log go
through expm1 and log1mexp, so that the upper tail keeps its digits."""
from __future__ import annotations

from typing import Any

from ... import numpy as fnp
from ._common import location_scale, log1mexp, quantile, quiet

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]


# the standard distribution's functions (gumbel_l is their mirror image)
def standard_logpdf(y: Any) -> Any:
    return -y - fnp.exp(-y)


def standard_logcdf(y: Any) -> Any:
    return -fnp.exp(-y)


def standard_cdf(y: Any) -> Any:
    return fnp.exp(-fnp.exp(-y))


def standard_sf(y: Any) -> Any:
    return -fnp.expm1(-fnp.exp(-y))


def standard_logsf(y: Any) -> Any:
    return log1mexp(fnp.exp(-y))


def standard_ppf(q: Any) -> Any:
    return -fnp.log(-fnp.log(q))


def standard_isf(q: Any) -> Any:
    return -fnp.log(-fnp.log1p(-q))


@quiet
def logpdf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """log of the density: -y - exp(-y) - log(scale), y = (x - loc) / scale."""
    return location_scale("gumbel_r.logpdf", standard_logpdf, x, loc, scale, density=True)


@quiet
def pdf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """The density exp(-y - exp(-y)) / scale."""
    return fnp.exp(logpdf(x, loc, scale))


@quiet
def cdf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """P(X <= x) = exp(-exp(-y))."""
    return location_scale("gumbel_r.cdf", standard_cdf, x, loc, scale)


@quiet
def logcdf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """log P(X <= x) = -exp(-y)."""
    return location_scale("gumbel_r.logcdf", standard_logcdf, x, loc, scale)


@quiet
def sf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """P(X > x) = -expm1(-exp(-y)), accurate in the upper tail."""
    return location_scale("gumbel_r.sf", standard_sf, x, loc, scale)


@quiet
def logsf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """log P(X > x) = log(1 - exp(-exp(-y)))."""
    return location_scale("gumbel_r.logsf", standard_logsf, x, loc, scale)


@quiet
def ppf(q: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """The quantile function loc - scale * log(-log(q))."""
    return quantile("gumbel_r.ppf", standard_ppf, q, loc, scale)


@quiet
def isf(q: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """The inverse of sf: loc - scale * log(-log1p(-q))."""
    return quantile("gumbel_r.isf", standard_isf, q, loc, scale)
