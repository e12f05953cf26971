"""Matrix decompositions: eigh, svd, qr and eig.

A primitive has one output, and a decomposition has several; each of these primitives
returns its factors packed in one array (each factor flattened over its matrix axes and
concatenated along a last axis, batch axes in front), and the function of the same name
splits it with slice and reshape. The rules receive and return packed arrays: a factor that
a program never uses gets a zero cotangent, like every other unused value.

Degenerate spectra. Eigenvector (singular-vector) derivatives divide by the gaps
w_j - w_i (s_j^2 - s_i^2): where two eigenvalues are equal the derivative of the vectors is
undefined and comes out inf/NaN, never a finite number that would be silently wrong (JAX's
eigh does the same). A factor that is not used (a wholly zero cotangent) contributes exactly
zero, also where a gap is zero (`_gap_product`), so the gradient of a function of the
eigenvalues (singular values) alone is finite at degenerate points, as JAX's symbolic zeros
make it there.

Gauges. Eigen- and singular vectors are unique up to sign (phase for eig); the rules give the
derivative of the branch LAPACK follows, which keeps each vector's normalisation (for eig:
v^H dv = 0). With full_matrices=True (svd) or mode='complete' (qr) the extra columns span the
orthogonal complement, whose basis is not unique: they are moved only as much as staying
orthogonal to the other columns requires (dU_perp = -U (dU^T U_perp)), so functions of the
complement subspace (U_perp U_perp^T) have exact derivatives.

Every rule is written with fgrad ops, so derivatives compose to any order.
"""
from __future__ import annotations

import numpy as np

from ..core.avals import ShapedArray
from ..core.errors import FgradTypeError, ShapeError
from ..core.primitive import Primitive
from ..core.rules import shape_of
from ..core.trace import aval_of
from .complex import complex, complex_dtype, conj, real, real_dtype
from .elementwise import (
    add,
    const,
    convert_element_type,
    div,
    eq,
    mul,
    ne,
    neg,
    select,
    sub,
)
from .linalg import (
    _batch_leading,
    _square_aval,
    batched_matmul,
    conj_if_complex,
    diagonal_part,
    hermitian_from_triangle,
    matrix_adjoint,
    matrix_transpose,
    onto_hermitian_triangle,
    solve,
    triangular_solve,
    tril,
)
from .reduce import reduce_sum
from .shape import broadcast_in_dim, concatenate, reshape, slice

_mm = batched_matmul
_mT = matrix_transpose
_mH = matrix_adjoint
_cj = conj_if_complex


def _prod(xs) -> int:
    n = 1
    for d in xs:
        n *= int(d)
    return n


# --- packing several factors into one array ---------------------------------------------------

def _pack_impl(xp, parts, nbatch: int):
    """Concrete factors (batch axes first) flattened over their other axes and concatenated."""
    batch = parts[0].shape[:nbatch]
    # the trailing size written out: -1 cannot be resolved when the batch is empty
    return xp.concatenate([xp.reshape(p, batch + (_prod(p.shape[nbatch:]),)) for p in parts], axis=-1)


def _packed_aval(batch: tuple, tails, dtype) -> ShapedArray:
    return ShapedArray(batch + (sum(_prod(t) for t in tails),), dtype)


def _join(parts, nbatch: int):
    """Factors (traced or concrete) packed as _pack_impl packs them."""
    batch = shape_of(parts[0])[:nbatch]
    return concatenate([reshape(p, batch + (_prod(shape_of(p)[nbatch:]),)) for p in parts], nbatch)


def _split(packed, tails):
    """The factors of a packed array, of shapes batch + tail for each tail."""
    shape = shape_of(packed)
    batch, nb = shape[:-1], len(shape) - 1
    out, start = [], 0
    for tail in tails:
        size = _prod(tail)
        part = slice(packed, (0,) * nb + (start,), batch + (start + size,))
        out.append(reshape(part, batch + tuple(tail)))
        start += size
    return out


# --- helpers on the matrix axes (batched over leading axes) ------------------------------------

def _cols(x, lo: int, hi: int):
    shape = shape_of(x)
    return slice(x, (0,) * (len(shape) - 1) + (lo,), shape[:-1] + (hi,))


def _rows(x, lo: int, hi: int):
    shape = shape_of(x)
    return slice(x, (0,) * (len(shape) - 2) + (lo, 0), shape[:-2] + (hi, shape[-1]))


def _diag_vector(x):
    """The diagonal of each square matrix, (..., n, n) -> (..., n)."""
    return reduce_sum(diagonal_part(x), (len(shape_of(x)) - 2,))


def _diag_matrix(v):
    """A diagonal matrix from each vector, (..., n) -> (..., n, n)."""
    shape = shape_of(v)
    nb = len(shape) - 1
    return diagonal_part(broadcast_in_dim(v, shape + (shape[-1],), tuple(range(nb)) + (nb + 1,)))


def _scale_columns(x, v):
    """x @ diag(v): column j of x times v[j]."""
    shape = shape_of(x)
    nb = len(shape) - 2
    return mul(x, broadcast_in_dim(v, shape, tuple(range(nb)) + (nb + 1,)))


def _scale_rows(x, v):
    """diag(v) @ x: row i of x times v[i]."""
    shape = shape_of(x)
    nb = len(shape) - 2
    return mul(x, broadcast_in_dim(v, shape, tuple(range(nb)) + (nb,)))


def _eye(like, n: int):
    """Identity matrices of like's dtype, broadcast over like's batch axes."""
    a = aval_of(like)
    shape = a.shape[:-2] + (n, n)
    return broadcast_in_dim(np.eye(n, dtype=a.dtype), shape, (len(shape) - 2, len(shape) - 1))


def _inverse_gaps(w):
    """F[i, j] = 1 / (w[j] - w[i]) off the diagonal (inf where they are equal), 0 on it."""
    shape = shape_of(w)
    nb, n = len(shape) - 1, shape[-1]
    mat = shape[:-1] + (n, n)
    batch = tuple(range(nb))
    gaps = sub(broadcast_in_dim(w, mat, batch + (nb + 1,)), broadcast_in_dim(w, mat, batch + (nb,)))
    eye = broadcast_in_dim(np.eye(n, dtype=aval_of(w).dtype), mat, (nb, nb + 1))
    return sub(div(const(w, 1.0), add(gaps, eye)), eye)


def _zero_matrices(x):
    """Boolean, x's shape: True on every entry of the matrices (last two axes) of x that are
    entirely zero. Not differentiable (a comparison)."""
    shape = shape_of(x)
    nb = len(shape) - 2
    count_dtype = real_dtype(aval_of(x).dtype)
    nonzero = reduce_sum(convert_element_type(ne(x, const(x, 0.0)), count_dtype), (nb, nb + 1))
    return broadcast_in_dim(eq(nonzero, np.zeros((), count_dtype)), shape, tuple(range(nb)))


def _gap_product(f, x):
    """f * x, but exactly 0 for a matrix x that is entirely zero: a factor that a program does
    not use (its cotangent is zero) contributes nothing even where a gap is zero, as a symbolic
    zero would. Only a wholly zero matrix is masked: a nonzero one meets an infinite f as
    inf or NaN, which is what marks the derivative undefined. f is replaced before the product
    (not the product after), so derivatives of this stay finite too."""
    return mul(select(_zero_matrices(x), const(x, 0.0), f), x)


def _real_part_as(x):
    """Re(x) in x's dtype: the part of a packed complex factor that is real (eigenvalues,
    singular values); the identity for real x."""
    dt = aval_of(x).dtype
    return x if dt.kind != "c" else convert_element_type(convert_element_type(x, real_dtype(dt)), dt)


def real_values(x):
    """Real eigenvalues (singular values) from a packed factor: a real array for complex x."""
    return convert_element_type(x, real_dtype(aval_of(x).dtype))


def _div_columns(x, s):
    """x @ diag(1 / s), exactly 0 for a matrix x that is entirely zero (see _gap_product)."""
    shape = shape_of(x)
    nb = len(shape) - 2
    inv = broadcast_in_dim(div(const(s, 1.0), s), shape, tuple(range(nb)) + (nb + 1,))
    return mul(x, select(_zero_matrices(x), const(x, 0.0), inv))


# --- eigh: symmetric eigendecomposition, reading one triangle -----------------------------------

eigh_p = Primitive("eigh")


def _eigh_tails(n):
    return ((n,), (n, n))


def _eigh_impl(a, *, lower, xp):
    w, v = xp.linalg.eigh(a, UPLO="L" if lower else "U")
    return _pack_impl(xp, (w, v), a.ndim - 2)


def _eigh_aval(a, *, lower):
    _square_aval("eigh", a)
    return _packed_aval(a.shape[:-2], _eigh_tails(a.shape[-1]), a.dtype)


def eigh(a, lower: bool = True):
    """(w, v): eigenvalues in ascending order (real, also for complex a) and orthonormal
    eigenvectors (columns) of the Hermitian (real: symmetric) matrix whose lower (upper)
    triangle is that of `a`; the other triangle and the imaginary part of the diagonal are
    never read. Batched over leading axes."""
    _eigh_aval(aval_of(a), lower=lower)
    w, v = _split(eigh_p.bind(a, lower=bool(lower)), _eigh_tails(aval_of(a).shape[-1]))
    return real_values(w), v


# Complex matrices (JAX's eigh_jvp_rule): the rules are the real ones with conjugate transposes;
# the eigenvalues are packed as complex numbers with zero imaginary part, and their tangents keep
# it zero (dw = Re diag(V^H dA V)). Each VJP is the adjoint of its JVP's map in the Hermitian
# inner product, applied to conj(ct) and conjugated: JAX's transpose (plain for real matrices).

def _eigh_jvp(primals, tangents, *, lower):
    (a,), (a_dot,) = primals, tangents
    packed = eigh_p.bind(a, lower=lower)
    w, v = _split(packed, _eigh_tails(shape_of(a)[-1]))
    x = _mm(_mm(_mH(v), hermitian_from_triangle(a_dot, lower)), v)   # V^H dA V
    w_dot = _real_part_as(_diag_vector(x))
    v_dot = _mm(v, _gap_product(_inverse_gaps(w), x))
    return packed, _join([w_dot, v_dot], len(shape_of(a)) - 2)


def _eigh_vjp(needs, ct, out, a, *, lower):
    tails = _eigh_tails(shape_of(a)[-1])
    w, v = _split(out, tails)
    ct_w, ct_v = _split(_cj(ct), tails)
    inner = add(_diag_matrix(_real_part_as(ct_w)), _gap_product(_inverse_gaps(w), _mm(_mH(v), ct_v)))
    return [onto_hermitian_triangle(_cj(_mm(_mm(v, inner), _mH(v))), lower)]


eigh_p.def_impl(_eigh_impl)
eigh_p.def_abstract_eval(_eigh_aval)
eigh_p.def_jvp(_eigh_jvp)
eigh_p.def_vjp(_eigh_vjp)
eigh_p.def_batch(_batch_leading(eigh_p))


# --- svd ----------------------------------------------------------------------------------------

svd_p = Primitive("svd")


def _svd_tails(shape, full_matrices):
    m, n = shape[-2:]
    k = min(m, n)
    return ((m, m if full_matrices else k), (k,), (n if full_matrices else k, n))


def _svd_impl(a, *, full_matrices, xp):
    u, s, vh = xp.linalg.svd(a, full_matrices=full_matrices)
    return _pack_impl(xp, (u, s, vh), a.ndim - 2)


def _svd_aval(a, *, full_matrices):
    if a.ndim < 2:
        raise ShapeError(f"svd: expected a matrix or a stack of them (shape (..., m, n)), got shape {a.shape}")
    if a.dtype.kind not in "fc":
        raise FgradTypeError(f"svd: expected a floating-point matrix, got dtype {a.dtype}")
    return _packed_aval(a.shape[:-2], _svd_tails(a.shape, full_matrices), a.dtype)


def svd(a, full_matrices: bool = False):
    """(u, s, vh) with a = u[..., :k] @ diag(s) @ vh[..., :k, :], k = min(m, n), singular values
    in descending order (real, also for complex a); with full_matrices, u is (m, m) and vh
    (n, n)."""
    _svd_aval(aval_of(a), full_matrices=full_matrices)
    u, s, vh = _split(svd_p.bind(a, full_matrices=bool(full_matrices)),
                      _svd_tails(aval_of(a).shape, full_matrices))
    return u, real_values(s), vh


def _phase_gauge(ds, s):
    """i Im(diag(ds)) / s as a diagonal matrix: for complex matrices, the part of U^H dA V's
    diagonal that turns the phases of U's columns (JAX's dUdV_diag; zero for real matrices)."""
    if aval_of(ds).dtype.kind != "c":
        return None
    d = diagonal_part(ds)
    return _div_columns(sub(d, _real_part_as(d)), s)


def _svd_jvp(primals, tangents, *, full_matrices):
    (a,), (a_dot,) = primals, tangents
    shape = shape_of(a)
    m, n = shape[-2:]
    k = min(m, n)
    packed = svd_p.bind(a, full_matrices=full_matrices)
    u_all, s, vh_all = _split(packed, _svd_tails(shape, full_matrices))
    u, v = _cols(u_all, 0, k), _mH(_rows(vh_all, 0, k))
    ds = _mm(_mm(_mH(u), a_dot), v)                                  # U^H dA V
    s_dot = _real_part_as(_diag_vector(ds))
    f = _inverse_gaps(mul(s, s))
    dss, sds = _scale_columns(ds, s), _scale_rows(ds, s)
    inner_u = _gap_product(f, add(dss, _mH(dss)))
    gauge = _phase_gauge(ds, s)
    u_dot = _mm(u, inner_u if gauge is None else add(inner_u, gauge))
    v_dot = _mm(v, _gap_product(f, add(sds, _mH(sds))))
    if m > k:   # the part of dA V outside span(U) turns U
        dav = _mm(a_dot, v)
        u_dot = add(u_dot, _div_columns(sub(dav, _mm(u, _mm(_mH(u), dav))), s))
    if n > k:
        dau = _mm(_mH(a_dot), u)
        v_dot = add(v_dot, _div_columns(sub(dau, _mm(v, _mm(_mH(v), dau))), s))
    if full_matrices and m > k:
        u_perp = _cols(u_all, k, m)
        u_dot = concatenate([u_dot, neg(_mm(u, _mm(_mH(u_dot), u_perp)))], len(shape) - 1)
    if full_matrices and n > k:
        v_perp = _mH(_rows(vh_all, k, n))
        v_dot = concatenate([v_dot, neg(_mm(v, _mm(_mH(v_dot), v_perp)))], len(shape) - 1)
    return packed, _join([u_dot, s_dot, _mH(v_dot)], len(shape) - 2)


def _svd_vjp(needs, ct, out, a, *, full_matrices):
    shape = shape_of(a)
    m, n = shape[-2:]
    k = min(m, n)
    tails = _svd_tails(shape, full_matrices)
    u_all, s, vh_all = _split(out, tails)
    cu_all, cs, cvh_all = _split(_cj(ct), tails)   # the adjoint's argument (see eigh)
    u, cu = _cols(u_all, 0, k), _cols(cu_all, 0, k)
    v, cv = _mH(_rows(vh_all, 0, k)), _mH(_rows(cvh_all, 0, k))
    if full_matrices and m > k:   # adjoint of dU_perp = -U (dU^H U_perp)
        cu = sub(cu, _mm(_cols(u_all, k, m), _mm(_mH(_cols(cu_all, k, m)), u)))
    if full_matrices and n > k:
        v_perp, cv_perp = _mH(_rows(vh_all, k, n)), _mH(_rows(cvh_all, k, n))
        cv = sub(cv, _mm(v_perp, _mm(_mH(cv_perp), v)))
    f = _inverse_gaps(mul(s, s))
    uc = _mm(_mH(u), cu)
    j = _gap_product(f, uc)
    q = _gap_product(f, _mm(_mH(v), cv))
    ds = add(_diag_matrix(_real_part_as(cs)),
             add(_scale_columns(add(j, _mH(j)), s), _scale_rows(add(q, _mH(q)), s)))
    gauge = _phase_gauge(uc, s)   # the phase term maps diagonals to themselves: self-adjoint
    if gauge is not None:
        ds = add(ds, gauge)
    g = _mm(_mm(u, ds), _mH(v))
    if m > k:
        g = add(g, _mm(_div_columns(sub(cu, _mm(u, _mm(_mH(u), cu))), s), _mH(v)))
    if n > k:
        g = add(g, _mm(u, _mH(_div_columns(sub(cv, _mm(v, _mm(_mH(v), cv))), s))))
    return [_cj(g)]


svd_p.def_impl(_svd_impl)
svd_p.def_abstract_eval(_svd_aval)
svd_p.def_jvp(_svd_jvp)
svd_p.def_vjp(_svd_vjp)
svd_p.def_batch(_batch_leading(svd_p))


# --- qr -----------------------------------------------------------------------------------------

qr_p = Primitive("qr")


def _qr_tails(shape, complete):
    m, n = shape[-2:]
    kq = m if complete else min(m, n)
    return ((m, kq), (kq, n))


def _qr_impl(a, *, complete, xp):
    q, r = xp.linalg.qr(a, mode="complete" if complete else "reduced")
    return _pack_impl(xp, (q, r), a.ndim - 2)


def _qr_aval(a, *, complete):
    if a.ndim < 2:
        raise ShapeError(f"qr: expected a matrix or a stack of them (shape (..., m, n)), got shape {a.shape}")
    if a.dtype.kind not in "fc":
        raise FgradTypeError(f"qr: expected a floating-point matrix, got dtype {a.dtype}")
    return _packed_aval(a.shape[:-2], _qr_tails(a.shape, complete), a.dtype)


def qr(a, complete: bool = False):
    """(q, r) with a = q @ r, q with orthonormal columns and r upper triangular: q (m, k) and
    r (k, n), k = min(m, n), or with `complete` q (m, m) and r (m, n). The derivative needs
    the leading min(m, n) columns of `a` linearly independent (r's diagonal nonzero)."""
    _qr_aval(aval_of(a), complete=complete)
    q, r = _split(qr_p.bind(a, complete=bool(complete)), _qr_tails(aval_of(a).shape, complete))
    return q, r


def _times_inv_upper(x, r):
    """x @ inv(r) for upper-triangular r."""
    return _mT(triangular_solve(r, _mT(x), lower=False, transpose_a=True))


def _times_inv_upper_h(x, r):
    """x @ inv(r)^H for upper-triangular r."""
    return _mH(triangular_solve(r, _mH(x), lower=False))


def _qr_square_tangent(q, r, a_dot):
    """(dQ, dR) of the reduced QR of a tall (or square) matrix (j-towns.github.io/papers/qr-derivative.pdf;
    for complex matrices JAX's qr_jvp_rule: the skew-Hermitian part also takes i Im(diag), which
    keeps R's diagonal real)."""
    c = _times_inv_upper(a_dot, r)
    om = _mm(_mH(q), c)
    low = tril(om, -1)
    skew = sub(low, _mH(low))
    if aval_of(om).dtype.kind == "c":
        d = diagonal_part(om)
        skew = add(skew, sub(d, _real_part_as(d)))
    return add(_mm(q, sub(skew, om)), c), _mm(sub(om, skew), r)


def _qr_square_cotangent(q, r, cq, cr):
    """The adjoint of _qr_square_tangent in the Hermitian inner product (for real matrices its
    transpose): the cotangent of a from those of Q and R. With M = R_bar R^H - Q^H Q_bar,
    Q^H dA R^-1 gets triu(M, 1) + tril(M^H, -1) + Re diag(M) (M through dR and dQ, less the
    adjoint of the skew-Hermitian part)."""
    m = sub(_mm(cr, _mH(r)), _mm(_mH(q), cq))
    return _times_inv_upper_h(add(cq, _mm(q, hermitian_from_triangle(m, False))), r)


def _qr_jvp(primals, tangents, *, complete):
    (a,), (a_dot,) = primals, tangents
    shape = shape_of(a)
    m, n = shape[-2:]
    last = len(shape) - 1
    packed = qr_p.bind(a, complete=complete)
    q, r = _split(packed, _qr_tails(shape, complete))
    if m < n:   # a = [X | Y]: Q R_X is the QR of X and R_Y = Q^H Y
        r_x = _cols(r, 0, m)
        q_dot, rx_dot = _qr_square_tangent(q, r_x, _cols(a_dot, 0, m))
        ry_dot = add(_mm(_mH(q_dot), _cols(a, m, n)), _mm(_mH(q), _cols(a_dot, m, n)))
        return packed, _join([q_dot, concatenate([rx_dot, ry_dot], last)], len(shape) - 2)
    q_k, r_k = _cols(q, 0, n), _rows(r, 0, n)
    q_dot, r_dot = _qr_square_tangent(q_k, r_k, a_dot)
    if complete and m > n:   # the complement moves only to stay orthogonal to Q_k
        q_dot = concatenate([q_dot, neg(_mm(q_k, _mm(_mH(q_dot), _cols(q, n, m))))], last)
        r_dot = concatenate([r_dot, mul(_rows(r, n, m), const(r, 0.0))], last - 1)
    return packed, _join([q_dot, r_dot], len(shape) - 2)


def _qr_vjp(needs, ct, out, a, *, complete):
    shape = shape_of(a)
    m, n = shape[-2:]
    tails = _qr_tails(shape, complete)
    q, r = _split(out, tails)
    cq, cr = _split(_cj(ct), tails)   # the adjoint's argument (see eigh)
    if m < n:
        y, cr_y = _cols(a, m, n), _cols(cr, m, n)
        g_x = _qr_square_cotangent(q, _cols(r, 0, m), add(cq, _mm(y, _mH(cr_y))), _cols(cr, 0, m))
        return [_cj(concatenate([g_x, _mm(q, cr_y)], len(shape) - 1))]
    q_k, cq_k = _cols(q, 0, n), _cols(cq, 0, n)
    if complete and m > n:
        cq_k = sub(cq_k, _mm(_cols(q, n, m), _mm(_mH(_cols(cq, n, m)), q_k)))
    return [_cj(_qr_square_cotangent(q_k, _rows(r, 0, n), cq_k, _rows(cr, 0, n)))]


qr_p.def_impl(_qr_impl)
qr_p.def_abstract_eval(_qr_aval)
qr_p.def_jvp(_qr_jvp)
qr_p.def_vjp(_qr_vjp)
qr_p.def_batch(_batch_leading(qr_p))


# --- eig: general (non-symmetric) eigendecomposition; complex results ---------------------------

eig_p = Primitive("eig")


def _eig_impl(a, *, xp):
    w, v = xp.linalg.eig(a)
    dt = complex_dtype(a.dtype)  # NumPy returns real arrays when every eigenvalue is real
    return _pack_impl(xp, (w.astype(dt, copy=False), v.astype(dt, copy=False)), a.ndim - 2)


def _eig_aval(a):
    _square_aval("eig", a)
    return _packed_aval(a.shape[:-2], _eigh_tails(a.shape[-1]), complex_dtype(a.dtype))


def eig(a):
    """(w, v): eigenvalues and unit-norm eigenvectors (columns) of a square matrix, always
    complex (as JAX; NumPy returns real arrays when every eigenvalue happens to be real)."""
    _eig_aval(aval_of(a))
    w, v = _split(eig_p.bind(a), _eigh_tails(aval_of(a).shape[-1]))
    return w, v


def _as_complex(x, dtype):
    return x if aval_of(x).dtype == dtype else complex(x, mul(x, const(x, 0.0)))


def _eig_jvp(primals, tangents):
    (a,), (a_dot,) = primals, tangents
    packed = eig_p.bind(a)
    w, v = _split(packed, _eigh_tails(shape_of(a)[-1]))
    z = solve(v, _mm(_as_complex(a_dot, aval_of(v).dtype), v))        # V^-1 dA V
    d = _mm(v, _gap_product(_inverse_gaps(w), z))
    nd = len(shape_of(a))
    # keep each column's norm and phase: dv_i -= v_i (v_i^H dv_i)
    v_dot = sub(d, _scale_columns(v, reduce_sum(mul(conj(v), d), (nd - 2,))))
    return packed, _join([_diag_vector(z), v_dot], nd - 2)


def _eig_vjp(needs, ct, out, a):
    nd = len(shape_of(a))
    w, v = _split(out, _eigh_tails(shape_of(a)[-1]))
    cw, cv = _split(ct, _eigh_tails(shape_of(a)[-1]))
    d_bar = sub(cv, _scale_columns(conj(v), reduce_sum(mul(cv, v), (nd - 2,))))
    z_bar = add(_diag_matrix(cw), _gap_product(_inverse_gaps(w), _mm(_mT(v), d_bar)))
    g = solve(_mT(v), _mm(z_bar, _mT(v)))                             # V^-T Z_bar V^T
    return [g if aval_of(a).dtype.kind == "c" else real(g)]


eig_p.def_impl(_eig_impl)
eig_p.def_abstract_eval(_eig_aval)
eig_p.def_jvp(_eig_jvp)
eig_p.def_vjp(_eig_vjp)
eig_p.def_batch(_batch_leading(eig_p))

__all__ = ["eigh", "eigh_p", "svd", "svd_p", "qr", "qr_p", "eig", "eig_p"]
