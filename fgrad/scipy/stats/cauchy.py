"""fgrad.scipy.stats.cauchy: the Cauchy distribution with SciPy's signatures (loc, scale).
Differentiable in x, loc and scale to any order; a scale <= 0 gives NaN, as in SciPy. The CDF
is arctan2(1, -y) / pi, which keeps its digits in the lower tail (0.5 + arctan(y) / pi rounds
to 0 there), and the quantile function uses cot(pi q) in the tails, where tan(pi (q - 1/2))
loses q's digits to the pole."""
from __future__ import annotations

import math
from typing import Any

from ... import numpy as fnp
from ._common import inside, location_scale, log_probability, quantile, quiet

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]

_LOG_PI = math.log(math.pi)


def _logpdf(y: Any) -> Any:
    return -_LOG_PI - fnp.log1p(y * y)


def _cdf(y: Any) -> Any:
    return fnp.arctan2(1.0, -y) / math.pi


def _sf(y: Any) -> Any:
    return fnp.arctan2(1.0, y) / math.pi


def _standard_ppf(q: Any) -> Any:
    """tan(pi (q - 1/2)) for q in [1/4, 3/4], -cot(pi q) below and cot(pi (1 - q)) above (1 - q
    is exact there): three exact forms of one function, each run on a safe value where it is not
    taken; -inf at q = 0 and +inf at q = 1 (1/tan(0))."""
    low, high = fnp.less(q, 0.25), fnp.greater(q, 0.75)
    middle = fnp.logical_not(fnp.logical_or(low, high))
    centre = fnp.tan(math.pi * (inside(middle, q, 0.5) - 0.5))
    lower = -1.0 / fnp.tan(math.pi * inside(low, q, 0.125))
    upper = 1.0 / fnp.tan(math.pi * (1.0 - inside(high, q, 0.875)))
    return fnp.where(low, lower, fnp.where(high, upper, centre))


@quiet
def logpdf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """log of the density: -log(pi) - log(scale) - log1p(((x - loc) / scale)**2)."""
    return location_scale("cauchy.logpdf", _logpdf, x, loc, scale, density=True)


@quiet
def pdf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """The density 1 / (pi scale (1 + ((x - loc) / scale)**2))."""
    return fnp.exp(logpdf(x, loc, scale))


@quiet
def cdf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """P(X <= x) = 1/2 + arctan((x - loc) / scale) / pi."""
    return location_scale("cauchy.cdf", _cdf, x, loc, scale)


@quiet
def logcdf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """log P(X <= x), accurate in both tails."""
    return location_scale("cauchy.logcdf", lambda y: log_probability(_cdf(y), _sf(y)), x, loc, scale)


@quiet
def sf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """P(X > x) = 1/2 - arctan((x - loc) / scale) / pi, accurate in the upper tail."""
    return location_scale("cauchy.sf", _sf, x, loc, scale)


@quiet
def logsf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """log P(X > x), accurate in both tails."""
    return location_scale("cauchy.logsf", lambda y: log_probability(_sf(y), _cdf(y)), x, loc, scale)


@quiet
def ppf(q: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """The quantile function loc + scale * tan(pi (q - 1/2)), q in [0, 1]."""
    return quantile("cauchy.ppf", _standard_ppf, q, loc, scale)


@quiet
def isf(q: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """The inverse of sf: loc - scale * tan(pi (q - 1/2)) (by symmetry)."""
    return quantile("cauchy.isf", lambda p: -_standard_ppf(p), q, loc, scale)
