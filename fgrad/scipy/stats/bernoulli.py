"""fgrad.scipy.stats.bernoulli: the Bernoulli distribution with SciPy's signatures (k, p,
loc), the binomial distribution with n = 1. logpmf and pmf are differentiable in p to any
order; the CDFs are step functions of k, linear in p between the steps, and the quantile
function is piecewise constant (derivative 0). k is a count, without a derivative (as
poisson's). p outside [0, 1] gives NaN, as in SciPy."""
from __future__ import annotations

from typing import Any

from ... import numpy as fnp
from ...ops.elementwise import stop_gradient
from .._args import float_args
from ._common import count, in_unit_interval, inside, nan_unless, quiet
from .binom import probability, standard_logpmf

__all__ = ["logpmf", "pmf", "cdf", "sf", "logcdf", "logsf", "ppf", "isf"]


@quiet
def logpmf(k: Any, p: Any, loc: Any = 0.0) -> Any:
    """log P(K = k): log(1 - p) at k - loc = 0, log(p) at 1, -inf elsewhere."""
    k, p, loc = float_args("bernoulli.logpmf", k, p, loc)
    k, counted = count(k, loc)
    return nan_unless(probability(p), standard_logpmf(k, counted, fnp.ones_like(p), p))


@quiet
def pmf(k: Any, p: Any, loc: Any = 0.0) -> Any:
    """P(K = k): 1 - p at k - loc = 0, p at 1, 0 elsewhere."""
    return fnp.exp(logpmf(k, p, loc))


def _cdf(name: str, k: Any, p: Any, loc: Any, upper: bool, log: bool = False) -> Any:
    k, p, loc = float_args(name, k, p, loc)
    k = stop_gradient(fnp.floor(fnp.subtract(k, loc)))  # a step function of k
    below, above = fnp.less(k, 0.0), fnp.greater_equal(k, 1.0)
    # P(K <= k) is 0, 1 - p, 1 below, on and above [0, 1); P(K > k) is 1, p, 0
    middle = p if upper else 1.0 - p
    low, high = (1.0, 0.0) if upper else (0.0, 1.0)
    if log:  # the log inside the where: log(0) would make 0 * inf = NaN in the derivatives
        positive = fnp.greater(middle, 0.0)
        middle = fnp.where(positive, fnp.log(inside(positive, middle, 1.0)), -fnp.inf)
        low, high = (0.0, -fnp.inf) if upper else (-fnp.inf, 0.0)
    return nan_unless(probability(p), fnp.where(below, low, fnp.where(above, high, middle)))


@quiet
def cdf(k: Any, p: Any, loc: Any = 0.0) -> Any:
    """P(K <= k): 0 for k - loc < 0, 1 - p on [0, 1), 1 above."""
    return _cdf("bernoulli.cdf", k, p, loc, upper=False)


@quiet
def sf(k: Any, p: Any, loc: Any = 0.0) -> Any:
    """P(K > k): 1 for k - loc < 0, p on [0, 1), 0 above."""
    return _cdf("bernoulli.sf", k, p, loc, upper=True)


@quiet
def logcdf(k: Any, p: Any, loc: Any = 0.0) -> Any:
    """log P(K <= k)."""
    return _cdf("bernoulli.logcdf", k, p, loc, upper=False, log=True)


@quiet
def logsf(k: Any, p: Any, loc: Any = 0.0) -> Any:
    """log P(K > k)."""
    return _cdf("bernoulli.logsf", k, p, loc, upper=True, log=True)


def _quantile(name: str, q: Any, p: Any, loc: Any, upper: bool) -> Any:
    q, p, loc = float_args(name, q, p, loc)
    # the least k with P(K <= k) >= q (ppf) or P(K > k) <= q (isf); at the ends of [0, 1]
    # SciPy's ends of the support: -1 (below it) where every k qualifies, 1 at the other end
    if upper:
        below, top, inner = fnp.equal(q, 1.0), fnp.equal(q, 0.0), fnp.where(fnp.less(q, p), 1.0, 0.0)
    else:
        below, top, inner = fnp.equal(q, 0.0), fnp.equal(q, 1.0), fnp.where(fnp.less_equal(q, 1.0 - p), 0.0, 1.0)
    out = fnp.where(below, -1.0, fnp.where(top, 1.0, inner))
    out = stop_gradient(out) + loc
    return nan_unless(fnp.logical_and(in_unit_interval(q), probability(p)), out)


@quiet
def ppf(q: Any, p: Any, loc: Any = 0.0) -> Any:
    """The quantile function: -1 at q = 0, 0 for q <= 1 - p, 1 above (plus loc)."""
    return _quantile("bernoulli.ppf", q, p, loc, upper=False)


@quiet
def isf(q: Any, p: Any, loc: Any = 0.0) -> Any:
    """The inverse survival function: -1 at q = 1, 1 for q < p, 0 above (plus loc)."""
    return _quantile("bernoulli.isf", q, p, loc, upper=True)
