"""fgrad.scipy.stats.dirichlet: the Dirichlet distribution with SciPy's conventions: the
components of x run along its FIRST axis (x of shape (K,) or (K, N) for K concentrations),
and x may omit the last component (K - 1 rows), which is then 1 minus the sum of the others.
Differentiable in x and alpha to any order.

Unlike SciPy, values are not checked by raising (a traced x cannot be inspected): a point off
the simplex (a negative component, or components that do not sum to 1 within 1e-9, 1e-5 in
float32) has density 0 (logpdf -inf), and a concentration <= 0 gives NaN."""
from __future__ import annotations

from typing import Any

import numpy as np

from ... import numpy as fnp
from ...core.errors import ShapeError
from ...numpy._util import dtype_of
from .. import special
from .._args import float_values
from ._common import quiet

__all__ = ["logpdf", "pdf"]


def _components(name: str, x: Any, alpha: Any) -> tuple:
    """(x with all K components along axis 0, alpha shaped to broadcast against it)."""
    x, alpha = float_values(name, x, alpha)
    if fnp.ndim(alpha) != 1:
        raise ShapeError(f"{name}: the concentrations alpha must be one-dimensional, got shape "
                         f"{fnp.shape(alpha)}")
    k = fnp.shape(alpha)[0]
    shape = fnp.shape(x)
    if len(shape) == 0 or shape[0] not in (k, k - 1):
        raise ShapeError(f"{name}: x of shape {shape} must have {k} (or {k - 1}) components along "
                         f"its first axis, one per concentration in alpha of shape ({k},)")
    if shape[0] == k - 1:
        x = fnp.concatenate([x, 1.0 - fnp.sum(x, axis=0, keepdims=True)], axis=0)
    return x, fnp.reshape(alpha, (k,) + (1,) * (len(shape) - 1))


@quiet
def logpdf(x: Any, alpha: Any) -> Any:
    """log of the Dirichlet density: sum_i (alpha_i - 1) log x_i - log B(alpha), with
    log B(alpha) = sum_i gammaln(alpha_i) - gammaln(sum_i alpha_i); a scalar for x of shape (K,)
    or (K - 1,), shape (N,) for (K, N)."""
    x, alpha = _components("dirichlet.logpdf", x, alpha)
    tol = 1e-5 if dtype_of(x) == np.float32 else 1e-9
    on_simplex = fnp.logical_and(fnp.all(fnp.greater_equal(x, 0.0), axis=0),
                                 fnp.less_equal(fnp.abs(fnp.sum(x, axis=0) - 1.0), tol))
    # off the simplex the formula runs on the centre, so that its NaN reaches no derivative
    xs = fnp.where(on_simplex, x, 1.0 / fnp.shape(x)[0])
    log_b = fnp.sum(special.gammaln(alpha)) - special.gammaln(fnp.sum(alpha))
    out = fnp.where(on_simplex, fnp.sum(special.xlogy(alpha - 1.0, xs), axis=0) - log_b, -fnp.inf)
    return fnp.where(fnp.all(fnp.greater(alpha, 0.0)), out, fnp.nan)


@quiet
def pdf(x: Any, alpha: Any) -> Any:
    """The Dirichlet density (see logpdf)."""
    return fnp.exp(logpdf(x, alpha))
