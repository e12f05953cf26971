"""Complex linear algebra (issue 12): every fgrad.numpy.linalg function on complex input.

Values are compared with NumPy; derivatives with check_grads (orders 1-2, forward and reverse)
and with JAX (grad of a real loss, jvp, and grad under jit and vmap). Complex singular vectors
and eigenvectors are unique only up to a phase each (LAPACK picks one), so the cases that use
them differentiate gauge-invariant functions, as JAX's own tests do: |U|, u_i v_i^H,
projections U_k U_k^H, reconstructions.

The enumeration is computed: every public function of fgrad.numpy.linalg must have a case
here (a key "name" or "name-variant") or be listed in NOT_COMPLEX with the reason, so a new
function fails here until it is covered.
"""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import fgrad
import fgrad.numpy as fnp
from fgrad.core.avals import ShapedArray
from fgrad.ops import linalg as la
from fgrad.test_util import check_grads
from tests import sampled

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

RNG = np.random.default_rng(1212)


def _c(*shape):
    return RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)


def _spread(m, n, s=(3.0, 2.0, 1.2, 0.7)):
    """An m x n complex matrix with well-separated singular values (vector derivatives divide
    by their gaps)."""
    k = min(m, n)
    u = np.linalg.qr(_c(m, m))[0][:, :k]
    v = np.linalg.qr(_c(n, n))[0][:, :k]
    return (u * np.asarray(s[:k])) @ v.conj().T


def _hermitian_pd(n):
    x = _c(n, n)
    return x @ x.conj().T + n * np.eye(n)


def _H(m, x):
    return m.conj(m.swapaxes(x, -1, -2))


SQ = _spread(3, 3)
TALL = _spread(4, 3)
WIDE = _spread(3, 4)
HPD = _hermitian_pd(3)
NEAR_H = HPD + 0.3 * _c(3, 3)   # not Hermitian: its Hermitian part is what eigh and cholesky see
B32 = _c(3, 2)
B42 = _c(4, 2)
V3 = _c(3)


def _svd_parts(m, a, full=False):
    return m.linalg.svd(a, full_matrices=full)


# name -> (f(m, *args) with m numpy, fgrad.numpy or jax.numpy, args[, f for JAX where JAX
# differs: JAX has no JVP of svd with full_matrices, nor of qr's complete mode]).
CASES = {
    # --- decompositions: gauge-invariant functions of the factors ---
    "svd-abs-u-tall": (lambda m, a: m.abs(_svd_parts(m, a)[0]), (TALL,)),
    "svd-abs-vh-wide": (lambda m, a: m.abs(_svd_parts(m, a)[2]), (WIDE,)),
    "svd-s-square": (lambda m, a: _svd_parts(m, a)[1], (SQ,)),
    "svd-rank-one-terms": (lambda m, a: (lambda u, s, vh: m.stack(
        [m.outer(u[:, i], vh[i]) for i in range(2)]))(*_svd_parts(m, a)), (TALL,)),
    "svd-projections-wide": (lambda m, a: (lambda u, s, vh: (u[:, :2] @ _H(m, u[:, :2]),
                                                             _H(m, vh[:2]) @ vh[:2]))(*_svd_parts(m, a)),
                             (WIDE,)),
    "svd-full-complement-tall": (
        lambda m, a: (lambda u: u[:, 3:] @ _H(m, u[:, 3:]))(_svd_parts(m, a, True)[0]), (TALL,),
        lambda m, a: (lambda u: m.eye(4) - u @ _H(m, u))(_svd_parts(m, a)[0])),
    "svd-full-complement-wide": (
        lambda m, a: (lambda vh: _H(m, vh[3:]) @ vh[3:])(_svd_parts(m, a, True)[2]), (WIDE,),
        lambda m, a: (lambda vh: m.eye(4) - _H(m, vh) @ vh)(_svd_parts(m, a)[2])),
    "svd-compute_uv-false": (lambda m, a: m.linalg.svd(a, compute_uv=False), (WIDE,)),
    "svdvals": (lambda m, a: m.linalg.svdvals(a), (TALL,)),
    "qr-tall": (lambda m, a: m.linalg.qr(a), (TALL,)),
    "qr-square": (lambda m, a: m.linalg.qr(a), (SQ,)),
    "qr-wide": (lambda m, a: m.linalg.qr(a), (WIDE,), None),   # JAX: no JVP for m < n
    "qr-r": (lambda m, a: m.linalg.qr(a, mode="r"), (TALL,)),
    "qr-complete": (lambda m, a: (lambda q, r: (q[:, 3:] @ _H(m, q[:, 3:]), r))(*m.linalg.qr(a, mode="complete")),
                    (TALL,),
                    lambda m, a: (lambda q, r: (m.eye(4) - q @ _H(m, q),
                                                m.concatenate([r, m.zeros((1, 3))])))(*m.linalg.qr(a))),
    "eigh-values-and-abs-vectors": (lambda m, a: (lambda w, v: (w, m.abs(v)))(*m.linalg.eigh(a)), (HPD,)),
    "eigh-projection": (lambda m, a: (lambda w, v: v[:, :1] @ _H(m, v[:, :1]))(*m.linalg.eigh(a)), (HPD,)),
    "eigh-upper": (lambda m, a: m.linalg.eigh(a, UPLO="U")[0], (HPD,)),
    "eigvalsh": (lambda m, a: m.linalg.eigvalsh(a), (HPD,)),
    "eig": (lambda m, a: (lambda w, v: (w, m.abs(v)))(*m.linalg.eig(a)), (SQ,), None),   # JAX: no eigenvector JVP
    "eigvals": (lambda m, a: m.linalg.eigvals(a), (SQ,)),
    "cholesky": (lambda m, a: m.linalg.cholesky(a), (HPD,)),
    # --- solvers, inverses, determinants ---
    "det": (lambda m, a: m.linalg.det(a), (SQ,)),
    "slogdet": (lambda m, a: m.linalg.slogdet(a), (SQ,)),
    "inv": (lambda m, a: m.linalg.inv(a), (SQ,)),
    "solve": (lambda m, a, b: m.linalg.solve(a, b), (SQ, B32)),
    "solve-vector": (lambda m, a, b: m.linalg.solve(a, b), (SQ, V3)),
    "pinv-tall": (lambda m, a: m.linalg.pinv(a), (TALL,)),
    "pinv-wide": (lambda m, a: m.linalg.pinv(a), (WIDE,)),
    "lstsq": (lambda m, a, b: m.linalg.lstsq(a, b)[:2] + (m.linalg.lstsq(a, b)[3],), (TALL, B42)),
    "lstsq-underdetermined": (lambda m, a, b: m.linalg.lstsq(a, b)[0], (WIDE, B32)),
    "matrix_power": (lambda m, a: m.linalg.matrix_power(a, 3), (SQ,)),
    "matrix_power-negative": (lambda m, a: m.linalg.matrix_power(a, -2), (SQ,)),
    "tensorinv": (lambda m, a: m.linalg.tensorinv(a.reshape(3, 3), 1), (SQ,)),
    "tensorsolve": (lambda m, a, b: m.linalg.tensorsolve(a, b), (SQ, V3)),
    # --- norms and condition numbers (real results) ---
    "norm": (lambda m, a: m.linalg.norm(a), (TALL,)),
    "norm-2": (lambda m, a: m.linalg.norm(a, 2), (TALL,)),
    "norm--2": (lambda m, a: m.linalg.norm(a, -2), (WIDE,)),
    "norm-nuc": (lambda m, a: m.linalg.norm(a, "nuc"), (TALL,)),
    "norm-fro": (lambda m, a: m.linalg.norm(a, "fro"), (TALL,)),
    "norm-1": (lambda m, a: m.linalg.norm(a, 1), (TALL,)),
    "norm-inf": (lambda m, a: m.linalg.norm(a, np.inf), (TALL,)),
    "norm-vector-3": (lambda m, a: m.linalg.norm(a, 3, axis=1), (TALL,)),
    "norm-vector-4": (lambda m, a: m.linalg.norm(a, 4, axis=0), (TALL,)),
    "norm-vector-minus-inf": (lambda m, a: m.linalg.norm(a, -np.inf, axis=1), (TALL,)),
    "norm-batched-nuc": (lambda m, a: m.linalg.norm(m.stack([a, 2 * a]), "nuc", axis=(1, 2)), (WIDE,)),
    "vector_norm": (lambda m, a: m.linalg.vector_norm(a, axis=0), (TALL,)),
    "matrix_norm": (lambda m, a: m.linalg.matrix_norm(a, ord=2), (TALL,)),
    "cond": (lambda m, a: m.linalg.cond(a), (SQ,)),
    "cond-tall": (lambda m, a: m.linalg.cond(a), (TALL,)),
    "cond--2": (lambda m, a: m.linalg.cond(a, -2), (SQ,)),
    "cond-fro": (lambda m, a: m.linalg.cond(a, "fro"), (SQ,)),
    "cond-1": (lambda m, a: m.linalg.cond(a, 1), (SQ,)),
    # --- products and views ---
    "matmul": (lambda m, a, b: m.linalg.matmul(a, b), (SQ, B32)),
    "multi_dot": (lambda m, a, b: m.linalg.multi_dot([a, a, b]), (SQ, B32)),
    "outer": (lambda m, a, b: m.linalg.outer(a, b), (V3, V3 * 1j)),
    "tensordot": (lambda m, a, b: m.linalg.tensordot(a, b, axes=1), (SQ, B32)),
    "vecdot": (lambda m, a, b: m.linalg.vecdot(a, b), (SQ, TALL[:3])),
    "cross": (lambda m, a, b: m.linalg.cross(a, b), (SQ, TALL[1:])),
    "trace": (lambda m, a: m.linalg.trace(a), (SQ,)),
    "diagonal": (lambda m, a: m.linalg.diagonal(a, offset=1), (WIDE,)),
    "matrix_transpose": (lambda m, a: m.linalg.matrix_transpose(a), (WIDE,)),
}

# no derivative (integer results): values are compared, on complex input
VALUES_ONLY = {
    "matrix_rank": (lambda m, a: m.linalg.matrix_rank(a), (TALL,)),
    "matrix_rank-deficient": (lambda m, a: m.linalg.matrix_rank(a @ a.T[:, :1] @ a.T[:1]), (TALL,)),
    "lstsq-rank": (lambda m, a, b: m.linalg.lstsq(a, b)[2], (TALL, B42)),
}

# public functions of fgrad.numpy.linalg without a complex case, with the reason
NOT_COMPLEX: dict[str, str] = {}


def _public_functions() -> list[str]:
    return sorted(n for n in fnp.linalg.__all__
                  if inspect.isfunction(getattr(fnp.linalg, n)))


def _covered(name: str) -> bool:
    return any(k == name or k.startswith(name + "-") for k in list(CASES) + list(VALUES_ONLY))


def test_every_linalg_function_has_a_complex_case_or_a_reason():
    missing = [n for n in _public_functions() if not _covered(n) and n not in NOT_COMPLEX]
    assert not missing, f"fgrad.numpy.linalg functions without a complex case in {__file__}: {missing}"
    assert {"svd", "qr", "eigh", "cholesky", "lstsq", "pinv", "cond", "norm"} <= set(_public_functions())


def _case(name):
    entry = CASES[name]
    f, args = entry[0], entry[1]
    fj = entry[2] if len(entry) > 2 else f
    return f, args, fj


def _leaves(x):
    return [np.asarray(v) for v in jax.tree_util.tree_leaves(x)]


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_dtypes_match_numpy(name):
    f, args, _ = _case(name)
    got, want = _leaves(f(fnp, *args)), _leaves(f(np, *args))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", sorted(VALUES_ONLY))
def test_integer_results_match_numpy(name):
    f, args = VALUES_ONLY[name]
    np.testing.assert_array_equal(f(fnp, *args), f(np, *args))


@pytest.mark.parametrize("name", sorted(CASES))
def test_check_grads_orders_1_and_2(name):
    f, args, _ = _case(name)
    check_grads(lambda *a: f(fnp, *a), args, order=2, modes=("fwd", "rev"))


def _weights(out):
    return [_c(*np.shape(o)) if np.asarray(o).dtype.kind == "c" else RNG.standard_normal(np.shape(o))
            for o in jax.tree_util.tree_leaves(out)]


def _loss(m, f, ws):
    def loss(*a):
        outs = jax.tree_util.tree_leaves(f(m, *a)) if m is jnp else _fgrad_leaves(f(m, *a))
        return sum(m.sum(m.real(o * w)) for o, w in zip(outs, ws))
    return loss


def _fgrad_leaves(out):
    return list(out) if isinstance(out, tuple) else [out]


@pytest.mark.parametrize("name", sorted(n for n in CASES if _case(n)[2] is not None))
def test_grad_jvp_vjp_match_jax(name):
    f, args, fj = _case(name)
    ws = _weights(f(np, *args))
    nums = tuple(range(len(args)))
    got = fgrad.grad(_loss(fnp, f, ws), argnums=nums)(*args)
    want = jax.grad(_loss(jnp, fj, ws), argnums=nums)(*args)
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == np.complex128
        np.testing.assert_allclose(g, w, rtol=1e-8, atol=1e-10)
    ts = tuple(_c(*np.shape(a)) for a in args)
    got_t = _leaves(fgrad.jvp(lambda *a: f(fnp, *a), args, ts)[1])
    want_t = _leaves(jax.jvp(lambda *a: fj(jnp, *a), args, ts)[1])
    for g, w in zip(got_t, want_t):
        assert g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("name", sampled(sorted(n for n in CASES if _case(n)[2] is not None), 4))
def test_grad_under_jit_and_vmap_matches_jax(name):
    f, args, fj = _case(name)
    ws = _weights(f(np, *args))
    want = jax.grad(_loss(jnp, fj, ws))(*args)
    np.testing.assert_allclose(fgrad.jit(fgrad.grad(_loss(fnp, f, ws)))(*args), want, rtol=1e-8, atol=1e-10)
    xs = np.stack([args[0], args[0] * (0.9 + 0.1j)])
    in_axes = (0,) + (None,) * (len(args) - 1)
    got = fgrad.vmap(fgrad.grad(_loss(fnp, f, ws)), in_axes=in_axes)(xs, *args[1:])
    wantv = jax.vmap(jax.grad(_loss(jnp, fj, ws)), in_axes=in_axes)(xs, *args[1:])
    np.testing.assert_allclose(got, wantv, rtol=1e-8, atol=1e-10)


# --- the gauge and the conventions ------------------------------------------------------------------

def test_svd_phase_gauge_follows_jax():
    """JAX's gauge: V^H dV has a zero diagonal and U^H dU's diagonal is i Im(u_i^H dA v_i) / s_i;
    so the JVP of the factors themselves (not only of gauge-invariant functions) matches JAX's
    where LAPACK's phases agree (same LAPACK)."""
    t = _c(*TALL.shape)
    got = fgrad.jvp(lambda a: fnp.linalg.svd(a, full_matrices=False), (TALL,), (t,))[1]
    want = jax.jvp(lambda a: jnp.linalg.svd(a, full_matrices=False), (TALL,), (t,))[1]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-8, atol=1e-10)
    u, s, vh = np.linalg.svd(TALL, full_matrices=False)
    dv = np.asarray(got[2]).conj().T
    np.testing.assert_allclose(np.diag(vh @ dv), 0, atol=1e-12)


def test_real_matrices_keep_real_results_and_the_real_rules():
    a = TALL.real.copy()
    assert np.asarray(fnp.linalg.svd(a)[0]).dtype == np.float64
    check_grads(lambda a: fnp.linalg.svd(a, full_matrices=False)[1], (a,), order=2)


def test_logabsdet_is_real_for_complex_matrices():
    out = la.logabsdet(SQ)
    assert np.asarray(out).dtype == np.float64
    assert la.logabsdet_p.abstract_eval(ShapedArray((3, 3), np.complex128)).dtype == np.float64
    np.testing.assert_allclose(out, np.linalg.slogdet(SQ)[1], rtol=1e-13)
    check_grads(la.logabsdet, (SQ,), order=2)
    np.testing.assert_allclose(fgrad.grad(la.logabsdet)(SQ), jax.grad(lambda a: jnp.linalg.slogdet(a)[1])(SQ),
                               rtol=1e-10)
    np.testing.assert_allclose(fgrad.jit(la.logabsdet)(SQ), out, rtol=1e-13)


def test_hermitian_triangle_reading_matches_numpy():
    """symmetrize_input=False reads one triangle and the real part of the diagonal, as LAPACK
    (and NumPy): entries outside it have zero derivative."""
    a = NEAR_H + 0.5j * np.diag([1.0, 2.0, 3.0])
    for uplo in ("L", "U"):
        w = fnp.linalg.eigh(a, UPLO=uplo, symmetrize_input=False)[0]
        np.testing.assert_allclose(w, np.linalg.eigh(a, UPLO=uplo)[0], rtol=1e-12)
        f = lambda a: fnp.linalg.eigh(a, UPLO=uplo, symmetrize_input=False)[0]  # noqa: E731
        check_grads(f, (a,), order=2)
        g = np.asarray(fgrad.grad(lambda a: fnp.sum(f(a) * np.array([1.0, 2.0, 3.0])))(a))
        unread = np.triu(np.ones((3, 3)), 1) if uplo == "L" else np.tril(np.ones((3, 3)), -1)
        assert np.all(g[unread == 1] == 0)
        assert np.all(np.diag(g).imag == 0)


def test_cholesky_of_a_hermitian_matrix_has_a_hermitian_gradient():
    g = np.asarray(fgrad.grad(lambda a: fnp.sum(fnp.abs(fnp.linalg.cholesky(a)) ** 2 * 0.1
                                                + fnp.real(fnp.linalg.cholesky(a)[2, 0])))(HPD))
    np.testing.assert_allclose(g, g.conj().T, atol=1e-12)


def _as_complex_of_parts(f, shape):
    """f of the complex array whose real and imaginary parts are the halves of a real vector
    (so hessian applies to a real-valued f of complex input, part by part)."""
    def g(p):
        n = p.size // 2
        return f((p[:n] + 1j * p[n:]).reshape(shape))
    return g


@pytest.mark.parametrize("ord_", [1, np.inf])
def test_norms_through_abs_at_an_exact_zero_entry(ord_):
    """Item 3 of issue 12: the 1- and inf-norms go through abs, which has a kink at 0. Real
    entries: fgrad's second derivative there is 0, as JAX's. Complex entries: |z| is a cone at
    0 with no second derivative; fgrad gives 0 (the one-sided second derivative along every
    line, and the real case's value), JAX gives the identity on the entry's (re, im) block (an
    artifact of its abs rule dividing by |z| replaced with 1 at 0: the Hessian of |z|^2 / 2).
    The first derivatives agree (0)."""
    a = np.array([[0.0, 1.0], [-2.0, 0.5]])
    for m_shape, arg in (((2, 2), a), ((3,), np.array([0.0, 1.5, -2.0]))):
        def f(m):
            return lambda z: m.linalg.norm(z, ord_)
        np.testing.assert_array_equal(fgrad.hessian(f(fnp))(arg), jax.hessian(f(jnp))(arg))
        p0 = np.concatenate([arg.ravel(), np.zeros(arg.size)])
        gf = fgrad.grad(_as_complex_of_parts(f(fnp), m_shape))(p0)
        gj = jax.grad(_as_complex_of_parts(f(jnp), m_shape))(p0)
        np.testing.assert_allclose(gf, gj, atol=1e-15)
        hf = np.asarray(fgrad.hessian(_as_complex_of_parts(f(fnp), m_shape))(p0))
        hj = np.asarray(jax.hessian(_as_complex_of_parts(f(jnp), m_shape))(p0))
        zero = np.flatnonzero(arg.ravel() == 0)
        at_zero = np.concatenate([zero, zero + arg.size])
        rest = np.setdiff1d(np.arange(p0.size), at_zero)
        # away from the zero entries the two agree; at them fgrad's block is 0 where JAX's is
        # the identity for every zero entry that decides the norm (inf-norm: only if it is in
        # the maximal row/column)
        np.testing.assert_allclose(hf[np.ix_(rest, rest)], hj[np.ix_(rest, rest)], atol=1e-12)
        assert np.all(hf[at_zero] == 0) and np.all(hf[:, at_zero] == 0)
        if ord_ == 1:   # every entry counts in the 1-norm: JAX's identity blocks
            np.testing.assert_array_equal(hj[np.ix_(at_zero, at_zero)], np.eye(at_zero.size))
