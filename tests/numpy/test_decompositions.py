"""Decompositions and matrix functions beyond the registry's generic cases (tests/cases/
decompositions.py, scipy_linalg.py): behaviour at degenerate spectra (JAX's: the derivative of
eigen/singular vectors is inf/NaN where it is undefined, the derivative of the values alone
stays finite), the constant-rank derivative of pinv, third-order derivatives against JAX, and
the errors for arguments that cannot work."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad
import fgrad.numpy as fnp
import fgrad.scipy.linalg as fsl
import fgrad.scipy.signal as fsig
from fgrad.core.errors import FgradValueError, ShapeError

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
import jax.scipy.linalg as jsl  # noqa: E402

RNG = np.random.default_rng(3)


def _jvp_n(jvp, f, x, d, order):
    """The order-th derivative of t -> f(x + t d) at 0, by nested JVPs of `jvp` (fgrad's or JAX's)."""
    g = f
    for _ in range(order):
        g = (lambda h: lambda y: jvp(h, (y,), (d,))[1])(g)
    return g(x)


# --- degenerate spectra -----------------------------------------------------------------------------

DEGENERATE = np.diag([1.0, 1.0, 3.0])          # an exactly repeated eigenvalue


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # the unused vectors' tangent is NaN
@pytest.mark.parametrize("mode", ["rev", "fwd", "jit"])
def test_eigenvalue_functions_have_finite_exact_gradients_at_repeated_eigenvalues(mode):
    def f(a):
        w = fnp.linalg.eigvalsh(a)
        return fnp.sum(w ** 2) + fnp.sum(w)      # ||a||_F^2 + trace(a): gradient 2a + I

    e = RNG.standard_normal((3, 3))
    want = 2 * DEGENERATE + np.eye(3)
    if mode == "fwd":
        got = fgrad.jvp(f, (DEGENERATE,), (e,))[1]
        np.testing.assert_allclose(got, np.sum(want * (e + e.T) / 2), rtol=1e-12)
    else:
        g = fgrad.grad(f)
        got = (fgrad.jit(g) if mode == "jit" else g)(DEGENERATE)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    jax_grad = jax.grad(lambda a: jnp.sum(jnp.linalg.eigvalsh(a) ** 2) + jnp.sum(jnp.linalg.eigvalsh(a)))
    np.testing.assert_allclose(jax_grad(DEGENERATE), want, rtol=1e-12, atol=1e-12)


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # inf * 0 marks the undefined derivative
def test_eigenvector_gradient_at_repeated_eigenvalues_is_not_finite_as_in_jax():
    weights = np.array([1.0, 2.0, 3.0])

    def f(M, a):
        return M.sum(M.linalg.eigh(a)[1][:, 0] ** 2 * weights)

    g = fgrad.grad(lambda a: f(fnp, a))(DEGENERATE)
    assert not np.all(np.isfinite(g)), g
    assert not np.all(np.isfinite(jax.grad(lambda a: f(jnp, a))(DEGENERATE)))
    t = fgrad.jvp(lambda a: f(fnp, a), (DEGENERATE,), (RNG.standard_normal((3, 3)),))[1]
    assert not np.isfinite(t)


def test_singular_value_functions_are_finite_at_repeated_and_zero_singular_values():
    a = np.array([[2.0, 0.0], [0.0, 2.0], [0.0, 0.0]])   # s = (2, 2): repeated
    np.testing.assert_allclose(fgrad.grad(lambda a: fnp.sum(fnp.linalg.svdvals(a) ** 2))(a), 2 * a)
    nuclear = fgrad.grad(lambda a: fnp.linalg.norm(a, "nuc"))(a)
    np.testing.assert_allclose(nuclear, a / 2, atol=1e-12)          # U V^T
    rank1 = np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 0.0]])  # s = (1, 0): a zero singular value
    g = fgrad.grad(lambda a: fnp.sum(fnp.linalg.svd(a, compute_uv=False) ** 2))(rank1)
    np.testing.assert_allclose(g, 2 * rank1, atol=1e-12)
    assert np.all(np.isfinite(fgrad.grad(lambda a: fnp.linalg.norm(a, 2))(rank1)))


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
def test_singular_vector_gradient_at_repeated_singular_values_is_not_finite():
    a = np.array([[2.0, 0.0], [0.0, 2.0], [0.0, 0.0]])
    weights = np.array([1.0, 2.0, 3.0])
    g = fgrad.grad(lambda a: fnp.sum(fnp.linalg.svd(a, full_matrices=False)[0][:, 0] ** 2 * weights))(a)
    assert not np.all(np.isfinite(g)), g


def test_pinv_derivative_at_a_rank_deficient_matrix_is_the_constant_rank_one_as_jax():
    u, v = RNG.standard_normal((4, 1)), RNG.standard_normal((1, 3))
    a, d = u @ v, RNG.standard_normal((4, 3))
    got = fgrad.jvp(lambda a: fnp.linalg.pinv(a, rcond=1e-10), (a,), (d,))
    want = jax.jvp(lambda a: jnp.linalg.pinv(a, rtol=1e-10), (a,), (d,))
    np.testing.assert_allclose(got[0], want[0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-8, atol=1e-10)


# --- third derivatives against JAX ----------------------------------------------------------------

def _sym(x):
    return x + x.T


def _spread(m, n):
    u = np.linalg.qr(RNG.standard_normal((m, m)))[0]
    v = np.linalg.qr(RNG.standard_normal((n, n)))[0]
    s = np.zeros((m, n))
    k = min(m, n)
    s[np.arange(k), np.arange(k)] = np.linspace(2.5, 1.0, k)
    return u @ s @ v


_THIRD = {
    "eigh": (lambda M, a: (lambda w, v: (v * w ** 3) @ v.T)(*M.linalg.eigh(a)), _sym(_spread(3, 3))),
    "svd": (lambda M, a: (lambda u, s, vh: M.concatenate([M.ravel((u * s ** 2) @ vh), M.ravel(u * u)]))(
        *M.linalg.svd(a, full_matrices=False)), _spread(4, 3)),
    "qr": (lambda M, a: (lambda q, r: M.concatenate([M.ravel(q), M.ravel(r)]))(*M.linalg.qr(a)),
           RNG.standard_normal((4, 3))),
    "pinv": (lambda M, a: M.linalg.pinv(a), _spread(3, 4)),
    "expm": (lambda M, a: (fsl if M is fnp else jsl).expm(a), 0.5 * RNG.standard_normal((3, 3))),
    "cond": (lambda M, a: M.linalg.cond(a), _spread(3, 3)),
}


@pytest.mark.slow  # (XLA's compiles for each JAX reference dominate; CI's slow step runs it)
@pytest.mark.parametrize("name", sorted(_THIRD))
def test_third_derivatives_agree_with_jax(name):
    f, x = _THIRD[name]
    d = RNG.standard_normal(x.shape)
    for order in (1, 2, 3):
        got = _jvp_n(fgrad.jvp, lambda a: f(fnp, a), x, d, order)
        want = _jvp_n(jax.jvp, lambda a: f(jnp, a), x, d, order)
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-8, err_msg=f"{name}, order {order}")


def test_sqrtm_and_sylvester_hessians_match_finite_differences_of_the_gradient():
    a = _sym(_spread(3, 3)) + 6 * np.eye(3)
    d = RNG.standard_normal((3, 3))
    f = lambda a: fnp.sum(fsl.sqrtm(a) ** 3)    # noqa: E731
    g = fgrad.grad(f)
    h = 1e-5
    fd = (g(a + h * d) - g(a - h * d)) / (2 * h)
    np.testing.assert_allclose(fgrad.jvp(g, (a,), (d,))[1], fd, rtol=1e-6, atol=1e-7)


# --- errors ---------------------------------------------------------------------------------------

def test_sqrtm_of_a_real_matrix_without_a_real_root_says_so():
    with pytest.raises(FgradValueError, match="negative real axis"):
        fsl.sqrtm(-np.eye(2))
    z = fsl.sqrtm(-np.eye(2).astype(complex))
    np.testing.assert_allclose(z @ z, -np.eye(2), atol=1e-12)


def test_argument_errors_name_the_value_and_the_fix():
    with pytest.raises(ShapeError, match=r"\(2, 3\)"):
        fnp.linalg.eigh(np.ones((2, 3)))
    with pytest.raises(FgradValueError, match="raw"):
        fnp.linalg.qr(np.ones((3, 2)), mode="raw")
    with pytest.raises(ShapeError, match="lstsq"):
        fnp.linalg.lstsq(np.ones((3, 2)), np.ones(4))
    with pytest.raises(TypeError, match="integer"):
        fnp.linalg.matrix_power(np.eye(2), 1.5)
    with pytest.raises(FgradValueError, match="both"):
        fnp.linalg.pinv(np.eye(2), rcond=1e-3, rtol=1e-3)
    with pytest.raises(FgradValueError, match="l_and_u"):
        fsl.solve_banded(1, np.ones((3, 4)), np.ones(4))
    with pytest.raises(ShapeError, match="dimensionality"):
        fsig.convolve(np.ones((2, 2)), np.ones(2))
    with pytest.raises(ShapeError, match="at least as large"):
        fsig.convolve(np.ones((2, 5)), np.ones((3, 3)), mode="valid")
    with pytest.raises(FgradValueError, match="generalized"):
        fsl.eigh(np.eye(2), np.eye(2))


def test_lstsq_matches_numpy_including_rank():
    a, b = _spread(5, 3), RNG.standard_normal((5, 2))
    got, want = fnp.linalg.lstsq(a, b), np.linalg.lstsq(a, b)
    for x, y in zip(got, want):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-10, atol=1e-12)
    assert np.asarray(got[2]).dtype == np.int32
