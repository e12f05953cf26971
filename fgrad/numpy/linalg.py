"""fgrad.numpy.linalg: NumPy's linalg API over fgrad's linear-algebra primitives.

Matrix functions act on the last two axes and broadcast leading (batch) axes.
`norm`'s 2-norm and Frobenius norm have derivative 0 at the zero vector, to every order,
instead of NaN: 0 is a subgradient there, and a NaN would poison every gradient summed with
it (the README's table of derivatives at non-differentiable points).
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..core.avals import float_dtype
from ..core.errors import ShapeError
from ..ops import elementwise as ew
from ..ops import linalg as la
from ..ops import reduce as red
from ..ops import shape as sh
from ._linalg import matmul, outer, tensordot  # noqa: F401  (numpy.linalg has them too)
from ._reductions import normalize_axes
from ._util import (
    as_value,
    aval_of,
    broadcast_shapes,
    broadcast_to,
    cast,
    dtype_of,
    result_dtype,
)

__all__ = ["norm", "inv", "solve", "det", "slogdet", "cholesky", "matrix_transpose", "matmul",
           "outer", "tensordot", "SlogdetResult", "LinAlgError"]

LinAlgError = np.linalg.LinAlgError
SlogdetResult = namedtuple("SlogdetResult", ["sign", "logabsdet"])


def _float(x, name):
    x = as_value(x, name)
    return cast(x, float_dtype(dtype_of(x)))


def _square(x, name):
    x = _float(x, name)
    shape = aval_of(x).shape
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ShapeError(f"{name}: expected a square matrix or a stack of them (shape (..., n, n)), "
                         f"got shape {shape}")
    return x


def matrix_transpose(x):
    """Swap the last two axes."""
    x = as_value(x, "matrix_transpose")
    if aval_of(x).ndim < 2:
        raise ShapeError(f"matrix_transpose: expected at least 2 dimensions, got shape {aval_of(x).shape}")
    return la.matrix_transpose(x)


def inv(a):
    """Inverse of a square matrix (or of each matrix of a stack)."""
    return la.inv(_square(a, "inv"))


def det(a):
    """Determinant of a square matrix (or of each matrix of a stack)."""
    return la.det(_square(a, "det"))


def slogdet(a):
    """(sign, log|det|) of a square matrix (or stack); the sign has zero derivative."""
    a = _square(a, "slogdet")
    return SlogdetResult(la.slogdet_sign(a), la.logabsdet(a))


def cholesky(a):
    """Lower Cholesky factor L (L @ L.T = a) of a symmetric positive-definite matrix (or stack).
    As in JAX, the input is symmetrised, (a + a.T) / 2, so the gradient is symmetric."""
    a = _square(a, "cholesky")
    sym = ew.mul(ew.add(a, la.matrix_transpose(a)), ew.const(a, 0.5))
    return la.cholesky(sym)


def solve(a, b):
    """x with a @ x = b. `b` is a vector (n,) or a matrix (..., n, k); batch axes broadcast."""
    a, b = _float(a, "solve"), _float(b, "solve")
    dt = result_dtype(a, b)
    a, b = cast(a, dt), cast(b, dt)
    sa, sb = aval_of(a).shape, aval_of(b).shape
    if len(sa) < 2 or sa[-1] != sa[-2]:
        raise ShapeError(f"solve: a must be square (shape (..., n, n)), got shape {sa}")
    n = sa[-1]
    if len(sb) == 1:
        if sb[0] != n:
            raise ShapeError(f"solve: a of shape {sa} and b of shape {sb}: b must have {n} entries")
        b = broadcast_to(sh.reshape(b, (n, 1)), sa[:-2] + (n, 1))
        return sh.reshape(la.solve(a, b), sa[:-1])
    if len(sb) < 2 or sb[-2] != n:
        raise ShapeError(f"solve: a of shape {sa} and b of shape {sb}: b must be (n,) or (..., n, k) "
                         f"with n = {n}")
    batch = broadcast_shapes("solve", sa[:-2], sb[:-2])
    return la.solve(broadcast_to(a, batch + sa[-2:]), broadcast_to(b, batch + sb[-2:]))


# --- norm -----------------------------------------------------------------------------------

def _safe_root_of_sum(s, root=None):
    """sqrt(s) (or s ** (1/root)) for s >= 0 whose derivative at s == 0 is 0, not inf/NaN:
    the root is taken of a guarded value and the result selected (the double-where idiom)."""
    zero = ew.eq(s, ew.const(s, 0.0))
    safe = ew.select(zero, ew.const(s, 1.0), s)
    r = ew.sqrt(safe) if root is None else ew.pow(safe, ew.const(s, 1.0 / root))
    return ew.select(zero, ew.const(s, 0.0), r)


def _keep(x, shape, axes, keepdims):
    if not keepdims:
        return x
    return sh.reshape(x, tuple(1 if i in axes else d for i, d in enumerate(shape)))


def _two_norm(x, axes):
    return _safe_root_of_sum(red.reduce_sum(ew.mul(x, x), axes))


def _vector_norm(x, ord, axes):
    if ord is None or ord == 2:
        return _two_norm(x, axes)
    if ord == np.inf:
        return red.reduce_max(ew.abs(x), axes)
    if ord == -np.inf:
        return red.reduce_min(ew.abs(x), axes)
    if ord == 0:
        nonzero = ew.convert_element_type(ew.ne(x, ew.const(x, 0.0)), dtype_of(x))
        return red.reduce_sum(nonzero, axes)
    if ord == 1:
        return red.reduce_sum(ew.abs(x), axes)
    if isinstance(ord, str):
        raise ValueError(f"norm: invalid norm order {ord!r} for vectors")
    p = float(ord)
    if p.is_integer() and int(p) % 2 == 0:
        # |x|**p == x**p for even p: no abs, so entries at 0 keep every derivative order
        s = red.reduce_sum(ew.integer_pow(x, int(p)), axes)
    else:
        s = red.reduce_sum(ew.pow(ew.abs(x), ew.const(x, p)), axes)
    if p > 0:
        return _safe_root_of_sum(s, p)
    return ew.pow(s, ew.const(s, 1.0 / p))


def _matrix_norm(x, ord, axes):
    row, col = axes
    if ord in (None, "fro", "f"):
        return _two_norm(x, tuple(sorted(axes)))
    if ord in (1, -1, np.inf, -np.inf):
        a = ew.abs(x)
        if ord in (1, -1):   # max/min over columns of the column sums
            summed, other = row, col
        else:                # max/min over rows of the row sums
            summed, other = col, row
        s = red.reduce_sum(a, (summed,))
        other = other - 1 if other > summed else other
        return (red.reduce_max if ord > 0 else red.reduce_min)(s, (other,))
    if ord in (2, -2, "nuc"):
        raise NotImplementedError(f"norm: matrix norm ord={ord!r} needs singular values, which fgrad "
                                  "does not compute; use ord='fro', 1, -1, inf or -inf")
    raise ValueError(f"norm: invalid norm order {ord!r} for matrices")


def norm(x, ord=None, axis=None, keepdims: bool = False):
    """NumPy's linalg.norm: vector norms (ord None/2, 1, inf, -inf, 0, any p) over one axis,
    matrix norms ('fro', 1, -1, inf, -inf) over two; with axis=None and ord=None the
    2-norm of all entries. d norm / dx at x = 0 is 0 (a subgradient; see the module docstring)."""
    x = _float(x, "norm")
    shape = aval_of(x).shape
    nd = len(shape)
    if axis is None:
        if ord is None:
            axes = tuple(range(nd))
            return _keep(_two_norm(x, axes), shape, axes, keepdims)
        if nd not in (1, 2):
            raise ValueError(f"norm: ord={ord!r} with axis=None needs a 1-D or 2-D array, got shape "
                             f"{shape}; pass axis=")
        axis = tuple(range(nd))
    axis = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    if len(axis) == 1:
        axes = normalize_axes(axis, nd, "norm")
        return _keep(_vector_norm(x, ord, axes), shape, axes, keepdims)
    if len(axis) == 2:
        axes = tuple(int(a) % nd if -nd <= int(a) < nd else int(a) for a in axis)
        if any(not 0 <= a < nd for a in axes) or axes[0] == axes[1]:
            raise ShapeError(f"norm: axis={axis} is invalid for an array of {nd} dimensions")
        return _keep(_matrix_norm(x, ord, axes), shape, axes, keepdims)
    raise ValueError(f"norm: axis must name one (vector norm) or two (matrix norm) axes, got {axis}")
