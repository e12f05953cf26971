"""fgrad.scipy.stats.pareto: the Pareto distribution with SciPy's signatures (b, loc, scale):
density b / y**(b + 1) for y = (x - loc) / scale >= 1. Differentiable in x, b, loc and scale
to any order; below the support the density is 0 (logpdf -inf) and the CDF 0; b <= 0 or
scale <= 0 give NaN, as in SciPy. The CDFs are written in b log(y), through expm1 and
log1mexp, so that both tails keep their digits."""
from __future__ import annotations

from typing import Any

from ... import numpy as fnp
from ._common import inside, location_scale, log1mexp, quantile, quiet

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]


def _positive(b: Any) -> Any:
    return fnp.greater(b, 0.0)


def _tail(y: Any, b: Any) -> tuple:
    """(y >= 1, log(y) there and 0 elsewhere: -b log(y) is log P(Y > y))."""
    supported = fnp.greater_equal(y, 1.0)
    return supported, fnp.log(inside(supported, y, 1.0))


def _logpdf(y: Any, b: Any) -> Any:
    supported, log_y = _tail(y, b)
    return fnp.where(supported, fnp.log(b) - (b + 1.0) * log_y, -fnp.inf)


def _cdf(y: Any, b: Any) -> Any:
    supported, log_y = _tail(y, b)
    return fnp.where(supported, -fnp.expm1(-b * log_y), 0.0)


def _logcdf(y: Any, b: Any) -> Any:
    supported, log_y = _tail(y, b)
    return fnp.where(supported, log1mexp(b * log_y), -fnp.inf)


def _sf(y: Any, b: Any) -> Any:
    supported, log_y = _tail(y, b)
    return fnp.where(supported, fnp.exp(-b * log_y), 1.0)


def _logsf(y: Any, b: Any) -> Any:
    supported, log_y = _tail(y, b)
    return fnp.where(supported, -b * log_y, 0.0)


@quiet
def logpdf(x: Any, b: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """log of the density: log(b) - (b + 1) log(y) - log(scale) for y >= 1, -inf below."""
    return location_scale("pareto.logpdf", _logpdf, x, loc, scale, b, valid=_positive, density=True)


@quiet
def pdf(x: Any, b: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """The density b / (scale y**(b + 1)) for y >= 1, 0 below."""
    return fnp.exp(logpdf(x, b, loc, scale))


@quiet
def cdf(x: Any, b: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """P(X <= x) = 1 - y**(-b) for y >= 1."""
    return location_scale("pareto.cdf", _cdf, x, loc, scale, b, valid=_positive)


@quiet
def logcdf(x: Any, b: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """log P(X <= x) = log(1 - y**(-b))."""
    return location_scale("pareto.logcdf", _logcdf, x, loc, scale, b, valid=_positive)


@quiet
def sf(x: Any, b: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """P(X > x) = y**(-b) for y >= 1, 1 below."""
    return location_scale("pareto.sf", _sf, x, loc, scale, b, valid=_positive)


@quiet
def logsf(x: Any, b: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """log P(X > x) = -b log(y)."""
    return location_scale("pareto.logsf", _logsf, x, loc, scale, b, valid=_positive)


@quiet
def ppf(q: Any, b: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """The quantile function loc + scale * (1 - q)**(-1/b)."""
    return quantile("pareto.ppf", lambda p, b: fnp.exp(-fnp.log1p(-p) / b), q, loc, scale, b, valid=_positive)


@quiet
def isf(q: Any, b: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """The inverse of sf: loc + scale * q**(-1/b)."""
    return quantile("pareto.isf", lambda p, b: fnp.exp(-fnp.log(p) / b), q, loc, scale, b, valid=_positive)
