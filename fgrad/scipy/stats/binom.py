"""fgrad.scipy.stats.binom: the binomial distribution with SciPy's signatures (k, n, p, loc).
Differentiable in p to any order, and in n through betaln as JAX's (the pmf's formula is
smooth in n, though the distribution is defined at whole n only). k is a count: the pmf is 0
(logpmf -inf) off {0, ..., n}, its derivative in k is 0 (as poisson's). n that is not a whole
number, or p outside [0, 1], gives NaN, as in SciPy."""
from __future__ import annotations

from typing import Any

from ... import numpy as fnp
from .. import special
from .._args import float_args
from ._common import count, inside, log_comb, nan_unless, quiet, whole

__all__ = ["logpmf", "pmf"]


def standard_logpmf(k: Any, counted: Any, n: Any, p: Any) -> Any:
    """log P(K = k) for a count k (`counted` where it is a whole number), without the parameter
    checks: log C(n, k) + k log p + (n - k) log(1 - p) (xlogy/xlog1py: exact at p = 0 and 1)."""
    supported = fnp.logical_and(counted, fnp.less_equal(k, n))
    ks = inside(supported, k, 0.0)
    out = log_comb(n, ks) + special.xlogy(ks, p) + special.xlog1py(n - ks, -p)
    return fnp.where(supported, out, -fnp.inf)


def probability(p: Any) -> Any:
    """True where 0 <= p <= 1."""
    return fnp.logical_and(fnp.greater_equal(p, 0.0), fnp.less_equal(p, 1.0))


@quiet
def logpmf(k: Any, n: Any, p: Any, loc: Any = 0.0) -> Any:
    """log P(K = k) = log C(n, k) + k log p + (n - k) log1p(-p), k - loc in {0, ..., n}."""
    k, n, p, loc = float_args("binom.logpmf", k, n, p, loc)
    k, counted = count(k, loc)
    return nan_unless(fnp.logical_and(whole(n), probability(p)), standard_logpmf(k, counted, n, p))


@quiet
def pmf(k: Any, n: Any, p: Any, loc: Any = 0.0) -> Any:
    """P(K = k) = C(n, k) p**k (1 - p)**(n - k)."""
    return fnp.exp(logpmf(k, n, p, loc))
