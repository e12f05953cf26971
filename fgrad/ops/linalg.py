"""Linear-algebra primitives: dot_general (the one contraction), triangular masks, and
the matrix functions inv, solve, triangular_solve, det, logabsdet, cholesky.

Matrix primitives act on the last two axes; leading axes are batch axes, equal for all
operands (fgrad.numpy.linalg broadcasts before binding). Every rule is written with fgrad
ops, so rules are themselves differentiable to any order.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..core.avals import ShapedArray, is_float
from ..core.errors import FgradTypeError, ShapeError
from ..core.primitive import Primitive
from ..core.rules import def_linear, def_nondiff, shape_of
from ..core.trace import aval_of
from .complex import conj, real_dtype
from .elementwise import (
    add,
    add_tangents,
    const,
    convert_element_type,
    def_bilinear,
    mul,
    neg,
)
from .reduce import reduce_sum
from .shape import batch_front, broadcast_in_dim, move_to_front, transpose


def _prod(xs) -> int:
    n = 1
    for d in xs:
        n *= int(d)
    return n


def _ranges_like(*xs):
    start = 0
    for x in xs:
        yield tuple(range(start, start + len(x)))
        start += len(x)


def _remaining(n, *groups):
    used = set()
    for g in groups:
        used.update(g)
    return tuple(i for i in range(n) if i not in used)


# --- dot_general --------------------------------------------------------------------------
# dimension_numbers = ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch));
# output layout: batch dims, then lhs free dims, then rhs free dims (each in axis order).

dot_general_p = Primitive("dot_general")


def _as_bmk(x, batch, free, contract, xp):
    """View/copy `x` as (B, M, K) (or (M, K) when there are no batch axes) for matmul.
    Avoids a copy when the axes are already in (batch, free, contract) or
    (batch, contract, free) order: the latter is a transposed view BLAS handles directly."""
    shape = x.shape
    B = _prod(shape[i] for i in batch)
    M = _prod(shape[i] for i in free)
    K = _prod(shape[i] for i in contract)
    lead = (B,) if batch else ()
    ident = tuple(range(x.ndim))
    if tuple(batch) + tuple(free) + tuple(contract) == ident:
        return x.reshape(lead + (M, K))
    if tuple(batch) + tuple(contract) + tuple(free) == ident:
        return xp.swapaxes(x.reshape(lead + (K, M)), -1, -2)
    return xp.transpose(x, tuple(batch) + tuple(free) + tuple(contract)).reshape(lead + (M, K))


_ONEDNN: list = []  # fgrad.ops.nn.onednn, imported on first use (fgrad.ops.nn imports this module)


def matmul_2d(a: Any, b: Any, bias: Any = None, *, xp: Any) -> Any:
    """a @ b (+ bias along the rows) for 2-D operands, each row-major or a transposed view:
    oneDNN's GEMM where it applies (float32, large enough, oneDNN installed and running
    NumPy's BLAS's thread count: fgrad.ops.nn.onednn.gemm), else one BLAS call through NumPy.

    Args:
        a: [M, K]; b: [K, N]; bias: None or [N], the operands' dtype.
        xp: the array module.

    Returns:
        The [M, N] product, a new array.
    """
    if xp is np and a.dtype == np.float32:
        if not _ONEDNN:
            # (here, not at the top: fgrad.ops.nn imports this module, a cycle at import time)
            from .nn import onednn
            _ONEDNN.append(onednn)
        D = _ONEDNN[0]
        if a.shape[0] * a.shape[1] * b.shape[1] >= D.GEMM_MIN_MACS_THIN:  # (smaller: NumPy's, without asking)
            out = D.gemm(a, b, bias)
            if out is not None:
                return out
    out = xp.dot(a, b)
    if bias is not None:
        out += bias  # in place: no temporary
    return out


def _dot_general_impl(lhs, rhs, *, dimension_numbers, xp):
    (lc, rc), (lb, rb) = dimension_numbers
    if not lb and len(lc) == 1 and rhs.ndim <= 2 and (lhs.ndim <= 2 or lc[0] == lhs.ndim - 1):
        # matrix/vector products (and their transposes, which their VJPs bind): one BLAS call,
        # 15x faster on small operands than the general reshape-and-matmul path below
        a = lhs if lc[0] == lhs.ndim - 1 else lhs.T
        b = rhs if rc[0] == 0 else rhs.T
        if a.ndim > 2 and b.ndim == 2:  # np.dot skips BLAS above 2-D (~50x slower): fold the lead axes
            return matmul_2d(a.reshape(-1, a.shape[-1]), b, xp=xp).reshape(a.shape[:-1] + (b.shape[1],))
        if a.ndim == 2 and b.ndim == 2:
            return matmul_2d(a, b, xp=xp)
        return xp.dot(a, b)
    if not lb and not lc:  # outer products (the VJP of a matrix-vector product)
        return xp.multiply.outer(lhs, rhs)
    lf = _remaining(lhs.ndim, lc, lb)
    rf = _remaining(rhs.ndim, rc, rb)
    a = _as_bmk(lhs, lb, lf, lc, xp)                       # (B, M, K)
    b = xp.swapaxes(_as_bmk(rhs, rb, rf, rc, xp), -1, -2)  # (B, K, N)
    out = xp.matmul(a, b)
    return out.reshape(tuple(lhs.shape[i] for i in lb) + tuple(lhs.shape[i] for i in lf)
                       + tuple(rhs.shape[i] for i in rf))


def _dot_general_aval(lhs, rhs, *, dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    ls, rs = lhs.shape, rhs.shape

    def where():  # (built only for an error: formatting it costs more than the checks)
        return f"dot_general of shapes {ls} and {rs} with dimension_numbers {dimension_numbers}"
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise ShapeError(f"{where()}: lhs and rhs must name as many contracting (and batch) axes")
    for axes, nd in ((lc + lb, len(ls)), (rc + rb, len(rs))):
        for a in axes:
            if not 0 <= a < nd:
                raise ShapeError(f"{where()}: axes must be distinct and in range")
        if len(axes) > 1 and len(set(axes)) != len(axes):
            raise ShapeError(f"{where()}: axes must be distinct and in range")
    for kind, ls_, rs_ in (("contracting", lc, rc), ("batch", lb, rb)):
        for i, j in zip(ls_, rs_):
            if ls[i] != rs[j]:
                raise ShapeError(f"{where()}: {kind} axes {i} of lhs (size {ls[i]}) and {j} of rhs "
                                 f"(size {rs[j]}) differ")
    if lhs.dtype != rhs.dtype:
        raise FgradTypeError(f"{where()}: dtypes {lhs.dtype} and {rhs.dtype} differ "
                        "(fgrad.numpy promotes before binding)")
    lf = _remaining(len(ls), lc, lb)
    rf = _remaining(len(rs), rc, rb)
    return ShapedArray(tuple(ls[i] for i in lb) + tuple(ls[i] for i in lf)
                       + tuple(rs[i] for i in rf), lhs.dtype)


def _normalize_dimension_numbers(dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    return ((tuple(int(i) for i in lc), tuple(int(i) for i in rc)),
            (tuple(int(i) for i in lb), tuple(int(i) for i in rb)))


def dot_general(lhs, rhs, dimension_numbers):
    """Contract `lhs` and `rhs` (JAX's lax.dot_general): dimension_numbers =
    ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch)). Output axes: batch, lhs free, rhs free."""
    dimension_numbers = _normalize_dimension_numbers(dimension_numbers)
    _dot_general_aval(aval_of(lhs), aval_of(rhs), dimension_numbers=dimension_numbers)  # eager errors
    return dot_general_p.bind(lhs, rhs, dimension_numbers=dimension_numbers)


def _dot_general_transpose_lhs(ct, x_aval, y, dimension_numbers, swap_ans=False):
    """Cotangent of x in dot_general(x, y) (or of x in dot_general(y, x) when swap_ans)."""
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    x_kept = _remaining(x_aval.ndim, x_contract, x_batch)
    y_kept = _remaining(aval_of(y).ndim, y_contract, y_batch)
    if swap_ans:
        ans_batch, ans_y, _ = _ranges_like(x_batch, y_kept, x_kept)
    else:
        ans_batch, _, ans_y = _ranges_like(x_batch, x_kept, y_kept)
    x_contract_sorted_by_y = [x_contract[i] for i in np.argsort(y_contract, kind="stable")]
    layout = list(x_batch) + x_contract_sorted_by_y + list(x_kept)
    if layout == sorted(layout):
        # y first gives x's layout directly (e.g. the weight gradient x.T @ ct of a @): no transpose
        return dot_general(y, ct, ((y_kept, ans_y), (y_batch, ans_batch)))
    out_axes = np.argsort(list(x_batch) + list(x_kept) + x_contract_sorted_by_y, kind="stable")
    return transpose(dot_general(ct, y, ((ans_y, y_kept), (ans_batch, y_batch))),
                     tuple(int(i) for i in out_axes))


def _dot_general_transpose_rhs(ct, x, y_aval, dimension_numbers):
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    swapped = ((y_contract, x_contract), (y_batch, x_batch))
    return _dot_general_transpose_lhs(ct, y_aval, x, swapped, swap_ans=True)


def _dot_general_batch(n, vals, dims, *, dimension_numbers):
    """vmap: a batch axis on both operands becomes a new leading batch dimension; on one
    operand it is a free axis of that operand (moved to the front of its free axes)."""
    (lhs, rhs), (ld, rd) = vals, dims
    (lc, rc), (lb, rb) = dimension_numbers
    up = lambda axes: tuple(a + 1 for a in axes)  # noqa: E731
    if ld is not None and rd is not None:
        dn = ((up(lc), up(rc)), ((0,) + up(lb), (0,) + up(rb)))
        return dot_general(move_to_front(lhs, ld), move_to_front(rhs, rd), dn), 0
    if ld is not None:
        dn = ((up(lc), rc), (up(lb), rb))
        return dot_general(move_to_front(lhs, ld), rhs, dn), len(lb)
    n_lhs_free = aval_of(lhs).ndim - len(lc) - len(lb)
    dn = ((lc, up(rc)), (lb, up(rb)))
    return dot_general(lhs, move_to_front(rhs, rd), dn), len(lb) + n_lhs_free


dot_general_p.def_impl(_dot_general_impl)
dot_general_p.def_abstract_eval(_dot_general_aval)
def_bilinear(dot_general_p,
             lambda ct, lhs, rhs, *, dimension_numbers: _dot_general_transpose_lhs(
                 ct, aval_of(lhs), rhs, dimension_numbers),
             lambda ct, lhs, rhs, *, dimension_numbers: _dot_general_transpose_rhs(
                 ct, lhs, aval_of(rhs), dimension_numbers))
dot_general_p.def_batch(_dot_general_batch)


# --- matrix helpers (batched over leading axes) ---------------------------------------------

def matrix_transpose(x):
    """Swap the last two axes."""
    nd = aval_of(x).ndim
    return transpose(x, tuple(range(nd - 2)) + (nd - 1, nd - 2))


_mT = matrix_transpose


def conj_if_complex(x):
    """conj(x) for a complex x, x itself for a real one: complex rules are written once, as
    the real ones with conjugate transposes, and serve both."""
    return conj(x) if aval_of(x).dtype.kind == "c" else x


def matrix_adjoint(x):
    """The conjugate transpose of the last two axes (the transpose for real x)."""
    return conj_if_complex(matrix_transpose(x))


_mH = matrix_adjoint


def batched_matmul(a, b):
    """a @ b over the last two axes; leading (batch) axes must be equal."""
    nd = aval_of(a).ndim
    nb = nd - 2
    return dot_general(a, b, (((nd - 1,), (nb,)), (tuple(range(nb)), tuple(range(nb)))))


_mm = batched_matmul


def _expand_scalar(s, shape):
    """Broadcast a batch of scalars (shape[:-2]) over the last two axes of `shape`."""
    return broadcast_in_dim(s, shape, tuple(range(len(shape) - 2)))


def _trace_of_product(a, b):
    """trace(a @ b) over the last two axes, as sum(a^T * b) (no diagonal extraction needed)."""
    nd = aval_of(a).ndim
    return reduce_sum(mul(_mT(a), b), (nd - 2, nd - 1))


def _batch_leading(prim):
    """vmap rule of a primitive that maps over leading axes (it acts on the last two):
    every operand gets the batch axis first (unbatched ones are broadcast)."""
    def rule(n, vals, dims, **params):
        return prim.bind(*batch_front(n, vals, dims), **params), 0
    return rule


def _square_aval(name, a):
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"{name}: expected a square matrix (or a stack of them, shape (..., n, n)), "
                         f"got shape {a.shape}")
    if not is_float(a.dtype):
        raise FgradTypeError(f"{name}: expected a floating-point matrix, got dtype {a.dtype}")


def _square_to_square_aval(name):
    """Shape rule of a function of square matrices whose result is shaped like its input."""
    def aval(a):
        _square_aval(name, a)
        return ShapedArray(a.shape, a.dtype)
    return aval


# --- tril / triu: keep one triangle, zero the rest (linear, self-adjoint masks) ---------------

tril_p = Primitive("tril")
triu_p = Primitive("triu")


def _tri_aval(name):
    def aval(x, *, k):
        if x.ndim < 2:
            raise ShapeError(f"{name}: expected at least 2 dimensions, got shape {x.shape}")
        return ShapedArray(x.shape, x.dtype)
    return aval


tril_p.def_impl(lambda x, *, k, xp: xp.tril(x, k))
tril_p.def_abstract_eval(_tri_aval("tril"))
def_linear(tril_p, lambda ct, x_aval, *, k: tril(ct, k))
tril_p.def_batch(_batch_leading(tril_p))
triu_p.def_impl(lambda x, *, k, xp: xp.triu(x, k))
triu_p.def_abstract_eval(_tri_aval("triu"))
def_linear(triu_p, lambda ct, x_aval, *, k: triu(ct, k))
triu_p.def_batch(_batch_leading(triu_p))


def tril(x, k: int = 0):
    """Lower triangle of the last two axes (entries with j - i <= k); zeros elsewhere."""
    _tri_aval("tril")(aval_of(x), k=k)
    return tril_p.bind(x, k=int(k))


def triu(x, k: int = 0):
    """Upper triangle of the last two axes (entries with j - i >= k); zeros elsewhere."""
    _tri_aval("triu")(aval_of(x), k=k)
    return triu_p.bind(x, k=int(k))


def diagonal_part(x):
    """x with everything off the diagonal (of the last two axes) zeroed."""
    return tril(triu(x, 0), 0)


def _real_diagonal_part(x):
    """The real part of x's diagonal, as a matrix of x's dtype (zero off the diagonal)."""
    d = diagonal_part(x)
    dt = aval_of(x).dtype
    return d if dt.kind != "c" else convert_element_type(convert_element_type(d, real_dtype(dt)), dt)


def _strict_triangle(x, lower: bool):
    return tril(x, -1) if lower else triu(x, 1)


def hermitian_from_triangle(x, lower: bool):
    """The Hermitian (real: symmetric) matrix that the lower (upper) triangle of x stands for,
    as LAPACK's Hermitian routines read it: the strict triangle, its conjugate mirrored, and
    the real part of the diagonal (LAPACK ignores the diagonal's imaginary part)."""
    strict = _strict_triangle(x, lower)
    return add(add(strict, _mH(strict)), _real_diagonal_part(x))


def onto_hermitian_triangle(g, lower: bool):
    """The transpose of hermitian_from_triangle (in JAX's convention, and equally its adjoint
    in the Hermitian inner product): the cotangent of the triangle that is read."""
    return add(add(_strict_triangle(g, lower), _strict_triangle(_mH(g), lower)), _real_diagonal_part(g))


# --- inv ----------------------------------------------------------------------------------

inv_p = Primitive("inv")
inv_p.def_impl(lambda a, *, xp: xp.linalg.inv(a))


def inv(a):
    """Inverse of a square matrix (batched over leading axes)."""
    _square_aval("inv", aval_of(a))
    return inv_p.bind(a)


def _inv_jvp(primals, tangents):
    (a,), (a_dot,) = primals, tangents
    out = inv(a)
    return out, neg(_mm(_mm(out, a_dot), out))


def _inv_vjp(needs, ct, out, a):
    out_t = _mT(out)
    return [neg(_mm(_mm(out_t, ct), out_t))]


inv_p.def_abstract_eval(_square_to_square_aval("inv"))
inv_p.def_jvp(_inv_jvp)
inv_p.def_vjp(_inv_vjp)
inv_p.def_saves(inputs=False)
inv_p.def_batch(_batch_leading(inv_p))


# --- solve: a x = b, b of shape (..., n, k) ----------------------------------------------------

solve_p = Primitive("solve")
solve_p.def_impl(lambda a, b, *, xp: xp.linalg.solve(a, b))


def _system_aval(name, a, b, hint=""):
    """Shape rule of a linear solve: a square (..., n, n), b (..., n, k) of a's dtype."""
    _square_aval(name, a)
    if b.ndim != a.ndim or b.shape[:-2] != a.shape[:-2] or b.shape[-2] != a.shape[-1]:
        raise ShapeError(f"{name}: a of shape {a.shape} needs b of shape {a.shape[:-1]} + (k,), "
                         f"got {b.shape}{hint}")
    if b.dtype != a.dtype:
        raise FgradTypeError(f"{name}: dtypes {a.dtype} and {b.dtype} differ")
    return ShapedArray(b.shape, b.dtype)


def _solve_aval(a, b):
    return _system_aval("solve", a, b, " (fgrad.numpy.linalg.solve handles vectors and broadcasting)")


def solve(a, b):
    """x with a @ x = b, for a (..., n, n) and b (..., n, k)."""
    _solve_aval(aval_of(a), aval_of(b))
    return solve_p.bind(a, b)


def _solve_jvp(primals, tangents):
    (a, b), (a_dot, b_dot) = primals, tangents
    out = solve(a, b)
    rhs = add_tangents(None if a_dot is None else neg(_mm(a_dot, out)), b_dot)
    return out, solve(a, rhs)


def _solve_vjp(needs, ct, out, a, b):
    b_bar = solve(_mT(a), ct)
    return [neg(_mm(b_bar, _mT(out))) if needs[0] else None, b_bar if needs[1] else None]


solve_p.def_abstract_eval(_solve_aval)
solve_p.def_jvp(_solve_jvp)
solve_p.def_vjp(_solve_vjp)
solve_p.def_batch(_batch_leading(solve_p))


# --- triangular_solve: op(T) x = b, T = tril(a) or triu(a), op = identity or transpose --------

triangular_solve_p = Primitive("triangular_solve")


def _triangular_solve_impl(a, b, *, lower, transpose_a, xp):
    # imported on first use: CuPy is optional, and importing SciPy would add about a tenth
    # of a second to `import fgrad` for programs that never solve a triangular system
    if xp is np:
        # SciPy loads slowly (~130 ms): imported on first use, not with fgrad
        from scipy.linalg import solve_triangular
    else:
        # optional dependency (GPU arrays): imported only when a CuPy array is seen
        from cupyx.scipy.linalg import solve_triangular
    trans = 1 if transpose_a else 0
    if a.ndim == 2:
        return solve_triangular(a, b, lower=lower, trans=trans)
    out = xp.empty_like(b)  # one call per matrix: SciPy < 1.15 and CuPy do not batch
    af = a.reshape((-1,) + a.shape[-2:])
    bf = b.reshape((-1,) + b.shape[-2:])
    of = out.reshape((-1,) + b.shape[-2:])
    for i in range(af.shape[0]):
        of[i] = solve_triangular(af[i], bf[i], lower=lower, trans=trans)
    return out


def _triangular_solve_aval(a, b, *, lower, transpose_a):
    return _system_aval("triangular_solve", a, b)


def triangular_solve(a, b, *, lower: bool = True, transpose_a: bool = False):
    """x with op(T) @ x = b, where T is the lower (or upper) triangle of `a` (the other
    triangle is never read) and op(T) is T or T^T."""
    _triangular_solve_aval(aval_of(a), aval_of(b), lower=lower, transpose_a=transpose_a)
    return triangular_solve_p.bind(a, b, lower=bool(lower), transpose_a=bool(transpose_a))


def _triangle(x, lower):
    return tril(x) if lower else triu(x)


def _triangular_solve_jvp(primals, tangents, *, lower, transpose_a):
    (a, b), (a_dot, b_dot) = primals, tangents
    out = triangular_solve(a, b, lower=lower, transpose_a=transpose_a)
    rhs = None
    if a_dot is not None:
        t = _triangle(a_dot, lower)
        rhs = neg(_mm(_mT(t) if transpose_a else t, out))
    return out, triangular_solve(a, add_tangents(rhs, b_dot), lower=lower, transpose_a=transpose_a)


def _triangular_solve_vjp(needs, ct, out, a, b, *, lower, transpose_a):
    b_bar = triangular_solve(a, ct, lower=lower, transpose_a=not transpose_a)
    a_bar = None
    if needs[0]:
        a_bar = neg(_mm(out, _mT(b_bar)) if transpose_a else _mm(b_bar, _mT(out)))
        a_bar = _triangle(a_bar, lower)
    return [a_bar, b_bar if needs[1] else None]


triangular_solve_p.def_impl(_triangular_solve_impl)
triangular_solve_p.def_abstract_eval(_triangular_solve_aval)
triangular_solve_p.def_jvp(_triangular_solve_jvp)
triangular_solve_p.def_vjp(_triangular_solve_vjp)
triangular_solve_p.def_batch(_batch_leading(triangular_solve_p))


# --- det, logabsdet, slogdet_sign -----------------------------------------------------------

def _scalar_batch_aval(name):
    def aval(a):
        _square_aval(name, a)
        return ShapedArray(a.shape[:-2], a.dtype)
    return aval


def _def_trace_deriv(prim, gradient_t):
    """JVP and VJP of a scalar function f of each matrix from `gradient_t(a)`, the matrix G
    with d f(A)[E] = tr(G E) (so the gradient is G^T). Where f is real for a complex A
    (log|det A|), d f(A)[E] = Re tr(G E): the tangent takes the real part, and the transpose
    of Re is the cast of the real cotangent to complex."""

    def jvp(primals, tangents):
        (a,), (a_dot,) = primals, tangents
        out = prim.bind(a)
        return out, convert_element_type(_trace_of_product(gradient_t(a), a_dot), aval_of(out).dtype)

    def vjp(needs, ct, out, a):
        ct = convert_element_type(ct, aval_of(a).dtype)
        return [mul(_expand_scalar(ct, shape_of(a)), _mT(gradient_t(a)))]

    prim.def_jvp(jvp)
    prim.def_vjp(vjp)
    prim.def_saves(output=False)


det_p = Primitive("det")
det_p.def_impl(lambda a, *, xp: xp.linalg.det(a))
det_p.def_abstract_eval(_scalar_batch_aval("det"))


def det(a):
    """Determinant of the last two axes."""
    _square_aval("det", aval_of(a))
    return det_p.bind(a)


# --- adjugate: det's derivative, defined at singular matrices too --------------------------

adjugate_p = Primitive("adjugate")


def _adjugate_impl(a, *, xp):
    """adj(A) from the SVD A = U S V^T: adj(A) = det(U) det(V) V diag(c) U^T with
    c_i = prod_{j != i} s_j (prefix/suffix products, no division, so exact at rank n-1)."""
    n = a.shape[-1]
    if n == 0:
        return a.copy()
    u, s, vh = xp.linalg.svd(a)
    ones = xp.ones(s.shape[:-1] + (1,), s.dtype)
    pre = xp.cumprod(xp.concatenate([ones, s[..., :-1]], -1), -1)
    suf = xp.flip(xp.cumprod(xp.concatenate([ones, xp.flip(s[..., 1:], -1)], -1), -1), -1)
    sign = xp.linalg.det(u) * xp.linalg.det(vh)
    # A = U S V^H, so adj(A) = det(U) det(V^H) V adj(S) U^H (the conjugates matter for complex A)
    uh, v = xp.swapaxes(u, -1, -2), xp.swapaxes(vh, -1, -2)
    if a.dtype.kind == "c":
        uh, v = xp.conj(uh), xp.conj(v)
    v_c = v * (pre * suf)[..., None, :]
    return (sign[..., None, None] * (v_c @ uh)).astype(a.dtype)


def adjugate(a):
    """The adjugate (classical adjoint) of the last two axes: adj(A) A = det(A) I."""
    _square_aval("adjugate", aval_of(a))
    return adjugate_p.bind(a)


def _adjugate_tangent(a, e):
    """d adj(A)[E], exact at every A (singular too). adj(A) is a polynomial in A
    (Faddeev-LeVerrier: M_k = A M_{k-1} + c_{n-k+1} I, c_{n-k} = -tr(A M_k)/k, adj(A) =
    (-1)^(n+1) M_n); its tangent is carried through the recurrence with fgrad ops, so higher
    derivatives follow. The recurrence loses accuracy for large, badly scaled matrices; it
    serves the second and higher derivatives of det only (first ones use the SVD impl)."""
    shape = aval_of(a).shape
    n = shape[-1]
    eye = broadcast_in_dim(np.eye(n, dtype=aval_of(a).dtype), shape, (len(shape) - 2, len(shape) - 1))
    zero = mul(eye, const(a, 0))
    m, m_dot = zero, zero
    c, c_dot = None, None  # c_{n-k+1} and its tangent; c_n = 1, a constant
    for k in range(1, n + 1):
        m_dot = add(_mm(e, m), _mm(a, m_dot))
        if c is None:
            m = add(_mm(a, m), eye)
        else:
            m = add(_mm(a, m), mul(eye, _expand_scalar(c, shape)))
            m_dot = add(m_dot, mul(eye, _expand_scalar(c_dot, shape)))
        scale = const(a, -1.0 / k)
        c = mul(_trace_of_product(a, m), scale)
        c_dot = mul(add(_trace_of_product(e, m), _trace_of_product(a, m_dot)), scale)
    return m_dot if n % 2 == 1 else neg(m_dot)


def _adjugate_jvp(primals, tangents):
    (a,), (a_dot,) = primals, tangents
    return adjugate(a), _adjugate_tangent(a, a_dot)


def _adjugate_vjp(needs, ct, out, a):
    # adj_ij = d det / d A_ji, so d adj_ij / d A_kl is a Hessian of det, symmetric in the
    # index pairs; hence the transpose of E -> d adj[E] is C -> (d adj[C^T])^T.
    return [_mT(_adjugate_tangent(a, _mT(ct)))]


adjugate_p.def_impl(_adjugate_impl)
adjugate_p.def_abstract_eval(_square_to_square_aval("adjugate"))
adjugate_p.def_jvp(_adjugate_jvp)
adjugate_p.def_vjp(_adjugate_vjp)
adjugate_p.def_saves(output=False)
adjugate_p.def_batch(_batch_leading(adjugate_p))


# d det(A)[E] = tr(adj(A) E): the adjugate, unlike det(A) inv(A), exists at singular A
_def_trace_deriv(det_p, adjugate)
det_p.def_batch(_batch_leading(det_p))

logabsdet_p = Primitive("logabsdet")
logabsdet_p.def_impl(lambda a, *, xp: xp.linalg.slogdet(a)[1])


def _logabsdet_aval(a):
    _square_aval("logabsdet", a)
    return ShapedArray(a.shape[:-2], real_dtype(a.dtype))   # log|det| is real for complex a too


logabsdet_p.def_abstract_eval(_logabsdet_aval)


def logabsdet(a):
    """log |det a| of the last two axes (slogdet's second output)."""
    _square_aval("logabsdet", aval_of(a))
    return logabsdet_p.bind(a)


# d log|det A|[E] = tr(A^-1 E)
_def_trace_deriv(logabsdet_p, inv)
logabsdet_p.def_batch(_batch_leading(logabsdet_p))

slogdet_sign_p = Primitive("slogdet_sign")
slogdet_sign_p.def_impl(lambda a, *, xp: xp.linalg.slogdet(a)[0])
slogdet_sign_p.def_abstract_eval(_scalar_batch_aval("slogdet_sign"))
def_nondiff(slogdet_sign_p)
slogdet_sign_p.def_batch(_batch_leading(slogdet_sign_p))


def slogdet_sign(a):
    """Sign of det a (slogdet's first output); its derivative is zero."""
    _square_aval("slogdet", aval_of(a))
    return slogdet_sign_p.bind(a)


# --- cholesky: lower L with L L^T = a; only a's lower triangle is read ------------------------

cholesky_p = Primitive("cholesky")
cholesky_p.def_impl(lambda a, *, xp: xp.linalg.cholesky(a))


def cholesky(a):
    """Lower Cholesky factor L (L L^H = A) of the Hermitian (real: symmetric) positive-definite
    matrix A whose lower triangle is that of `a` (the strict upper triangle and the imaginary
    part of the diagonal are never read, as in LAPACK)."""
    _square_aval("cholesky", aval_of(a))
    return cholesky_p.bind(a)


def _phi(x):
    """Lower triangle with the diagonal halved."""
    return add(tril(x, -1), mul(const(x, 0.5), diagonal_part(x)))


def _solve_lower_adjoint(L, x):
    """L^-H x for lower-triangular L: L^-H = conj(L^-T), so conj(L^-T conj(x))."""
    return conj_if_complex(triangular_solve(L, conj_if_complex(x), lower=True, transpose_a=True))


def _cholesky_jvp(primals, tangents):
    (a,), (a_dot,) = primals, tangents
    L = cholesky(a)
    sym = hermitian_from_triangle(a_dot, True)  # the matrix a's lower triangle stands for
    tmp = triangular_solve(L, sym, lower=True)                       # L^-1 S
    x = triangular_solve(L, _mH(tmp), lower=True)                    # L^-1 S L^-H
    return L, _mm(L, _phi(x))


def _cholesky_vjp(needs, ct, out, a):
    # the adjoint of the JVP's map in the Hermitian inner product, applied to conj(ct) and
    # conjugated: JAX's transpose (for real matrices, the plain transpose)
    L = out
    p = _phi(_mm(_mH(L), conj_if_complex(ct)))
    y = _solve_lower_adjoint(L, p)                                   # L^-H P
    g = _mH(_solve_lower_adjoint(L, _mH(y)))                         # L^-H P L^-1
    return [onto_hermitian_triangle(conj_if_complex(g), True)]


cholesky_p.def_abstract_eval(_square_to_square_aval("cholesky"))
cholesky_p.def_jvp(_cholesky_jvp)
cholesky_p.def_vjp(_cholesky_vjp)
cholesky_p.def_saves(inputs=False)
cholesky_p.def_batch(_batch_leading(cholesky_p))

__all__ = ["dot_general", "dot_general_p", "matrix_transpose", "batched_matmul", "tril", "tril_p",
           "triu", "triu_p", "diagonal_part",
           "conj_if_complex", "matrix_adjoint", "hermitian_from_triangle", "onto_hermitian_triangle", "inv", "inv_p", "solve", "solve_p", "triangular_solve",
           "triangular_solve_p", "det", "det_p", "logabsdet", "logabsdet_p", "slogdet_sign",
           "slogdet_sign_p", "cholesky", "cholesky_p"]
