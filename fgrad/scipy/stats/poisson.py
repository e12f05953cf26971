"""fgrad.scipy.stats.poisson: the Poisson distribution with SciPy's signatures (k, mu, loc).
Differentiable in mu to any order. k is a count: the pmf is 0 (logpmf -inf) off the
non-negative integers, so its derivative in k is 0 (as floor's), and the CDF is a step
function of k. mu < 0 gives NaN, as in SciPy."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ... import numpy as fnp
from .. import special
from .._args import float_args
from ._common import count, inside, log_probability, nan_unless, quiet

__all__ = ["logpmf", "pmf", "cdf", "sf", "logcdf", "logsf", "entropy"]


@quiet
def logpmf(k: Any, mu: Any, loc: Any = 0.0) -> Any:
    """log P(K = k) = k log(mu) - gammaln(k + 1) - mu for k - loc in {0, 1, 2, ...}, -inf
    otherwise (xlogy: log P(K = 0) = -mu, also at mu = 0)."""
    k, mu, loc = float_args("poisson.logpmf", k, mu, loc)
    k, counted = count(k, loc)
    ks = inside(counted, k, 0.0)
    out = fnp.where(counted, special.xlogy(ks, mu) - special.gammaln(ks + 1.0) - mu, -fnp.inf)
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


# entropy: below _ENTROPY_SWITCH the series -sum_k pmf(k) log pmf(k) over k < _ENTROPY_TERMS
# (past mu + 15 sqrt(mu) at the switch, so the neglected tail is below 1e-40); above it the
# asymptotic expansion 1/2 log(2 pi e mu) - 1/(12 mu) - 1/(24 mu^2) - 19/(360 mu^3)
# - 9/(80 mu^4), whose next term (-0.34 / mu^5) is below 1.1e-12 there (checked against mpmath)
_ENTROPY_SWITCH = 200.0
_ENTROPY_TERMS = 450
_HALF_LOG_2PI_E = 0.5 * math.log(2.0 * math.pi * math.e)


@quiet
def entropy(mu: Any, loc: Any = 0.0) -> Any:
    """The Shannon entropy -sum_k P(K = k) log P(K = k) (nats); loc shifts the support and
    leaves it unchanged. 0 at mu = 0, NaN for mu < 0, as in SciPy; differentiable in mu."""
    mu, loc = float_args("poisson.entropy", mu, loc)
    mu = mu + fnp.zeros_like(loc)  # (the result has the broadcast shape of mu and loc)
    series = fnp.logical_and(fnp.greater(mu, 0.0), fnp.less(mu, _ENTROPY_SWITCH))
    m = fnp.expand_dims(inside(series, mu, 1.0), -1)
    k = fnp.asarray(np.arange(_ENTROPY_TERMS, dtype=np.float64)).astype(m.dtype)
    logp = special.xlogy(k, m) - m - special.gammaln(k + 1.0)
    summed = -fnp.sum(fnp.exp(logp) * logp, axis=-1)
    big = inside(fnp.greater_equal(mu, _ENTROPY_SWITCH), mu, _ENTROPY_SWITCH)
    r = 1.0 / big
    asymptotic = _HALF_LOG_2PI_E + 0.5 * fnp.log(big) - r * (1.0 / 12.0 + r * (1.0 / 24.0 + r * (
        19.0 / 360.0 + r * (9.0 / 80.0))))
    out = fnp.where(series, summed, fnp.where(fnp.equal(mu, 0.0), 0.0, asymptotic))
    return nan_unless(fnp.greater_equal(mu, 0.0), out)
