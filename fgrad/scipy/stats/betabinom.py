"""fgrad.scipy.stats.betabinom: the beta-binomial distribution with SciPy's signatures (k, n,
a, b, loc). Differentiable in a and b to any order, and in n through betaln as JAX's; k is a
count (derivative 0, as poisson's): the pmf is 0 (logpmf -inf) off {0, ..., n}. n that is not
a whole number, a <= 0 or b <= 0 give NaN, as in SciPy."""
from __future__ import annotations

from typing import Any

from ... import numpy as fnp
from .. import special
from .._args import float_args
from ._common import count, inside, log_comb, nan_unless, positive, quiet, whole

__all__ = ["logpmf", "pmf"]


@quiet
def logpmf(k: Any, n: Any, a: Any, b: Any, loc: Any = 0.0) -> Any:
    """log P(K = k) = log C(n, k) + betaln(k + a, n - k + b) - betaln(a, b)."""
    k, n, a, b, loc = float_args("betabinom.logpmf", k, n, a, b, loc)
    k, counted = count(k, loc)
    supported = fnp.logical_and(counted, fnp.less_equal(k, n))
    ks = inside(supported, k, 0.0)
    out = log_comb(n, ks) + special.betaln(ks + a, n - ks + b) - special.betaln(a, b)
    return nan_unless(fnp.logical_and(whole(n), positive(a, b)), fnp.where(supported, out, -fnp.inf))


@quiet
def pmf(k: Any, n: Any, a: Any, b: Any, loc: Any = 0.0) -> Any:
    """P(K = k) = C(n, k) B(k + a, n - k + b) / B(a, b)."""
    return fnp.exp(logpmf(k, n, a, b, loc))
