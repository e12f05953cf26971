"""fgrad.scipy.stats.beta: the beta distribution with SciPy's signatures (a, b, loc, scale).
The CDF is the regularized incomplete beta function: differentiable in x, loc and scale to any
order, with no derivative in a or b (DifferentiationError). Outside [0, 1] (standardised) the
density is 0 (logpdf -inf) and the CDF 0 or 1; a, b or scale <= 0 give NaN, as in SciPy."""
from __future__ import annotations

from typing import Any

from ... import numpy as fnp
from .. import special
from ._common import inside, log_probability, nan_unless, positive, quiet, standardize

__all__ = ["logpdf", "pdf", "cdf", "sf", "logcdf", "logsf"]


def _in_unit_interval(y: Any) -> Any:
    return fnp.logical_and(fnp.greater_equal(y, 0.0), fnp.less_equal(y, 1.0))


@quiet
def logpdf(x: Any, a: Any, b: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """log of the beta density: (a - 1) log y + (b - 1) log(1 - y) - betaln(a, b) - log(scale),
    y = (x - loc) / scale in [0, 1] (xlogy/xlog1py: right at the ends for every a and b)."""
    y, scale, a, b = standardize("beta.logpdf", x, loc, scale, a, b)
    supported = _in_unit_interval(y)
    ys = inside(supported, y, 0.5)
    out = special.xlogy(a - 1.0, ys) + special.xlog1py(b - 1.0, -ys) - special.betaln(a, b)
    out = fnp.where(supported, out - fnp.log(scale), -fnp.inf)
    return nan_unless(positive(a, b, scale), out)


@quiet
def pdf(x: Any, a: Any, b: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """The beta density at x."""
    return fnp.exp(logpdf(x, a, b, loc, scale))


def _cdf(name: str, x: Any, a: Any, b: Any, loc: Any, scale: Any, upper: bool, log: bool = False) -> Any:
    y, scale, a, b = standardize(name, x, loc, scale, a, b)
    supported = _in_unit_interval(y)
    # betainc is NaN outside [0, 1], where the CDF is 0 or 1: there the formula runs on 1/2, so
    # that its NaN reaches no derivative (and at y = 0 or 1 it runs on y: the one-sided
    # derivative there is the density)
    ys = inside(supported, y, 0.5)
    # P(X <= x) = I_y(a, b) and P(X > x) = I_{1 - y}(b, a), each accurate in its own tail
    lower, upper_tail = special.betainc(a, b, ys), special.betainc(b, a, 1.0 - ys)
    if upper:
        lower, upper_tail = upper_tail, lower
    low, high = (1.0, 0.0) if upper else (0.0, 1.0)
    out = log_probability(lower, upper_tail) if log else lower
    if log:  # the log inside the where: log(0) outside would make 0 * inf = NaN
        low, high = (0.0 if upper else -fnp.inf), (-fnp.inf if upper else 0.0)
    out = fnp.where(fnp.less(y, 0.0), low, fnp.where(fnp.greater(y, 1.0), high, out))
    return nan_unless(positive(a, b, scale), out)


@quiet
def cdf(x: Any, a: Any, b: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """P(X <= x) = betainc(a, b, (x - loc) / scale)."""
    return _cdf("beta.cdf", x, a, b, loc, scale, upper=False)


@quiet
def sf(x: Any, a: Any, b: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """P(X > x) = betainc(b, a, 1 - (x - loc) / scale)."""
    return _cdf("beta.sf", x, a, b, loc, scale, upper=True)


@quiet
def logcdf(x: Any, a: Any, b: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """log P(X <= x)."""
    return _cdf("beta.logcdf", x, a, b, loc, scale, upper=False, log=True)


@quiet
def logsf(x: Any, a: Any, b: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """log P(X > x)."""
    return _cdf("beta.logsf", x, a, b, loc, scale, upper=True, log=True)
