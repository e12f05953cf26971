"""fgrad.scipy.stats.multivariate_normal: the multivariate normal distribution with SciPy's
argument conventions: mean None (zeros) or a vector, cov a scalar (times the identity), a
vector (the diagonal) or a matrix; x of shape (..., dim) (or, for dim 1, any shape); results
squeezed as SciPy squeezes them. Computed through the Cholesky factor of cov, so it is
differentiable in x, mean and cov to any order (cov must be positive definite)."""
from __future__ import annotations

import math
from typing import Any

from ... import numpy as fnp
from ...core.errors import FgradValueError, ShapeError
from ...numpy._util import dtype_of
from ...ops.linalg import triangular_solve
from .._args import float_values
from ._common import quiet

__all__ = ["logpdf", "pdf", "entropy"]

_LOG_2PI = math.log(2.0 * math.pi)


def _parameters(name: str, mean: Any, cov: Any, *more: Any) -> tuple:
    """(dim, mean as a vector, cov as a matrix, *more) in one float dtype, as SciPy reads them."""
    if mean is None:
        cov, *more = float_values(name, cov, *more)
        dim = fnp.shape(cov)[0] if fnp.ndim(cov) >= 1 else 1
        mean = fnp.zeros(dim, dtype=dtype_of(cov))
    else:
        mean, cov, *more = float_values(name, mean, cov, *more)
        dim = max(1, math.prod(fnp.shape(mean)))
        mean = fnp.reshape(mean, (dim,))
    if fnp.ndim(cov) == 0:
        cov = cov * fnp.eye(dim, dtype=dtype_of(cov))
    elif fnp.ndim(cov) == 1 and fnp.shape(cov) == (dim,):
        cov = fnp.diag(cov)
    elif fnp.shape(cov) != (dim, dim):
        raise ShapeError(f"{name}: cov of shape {fnp.shape(cov)} does not fit a mean of length {dim}: "
                         f"pass a scalar, a vector of {dim} variances or a ({dim}, {dim}) matrix")
    return (dim, mean, cov, *more)


def _log_det_and_factor(cov: Any) -> tuple:
    chol = fnp.linalg.cholesky(cov)
    return 2.0 * fnp.sum(fnp.log(fnp.diagonal(chol))), chol


@quiet
def logpdf(x: Any, mean: Any = None, cov: Any = 1.0, allow_singular: bool = False) -> Any:
    """log of the density: -(dim log(2 pi) + log det(cov) + (x - mean)^T cov^-1 (x - mean)) / 2,
    for each point along x's last axis. allow_singular=True (SciPy's pseudo-inverse for a
    singular cov) is not available: it raises ValueError."""
    if allow_singular:
        raise FgradValueError("multivariate_normal.logpdf: allow_singular=True is not supported "
                              "(a singular covariance has no Cholesky factor); pass a positive "
                              "definite cov, e.g. cov + 1e-9 * eye(dim)")
    dim, mean, cov, x = _parameters("multivariate_normal.logpdf", mean, cov, x)
    if fnp.ndim(x) == 0 or (fnp.ndim(x) == 1 and dim == 1):
        x = fnp.reshape(x, (-1, 1))  # SciPy reads these as points of dimension 1
    if fnp.shape(x)[-1] != dim:
        raise ShapeError(f"multivariate_normal.logpdf: x of shape {fnp.shape(x)} must have its last "
                         f"axis of length {dim}, the dimension of the mean and cov")
    batch = fnp.shape(x)[:-1]
    dev = fnp.reshape(fnp.subtract(x, mean), (-1, dim))
    log_det, chol = _log_det_and_factor(cov)
    z = triangular_solve(chol, fnp.transpose(dev), lower=True)  # L z = dev^T: maha = |z|^2
    maha = fnp.reshape(fnp.sum(z * z, axis=0), batch)
    # fnp.add, not `+`: a scalar cov leaves log_det on the host beside a GPU maha, which CuPy's
    # operators refuse and fgrad's functions move
    return fnp.squeeze(-0.5 * fnp.add(dim * _LOG_2PI + log_det, maha))  # SciPy squeezes its results


@quiet
def pdf(x: Any, mean: Any = None, cov: Any = 1.0, allow_singular: bool = False) -> Any:
    """The multivariate normal density (see logpdf)."""
    return fnp.exp(logpdf(x, mean, cov, allow_singular))


@quiet
def entropy(mean: Any = None, cov: Any = 1.0) -> Any:
    """The differential entropy (dim (1 + log(2 pi)) + log det(cov)) / 2 (mean only sets dim)."""
    dim, mean, cov = _parameters("multivariate_normal.entropy", mean, cov)
    return 0.5 * (dim * (1.0 + _LOG_2PI) + _log_det_and_factor(cov)[0])
