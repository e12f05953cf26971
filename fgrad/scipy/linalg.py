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
from ..numpy import linalg as nla
from ..numpy._policy import NUMPY
from ..numpy._util import (
    as_value,
    aval_of,
    broadcast_shapes,
    broadcast_to,
    cast,
    dtype_of,
    result_dtype,
)
from ..ops import elementwise as ew
from ..ops import linalg as la
from ..ops import matrix_functions as mf
from ..ops import shape as sh

__all__ = ["solve_triangular", "solve_banded", "solve_sylvester", "sqrtm", "expm", "expm_frechet",
           "cholesky", "cho_factor", "cho_solve", "eigh", "inv", "det", "solve", "block_diag"]


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
    """The matrix exponential of a square matrix (or stack)."""
    return mf.expm(_square(_float(A, "expm"), "expm"))


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
    return sh.concatenate(rows, 0)
