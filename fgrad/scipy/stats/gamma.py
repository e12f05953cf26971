"""fgrad.scipy.stats.gamma: the gamma distribution with SciPy's signatures (a, loc, scale).
The CDF is the regularized incomplete gamma function: differentiable in x, loc and scale to
any order, with no derivative in the shape a (DifferentiationError). Below the support the
density is 0 (logpdf -inf) and the CDF 0; a <= 0 or scale <= 0 give NaN, as in SciPy."""
from __future__ import annotations

from typing import Any

from ... import numpy as fnp
from .. import special
from ._common import inside, log_probability, nan_unless, positive, quiet, standardize

__all__ = ["logpdf", "pdf", "cdf", "sf", "logcdf", "logsf"]


def standard_logpdf(y: Any, a: Any) -> Any:
    """log of the standard gamma density (a, loc 0, scale 1): (a - 1) log y - y - gammaln(a)
    for y >= 0 (xlogy: right at y = 0 for every a), -inf below."""
    supported = fnp.greater_equal(y, 0.0)
    ys = inside(supported, y, 1.0)
    return fnp.where(supported, special.xlogy(a - 1.0, ys) - ys - special.gammaln(a), -fnp.inf)


@quiet
def logpdf(x: Any, a: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """log of the gamma density at x."""
    y, scale, a = standardize("gamma.logpdf", x, loc, scale, a)
    return nan_unless(positive(a, scale), standard_logpdf(y, a) - fnp.log(scale))


@quiet
def pdf(x: Any, a: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """The gamma density at x."""
    return fnp.exp(logpdf(x, a, loc, scale))


def standard_cdf(y: Any, a: Any, upper: bool = False, log: bool = False) -> Any:
    """P(Y <= y) (or P(Y > y) with `upper`; their logs with `log`) for the standard gamma
    distribution; 0 (1) below the support."""
    supported = fnp.greater_equal(y, 0.0)
    ys = inside(supported, y, 1.0)  # (a point where P, Q and their logs are finite)
    # P and Q = 1 - P each accurate in its own tail
    p, q = special.gammainc(a, ys), special.gammaincc(a, ys)
    if upper:
        p, q = q, p
    below = 1.0 if upper else 0.0
    if log:  # the log inside the where: log(0) below the support would make 0 * inf = NaN
        p, below = log_probability(p, q), (0.0 if upper else -fnp.inf)
    return fnp.where(supported, p, below)


@quiet
def cdf(x: Any, a: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """P(X <= x) = gammainc(a, (x - loc) / scale)."""
    y, scale, a = standardize("gamma.cdf", x, loc, scale, a)
    return nan_unless(positive(a, scale), standard_cdf(y, a))


@quiet
def sf(x: Any, a: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """P(X > x) = gammaincc(a, (x - loc) / scale), accurate in the upper tail."""
    y, scale, a = standardize("gamma.sf", x, loc, scale, a)
    return nan_unless(positive(a, scale), standard_cdf(y, a, upper=True))


@quiet
def logcdf(x: Any, a: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """log P(X <= x)."""
    y, scale, a = standardize("gamma.logcdf", x, loc, scale, a)
    return nan_unless(positive(a, scale), standard_cdf(y, a, log=True))


@quiet
def logsf(x: Any, a: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """log P(X > x)."""
    y, scale, a = standardize("gamma.logsf", x, loc, scale, a)
    return nan_unless(positive(a, scale), standard_cdf(y, a, upper=True, log=True))
