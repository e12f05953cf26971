"""Matrix functions and solvers beyond fgrad.ops.linalg: pinv, expm, sqrtm, the Sylvester
equation and banded systems.

Matrix primitives act on the last two axes (leading axes are batch axes, equal for every
operand) unless a docstring says otherwise. Every rule is written with fgrad ops, so
derivatives compose to any order: expm's derivative is itself an expm (of a block matrix),
sqrtm's a Sylvester solve, and the Sylvester solve's another Sylvester solve.
"""
from __future__ import annotations

import numpy as np

from ..core.avals import ShapedArray
from ..core.errors import FgradTypeError, FgradValueError, ShapeError
from ..core.primitive import Primitive
from ..core.rules import shape_of
from ..core.trace import aval_of
from .elementwise import add, add_tangents, mul, neg, sub
from .linalg import (
    _batch_leading,
    _square_aval,
    batched_matmul,
    conj_if_complex,
    matrix_adjoint,
    matrix_transpose,
)
from .reduce import reduce_sum
from .shape import broadcast_in_dim, concatenate, pad, reshape, slice

_mm = batched_matmul
_mT = matrix_transpose
_mH = matrix_adjoint


def _scipy_linalg(xp):
    """scipy.linalg, or CuPy's for GPU arrays."""
    if xp is np:
        # SciPy loads slowly (~130 ms): imported on first use, not with fgrad
        import scipy.linalg as sl
    else:
        # optional dependency (GPU arrays): imported only when a CuPy array is seen
        import cupyx.scipy.linalg as sl
    return sl


def _per_matrix(fn, xp, out_shape, out_dtype, *arrays):
    """fn applied to each matrix of equally batched stacks (SciPy's solvers take one at a time)."""
    if arrays[0].ndim == 2:
        return fn(*arrays)
    out = xp.empty(out_shape, out_dtype)
    flat = [a.reshape((-1,) + a.shape[-2:]) for a in arrays]
    of = out.reshape((-1,) + out_shape[-2:])
    for i in range(flat[0].shape[0]):
        of[i] = fn(*(f[i] for f in flat))
    return out


# --- pinv ---------------------------------------------------------------------------------------

pinv_p = Primitive("pinv")


def _pinv_aval(a, *, rcond):
    if a.ndim < 2:
        raise ShapeError(f"pinv: expected a matrix or a stack of them (shape (..., m, n)), got shape {a.shape}")
    if a.dtype.kind not in "fc":
        raise FgradTypeError(f"pinv: expected a floating-point matrix, got dtype {a.dtype}")
    return ShapedArray(a.shape[:-2] + (a.shape[-1], a.shape[-2]), a.dtype)


def pinv(a, rcond: float):
    """Moore-Penrose pseudo-inverse of the last two axes; singular values at or below
    rcond * (the largest) count as zero. Its derivative is that of a matrix of constant rank
    (pinv jumps where the rank changes)."""
    _pinv_aval(aval_of(a), rcond=rcond)
    return pinv_p.bind(a, rcond=float(rcond))


def _pinv_jvp(primals, tangents, *, rcond):
    # dP = -P dA P + P P^H dA^H (I - A P) + (I - P A) dA^H P^H P (Golub & Pereyra, 1973)
    (a,), (a_dot,) = primals, tangents
    p = pinv(a, rcond)
    a_dot_h = _mH(a_dot)
    left = _mm(_mm(p, _mH(p)), a_dot_h)
    right = _mm(_mm(a_dot_h, _mH(p)), p)
    out_dot = add(neg(_mm(_mm(p, a_dot), p)), sub(left, _mm(_mm(left, a), p)))
    return p, add(out_dot, sub(right, _mm(_mm(p, a), right)))


def _pinv_vjp(needs, ct, out, a, *, rcond):
    # the adjoint of the jvp's map in the Hermitian inner product (E -> X E Y becomes
    # C -> X^H C Y^H, E -> X E^H Y becomes C -> Y C^H X), applied to conj(ct) and conjugated:
    # JAX's transpose (for real matrices the plain transpose)
    p, ct_h = out, _mH(conj_if_complex(ct))
    ct = conj_if_complex(ct)
    pph, php = _mm(p, _mH(p)), _mm(_mH(p), p)
    g = neg(_mm(_mm(_mH(p), ct), _mH(p)))
    g = add(g, sub(_mm(ct_h, pph), _mm(_mm(a, p), _mm(ct_h, pph))))
    return [conj_if_complex(add(g, sub(_mm(php, ct_h), _mm(_mm(php, ct_h), _mm(p, a)))))]


pinv_p.def_impl(lambda a, *, rcond, xp: xp.linalg.pinv(a, rcond))
pinv_p.def_abstract_eval(_pinv_aval)
pinv_p.def_jvp(_pinv_jvp)
pinv_p.def_vjp(_pinv_vjp)
pinv_p.def_batch(_batch_leading(pinv_p))


# --- expm ---------------------------------------------------------------------------------------

expm_p = Primitive("expm")


def _square_same(name):
    def aval(a):
        _square_aval(name, a)
        return ShapedArray(a.shape, a.dtype)
    return aval


def expm(a):
    """Matrix exponential of the last two axes (SciPy's scaling and squaring)."""
    _square_aval("expm", aval_of(a))
    return expm_p.bind(a)


def frechet_expm(a, e):
    """L(A, E), the derivative of expm at A in direction E: the top-right block of
    expm([[A, E], [0, A]]) (Higham, Functions of Matrices, 3.2)."""
    shape = shape_of(a)
    nd, n = len(shape), shape[-1]
    zero = mul(a, np.zeros((), aval_of(a).dtype))
    block = concatenate([concatenate([a, e], nd - 1), concatenate([zero, a], nd - 1)], nd - 2)
    big = expm(block)
    return slice(big, (0,) * (nd - 2) + (0, n), shape[:-2] + (n, 2 * n))


expm_p.def_impl(lambda a, *, xp: _scipy_linalg(xp).expm(a))
expm_p.def_abstract_eval(_square_same("expm"))
expm_p.def_jvp(lambda primals, tangents: (expm(primals[0]), frechet_expm(primals[0], tangents[0])))
# L(A, .)^T = L(A^T, .)
expm_p.def_vjp(lambda needs, ct, out, a: [frechet_expm(_mT(a), ct)])
expm_p.def_batch(_batch_leading(expm_p))


# --- solve_sylvester: A X + X B = Q -----------------------------------------------------------

sylvester_p = Primitive("sylvester")


def _sylvester_aval(a, b, q):
    _square_aval("solve_sylvester", a)
    _square_aval("solve_sylvester", b)
    m, n = a.shape[-1], b.shape[-1]
    if q.shape != a.shape[:-2] + (m, n) or b.shape[:-2] != a.shape[:-2]:
        raise ShapeError(f"solve_sylvester: a of shape {a.shape} and b of shape {b.shape} need q of shape "
                         f"{a.shape[:-2] + (m, n)} (and equal batch axes), got {q.shape}")
    if not a.dtype == b.dtype == q.dtype:
        raise FgradTypeError(f"solve_sylvester: dtypes {a.dtype}, {b.dtype} and {q.dtype} differ "
                        "(fgrad.scipy.linalg promotes before binding)")
    return ShapedArray(q.shape, q.dtype)


def sylvester(a, b, q):
    """X with A X + X B = Q (A (..., m, m), B (..., n, n), Q (..., m, n)); unique when A and
    -B share no eigenvalue."""
    _sylvester_aval(aval_of(a), aval_of(b), aval_of(q))
    return sylvester_p.bind(a, b, q)


def _sylvester_impl(a, b, q, *, xp):
    solve = _scipy_linalg(xp).solve_sylvester
    return _per_matrix(solve, xp, q.shape, q.dtype, a, b, q)


def _sylvester_jvp(primals, tangents):
    (a, b, q), (a_dot, b_dot, q_dot) = primals, tangents
    x = sylvester(a, b, q)
    rhs = add_tangents(q_dot, None if a_dot is None else neg(_mm(a_dot, x)))
    rhs = add_tangents(rhs, None if b_dot is None else neg(_mm(x, b_dot)))
    return x, sylvester(a, b, rhs)


def _sylvester_vjp(needs, ct, out, a, b, q):
    q_bar = sylvester(_mT(a), _mT(b), ct)
    return [neg(_mm(q_bar, _mT(out))) if needs[0] else None,
            neg(_mm(_mT(out), q_bar)) if needs[1] else None,
            q_bar if needs[2] else None]


sylvester_p.def_impl(_sylvester_impl)
sylvester_p.def_abstract_eval(_sylvester_aval)
sylvester_p.def_jvp(_sylvester_jvp)
sylvester_p.def_vjp(_sylvester_vjp)
sylvester_p.def_batch(_batch_leading(sylvester_p))


# --- sqrtm: the principal square root ----------------------------------------------------------

sqrtm_p = Primitive("sqrtm")


def sqrtm(a):
    """The principal square root X (X @ X = A, eigenvalues in the right half-plane) of the last
    two axes. A real matrix needs a real root: one with an eigenvalue on the closed negative
    real axis is an error (pass it as a complex matrix)."""
    _square_aval("sqrtm", aval_of(a))
    return sqrtm_p.bind(a)


def _sqrtm_one(a):
    x = _scipy_linalg(np).sqrtm(a)
    if a.dtype.kind == "f" and x.dtype.kind == "c":
        if np.abs(x.imag).max() > 1e3 * np.finfo(a.dtype).eps * max(np.abs(x).max(), 1.0):
            raise FgradValueError(
                f"sqrtm: the {a.shape[0]}x{a.shape[1]} real matrix has an eigenvalue on the closed "
                "negative real axis, so it has no real principal square root; pass it as a complex "
                "matrix (a.astype(complex)), whose root is complex.")
        x = x.real
    return x.astype(a.dtype, copy=False)


def _sqrtm_impl(a, *, xp):
    if xp is not np:
        return _scipy_linalg(xp).sqrtm(a)
    return _per_matrix(_sqrtm_one, np, a.shape, a.dtype, a)


# X dX + dX X = dA: dX = sylvester(X, X, dA); the transpose solves with X^T
sqrtm_p.def_impl(_sqrtm_impl)
sqrtm_p.def_abstract_eval(_square_same("sqrtm"))
sqrtm_p.def_jvp(lambda primals, tangents: (lambda x: (x, sylvester(x, x, tangents[0])))(sqrtm(primals[0])))
sqrtm_p.def_vjp(lambda needs, ct, out, a: [sylvester(_mT(out), _mT(out), ct)])
sqrtm_p.def_batch(_batch_leading(sqrtm_p))


# --- banded_solve: A x = b (or A^T x = b) with A in LAPACK's banded storage -----------------------
# ab (l + u + 1, n) holds A[i, j] at ab[u + i - j, j]; b is (n, k). Not batched (SciPy solves one
# system at a time): vmap loops.

banded_solve_p = Primitive("banded_solve")


def _banded_aval(ab, b, *, lower, upper, transpose_a):
    if ab.ndim != 2 or ab.shape[0] != lower + upper + 1:
        raise ShapeError(f"solve_banded: with (l, u) = ({lower}, {upper}) the banded matrix must have shape "
                         f"({lower + upper + 1}, n), got {ab.shape}")
    if b.ndim != 2 or b.shape[0] != ab.shape[1]:
        raise ShapeError(f"solve_banded: ab of shape {ab.shape} needs b of shape ({ab.shape[1]}, k), got {b.shape}")
    if ab.dtype != b.dtype or ab.dtype.kind not in "fc":
        raise FgradTypeError(f"solve_banded: expected floating-point ab and b of one dtype, got {ab.dtype} "
                        f"and {b.dtype}")
    return ShapedArray(b.shape, b.dtype)


def banded_transpose_storage(ab, lower: int, upper: int):
    """Banded storage of A^T (bandwidths (upper, lower)) from that of A, on concrete arrays:
    row r' of the result is row l + u - r' of ab shifted by r' - l."""
    n = ab.shape[1]
    out = np.zeros_like(ab)
    for r in range(lower + upper + 1):
        shift = r - lower
        src = ab[lower + upper - r]
        if shift >= 0:
            out[r, :n - shift] = src[shift:]
        else:
            out[r, -shift:] = src[:n + shift]
    return out


def _banded_impl(ab, b, *, lower, upper, transpose_a, xp):
    solve = _scipy_linalg(xp).solve_banded
    if transpose_a:
        return solve((upper, lower), banded_transpose_storage(ab, lower, upper), b)
    return solve((lower, upper), ab, b)


def banded_solve(ab, b, *, lower: int, upper: int, transpose_a: bool = False):
    """x with A x = b (A^T x = b with transpose_a), A given by its banded storage `ab`
    (A[i, j] = ab[upper + i - j, j]) with `lower` and `upper` off-diagonals; b (n, k)."""
    _banded_aval(aval_of(ab), aval_of(b), lower=lower, upper=upper, transpose_a=transpose_a)
    return banded_solve_p.bind(ab, b, lower=int(lower), upper=int(upper), transpose_a=bool(transpose_a))


def _shift_rows(x, s: int):
    """y[i] = x[i + s] along the first axis, zero where i + s is outside."""
    n = shape_of(x)[0]
    if s == 0:
        return x
    if abs(s) >= n:
        return mul(x, np.zeros((), aval_of(x).dtype))
    rest = shape_of(x)[1:]
    zeros = ((0, 0),) * len(rest)
    if s > 0:
        return pad(slice(x, (s,) + (0,) * len(rest), (n,) + rest), ((0, s),) + zeros)
    return pad(slice(x, (0,) * (len(rest) + 1), (n + s,) + rest), ((-s, 0),) + zeros)


def _band_row(ab, r, k: int):
    """Row r of the banded storage, as a column broadcast over k right-hand sides."""
    n = shape_of(ab)[1]
    return broadcast_in_dim(reshape(slice(ab, (r, 0), (r + 1, n)), (n,)), (n, k), (0,))


def _band_times(ab_dot, x, lower, upper, transpose_a):
    """op(dA) @ x for dA in banded storage; op is the transpose when transpose_a."""
    total = None
    for r in range(lower + upper + 1):
        row = _band_row(ab_dot, r, shape_of(x)[1])
        if transpose_a:     # (dA^T x)[i] = sum_r ab[r, i] x[i + r - u]
            term = mul(row, _shift_rows(x, r - upper))
        else:               # (dA x)[i] = sum_r ab[r, i + u - r] x[i + u - r]
            term = _shift_rows(mul(row, x), upper - r)
        total = add_tangents(total, term)
    return total


def _band_outer(y, x, lower, upper):
    """The banded storage of -(y x^T) on A's band: row r, column j holds -y[j + r - u] . x[j]
    (summed over the right-hand sides)."""
    rows = []
    for r in range(lower + upper + 1):
        rows.append(reduce_sum(mul(_shift_rows(y, r - upper), x), (1,)))
    n = shape_of(x)[0]
    return neg(concatenate([reshape(v, (1, n)) for v in rows], 0))


def _banded_jvp(primals, tangents, *, lower, upper, transpose_a):
    (ab, b), (ab_dot, b_dot) = primals, tangents
    x = banded_solve(ab, b, lower=lower, upper=upper, transpose_a=transpose_a)
    rhs = None if ab_dot is None else neg(_band_times(ab_dot, x, lower, upper, transpose_a))
    rhs = add_tangents(rhs, b_dot)
    return x, banded_solve(ab, rhs, lower=lower, upper=upper, transpose_a=transpose_a)


def _banded_vjp(needs, ct, out, ab, b, *, lower, upper, transpose_a):
    b_bar = banded_solve(ab, ct, lower=lower, upper=upper, transpose_a=not transpose_a)
    ab_bar = None
    if needs[0]:   # A_bar = -b_bar x^T (for A^T x = b: -x b_bar^T), kept on the band
        ab_bar = _band_outer(out, b_bar, lower, upper) if transpose_a else _band_outer(b_bar, out, lower, upper)
    return [ab_bar, b_bar if needs[1] else None]


banded_solve_p.def_impl(_banded_impl)
banded_solve_p.def_abstract_eval(_banded_aval)
banded_solve_p.def_jvp(_banded_jvp)
banded_solve_p.def_vjp(_banded_vjp)

__all__ = ["pinv", "pinv_p", "expm", "expm_p", "frechet_expm", "sylvester", "sylvester_p", "sqrtm", "sqrtm_p",
           "banded_solve", "banded_solve_p", "banded_transpose_storage"]
