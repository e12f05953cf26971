"""fgrad.scipy.stats.geom: the geometric distribution with SciPy's signatures (k, p, loc):
the number of trials up to the first success, k - loc in {1, 2, ...}. Differentiable in p to
any order; k is a count (derivative 0, as poisson's): the pmf is 0 (logpmf -inf) elsewhere.
p outside (0, 1] gives NaN, as in SciPy."""
from __future__ import annotations

from typing import Any

from ... import numpy as fnp
from .. import special
from .._args import float_args
from ._common import count, inside, nan_unless, quiet

__all__ = ["logpmf", "pmf"]


@quiet
def logpmf(k: Any, p: Any, loc: Any = 0.0) -> Any:
    """log P(K = k) = (k - 1) log1p(-p) + log p for k - loc in {1, 2, ...}."""
    k, p, loc = float_args("geom.logpmf", k, p, loc)
    failures, counted = count(k, loc + 1.0)
    fs = inside(counted, failures, 0.0)
    out = fnp.where(counted, special.xlog1py(fs, -p) + fnp.log(p), -fnp.inf)
    return nan_unless(fnp.logical_and(fnp.greater(p, 0.0), fnp.less_equal(p, 1.0)), out)


@quiet
def pmf(k: Any, p: Any, loc: Any = 0.0) -> Any:
    """P(K = k) = (1 - p)**(k - 1) p."""
    return fnp.exp(logpmf(k, p, loc))
