"""Linear algebra (fgrad.ops.linalg, fgrad.numpy products, fgrad.numpy.linalg) and
fgrad.scipy.special: forward values against NumPy/SciPy in float64, derivatives of
every function to second order in both modes, composition, and the contraction's speed."""

import numpy as onp
import pytest
import scipy.special as ss

import fgrad
import fgrad.numpy as np
import fgrad.scipy.special as fs
from fgrad.core.errors import ShapeError
from fgrad.ops import linalg as la
from fgrad.test_util import check_grads

RNG = onp.random.default_rng(1234)


def rand(*shape):
    return RNG.standard_normal(shape)


def spd(n, *batch):
    r = rand(*batch, n, n)
    return r @ onp.swapaxes(r, -1, -2) + n * onp.eye(n)


def well_conditioned(n, *batch):
    """Non-symmetric, well-conditioned matrices (positive determinant not assumed)."""
    return rand(*batch, n, n) + 2 * n ** 0.5 * onp.eye(n)


def close(got, want, rtol=1e-10, atol=1e-12):
    got = onp.asarray(got)
    assert got.shape == onp.shape(want), (got.shape, onp.shape(want))
    onp.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


# --- dot_general ------------------------------------------------------------------------

DOT_GENERAL_CASES = [
    ((3, 4), (4, 5), (((1,), (0,)), ((), ()))),           # a @ b
    ((4, 3), (4, 5), (((0,), (0,)), ((), ()))),           # a.T @ b
    ((3, 4), (5, 4), (((1,), (1,)), ((), ()))),           # a @ b.T
    ((2, 3, 4), (2, 4, 5), (((2,), (1,)), ((0,), (0,)))),  # batched
    ((4, 3, 2), (5, 4, 2), (((0,), (1,)), ((2,), (2,)))),  # batch axis last, contraction first
    ((3, 4, 5), (5, 3), (((2, 0), (0, 1)), ((), ()))),    # two contracting axes, out of order
    ((3,), (4,), (((), ()), ((), ()))),                   # outer product
    ((2, 3, 4, 5), (4, 2, 6), (((2,), (0,)), ((0,), (1,)))),
    ((), (3,), (((), ()), ((), ()))),
]


def _einsum_reference(sa, sb, dn):
    (lc, rc), (lb, rb) = dn
    la_ = list("abcdef"[:len(sa)])
    lr = list("ghijkl"[:len(sb)])
    for i, j in zip(lc + lb, rc + rb):
        lr[j] = la_[i]
    out = ([la_[i] for i in lb] + [la_[i] for i in range(len(sa)) if i not in lc + lb]
           + [lr[j] for j in range(len(sb)) if j not in rc + rb])
    return "".join(la_) + "," + "".join(lr) + "->" + "".join(out)


@pytest.mark.parametrize("sa,sb,dn", DOT_GENERAL_CASES)
def test_dot_general_forward_and_derivatives(sa, sb, dn):
    a, b = rand(*sa), rand(*sb)
    close(la.dot_general(a, b, dn), onp.einsum(_einsum_reference(sa, sb, dn), a, b))
    check_grads(lambda x, y: la.dot_general(x, y, dn), (a, b), order=2, modes=("fwd", "rev"))


def test_dot_general_shape_and_dtype_errors():
    with pytest.raises(ShapeError, match=r"\(3, 4\).*\(5, 6\)"):
        la.dot_general(rand(3, 4), rand(5, 6), (((1,), (0,)), ((), ())))
    with pytest.raises(TypeError, match="dtypes"):
        la.dot_general(rand(3, 4), rand(4, 5).astype(onp.float32), (((1,), (0,)), ((), ())))


def test_dot_general_keeps_float32_and_integers():
    a, b = rand(3, 4).astype(onp.float32), rand(4, 2).astype(onp.float32)
    assert la.dot_general(a, b, (((1,), (0,)), ((), ()))).dtype == onp.float32
    i, j = onp.arange(6).reshape(2, 3), onp.arange(12).reshape(3, 4)
    out = np.matmul(i, j)
    assert out.dtype == onp.int64 and (out == i @ j).all()


# --- products of fgrad.numpy ---------------------------------------------------------------

MATMUL_SHAPES = [((3,), (3,)), ((3,), (3, 4)), ((2, 3), (3,)), ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)),
                 ((2, 3), (5, 3, 4)), ((5, 2, 3), (5, 3, 4)), ((5, 1, 2, 3), (4, 3, 2)),
                 ((3,), (5, 3, 4)), ((5, 2, 3), (3,))]


@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES)
def test_matmul_matches_numpy_and_differentiates(sa, sb):
    a, b = rand(*sa), rand(*sb)
    close(np.matmul(a, b), onp.matmul(a, b))
    check_grads(np.matmul, (a, b), order=2, modes=("fwd", "rev"))


def test_matmul_errors_name_both_shapes():
    with pytest.raises(ShapeError, match=r"\(2, 3\).*\(4, 5\)"):
        np.matmul(rand(2, 3), rand(4, 5))
    with pytest.raises(ShapeError, match="at least 1-D"):
        np.matmul(2.0, rand(3))
    with pytest.raises(ShapeError, match="broadcast"):
        np.matmul(rand(2, 2, 3), rand(3, 3, 4))


def test_matmul_operator_on_tracers():
    a, b = rand(2, 3), rand(3, 4)
    g = fgrad.grad(lambda x: np.sum(x @ b))(a)
    close(g, onp.ones((2, 4)) @ b.T)
    g = fgrad.grad(lambda y: np.sum(a @ y))(b)  # ndarray @ tracer goes through __array_ufunc__
    close(g, a.T @ onp.ones((2, 4)))
    jaxpr = fgrad.make_jaxpr(lambda x, y: x @ y)(a, b)
    assert [e.primitive.name for e in jaxpr.eqns] == ["dot_general"]
    assert "f64[2,4]" in str(jaxpr)


@pytest.mark.parametrize("sa,sb", [((), (3,)), ((3,), ()), ((3,), (3,)), ((2, 3), (3,)),
                                   ((2, 3), (3, 4)), ((4, 2, 3), (5, 3, 6)), ((3,), (3, 2))])
def test_dot(sa, sb):
    a, b = rand(*sa), rand(*sb)
    close(np.dot(a, b), onp.dot(a, b))
    check_grads(np.dot, (a, b), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("sa,sb", [((3,), (3,)), ((2, 3), (4, 3)), ((2, 5, 3), (4, 3)), ((), (2,))])
def test_inner(sa, sb):
    a, b = rand(*sa), rand(*sb)
    close(np.inner(a, b), onp.inner(a, b))
    check_grads(np.inner, (a, b), order=2, modes=("fwd", "rev"))


def test_vdot_and_outer():
    a, b = rand(2, 3), rand(3, 2)
    close(np.vdot(a, b), onp.vdot(a, b))
    close(np.outer(a, b), onp.outer(a, b))
    check_grads(np.vdot, (a, b), order=2, modes=("fwd", "rev"))
    check_grads(np.outer, (a, rand(4)), order=2, modes=("fwd", "rev"))
    with pytest.raises(ShapeError):
        np.vdot(rand(3), rand(4))


@pytest.mark.parametrize("axes", [2, 0, ([1, 2], [0, 1]), ([2, 1], [1, 0]), (1, 0), ([-1], [1])])
def test_tensordot(axes):
    a, b = rand(3, 4, 5), rand(4, 5, 6)
    close(np.tensordot(a, b, axes), onp.tensordot(a, b, axes))
    check_grads(lambda x, y: np.tensordot(x, y, axes), (a, b), order=2, modes=("fwd", "rev"))


def test_tensordot_errors():
    with pytest.raises(ShapeError, match="size"):
        np.tensordot(rand(3, 4), rand(3, 4), 1)


EINSUM_CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]), ("ii->", [(3, 3)]), ("ii", [(3, 3)]),
    ("ii->i", [(3, 3)]), ("ij->ji", [(2, 3)]), ("ij", [(2, 3)]), ("ji", [(2, 3)]), ("i->", [(3,)]),
    ("...ij,...jk->...ik", [(5, 2, 3), (5, 3, 4)]), ("...ij,...jk", [(5, 1, 2, 3), (4, 3, 2)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("i,i->", [(3,), (3,)]), ("i,j->ij", [(3,), (4,)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]), ("ij,ij->ij", [(1, 3), (2, 3)]),
    ("ij,jk->ik", [(2, 1), (3, 4)]), ("iij->j", [(3, 3, 4)]), ("ijji->", [(2, 3, 3, 2)]),
    ("...ii->...i", [(4, 3, 3)]), ("abc,cd,bd->a", [(2, 3, 4), (4, 5), (3, 5)]),
    ("i...->...", [(3, 4, 5)]), ("ba,ab->", [(2, 3), (3, 2)]), ("ij,kl->", [(2, 3), (4, 5)]),
    ("i j , j k -> i k", [(2, 3), (3, 4)]), ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),
]


@pytest.mark.parametrize("subscripts,shapes", EINSUM_CASES)
def test_einsum(subscripts, shapes):
    ops = [rand(*s) for s in shapes]
    close(np.einsum(subscripts, *ops), onp.einsum(subscripts, *ops))
    check_grads(lambda *xs: np.einsum(subscripts, *xs), ops, order=2, modes=("fwd", "rev"))


def test_einsum_interleaved_and_errors():
    a, b = rand(2, 3), rand(3)
    close(np.einsum(a, [0, 1], b, [1]), onp.einsum(a, [0, 1], b, [1]))
    close(np.einsum(a, [0, 1], b, [1], [0]), onp.einsum(a, [0, 1], b, [1], [0]))
    close(np.einsum(a, [..., 1], b, [1], [...]), onp.einsum(a, [..., 1], b, [1], [...]))
    with pytest.raises(ShapeError, match="sizes 3 and 4"):
        np.einsum("ij,jk->ik", rand(2, 3), rand(4, 5))
    with pytest.raises(ShapeError, match="axes"):
        np.einsum("ij->i", rand(3))
    with pytest.raises(ValueError, match="operand"):
        np.einsum("ij,jk->ik", rand(2, 3))
    with pytest.raises(ValueError, match="does not appear"):
        np.einsum("ij->k", rand(2, 3))


@pytest.mark.parametrize("optimize", [None, "optimal", ["einsum_path", (0, 1, 2), (0, 1)],
                                      ["einsum_path", (1,), (0, 2), (0, 1), (0, 1)]])
def test_einsum_many_operands_and_paths(optimize):
    ops = [rand(2, 3), rand(3, 4), rand(4, 5), rand(5, 2)]
    close(np.einsum("ij,jk,kl,li->", *ops, optimize=optimize), onp.einsum("ij,jk,kl,li->", *ops))
    check_grads(lambda *xs: np.einsum("ij,jk,kl,lm->im", *xs, optimize=optimize), ops, order=2,
                modes=("fwd", "rev"))


def test_einsum_trace_jaxpr_uses_no_dense_identity():
    jaxpr = fgrad.make_jaxpr(lambda x: np.einsum("ii->", x))(rand(3, 3))
    names = [e.primitive.name for e in jaxpr.eqns]
    assert "reduce_sum" in names and not jaxpr.consts


def test_hessian_through_matmul():
    A = rand(4, 4)
    x = rand(4)
    f = lambda v: v @ A @ v + np.sum(np.sin(A @ v))
    h = fgrad.hessian(f)(x)
    want = A + A.T - A.T @ onp.diag(onp.sin(A @ x)) @ A
    close(h, want)
    close(fgrad.jacrev(fgrad.jacrev(f))(x), want)
    close(fgrad.jacfwd(fgrad.jacfwd(f))(x), want)


def test_grad_of_grad_through_matmul_and_make_jaxpr():
    W = rand(3, 2)
    X = rand(5, 3)
    f = lambda w: np.sum(np.tanh(X @ w) ** 2)
    g2 = fgrad.grad(lambda w: np.sum(fgrad.grad(f)(w) ** 2))
    check_grads(g2, (W,), order=1, modes=("fwd", "rev"))
    text = str(fgrad.make_jaxpr(fgrad.grad(f))(W))
    assert "dot_general" in text


# --- primitives' jvp and vjp agree --------------------------------------------------------

def _inner(a, b):
    return float(onp.vdot(onp.asarray(a), onp.asarray(b)))


PRIM_FUNCS = {
    "dot_general": (lambda a, b: la.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))),
                    lambda: (rand(2, 3, 4), rand(2, 4, 5))),
    "inv": (la.inv, lambda: (well_conditioned(4),)),
    "solve": (la.solve, lambda: (well_conditioned(4), rand(4, 2))),
    "triangular_solve": (lambda a, b: la.triangular_solve(a, b, lower=False, transpose_a=True),
                         lambda: (well_conditioned(4), rand(4, 3))),
    "det": (la.det, lambda: (well_conditioned(3),)),
    "logabsdet": (la.logabsdet, lambda: (well_conditioned(3),)),
    "cholesky": (la.cholesky, lambda: (spd(4),)),
    "tril": (lambda a: la.tril(a, 1), lambda: (rand(3, 4),)),
    "triu": (lambda a: la.triu(a, -1), lambda: (rand(4, 3),)),
}


@pytest.mark.parametrize("name", sorted(PRIM_FUNCS))
def test_jvp_vjp_inner_products_agree(name):
    f, make = PRIM_FUNCS[name]
    args = make()
    tangents = tuple(rand(*onp.shape(a)) for a in args)
    out, t_out = fgrad.jvp(f, args, tangents)
    ct = rand(*onp.shape(out))
    _, f_vjp = fgrad.vjp(f, *args)
    cts = f_vjp(ct)
    lhs = _inner(ct, t_out)
    rhs = sum(_inner(c, t) for c, t in zip(cts, tangents))
    assert onp.isclose(lhs, rhs, rtol=1e-10, atol=1e-10), (lhs, rhs)


@pytest.mark.parametrize("name", sorted(PRIM_FUNCS))
def test_primitive_derivatives_second_order(name):
    f, make = PRIM_FUNCS[name]
    check_grads(f, make(), order=2, modes=("fwd", "rev"))


def test_batched_matrix_primitives():
    A, S, B = well_conditioned(3, 2), spd(3, 2), rand(2, 3, 2)
    close(la.inv(A), onp.linalg.inv(A))
    close(la.det(A), onp.linalg.det(A))
    close(la.logabsdet(A), onp.linalg.slogdet(A)[1])
    close(la.slogdet_sign(A), onp.linalg.slogdet(A)[0])
    close(la.solve(A, B), onp.linalg.solve(A, B))
    close(la.cholesky(S), onp.linalg.cholesky(S))
    for f, args in [(la.inv, (A,)), (la.det, (A,)), (la.logabsdet, (A,)), (la.solve, (A, B)),
                    (la.cholesky, (S,)), (lambda a, b: la.triangular_solve(a, b), (A, B))]:
        check_grads(f, args, order=2, modes=("fwd", "rev"))


def test_cholesky_primitive_reads_lower_triangle_only():
    S = spd(3)
    junk = S + onp.triu(rand(3, 3), 1)
    close(la.cholesky(junk), onp.linalg.cholesky(S))
    g = fgrad.grad(lambda a: np.sum(la.cholesky(a) ** 2))(junk)
    assert (onp.triu(g, 1) == 0).all()


def test_matrix_primitive_errors():
    with pytest.raises(ShapeError, match=r"square.*\(2, 3\)"):
        la.inv(rand(2, 3))
    with pytest.raises(ShapeError, match="solve"):
        la.solve(rand(3, 3), rand(4, 2))


# --- fgrad.numpy.linalg -------------------------------------------------------------------

def test_linalg_forward_matches_numpy():
    A, S, B, v = well_conditioned(4), spd(4), rand(4, 2), rand(4)
    close(np.linalg.inv(A), onp.linalg.inv(A))
    close(np.linalg.det(A), onp.linalg.det(A))
    close(np.linalg.solve(A, B), onp.linalg.solve(A, B))
    close(np.linalg.solve(A, v), onp.linalg.solve(A, v))
    close(np.linalg.cholesky(S), onp.linalg.cholesky(S))
    sign, logdet = np.linalg.slogdet(-S)
    want = onp.linalg.slogdet(-S)
    close(sign, want.sign)
    close(logdet, want.logabsdet)
    assert np.linalg.slogdet(A)._fields == ("sign", "logabsdet")
    # integer input becomes float64, as in NumPy
    assert np.linalg.inv(onp.array([[2, 0], [0, 4]])).dtype == onp.float64
    # batch broadcasting in solve
    Ab, Bb = well_conditioned(3, 2), rand(5, 1, 3, 2)
    close(np.linalg.solve(Ab, Bb), onp.linalg.solve(Ab, Bb))


def test_linalg_solve_batched_vector_matches_numpy():
    Ab, v = well_conditioned(3, 2), rand(3)
    close(np.linalg.solve(Ab, v), onp.linalg.solve(Ab, v))
    check_grads(np.linalg.solve, (Ab, v), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("fname", ["inv", "det", "slogdet", "cholesky", "solve", "solve_vec"])
def test_linalg_derivatives(fname):
    L = np.linalg
    A, S = well_conditioned(4), spd(4)
    f, args = {
        "inv": (L.inv, (A,)),
        "det": (L.det, (A,)),
        "slogdet": (lambda a: L.slogdet(a)[1], (A,)),
        "cholesky": (L.cholesky, (S,)),
        "solve": (L.solve, (A, rand(4, 2))),
        "solve_vec": (L.solve, (A, rand(4))),
    }[fname]
    check_grads(f, args, order=2, modes=("fwd", "rev"))


def test_linalg_closed_form_gradients():
    A = well_conditioned(4)
    close(fgrad.grad(np.linalg.det)(A), onp.linalg.det(A) * onp.linalg.inv(A).T, rtol=1e-9)
    close(fgrad.grad(lambda a: np.linalg.slogdet(a)[1])(A), onp.linalg.inv(A).T, rtol=1e-9)
    S = spd(3)
    g = fgrad.grad(lambda a: np.sum(np.linalg.cholesky(a)))(S)
    close(g, g.T)  # symmetric, as in JAX and PyTorch
    # log det of an SPD matrix through its Cholesky factor: gradient inv(S)
    logdet = lambda a: 2 * np.sum(np.log(np.einsum("ii->i", np.linalg.cholesky(a))))
    close(fgrad.grad(logdet)(S), onp.linalg.inv(S), rtol=1e-9)


def test_linalg_grad_of_grad_and_jaxpr():
    A = well_conditioned(3)
    gg = fgrad.grad(lambda a: np.sum(fgrad.grad(np.linalg.det)(a)))
    check_grads(gg, (A,), order=1, modes=("fwd", "rev"))
    text = str(fgrad.make_jaxpr(fgrad.grad(lambda a: np.sum(np.linalg.inv(a))))(A))
    assert "inv" in text
    close(fgrad.jacfwd(fgrad.jacrev(np.linalg.det))(A), fgrad.jacrev(fgrad.jacrev(np.linalg.det))(A))


def test_linalg_errors():
    with pytest.raises(ShapeError, match=r"\(2, 3\)"):
        np.linalg.inv(rand(2, 3))
    with pytest.raises(ShapeError, match=r"\(3, 3\).*\(4,\)"):
        np.linalg.solve(rand(3, 3), rand(4))


NORM_CASES = [(None, None), (None, 1), (2, 0), (1, 1), (onp.inf, 1), (-onp.inf, 0), (3, 1), (0.5, 0),
              ("fro", None), (1, None), (onp.inf, None), (-1, (1, 0)), ("fro", (0, 1)), (-onp.inf, None),
              (0, 1), (None, (0, 1))]


@pytest.mark.parametrize("ord,axis", NORM_CASES)
def test_norm_matches_numpy_and_differentiates(ord, axis):
    x = rand(3, 4)
    x = onp.sign(x) * (onp.abs(x) + 0.5)  # away from the kinks of |x| and of |x| ** p, p < 1
    for keepdims in (False, True):
        close(np.linalg.norm(x, ord, axis, keepdims), onp.linalg.norm(x, ord, axis, keepdims))
    if ord != 0:  # the 0-"norm" counts nonzeros: piecewise constant
        check_grads(lambda y: np.linalg.norm(y, ord, axis), (x,), order=2, modes=("fwd", "rev"))


def test_norm_vector_forms_and_errors():
    v = rand(5)
    for ord in (None, 1, 2, onp.inf, -onp.inf, 3, -2):
        close(np.linalg.norm(v, ord), onp.linalg.norm(v, ord))
    x3 = rand(2, 3, 4)
    close(np.linalg.norm(x3), onp.linalg.norm(x3))
    close(np.linalg.norm(x3, axis=(0, 2)), onp.linalg.norm(x3, axis=(0, 2)))
    with pytest.raises(ValueError, match="axis"):
        np.linalg.norm(x3, ord=1)
    m = rand(3, 4)
    for ord in (2, -2, "nuc"):   # the spectral norms, from the singular values
        close(np.linalg.norm(m, ord), onp.linalg.norm(m, ord))
    with pytest.raises(ValueError, match="invalid norm order"):
        np.linalg.norm(m, 3)


def test_norm_derivative_at_zero_is_zero():
    z = onp.zeros(3)
    f = np.linalg.norm
    g = fgrad.grad(f)(z)
    assert (g == 0).all()
    assert onp.isfinite(fgrad.hessian(f)(z)).all() and (fgrad.hessian(f)(z) == 0).all()
    assert (fgrad.jacrev(fgrad.grad(f))(z) == 0).all()
    assert fgrad.jvp(f, (z,), (onp.ones(3),))[1] == 0
    assert (fgrad.grad(lambda m: np.linalg.norm(m, "fro"))(onp.zeros((2, 2))) == 0).all()
    assert (fgrad.grad(lambda m: np.sum(np.linalg.norm(m, axis=1)))(onp.zeros((2, 3))) == 0).all()
    assert (fgrad.grad(lambda v: np.linalg.norm(v, 3))(z) == 0).all()
    # elsewhere the derivative is the usual one, to second order
    x = onp.array([3.0, -4.0, 0.0])
    close(fgrad.grad(f)(x), x / 5.0)
    close(fgrad.hessian(f)(x), (onp.eye(3) - onp.outer(x, x) / 25.0) / 5.0)
    # a row that is zero beside rows that are not
    m = onp.array([[0.0, 0.0], [3.0, 4.0]])
    close(fgrad.grad(lambda a: np.sum(np.linalg.norm(a, axis=1)))(m), [[0.0, 0.0], [0.6, 0.8]])


# --- fgrad.scipy.special ------------------------------------------------------------------

@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1), -1])
@pytest.mark.parametrize("name", ["logsumexp", "softmax", "log_softmax"])
def test_special_reductions(name, axis):
    ours, ref = getattr(fs, name), getattr(ss, name)
    x = rand(3, 4) * 30
    close(ours(x, axis=axis), ref(x, axis=axis))
    check_grads(lambda y: ours(y, axis=axis), (rand(3, 4),), order=2, modes=("fwd", "rev"))


def test_logsumexp_options():
    a, b = rand(3, 4), rand(3, 4)
    close(fs.logsumexp(a, axis=1, b=onp.abs(b)), ss.logsumexp(a, axis=1, b=onp.abs(b)))
    close(fs.logsumexp(a, axis=0, keepdims=True), ss.logsumexp(a, axis=0, keepdims=True))
    out, sign = fs.logsumexp(a, axis=1, b=b, return_sign=True)
    want_out, want_sign = ss.logsumexp(a, axis=1, b=b, return_sign=True)
    close(out, want_out)
    close(sign, want_sign)
    close(fs.logsumexp(a, b=2.0), ss.logsumexp(a, b=2.0))
    check_grads(lambda x, w: fs.logsumexp(x, axis=1, b=w), (a, onp.abs(b) + 0.1), order=2,
                modes=("fwd", "rev"))
    close(fs.logsumexp(onp.array([-onp.inf, -onp.inf])), -onp.inf)


def test_logsumexp_is_stable_for_large_inputs():
    x = onp.array([1e4, -1e4, 1e4 - 1.0, 3.0, -5e3])
    out = fs.logsumexp(x)
    close(out, ss.logsumexp(x))
    g = fgrad.grad(fs.logsumexp)(x)
    close(g, ss.softmax(x))
    h = fgrad.hessian(fs.logsumexp)(x)
    p = ss.softmax(x)
    close(h, onp.diag(p) - onp.outer(p, p))
    gs = fgrad.grad(lambda v: fs.log_softmax(v)[0])(x)
    assert onp.isfinite(gs).all()
    m = onp.array([[1e4, -1e4], [-1e4, 1e4]])
    assert onp.isfinite(fgrad.jacrev(lambda v: fs.softmax(v, axis=1))(m)).all()
    close(fs.softmax(m, axis=1), ss.softmax(m, axis=1))


def test_elementwise_specials():
    p = onp.array([0.1, 0.5, 0.93])
    x = rand(5) * 10
    close(fs.logit(p), ss.logit(p))
    close(fs.expit(x), ss.expit(x))
    close(fs.erf(x / 5), ss.erf(x / 5))
    for f, arg in [(fs.logit, p), (fs.expit, x / 5), (fs.erf, x / 5)]:
        check_grads(f, (arg,), order=2, modes=("fwd", "rev"))
    assert fs.expit(onp.float32(1.0)).dtype == onp.float32


# --- vmap: batching rules equal a loop ----------------------------------------------------

def _loop(f, args, in_axes):
    n = next(a.shape[ax] for a, ax in zip(args, in_axes) if ax is not None)
    outs = [f(*[a if ax is None else onp.take(a, i, axis=ax) for a, ax in zip(args, in_axes)])
            for i in range(n)]
    return onp.stack([onp.asarray(o) for o in outs])


VMAP_CASES = {
    "dot_general[lhs]": (lambda a, b: la.dot_general(a, b, (((1,), (0,)), ((), ()))),
                         lambda: (rand(5, 3, 4), rand(4, 2)), (0, None)),
    "dot_general[rhs]": (lambda a, b: la.dot_general(a, b, (((1,), (0,)), ((), ()))),
                         lambda: (rand(3, 4), rand(4, 5, 2)), (None, 1)),
    "dot_general[both]": (lambda a, b: la.dot_general(a, b, (((1,), (0,)), ((), ()))),
                          lambda: (rand(3, 5, 4), rand(4, 5, 2)), (1, 1)),
    "dot_general[batch_dims_lhs]": (lambda a, b: la.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))),
                                    lambda: (rand(2, 3, 4, 5), rand(2, 4, 6)), (3, None)),
    "dot_general[batch_dims_rhs]": (lambda a, b: la.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))),
                                    lambda: (rand(2, 3, 4), rand(2, 4, 6, 5)), (None, 3)),
    "einsum": (lambda a, b: np.einsum("ij,jk->ik", a, b), lambda: (rand(2, 3, 5), rand(3, 4)), (2, None)),
    "inv": (np.linalg.inv, lambda: (well_conditioned(3, 4),), (0,)),
    "det": (np.linalg.det, lambda: (onp.moveaxis(well_conditioned(3, 4), 0, 2),), (2,)),
    "slogdet": (lambda a: np.linalg.slogdet(a)[1], lambda: (well_conditioned(3, 4),), (0,)),
    "slogdet_sign": (lambda a: np.linalg.slogdet(a)[0], lambda: (well_conditioned(3, 4),), (0,)),
    "cholesky": (np.linalg.cholesky, lambda: (spd(3, 4),), (0,)),
    "solve[a]": (np.linalg.solve, lambda: (well_conditioned(3, 4), rand(3, 2)), (0, None)),
    "solve[b]": (np.linalg.solve, lambda: (well_conditioned(3), rand(4, 3)), (None, 0)),
    "triangular_solve": (lambda a, b: la.triangular_solve(a, b, lower=False),
                         lambda: (well_conditioned(3), rand(3, 4, 2)), (None, 1)),
    "tril": (lambda a: la.tril(a, 0), lambda: (rand(3, 4, 5),), (2,)),
    "norm": (np.linalg.norm, lambda: (rand(3, 4),), (0,)),
}


@pytest.mark.parametrize("name", sorted(VMAP_CASES))
def test_vmap_equals_loop(name):
    f, make, in_axes = VMAP_CASES[name]
    args = make()
    close(fgrad.vmap(f, in_axes=in_axes)(*args), _loop(f, args, in_axes), rtol=1e-10)


def test_vmap_composes_with_grad():
    A = spd(3, 4)
    per_example = lambda a: np.sum(np.linalg.cholesky(a))
    g1 = fgrad.grad(lambda a: np.sum(fgrad.vmap(np.linalg.cholesky)(a)))(A)
    g2 = fgrad.vmap(fgrad.grad(per_example))(A)
    want = onp.stack([fgrad.grad(per_example)(A[i]) for i in range(4)])
    close(g1, want)
    close(g2, want)
    check_grads(lambda a, b: fgrad.vmap(np.linalg.solve, in_axes=(0, None))(a, b),
                (well_conditioned(3, 4), rand(3, 2)), order=2, modes=("fwd", "rev"))


# Every fgrad.numpy.linalg function on an empty batch of matrices (shape (0, n, n)): batched
# impls that flatten the batch with reshape(-1, ...) fail there (svd and eigh did, and the LU
# primitives), so the whole namespace is checked against NumPy's shapes.
_EMPTY_BATCH_CALLS = {
    "solve": lambda L, a: L.solve(a, a[..., :1]),
    "matrix_power": lambda L, a: L.matrix_power(a, 2),
    "tensorsolve": None, "tensorinv": None, "multi_dot": None,  # not batched in NumPy either
    "lstsq": lambda L, a: L.lstsq(a.reshape(0, 3), a.reshape(0, 3)[:, 0], rcond=None),  # not batched: no rows
    "cross": None, "outer": None, "vecdot": lambda L, a: L.vecdot(a, a), "matmul": lambda L, a: L.matmul(a, a),
    "tensordot": None, "vector_norm": lambda L, a: L.vector_norm(a, axis=-1),
    "matrix_transpose": lambda L, a: L.matrix_transpose(a), "diagonal": lambda L, a: L.diagonal(a),
    "trace": lambda L, a: L.trace(a),
}


def _linalg_functions():
    return sorted(n for n in dir(np.linalg) if not n.startswith("_") and callable(getattr(np.linalg, n))
                  and callable(getattr(onp.linalg, n, None)))


@pytest.mark.parametrize("name", _linalg_functions())
def test_every_linalg_function_takes_an_empty_batch(name):
    if name in _EMPTY_BATCH_CALLS and _EMPTY_BATCH_CALLS[name] is None:
        pytest.skip(f"{name} takes no batch of square matrices")
    call = _EMPTY_BATCH_CALLS.get(name, lambda L, a: getattr(L, name)(a))
    a = onp.zeros((0, 3, 3))
    want = call(onp.linalg, a)
    got = call(np.linalg, a)
    leaves = lambda r: [onp.asarray(x) for x in (r if isinstance(r, tuple) else (r,))]  # noqa: E731
    assert [x.shape for x in leaves(got)] == [x.shape for x in leaves(want)], name
