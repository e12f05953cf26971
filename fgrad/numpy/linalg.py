"""fgrad.numpy.linalg: NumPy's linalg API over fgrad's linear-algebra primitives.

Matrix functions act on the last two axes and broadcast leading (batch) axes. The
decompositions (eigh, eig, svd, qr and their value-only forms) are in _decompositions.py.
`norm`'s 2-norm and Frobenius norm have derivative 0 at the zero vector, to every order,
instead of NaN: 0 is a subgradient there, and a NaN would poison every gradient summed with
it (the README's table of derivatives at non-differentiable points).
"""
from __future__ import annotations

from collections import namedtuple
from typing import Any

import numpy as np

from ..core.avals import float_dtype
from ..core.errors import FgradTypeError, FgradValueError, ShapeError
from ..core.trace import xp_of
from ..ops import complex as cx
from ..ops import elementwise as ew
from ..ops import linalg as la
from ..ops import matrix_functions as mf
from ..ops import reduce as red
from ..ops import shape as sh
from ._complex import conj
from ._decompositions import (  # noqa: F401  (re-exported: numpy.linalg's names)
    EighResult,
    EigResult,
    QRResult,
    SVDResult,
    eig,
    eigh,
    eigvals,
    eigvalsh,
    qr,
    svd,
    svdvals,
)
from ._index import diagonal as _diagonal
from ._index import trace as _trace
from ._linalg import matmul, outer, tensordot  # noqa: F401  (numpy.linalg has them too)
from ._reductions import normalize_axes
from ._shape import moveaxis, reshape, stack
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
           "outer", "tensordot", "SlogdetResult", "LinAlgError", "eigh", "eigvalsh", "eig", "eigvals",
           "svd", "svdvals", "qr", "EighResult", "EigResult", "SVDResult", "QRResult", "pinv", "lstsq",
           "matrix_power", "matrix_rank", "cond", "multi_dot", "vector_norm", "matrix_norm", "trace",
           "diagonal", "cross", "vecdot", "tensorinv", "tensorsolve"]

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
    if dtype_of(a).kind == "c":
        # complex: the sign is det / |det|, which moves with the phase of det (as in JAX), so
        # both come from det (whose rules hold for complex matrices); sign 0 at a singular one
        d = la.det(a)
        m = ew.abs(d)
        zero = ew.eq(m, ew.const(m, 0.0))
        safe = ew.convert_element_type(ew.select(zero, ew.const(m, 1.0), m), dtype_of(a))
        return SlogdetResult(ew.select(zero, ew.const(d, 0.0), ew.div(d, safe)), ew.log(m))
    return SlogdetResult(la.slogdet_sign(a), la.logabsdet(a))


def cholesky(a):
    """Lower Cholesky factor L (L @ L^H = a) of a real symmetric or complex Hermitian
    positive-definite matrix (or stack). As in JAX, the input is symmetrised, (a + a^H) / 2,
    so the gradient is Hermitian."""
    a = _square(a, "cholesky")
    sym = ew.mul(ew.add(a, la.matrix_adjoint(a)), ew.const(a, 0.5))
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
    return _safe_root_of_sum(red.reduce_sum(cx.abs_squared(x), axes))  # (real for complex x)


def _vector_norm(x, ord, axes):
    if ord is None or ord == 2:
        return _two_norm(x, axes)
    if ord == np.inf:
        return red.reduce_max(ew.abs(x), axes)
    if ord == -np.inf:
        return red.reduce_min(ew.abs(x), axes)
    if ord == 0:
        nonzero = ew.convert_element_type(ew.ne(x, ew.const(x, 0.0)), cx.real_dtype(dtype_of(x)))
        return red.reduce_sum(nonzero, axes)
    if ord == 1:
        return red.reduce_sum(ew.abs(x), axes)
    if isinstance(ord, str):
        raise FgradValueError(f"norm: invalid norm order {ord!r} for vectors")
    p = float(ord)
    if p.is_integer() and int(p) % 2 == 0:
        # |x|**p == (|x|**2)**(p/2) for even p: no abs, so entries at 0 keep every derivative
        # order (|x|**2 is x * x for real x, x * conj(x) for complex)
        s = red.reduce_sum(ew.integer_pow(cx.abs_squared(x), int(p) // 2), axes)
    else:
        a = ew.abs(x)   # real for complex x: the exponent takes its dtype
        s = red.reduce_sum(ew.pow(a, ew.const(a, p)), axes)
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
    if ord in (2, -2, "nuc"):   # from the singular values of the (row, col) planes
        nd = len(aval_of(x).shape)
        s = svdvals(moveaxis(x, (row, col), (nd - 2, nd - 1)))
        if ord == "nuc":
            return red.reduce_sum(s, (nd - 2,))
        lead = aval_of(s).shape[:-1]
        i = 0 if ord == 2 else aval_of(s).shape[-1] - 1   # descending: the largest comes first
        return sh.reshape(sh.slice(s, (0,) * len(lead) + (i,), lead + (i + 1,)), lead)
    raise FgradValueError(f"norm: invalid norm order {ord!r} for matrices")


def norm(x, ord=None, axis=None, keepdims: bool = False):
    """NumPy's linalg.norm: vector norms (ord None/2, 1, inf, -inf, 0, any p) over one axis,
    matrix norms ('fro', 1, -1, inf, -inf, 2 and -2 (largest and smallest singular value),
    'nuc' (their sum)) over two; with axis=None and ord=None the 2-norm of all entries.
    d norm / dx at x = 0 is 0 for the vector 2-norm and 'fro' (a subgradient; see the module
    docstring). Complex x gives real norms (ord 2, -2 and 'nuc' from the singular values of the
    complex matrix). Orders through abs (1, inf, odd p) take abs's derivatives at an entry that
    is exactly 0: first derivative 0; second derivative 0, as JAX's for real entries (for a
    complex entry JAX's abs rule gives the identity on its (re, im) block, an artifact: |z| has
    no second derivative at 0; tests/numpy/test_linalg_complex.py pins both)."""
    x = _float(x, "norm")
    shape = aval_of(x).shape
    nd = len(shape)
    if axis is None:
        if ord is None:
            axes = tuple(range(nd))
            return _keep(_two_norm(x, axes), shape, axes, keepdims)
        if nd not in (1, 2):
            raise FgradValueError(f"norm: ord={ord!r} with axis=None needs a 1-D or 2-D array, got shape "
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
    raise FgradValueError(f"norm: axis must name one (vector norm) or two (matrix norm) axes, got {axis}")


# --- pseudo-inverse, least squares, powers, ranks -------------------------------------------------

_UNSET = object()


def _static_float(v, name: str, what: str) -> float:
    try:
        return float(np.asarray(v))
    except Exception:  # noqa: BLE001  (a traced or non-numeric value: the message says which)
        raise FgradValueError(f"{name}: {what} must be a Python or NumPy number (it sets which singular "
                              f"values count as zero, a static choice), got {type(v).__name__}") from None


def pinv(a: Any, rcond: Any = None, hermitian: bool = False, *, rtol: Any = _UNSET) -> Any:
    """Moore-Penrose pseudo-inverse of a real or complex matrix (or stack). Singular values at or below
    rcond * (the largest) count as zero; NumPy's defaults: rcond 1e-15, or with rtol=None
    max(m, n) * eps. The derivative is that of a matrix of constant rank. `hermitian` is
    accepted for NumPy's signature."""
    a = _float(a, "pinv")
    shape = aval_of(a).shape
    if len(shape) < 2:
        raise ShapeError(f"pinv: expected a matrix or a stack of them (shape (..., m, n)), got shape {shape}")
    if rcond is None:
        if rtol is _UNSET:
            rcond = 1e-15
        elif rtol is None:
            rcond = max(shape[-2:]) * np.finfo(dtype_of(a)).eps
        else:
            rcond = rtol
    elif rtol is not _UNSET:
        raise FgradValueError("pinv: rtol and rcond can't be both set")
    return mf.pinv(a, _static_float(rcond, "pinv", "rcond"))


def lstsq(a: Any, b: Any, rcond: Any = None) -> tuple:
    """Least-squares solution x of a @ x = b for a (m, n) and b (m,) or (m, k): (x, residuals,
    rank, s), NumPy's results. x = pinv(a, rcond) @ b (rcond default eps * max(m, n)).
    residuals: the squared 2-norms of the columns of b - a @ x when m > n, else an empty array;
    its shape depends on m and n only (NumPy also returns an empty array when a is rank
    deficient, a shape that depends on the values, which tracing cannot follow)."""
    a, b = _float(a, "lstsq"), _float(b, "lstsq")
    dt = result_dtype(a, b)
    a, b = cast(a, dt), cast(b, dt)
    sa, sb = aval_of(a).shape, aval_of(b).shape
    if len(sa) != 2 or len(sb) not in (1, 2) or sb[0] != sa[0]:
        raise ShapeError(f"lstsq: a must be (m, n) and b (m,) or (m, k); got shapes {sa} and {sb}")
    m, n = sa
    if rcond is None:
        rcond = np.finfo(dt).eps * max(m, n)
    rcond = _static_float(rcond, "lstsq", "rcond")
    x = matmul(mf.pinv(a, rcond), b)
    s = svdvals(a)
    if min(m, n):
        big = ew.gt(s, ew.mul(red.reduce_max(s, (0,)), ew.const(s, rcond)))
        rank = red.reduce_sum(ew.convert_element_type(big, np.int32), (0,))
    else:  # no singular values: no largest one to scale rcond by
        rank = np.zeros((), np.int32)
    if m > n:
        r = ew.sub(b, matmul(a, x))
        resid = red.reduce_sum(cx.abs_squared(r), (0,))   # real for complex b, as NumPy's
        resid = sh.reshape(resid, (1,)) if len(sb) == 1 else resid
    else:
        resid = np.zeros((0,), cx.real_dtype(dt))
    return x, resid, rank, s


def matrix_power(a: Any, n: int) -> Any:
    """a raised to the integer power n by repeated squaring (n < 0: of inv(a); n = 0: the
    identity)."""
    a = as_value(a, "matrix_power")
    shape = aval_of(a).shape
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ShapeError(f"matrix_power: expected a square matrix or a stack of them (shape (..., n, n)), "
                         f"got shape {shape}")
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise FgradTypeError(f"matrix_power: the exponent must be an integer, got {type(n).__name__} {n!r:.40}")
    n = int(n)
    if n == 0:
        eye = xp_of((a,)).eye(shape[-1], dtype=dtype_of(a))  # on a's device (traced: a constant)
        return sh.broadcast_in_dim(eye, shape, (len(shape) - 2, len(shape) - 1))
    if n < 0:
        a, n = inv(a), -n
    result, base = None, a
    while True:   # binary powering: the bits of n, lowest first
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if not n:
            return result
        base = matmul(base, base)


def matrix_rank(A: Any, tol: Any = None, hermitian: bool = False, *, rtol: Any = None) -> Any:
    """Number of singular values above tol (default max(s) * rtol, rtol default
    max(m, n) * eps), per matrix of a stack (int64); a 1-D array has rank 1 unless all zero."""
    A = _float(A, "matrix_rank")
    shape = aval_of(A).shape
    if len(shape) < 2:
        nonzero = red.reduce_sum(ew.convert_element_type(ew.ne(A, ew.const(A, 0.0)), np.int64),
                                 tuple(range(len(shape))))
        return ew.convert_element_type(ew.gt(nonzero, np.int64(0)), np.int64)
    if rtol is not None and tol is not None:
        raise FgradValueError("matrix_rank: tol and rtol can't be both set")
    s = svdvals(A)
    lead = aval_of(s).shape[:-1]
    if tol is None:
        rtol = max(shape[-2:]) * np.finfo(dtype_of(s)).eps if rtol is None else rtol
        tol = ew.mul(red.reduce_max(s, (len(lead),)), ew.const(s, _static_float(rtol, "matrix_rank", "rtol")))
    else:
        tol = ew.const(s, _static_float(tol, "matrix_rank", "tol"))
    if aval_of(tol).shape:
        tol = sh.broadcast_in_dim(tol, aval_of(s).shape, tuple(range(len(lead))))
    above = ew.convert_element_type(ew.gt(s, tol), np.int64)
    return red.reduce_sum(above, (len(lead),))


def cond(x: Any, p: Any = None) -> Any:
    """Condition number of a square matrix (or stack) in the norm p: None and 2 give
    s_max / s_min, -2 its inverse (also for non-square matrices), the other orders
    norm(x, p) * norm(inv(x), p)."""
    x = _float(x, "cond")
    shape = aval_of(x).shape
    if len(shape) < 2:
        raise ShapeError(f"cond: expected a matrix or a stack of them, got shape {shape}")
    if p is None or p == 2 or p == -2:
        s = svdvals(x)
        lead, k = aval_of(s).shape[:-1], aval_of(s).shape[-1]
        first = sh.reshape(sh.slice(s, (0,) * len(lead) + (0,), lead + (1,)), lead)
        last = sh.reshape(sh.slice(s, (0,) * len(lead) + (k - 1,), lead + (k,)), lead)
        return ew.div(last, first) if p == -2 else ew.div(first, last)
    return ew.mul(norm(x, p, axis=(-2, -1)), norm(inv(x), p, axis=(-2, -1)))


def _chain_order(dims):
    """Optimal parenthesisation of a matrix chain with shapes dims[i] x dims[i + 1]
    (Cormen et al., 15.2): split[i][j] is where the product of matrices i..j splits."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def multi_dot(arrays: Any, *, out: Any = None) -> Any:
    """The product of two or more matrices in the cheapest order; the first may be a 1-D row
    vector and the last a 1-D column vector (NumPy's multi_dot)."""
    if out is not None:
        raise FgradValueError("multi_dot: out= is not supported (fgrad values are immutable); use the result")
    arrays = [as_value(a, "multi_dot") for a in arrays]
    if len(arrays) < 2:
        raise FgradValueError(f"multi_dot: expected at least two arrays, got {len(arrays)}")
    if len(arrays) == 2:
        return matmul(arrays[0], arrays[1])
    first_1d, last_1d = len(aval_of(arrays[0]).shape) == 1, len(aval_of(arrays[-1]).shape) == 1
    if first_1d:
        arrays[0] = sh.reshape(arrays[0], (1,) + aval_of(arrays[0]).shape)
    if last_1d:
        arrays[-1] = sh.reshape(arrays[-1], aval_of(arrays[-1]).shape + (1,))
    for a in arrays:
        if len(aval_of(a).shape) != 2:
            raise ShapeError(f"multi_dot: the arrays must be 2-D (the first and last may be 1-D), got shape "
                             f"{aval_of(a).shape}")
    split = _chain_order([aval_of(arrays[0]).shape[0]] + [aval_of(a).shape[1] for a in arrays])

    def product(i, j):
        if i == j:
            return arrays[i]
        return matmul(product(i, split[i][j]), product(split[i][j] + 1, j))

    result = product(0, len(arrays) - 1)
    shape = aval_of(result).shape
    if first_1d and last_1d:
        return sh.reshape(result, ())
    if first_1d or last_1d:
        return sh.reshape(result, shape[1:] if first_1d else shape[:1])
    return result


# --- NumPy 2's array-API functions ----------------------------------------------------------------

def vector_norm(x: Any, /, *, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> Any:
    """The vector norm of order `ord` over `axis` (an int, a tuple, or None: all entries)."""
    x = _float(x, "vector_norm")
    shape = aval_of(x).shape
    if axis is None:
        out = norm(sh.reshape(x, (aval_of(x).size,)), ord, 0)
        return sh.reshape(out, (1,) * len(shape)) if keepdims else out
    if isinstance(axis, (int, np.integer)):
        return norm(x, ord, int(axis), keepdims)
    axes = normalize_axes(tuple(axis), len(shape), "vector_norm")
    rest = tuple(i for i in range(len(shape)) if i not in axes)
    moved = sh.transpose(x, rest + axes)
    flat = sh.reshape(moved, tuple(shape[i] for i in rest) + (int(np.prod([shape[i] for i in axes])),))
    out = norm(flat, ord, -1)
    if keepdims:
        out = sh.reshape(out, tuple(1 if i in axes else d for i, d in enumerate(shape)))
    return out


def matrix_norm(x: Any, /, *, keepdims: bool = False, ord: Any = "fro") -> Any:
    """The matrix norm of order `ord` of the last two axes (NumPy 2's linalg.matrix_norm)."""
    return norm(x, ord, (-2, -1), keepdims)


def trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Any:
    """Sum of a diagonal of each matrix (the last two axes)."""
    return _trace(x, offset, -2, -1, dtype)


def diagonal(x: Any, /, *, offset: int = 0) -> Any:
    """A diagonal of each matrix (the last two axes)."""
    return _diagonal(x, offset, -2, -1)


def cross(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    """The cross product of 3-element vectors along `axis` (broadcasting the rest)."""
    x1, x2 = as_value(x1, "cross"), as_value(x2, "cross")
    dt = result_dtype(x1, x2)
    x1, x2 = cast(x1, dt), cast(x2, dt)
    s1, s2 = aval_of(x1).shape, aval_of(x2).shape
    if not s1 or not s2 or s1[axis] != 3 or s2[axis] != 3:
        raise ShapeError(f"cross: both arrays need 3 entries along axis {axis}, got shapes {s1} and {s2}")
    a, b = moveaxis(x1, axis, -1), moveaxis(x2, axis, -1)
    batch = broadcast_shapes("cross", aval_of(a).shape[:-1], aval_of(b).shape[:-1])
    a, b = broadcast_to(a, batch + (3,)), broadcast_to(b, batch + (3,))
    nb = len(batch)

    def part(v, i):
        return sh.reshape(sh.slice(v, (0,) * nb + (i,), batch + (i + 1,)), batch)

    (a0, a1, a2), (b0, b1, b2) = [part(a, i) for i in range(3)], [part(b, i) for i in range(3)]
    out = stack([ew.sub(ew.mul(a1, b2), ew.mul(a2, b1)), ew.sub(ew.mul(a2, b0), ew.mul(a0, b2)),
                 ew.sub(ew.mul(a0, b1), ew.mul(a1, b0))], -1)
    return moveaxis(out, -1, axis)


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    """sum(conj(x1) * x2) along `axis`, broadcasting the other axes."""
    x1, x2 = as_value(x1, "vecdot"), as_value(x2, "vecdot")
    dt = result_dtype(x1, x2)
    x1, x2 = cast(x1, dt), cast(x2, dt)
    shape = broadcast_shapes("vecdot", aval_of(x1).shape, aval_of(x2).shape)
    if not shape:
        raise ShapeError("vecdot: the arrays need at least one axis")
    x1, x2 = broadcast_to(conj(x1), shape), broadcast_to(x2, shape)
    ax = normalize_axes(axis, len(shape), "vecdot")
    return red.reduce_sum(ew.mul(x1, x2), ax)


def tensorinv(a: Any, ind: int = 2) -> Any:
    """The inverse of `a` seen as a linear map from its last axes to its first `ind` axes:
    tensordot(tensorinv(a, ind), a, ind) is the identity."""
    a = _float(a, "tensorinv")
    shape = aval_of(a).shape
    ind = int(ind)
    if ind <= 0:
        raise FgradValueError(f"tensorinv: ind must be a positive integer, got {ind}")
    rows, cols = int(np.prod(shape[:ind])), int(np.prod(shape[ind:]))
    if rows != cols:
        raise ShapeError(f"tensorinv: a of shape {shape} with ind={ind} is not square ({rows} x {cols}); "
                         "the product of the first ind axes must equal that of the rest")
    return reshape(inv(reshape(a, (rows, cols))), shape[ind:] + shape[:ind])


def tensorsolve(a: Any, b: Any, axes: Any = None) -> Any:
    """x with tensordot(a, x, x.ndim) == b; `axes` are moved to the end of a first."""
    a, b = _float(a, "tensorsolve"), _float(b, "tensorsolve")
    dt = result_dtype(a, b)
    a, b = cast(a, dt), cast(b, dt)
    nd = len(aval_of(a).shape)
    if axes is not None:
        axes = normalize_axes(tuple(axes) if not isinstance(axes, (int, np.integer)) else (axes,), nd, "tensorsolve")
        a = sh.transpose(a, tuple(i for i in range(nd) if i not in axes) + tuple(axes))
    shape = aval_of(a).shape
    bshape = aval_of(b).shape
    x_shape = shape[len(bshape):]
    rows, cols = int(np.prod(bshape)), int(np.prod(x_shape))
    if shape[:len(bshape)] != bshape or rows != cols:
        raise ShapeError(f"tensorsolve: a of shape {shape} and b of shape {bshape}: a must start with b's shape "
                         "and the rest must hold as many entries as b")
    return reshape(solve(reshape(a, (rows, cols)), reshape(b, (rows,))), x_shape)
