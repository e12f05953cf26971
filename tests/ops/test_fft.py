"""The derivative rules of the complex-valued primitives: fft, rfft, irfft (fgrad.ops.fft), the
complex parts real, imag, conj, complex (fgrad.ops.complex) and eig (fgrad.ops.decompositions).

The rules are checked by calling them directly, eagerly, under JAX's convention: a VJP is the
transpose of the JVP under the real pairing <a, b> = Re(sum(a * b)), so for f: C -> R the
gradient is df/dx - i df/dy. Each rule must (1) give the transform of the tangent as JVP (they
are linear) or match finite differences (eig), and (2) give a VJP that is the transpose of that
JVP. Then every fgrad.numpy.fft function and linalg.eig/eigvals go through fgrad's transforms:
check_grads at orders 1-2 in both modes on real and complex inputs, and grad/jvp/vjp against
JAX's. Values, dtypes, jit and vmap of fgrad.numpy.fft are in tests/cases/fft.py.
"""
from __future__ import annotations

import numpy as np
import pytest

import fgrad
import fgrad.numpy as fnp
from fgrad.core.errors import DifferentiationError, ShapeError
from fgrad.ops import complex as cx
from fgrad.ops import decompositions as dec
from fgrad.ops import fft as ops_fft
from tests import sampled

RNG = np.random.default_rng(7)


def _c(shape, rng=RNG):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def _pair(a, b) -> float:
    return float(np.real(np.sum(np.asarray(a) * np.asarray(b))))


def _check_linear_rule(prim, x, params, tangent, cotangent):
    """JVP = the primitive applied to the tangent; <ct, J t> = <J^T ct, t>."""
    out, t_out = prim.jvp((x,), (tangent,), **params)
    np.testing.assert_allclose(out, prim.impl(x, xp=np, **params), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(t_out, prim.impl(tangent, xp=np, **params), rtol=1e-12, atol=1e-12)
    (x_bar,) = prim.vjp([True], cotangent, out, x, **params)
    assert np.asarray(x_bar).dtype == np.asarray(x).dtype
    assert np.isclose(_pair(cotangent, t_out), _pair(x_bar, tangent), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("norm", ops_fft.NORMS)
@pytest.mark.parametrize("axes", [(1,), (0, 2), (2, 0)])
@pytest.mark.parametrize("inverse", [False, True])
@pytest.mark.parametrize("real_input", [False, True])
def test_fft_rule_is_its_own_transpose(norm, axes, inverse, real_input):
    shape = (3, 4, 5)
    make = RNG.standard_normal if real_input else _c
    x, t = make(shape), make(shape)
    _check_linear_rule(ops_fft.fft_p, x, dict(axes=axes, inverse=inverse, norm=norm), t, _c(shape))


@pytest.mark.parametrize("norm", ops_fft.NORMS)
@pytest.mark.parametrize("axes", [(2,), (0, 2), (2, 1)])
@pytest.mark.parametrize("n", [6, 7])
def test_rfft_and_irfft_rules(norm, axes, n):
    x = RNG.standard_normal((4, 5, n))
    params = dict(axes=axes, norm=norm)
    out = ops_fft.rfft(x, axes, norm=norm)
    _check_linear_rule(ops_fft.rfft_p, x, params, RNG.standard_normal(x.shape), _c(out.shape))
    # irfft maps the half spectrum back; the zero and Nyquist bins' imaginary parts are ignored
    lengths = tuple(x.shape[a] for a in axes)
    y = out + 0.5 * _c(out.shape)
    real_out = ops_fft.irfft(y, axes, lengths, norm=norm)
    np.testing.assert_allclose(real_out, np.fft.irfftn(y, s=lengths, axes=axes, norm=norm), rtol=1e-12, atol=1e-12)
    _check_linear_rule(ops_fft.irfft_p, y, dict(axes=axes, lengths=lengths, norm=norm), _c(y.shape),
                       RNG.standard_normal(real_out.shape))


@pytest.mark.parametrize("name", ["real", "imag", "conj"])
def test_complex_part_rules(name):
    prim = getattr(cx, f"{name}_p")
    z = _c((3, 2))
    out = prim.impl(z, xp=np)
    _check_linear_rule(prim, z, {}, _c(z.shape), (_c if name == "conj" else RNG.standard_normal)(out.shape))


def test_complex_rule_transposes_both_operands_and_sums_scalars():
    x, y = RNG.standard_normal((3,)), np.array(0.7)
    tx, ty = RNG.standard_normal((3,)), np.array(-1.3)
    out, t_out = cx.complex_p.jvp((x, y), (tx, ty))
    np.testing.assert_allclose(out, x + 0.7j)
    np.testing.assert_allclose(t_out, tx + 1j * ty)
    ct = _c((3,))
    x_bar, y_bar = cx.complex_p.vjp([True, True], ct, out, x, y)
    assert np.shape(y_bar) == ()
    assert np.isclose(_pair(ct, t_out), _pair(x_bar, tx) + _pair(y_bar, ty))


def test_gradient_of_spectral_energy_by_chaining_the_rules():
    """f(x) = sum(|fft(x)|^2) = N sum(x^2) (Parseval): chaining the VJPs of real, imag and fft
    by hand gives grad f = 2 N x -- the real-input, real-output composition fgrad.grad will
    compute once complex intermediates are allowed."""
    x = RNG.standard_normal(8)
    y = ops_fft.fft(x, (0,))
    re, im = cx.real(y), cx.imag(y)
    (ct_re,) = cx.real_p.vjp([True], 2 * re, re, y)
    (ct_im,) = cx.imag_p.vjp([True], 2 * im, im, y)
    np.testing.assert_allclose(ct_re + ct_im, 2 * np.conj(y))   # df/dRe - i df/dIm
    (x_bar,) = ops_fft.fft_p.vjp([True], ct_re + ct_im, y, x, axes=(0,), inverse=False, norm="backward")
    np.testing.assert_allclose(x_bar, 2 * 8 * x, rtol=1e-12)


def test_grad_through_fft_is_parsevals_gradient():
    x = RNG.standard_normal(8)

    def energy(x):
        y = fnp.fft.fft(x)
        return fnp.sum(fnp.real(y) ** 2 + fnp.imag(y) ** 2)

    np.testing.assert_allclose(fgrad.grad(energy)(x), 16 * x, rtol=1e-12)


@pytest.mark.parametrize("real_input", [True, False])
def test_eig_rules_match_finite_differences_and_transpose(real_input):
    n = 4
    a = RNG.standard_normal((n, n)) if real_input else _c((n, n))
    e = RNG.standard_normal((n, n)) if real_input else _c((n, n))
    packed, t_packed = dec.eig_p.jvp((a,), (e,))
    v = dec._split(packed, ((n,), (n, n)))[1]
    w_dot, v_dot = dec._split(t_packed, ((n,), (n, n)))
    h = 1e-6
    (wp, vp), (wm, vm) = np.linalg.eig(a + h * e), np.linalg.eig(a - h * e)
    # LAPACK returns the eigenvalues in a stable order for this small step; compare matched ones
    np.testing.assert_allclose(w_dot, (wp - wm) / (2 * h), rtol=1e-6, atol=1e-6)
    # |v|^2 does not depend on the phase LAPACK picks, so finite differences can see it
    fd = (np.abs(vp) ** 2 - np.abs(vm) ** 2) / (2 * h)
    np.testing.assert_allclose(2 * np.real(np.conj(v) * v_dot), fd, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.sum(np.conj(v) * v_dot, axis=0), 0, atol=1e-12)  # the gauge: v^H dv = 0
    ct = _c(packed.shape)
    (a_bar,) = dec.eig_p.vjp([True], ct, packed, a)
    assert np.asarray(a_bar).dtype == a.dtype
    assert np.isclose(_pair(ct, t_packed), _pair(a_bar, e), rtol=1e-9)


def test_complex_dtypes_follow_numpy():
    x32 = RNG.standard_normal(6).astype(np.float32)
    assert fnp.fft.fft(x32).dtype == np.complex64
    assert fnp.fft.irfft(fnp.fft.rfft(x32)).dtype == np.float32
    assert fnp.fft.rfft(np.arange(6)).dtype == np.complex128
    assert fnp.real(np.ones(2, np.complex64)).dtype == np.float32
    z = fgrad.jit(lambda x: fnp.fft.ifft(fnp.fft.fft(x)))(x32)
    np.testing.assert_allclose(np.real(z), x32, rtol=1e-5, atol=1e-6)


def test_fft_argument_errors_name_the_problem():
    x = np.ones((3, 4))
    with pytest.raises(ShapeError, match="repeat"):
        fnp.fft.fftn(x, axes=(1, 1))
    with pytest.raises(ValueError, match="norm"):
        fnp.fft.fft(x, norm="unitary")
    with pytest.raises(ValueError, match="0"):
        fnp.fft.rfft(x, n=0)
    with pytest.raises(TypeError, match="complex"):
        fnp.fft.rfft(x + 1j)
    with pytest.raises(ShapeError, match="different lengths"):
        fnp.fft.fftn(x, s=(2, 2, 2), axes=(0, 1))
    with pytest.raises(TypeError, match="holomorphic=True"):  # a complex output has no grad
        fgrad.grad(lambda x: fnp.sum(fnp.fft.fft(x)))(np.ones(4))


def test_fftshift_gradient_is_the_inverse_shift():
    x = RNG.standard_normal((3, 4))
    w = RNG.standard_normal((3, 4))
    g = fgrad.grad(lambda x: fnp.sum(fnp.fft.fftshift(x) * w))(x)
    np.testing.assert_allclose(g, np.fft.ifftshift(w))


# --- through fgrad's transforms: every fgrad.numpy.fft function, eig and eigvals --------------------

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy
from fgrad.test_util import check_grads  # noqa: E402

# name -> (args builder, keyword arguments); complex input where NumPy's takes it, real for the
# real-input transforms (rfft*, ihfft), the half spectrum for the inverse real ones
_FFT_CASES = {
    "fft": (lambda: (_c((2, 5)),), {}),
    "ifft": (lambda: (_c((2, 5)),), {"norm": "ortho"}),
    "fft2": (lambda: (_c((3, 4)),), {}),
    "ifft2": (lambda: (_c((3, 4)),), {"s": (2, 5)}),
    "fftn": (lambda: (_c((2, 3, 4)),), {"axes": (0, 2)}),
    "ifftn": (lambda: (_c((2, 3, 4)),), {"norm": "forward"}),
    "rfft": (lambda: (RNG.standard_normal((2, 6)),), {}),
    "irfft": (lambda: (_c((2, 4)),), {"n": 7}),
    "rfft2": (lambda: (RNG.standard_normal((3, 5)),), {}),
    "irfft2": (lambda: (_c((3, 4)),), {}),
    "rfftn": (lambda: (RNG.standard_normal((2, 3, 4)),), {"norm": "ortho"}),
    "irfftn": (lambda: (_c((2, 3, 3)),), {"s": (3, 5), "axes": (1, 2)}),
    "hfft": (lambda: (_c((2, 4)),), {}),
    "ihfft": (lambda: (RNG.standard_normal((2, 6)),), {}),
    "fftshift": (lambda: (_c((3, 4)),), {}),
    "ifftshift": (lambda: (_c((3, 4)),), {"axes": 1}),
}
# the fft functions that are not transforms of values (sample frequencies)
_FFT_NOT_DIFFERENTIABLE = {"fftfreq", "rfftfreq"}
# scipy.fft's Hermitian transforms over several axes (NumPy and JAX have none to compare with):
# tests/numpy/test_fft_hermitian.py compares them with scipy.fft and checks their derivatives
_FFT_SCIPY_ONLY = {"hfft2", "hfftn", "ihfft2", "ihfftn"}


def test_every_fft_function_is_covered():
    public = set(fnp.fft.__all__)
    assert public == set(_FFT_CASES) | _FFT_NOT_DIFFERENTIABLE | _FFT_SCIPY_ONLY


@pytest.mark.parametrize("name", sorted(_FFT_CASES))
def test_fft_functions_differentiate_at_orders_1_and_2(name):
    make, kw = _FFT_CASES[name]
    args = make()
    f = lambda x: getattr(fnp.fft, name)(x, **kw)  # noqa: E731
    np.testing.assert_allclose(f(*args), getattr(np.fft, name)(*args, **kw), rtol=1e-12, atol=1e-12)
    check_grads(f, args, order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("name", sampled(sorted(_FFT_CASES), 2))
def test_fft_derivatives_match_jax(name):
    make, kw = _FFT_CASES[name]
    (x,) = make()
    out = getattr(np.fft, name)(x, **kw)
    w = _c(out.shape)
    t = _c(x.shape) if x.dtype.kind == "c" else RNG.standard_normal(x.shape)

    def loss(m):
        return lambda x: m.sum(m.real(getattr(m.fft, name)(x, **kw) * w))
    np.testing.assert_allclose(fgrad.grad(loss(fnp))(x), jax.grad(loss(jnp))(x), rtol=1e-10, atol=1e-10)
    fj = lambda m: (lambda x: getattr(m.fft, name)(x, **kw))  # noqa: E731
    np.testing.assert_allclose(fgrad.jvp(fj(fnp), (x,), (t,))[1], jax.jvp(fj(jnp), (x,), (t,))[1],
                               rtol=1e-10, atol=1e-10)
    ct = out.dtype.type(1) * (w if out.dtype.kind == "c" else w.real)
    (g,) = fgrad.vjp(fj(fnp), x)[1](ct)
    (gj,) = jax.vjp(fj(jnp), x)[1](ct)
    np.testing.assert_allclose(g, gj, rtol=1e-10, atol=1e-10)
    # jit and vmap of the derivative agree with the eager one
    np.testing.assert_allclose(fgrad.jit(fgrad.grad(loss(fnp)))(x), jax.grad(loss(jnp))(x), rtol=1e-10, atol=1e-10)
    xs = np.stack([x, 2 * x])
    np.testing.assert_allclose(fgrad.vmap(fgrad.grad(loss(fnp)))(xs), jax.vmap(jax.grad(loss(jnp)))(xs),
                               rtol=1e-10, atol=1e-10)


def test_fft_is_holomorphic_so_jacobians_match_jax():
    x = _c((4,))
    for jac in ("jacfwd", "jacrev"):
        np.testing.assert_allclose(getattr(fgrad, jac)(fnp.fft.fft, holomorphic=True)(x),
                                   getattr(jax, jac)(jnp.fft.fft, holomorphic=True)(x), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(fgrad.jacfwd(fnp.fft.rfft)(x.real), jax.jacfwd(jnp.fft.rfft)(x.real), atol=1e-12)


def _eig_loss(m, c, u):
    """A real function of eig's outputs that depends neither on the eigenvectors' phases nor on
    the order of the eigenpairs (LAPACK's real and complex routines order a real matrix's
    conjugate pairs differently, and JAX decomposes a + 0j): each pair's term is
    Re(c lambda_k) (u . |v_k|^2)."""
    def f(a):
        if m is jnp:  # JAX differentiates eigenvectors only when asked (enable_eigvec_derivs)
            vals, vecs = jax.lax.linalg.eig(a + 0j, compute_left_eigenvectors=False, enable_eigvec_derivs=True)
        else:
            vals, vecs = m.linalg.eig(a)
        return m.sum(m.real(vals * c) * (u @ (m.abs(vecs) ** 2)))
    return f


def _by_value(vals, tangents):
    """Eigenvalues' tangents ordered by their eigenvalues (real part, then imaginary)."""
    vals, tangents = np.asarray(vals), np.asarray(tangents)
    order = np.lexsort((vals.imag.round(8), vals.real.round(8)))
    return tangents[order]


@pytest.mark.parametrize("real_input", [True, False])
def test_eig_differentiates_at_orders_1_and_2_and_matches_jax(real_input):
    """Eight matrices, whatever ran before (a seed of its own); among the real ones, some
    with a conjugate pair that LAPACK's real routine lists in another order than the complex
    routine JAX's a + 0j takes (the test asserts that it met one)."""
    n, rng = 3, np.random.default_rng(1)
    vals_w, reordered = _c(n, rng), 0
    for k in range(8):
        a = rng.standard_normal((n, n)) if real_input else _c((n, n), rng)
        c, u = complex(*rng.standard_normal(2)), rng.standard_normal(n)
        if k == 0:
            check_grads(lambda a: fnp.linalg.eigvals(a) * vals_w, (a,), order=2)
        check_grads(_eig_loss(fnp, c, u), (a,), order=2)
        np.testing.assert_allclose(fgrad.grad(_eig_loss(fnp, c, u))(a), jax.grad(_eig_loss(jnp, c, u))(a),
                                   rtol=1e-8, atol=1e-8)
        t = rng.standard_normal((n, n)) if real_input else _c((n, n), rng)
        got, want = fgrad.jvp(fnp.linalg.eigvals, (a,), (t,)), jax.jvp(jnp.linalg.eigvals, (a,), (t,))
        np.testing.assert_allclose(_by_value(*got), _by_value(*want), rtol=1e-8, atol=1e-8)
        jax_order = jax.lax.linalg.eig(a + 0j, compute_left_eigenvectors=False)[0]
        reordered += not np.allclose(got[0], jax_order)
    assert reordered > 0 if real_input else reordered == 0
