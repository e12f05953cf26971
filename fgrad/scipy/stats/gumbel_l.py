"""fgrad.scipy.stats.gumbel_l: the left-skewed Gumbel distribution with SciPy's signatures
(loc, scale): the mirror image of gumbel_r (X = -Y), so its CDF is gumbel_r's survival
function at -y and so on, with the same accuracy in both tails. Differentiable in x, loc and
scale to any order; a scale <= 0 gives NaN, as in SciPy."""
from __future__ import annotations

from typing import Any

from ... import numpy as fnp
from . import gumbel_r as _r
from ._common import location_scale, quantile, quiet

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]


@quiet
def logpdf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """log of the density: y - exp(y) - log(scale), y = (x - loc) / scale."""
    return location_scale("gumbel_l.logpdf", lambda y: _r.standard_logpdf(-y), x, loc, scale, density=True)


@quiet
def pdf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """The density exp(y - exp(y)) / scale."""
    return fnp.exp(logpdf(x, loc, scale))


@quiet
def cdf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """P(X <= x) = -expm1(-exp(y)), accurate in the lower tail."""
    return location_scale("gumbel_l.cdf", lambda y: _r.standard_sf(-y), x, loc, scale)


@quiet
def logcdf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """log P(X <= x) = log(1 - exp(-exp(y)))."""
    return location_scale("gumbel_l.logcdf", lambda y: _r.standard_logsf(-y), x, loc, scale)


@quiet
def sf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """P(X > x) = exp(-exp(y))."""
    return location_scale("gumbel_l.sf", lambda y: _r.standard_cdf(-y), x, loc, scale)


@quiet
def logsf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """log P(X > x) = -exp(y)."""
    return location_scale("gumbel_l.logsf", lambda y: _r.standard_logcdf(-y), x, loc, scale)


@quiet
def ppf(q: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """The quantile function loc + scale * log(-log1p(-q))."""
    return quantile("gumbel_l.ppf", lambda p: -_r.standard_isf(p), q, loc, scale)


@quiet
def isf(q: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """The inverse of sf: loc + scale * log(-log(q))."""
    return quantile("gumbel_l.isf", lambda p: -_r.standard_ppf(p), q, loc, scale)
