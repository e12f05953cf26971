"""torch.linalg on fgrad.numpy.linalg (and fgrad.scipy.linalg's solve_triangular): PyTorch's
names, arguments (dim/keepdim, left=, upper=, atol/rtol, drivers) and results (named tuples
printed as fgrad.return_types.linalg_*), floating-point inputs only, and its errors: shape
errors are RuntimeErrors and numerical failures (a singular or non-positive-definite matrix)
raise `fgrad.torch.linalg.LinAlgError`, a RuntimeError as torch.linalg.LinAlgError is. Every
derivative is fgrad.numpy.linalg's (the decompositions' and matrix functions' rules).

The _ex variants report LAPACK's info codes (getrf's, potrf's, computed on the host with SciPy's
LAPACK, as PyTorch's kernels do); ldl_factor/ldl_solve run LAPACK's sytrf/sytrs (hetrf/hetrs)
themselves, pivots and all, and like PyTorch's have no derivative.

Each function is one torch op (fgrad.torch._tensor._boundary.call) over values, with PyTorch's
grad_fn (LinalgInvExBackward0, LinalgSvdBackward0, ...) over its Tensor operands, where
PyTorch's is one node; where PyTorch composes other ops (matrix_norm's orders other than
'fro', cond, matrix_power, multi_dot, vecdot, logdet) the function composes the same torch
ops in PyTorch's order, so the graph is PyTorch's (tests/torch/test_graph_linalg.py).
"""
from __future__ import annotations

import functools
import warnings
from typing import Any

import numpy as np
import scipy.linalg
import scipy.linalg.lapack

from .. import numpy as fnp
from ..core.errors import FgradRuntimeError, FgradTypeError, LinAlgError
from ..lax import stop_gradient
from ..extend.numpy import cast, dtype_of
from ..scipy import linalg as fsl
from ._tensor import _dtypes as D
from ._tensor._boundary import call
from ._tensor._layout import contiguous_format
from ._tensor._policy import TORCH as P
from ._tensor._ops import result_type as _result_type
from ._tensor._ops import _svd_without_vectors
from ._tensor._ops import _svdvals
from ._tensor._ops_breadth import _multi_dot
from ._tensor._ops_math import linalg_cross
from ._tensor._ops_shape import matmul as _matmul
from ._tensor.tensor import Tensor, _dim, _make


slogdet_t = _result_type("linalg_slogdet", ("sign", "logabsdet"))
qr_t = _result_type("linalg_qr", ("Q", "R"))
svd_t = _result_type("linalg_svd", ("U", "S", "Vh"))
eigh_t = _result_type("linalg_eigh", ("eigenvalues", "eigenvectors"))
lstsq_t = _result_type("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))
eig_t = _result_type("linalg_eig", ("eigenvalues", "eigenvectors"))
cholesky_ex_t = _result_type("linalg_cholesky_ex", ("L", "info"))
inv_ex_t = _result_type("linalg_inv_ex", ("inverse", "info"))
solve_ex_t = _result_type("linalg_solve_ex", ("result", "info"))
lu_t = _result_type("linalg_lu", ("P", "L", "U"))
lu_factor_t = _result_type("linalg_lu_factor", ("LU", "pivots"))
lu_factor_ex_t = _result_type("linalg_lu_factor_ex", ("LU", "pivots", "info"))
ldl_factor_t = _result_type("linalg_ldl_factor", ("LD", "pivots"))
ldl_factor_ex_t = _result_type("linalg_ldl_factor_ex", ("LD", "pivots", "info"))


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


def _as(v, dtype):
    """The value v in the fgrad `dtype` (None: as it is); runs inside an op's computation."""
    return v if dtype is None else cast(v, D.np_dtype(dtype))


def _first_empty(v):
    """An empty 1-D array of v's dtype computed from v, for a result PyTorch gives a grad_fn
    although it holds nothing (qr's Q for mode='r', lstsq's residuals where the driver computes
    none): the op's node then covers it, as PyTorch's does."""
    return fnp.reshape(v, (-1,))[:0]


# --- norms ------------------------------------------------------------------------------------------

def vector_norm(x: Tensor, ord: Any = 2, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """The vector norm of order `ord` (any real, inf, -inf; 0 counts non-zeros) over `dim`
    (all elements when None); d/dx is 0 at x = 0 for the 2-norm."""
    _float_input("vector_norm", x)
    if isinstance(ord, str):
        raise FgradTypeError(f"linalg_vector_norm(): argument 'ord' (position 2) must be Number, not str ({ord!r}); "
                        "matrix norms are linalg.matrix_norm's")
    axis = dim if dim is None or isinstance(dim, int) else tuple(dim)
    p = float(ord)

    def fn(v):
        v = _as(v, dtype)
        if v.ndim == 0:  # a number's norm of any order > 0 is its magnitude
            return fnp.abs(v)
        out = fnp.linalg.vector_norm(v, axis=axis, keepdims=keepdim, ord=p)
        if p == 0:  # a count of non-zeros: no derivative, but PyTorch's node all the same
            out = _zero_grad_link(out, fnp.sum(v, axis=axis, keepdims=keepdim))
        return out
    return call("LinalgVectorNormBackward0", fn, (x,))


def _svdvals_of(A: Tensor, dims: tuple, dtype: Any) -> Tensor:
    """The singular values of the matrices in dims (d0, d1) of A (PyTorch moves them last)."""
    def fn(v):  # (S is output 1 of PyTorch's LinalgSvdBackward0)
        return _svd_without_vectors(fnp.moveaxis(_as(v, dtype), dims, (-2, -1)))
    return call("LinalgSvdBackward0", fn, (A,))[1]


def matrix_norm(A: Tensor, ord: Any = "fro", dim: Any = (-2, -1), keepdim: bool = False, *,
                dtype: Any = None) -> Tensor:
    """The matrix norm ('fro', 'nuc', inf, -inf, 1, -1, 2, -2) of the matrices in `dim`,
    composed as PyTorch's: 'fro' a vector norm over both dims, 'nuc' the sum and +-2 the
    largest/smallest of the singular values, +-1 and +-inf the largest/smallest 1-norm of the
    columns or rows."""
    _float_input("matrix_norm", A, 2)
    if ord not in ("fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf):
        raise FgradRuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    dims = tuple(dim)
    if ord == "fro":
        return call("LinalgVectorNormBackward0", lambda v: fnp.linalg.norm(_as(v, dtype), "fro", dims, keepdim), (A,))
    nd = A._value.ndim
    d0, d1 = _dim(dims[0], nd), _dim(dims[1], nd)
    if ord in ("nuc", 2, -2):
        s = _svdvals_of(A, (d0, d1), dtype)
        out = s.sum(-1) if ord == "nuc" else s.amax(-1) if ord == 2 else s.amin(-1)
        if keepdim:
            out = out.unsqueeze(min(d0, d1)).unsqueeze(max(d0, d1))
        return out
    if ord in (np.inf, -np.inf):  # the inf-norm is the 1-norm of the transpose
        d0, d1 = d1, d0
    if not keepdim and d0 < d1:  # the first reduction removed a dim before d1
        d1 -= 1
    sums = vector_norm(A, 1.0, d0, keepdim, dtype=dtype)
    return sums.amax(d1, keepdim) if ord > 0 else sums.amin(d1, keepdim)


def norm(A: Tensor, ord: Any = None, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """A vector norm (dim an int, or a 1-D input) or a matrix norm (dim a pair, or a 2-D
    input); with ord and dim both None, the 2-norm of all elements."""
    _float_input("norm", A)
    if dim is None:
        if ord is None:
            return vector_norm(A, 2, None, keepdim, dtype=dtype)
        nd = A._value.ndim
        if nd not in (1, 2):
            raise FgradRuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                               f"Got {nd}D.")
        dim = (0,) if nd == 1 else (0, 1)
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dims) == 1:
        return vector_norm(A, 2 if ord is None else ord, dims[0], keepdim, dtype=dtype)
    if len(dims) == 2:
        return matrix_norm(A, "fro" if ord is None else ord, dims, keepdim, dtype=dtype)
    raise FgradRuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {list(dims)}")


# --- inverses, determinants, solves ---------------------------------------------------------------------

@_numerical("inv")
def inv(A: Tensor) -> Tensor:
    """The inverse of each square matrix in A."""
    return call("LinalgInvExBackward0", fnp.linalg.inv, (_square("inv", A),))


@_numerical("det")
def det(A: Tensor) -> Tensor:
    """The determinant of each square matrix in A."""
    return call("LinalgDetBackward0", fnp.linalg.det, (_square("det", A),))


def _zero_grad_link(value, like):
    """`value` (as it is) with a derivative-0 dependence on `like` (same shape and dtype):
    a result PyTorch gives its op's grad_fn although nothing flows through it (slogdet's
    sign, the 0-"norm") then gets the op's node too, instead of none."""
    if value.dtype != like.dtype or value.shape != like.shape:
        return value
    return fnp.where(np.ones(value.shape, bool), value, like)


def _slogdet_values(v):
    sign, logabsdet = fnp.linalg.slogdet(v)
    return _zero_grad_link(sign, logabsdet), logabsdet


@_numerical("slogdet")
def slogdet(A: Tensor) -> tuple:
    """(sign, logabsdet) of the determinants of the square matrices in A."""
    sign, logabsdet = call("LinalgSlogdetBackward0", _slogdet_values, (_square("slogdet", A),))
    return slogdet_t(sign, logabsdet)


def logdet(A: Tensor) -> Tensor:
    """log(det(A)): NaN where the determinant is negative, -inf where it is 0 (torch.logdet,
    a `where` over slogdet's results)."""
    sign, logabsdet = slogdet(A)

    def fn(s, lad):
        nan, ninf = fnp.asarray(float("nan"), lad.dtype), fnp.asarray(float("-inf"), lad.dtype)
        return fnp.where(fnp.less(s, 0), nan, fnp.where(fnp.equal(s, 0), ninf, lad))
    return call("WhereBackward0", fn, (sign.detach(), logabsdet))


@_numerical("solve")
def solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:
    """X with A @ X = B (or X @ A = B for left=False); B is a batch of vectors when it has
    A's shape without the last dimension (or is 1-D), else of matrices."""
    _square("solve", A)
    _float_input("solve", B, 1)
    sa, sb = tuple(A._value.shape), tuple(B._value.shape)
    if not left:  # X A = B  <=>  A^T X^T = B^T
        if len(sb) < 2:
            raise FgradRuntimeError("linalg.solve: Vector broadcasting of the left hand side is not supported for "
                                    "left=False. In this case linalg.solve is equivalent to B / A.squeeze(-1)")
        sa, sb = sa[:-2] + sa[-2:][::-1], sb[:-2] + sb[-2:][::-1]
    vector = len(sb) == 1 or (len(sb) == len(sa) - 1 and sb == sa[:-1])
    rows = sb[-1] if vector else sb[-2]
    if rows != sa[-1]:
        cols = 1 if vector else sb[-1]
        raise FgradRuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation AX = B ({sa[-2]}x"
                           f"{sa[-1]} and {rows}x{cols})")
    dt = P.result_dtype(A, B)

    def fn(a, b):
        a, b = cast(a, dt), cast(b, dt)
        if not left:
            a, b = fnp.swapaxes(a, -1, -2), fnp.swapaxes(b, -1, -2)
        if vector:
            b = fnp.expand_dims(b, -1)
        batch = np.broadcast_shapes(sa[:-2], tuple(b.shape[:-2]))
        a = fnp.broadcast_to(a, batch + sa[-2:], policy=P)
        b = fnp.broadcast_to(b, batch + tuple(b.shape[-2:]), policy=P)
        x = fnp.linalg.solve(a, b)
        x = fnp.squeeze(x, -1) if vector else x
        return fnp.swapaxes(x, -1, -2) if not left else x
    return call("LinalgSolveExBackward0", fn, (A, B))


def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True, unitriangular: bool = False) -> Tensor:
    """X with A @ X = B (X @ A = B for left=False) for triangular A (the upper or lower
    triangle of A is read; with unitriangular its diagonal is taken as ones)."""
    _square("solve_triangular", A)
    _float_input("solve_triangular", B, 2)
    sa, sb = tuple(A._value.shape), tuple(B._value.shape)
    if not left:  # X A = B  <=>  A^T X^T = B^T, with the other triangle of A^T
        sa, sb = sa[:-2] + sa[-2:][::-1], sb[:-2] + sb[-2:][::-1]
    if sb[-2] != sa[-1]:
        raise FgradRuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the equation AX = B "
                           f"({sa[-2]}x{sa[-1]} and {sb[-2]}x{sb[-1]})")
    dt = P.result_dtype(A, B)
    lower = upper if not left else not upper

    def fn(a, b):
        a, b = cast(a, dt), cast(b, dt)
        if not left:
            a, b = fnp.swapaxes(a, -1, -2), fnp.swapaxes(b, -1, -2)
        x = fsl.solve_triangular(a, b, lower=lower, unit_diagonal=unitriangular)
        return fnp.swapaxes(x, -1, -2) if not left else x
    return call("LinalgSolveTriangularBackward0", fn, (A, B))


@_numerical("cholesky")
def cholesky(A: Tensor, *, upper: bool = False) -> Tensor:
    """The Cholesky factor L (A = L L^T) of each symmetric positive-definite matrix, or the
    upper factor U = L^T with upper=True. Only the lower triangle of A is read."""
    def fn(a):
        L = fnp.linalg.cholesky(a)
        return fnp.swapaxes(L, -1, -2) if upper else L
    return call("LinalgCholeskyExBackward0", fn, (_square("cholesky", A),))


# --- decompositions -------------------------------------------------------------------------------------

@_numerical("qr")
def qr(A: Tensor, mode: str = "reduced") -> tuple:
    """(Q, R) with A = Q R: 'reduced' (Q of A's shape when tall), 'complete' (Q square) or
    'r' (R only; Q is an empty tensor)."""
    _float_input("qr", A, 2)
    if mode not in ("reduced", "complete", "r"):
        raise FgradRuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', "
                           "or 'complete'")

    def fn(a):
        if mode == "r":
            return _first_empty(a), fnp.linalg.qr(a, "r")
        Q, R = fnp.linalg.qr(a, mode)
        return Q, R
    return qr_t(*call("LinalgQrBackward0", fn, (A,)))


@_numerical("svd")
def svd(A: Tensor, full_matrices: bool = True, *, driver: str | None = None) -> tuple:
    """(U, S, Vh) with A = U diag(S) Vh, S descending; U and Vh square with full_matrices."""
    _float_input("svd", A, 2)

    def fn(a):
        U, S, Vh = fnp.linalg.svd(a, full_matrices=full_matrices)
        return U, S, Vh
    return svd_t(*call("LinalgSvdBackward0", fn, (A,)))


@_numerical("svdvals")
def svdvals(A: Tensor, *, driver: str | None = None) -> Tensor:
    """The singular values of each matrix, descending."""
    return _svdvals(_float_input("svdvals", A, 2))


def _uplo(name: str, UPLO: str) -> str:
    if UPLO not in ("L", "U"):
        raise FgradRuntimeError(f"{name}: Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO


def _hermitian(a, lower: bool):
    """The symmetric matrix eigh reads from a's lower (or upper) triangle, with PyTorch's
    gradient: that of the symmetric part of a (a symmetric gradient, as for a symmetric
    input), not one confined to the triangle. The value is sym(a) plus the (constant)
    difference to the triangle's matrix: exactly a for a symmetric a."""
    at = fnp.swapaxes(a, -1, -2)
    if lower:
        tri = fnp.tril(a) + fnp.swapaxes(fnp.tril(a, -1), -1, -2)
    else:
        tri = fnp.triu(a) + fnp.swapaxes(fnp.triu(a, 1), -1, -2)
    sym = (a + at) * 0.5
    return sym + stop_gradient(tri - sym)


@_numerical("eigh")
def eigh(A: Tensor, UPLO: str = "L") -> tuple:
    """(eigenvalues ascending, eigenvectors as columns) of each symmetric matrix, reading
    its lower (or with UPLO='U', upper) triangle; the gradient is symmetric, as PyTorch's."""
    _square("eigh", A)
    lower = _uplo("linalg.eigh", UPLO) == "L"

    def fn(a):
        w, V = fnp.linalg.eigh(_hermitian(a, lower), symmetrize_input=False)
        return w, V
    return eigh_t(*call("LinalgEighBackward0", fn, (A,)))


@_numerical("eigvalsh")
def eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor:
    """The eigenvalues, ascending, of each symmetric matrix (as eigh reads it)."""
    _square("eigvalsh", A)
    lower = _uplo("linalg.eigvalsh", UPLO) == "L"
    return call("LinalgEighBackward0",
                lambda a: fnp.linalg.eigvalsh(_hermitian(a, lower), symmetrize_input=False), (A,))


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


def _rank_values(v, atol: float, rtol: float):
    """The number of singular values of each matrix of v above max(atol, rtol * the largest)."""
    s = fnp.linalg.svdvals(stop_gradient(v))
    smax = fnp.max(s, axis=-1, keepdims=True) if s.shape[-1] else fnp.zeros_like(s)
    thr = fnp.maximum(fnp.multiply(smax, rtol), atol)
    return fnp.sum(fnp.greater(s, thr), axis=-1, policy=P)


def matrix_rank(A: Tensor, *, atol: float | None = None, rtol: float | None = None, hermitian: bool = False,
                tol: float | None = None) -> Tensor:
    """The number of singular values above max(atol, rtol * the largest), per matrix (int64)."""
    _float_input("matrix_rank", A, 2)
    atol, rtol = _thresholds("matrix_rank", A, tol if atol is None else atol, rtol)
    # an integer result: the op records no node (the name is never seen)
    return call("LinalgMatrixRankBackward0", lambda v: _rank_values(v, atol, rtol), (A,))


@_numerical("pinv")
def pinv(A: Tensor, *, atol: float | None = None, rtol: float | None = None, hermitian: bool = False,
         rcond: float | None = None) -> Tensor:
    """The Moore-Penrose pseudo-inverse; singular values at or below max(atol, rtol * the
    largest) count as zero (the derivative is that of a matrix of constant rank)."""
    _float_input("pinv", A, 2)
    atol, rtol = _thresholds("pinv", A, atol, rcond if rtol is None else rtol)
    if not atol:
        return call("LinalgPinvBackward0", lambda a: fnp.linalg.pinv(a, rtol), (A,))
    # an absolute cutoff is the relative one atol / s_max of each matrix (from the values: a
    # static choice of which singular values count as zero)
    s = np.asarray(fnp.linalg.svdvals(A._value))
    lead = tuple(A._value.shape[:-2])
    smax = s.reshape(-1, s.shape[-1]).max(axis=-1, initial=0.0)
    cuts = [max(rtol, atol / m) if m > 0 else 1.0 for m in smax]

    def fn(a):
        if not cuts:
            return fnp.linalg.pinv(a, rtol)
        flat = fnp.reshape(a, (-1, *a.shape[-2:]))
        outs = [fnp.linalg.pinv(flat[i], c) for i, c in enumerate(cuts)]
        return fnp.reshape(fnp.stack(outs), (*lead, *outs[0].shape))
    return call("LinalgPinvBackward0", fn, (A,))


@_numerical("lstsq")
def lstsq(A: Tensor, B: Tensor, rcond: float | None = None, *, driver: str | None = None) -> tuple:
    """(solution, residuals, rank, singular_values) of min ||A X - B|| per matrix, as
    PyTorch's CPU drivers report them: 'gelsy' (the default) gives the rank, 'gelsd' and
    'gelss' also the singular values and (for tall full-rank A) the squared residuals,
    'gels' the residuals only; what a driver does not compute is an empty tensor. The
    solution is pinv(A) @ B (B a matrix or, with one dimension less than A, a vector).
    The solution and residuals are one op's results (LinalgLstsqBackward0), as PyTorch's;
    the rank and singular values carry no gradient."""
    _float_input("lstsq", A, 2)
    _float_input("lstsq", B, 1)
    driver = driver or "gelsy"
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise FgradRuntimeError(f"torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss), "
                           f"got {driver}")
    dt = P.result_dtype(A, B)
    m, n = A._value.shape[-2:]
    vector = B._value.ndim == A._value.ndim - 1
    rows = B._value.shape[-1] if vector else B._value.shape[-2]
    if rows != m:
        raise FgradRuntimeError(f"torch.linalg.lstsq: input.size(-2) should match other.size(-2), got {m} and "
                           f"{rows}")
    eps = np.finfo(dt).eps
    rc = eps * max(m, n) if rcond is None or rcond < 0 else float(rcond)
    Ad = A.detach()
    s = call("LinalgSvdBackward0", lambda a: fnp.linalg.svdvals(cast(a, dt)), (Ad,))
    rank = call("LinalgMatrixRankBackward0", lambda a: _rank_values(cast(a, dt), 0.0, rc), (Ad,))
    full = bool(np.all(np.asarray(rank._value) == min(m, n)))
    with_residuals = driver != "gelsy" and m > n and full

    def fn(a, b):
        a, b = cast(a, dt), cast(b, dt)
        bm = fnp.expand_dims(b, -1) if vector else b
        X = fnp.matmul(fnp.linalg.pinv(a, rc), bm)
        if with_residuals:
            r = fnp.matmul(a, X) - bm
            residuals = fnp.sum(r * r, axis=-2)
            residuals = fnp.squeeze(residuals, -1) if vector else residuals
        else:
            residuals = _first_empty(X)
        return (fnp.squeeze(X, -1) if vector else X), residuals
    sol, residuals = call("LinalgLstsqBackward0", fn, (A, B))
    empty = _make(np.zeros((0,), dt))
    return lstsq_t(sol, residuals, rank if driver != "gels" else _make(np.zeros((0,), np.int64)),
                   s if driver in ("gelsd", "gelss") else empty)


# --- the Cholesky factor's inverse and solve (torch.cholesky_inverse/cholesky_solve check their
# arguments; the distributions use these directly, as PyTorch's use the torch functions)

def _conj_mT(v):
    v = fnp.swapaxes(v, -1, -2)
    return fnp.conj(v) if dtype_of(v).kind == "c" else v


def _cholesky_inverse(L: Tensor, upper: bool = False) -> Tensor:
    """(L L^H)^-1 from a square Cholesky factor L (U = L^H with `upper`), CholeskyInverseBackward0.

    Args:
        L: (*, n, n) the factor, checked by the caller.
        upper: the factor is upper-triangular.

    Returns:
        A Tensor (*, n, n).
    """
    # (PyTorch differentiates the full matrix's (L L^H)^-1, not only its triangle)
    def values(v):
        inv_l = fnp.linalg.inv(_conj_mT(v) if upper else v)
        return fnp.matmul(_conj_mT(inv_l), inv_l)
    return call("CholeskyInverseBackward0", values, (L,))


def _cholesky_solve(B: Tensor, L: Tensor, upper: bool = False) -> Tensor:
    """X with (L L^H) X = B, from a square Cholesky factor L (U = L^H with `upper`), batch
    dimensions broadcast, CholeskySolveBackward0.

    Args:
        B: (*, n, k) right-hand sides; L: (*, n, n) the factor, both checked by the caller.
        upper: the factor is upper-triangular.

    Returns:
        A Tensor (*, n, k).
    """
    # (PyTorch differentiates the full matrix's (L L^H)^-1 B, not only its triangle)
    def values(bv, lv):
        lo = _conj_mT(lv) if upper else lv
        return fnp.linalg.solve(_conj_mT(lo), fnp.linalg.solve(lo, bv))
    return call("CholeskySolveBackward0", values, (B, L))


# --- products, powers, condition --------------------------------------------------------------------

@_numerical("matrix_power")
def matrix_power(A: Tensor, n: int) -> Tensor:
    """A raised to the integer power n (n < 0: of its inverse; 0: the identity), by PyTorch's
    sequence of products (a clone for n = 1, a @ a, (a @ a) @ a, then binary powering)."""
    if not isinstance(A, Tensor):
        raise FgradTypeError(f"linalg.matrix_power(): argument 'A' must be Tensor, not {type(A).__name__}")
    if A._value.ndim < 2 or A._value.shape[-1] != A._value.shape[-2]:
        raise FgradRuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but they are "
                           f"{tuple(A._value.shape[-2:])} matrices")
    if n == 0:  # PyTorch's identity: copied into a contiguous clone of A (CopyBackwards over CloneBackward0)
        eye = _make(np.eye(A._value.shape[-1], dtype=A._value.dtype))
        return A.clone(memory_format=contiguous_format).copy_(eye)
    if n < 0:
        _float_input("matrix_power", A)
    # (inv's op without inv's own error wrapper: a singular A is matrix_power's LinAlgError)
    a = call("LinalgInvExBackward0", fnp.linalg.inv, (A,)) if n < 0 else A
    n = abs(n)
    if n == 1:
        return a.clone()
    if n == 2:
        return _matmul(a, a)
    if n == 3:
        return _matmul(_matmul(a, a), a)
    z = result = None
    while n > 0:  # binary powering, the bits of n lowest first
        bit, n = n % 2, n // 2
        z = a if z is None else _matmul(z, z)
        if bit:
            result = z if result is None else _matmul(result, z)
    return result


def multi_dot(tensors: Any) -> Tensor:
    """The product of a chain of matrices (the first and last may be vectors), multiplied in
    the cheapest order, as PyTorch composes it: 1-D ends unsqueezed, matrix products, and a
    view to the result's shape."""
    tensors = list(tensors)
    if len(tensors) < 2:
        raise FgradRuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    for k, t in enumerate(tensors):
        nd = t._value.ndim
        if nd not in (1, 2) or (nd == 1 and 0 < k < len(tensors) - 1):
            raise FgradRuntimeError(f"multi_dot(): tensor {k} must be 2D{' or 1D' if k in (0, len(tensors) - 1) else ''} "
                               f"but got {nd}D")
    return _multi_dot(tensors)


@_numerical("cond")
def cond(A: Tensor, p: Any = None) -> Tensor:
    """The condition number in the norm p (None/2: s_max / s_min, -2 its inverse, or
    'fro', 'nuc', inf, -inf, 1, -1 from norm(A) * norm(inv(A))), composed as PyTorch's."""
    _float_input("cond", A, 2)
    if p is None or p == 2 or p == -2:
        s = svdvals(A)
        first, last = s.narrow(-1, 0, 1), s.narrow(-1, s._value.shape[-1] - 1, 1)
        return (last / first if p == -2 else first / last).squeeze(-1)
    # (inv's op without inv's own error wrapper: a singular A is cond's LinAlgError)
    prod = matrix_norm(A, p) * matrix_norm(call("LinalgInvExBackward0", fnp.linalg.inv, (A,)), p)
    inf = float("inf")
    # 0 * inf -> inf, as PyTorch's (a NumPy-compatible fix)
    return call("NanToNumBackward0", lambda v: fnp.nan_to_num(v, nan=inf, posinf=inf, neginf=-inf), (prod,))


def cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    """The cross product of 3-vectors along `dim` (the other dims broadcast)."""
    return linalg_cross(input, other, dim=dim)


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """The dot product along `dim` (broadcasting the other dims): sum(conj(x) * y), as
    PyTorch composes it."""
    if x._value.dtype.kind == "c":
        x = x.conj()
    return (x * y).sum(dim)


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """The diagonals of the matrices in dims (dim1, dim2), as the last dimension."""
    return A.diagonal(offset, dim1, dim2)


def matmul(input: Tensor, other: Tensor) -> Tensor:
    """input @ other (torch.matmul)."""
    return _matmul(input, other)


# --- the _ex variants: LAPACK's info codes --------------------------------------------------------------

def _lapack(name: str, m: np.ndarray):
    return scipy.linalg.lapack.get_lapack_funcs((name,), (m,))[0]


def _host(t: Tensor) -> np.ndarray:
    """t's value as a NumPy array (copied from a GPU), for the host's LAPACK kernels."""
    return t.detach().cpu().numpy()


def _like(values: np.ndarray, t: Tensor) -> Tensor:
    """A tensor of the host result `values` on t's device (no grad: LAPACK's codes and factors)."""
    out = _make(values)
    return out if t.device.type == "cpu" else out.to(t.device)


def _matrices(A: Tensor) -> tuple:
    """(the matrices of A's value as a stack, A's batch shape), on the host."""
    v = _host(A)
    return v.reshape(-1, *v.shape[-2:]), v.shape[:-2]


def _infos(kernel: str, A: Tensor) -> np.ndarray:
    """LAPACK's info per matrix of A, int32 of A's batch shape: 0 where the factorization
    succeeded, else k > 0: the k-th pivot of U is zero (getrf) or the leading minor of order k
    is not positive-definite (potrf)."""
    flat, lead = _matrices(A)
    out = np.zeros(len(flat), np.int32)
    for i, m in enumerate(flat):
        if kernel == "potrf":
            _, info = _lapack("potrf", m)(m, lower=1, clean=1)
        else:
            _, _, info = _lapack("getrf", m)(m)
        out[i] = max(int(info), 0)
    return out.reshape(lead)


def _raise_info(name: str, info: np.ndarray, what: str) -> None:
    """PyTorch's LinAlgError for the first failed matrix (`what` formatted with its info k)."""
    flat = info.reshape(-1)
    bad = int(np.flatnonzero(flat)[0])
    where = f"(Batch element {bad}): " if info.ndim else ""
    raise LinAlgError(f"linalg.{name}: {where}{what.format(k=int(flat[bad]))}")


_SINGULAR = ("The diagonal element {k} is zero, the inversion could not be completed because the input matrix "
             "is singular.")
_NOT_PD = ("The factorization could not be completed because the input is not positive-definite (the leading "
           "minor of order {k} is not positive-definite).")


def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False) -> tuple:
    """(L, info): cholesky's factor and LAPACK's info per matrix (0, or the order k of the first
    leading minor that is not positive-definite), without raising unless check_errors.

    Args:
        A: a (batch of) symmetric (Hermitian) positive-definite matrices; the lower triangle is read.
        upper: return the upper factor U = L^H instead.
        check_errors: raise LinAlgError where a matrix is not positive-definite.

    Returns:
        (L, info): where info > 0, L holds LAPACK's partial factor (without a derivative).
    """
    _square("cholesky_ex", A)
    info = _infos("potrf", A)
    if check_errors and info.any():
        _raise_info("cholesky_ex", info, _NOT_PD)
    if not info.any():
        return cholesky_ex_t(cholesky(A, upper=upper), _like(info, A))
    flat, lead = _matrices(A)
    factors = np.stack([np.tril(_lapack("potrf", m)(m, lower=1, clean=1)[0]) for m in flat])
    if upper:
        factors = np.conj(np.swapaxes(factors, -1, -2))
    return cholesky_ex_t(_like(factors.reshape(*lead, *factors.shape[-2:]), A), _like(info, A))


def inv_ex(A: Tensor, *, check_errors: bool = False) -> tuple:
    """(inverse, info): inv's result and LAPACK's info per matrix (0, or k where U's k-th
    diagonal element is zero: the matrix is singular), without raising unless check_errors.

    Args:
        A: a (batch of) square matrices.
        check_errors: raise LinAlgError where a matrix is singular.

    Returns:
        (inverse, info): where a matrix is singular its inverse is NaN (the others' inverses
        keep their derivatives).
    """
    _square("inv_ex", A)
    info = _infos("getrf", A)
    if check_errors and info.any():
        _raise_info("inv_ex", info, _SINGULAR)
    if not info.any():
        return inv_ex_t(call("LinalgInvExBackward0", fnp.linalg.inv, (A,)), _like(info, A))
    mask = info[..., None, None] != 0
    out = call("LinalgInvExBackward0", fnp.linalg.inv, (_identity_where(A, mask),))
    return inv_ex_t(_nan_where(out, mask), _like(info, A))


def _identity_where(A: Tensor, mask: np.ndarray) -> Tensor:
    """A with the identity in place of the matrices `mask` (batch shape + (1, 1)) selects, so
    that inverses and solves of the others run (and keep their derivatives)."""
    eye = np.eye(A._value.shape[-1])
    return call("WhereBackward0", lambda a: fnp.where(mask, cast(eye, a.dtype), a), (A,))


def _nan_where(out: Tensor, mask: np.ndarray) -> Tensor:
    """out with NaN where `mask` (broadcast against it) holds: a singular matrix's result."""
    return call("WhereBackward0", lambda v: fnp.where(mask, cast(np.nan, v.dtype), v), (out,))


def solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False) -> tuple:
    """(result, info): solve's X and LAPACK's info per matrix of A (0, or k where U's k-th
    diagonal element is zero), without raising unless check_errors.

    Args:
        A: a (batch of) square matrices.
        B: the right-hand sides (as for solve).
        left: solve A X = B (True) or X A = B.
        check_errors: raise LinAlgError where a matrix is singular.

    Returns:
        (result, info): where a matrix is singular its solution is NaN (the others keep their
        derivatives).
    """
    _square("solve_ex", A)
    info = _infos("getrf", A)
    if check_errors and info.any():
        _raise_info("solve_ex", info, "The solver failed because the input matrix is singular.")
    if not info.any():
        return solve_ex_t(solve(A, B, left=left), _like(info, A))
    sa, sb = tuple(A._value.shape), tuple(B._value.shape)
    vector = left and (len(sb) == 1 or (len(sb) == len(sa) - 1 and sb == sa[:-1]))
    out = solve(_identity_where(A, info[..., None, None] != 0), B, left=left)
    return solve_ex_t(_nan_where(out, (info != 0).reshape(info.shape + (1,) * (1 if vector else 2))),
                      _like(info, A))


# --- eigenvalues of general matrices, the matrix exponential ---------------------------------------------

@_numerical("eig")
def eig(A: Tensor) -> tuple:
    """(eigenvalues, eigenvectors) of each square matrix, complex (complex64 for float32), the
    eigenvectors as unit-norm columns. The gradient is defined for functions that do not depend
    on the eigenvectors' phases (as PyTorch's).

    Args:
        A: a (batch of) square matrices.

    Returns:
        The named tuple (eigenvalues, eigenvectors).
    """
    _square("eig", A)

    def fn(a):
        w, v = fnp.linalg.eig(a)
        return w, v
    return eig_t(*call("LinalgEigBackward0", fn, (A,)))


@_numerical("eigvals")
def eigvals(A: Tensor) -> Tensor:
    """The eigenvalues of each square matrix, complex (complex64 for float32).

    Args:
        A: a (batch of) square matrices.

    Returns:
        A tensor of shape (..., n).
    """
    _square("eigvals", A)
    return call("LinalgEigBackward0", fnp.linalg.eigvals, (A,))


def matrix_exp(A: Tensor) -> Tensor:
    """The matrix exponential of each square matrix (fgrad.scipy.linalg.expm: Pade approximation
    with scaling and squaring, its derivative the Frechet derivative, to any order).

    Args:
        A: a (batch of) real or complex square matrices.

    Returns:
        exp(A), of A's shape and dtype.
    """
    _square("matrix_exp", A)
    return call("LinalgMatrixExpBackward0", fsl.expm, (A,))


# --- LU ------------------------------------------------------------------------------------------------

def _lu_input(name: str, A, pivot: bool) -> Tensor:
    _float_input(name, A, 2)
    if not pivot:
        raise FgradRuntimeError(f"linalg.{name}: LU without pivoting is not implemented on the CPU")
    return A


def _lu_packed(a):
    lu, piv = fsl.lu_factor(a)
    return lu, cast(piv + 1, np.int32)  # LAPACK's 1-based row swaps, as PyTorch reports them


def lu_factor_ex(A: Tensor, *, pivot: bool = True, check_errors: bool = False) -> tuple:
    """(LU, pivots, info): the LU factorization with partial pivoting in LAPACK's packed form
    (L's strictly lower part, its unit diagonal implied, and U in one matrix; pivots the 1-based
    row swaps, int32) and LAPACK's info (k > 0: U's k-th diagonal element is zero).

    Args:
        A: a (batch of) m x n matrices.
        pivot: must be True (PyTorch's CPU has no LU without pivoting).
        check_errors: raise LinAlgError where info > 0.

    Returns:
        The named tuple (LU, pivots, info); LU is differentiable (the pivots held fixed).
    """
    _lu_input("lu_factor_ex", A, pivot)
    info = _infos("getrf", A)
    if check_errors and info.any():
        _raise_info("lu_factor_ex", info, "U[{k},{k}] is zero and using it on lu_solve would result in a "
                    "division by zero.")
    with warnings.catch_warnings():  # a singular matrix is what info reports
        warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)
        LU, piv = call("LinalgLuFactorExBackward0", _lu_packed, (A,))
    return lu_factor_ex_t(LU, piv, _like(info, A))


def lu_factor(A: Tensor, *, pivot: bool = True) -> tuple:
    """(LU, pivots) as lu_factor_ex, raising LinAlgError for a singular square matrix (whose
    LU lu_solve could not use).

    Args:
        A: a (batch of) m x n matrices.
        pivot: must be True.

    Returns:
        The named tuple (LU, pivots).
    """
    _lu_input("lu_factor", A, pivot)
    info = _infos("getrf", A)
    if info.any():
        flat = info.reshape(-1)
        k = int(flat[np.flatnonzero(flat)[0]])
        where = f"(Batch element {int(np.flatnonzero(flat)[0])}): " if info.ndim else ""
        raise LinAlgError(f"torch.linalg.lu_factor: {where}U[{k},{k}] is zero and using it on lu_solve would "
                          "result in a division by zero. If you still want to perform the factorization, consider "
                          "calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")
    LU, piv = call("LinalgLuFactorExBackward0", _lu_packed, (A,))
    return lu_factor_t(LU, piv)


def lu(A: Tensor, *, pivot: bool = True) -> tuple:
    """(P, L, U) with A = P L U: P a permutation matrix (no derivative), L (m, k) unit lower
    triangular and U (k, n) upper triangular, k = min(m, n).

    Args:
        A: a (batch of) m x n matrices.
        pivot: must be True.

    Returns:
        The named tuple (P, L, U).
    """
    _lu_input("lu", A, pivot)
    P_ = call("LinalgLuBackward0", lambda a: fsl.lu(a)[0], (A.detach(),))

    def fn(a):
        _, L_, U_ = fsl.lu(a)
        return L_, U_
    L_, U_ = call("LinalgLuBackward0", fn, (A,))
    return lu_t(P_, L_, U_)


def _swap_last(v, adjoint: bool):
    v = fnp.swapaxes(v, -1, -2)
    return fnp.conj(v) if adjoint and v.dtype.kind == "c" else v


def lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True, adjoint: bool = False) -> Tensor:
    """X with A X = B (A^H X = B with adjoint; X A = B or X A^H = B for left=False) from
    lu_factor's (LU, pivots) of A; the batch dimensions broadcast.

    Args:
        LU: lu_factor's packed factors of a (batch of) square matrices.
        pivots: lu_factor's 1-based row swaps (int32).
        B: the right-hand sides, a (batch of) matrices.
        left: solve A X = B (True) or X A = B.
        adjoint: use A's conjugate transpose.

    Returns:
        X, of the broadcast batch shape; differentiable in LU and B.
    """
    _square("lu_solve", LU)
    _float_input("lu_solve", B, 2)
    if not isinstance(pivots, Tensor) or pivots._value.dtype != np.int32:
        raise FgradRuntimeError("linalg.lu_solve: Expected pivots to be an int32 tensor (lu_factor's), got "
                                f"{getattr(pivots, 'dtype', type(pivots).__name__)}")
    n = LU._value.shape[-1]
    rows = B._value.shape[-2] if left else B._value.shape[-1]
    if rows != n:
        raise FgradRuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation "
                                f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {tuple(B._value.shape[-2:])})")
    if tuple(pivots._value.shape) != tuple(LU._value.shape[:-1]):
        raise FgradRuntimeError(f"linalg.lu_solve: pivots of shape {tuple(pivots._value.shape)} do not match LU of "
                                f"shape {tuple(LU._value.shape)} (expected {tuple(LU._value.shape[:-1])})")
    dt = P.result_dtype(LU, B)
    # X A = B <=> A^T X^T = B^T; X A^H = B <=> A X^H = B^H
    if left:
        trans = (2 if dt.kind == "c" else 1) if adjoint else 0
    else:
        trans = 0 if adjoint else 1

    def fn(lu_, piv, b):
        lu_, b = cast(lu_, dt), cast(b, dt)
        if not left:
            b = _swap_last(b, adjoint)
        batch = np.broadcast_shapes(tuple(lu_.shape[:-2]), tuple(b.shape[:-2]))
        lu_ = fnp.broadcast_to(lu_, batch + tuple(lu_.shape[-2:]), policy=P)
        piv = fnp.broadcast_to(piv - 1, batch + tuple(piv.shape[-1:]), policy=P)
        b = fnp.broadcast_to(b, batch + tuple(b.shape[-2:]), policy=P)
        x = fsl.lu_solve((lu_, piv), b, trans=trans)
        return _swap_last(x, adjoint) if not left else x
    return call("LinalgLuSolveBackward0", fn, (LU, pivots, B))


# --- Householder products -----------------------------------------------------------------------------

def _householder_values(a, tau):
    """The first n columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^H with v_i the i-th column of
    a below the diagonal and 1 on it."""
    m, n = a.shape[-2:]
    k = tau.shape[-1]
    rows = np.arange(m)
    q = fnp.broadcast_to(fnp.eye(m, dtype=a.dtype), tuple(a.shape[:-2]) + (m, m), policy=P)
    for i in range(k):
        v = fnp.where(rows > i, a[..., :, i], np.asarray(rows == i, a.dtype))
        qv = fnp.matmul(q, v[..., :, None])
        q = q - tau[..., i, None, None] * qv * fnp.conj(v)[..., None, :]
    return q[..., :, :n]


def householder_product(A: Tensor, tau: Tensor) -> Tensor:
    """The first n columns of the product of Householder reflectors H_1 ... H_k (LAPACK's orgqr):
    H_i = I - tau_i v_i v_i^H, v_i the i-th column of A below the diagonal with a 1 on it (as
    geqrf stores a QR factorization).

    Args:
        A: a (batch of) m x n matrices, m >= n, holding the reflectors' vectors.
        tau: the reflectors' scales, shape (..., k) with k <= n.

    Returns:
        The m x n matrix (batch) Q; differentiable in A and tau.
    """
    _float_input("householder_product", A, 2)
    _float_input("householder_product", tau, 1)
    m, n = A._value.shape[-2:]
    k = tau._value.shape[-1]
    if m < n:
        raise FgradRuntimeError("torch.linalg.householder_product: input.shape[-2] must be greater than or equal to "
                                f"input.shape[-1] (got {m} x {n})")
    if n < k:
        raise FgradRuntimeError("torch.linalg.householder_product: input.shape[-1] must be greater than or equal to "
                                f"tau.shape[-1] (got {n} and {k})")
    if tau._value.shape[:-1] != A._value.shape[:-2]:
        raise FgradRuntimeError(f"torch.linalg.householder_product: Expected batch dimensions of tau "
                                f"{tuple(tau._value.shape[:-1])} to be equal to input's "
                                f"{tuple(A._value.shape[:-2])}")
    dt = P.result_dtype(A, tau)
    return call("LinalgHouseholderProductBackward0",
                lambda a, t: _householder_values(cast(a, dt), cast(t, dt)), (A, tau))


# --- LDL^T (Bunch-Kaufman) -----------------------------------------------------------------------------

def _ldl_kernel(m: np.ndarray, hermitian: bool) -> str:
    return "hetrf" if hermitian and m.dtype.kind == "c" else "sytrf"


def ldl_factor_ex(A: Tensor, *, hermitian: bool = False, check_errors: bool = False) -> tuple:
    """(LD, pivots, info): LAPACK's sytrf (hetrf with hermitian) factorization A = L D L^T with
    Bunch-Kaufman pivoting, in its compact form: L (unit lower, its diagonal implied) and the
    block diagonal D (1x1 and 2x2 blocks) in LD's lower triangle, pivots LAPACK's (1-based;
    negative for a 2x2 block), info k > 0 where D's k-th diagonal element is exactly zero. As
    PyTorch's, these have no derivative.

    Args:
        A: a (batch of) symmetric (Hermitian) matrices; the lower triangle is read.
        hermitian: for complex A, factor A = L D L^H.
        check_errors: raise LinAlgError where info > 0.

    Returns:
        The named tuple (LD, pivots, info).
    """
    _square("ldl_factor_ex", A)
    flat, lead = _matrices(A)
    lds, pivs, infos = [], [], []
    for m in flat:
        ld, piv, info = _lapack(_ldl_kernel(m, hermitian), m)(m, lower=1)
        lds.append(np.tril(ld))
        pivs.append(piv.astype(np.int32))
        infos.append(max(int(info), 0))
    info = np.asarray(infos, np.int32).reshape(lead)
    if check_errors and info.any():
        _raise_info("ldl_factor_ex", info, "The factorization could not be completed because the diagonal element "
                    "{k} of D is zero (the matrix is singular).")
    n = A._value.shape[-1]
    LD = np.stack(lds).reshape(A._value.shape) if lds else np.zeros(A._value.shape, A._value.dtype)
    piv = np.stack(pivs).reshape(*lead, n) if pivs else np.zeros((*lead, n), np.int32)
    return ldl_factor_ex_t(_like(LD, A), _like(piv, A), _like(info, A))


def ldl_factor(A: Tensor, *, hermitian: bool = False) -> tuple:
    """(LD, pivots) as ldl_factor_ex, raising LinAlgError for a singular matrix.

    Args:
        A: a (batch of) symmetric (Hermitian) matrices; the lower triangle is read.
        hermitian: for complex A, factor A = L D L^H.

    Returns:
        The named tuple (LD, pivots).
    """
    LD, piv, _ = ldl_factor_ex(A, hermitian=hermitian, check_errors=True)
    return ldl_factor_t(LD, piv)


def ldl_solve(LD: Tensor, pivots: Tensor, B: Tensor, *, hermitian: bool = False) -> Tensor:
    """X with A X = B from ldl_factor's (LD, pivots) of A (LAPACK's sytrs/hetrs); the batch
    dimensions broadcast. As PyTorch's, the result has no derivative.

    Args:
        LD: ldl_factor's compact factorization.
        pivots: ldl_factor's pivots (int32).
        B: the right-hand sides, a (batch of) matrices.
        hermitian: LD is a Hermitian factorization (ldl_factor(..., hermitian=True)).

    Returns:
        X, of the broadcast batch shape.
    """
    _square("ldl_solve", LD)
    _float_input("ldl_solve", B, 2)
    n = LD._value.shape[-1]
    if B._value.shape[-2] != n:
        raise FgradRuntimeError(f"torch.linalg.ldl_solve: Incompatible shapes of A and B for the equation AX = B "
                                f"({n}x{n} and {tuple(B._value.shape[-2:])})")
    if not isinstance(pivots, Tensor) or pivots._value.dtype != np.int32:
        raise FgradRuntimeError("torch.linalg.ldl_solve: Expected pivots to be an int32 tensor (ldl_factor's), got "
                                f"{getattr(pivots, 'dtype', type(pivots).__name__)}")
    dt = P.result_dtype(LD, B)
    ld, piv, b = _host(LD).astype(dt), _host(pivots), _host(B).astype(dt)
    batch = np.broadcast_shapes(ld.shape[:-2], piv.shape[:-1], b.shape[:-2])
    ld = np.broadcast_to(ld, batch + ld.shape[-2:]).reshape(-1, n, n)
    piv = np.broadcast_to(piv, batch + piv.shape[-1:]).reshape(-1, n)
    b2 = np.broadcast_to(b, batch + b.shape[-2:]).reshape(-1, *b.shape[-2:])
    kernel = "hetrs" if hermitian and dt.kind == "c" else "sytrs"
    xs = [_lapack(kernel, m)(m, p, r, lower=1)[0] for m, p, r in zip(ld, piv, b2)]
    x = np.stack(xs) if xs else np.zeros(b2.shape, dt)
    return _like(x.reshape(batch + b.shape[-2:]), B)


# --- tensor inverses and solves, Vandermonde matrices --------------------------------------------------------

def tensorinv(A: Tensor, ind: int = 2) -> Tensor:
    """The inverse of A under tensordot over `ind` dims: the result X of shape
    A.shape[ind:] + A.shape[:ind] has tensordot(A, X, ind) = identity; composed as PyTorch's
    (a reshape to a square matrix, inv, a reshape).

    Args:
        A: a tensor with prod(A.shape[:ind]) == prod(A.shape[ind:]).
        ind: how many leading dims index the result's rows.

    Returns:
        The tensor inverse.
    """
    _float_input("tensorinv", A)
    if ind <= 0:
        raise FgradRuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    shape = tuple(A._value.shape)
    rows, cols = int(np.prod(shape[:ind])), int(np.prod(shape[ind:]))
    if rows != cols:
        raise FgradRuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                                f"prod(self.shape[:ind]), but got {cols} != {rows}")
    out = shape[ind:] + shape[:ind]
    # (PyTorch's inverse is column-major, so its reshape copies: a ReshapeAlias node)
    return call("ReshapeAliasBackward0", lambda v: fnp.reshape(v, out), (inv(A.reshape(rows, cols)),))


def tensorsolve(A: Tensor, B: Tensor, dims: Any = None) -> Tensor:
    """X with tensordot(A, X, X.ndim) = B; with `dims`, those dims of A are moved to the end
    first. Composed as PyTorch's (reshapes around linalg.solve).

    Args:
        A: a tensor whose leading dims are B's shape and whose trailing dims are X's.
        B: the right-hand side.
        dims: dims of A to move to the end before solving.

    Returns:
        X, of shape A.shape[B.ndim:].
    """
    _float_input("tensorsolve", A)
    _float_input("tensorsolve", B)
    if A._value.dtype != B._value.dtype:
        raise FgradRuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type "
                                f"{D.of_np(A._value.dtype)} and B of type {D.of_np(B._value.dtype)} instead")
    nd = A._value.ndim
    if dims is not None:
        if isinstance(dims, int):
            raise FgradTypeError(f"linalg_tensorsolve(): argument 'dims' must be tuple of ints, not int ({dims}); "
                                 f"pass ({dims},)")
        dims = list(dims)
        A = A.movedim(dims, list(range(nd - len(dims), nd)))
    shape = tuple(A._value.shape)
    bshape = tuple(B._value.shape)
    if shape[:len(bshape)] != bshape:
        raise FgradRuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                                f"prod(self.shape[:other.ndim]), but got shapes {shape} and {bshape} (A's leading "
                                "dims must be B's shape)")
    out = shape[len(bshape):]
    rows, cols = int(np.prod(bshape)), int(np.prod(out))
    if rows != cols:
        raise FgradRuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                                f"prod(self.shape[:other.ndim]), but got {cols} != {rows}")
    return solve(A.reshape(rows, cols), B.reshape(rows)).view(out)


def vander(x: Tensor, *, N: int | None = None) -> Tensor:
    """The Vandermonde matrix of increasing powers: x[..., i] ** j in column j < N, composed
    as PyTorch's (a column of ones and the cumulative products of x).

    Args:
        x: a tensor (..., n) of floats, complex or integers (bool is refused, as in PyTorch).
        N: the number of columns (default n), at least 2.

    Returns:
        A tensor (..., n, N) of x's dtype.
    """
    if not isinstance(x, Tensor):
        raise FgradTypeError(f"linalg.vander(): argument 'x' must be Tensor, not {type(x).__name__}")
    if x._value.dtype == np.bool_:
        raise FgradRuntimeError("linalg.vander supports floating point, complex, and integer tensors, but got Bool")
    n = x._value.shape[-1] if x._value.ndim else 1
    N = n if N is None else int(N)
    if N <= 1:
        raise FgradRuntimeError(f"N must be greater than 1. (got N={N})")
    col = x.unsqueeze(-1)
    powers = col.expand(*col.shape[:-1], N - 1).cumprod(-1)
    return call("CatBackward0", lambda p, c: fnp.concatenate([fnp.ones_like(c), p], axis=-1), (powers, col))


__all__ = [
    "LinAlgError",
    "cholesky",
    "cholesky_ex",
    "cond",
    "cross",
    "det",
    "diagonal",
    "eig",
    "eigh",
    "eigvals",
    "eigvalsh",
    "householder_product",
    "inv",
    "inv_ex",
    "ldl_factor",
    "ldl_factor_ex",
    "ldl_solve",
    "lstsq",
    "lu",
    "lu_factor",
    "lu_factor_ex",
    "lu_solve",
    "matmul",
    "matrix_exp",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "multi_dot",
    "norm",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "solve_ex",
    "solve_triangular",
    "svd",
    "svdvals",
    "tensorinv",
    "tensorsolve",
    "vander",
    "vecdot",
    "vector_norm",
]
