"""fgrad.scipy.linalg's special matrices (toeplitz, circulant, hankel, leslie, companion,
fiedler, fiedler_companion, convolution_matrix) and decompositions (lu, lu_factor, lu_solve,
qr, qr_multiply, svd, polar, eigh_tridiagonal, funm, schur, hessenberg, rsf2csf): values
against SciPy (and JAX), derivatives of orders 1-2 in both modes, eager against jit and vmap,
and the values-only functions raising DifferentiationError as JAX's do."""
from __future__ import annotations

import numpy as onp
import pytest
import scipy.linalg as sl

import fgrad
import fgrad.numpy as fnp
import fgrad.scipy.linalg as fl
from fgrad.core.errors import DifferentiationError, FgradValueError
from fgrad.test_util import check_grads

try:
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.scipy.linalg as jsl
except ImportError:  # pragma: no cover
    jax = jsl = None

rng = onp.random.default_rng(0)
A = rng.normal(size=(4, 4))
TALL, WIDE = rng.normal(size=(5, 3)), rng.normal(size=(3, 5))
V4, V3, V7 = rng.normal(size=4), rng.normal(size=3), rng.normal(size=7)

# name: (args, call(module, *args), compare with JAX): the call must be a function of arrays
CASES = {
    "toeplitz": ((V4,), lambda m, x: m.toeplitz(x), True),
    "toeplitz_rc": ((V4, V3), lambda m, x, y: m.toeplitz(x, y), True),
    "circulant": ((V4,), lambda m, x: m.circulant(x), True),
    "hankel": ((V4,), lambda m, x: m.hankel(x), True),
    "hankel_rc": ((V4, V3), lambda m, x, y: m.hankel(x, y), True),
    "leslie": ((V4, V3), lambda m, f, s: m.leslie(f, s), True),
    "companion": ((V4,), lambda m, x: m.companion(x), True),
    "fiedler": ((V4,), lambda m, x: m.fiedler(x), True),
    "fiedler_companion": ((V7,), lambda m, x: m.fiedler_companion(x), True),
    "convolution_full": ((V3,), lambda m, x: m.convolution_matrix(x, 5), True),
    "convolution_same": ((V4,), lambda m, x: m.convolution_matrix(x, 3, "same"), True),
    "convolution_valid": ((V4,), lambda m, x: m.convolution_matrix(x, 3, "valid"), True),
    "svd_values": ((TALL,), lambda m, x: m.svd(x, compute_uv=False), True),
    "svd_gauge_free": ((TALL,), lambda m, x: (lambda u, s, vh: (u * s) @ vh)(*m.svd(x, full_matrices=False)), True),
    "qr_r": ((TALL,), lambda m, x: abs(m.qr(x, mode="r")[0]), False),
    "qr_economic": ((TALL,), lambda m, x: (lambda q, r: q @ r)(*m.qr(x, mode="economic")), True),
    "qr_multiply_right": ((TALL, rng.normal(size=(2, 5))), lambda m, x, c: abs(m.qr_multiply(x, c)[0]), False),
    "qr_multiply_left": ((TALL, rng.normal(size=(3, 2))), lambda m, x, c: abs(m.qr_multiply(x, c, "left")[0]), False),
    "polar_right": ((TALL,), lambda m, x: m.polar(x)[0], True),
    "polar_left": ((WIDE,), lambda m, x: m.polar(x, "left")[1], False),
    "eigh_tridiagonal": ((V4, V3), lambda m, d, e: m.eigh_tridiagonal(d, e, eigvals_only=True), True),
    "funm_exp": ((A,), lambda m, x: m.funm(x, lambda w: (fnp if m is fl else onp).exp(w)), False),
    "lu_L": ((A,), lambda m, x: m.lu(x)[1], True),
    "lu_U": ((A,), lambda m, x: m.lu(x)[2], True),
    "lu_tall": ((TALL,), lambda m, x: m.lu(x)[1] + 0.0 * m.lu(x)[2].sum(), True),
    "lu_wide": ((WIDE,), lambda m, x: m.lu(x)[2], True),
    "lu_permute_l": ((A,), lambda m, x: m.lu(x, permute_l=True)[0], True),
    "lu_factor": ((A,), lambda m, x: m.lu_factor(x)[0], True),
    "lu_solve": ((A, V4), lambda m, x, b: m.lu_solve(m.lu_factor(x), b), True),
    "lu_solve_T": ((A, rng.normal(size=(4, 2))), lambda m, x, b: m.lu_solve(m.lu_factor(x), b, trans=1), True),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_grads(name):
    args, f, in_jax = CASES[name]
    got = onp.asarray(f(fl, *args))
    want = f(sl, *args)
    assert got.shape == want.shape and got.dtype == want.dtype
    onp.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    if jsl is not None and in_jax:
        onp.testing.assert_allclose(got, onp.asarray(f(jsl, *args)), rtol=1e-8, atol=1e-10)
    check_grads(lambda *xs: f(fl, *xs), args, order=2, modes=("fwd", "rev"))
    onp.testing.assert_allclose(onp.asarray(fgrad.jit(lambda *xs: f(fl, *xs))(*args)), got, rtol=1e-12, atol=1e-14)
    stacked = tuple(onp.stack([a, 1.5 * a]) for a in args)
    batched = onp.asarray(fgrad.vmap(lambda *xs: f(fl, *xs))(*stacked))
    for i in range(2):
        onp.testing.assert_allclose(batched[i], onp.asarray(f(fl, *(s[i] for s in stacked))), rtol=1e-12, atol=1e-14)


@pytest.mark.skipif(jsl is None, reason="JAX is not installed")
@pytest.mark.parametrize("name", ["lu_L", "lu_U", "lu_solve", "toeplitz_rc", "companion", "svd_gauge_free"])
# (not polar nor eigh_tridiagonal: JAX's polar (QDWH's while_loop) and eigh_tridiagonal have no
# reverse mode)
def test_gradient_matches_jax(name):
    args, f, _ = CASES[name]
    w = onp.asarray(f(sl, *args))
    weights = onp.linspace(0.5, 1.5, w.size).reshape(w.shape)
    got = fgrad.grad(lambda *xs: (f(fl, *xs) * weights).sum(), argnums=tuple(range(len(args))))(*args)
    want = jax.grad(lambda *xs: (f(jsl, *xs) * weights).sum(), argnums=tuple(range(len(args))))(*args)
    for g, h in zip(got, want):
        onp.testing.assert_allclose(onp.asarray(g), onp.asarray(h), rtol=1e-8, atol=1e-10)


def test_lu_outputs_match_scipy():
    b = A[[2, 0, 3, 1]]
    for kw in ({}, {"p_indices": True}):
        for x, y in zip(fl.lu(b, **kw), sl.lu(b, **kw)):
            onp.testing.assert_allclose(onp.asarray(x), y, rtol=1e-12, atol=1e-14)
    lu, piv = fl.lu_factor(b)
    assert piv.dtype == onp.int32 and onp.array_equal(piv, sl.lu_factor(b)[1])
    # a stack of matrices
    stack = rng.normal(size=(3, 4, 4))
    for x, y in zip(fl.lu(stack), sl.lu(stack)):
        onp.testing.assert_allclose(onp.asarray(x), y, rtol=1e-12, atol=1e-14)


def test_lu_schur_hessenberg_of_empty_matrices():
    """Empty matrices (and stacks of them) factorize to empty factors of SciPy's shapes; the
    impls once reshaped with -1, ambiguous (a ValueError) when the matrices are empty."""
    for shape in ((0, 3), (0, 0), (2, 0, 3), (0, 3, 3)):
        a = onp.ones(shape)
        _, l_, u = fl.lu(a)
        k = min(shape[-2:])
        assert (l_.shape, u.shape) == (shape[:-1] + (k,), shape[:-2] + (k, shape[-1]))
        lu, piv = fl.lu_factor(a)
        assert lu.shape == shape and piv.shape == shape[:-2] + (k,) and piv.dtype == onp.int32
        assert fgrad.make_jaxpr(lambda x: fl.lu(x)[2])(a).out_avals[0].shape == u.shape
    for shape in ((0, 0), (0, 3, 3)):
        a = onp.ones(shape)
        assert [t.shape for t in fl.schur(a)] == [shape, shape]
        assert [t.shape for t in fl.hessenberg(a, calc_q=True)] == [shape, shape]
    assert fl.lu_solve((onp.ones((0, 0)), onp.zeros(0, onp.int32)), onp.ones(0)).shape == (0,)


def test_eigh_tridiagonal_vectors_and_funm():
    w, v = fl.eigh_tridiagonal(V4, V3)
    t = onp.diag(V4) + onp.diag(V3, 1) + onp.diag(V3, -1)
    onp.testing.assert_allclose(onp.asarray(t @ v), onp.asarray(v) * onp.asarray(w), atol=1e-12)
    onp.testing.assert_allclose(onp.asarray(fl.funm(A, lambda z: z * z)), A @ A, rtol=1e-10, atol=1e-12)
    f, err = fl.funm(A, fnp.exp, disp=False)
    onp.testing.assert_allclose(onp.asarray(f), sl.expm(A), rtol=1e-10)
    assert float(err) < 1e-12
    check_grads(lambda x: fl.funm(x, fnp.sin), (A,), order=2, modes=("fwd", "rev"))
    with pytest.raises(FgradValueError, match="select"):
        fl.eigh_tridiagonal(V4, V3, select="i", select_range=(0, 1))


def test_schur_hessenberg_rsf2csf():
    for out in ("real", "complex"):
        for x, y in zip(fl.schur(A, output=out), sl.schur(A, output=out)):
            onp.testing.assert_allclose(onp.asarray(x), y, rtol=1e-12, atol=1e-13)
    h, q = fl.hessenberg(A, calc_q=True)
    onp.testing.assert_allclose(onp.asarray(h), sl.hessenberg(A), atol=1e-13)
    onp.testing.assert_allclose(onp.asarray(q), sl.hessenberg(A, calc_q=True)[1], atol=1e-13)
    for f in (lambda x: fl.schur(x)[0].sum(), lambda x: fl.hessenberg(x).sum()):
        with pytest.raises(DifferentiationError, match="not unique"):
            fgrad.grad(f)(A)
        with pytest.raises(DifferentiationError, match="not unique"):
            fgrad.jvp(f, (A,), (A,))
    # rsf2csf: SciPy's values (and JAX's), eager and under jit; derivatives with the real Schur
    # form's structure held (a perturbed zero subdiagonal entry would flip which blocks rotate)
    b = rng.normal(size=(5, 5))
    t, z = sl.schur(b)
    want = sl.rsf2csf(t, z)
    for got in (fl.rsf2csf(t, z), fgrad.jit(fl.rsf2csf)(t, z)):
        for x, y in zip(got, want):
            onp.testing.assert_allclose(onp.asarray(x), y, rtol=1e-12, atol=1e-13)
    if jsl is not None:
        onp.testing.assert_allclose(onp.asarray(fl.rsf2csf(t, z)[0]), onp.asarray(jsl.rsf2csf(t, z)[0]), atol=1e-10)
    mask = (t != 0).astype(float)
    check_grads(lambda x: fnp.abs(fl.rsf2csf(x * mask, z)[0]) ** 2, (t,), order=2, modes=("fwd", "rev"))
    check_grads(lambda x: fnp.imag(fl.rsf2csf(x * mask, z)[1]), (t,), order=2, modes=("fwd", "rev"))


def test_errors():
    with pytest.raises(FgradValueError, match="first coefficient"):
        fl.companion(onp.array([0.0, 1.0, 2.0]))
    with pytest.raises(FgradValueError, match="lengths"):
        fl.leslie(V4, V4)
    with pytest.raises(FgradValueError, match="mode"):
        fl.convolution_matrix(V4, 3, "bad")
    with pytest.raises(FgradValueError, match="pivoting"):
        fl.qr(A, pivoting=True)
    with pytest.raises(FgradValueError, match="side"):
        fl.polar(A, side="up")
