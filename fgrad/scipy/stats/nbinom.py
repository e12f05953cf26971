"""fgrad.scipy.stats.nbinom: the negative binomial distribution with SciPy's signatures (k,
n, p, loc): the number of failures before the n-th success, n > 0 real. Differentiable in n
and p to any order; k is a count (derivative 0, as poisson's): the pmf is 0 (logpmf -inf) off
{0, 1, 2, ...}. n <= 0 or p outside (0, 1] give NaN, as in SciPy."""
from __future__ import annotations

from typing import Any

from ... import numpy as fnp
from .. import special
from .._args import float_args
from ._common import count, inside, nan_unless, quiet

__all__ = ["logpmf", "pmf"]


@quiet
def logpmf(k: Any, n: Any, p: Any, loc: Any = 0.0) -> Any:
    """log P(K = k) = gammaln(n + k) - gammaln(n) - gammaln(k + 1) + n log p + k log1p(-p)."""
    k, n, p, loc = float_args("nbinom.logpmf", k, n, p, loc)
    k, counted = count(k, loc)
    ks = inside(counted, k, 0.0)
    out = (special.gammaln(n + ks) - special.gammaln(n) - special.gammaln(ks + 1.0)
           + special.xlogy(n, p) + special.xlog1py(ks, -p))
    valid = fnp.logical_and(fnp.greater(n, 0.0), fnp.logical_and(fnp.greater(p, 0.0), fnp.less_equal(p, 1.0)))
    return nan_unless(valid, fnp.where(counted, out, -fnp.inf))


@quiet
def pmf(k: Any, n: Any, p: Any, loc: Any = 0.0) -> Any:
    """P(K = k) = C(n + k - 1, k) p**n (1 - p)**k."""
    return fnp.exp(logpmf(k, n, p, loc))
