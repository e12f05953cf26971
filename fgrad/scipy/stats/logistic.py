"""fgrad.scipy.stats.logistic: the logistic distribution with SciPy's signatures (loc,
scale), from expit, logit and log_expit: differentiable in x, loc and scale to any order and
accurate in both tails; a scale <= 0 gives NaN, as in SciPy."""
from __future__ import annotations

from typing import Any

from ... import numpy as fnp
from .. import special
from ._common import location_scale, quantile, quiet

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]


def _logpdf(y: Any) -> Any:
    return special.log_expit(y) + special.log_expit(-y)


@quiet
def logpdf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """log of the density: log expit(y) + log expit(-y) - log(scale), y = (x - loc) / scale."""
    return location_scale("logistic.logpdf", _logpdf, x, loc, scale, density=True)


@quiet
def pdf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """The density expit(y) expit(-y) / scale."""
    return fnp.exp(logpdf(x, loc, scale))


@quiet
def cdf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """P(X <= x) = expit((x - loc) / scale)."""
    return location_scale("logistic.cdf", special.expit, x, loc, scale)


@quiet
def logcdf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """log P(X <= x) = log_expit((x - loc) / scale)."""
    return location_scale("logistic.logcdf", special.log_expit, x, loc, scale)


@quiet
def sf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """P(X > x) = expit(-(x - loc) / scale)."""
    return location_scale("logistic.sf", lambda y: special.expit(-y), x, loc, scale)


@quiet
def logsf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """log P(X > x) = log_expit(-(x - loc) / scale)."""
    return location_scale("logistic.logsf", lambda y: special.log_expit(-y), x, loc, scale)


@quiet
def ppf(q: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """The quantile function loc + scale * logit(q)."""
    return quantile("logistic.ppf", special.logit, q, loc, scale)


@quiet
def isf(q: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """The inverse of sf: loc - scale * logit(q)."""
    return quantile("logistic.isf", lambda p: -special.logit(p), q, loc, scale)
