"""fgrad.scipy.stats.multinomial: the multinomial distribution with SciPy's signatures (x,
n, p): the counts x of K categories along the LAST axis (shape (..., K)), n trials, category
probabilities p (..., K). Differentiable in p (and in n, through gammaln, as JAX's) to any
order; the counts have no derivative (as poisson's k).

Counts that are not whole numbers >= 0, or that do not add up to n, have probability 0
(logpmf -inf). Invalid parameters give NaN: n that is not a whole number >= 0, p outside
[0, 1], or p that does not sum to 1 within 1e-9 (1e-5 in float32), as dirichlet's simplex
check (SciPy 1.17 instead replaces the last p by 1 minus the others, with a FutureWarning
that it gives NaN from SciPy 1.18; a traced p cannot be rewritten that way and keep its
derivatives)."""
from __future__ import annotations

from typing import Any

import numpy as np

from ... import numpy as fnp
from ...core.errors import ShapeError
from ...numpy._util import dtype_of
from .. import special
from .._args import float_values
from ._common import count, inside, quiet, whole

__all__ = ["logpmf", "pmf"]


@quiet
def logpmf(x: Any, n: Any, p: Any) -> Any:
    """log P(X = x) = gammaln(n + 1) + sum_i (x_i log p_i - gammaln(x_i + 1)); shape (...) for
    x and p of shapes broadcasting to (..., K)."""
    x, n, p = float_values("multinomial.logpmf", x, n, p)
    if fnp.ndim(p) == 0 or fnp.ndim(x) == 0:
        raise ShapeError(f"multinomial.logpmf: x of shape {fnp.shape(x)} and p of shape {fnp.shape(p)} "
                         "must have the K categories along their last axis (at least one dimension each)")
    if fnp.shape(x)[-1] != fnp.shape(p)[-1]:
        raise ShapeError(f"multinomial.logpmf: x of shape {fnp.shape(x)} and p of shape {fnp.shape(p)} "
                         "must have the same number of categories along their last axis")
    x, counted = count(x, 0.0)
    xs = inside(counted, x, 0.0)
    possible = fnp.logical_and(fnp.all(counted, axis=-1), fnp.equal(fnp.sum(xs, axis=-1), n))
    out = special.gammaln(n + 1.0) + fnp.sum(special.xlogy(xs, p) - special.gammaln(xs + 1.0), axis=-1)
    out = fnp.where(possible, out, -fnp.inf)
    tol = 1e-5 if dtype_of(p) == np.float32 else 1e-9
    probabilities = fnp.logical_and(
        fnp.all(fnp.logical_and(fnp.greater_equal(p, 0.0), fnp.less_equal(p, 1.0)), axis=-1),
        fnp.less_equal(fnp.abs(fnp.sum(p, axis=-1) - 1.0), tol))
    return fnp.where(fnp.logical_and(probabilities, whole(n)), out, fnp.nan)


@quiet
def pmf(x: Any, n: Any, p: Any) -> Any:
    """P(X = x) = n! / prod_i x_i! prod_i p_i**x_i."""
    return fnp.exp(logpmf(x, n, p))
