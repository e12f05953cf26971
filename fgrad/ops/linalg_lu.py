"""LU factorization with partial pivoting, and the Schur and Hessenberg forms.

LU is two primitives: `lu_pivots(a)`, the row permutation perm with a[perm] = L U (integers,
no derivative), and `lu_packed(a, perm)`, L (unit lower, below the diagonal) and U (upper)
packed in one (m, n) array as LAPACK's getrf stores them. The derivative is JAX's lu_jvp:
with x = a_dot[perm], L padded to (m, m) and U to (n, n) with identity blocks,
  lau = L^-1 x U^-1,   lu_dot = L tril(lau, -1) + triu(lau) U,
and the VJP is that linear map's transpose; both are written with fgrad ops (triangular
solves, products), so every order is differentiable. The pivots are held fixed: the
factorization is differentiable away from ties in the pivot choice, as in JAX. LU takes real
and complex matrices (it is holomorphic in a: the transpose, not the conjugate, in the VJP).

schur and hessenberg give values only, as JAX: their factors are not unique (Schur's blocks,
Hessenberg's reflector signs) and neither JAX nor fgrad defines their derivatives; asking for
one raises DifferentiationError."""
from __future__ import annotations

import numpy as np

from ..core.avals import ShapedArray, is_float
from ..core.errors import DifferentiationError, FgradTypeError, ShapeError
from ..core.primitive import Primitive
from ..core.rules import def_nondiff, shape_of
from ..core.trace import aval_of
from .complex import complex_dtype
from .decompositions import _pack_impl, _packed_aval, _split
from .elementwise import add, convert_element_type, eq
from .linalg import _batch_leading, batched_matmul, matrix_transpose, triangular_solve, tril, triu
from .shape import batch_front, broadcast_in_dim, pad, slice

_mm = batched_matmul
_mT = matrix_transpose


def _scipy_linalg(xp):
    if xp is not np:  # CuPy arrays: the host factorizes (cupyx has no getrf with pivots exposed here)
        raise FgradTypeError("lu/schur/hessenberg: only NumPy arrays are supported")
    # SciPy loads slowly (~130 ms): imported on first use, not with fgrad
    import scipy.linalg as sl
    return sl


def _count(batch) -> int:
    """The number of matrices in a stack with batch shape `batch` (reshape's -1 is ambiguous
    when the matrices themselves are empty)."""
    return int(np.prod(batch, dtype=np.int64))


def _per_matrix(fn, a):
    """fn applied to each matrix of a stack (leading axes), results stacked."""
    batch = a.shape[:-2]
    flat = a.reshape((_count(batch),) + a.shape[-2:])  # (not -1: ambiguous for empty matrices)
    outs = [fn(m) for m in flat]
    return np.stack(outs).reshape(batch + outs[0].shape) if outs else np.zeros(batch + a.shape[-2:], a.dtype)


def _matrix_aval(name, a, complex_ok: bool = False):
    if a.ndim < 2:
        raise ShapeError(f"{name}: expected a matrix or a stack of them (shape (..., m, n)), got shape {a.shape}")
    if not is_float(a.dtype) or (a.dtype.kind == "c" and not complex_ok):
        raise FgradTypeError(f"{name}: expected a real floating-point matrix, got dtype {a.dtype}")


def swaps_to_permutation(piv: np.ndarray, m: int) -> np.ndarray:
    """perm with a[perm] = L U from LAPACK's pivots (row i swapped with row piv[i], in turn)."""
    perm = np.arange(m)
    for i, p in enumerate(piv):
        perm[i], perm[p] = perm[p], perm[i]
    return perm


# --- lu_pivots: the row permutation -----------------------------------------------------------

lu_pivots_p = Primitive("lu_pivots")


def _lu_pivots_impl(a, *, swaps, xp):
    sl = _scipy_linalg(xp)
    m = a.shape[-2]

    def one(mat):
        with np.errstate(all="ignore"):
            _, piv = sl.lu_factor(mat, check_finite=False)
        return piv.astype(np.int32) if swaps else swaps_to_permutation(piv, m).astype(np.int64)
    batch = a.shape[:-2]
    flat = a.reshape((_count(batch),) + a.shape[-2:])
    outs = [one(mat) for mat in flat]
    k = min(a.shape[-2:]) if swaps else m
    return np.stack(outs).reshape(batch + (k,)) if outs else np.zeros(batch + (k,), np.int32 if swaps else np.int64)


def _lu_pivots_aval(a, *, swaps):
    _matrix_aval("lu", a, complex_ok=True)
    if swaps:
        return ShapedArray(a.shape[:-2] + (min(a.shape[-2:]),), np.dtype(np.int32))
    return ShapedArray(a.shape[:-1], np.dtype(np.int64))


lu_pivots_p.def_impl(_lu_pivots_impl)
lu_pivots_p.def_abstract_eval(_lu_pivots_aval)
def_nondiff(lu_pivots_p)
lu_pivots_p.def_batch(_batch_leading(lu_pivots_p))


def lu_pivots(a, swaps: bool = False):
    """perm (..., m), int64, with a[perm] = L U for the partially pivoted LU of `a`; with
    `swaps`, LAPACK's pivots instead (..., min(m, n)), int32: row i was swapped with row piv[i]."""
    return lu_pivots_p.bind(a, swaps=bool(swaps))


swaps_to_perm_p = Primitive("lu_swaps_to_permutation")


def _swaps_to_perm_impl(piv, *, m, xp):
    host = piv if xp is np else xp.asnumpy(piv)
    flat = host.reshape((_count(host.shape[:-1]), host.shape[-1]))
    out = np.stack([swaps_to_permutation(p, m) for p in flat]) if flat.shape[0] else np.zeros((0, m), np.int64)
    out = out.reshape(host.shape[:-1] + (m,)).astype(np.int64)
    return out if xp is np else xp.asarray(out)


def _swaps_to_perm_aval(piv, *, m):
    if piv.ndim < 1 or piv.dtype.kind not in "iu":
        raise FgradTypeError(f"lu_solve: pivots must be an integer array (..., k), got {piv.dtype}{list(piv.shape)}")
    return ShapedArray(piv.shape[:-1] + (m,), np.dtype(np.int64))


swaps_to_perm_p.def_impl(_swaps_to_perm_impl)
swaps_to_perm_p.def_abstract_eval(_swaps_to_perm_aval)
def_nondiff(swaps_to_perm_p)
swaps_to_perm_p.def_batch(lambda n, vals, dims, **params: (swaps_to_perm_p.bind(*batch_front(n, vals, dims), **params), 0))


def swaps_to_perm(piv, m: int):
    """The permutation perm (a[perm] = L U) of m rows from LAPACK's pivots (lu_factor's piv)."""
    return swaps_to_perm_p.bind(piv, m=int(m))


# --- lu_packed: L and U in one array ----------------------------------------------------------

lu_packed_p = Primitive("lu_packed")


def _lu_packed_impl(a, perm, *, xp):
    sl = _scipy_linalg(xp)

    def one(mat):
        with np.errstate(all="ignore"):
            return sl.lu_factor(mat, check_finite=False)[0]
    return _per_matrix(one, a) if a.ndim > 2 else one(a)


def _lu_packed_aval(a, perm):
    _matrix_aval("lu", a, complex_ok=True)
    return ShapedArray(a.shape, a.dtype)


def _eye_like(x, n, shape):
    """The (n, n) identity broadcast over the batch axes of `shape` (its last two are n, n)."""
    eye = np.eye(n, dtype=aval_of(x).dtype)
    return broadcast_in_dim(eye, shape, (len(shape) - 2, len(shape) - 1))


def lu_factors(packed):
    """(L (m, m), U (n, n)) of JAX's lu_jvp: the packed factors padded with identity blocks."""
    shape = shape_of(packed)
    m, n = shape[-2:]
    k = min(m, n)
    nb = len(shape) - 2
    batch = shape[:-2]
    lower = tril(slice(packed, (0,) * (nb + 2), batch + (m, k)), -1)
    lower = pad(lower, ((0, 0),) * nb + ((0, 0), (0, m - k)))
    lower = add(lower, _eye_like(packed, m, batch + (m, m)))
    upper = triu(slice(packed, (0,) * (nb + 2), batch + (k, n)))
    upper = pad(upper, ((0, 0),) * nb + ((0, n - k), (0, 0)))
    if n > k:
        extra = np.zeros((n, n), aval_of(packed).dtype)
        extra[k:, k:] = np.eye(n - k)
        upper = add(upper, broadcast_in_dim(extra, batch + (n, n), (nb, nb + 1)))
    return lower, upper


def permutation_matrix(perm, m, dtype):
    """P (..., m, m) with P[i, perm[i]] = 1, so that P @ a = a[perm] (a one-hot comparison:
    batches and transposes like any matrix)."""
    shape = shape_of(perm)
    full = shape + (m,)
    rows = broadcast_in_dim(perm, full, tuple(range(len(shape))))
    cols = broadcast_in_dim(np.arange(m, dtype=np.int64), full, (len(full) - 1,))
    return convert_element_type(eq(rows, cols), dtype)


def _right_solve_upper(u, b):
    """b U^-1, from U^T X^T = b^T."""
    return _mT(triangular_solve(u, _mT(b), lower=False, transpose_a=True))


def _lu_packed_jvp(primals, tangents):
    a, perm = primals
    a_dot = tangents[0]
    out = lu_packed_p.bind(a, perm)
    if a_dot is None:
        return out, None
    m = shape_of(a)[-2]
    lower, upper = lu_factors(out)
    x = _mm(permutation_matrix(perm, m, aval_of(a).dtype), a_dot)
    lau = _right_solve_upper(upper, triangular_solve(lower, x, lower=True))
    return out, add(_mm(lower, tril(lau, -1)), _mm(triu(lau), upper))


def _lu_packed_vjp(needs, ct, out, a, perm):
    if not needs[0]:
        return [None, None]
    m = shape_of(a)[-2]
    lower, upper = lu_factors(out)
    ct_lau = add(tril(_mm(_mT(lower), ct), -1), triu(_mm(ct, _mT(upper))))
    ct_la = _mT(triangular_solve(upper, _mT(ct_lau), lower=False))        # ct_lau U^-T
    ct_x = triangular_solve(lower, ct_la, lower=True, transpose_a=True)   # L^-T ct_la
    return [_mm(_mT(permutation_matrix(perm, m, aval_of(a).dtype)), ct_x), None]


lu_packed_p.def_impl(_lu_packed_impl)
lu_packed_p.def_abstract_eval(_lu_packed_aval)
lu_packed_p.def_jvp(_lu_packed_jvp)
lu_packed_p.def_vjp(_lu_packed_vjp)
lu_packed_p.def_batch(_batch_leading(lu_packed_p))


def lu_packed(a, perm):
    """L (strictly lower part, unit diagonal implied) and U (upper part) of a[perm] = L U,
    packed as LAPACK's getrf; perm must be lu_pivots(a)."""
    return lu_packed_p.bind(a, perm)


# --- values only: schur and hessenberg ----------------------------------------------------------

def _no_derivative(name):
    def rule(*args, **params):
        raise DifferentiationError(
            f"{name}: no derivative: its factors are not unique (JAX does not differentiate {name} "
            f"either). Differentiate a function of the matrix that does not depend on the choice of "
            f"factors (eigenvalues: fgrad.numpy.linalg.eigvals; matrix functions: "
            f"fgrad.scipy.linalg.funm/expm), or stop the gradient with fgrad.stop_gradient.")
    return rule


def _def_values_only(prim, impl, aval_rule, name):
    prim.def_impl(impl)
    prim.def_abstract_eval(aval_rule)
    prim.def_jvp(_no_derivative(name))
    prim.def_vjp(_no_derivative(name))
    prim.def_batch(_batch_leading(prim))


schur_p = Primitive("schur")


def _schur_impl(a, *, output, xp):
    sl = _scipy_linalg(xp)
    n = a.shape[-1]
    dtype = complex_dtype(a.dtype) if output == "complex" else a.dtype

    def one(mat):
        t, z = sl.schur(mat, output=output, check_finite=False)
        return _pack_impl(np, (t, z), 0).astype(dtype)
    flat = a.reshape((_count(a.shape[:-2]), n, n))
    return np.stack([one(m) for m in flat]).reshape(a.shape[:-2] + (2 * n * n,)) if flat.shape[0] else \
        np.zeros(a.shape[:-2] + (2 * n * n,), dtype)


def _square(name, a):
    _matrix_aval(name, a)
    if a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"{name}: expected a square matrix (or a stack, shape (..., n, n)), got shape {a.shape}")


def _schur_aval(a, *, output):
    _square("schur", a)
    n = a.shape[-1]
    dtype = complex_dtype(a.dtype) if output == "complex" else a.dtype
    return _packed_aval(a.shape[:-2], ((n, n), (n, n)), dtype)


_def_values_only(schur_p, _schur_impl, _schur_aval, "schur")


def schur(a, output: str = "real"):
    """(T, Z) with a = Z T Z^H: T quasi-upper-triangular (output='real') or upper triangular
    (output='complex'), Z orthogonal (unitary). Values only."""
    n = aval_of(a).shape[-1]
    return tuple(_split(schur_p.bind(a, output=output), ((n, n), (n, n))))


hessenberg_p = Primitive("hessenberg")


def _hessenberg_impl(a, *, xp):
    sl = _scipy_linalg(xp)
    n = a.shape[-1]

    def one(mat):
        h, q = sl.hessenberg(mat, calc_q=True, check_finite=False)
        return _pack_impl(np, (h, q), 0)
    flat = a.reshape((_count(a.shape[:-2]), n, n))
    return np.stack([one(m) for m in flat]).reshape(a.shape[:-2] + (2 * n * n,)) if flat.shape[0] else \
        np.zeros(a.shape[:-2] + (2 * n * n,), a.dtype)


def _hessenberg_aval(a):
    _square("hessenberg", a)
    n = a.shape[-1]
    return _packed_aval(a.shape[:-2], ((n, n), (n, n)), a.dtype)


_def_values_only(hessenberg_p, _hessenberg_impl, _hessenberg_aval, "hessenberg")


def hessenberg(a):
    """(H, Q) with a = Q H Q^T, H upper Hessenberg, Q orthogonal. Values only."""
    n = aval_of(a).shape[-1]
    return tuple(_split(hessenberg_p.bind(a), ((n, n), (n, n))))


__all__ = ["lu_pivots", "lu_pivots_p", "swaps_to_perm", "swaps_to_perm_p", "lu_packed", "lu_packed_p", "lu_factors", "permutation_matrix",
           "swaps_to_permutation", "schur", "schur_p", "hessenberg", "hessenberg_p"]
