"""fgrad.scipy.linalg: SciPy's linear-algebra functions with derivatives to any order.

solve_triangular, solve_banded, solve_sylvester, sqrtm, expm and expm_frechet have their
own primitives (fgrad.ops.linalg, fgrad.ops.matrix_functions); cholesky, cho_factor,
cho_solve, eigh, inv, det and solve are SciPy's spellings of fgrad.numpy.linalg's functions.
Arguments that only tune SciPy's memory use or input checks (overwrite_a/overwrite_b,
check_finite) are accepted and change nothing.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..core.avals import float_dtype
from ..core.errors import FgradTypeError, FgradValueError, ShapeError
from .. import numpy as fnp
from ..numpy import linalg as nla
from ..numpy._policy import NUMPY
from ..numpy._util import (
    as_value,
    aval_of,
    broadcast_shapes,
    broadcast_to,
    cast,
    dtype_of,
    fresh,
    int_arg,
    is_traced,
    result_dtype,
)
from ..ops import elementwise as ew
from ..ops import linalg as la
from ..ops import linalg_lu as lu_ops
from ..ops import matrix_functions as mf
from ..ops import shape as sh

__all__ = ["solve_triangular", "solve_banded", "solve_sylvester", "sqrtm", "expm", "expm_frechet",
           "cholesky", "cho_factor", "cho_solve", "eigh", "inv", "det", "solve", "block_diag",
           "toeplitz", "circulant", "hankel", "leslie", "companion", "fiedler", "fiedler_companion",
           "convolution_matrix", "svd", "qr", "qr_multiply", "polar", "eigh_tridiagonal", "funm", "schur",
           "hessenberg", "lu", "lu_factor", "lu_solve", "rsf2csf"]


def _float(x, name):
    x = as_value(x, name)
    dt = dtype_of(x)
    if dt.kind == "c":
        raise FgradTypeError(f"{name}: complex arrays are not supported (dtype {dt}); fgrad's {name} takes real "
                        "arrays")
    return cast(x, float_dtype(dt))


def _common(name, *xs):
    xs = [_float(x, name) for x in xs]
    dt = result_dtype(*xs)
    return [cast(x, dt) for x in xs]


def _square(x, name):
    shape = aval_of(x).shape
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ShapeError(f"{name}: expected a square matrix or a stack of them (shape (..., n, n)), "
                         f"got shape {shape}")
    return x


def _system(a, b, name):
    """(a, b as (..., n, k), restore) for a square a (..., n, n) and b (n,) or (..., n, k);
    `restore` turns the solution back into b's layout."""
    sa, sb = aval_of(a).shape, aval_of(b).shape
    n = sa[-1]
    if len(sb) == 1:
        if sb[0] != n:
            raise ShapeError(f"{name}: a of shape {sa} and b of shape {sb}: b must have {n} entries")
        b2 = broadcast_to(sh.reshape(b, (n, 1)), sa[:-2] + (n, 1))
        return a, b2, lambda x: sh.reshape(x, sa[:-1])
    if sb[-2] != n:
        raise ShapeError(f"{name}: a of shape {sa} and b of shape {sb}: b must be (n,) or (..., n, k) with "
                         f"n = {n}")
    batch = broadcast_shapes(name, sa[:-2], sb[:-2])
    return broadcast_to(a, batch + sa[-2:]), broadcast_to(b, batch + sb[-2:]), lambda x: x


def _unit_diagonal(a):
    """a with its diagonal replaced by ones (never read: the ones are constants)."""
    n = aval_of(a).shape[-1]
    eye = sh.broadcast_in_dim(np.eye(n, dtype=dtype_of(a)), aval_of(a).shape,
                              (len(aval_of(a).shape) - 2, len(aval_of(a).shape) - 1))
    return ew.add(ew.sub(a, la.diagonal_part(a)), eye)


def solve_triangular(a: Any, b: Any, trans: Any = 0, lower: bool = False, unit_diagonal: bool = False,
                     overwrite_b: bool = False, check_finite: bool = True) -> Any:
    """x with op(T) @ x = b, T the lower (or upper) triangle of `a` (the other triangle is
    never read) and op given by trans: 0/'N' (T), 1/'T' or 2/'C' (T.T). With unit_diagonal
    the diagonal is taken as ones. b is (n,) or (..., n, k); batch axes broadcast."""
    codes = {0: False, "N": False, 1: True, "T": True, 2: True, "C": True}
    if trans not in codes:
        raise FgradValueError(f"solve_triangular: trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}")
    a, b = _common("solve_triangular", a, b)
    a = _square(a, "solve_triangular")
    if unit_diagonal:
        a = _unit_diagonal(a)
    a, b2, restore = _system(a, b, "solve_triangular")
    return restore(la.triangular_solve(a, b2, lower=bool(lower), transpose_a=codes[trans]))


def solve_banded(l_and_u: Any, ab: Any, b: Any, overwrite_ab: bool = False, overwrite_b: bool = False,
                 check_finite: bool = True) -> Any:
    """x with A @ x = b for A in LAPACK's banded storage: (l, u) = l_and_u off-diagonals below
    and above, ab (l + u + 1, n) with A[i, j] = ab[u + i - j, j]; b (n,) or (n, k). Entries of
    ab outside the matrix are never read (their gradient is zero)."""
    try:
        lower, upper = (int(v) for v in l_and_u)
    except (TypeError, ValueError):
        raise FgradValueError(f"solve_banded: l_and_u must be a pair of integers (l, u), got {l_and_u!r:.60}") from None
    ab, b = _common("solve_banded", ab, b)
    sab, sb = aval_of(ab).shape, aval_of(b).shape
    if len(sb) == 1:
        return sh.reshape(mf.banded_solve(ab, sh.reshape(b, (sb[0], 1)), lower=lower, upper=upper), sb)
    if len(sb) != 2:
        raise ShapeError(f"solve_banded: b must be (n,) or (n, k), got shape {sb} (with ab of shape {sab})")
    return mf.banded_solve(ab, b, lower=lower, upper=upper)


def solve_sylvester(a: Any, b: Any, q: Any) -> Any:
    """X with a @ X + X @ b = q (a (m, m), b (n, n), q (m, n); batch axes allowed, equal)."""
    a, b, q = _common("solve_sylvester", a, b, q)
    return mf.sylvester(_square(a, "solve_sylvester"), _square(b, "solve_sylvester"), q)


def sqrtm(A: Any, disp: Any = None, blocksize: Any = None) -> Any:
    """The principal square root of a square matrix (or stack). A real matrix needs one with
    no eigenvalue on the closed negative real axis (otherwise FgradValueError: its root is
    complex; pass the matrix as complex). `disp` and `blocksize` are accepted for SciPy's
    signature."""
    A = as_value(A, "sqrtm")
    A = cast(A, float_dtype(dtype_of(A)))   # complex stays complex: its root is complex
    return mf.sqrtm(_square(A, "sqrtm"))


def expm(A: Any) -> Any:
    """The matrix exponential of a real or complex square matrix (or stack); its derivative is
    the Frechet derivative (itself an expm), to any order."""
    A = as_value(A, "expm")
    return mf.expm(_square(cast(A, float_dtype(dtype_of(A))), "expm"))


def expm_frechet(A: Any, E: Any, method: Any = None, compute_expm: bool = True,
                 check_finite: bool = True) -> Any:
    """(expm(A), L(A, E)), the Frechet derivative of expm at A in direction E (only L with
    compute_expm=False), from the exponential of the block matrix [[A, E], [0, A]]."""
    A, E = _common("expm_frechet", A, E)
    A = _square(A, "expm_frechet")
    if aval_of(E).shape != aval_of(A).shape:
        raise ShapeError(f"expm_frechet: A of shape {aval_of(A).shape} and E of shape {aval_of(E).shape} differ")
    frechet = mf.frechet_expm(A, E)
    return (mf.expm(A), frechet) if compute_expm else frechet


def cholesky(a: Any, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """The Cholesky factor of a symmetric positive-definite matrix (or stack): upper U with
    U.T @ U = a (SciPy's default), or lower L with lower=True. The input is symmetrised, as in
    fgrad.numpy.linalg.cholesky."""
    L = nla.cholesky(a)
    return L if lower else la.matrix_transpose(L)


def cho_factor(a: Any, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True) -> tuple:
    """(c, lower) for cho_solve: c holds the Cholesky factor in its lower (upper) triangle and
    zeros in the other (SciPy leaves arbitrary values there, which cho_solve never reads)."""
    return cholesky(a, lower=lower), bool(lower)


def cho_solve(c_and_lower: Any, b: Any, overwrite_b: bool = False, check_finite: bool = True) -> Any:
    """x with A @ x = b from cho_factor's (c, lower) of A; b (n,) or (..., n, k)."""
    c, lower = c_and_lower
    c, b = _common("cho_solve", c, b)
    c = _square(c, "cho_solve")
    c, b2, restore = _system(c, b, "cho_solve")
    lower = bool(lower)
    # A = L L^T (or U^T U): solve with the factor, then with its transpose
    y = la.triangular_solve(c, b2, lower=lower, transpose_a=not lower)
    return restore(la.triangular_solve(c, y, lower=lower, transpose_a=lower))


def eigh(a: Any, b: Any = None, *, lower: bool = True, eigvals_only: bool = False, overwrite_a: bool = False,
         overwrite_b: bool = False, check_finite: bool = True, **kwargs: Any) -> Any:
    """Eigenvalues (ascending) and eigenvectors of a real symmetric matrix (or stack), as
    fgrad.numpy.linalg.eigh (symmetrised input); only the eigenvalues with eigvals_only. The
    generalized problem (b given) and SciPy's subset/driver options are not supported."""
    if b is not None:
        raise FgradValueError("eigh: the generalized eigenproblem (b given) is not supported; for a positive "
                              "definite b, solve with L = cholesky(b, lower=True): eigh(inv(L) @ a @ inv(L).T)")
    if kwargs:
        raise FgradValueError(f"eigh: options {sorted(kwargs)} are not supported (fgrad computes every eigenpair "
                              "with one driver)")
    w, v = nla.eigh(a, "L" if lower else "U")
    return w if eigvals_only else (w, v)


def inv(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """The inverse of a square matrix (or stack)."""
    return nla.inv(a)


def det(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """The determinant of a square matrix (or stack)."""
    return nla.det(a)


def solve(a: Any, b: Any, lower: bool = False, overwrite_a: bool = False, overwrite_b: bool = False,
          check_finite: bool = True, assume_a: Any = None, transposed: bool = False) -> Any:
    """x with a @ x = b (a.T @ x = b with transposed); b (n,) or (..., n, k). `assume_a` and
    `lower` are accepted: fgrad solves the general system, which for the structures SciPy
    names ('sym', 'pos', ...) has the same solution."""
    a, b = _common("solve", a, b)
    a = _square(a, "solve")
    if transposed:
        a = la.matrix_transpose(a)
    a, b2, restore = _system(a, b, "solve")
    return restore(la.solve(a, b2))


def block_diag(*arrs: Any, policy=NUMPY) -> Any:
    """The arrays (0-d and 1-D ones as a single row, 2-D as they are) as the diagonal blocks
    of one matrix, zero elsewhere, in their common dtype (SciPy's semantics). Linear in each
    block (padding and concatenation)."""
    blocks = []
    for k, a in enumerate(arrs):
        a = as_value(a, "block_diag")
        shape = aval_of(a).shape
        if len(shape) > 2:
            raise FgradValueError(f"block_diag: arguments in the following positions have dimension greater than 2: "
                             f"[{k}] (shape {shape})")
        blocks.append(sh.reshape(a, (1, shape[0] if shape else 1)) if len(shape) < 2 else a)
    if not blocks:
        return np.zeros((1, 0))
    dt = result_dtype(*blocks, policy=policy)
    blocks = [cast(b, dt) for b in blocks]
    cols = sum(aval_of(b).shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        r, c = aval_of(b).shape
        if r:
            rows.append(sh.pad(b, ((0, 0), (left, cols - left - c))))
        left += c
    if not rows:
        return np.zeros((0, cols), dt)
    return fresh(sh.concatenate(rows, 0), arrs)  # (one block: a new array all the same, as SciPy's)


# --- special matrices: gathers from the inputs (linear in them) ----------------------------------

def _vector(x, name):
    """x as a value of at least one dimension (SciPy's atleast_1d)."""
    x = as_value(x, name)
    return sh.reshape(x, (1,)) if aval_of(x).ndim == 0 else x


def _gather(vals, table):
    """The matrix (..., R, C) with entry [i, j] = vals[..., table[i, j]], or 0 where table is
    -1 (a zero appended to vals is gathered there): every special matrix is such a gather, so
    it is linear in its inputs, with every derivative."""
    vals = _vector(vals, "special matrix")
    shape = aval_of(vals).shape
    zero = fnp.zeros(shape[:-1] + (1,), dtype_of(vals))
    ext = fnp.concatenate([vals, zero], axis=-1)
    table = np.where(np.asarray(table) < 0, shape[-1], table)
    return fnp.take(ext, table, axis=-1)


def _batch_pair(a, b, name):
    """a (..., m) and b (..., n) with their batch axes broadcast, in their common dtype."""
    a, b = _vector(a, name), _vector(b, name)
    dt = result_dtype(a, b)
    a, b = cast(a, dt), cast(b, dt)
    sa, sb = aval_of(a).shape, aval_of(b).shape
    batch = broadcast_shapes(name, sa[:-1], sb[:-1])
    return broadcast_to(a, batch + sa[-1:]), broadcast_to(b, batch + sb[-1:])


def toeplitz(c: Any, r: Any = None) -> Any:
    """The Toeplitz matrix with first column c and first row r (r = conj(c) when None; r[0] is
    ignored): T[i, j] = c[i - j] for i >= j, r[j - i] above. Leading axes of c and r are a
    batch (broadcast), as in SciPy."""
    c = _vector(c, "toeplitz")
    r = fnp.conjugate(c) if r is None else r
    c, r = _batch_pair(c, r, "toeplitz")
    m, n = aval_of(c).shape[-1], aval_of(r).shape[-1]
    vals = fnp.concatenate([fnp.flip(c, axis=-1), r[..., 1:]], axis=-1)
    return _gather(vals, (m - 1) - np.arange(m)[:, None] + np.arange(n)[None, :])


def circulant(c: Any) -> Any:
    """The circulant matrix with first column c: C[i, j] = c[(i - j) mod n]; leading axes are a
    batch."""
    c = _vector(c, "circulant")
    n = aval_of(c).shape[-1]
    return _gather(c, (np.arange(n)[:, None] - np.arange(n)[None, :]) % n)


def hankel(c: Any, r: Any = None) -> Any:
    """The Hankel matrix with first column c and last row r (zeros when None; r[0] is ignored):
    H[i, j] = c[i + j] while i + j < len(c), r[i + j - len(c) + 1] after. Inputs of more than
    one dimension are raveled (SciPy 1.17's behaviour)."""
    c = fnp.ravel(_vector(c, "hankel"))
    r = fnp.zeros_like(c) if r is None else fnp.ravel(_vector(r, "hankel"))
    dt = result_dtype(c, r)
    c, r = cast(c, dt), cast(r, dt)
    m, n = aval_of(c).shape[0], aval_of(r).shape[0]
    vals = fnp.concatenate([c, r[1:]])
    return _gather(vals, np.arange(m)[:, None] + np.arange(n)[None, :])


def leslie(f: Any, s: Any) -> Any:
    """The Leslie matrix: fecundity coefficients f (n,) in the first row, survival
    coefficients s (n - 1,) on the subdiagonal; leading axes are a batch."""
    f, s = _batch_pair(f, s, "leslie")
    n, k = aval_of(f).shape[-1], aval_of(s).shape[-1]
    if n != k + 1:
        raise FgradValueError("leslie: incorrect lengths for f and s. The length of s along the last axis must be "
                              f"one less than the length of f (got {n} and {k})")
    if k == 0:
        raise FgradValueError("leslie: the length of s must be at least 1")
    table = -np.ones((n, n), np.int64)
    table[0] = np.arange(n)
    table[np.arange(1, n), np.arange(n - 1)] = n + np.arange(n - 1)
    return _gather(fnp.concatenate([f, s], axis=-1), table)


def _nonzero_leading(a, name):
    """SciPy's check that the leading coefficient is not zero (on concrete values only: a
    traced one cannot be inspected)."""
    if not is_traced(a) and np.any(np.asarray(a)[..., 0] == 0):
        raise FgradValueError(f"{name}: the first coefficient(s) of `a` (a[..., 0]) must not be zero")


def companion(a: Any) -> Any:
    """The companion matrix of the polynomial with coefficients a (highest degree first, a[0]
    nonzero): first row -a[1:] / a[0], ones on the subdiagonal; leading axes are a batch."""
    a = _vector(a, "companion")
    n = aval_of(a).shape[-1]
    if n < 2:
        raise FgradValueError(f"companion: the length of `a` along the last axis must be at least 2, got {n}")
    _nonzero_leading(a, "companion")
    a = cast(a, float_dtype(dtype_of(a)))
    first = fnp.negative(fnp.divide(a[..., 1:], a[..., :1]))
    table = -np.ones((n - 1, n - 1), np.int64)
    table[0] = np.arange(n - 1)
    table[np.arange(1, n - 1), np.arange(n - 2)] = n - 1
    ones = fnp.ones(aval_of(first).shape[:-1] + (1,), dtype_of(first))
    return _gather(fnp.concatenate([first, ones], axis=-1), table)


def fiedler(a: Any) -> Any:
    """The Fiedler matrix F[i, j] = |a[i] - a[j]| (leading axes a batch). |.| has a kink where
    two entries are equal (the diagonal among them): its derivative there is 0 (sign(0))."""
    a = _vector(a, "fiedler")
    size = int(np.prod(aval_of(a).shape))
    if size == 0:
        return np.asarray([], dtype=np.float64)
    if size == 1:
        return np.asarray([[0.0]])
    return fnp.abs(fnp.subtract(fnp.expand_dims(a, -1), fnp.expand_dims(a, -2)))


def _fiedler_companion_table(n):
    """Where fiedler_companion's entries come from: k for -a[k] / a[0], n + 1 for a one,
    -1 for zero (SciPy's pattern, for n + 1 coefficients)."""
    t = -np.ones((n, n), np.int64)
    one = n + 1
    t[range(3, n, 2), range(1, n - 2, 2)] = one
    t[range(2, n, 2), range(1, n - 1, 2)] = np.arange(3, n + 1, 2)[:len(range(2, n, 2))]
    t[range(0, n - 2, 2), range(2, n, 2)] = one
    t[range(0, n - 1, 2), range(1, n, 2)] = np.arange(2, n + 1, 2)[:len(range(0, n - 1, 2))]
    t[0, 0], t[1, 0] = 1, one
    return t


def fiedler_companion(a: Any) -> Any:
    """Fiedler's pentadiagonal companion matrix of the polynomial with coefficients a (highest
    degree first, a[0] nonzero; leading axes a batch)."""
    a = _vector(a, "fiedler_companion")
    size = aval_of(a).shape[-1]
    if size <= 2:
        if size == 2:
            return fnp.expand_dims(fnp.negative(fnp.divide(a[..., 1:], a[..., :1])), -1)
        return np.array([], dtype=dtype_of(a))
    _nonzero_leading(a, "fiedler_companion")
    a = cast(a, float_dtype(dtype_of(a)))
    scaled = fnp.negative(fnp.divide(a, a[..., :1]))
    ones = fnp.ones(aval_of(a).shape[:-1] + (1,), dtype_of(a))
    return _gather(fnp.concatenate([scaled, ones], axis=-1), _fiedler_companion_table(size - 1))


def convolution_matrix(a: Any, n: int, mode: str = "full") -> Any:
    """The Toeplitz matrix A with A @ v = numpy.convolve(a, v, mode) for v of length n
    (mode 'full', 'valid' or 'same'); leading axes of a are a batch."""
    n = int_arg(n, "convolution_matrix", "n")
    if n <= 0:
        raise FgradValueError(f"convolution_matrix: n must be a positive integer, got {n}")
    if mode not in ("full", "valid", "same"):
        raise FgradValueError(f"convolution_matrix: 'mode' argument must be one of ('full', 'valid', 'same'), "
                              f"got {mode!r}")
    a = _vector(a, "convolution_matrix")
    k = aval_of(a).shape[-1]
    if k == 0:
        raise FgradValueError("convolution_matrix: len(a) must be at least 1")
    nb = aval_of(a).ndim - 1
    az = fnp.pad(a, ((0, 0),) * nb + ((0, n - 1),))
    raz = fnp.pad(fnp.flip(a, axis=-1), ((0, 0),) * nb + ((0, n - 1),))
    length = k + n - 1
    if mode == "full":
        col0, row0 = az, raz[..., length - n:]
    else:
        tb = (min(n, k) - 1) // 2 if mode == "same" else min(n, k) - 1
        te = (min(n, k) - 1 - tb) if mode == "same" else tb
        col0, row0 = az[..., tb:length - te], raz[..., length - n - tb:length - tb]
    return toeplitz(col0, row0)


# --- decompositions -------------------------------------------------------------------------------

def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True, overwrite_a: bool = False,
        check_finite: bool = True, lapack_driver: str = "gesdd") -> Any:
    """(U, s, Vh) with a = U diag(s) Vh (singular values descending), or s alone with
    compute_uv=False: fgrad.numpy.linalg.svd with SciPy's signature (lapack_driver accepted)."""
    if lapack_driver not in ("gesdd", "gesvd"):
        raise FgradValueError(f"svd: lapack_driver must be 'gesdd' or 'gesvd', got {lapack_driver!r}")
    out = nla.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)
    return tuple(out) if compute_uv else out


def qr(a: Any, overwrite_a: bool = False, lwork: Any = None, mode: str = "full", pivoting: bool = False,
       check_finite: bool = True) -> tuple:
    """(Q, R) with a = Q R: mode 'full' (Q (m, m)), 'economic' (Q (m, k)), 'r' ((R,) only, as
    SciPy returns it). 'raw' and pivoting are not supported."""
    if pivoting:
        raise FgradValueError("qr: pivoting=True is not supported (its column permutation is not differentiable); "
                              "use pivoting=False")
    modes = {"full": "complete", "economic": "reduced", "r": "complete"}
    if mode not in modes:
        raise FgradValueError(f"qr: mode must be 'full', 'economic' or 'r' ('raw' is not supported), got {mode!r}")
    q, r = nla.qr(a, modes[mode])
    return (r,) if mode == "r" else (q, r)


def qr_multiply(a: Any, c: Any, mode: str = "right", pivoting: bool = False, conjugate: bool = False,
                overwrite_a: bool = False, overwrite_c: bool = False) -> tuple:
    """(Q @ c (mode 'left') or c @ Q (mode 'right'), R) with Q, R the economic QR of a (Q (m, k),
    R (k, n)); a 1-D c is taken as a vector. conjugate multiplies by conj(Q) (the same for real
    a). pivoting is not supported."""
    if pivoting:
        raise FgradValueError("qr_multiply: pivoting=True is not supported; use pivoting=False")
    if mode not in ("left", "right"):
        raise FgradValueError(f"qr_multiply: mode must be 'left' or 'right', got {mode!r}")
    q, r = nla.qr(a, "reduced")
    if conjugate:
        q = fnp.conjugate(q)
    return (fnp.matmul(q, c) if mode == "left" else fnp.matmul(c, q)), r


def polar(a: Any, side: str = "right") -> tuple:
    """The polar decomposition (u, p): a = u p (side 'right', p (n, n)) or a = p u ('left', p
    (m, m)), u with orthonormal columns (rows), p symmetric positive semidefinite; from the SVD
    a = W diag(s) Vh: u = W Vh, p = Vh^T diag(s) Vh (W diag(s) W^T). Differentiable where the
    singular values are distinct and nonzero (the SVD's derivative)."""
    if side not in ("left", "right"):
        raise FgradValueError(f"polar: `side` must be either 'right' or 'left', got {side!r}")
    a = _float(a, "polar")
    if aval_of(a).ndim != 2:
        raise FgradValueError(f"polar: `a` must be a 2-D array, got shape {aval_of(a).shape}")
    w, s, vh = nla.svd(a, full_matrices=False)
    u = fnp.matmul(w, vh)
    if side == "right":
        p = fnp.matmul(fnp.transpose(vh) * s, vh)
    else:
        p = fnp.matmul(w * s, fnp.transpose(w))
    return u, p


def eigh_tridiagonal(d: Any, e: Any, eigvals_only: bool = False, select: str = "a", select_range: Any = None,
                     check_finite: bool = True, tol: float = 0.0, lapack_driver: str = "auto") -> Any:
    """Eigenvalues (ascending), and with eigvals_only=False eigenvectors, of the symmetric
    tridiagonal matrix with diagonal d (n,) and off-diagonal e (n - 1,): eigh of that matrix, so
    its derivatives are eigh's (distinct eigenvalues). select='a' only (all eigenvalues)."""
    if select not in ("a", "all", 0):
        raise FgradValueError(f"eigh_tridiagonal: select={select!r} is not supported; fgrad computes all eigenvalues "
                              "(select='a'): take a slice of the result")
    d, e = _common("eigh_tridiagonal", d, e)
    sd, se = aval_of(d).shape, aval_of(e).shape
    if len(sd) != 1 or len(se) != 1 or se[0] != max(sd[0] - 1, 0):
        raise ShapeError(f"eigh_tridiagonal: d must be 1-D (n,) and e (n - 1,), got shapes {sd} and {se}")
    n = sd[0]
    table = -np.ones((n, n), np.int64)
    table[np.arange(n), np.arange(n)] = np.arange(n)
    table[np.arange(1, n), np.arange(n - 1)] = n + np.arange(n - 1)
    table[np.arange(n - 1), np.arange(1, n)] = n + np.arange(n - 1)
    t = _gather(fnp.concatenate([d, e]), table)
    w, v = nla.eigh(t)
    return w if eigvals_only else (w, v)


def funm(A: Any, func: Any, disp: bool = True) -> Any:
    """The matrix function f(A) for a scalar function `func` applied elementwise to an array (it
    must accept complex arrays): V diag(func(w)) V^-1 from the eigendecomposition A = V diag(w)
    V^-1 (fgrad.numpy.linalg.eig), real for real A (its imaginary part dropped, as SciPy does
    when it is negligible). SciPy (and JAX) use the Schur form; the results agree for
    diagonalizable A, and this one is differentiable (eig's derivative: distinct eigenvalues).
    With disp=False returns (F, errest), errest = ||A F - F A||_1 / ||F||_1 (F commutes with A
    exactly): fgrad's estimate, not SciPy's Schur-based one."""
    A = as_value(A, "funm")
    _square(A, "funm")
    if aval_of(A).ndim != 2:
        raise ShapeError(f"funm: expected a 2-D square matrix, got shape {aval_of(A).shape}")
    real = dtype_of(A).kind != "c"
    A = cast(A, float_dtype(dtype_of(A)))
    w, v = nla.eig(A)
    f = fnp.matmul(v * func(w), nla.inv(v))
    if real:
        f = fnp.real(f)
    if disp:
        return f
    err = nla.norm(fnp.subtract(fnp.matmul(A, f), fnp.matmul(f, A)), 1) / nla.norm(f, 1)
    return f, err


def schur(a: Any, output: str = "real", lwork: Any = None, overwrite_a: bool = False, sort: Any = None,
          check_finite: bool = True) -> tuple:
    """(T, Z) with a = Z T Z^H: T quasi-upper-triangular (output 'real') or upper triangular
    ('complex', also for real a), Z orthogonal (unitary). Values only: as in JAX, a derivative
    raises DifferentiationError (the factors are not unique). `sort` is not supported."""
    if output not in ("real", "complex", "r", "c"):
        raise FgradValueError(f"schur: output must be 'real' or 'complex', got {output!r}")
    if sort is not None:
        raise FgradValueError("schur: sort is not supported; pass sort=None")
    a = _square(_float(a, "schur"), "schur")
    return lu_ops.schur(a, output="complex" if output in ("complex", "c") else "real")


def hessenberg(a: Any, calc_q: bool = False, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """H, the upper Hessenberg form of a (a = Q H Q^T), or (H, Q) with calc_q=True. Values only:
    as in JAX, a derivative raises DifferentiationError."""
    a = _square(_float(a, "hessenberg"), "hessenberg")
    h, q = lu_ops.hessenberg(a)
    return (h, q) if calc_q else h


def _lu_parts(a, name):
    a = as_value(a, name)
    a = cast(a, float_dtype(dtype_of(a)))  # complex stays complex: LU is holomorphic
    if aval_of(a).ndim < 2:
        raise ShapeError(f"{name}: expected a matrix or a stack of them (shape (..., m, n)), got shape "
                         f"{aval_of(a).shape}")
    perm = lu_ops.lu_pivots(a)
    return a, perm, lu_ops.lu_packed(a, perm)


def lu(a: Any, permute_l: bool = False, overwrite_a: bool = False, check_finite: bool = True,
       p_indices: bool = False) -> tuple:
    """The LU decomposition with partial pivoting a = P L U: (P, L, U), L (m, k) unit lower and
    U (k, n) upper with k = min(m, n); (P L, U) with permute_l; P as row indices p (a = L[p] U)
    with p_indices. Differentiable in a (JAX's lu_jvp; the pivots are held fixed)."""
    a, perm, packed = _lu_parts(a, "lu")
    m, n = aval_of(a).shape[-2:]
    k = min(m, n)
    L = fnp.add(fnp.tril(packed[..., :, :k], -1), np.eye(m, k, dtype=dtype_of(a)))
    U = fnp.triu(packed[..., :k, :])
    p_mat = la.matrix_transpose(lu_ops.permutation_matrix(perm, m, dtype_of(a)))   # a = P L U
    if permute_l:
        return fnp.matmul(p_mat, L), U
    if p_indices:
        return fnp.argsort(perm, axis=-1), L, U
    return p_mat, L, U


def lu_factor(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> tuple:
    """(lu, piv) as LAPACK's getrf: L (unit diagonal implied) and U packed in one array, and the
    row swaps piv (int32: row i was interchanged with row piv[i]). Differentiable in a."""
    a, perm, packed = _lu_parts(a, "lu_factor")
    return packed, lu_ops.lu_pivots(a, swaps=True)


def lu_solve(lu_and_piv: Any, b: Any, trans: int = 0, overwrite_b: bool = False, check_finite: bool = True) -> Any:
    """x with a @ x = b (trans 0), a.T @ x = b (1) or a^H @ x = b (2) from lu_factor's (lu, piv)
    of a; b (n,) or (n, k). Differentiable in lu and b."""
    lu_, piv = lu_and_piv
    if trans not in (0, 1, 2):
        raise FgradValueError(f"lu_solve: trans must be 0, 1 or 2, got {trans!r}")
    lu_, b = (as_value(v, "lu_solve") for v in (lu_, b))
    dt = float_dtype(result_dtype(lu_, b))  # complex stays complex
    lu_, b = cast(lu_, dt), cast(b, dt)
    if trans == 2 and dt.kind == "c":  # a^H x = b  <=>  a^T conj(x) = conj(b)
        return fnp.conj(lu_solve((lu_, piv), fnp.conj(b), trans=1))
    lu_ = _square(lu_, "lu_solve")
    n = aval_of(lu_).shape[-1]
    perm = lu_ops.swaps_to_perm(as_value(piv, "lu_solve"), n)
    p_mat = lu_ops.permutation_matrix(perm, n, dtype_of(lu_))     # p_mat @ a = L U
    lower, upper = _unit_diagonal(lu_), lu_
    lu_, b2, restore = _system(lu_, b, "lu_solve")
    if trans == 0:   # L U x = P a x = P b
        y = la.triangular_solve(lower, la.batched_matmul(p_mat, b2), lower=True)
        return restore(la.triangular_solve(upper, y, lower=False))
    # a^T = U^T L^T P: x = P^T L^-T U^-T b
    y = la.triangular_solve(upper, b2, lower=False, transpose_a=True)
    return restore(la.batched_matmul(la.matrix_transpose(p_mat),
                                     la.triangular_solve(lower, y, lower=True, transpose_a=True)))


def rsf2csf(T: Any, Z: Any, check_finite: bool = True) -> tuple:
    """(T, Z) of the complex Schur form from the real one (schur's output='real'): each 2x2
    block of T with a nonzero subdiagonal entry is triangularized by a Givens rotation G built
    from the block's eigenvalue (SciPy's algorithm, as JAX writes it), applied as T <- G T G^H,
    Z <- Z G^H. Which blocks rotate is decided by the values (a `where`, so jit and vmap work);
    differentiable inside each decision (JAX's rsf2csf is the same composition)."""
    T, Z = (as_value(x, "rsf2csf") for x in (T, Z))
    dt = np.result_type(np.dtype(float_dtype(dtype_of(T))), np.dtype(float_dtype(dtype_of(Z))), np.complex64)
    T, Z = cast(T, dt), cast(Z, dt)
    st, sz = aval_of(T).shape, aval_of(Z).shape
    if len(st) != 2 or st[0] != st[1] or sz != st:
        raise ShapeError(f"rsf2csf: T and Z must be square matrices of one shape, got {st} and {sz}")
    n = st[0]
    eps = float(np.finfo(dt).eps)
    eye = np.eye(n, dtype=dt)
    for m in range(n - 1, 0, -1):
        a, b, c, d = T[m - 1, m - 1], T[m - 1, m], T[m, m - 1], T[m, m]
        rotate = fnp.abs(c) > eps * (fnp.abs(a) + fnp.abs(d))
        # mu0: the block's first eigenvalue as LAPACK orders a complex pair (positive imaginary
        # part first), minus T[m, m]. Where the block is not rotated, the square roots get 1 in
        # place of their (possibly 0) arguments: no inf * 0 = NaN in the derivatives not taken
        half = (a - d) * 0.5
        mu0 = half + fnp.sqrt(fnp.where(rotate, half * half + b * c, 1.0))
        r = fnp.sqrt(fnp.where(rotate, fnp.real(mu0 * fnp.conjugate(mu0)) + fnp.real(c * fnp.conjugate(c)), 1.0))
        cs, sn = mu0 / r, c / r
        g = eye
        for (i, j), val in (((m - 1, m - 1), fnp.conjugate(cs) - 1.0), ((m - 1, m), sn), ((m, m - 1), -sn),
                            ((m, m), cs - 1.0)):
            unit = np.zeros((n, n), dt)
            unit[i, j] = 1.0
            g = g + unit * val
        gh = fnp.conjugate(fnp.transpose(g))
        T = fnp.where(rotate, fnp.matmul(fnp.matmul(g, T), gh), T)
        Z = fnp.where(rotate, fnp.matmul(Z, gh), Z)
        keep = np.ones((n, n), dt)
        keep[m, m - 1] = 0.0
        T = T * keep
    return T, Z
