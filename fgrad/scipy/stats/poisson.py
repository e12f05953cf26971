"""fgrad.scipy.stats.poisson: the Poisson distribution with SciPy's signatures (k, mu, loc).
Differentiable in mu to any order. k is a count: the pmf is 0 (logpmf -inf) off the
non-negative integers, so its derivative in k is 0 (as floor's), and the CDF is a step
function of k. mu < 0 gives NaN, as in SciPy."""
from __future__ import annotations

from typing import Any

from ... import numpy as fnp
from ...ops.elementwise import stop_gradient
from .. import special
from .._args import float_args
from ._common import inside, log_probability, nan_unless, quiet

__all__ = ["logpmf", "pmf", "cdf", "sf", "logcdf", "logsf"]


@quiet
def logpmf(k: Any, mu: Any, loc: Any = 0.0) -> Any:
    """log P(K = k) = k log(mu) - gammaln(k + 1) - mu for k - loc in {0, 1, 2, ...}, -inf
    otherwise (xlogy: log P(K = 0) = -mu, also at mu = 0)."""
    k, mu, loc = float_args("poisson.logpmf", k, mu, loc)
    k = stop_gradient(fnp.subtract(k, loc))
    count = fnp.logical_and(fnp.greater_equal(k, 0.0), fnp.equal(k, fnp.floor(k)))
    ks = inside(count, k, 0.0)
    out = fnp.where(count, special.xlogy(ks, mu) - special.gammaln(ks + 1.0) - mu, -fnp.inf)
    return nan_unless(fnp.greater_equal(mu, 0.0), out)


@quiet
def pmf(k: Any, mu: Any, loc: Any = 0.0) -> Any:
    """P(K = k) = mu**k exp(-mu) / k!."""
    return fnp.exp(logpmf(k, mu, loc))


def _cdf(name: str, k: Any, mu: Any, loc: Any, upper: bool, log: bool = False) -> Any:
    k, mu, loc = float_args(name, k, mu, loc)
    k = fnp.floor(fnp.subtract(k, loc))  # floor: a step function of k, with derivative 0
    counted = fnp.greater_equal(k, 0.0)
    a = inside(counted, k, 0.0) + 1.0
    # P(K <= k) = Q(k + 1, mu), and P(K > k) = P(k + 1, mu): each accurate in its own tail
    p, q = special.gammaincc(a, mu), special.gammainc(a, mu)
    if upper:
        p, q = q, p
    below = 1.0 if upper else 0.0
    out = p
    if log:  # the log inside the where: log(0) below the support would make 0 * inf = NaN
        out, below = log_probability(p, q), (0.0 if upper else -fnp.inf)
    return nan_unless(fnp.greater_equal(mu, 0.0), fnp.where(counted, out, below))


@quiet
def cdf(k: Any, mu: Any, loc: Any = 0.0) -> Any:
    """P(K <= k) = gammaincc(floor(k - loc) + 1, mu)."""
    return _cdf("poisson.cdf", k, mu, loc, upper=False)


@quiet
def sf(k: Any, mu: Any, loc: Any = 0.0) -> Any:
    """P(K > k) = gammainc(floor(k - loc) + 1, mu), accurate in the upper tail."""
    return _cdf("poisson.sf", k, mu, loc, upper=True)


@quiet
def logcdf(k: Any, mu: Any, loc: Any = 0.0) -> Any:
    """log P(K <= k)."""
    return _cdf("poisson.logcdf", k, mu, loc, upper=False, log=True)


@quiet
def logsf(k: Any, mu: Any, loc: Any = 0.0) -> Any:
    """log P(K > k)."""
    return _cdf("poisson.logsf", k, mu, loc, upper=True, log=True)
