"""The transforms on GPU arrays: jit and vmap of every registry case (tests/cases/*.py, as
tests/ops/test_primitives.py collects them) against the same transform on the CPU, and grad,
jvp, vjp, jacfwd, jacrev, hessian, custom rules, checkpointing and control flow with their
results checked to stay on the GPU."""
from __future__ import annotations

import numpy as np
import pytest

from tests.gpu._support import (assert_close, assert_on_gpu, case_params, gpu_callable, host, is_gpu, require_gpu,
                                to_gpu)

cp = require_gpu()

import fgrad  # noqa: E402
import fgrad.numpy as fnp  # noqa: E402
from tests.ops import test_primitives as registry  # noqa: E402

RTOL = 1e-7


@pytest.mark.parametrize("case", case_params(registry.JIT_CASES, "jit"))
def test_jit_matches_cpu(case):
    args = case.make_args()
    want = fgrad.jit(case.fn)(*args)
    got = fgrad.jit(gpu_callable(case, cp))(*to_gpu(cp, args))
    assert_on_gpu(got, f"{case.name} (jit)")
    assert_close(got, want, RTOL, f"{case.name} (jit)")


@pytest.mark.parametrize("case", case_params(registry.JIT_CASES, "vmap"))
def test_vmap_matches_cpu(case):
    """vmap over a batch of two examples (float inputs mapped, integer inputs shared), as
    tests/ops/test_primitives.py's test_vmap_matches_loop builds it."""
    examples = [case.make_args(seed=s) for s in (3, 4)]
    in_axes = tuple(0 if registry._is_float(a) else None for a in examples[0])
    if all(ax is None for ax in in_axes):
        pytest.skip("no float input to map over")
    stacked = tuple(np.stack([e[i] for e in examples]) if ax == 0 else examples[0][i]
                    for i, ax in enumerate(in_axes))
    want = fgrad.vmap(case.fn, in_axes=in_axes)(*stacked)
    got = fgrad.vmap(gpu_callable(case, cp), in_axes=in_axes)(*to_gpu(cp, stacked))
    assert_on_gpu(got, f"{case.name} (vmap)")
    assert_close(got, want, RTOL, f"{case.name} (vmap)")


# --- the transforms one by one, on a function of several primitives --------------------------

def _f(x, w):
    return fnp.sum(fnp.tanh(x @ w) ** 2) + fnp.sum(fnp.exp(-x))


def _inputs():
    rng = np.random.default_rng(0)
    return rng.standard_normal((4, 3)), rng.standard_normal((3, 5))


def test_grad_value_and_grad_stay_on_gpu():
    x, w = _inputs()
    want = fgrad.grad(_f, argnums=(0, 1))(x, w)
    got = fgrad.grad(_f, argnums=(0, 1))(cp.asarray(x), cp.asarray(w))
    assert_on_gpu(got, "grad")
    assert_close(got, want, RTOL, "grad")
    val, g = fgrad.value_and_grad(_f)(cp.asarray(x), cp.asarray(w))
    assert is_gpu(val) and is_gpu(g)
    np.testing.assert_allclose(host(val), _f(x, w), rtol=RTOL)


def test_jvp_vjp_linearize_on_gpu():
    x, w = _inputs()
    v = np.ones_like(x)
    gx, gw, gv = cp.asarray(x), cp.asarray(w), cp.asarray(v)
    f = lambda a: _f(a, gw)  # noqa: E731
    out, tan = fgrad.jvp(f, (gx,), (gv,))
    assert is_gpu(out) and is_gpu(tan)
    np.testing.assert_allclose(host(tan), host(fgrad.jvp(lambda a: _f(a, w), (x,), (v,))[1]), rtol=RTOL)
    out, pull = fgrad.vjp(f, gx)
    (ct,) = pull(cp.asarray(1.0))
    assert is_gpu(ct)
    _, lin = fgrad.linearize(f, gx)
    assert is_gpu(lin(gv))
    np.testing.assert_allclose(host(lin(gv)), host(tan), rtol=RTOL)


def test_unused_input_gets_zero_cotangent_on_its_device():
    gx, gy = cp.asarray(np.ones(3)), cp.asarray(np.ones(2))
    gx_bar, gy_bar = fgrad.grad(lambda a, b: fnp.sum(a * 2.0), argnums=(0, 1))(gx, gy)
    assert is_gpu(gx_bar) and is_gpu(gy_bar)
    np.testing.assert_array_equal(host(gy_bar), np.zeros(2))
    _, tangent = fgrad.jvp(lambda a: (a, fnp.zeros(3)), (gx,), (gx,))
    assert is_gpu(tangent[0])


def test_jacobians_and_hessian_on_gpu():
    x, w = _inputs()
    for transform in (fgrad.jacfwd, fgrad.jacrev, fgrad.hessian):
        want = transform(lambda a: _f(a, w))(x)
        got = transform(lambda a: _f(a, cp.asarray(w)))(cp.asarray(x))
        assert_on_gpu(got, transform.__name__)
        assert_close(got, want, 1e-6, transform.__name__)


def test_vmap_of_grad_and_in_axes_on_gpu():
    x, w = _inputs()
    xs = np.stack([x, 2 * x, -x])
    want = fgrad.vmap(fgrad.grad(_f), in_axes=(0, None))(xs, w)
    got = fgrad.vmap(fgrad.grad(_f), in_axes=(0, None))(cp.asarray(xs), cp.asarray(w))
    assert_on_gpu(got, "vmap(grad)")
    assert_close(got, want, RTOL, "vmap(grad)")


def test_jit_caches_per_device_and_keeps_results_on_each():
    x, w = _inputs()
    f = fgrad.jit(_f)
    cpu = f(x, w)
    gpu = f(cp.asarray(x), cp.asarray(w))
    again = f(x, w)
    assert not is_gpu(cpu) and is_gpu(gpu) and not is_gpu(again)
    np.testing.assert_allclose(host(gpu), host(cpu), rtol=RTOL)
    assert f.stats.traces == 2  # one trace per device: same shapes, different array types


def test_jit_with_host_constant_closure_runs_on_gpu():
    """A jitted function closing over a NumPy constant: the constant moves to the GPU."""
    c = np.arange(3.0)
    f = fgrad.jit(lambda a: fnp.sin(a) * c + 1.0)
    out = f(cp.asarray(np.ones(3)))
    assert is_gpu(out)
    np.testing.assert_allclose(host(out), np.sin(1.0) * np.arange(3.0) + 1.0)


def test_custom_jvp_and_checkpoint_on_gpu():
    @fgrad.custom_jvp
    def softplus(a):
        return fnp.log1p(fnp.exp(a))

    @softplus.defjvp
    def softplus_jvp(primals, tangents):
        (a,), (t,) = primals, tangents
        return softplus(a), t / (1.0 + fnp.exp(-a))

    x = np.linspace(-2, 2, 5)
    g = fgrad.grad(lambda a: fnp.sum(softplus(a)))(cp.asarray(x))
    assert is_gpu(g)
    np.testing.assert_allclose(host(g), 1 / (1 + np.exp(-x)), rtol=RTOL)
    h = fgrad.grad(lambda a: fnp.sum(fgrad.checkpoint(lambda b: fnp.sin(b) ** 2)(a)))(cp.asarray(x))
    assert is_gpu(h)
    np.testing.assert_allclose(host(h), 2 * np.sin(x) * np.cos(x), rtol=RTOL)


def test_control_flow_on_gpu():
    x = np.linspace(0.1, 1.0, 4)

    def f(a):
        def body(carry, xi):
            carry = carry * 0.5 + fnp.sin(xi)
            return carry, carry * 2.0
        final, ys = fgrad.lax.scan(body, fnp.zeros_like(a[0]), a)
        return final + fnp.sum(ys) + fgrad.lax.cond(final > 0, lambda b: b * 2.0, lambda b: -b, final)

    want_v, want_g = f(x), fgrad.grad(f)(x)
    got_v, got_g = f(cp.asarray(x)), fgrad.grad(f)(cp.asarray(x))
    assert is_gpu(got_v) and is_gpu(got_g)
    np.testing.assert_allclose(host(got_v), host(want_v), rtol=RTOL)
    np.testing.assert_allclose(host(got_g), host(want_g), rtol=RTOL)
    w = fgrad.lax.while_loop(lambda c: c[1] < 5, lambda c: (c[0] * 1.5, c[1] + 1), (cp.asarray(x), 0))
    assert is_gpu(w[0])
    np.testing.assert_allclose(host(w[0]), x * 1.5 ** 5, rtol=RTOL)


def test_debug_nans_reports_a_gpu_nan():
    with fgrad.debug_nans(), pytest.raises(FloatingPointError, match="log"):
        fnp.log(cp.asarray(np.array([-1.0, 1.0])))
