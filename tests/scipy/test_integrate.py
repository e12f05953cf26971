"""fgrad.scipy.integrate.odeint: values against scipy.integrate.odeint, derivatives by the
adjoint method (reverse) and through the solver (forward) against finite differences and
against jax.experimental.ode.odeint, under jit and vmap, with pytree states, parameters given
as arguments or closed over, and the errors of wrong calls."""
from __future__ import annotations

import numpy as onp
import pytest
import scipy.integrate

import fgrad
import fgrad.numpy as fnp
from fgrad.scipy.integrate import odeint, trapezoid

try:
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    from jax.experimental.ode import odeint as jax_odeint
except ImportError:  # pragma: no cover - the JAX comparisons skip
    jax = None


def forced_decay(np):
    return lambda y, t, k: -k * y + np.sin(t)


def lotka_volterra(np):
    def f(y, t, a, b):
        prey, pred = y[0], y[1]
        return np.stack([a * prey - b * prey * pred, b * prey * pred - a * pred])
    return f


Y0, TS, K = onp.array([1.0, 2.0, -0.5]), onp.linspace(0.0, 2.0, 6), onp.array([0.5, 1.5, 3.0])
LV0, LV_TS, LV_A, LV_B = onp.array([1.0, 0.5]), onp.linspace(0.0, 3.0, 7), 1.1, 0.7


def test_values_match_scipy():
    ys = odeint(forced_decay(fnp), Y0, TS, K)
    want = scipy.integrate.odeint(forced_decay(onp), Y0, TS, args=(K,), rtol=1e-12, atol=1e-12)
    onp.testing.assert_allclose(ys, want, rtol=1e-6, atol=1e-7)
    assert ys.shape == (6, 3) and ys.dtype == onp.float64
    ys = odeint(lotka_volterra(fnp), LV0, LV_TS, LV_A, LV_B)
    want = scipy.integrate.odeint(lotka_volterra(onp), LV0, LV_TS, args=(LV_A, LV_B), rtol=1e-12, atol=1e-12)
    onp.testing.assert_allclose(ys, want, rtol=1e-6, atol=1e-7)
    # tolerances tighten the solution
    loose = odeint(lotka_volterra(fnp), LV0, LV_TS, LV_A, LV_B, rtol=1e-3, atol=1e-3)
    assert onp.abs(loose - want).max() > onp.abs(ys - want).max()


def test_pytree_state_and_scalars():
    """A dict state (a harmonic oscillator), a scalar state and integer times."""
    def oscillator(s, t, w):
        return {"x": s["v"], "v": -w * w * s["x"]}
    out = odeint(oscillator, {"x": 1.0, "v": onp.float64(0.0)}, TS, 2.0)
    onp.testing.assert_allclose(out["x"], onp.cos(2.0 * TS), rtol=1e-6, atol=1e-7)
    onp.testing.assert_allclose(out["v"], -2.0 * onp.sin(2.0 * TS), rtol=1e-6, atol=1e-7)
    onp.testing.assert_allclose(odeint(lambda y, t: -y, 1.0, onp.arange(4)), onp.exp(-onp.arange(4.0)), rtol=1e-6)


def _loss(np, solver):
    def loss(y0, ts, k):
        return np.sum(solver(forced_decay(np), y0, ts, k) ** 2 * np.arange(1.0, 7.0)[:, None])
    return loss


def _finite_difference(f, x, eps=1e-5):
    g = onp.zeros_like(x)
    for i in range(x.size):
        e = onp.zeros_like(x)
        e.flat[i] = eps
        g.flat[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


def test_reverse_mode_matches_finite_differences():
    loss = _loss(fnp, odeint)
    g_y0, g_ts, g_k = fgrad.grad(loss, argnums=(0, 1, 2))(Y0, TS, K)
    tight = lambda y0, ts, k: float(fnp.sum(odeint(forced_decay(fnp), y0, ts, k, rtol=1e-12, atol=1e-12) ** 2  # noqa: E731
                                            * fnp.arange(1.0, 7.0)[:, None]))
    onp.testing.assert_allclose(g_y0, _finite_difference(lambda v: tight(v, TS, K), Y0), rtol=1e-5)
    onp.testing.assert_allclose(g_ts, _finite_difference(lambda v: tight(Y0, v, K), TS), rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(g_k, _finite_difference(lambda v: tight(Y0, TS, v), K), rtol=1e-5)


@pytest.mark.skipif(jax is None, reason="jax is not installed")
def test_reverse_mode_matches_jax():
    ours = fgrad.grad(_loss(fnp, odeint), argnums=(0, 1, 2))(Y0, TS, K)
    theirs = jax.grad(_loss(jnp, jax_odeint), argnums=(0, 1, 2))(Y0, TS, K)
    for a, b in zip(ours, theirs):
        onp.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10)
    lv = lambda np, solver: lambda y0, a, b: np.sum(solver(lotka_volterra(np), y0, LV_TS, a, b)[-1])  # noqa: E731
    ours = fgrad.grad(lv(fnp, odeint), argnums=(0, 1, 2))(LV0, LV_A, LV_B)
    theirs = jax.grad(lv(jnp, jax_odeint), argnums=(0, 1, 2))(LV0, LV_A, LV_B)
    for a, b in zip(ours, theirs):
        onp.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10)


@pytest.mark.slow
def test_forward_mode_agrees_with_reverse_mode():
    """jvp differentiates the solver with its steps held fixed; the adjoint integrates the
    sensitivity separately: both approximate the exact derivative to the tolerances."""
    f = lambda y0, k: odeint(forced_decay(fnp), y0, TS, k)  # noqa: E731
    for argnum, x in ((0, Y0), (1, K)):
        fwd = fgrad.jacfwd(f, argnums=argnum)(Y0, K)
        rev = fgrad.jacrev(f, argnums=argnum)(Y0, K)
        onp.testing.assert_allclose(fwd, rev, rtol=1e-6, atol=1e-8)
    # second order: forward over the adjoint, against differences of the gradient
    loss = lambda k: _loss(fnp, odeint)(Y0, TS, k)  # noqa: E731
    hess = fgrad.hessian(loss)(K)
    grad = fgrad.grad(loss)
    fd = onp.stack([_finite_difference(lambda v, i=i: grad(v)[i], K) for i in range(3)])
    onp.testing.assert_allclose(hess, fd, rtol=1e-4, atol=1e-6)


def test_jit_and_vmap():
    f = lambda y0, ts, k: odeint(forced_decay(fnp), y0, ts, k)  # noqa: E731
    eager = f(Y0, TS, K)
    onp.testing.assert_allclose(fgrad.jit(f)(Y0, TS, K), eager, rtol=1e-12, atol=1e-14)
    ks = onp.stack([K, 2.0 * K, 0.1 * K])
    batched = fgrad.vmap(f, in_axes=(None, None, 0))(Y0, TS, ks)
    for i in range(3):
        onp.testing.assert_allclose(batched[i], f(Y0, TS, ks[i]), rtol=1e-12, atol=1e-14)
    grad = fgrad.grad(_loss(fnp, odeint), argnums=(0, 1, 2))
    for a, b in zip(fgrad.jit(grad)(Y0, TS, K), grad(Y0, TS, K)):
        onp.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    per_example = fgrad.vmap(grad, in_axes=(None, None, 0))(Y0, TS, ks)[2]
    for i in range(3):
        onp.testing.assert_allclose(per_example[i], grad(Y0, TS, ks[i])[2], rtol=1e-10, atol=1e-12)


def test_closed_over_values_are_differentiated():
    """func may close over traced values (as JAX's odeint converts closures): their gradient
    equals the one through *args."""
    by_arg = fgrad.grad(lambda k: fnp.sum(odeint(forced_decay(fnp), Y0, TS, k)))(K)
    closed = fgrad.grad(lambda k: fnp.sum(odeint(lambda y, t: -k * y + fnp.sin(t), Y0, TS)))(K)
    onp.testing.assert_allclose(closed, by_arg, rtol=1e-12)
    onp.testing.assert_allclose(fgrad.jvp(lambda k: odeint(lambda y, t: -k * y, Y0, TS), (K,), (K,))[1],
                                fgrad.jvp(lambda k: odeint(lambda y, t, k: -k * y, Y0, TS, k), (K,), (K,))[1])


def test_float32():
    ys = odeint(forced_decay(fnp), Y0.astype(onp.float32), TS.astype(onp.float32), K.astype(onp.float32),
                rtol=1e-5, atol=1e-5)
    assert ys.dtype == onp.float32
    want = scipy.integrate.odeint(forced_decay(onp), Y0, TS, args=(K,), rtol=1e-12, atol=1e-12)
    onp.testing.assert_allclose(ys, want, rtol=1e-4, atol=1e-4)
    g = fgrad.grad(lambda k: fnp.sum(odeint(forced_decay(fnp), Y0.astype(onp.float32), TS.astype(onp.float32), k,
                                            rtol=1e-5, atol=1e-5)))(K.astype(onp.float32))
    assert g.dtype == onp.float32


def test_mxstep_and_hmax():
    """mxstep bounds the steps between output times (the solution then stops short), hmax
    the step size (more, smaller steps give the same solution)."""
    full = odeint(forced_decay(fnp), Y0, TS, K)
    short = odeint(forced_decay(fnp), Y0, TS, K, mxstep=2)
    assert onp.abs(short - full).max() > 1e-3
    onp.testing.assert_allclose(odeint(forced_decay(fnp), Y0, TS, K, hmax=0.01), full, rtol=1e-7, atol=1e-9)


def test_errors():
    with pytest.raises(ValueError, match="structure and shapes of y0"):
        odeint(lambda y, t: y[:1], Y0, TS)
    with pytest.raises(TypeError, match="arrays or scalars"):
        odeint(forced_decay(fnp), Y0, TS, "k")
    with pytest.raises(ValueError, match="1-D array of times"):
        odeint(forced_decay(fnp), Y0, TS[None], K)
    with pytest.raises(TypeError, match="callable"):
        odeint(Y0, Y0, TS)


def test_trapezoid_is_numpys():
    y, x = onp.sin(TS) + 1.0, TS ** 2
    onp.testing.assert_allclose(trapezoid(y, x), scipy.integrate.trapezoid(y, x), rtol=1e-14)
    onp.testing.assert_allclose(fgrad.grad(lambda x: trapezoid(y, x))(x),
                                _finite_difference(lambda v: scipy.integrate.trapezoid(y, v), x), rtol=1e-7)
