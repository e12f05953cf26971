"""torch.linalg on fgrad.numpy.linalg (and fgrad.scipy.linalg's solve_triangular): PyTorch's
names, arguments (dim/keepdim, left=, upper=, atol/rtol, drivers) and results (named tuples
printed as fgrad.return_types.linalg_*), floating-point inputs only, and its errors: shape
errors are RuntimeErrors and numerical failures (a singular or non-positive-definite matrix)
raise `fgrad.torch.linalg.LinAlgError`, a RuntimeError as torch.linalg.LinAlgError is. Every
derivative is fgrad.numpy.linalg's (the decompositions' and matrix functions' rules).
"""
from __future__ import annotations

import functools
from typing import Any

import numpy as np

from .. import numpy as fnp
from ..core.errors import FgradRuntimeError, FgradTypeError, LinAlgError
from ..numpy._policy import TORCH as P
from ..numpy._util import cast
from ..scipy import linalg as fsl
from ._tensor import _dtypes as D
from ._tensor._ops import result_type as _result_type
from ._tensor._ops_math import linalg_cross
from ._tensor._ops_shape import matmul as _matmul
from ._tensor.tensor import Tensor, _dim, _make


slogdet_t = _result_type("linalg_slogdet", ("sign", "logabsdet"))
qr_t = _result_type("linalg_qr", ("Q", "R"))
svd_t = _result_type("linalg_svd", ("U", "S", "Vh"))
eigh_t = _result_type("linalg_eigh", ("eigenvalues", "eigenvectors"))
lstsq_t = _result_type("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))


def _numerical(name: str):
    """Turn NumPy's LinAlgError (raised by the kernels) into PyTorch's kind of error."""
    def wrap(fn):
        @functools.wraps(fn)
        def run(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except np.linalg.LinAlgError as e:
                raise LinAlgError(f"linalg.{name}: {e} (the input matrix is singular or not positive-definite; "
                                  "check its conditioning, or use a least-squares / pseudo-inverse "
                                  "function)") from None
        return run
    return wrap


def _float_input(name: str, A, min_ndim: int = 0):
    if not isinstance(A, Tensor):
        raise FgradTypeError(f"linalg.{name}(): argument 'A' must be Tensor, not {type(A).__name__}")
    kind = A._value.dtype.kind
    if kind not in "fc":
        raise FgradRuntimeError(f"linalg.{name}: Expected a floating point or complex tensor as input. Got "
                           f"{D.of_np(A._value.dtype)._torch[:-6]}")
    if A._value.ndim < min_ndim:
        raise FgradRuntimeError(f"linalg.{name}: The input tensor A must have at least {min_ndim} dimensions.")
    return A


def _square(name: str, A):
    _float_input(name, A, 2)
    n, m = A._value.shape[-2:]
    if n != m:
        raise FgradRuntimeError(f"linalg.{name}: A must be batches of square matrices, but they are {n} by {m} matrices")
    return A


def _as(A, dtype):
    return A if dtype is None else cast(A, D.np_dtype(dtype))


# --- norms ------------------------------------------------------------------------------------------

def vector_norm(x: Tensor, ord: Any = 2, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """The vector norm of order `ord` (any real, inf, -inf; 0 counts non-zeros) over `dim`
    (all elements when None); d/dx is 0 at x = 0 for the 2-norm."""
    x = _as(_float_input("vector_norm", x), dtype)
    if isinstance(ord, str):
        raise FgradTypeError(f"linalg_vector_norm(): argument 'ord' (position 2) must be Number, not str ({ord!r}); "
                        "matrix norms are linalg.matrix_norm's")
    axis = dim if dim is None or isinstance(dim, int) else tuple(dim)
    if x._value.ndim == 0:  # a number's norm of any order > 0 is its magnitude
        return fnp.abs(x)
    return fnp.linalg.vector_norm(x, axis=axis, keepdims=keepdim, ord=float(ord))


def matrix_norm(A: Tensor, ord: Any = "fro", dim: Any = (-2, -1), keepdim: bool = False, *,
                dtype: Any = None) -> Tensor:
    """The matrix norm ('fro', 'nuc', inf, -inf, 1, -1, 2, -2) of the matrices in `dim`."""
    A = _as(_float_input("matrix_norm", A, 2), dtype)
    if ord not in ("fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf):
        raise FgradRuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    return fnp.linalg.norm(A, ord, tuple(dim), keepdim)


def norm(A: Tensor, ord: Any = None, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """A vector norm (dim an int, or a 1-D input) or a matrix norm (dim a pair, or a 2-D
    input); with ord and dim both None, the 2-norm of all elements."""
    A = _as(_float_input("norm", A), dtype)
    if dim is None:
        if ord is None:
            return vector_norm(A, 2, None, keepdim)
        nd = A._value.ndim
        if nd not in (1, 2):
            raise FgradRuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                               f"Got {nd}D.")
        dim = (0,) if nd == 1 else (0, 1)
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dims) == 1:
        return vector_norm(A, 2 if ord is None else ord, dims[0], keepdim)
    if len(dims) == 2:
        return matrix_norm(A, "fro" if ord is None else ord, dims, keepdim)
    raise FgradRuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {list(dims)}")


# --- inverses, determinants, solves ---------------------------------------------------------------------

@_numerical("inv")
def inv(A: Tensor) -> Tensor:
    """The inverse of each square matrix in A."""
    return fnp.linalg.inv(_square("inv", A))


@_numerical("det")
def det(A: Tensor) -> Tensor:
    """The determinant of each square matrix in A."""
    return fnp.linalg.det(_square("det", A))


@_numerical("slogdet")
def slogdet(A: Tensor) -> tuple:
    """(sign, logabsdet) of the determinants of the square matrices in A."""
    sign, logabsdet = fnp.linalg.slogdet(_square("slogdet", A))
    return slogdet_t(sign, logabsdet)


def logdet(A: Tensor) -> Tensor:
    """log(det(A)): NaN where the determinant is negative, -inf where it is 0 (torch.logdet)."""
    sign, logabsdet = slogdet(A)
    return fnp.where(fnp.less(sign, 0), fnp.asarray(float("nan"), logabsdet.dtype.dtype),
                     fnp.where(fnp.equal(sign, 0), fnp.asarray(float("-inf"), logabsdet.dtype.dtype), logabsdet))


@_numerical("solve")
def solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:
    """X with A @ X = B (or X @ A = B for left=False); B is a batch of vectors when it has
    A's shape without the last dimension (or is 1-D), else of matrices."""
    _square("solve", A)
    _float_input("solve", B, 1)
    if not left:  # X A = B  <=>  A^T X^T = B^T
        return solve(A.mT, B.mT).mT
    sa, sb = tuple(A._value.shape), tuple(B._value.shape)
    vector = len(sb) == 1 or (len(sb) == len(sa) - 1 and sb == sa[:-1])
    dt = P.result_dtype(A, B)
    A, B = cast(A, dt), cast(B, dt)
    if vector:
        B = B.unsqueeze(-1)
    if B._value.shape[-2] != sa[-1]:
        raise FgradRuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation AX = B ({sa[-2]}x"
                           f"{sa[-1]} and {B._value.shape[-2]}x{B._value.shape[-1]})")
    batch = np.broadcast_shapes(sa[:-2], tuple(B._value.shape[:-2]))
    A = fnp.broadcast_to(A, batch + sa[-2:], policy=P)
    B = fnp.broadcast_to(B, batch + tuple(B._value.shape[-2:]), policy=P)
    X = fnp.linalg.solve(A, B)
    return X.squeeze(-1) if vector else X


def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True, unitriangular: bool = False) -> Tensor:
    """X with A @ X = B (X @ A = B for left=False) for triangular A (the upper or lower
    triangle of A is read; with unitriangular its diagonal is taken as ones)."""
    _square("solve_triangular", A)
    _float_input("solve_triangular", B, 2)
    if not left:
        return solve_triangular(A.mT, B.mT, upper=not upper, unitriangular=unitriangular).mT
    if B._value.shape[-2] != A._value.shape[-1]:
        raise FgradRuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the equation AX = B "
                           f"({A._value.shape[-2]}x{A._value.shape[-1]} and {B._value.shape[-2]}x"
                           f"{B._value.shape[-1]})")
    dt = P.result_dtype(A, B)
    return fsl.solve_triangular(cast(A, dt), cast(B, dt), lower=not upper, unit_diagonal=unitriangular)


@_numerical("cholesky")
def cholesky(A: Tensor, *, upper: bool = False) -> Tensor:
    """The Cholesky factor L (A = L L^T) of each symmetric positive-definite matrix, or the
    upper factor U = L^T with upper=True. Only the lower triangle of A is read."""
    L = fnp.linalg.cholesky(_square("cholesky", A))
    return L.mT if upper else L


# --- decompositions -------------------------------------------------------------------------------------

@_numerical("qr")
def qr(A: Tensor, mode: str = "reduced") -> tuple:
    """(Q, R) with A = Q R: 'reduced' (Q of A's shape when tall), 'complete' (Q square) or
    'r' (R only; Q is an empty tensor)."""
    _float_input("qr", A, 2)
    if mode not in ("reduced", "complete", "r"):
        raise FgradRuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', "
                           "or 'complete'")
    if mode == "r":
        R = fnp.linalg.qr(A, "r")
        return qr_t(_make(np.zeros((0,), A._value.dtype)), R)
    Q, R = fnp.linalg.qr(A, mode)
    return qr_t(Q, R)


@_numerical("svd")
def svd(A: Tensor, full_matrices: bool = True, *, driver: str | None = None) -> tuple:
    """(U, S, Vh) with A = U diag(S) Vh, S descending; U and Vh square with full_matrices."""
    _float_input("svd", A, 2)
    U, S, Vh = fnp.linalg.svd(A, full_matrices=full_matrices)
    return svd_t(U, S, Vh)


@_numerical("svdvals")
def svdvals(A: Tensor, *, driver: str | None = None) -> Tensor:
    """The singular values of each matrix, descending."""
    return fnp.linalg.svdvals(_float_input("svdvals", A, 2))


def _uplo(name: str, UPLO: str) -> str:
    if UPLO not in ("L", "U"):
        raise FgradRuntimeError(f"{name}: Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO


def _hermitian(name: str, A, UPLO: str):
    """The symmetric matrix eigh reads from A's UPLO triangle, with PyTorch's gradient: that
    of the symmetric part of A (a symmetric gradient, as for a symmetric input), not one
    confined to the triangle. The value is sym(A) plus the (constant) difference to the
    triangle's matrix: exactly A for a symmetric A."""
    _square(name, A)
    if _uplo(f"linalg.{name}", UPLO) == "L":
        tri = A.tril() + A.tril(-1).mT
    else:
        tri = A.triu() + A.triu(1).mT
    sym = (A + A.mT) * 0.5
    return sym + (tri - sym).detach()


@_numerical("eigh")
def eigh(A: Tensor, UPLO: str = "L") -> tuple:
    """(eigenvalues ascending, eigenvectors as columns) of each symmetric matrix, reading
    its lower (or with UPLO='U', upper) triangle; the gradient is symmetric, as PyTorch's."""
    w, V = fnp.linalg.eigh(_hermitian("eigh", A, UPLO), symmetrize_input=False)
    return eigh_t(w, V)


@_numerical("eigvalsh")
def eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor:
    """The eigenvalues, ascending, of each symmetric matrix (as eigh reads it)."""
    return fnp.linalg.eigvalsh(_hermitian("eigvalsh", A, UPLO), symmetrize_input=False)


# --- pseudo-inverse, least squares, rank --------------------------------------------------------------

def _thresholds(name: str, A, atol, rtol):
    """PyTorch's atol/rtol defaults: rtol = eps * max(m, n) when neither is given (or only a
    zero atol), else 0 when only atol is."""
    if isinstance(atol, Tensor) or isinstance(rtol, Tensor):
        raise FgradTypeError(f"linalg.{name}: fgrad takes atol and rtol as numbers (they choose which singular "
                        "values count as zero, a static choice)")
    m, n = A._value.shape[-2:]
    eps = np.finfo(A._value.dtype).eps
    if rtol is None:
        rtol = eps * max(m, n) if not atol else 0.0
    return float(atol or 0.0), float(rtol)


def matrix_rank(A: Tensor, *, atol: float | None = None, rtol: float | None = None, hermitian: bool = False,
                tol: float | None = None) -> Tensor:
    """The number of singular values above max(atol, rtol * the largest), per matrix (int64)."""
    _float_input("matrix_rank", A, 2)
    atol, rtol = _thresholds("matrix_rank", A, tol if atol is None else atol, rtol)
    s = fnp.linalg.svdvals(A.detach())
    smax = fnp.max(s, axis=-1, keepdims=True) if s._value.shape[-1] else fnp.zeros_like(s)
    thr = fnp.maximum(fnp.multiply(smax, rtol), atol)
    return fnp.sum(fnp.greater(s, thr), axis=-1, policy=P)


@_numerical("pinv")
def pinv(A: Tensor, *, atol: float | None = None, rtol: float | None = None, hermitian: bool = False,
         rcond: float | None = None) -> Tensor:
    """The Moore-Penrose pseudo-inverse; singular values at or below max(atol, rtol * the
    largest) count as zero (the derivative is that of a matrix of constant rank)."""
    _float_input("pinv", A, 2)
    atol, rtol = _thresholds("pinv", A, atol, rcond if rtol is None else rtol)
    if not atol:
        return fnp.linalg.pinv(A, rtol)
    # an absolute cutoff is the relative one atol / s_max of each matrix
    s = np.asarray(fnp.linalg.svdvals(A.detach())._value)
    lead = A._value.shape[:-2]
    flat = A.reshape(-1, *A._value.shape[-2:])
    smax = s.reshape(-1, s.shape[-1]).max(axis=-1, initial=0.0)
    outs = [fnp.linalg.pinv(flat[i], max(rtol, atol / smax[i]) if smax[i] > 0 else 1.0) for i in range(len(smax))]
    return fnp.stack(outs).reshape(*lead, *outs[0]._value.shape) if outs else fnp.linalg.pinv(A, rtol)


@_numerical("lstsq")
def lstsq(A: Tensor, B: Tensor, rcond: float | None = None, *, driver: str | None = None) -> tuple:
    """(solution, residuals, rank, singular_values) of min ||A X - B|| per matrix, as
    PyTorch's CPU drivers report them: 'gelsy' (the default) gives the rank, 'gelsd' and
    'gelss' also the singular values and (for tall full-rank A) the squared residuals,
    'gels' the residuals only; what a driver does not compute is an empty tensor. The
    solution is pinv(A) @ B (B a matrix or, with one dimension less than A, a vector)."""
    _float_input("lstsq", A, 2)
    _float_input("lstsq", B, 1)
    driver = driver or "gelsy"
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise FgradRuntimeError(f"torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss), "
                           f"got {driver}")
    dt = P.result_dtype(A, B)
    A, B = cast(A, dt), cast(B, dt)
    m, n = A._value.shape[-2:]
    vector = B._value.ndim == A._value.ndim - 1
    Bm = B.unsqueeze(-1) if vector else B
    if Bm._value.shape[-2] != m:
        raise FgradRuntimeError(f"torch.linalg.lstsq: input.size(-2) should match other.size(-2), got {m} and "
                           f"{Bm._value.shape[-2]}")
    eps = np.finfo(dt).eps
    rc = eps * max(m, n) if rcond is None or rcond < 0 else float(rcond)
    X = _matmul(fnp.linalg.pinv(A, rc), Bm)
    s = fnp.linalg.svdvals(A.detach())
    rank = matrix_rank(A.detach(), rtol=rc)
    empty = _make(np.zeros((0,), dt))
    full = bool(np.all(np.asarray(rank._value) == min(m, n)))
    residuals = empty
    if driver != "gelsy" and m > n and full:
        r = _matmul(A, X) - Bm
        residuals = (r * r).sum(-2)
    sol = X.squeeze(-1) if vector else X
    return lstsq_t(sol, residuals.squeeze(-1) if vector and residuals._value.size else residuals,
                   rank if driver != "gels" else _make(np.zeros((0,), np.int64)),
                   s if driver in ("gelsd", "gelss") else empty)


# --- products, powers, condition --------------------------------------------------------------------

@_numerical("matrix_power")
def matrix_power(A: Tensor, n: int) -> Tensor:
    """A raised to the integer power n (n < 0: of its inverse; 0: the identity)."""
    if not isinstance(A, Tensor):
        raise FgradTypeError(f"linalg.matrix_power(): argument 'A' must be Tensor, not {type(A).__name__}")
    if A._value.ndim < 2 or A._value.shape[-1] != A._value.shape[-2]:
        raise FgradRuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but they are "
                           f"{tuple(A._value.shape[-2:])} matrices")
    if n < 0:
        _float_input("matrix_power", A)
    out = fnp.linalg.matrix_power(A, n)
    return out if isinstance(out, Tensor) else _make(np.array(out))  # n = 0: the identity, a constant


def multi_dot(tensors: Any) -> Tensor:
    """The product of a chain of matrices (the first and last may be vectors), multiplied in
    the cheapest order."""
    tensors = list(tensors)
    if len(tensors) < 2:
        raise FgradRuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    for k, t in enumerate(tensors):
        nd = t._value.ndim
        if nd not in (1, 2) or (nd == 1 and 0 < k < len(tensors) - 1):
            raise FgradRuntimeError(f"multi_dot(): tensor {k} must be 2D{' or 1D' if k in (0, len(tensors) - 1) else ''} "
                               f"but got {nd}D")
    dt = P.result_dtype(*tensors)
    return fnp.linalg.multi_dot([cast(t, dt) for t in tensors])


@_numerical("cond")
def cond(A: Tensor, p: Any = None) -> Tensor:
    """The condition number in the norm p (None/2: s_max / s_min, -2 its inverse, or
    'fro', 'nuc', inf, -inf, 1, -1 from norm(A) * norm(inv(A)))."""
    _float_input("cond", A, 2)
    return fnp.linalg.cond(A, p)


def cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    """The cross product of 3-vectors along `dim` (the other dims broadcast)."""
    return linalg_cross(input, other, dim=dim)


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """The dot product along `dim` (broadcasting the other dims)."""
    dt = P.result_dtype(x, y)
    return fnp.linalg.vecdot(cast(x, dt), cast(y, dt), axis=dim)


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """The diagonals of the matrices in dims (dim1, dim2), as the last dimension."""
    nd = A._value.ndim
    return fnp.diagonal(A, offset, _dim(dim1, nd), _dim(dim2, nd))


def matmul(input: Tensor, other: Tensor) -> Tensor:
    """input @ other (torch.matmul)."""
    return _matmul(input, other)


__all__ = [
    "LinAlgError",
    "cholesky",
    "cond",
    "cross",
    "det",
    "diagonal",
    "eigh",
    "eigvalsh",
    "inv",
    "lstsq",
    "matmul",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "multi_dot",
    "norm",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "solve_triangular",
    "svd",
    "svdvals",
    "vecdot",
    "vector_norm",
]
