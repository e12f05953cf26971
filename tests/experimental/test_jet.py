"""fgrad.experimental.jet (issue 25, JAX parity: Taylor-mode `jet`), checked against
jax.experimental.jet.jet on the same functions and series (orders 1 to 4, float64), and
against JAX's repeated forward mode: the k-th output term is the k-th derivative in t of
f(x(t)), x(t) = x0 + sum_k h_k t^k / k!, which also covers the primitives JAX's jet has no
rule for (tan, arctan, arcsin, ...). Then composition with jit, grad and vmap, custom_jvp
functions, zero series, pytree outputs and the errors."""
from __future__ import annotations

import math
import types

import numpy as np
import pytest

import fgrad
import fgrad.nn
import fgrad.numpy as fnp
import fgrad.scipy.special
from fgrad.experimental.jet import jet, jet2

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
import jax.nn  # noqa: E402,F401
import jax.scipy.special  # noqa: E402,F401
from jax.experimental import jet as jax_jet  # noqa: E402
from tests import sampled  # noqa: E402


@pytest.fixture(autouse=True)
def x64():
    """JAX in 64 bits for these tests only (fgrad computes in float64 by default)."""
    old = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", old)


F = types.SimpleNamespace(np=fnp, nn=fgrad.nn, special=fgrad.scipy.special, lax=fgrad.lax)
J = types.SimpleNamespace(np=jnp, nn=jax.nn, special=jax.scipy.special, lax=jax.lax)

RNG = np.random.default_rng(0)
POS = RNG.uniform(0.5, 1.5, (2, 3))             # positive (log, sqrt, pow)
MIXED = np.array([[-1.3, 0.4, 2.1], [0.7, -0.2, -1.6]])  # both signs, away from 0
UNIT = RNG.uniform(-0.6, 0.6, (2, 3))           # inside (-1, 1) (arcsin, arctanh)
OTHER = RNG.uniform(0.5, 1.5, (2, 3))

# name -> (f(lib, x[, y]), primal inputs, whether JAX 0.10's jet handles it: it has no rule for
# tan, atan, asin, acos; its select rule fails on clip's scalar bounds; and custom_jvp functions
# (jax.nn.relu, softplus, jnp.logaddexp) leak a JetTracer there (UnexpectedTracerError). Those
# are compared with the repeated forward mode only.)
CASES = {
    "neg": (lambda L, x: -x, [MIXED], True),
    "add_sub": (lambda L, x, y: x + y - 2.0 * x, [MIXED, OTHER], True),
    "mul": (lambda L, x, y: x * y * x, [MIXED, OTHER], True),
    "div": (lambda L, x, y: x / y + 1.0 / x, [POS, OTHER], True),
    "integer_pow": (lambda L, x: x ** 3 + x ** 2 - x ** -2, [POS], True),
    "integer_pow_at_zero": (lambda L, x: x ** 3 + x ** 2, [np.zeros(3)], True),
    "pow_const": (lambda L, x: x ** 2.5 + L.np.power(x, -0.5), [POS], True),
    # a negative base: JAX's jet computes x^r's terms through log x, NaN there (a documented
    # difference); fgrad's power recurrence gives the derivatives
    "pow_negative_base": (lambda L, x: L.np.power(x, 3.0) + L.np.power(x * x, 0.75), [MIXED], False),
    "pow_both": (lambda L, x, y: L.np.power(x, y), [POS, OTHER], True),
    "exp": (lambda L, x: L.np.exp(x), [MIXED], True),
    "log": (lambda L, x: L.np.log(x), [POS], True),
    "log1p": (lambda L, x: L.np.log1p(x), [POS], True),
    "expm1": (lambda L, x: L.np.expm1(x), [MIXED], True),
    "sqrt": (lambda L, x: L.np.sqrt(x), [POS], True),
    "rsqrt": (lambda L, x: 1.0 / L.np.sqrt(x), [POS], True),
    "sin_cos": (lambda L, x: L.np.sin(x) * L.np.cos(2.0 * x), [MIXED], True),
    "sinh_cosh": (lambda L, x: L.np.sinh(x) + L.np.cosh(x) ** 2, [MIXED], True),
    "tan": (lambda L, x: L.np.tan(x), [UNIT], False),
    "tanh": (lambda L, x: L.np.tanh(x), [MIXED], True),
    "logistic": (lambda L, x: L.nn.sigmoid(x), [MIXED], True),
    "erf": (lambda L, x: L.special.erf(x), [MIXED], True),
    "erfc": (lambda L, x: L.special.erfc(x), [MIXED], True),
    "erfinv": (lambda L, x: L.special.erfinv(x), [UNIT], True),
    "cbrt": (lambda L, x: L.np.cbrt(x), [MIXED], False),
    "arctan": (lambda L, x: L.np.arctan(x), [MIXED], False),
    "arcsin_arccos": (lambda L, x: L.np.arcsin(x) + 2.0 * L.np.arccos(x), [UNIT], False),
    "arcsinh": (lambda L, x: L.np.arcsinh(x), [MIXED], True),
    "arccosh": (lambda L, x: L.np.arccosh(x + 1.0), [POS], True),
    "arctanh": (lambda L, x: L.np.arctanh(x), [UNIT], True),
    "arctan2": (lambda L, x, y: L.np.arctan2(x, y), [MIXED, OTHER], True),
    "abs": (lambda L, x: L.np.abs(x) * x, [MIXED], True),
    "maximum_minimum": (lambda L, x, y: L.np.maximum(x, y) - L.np.minimum(x, 0.5 * y), [MIXED, OTHER], True),
    "maximum_tie": (lambda L, x, y: L.np.maximum(x, y), [POS, POS], True),
    "clip": (lambda L, x: L.np.clip(x, -1.0, 1.0), [MIXED], False),
    "relu": (lambda L, x: L.nn.relu(x), [MIXED], False),
    "dot": (lambda L, x, y: L.np.dot(x, y.T) + L.np.einsum("ij,ij->i", x, y)[:, None], [MIXED, OTHER], True),
    "sum_mean": (lambda L, x: L.np.sum(x, axis=0) + L.np.mean(x), [MIXED], True),
    "reduce_max_min": (lambda L, x: L.np.max(x, axis=1) + L.np.min(x), [MIXED], True),
    "reduce_max_tie": (lambda L, x: L.np.max(x), [np.array([1.0, 3.0, 3.0])], True),
    "shapes": (lambda L, x: L.np.broadcast_to(x.reshape(3, 2).T[:, None, :], (2, 4, 3))[1:, ::2],
               [MIXED], True),
    "concatenate_stack": (lambda L, x, y: L.np.concatenate([x, L.np.stack([y[0], x[1]])], axis=1),
                          [MIXED, OTHER], True),
    "squeeze_expand": (lambda L, x: L.np.squeeze(L.np.expand_dims(x, 0), 0) * 2.0, [MIXED], True),
    "flip_pad": (lambda L, x: L.np.pad(L.np.flip(x, 1), 1), [MIXED], True),
    "index": (lambda L, x: x[L.np.array([1, 0, 1]), 1:], [MIXED], True),
    "where": (lambda L, x, y: L.np.where(x > 0, x * y, L.np.exp(y)), [MIXED, OTHER], True),
    "astype": (lambda L, x: L.np.exp(x).astype(L.np.float32).astype(L.np.float64), [MIXED], True),
    "cumsum": (lambda L, x: L.np.cumsum(x * x, axis=1), [MIXED], True),
    "cumprod_cummax": (lambda L, x: L.lax.cumprod(x, axis=1) + L.lax.cummax(x, axis=0, reverse=True),
                       [MIXED], True),
    "cumlogsumexp": (lambda L, x: L.lax.cumlogsumexp(x, axis=1), [MIXED], False),  # no rule in JAX
    "logaddexp": (lambda L, x, y: L.np.logaddexp(x, y), [MIXED, OTHER], False),
    "softplus": (lambda L, x: L.nn.softplus(x), [MIXED], False),
    "log_softmax": (lambda L, x: L.nn.log_softmax(x, axis=1), [MIXED], True),
    "gelu_silu": (lambda L, x: L.nn.gelu(x) + L.nn.silu(x), [MIXED], True),
    "mod_fmod": (lambda L, x, y: L.np.mod(x, 0.7) + L.np.fmod(x * y, 0.3), [MIXED, OTHER], False),
    "norm_var": (lambda L, x: L.np.linalg.norm(x) + L.np.var(x, axis=0), [MIXED], True),
    "composite": (lambda L, x, y: L.np.sum(L.np.tanh(x @ y.T) ** 2) / L.np.sqrt(1.0 + L.np.sum(y * y)),
                  [MIXED, OTHER], True),
}


def _series(primals, order, seed=1):
    rng = np.random.default_rng(seed)
    return [[rng.normal(size=np.shape(p)) for _ in range(order)] for p in primals]


def _close(a, b, rtol=1e-9, atol=1e-10):
    np.testing.assert_allclose(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64),
                               rtol=rtol, atol=atol)


def _taylor_derivatives(f, primals, series, order):
    """The reference by repeated forward mode (JAX's jacfwd in t): d^k/dt^k f(x(t)) at 0."""
    def path(t):
        xs = [x + sum(h * t ** (k + 1) / math.factorial(k + 1) for k, h in enumerate(hs))
              for x, hs in zip(primals, series)]
        return f(*xs)
    out, derivs = path(0.0), []
    g = path
    for _ in range(order):
        g = jax.jacfwd(g)
        derivs.append(g(0.0))
    return out, derivs


# orders 2-4 (JAX's nested forward mode makes each case up to seconds) run in CI's slow step
@pytest.mark.parametrize("order", [1] + [pytest.param(k, marks=pytest.mark.slow) for k in (2, 3, 4)])
@pytest.mark.parametrize("name", sampled(list(CASES), 2))
def test_matches_jax_jet(name: str, order: int) -> None:
    f, primals, jax_has_rules = CASES[name]
    series = _series(primals, order)
    # (astype's float32 round trip rounds each term at 1e-8 relative)
    tol = 1e-6 if name == "astype" else 1e-8
    fp, fs = jet(lambda *a: f(F, *a), tuple(primals), tuple(map(tuple, series)))
    jp, js = _taylor_derivatives(lambda *a: f(J, *a), [jnp.asarray(p) for p in primals], series, order)
    _close(fp, jp)
    assert len(fs) == order
    for k in range(order):
        _close(fs[k], js[k], rtol=tol, atol=tol)
    if jax_has_rules:
        jp2, js2 = jax_jet.jet(lambda *a: f(J, *a), tuple(map(jnp.asarray, primals)),
                               tuple(tuple(map(jnp.asarray, s)) for s in series))
        _close(fp, jp2)
        for k in range(order):
            _close(fs[k], js2[k], rtol=tol, atol=tol)
            assert np.shape(fs[k]) == np.shape(js2[k])


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n, c in CASES.items() if c[2]])
def test_order_8_matches_jax_jet(name: str) -> None:
    # JAX's own jet at order 8 where it has the rules (nested forward mode to order 8 would take
    # minutes per case here; tests/experimental/test_jet_registry.py checks every primitive
    # against fgrad's nested jvp at order 8)
    f, primals, _ = CASES[name]
    series = [[0.5 * t for t in s] for s in _series(primals, 8)]
    fp, fs = jet(lambda *a: f(F, *a), tuple(primals), tuple(map(tuple, series)))
    jp, js = jax_jet.jet(lambda *a: f(J, *a), tuple(map(jnp.asarray, primals)),
                         tuple(tuple(map(jnp.asarray, s)) for s in series))
    _close(fp, jp)
    for k in range(8):
        scale = max(1.0, float(np.max(np.abs(np.asarray(js[k])))))
        tol = 1e-6 if name == "astype" else 1e-9 * 10 ** (k / 2)
        _close(fs[k], js[k], rtol=tol, atol=tol * scale)


def _torch_softplus(L, x):
    # fgrad's softplus primitive (fgrad.torch's F.softplus) with PyTorch's beta and threshold:
    # x itself past the threshold
    if L is F:
        from fgrad.ops.nn.dense import softplus
        return softplus(x, beta=2.0, threshold=3.0)
    z = 2.0 * x
    return L.np.where(z > 3.0, x, L.np.logaddexp(z, 0.0) / 2.0)


# functions whose gradient (grad's program: transposes, tanh_grad, logistic_grad, relu_grad,
# softplus_grad, ...) goes through jet
GRAD_CASES = {
    "tanh_sigmoid": lambda L, x: L.np.sum(L.np.tanh(x) * L.nn.sigmoid(2.0 * x) + L.np.sin(x) ** 2),
    "relu_softplus": lambda L, x: L.np.sum(L.nn.relu(x) * L.np.exp(x) + L.nn.softplus(x) ** 2),
    "torch_softplus": lambda L, x: L.np.sum(_torch_softplus(L, x) ** 2),
    "log_softmax_max": lambda L, x: L.np.sum(L.nn.log_softmax(x) ** 2) + L.np.max(x) * L.np.sqrt(1.0 + L.np.sum(x * x)),
}


@pytest.mark.parametrize("order", [1, pytest.param(3, marks=pytest.mark.slow)])
@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_jet_of_grad(name: str, order: int) -> None:
    f = GRAD_CASES[name]
    x = MIXED[0]
    series = _series([x], order, seed=5)
    fp, fs = jet(fgrad.grad(lambda x: f(F, x)), (x,), tuple(map(tuple, series)))
    jp, js = _taylor_derivatives(jax.grad(lambda x: f(J, x)), [jnp.asarray(x)], series, order)
    _close(fp, jp)
    for k in range(order):
        _close(fs[k], js[k], rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("bias", [False, True])
def test_convolution_matches_jax(bias: bool) -> None:
    rng = np.random.default_rng(7)
    x, w, b = rng.normal(size=(1, 2, 5, 5)), rng.normal(size=(3, 2, 2, 2)), rng.normal(size=3)
    sx, sw, sb = ([rng.normal(size=a.shape) for _ in range(3)] for a in (x, w, b))

    def f(lax, x, w, b):
        out = lax.conv_general_dilated(x, w, (1, 1), "VALID")
        return out + b[None, :, None, None] if bias else out
    fp, fs = jet(lambda *a: f(fgrad.lax, *a), (x, w, b), (sx, sw, sb))
    jp, js = jax_jet.jet(lambda *a: f(jax.lax, *a), tuple(map(jnp.asarray, (x, w, b))),
                         tuple(tuple(map(jnp.asarray, s)) for s in (sx, sw, sb)))
    _close(fp, jp)
    for a, c in zip(fs, js):
        _close(a, c)
    if bias:  # conv2d's own bias operand (fgrad.torch's F.conv2d)
        from fgrad.ops.nn.conv import conv2d
        fp2, fs2 = jet(lambda x, w, b: conv2d(x, w, bias=b), (x, w, b), (sx, sw, sb))
        _close(fp2, jp)
        for a, c in zip(fs2, js):
            _close(a, c)


def test_first_term_is_jvp_at_kinks() -> None:
    # at relu's and max's kinks the first term is the directional derivative jvp gives
    x = np.array([0.0, -0.5, 0.5])
    v = np.array([1.0, 2.0, -3.0])
    for f in (fgrad.nn.relu, lambda x: fnp.maximum(x, 0.0), lambda x: fnp.max(x * x)):
        _, (t1, t2) = jet(f, (x,), ((v, v),))
        _close(t1, fgrad.jvp(f, (x,), (v,))[1])
    # abs at 0 follows JAX's jet (the sign of the x >= 0 side: the terms themselves), not
    # jvp's sign(0) = 0
    _, fs = jet(fnp.abs, (x,), ((v, v),))
    _, js = jax_jet.jet(jnp.abs, (jnp.asarray(x),), ((jnp.asarray(v),) * 2,))
    for a, b in zip(fs, js):
        _close(a, b)
    assert np.asarray(fs[0])[0] == 1.0


def test_custom_vjp_function_goes_through_its_own_body() -> None:
    @fgrad.custom_vjp
    def f(x):
        return fnp.exp(x) * fnp.cos(x)
    f.defvjp(lambda x: (f(x), x), lambda x, g: (1000.0 * g,))  # a deliberately wrong rule
    fp, fs = jet(f, (MIXED,), ((OTHER, POS, OTHER),))
    jp, js = jax_jet.jet(lambda x: jnp.exp(x) * jnp.cos(x), (jnp.asarray(MIXED),),
                         ((jnp.asarray(OTHER), jnp.asarray(POS), jnp.asarray(OTHER)),))
    _close(fp, jp)
    for a, b in zip(fs, js):
        _close(a, b)


def test_docstring_example_faa_di_bruno() -> None:
    h0, h1, h2 = 0.5 ** 3, 3 * 0.5 ** 2, 6 * 0.5
    f0, (f1, f2) = jet(fnp.sin, (h0,), ((h1, h2),))
    _close(f0, np.sin(h0))
    _close(f1, np.cos(h0) * h1)
    _close(f2, -np.sin(h0) * h1 ** 2 + np.cos(h0) * h2)


@pytest.mark.parametrize("order", [1, 3])
def test_jet2_taylor_coefficients_match_jax(order: int) -> None:
    f = CASES["composite"][0]
    primals = CASES["composite"][1]
    series = _series(primals, order, seed=3)
    fp, fs = jet2(lambda *a: f(F, *a), tuple(primals), tuple(map(tuple, series)))
    jp, js = jax_jet.jet2(lambda *a: f(J, *a), tuple(map(jnp.asarray, primals)),
                          tuple(tuple(map(jnp.asarray, s)) for s in series))
    for k in range(order):
        _close(fs[k], js[k])
    # Taylor coefficients are the derivative terms over k!
    _, ds = jet(lambda *a: f(F, *a), tuple(primals), tuple(tuple(np.asarray(t) * math.factorial(k + 1)
                                                                 for k, t in enumerate(s)) for s in series))
    for k in range(order):
        _close(np.asarray(ds[k]) / math.factorial(k + 1), fs[k])


def test_series_are_derivatives_along_a_line() -> None:
    # series (v, 0, 0, 0): the k-th term is the k-th directional derivative, by fgrad's own jvp
    f = lambda x: fnp.sum(fnp.exp(fnp.sin(x)) * x)  # noqa: E731
    x, v = MIXED[0], OTHER[0]
    _, terms = jet(f, (x,), ((v, np.zeros(3), np.zeros(3), np.zeros(3)),))
    g = lambda t: f(x + t * v)  # noqa: E731
    for k in range(4):
        g = fgrad.grad(g)
        _close(terms[k], g(0.0))


def test_pytree_outputs_keep_their_structure() -> None:
    def f(x):
        return {"a": fnp.sin(x), "b": (x * 2.0, fnp.sum(x))}
    fp, fs = jet(f, (MIXED,), ((OTHER, POS),))
    assert set(fp) == {"a", "b"} and isinstance(fp["b"], tuple)
    _close(fs["a"][1], -np.sin(MIXED) * OTHER ** 2 + np.cos(MIXED) * POS)
    _close(fs["b"][0][0], 2 * OTHER)
    _close(fs["b"][1][1], POS.sum())


def test_outputs_without_series_are_zero() -> None:
    # an output that does not depend on the input (and a piecewise-constant one) gets zero
    # terms, as JAX's
    fp, fs = jet(lambda x: (fnp.ones(3) * 2.0, fnp.floor(x), fgrad.lax.stop_gradient(x), x > 0),
                 (MIXED[0],), ((OTHER[0], POS[0]),))
    jp, js = jax_jet.jet(lambda x: (jnp.ones(3) * 2.0, jnp.floor(x), jax.lax.stop_gradient(x), x > 0),
                         (jnp.asarray(MIXED[0]),), ((jnp.asarray(OTHER[0]), jnp.asarray(POS[0])),))
    for a, b in zip(fs, js):
        for ta, tb in zip(a, b):
            _close(ta, tb)
            assert not np.any(np.asarray(ta))
            assert np.asarray(ta).shape == np.asarray(tb).shape
    # an integer output (JAX's jet has no rule for argmax)
    _, (t1,) = jet(fnp.argmax, (MIXED[0],), ((OTHER[0],),))
    assert np.asarray(t1).shape == () and not np.asarray(t1)
    # an argument whose terms are zero contributes nothing: (x, y) with y's series zero
    _, s = jet(lambda x, y: x * y, (2.0, 3.0), ((1.0, 0.0), (0.0, 0.0)))
    _close(s, [3.0, 0.0])


def test_float32_stays_float32() -> None:
    x = MIXED.astype(np.float32)
    fp, fs = jet(lambda x: fnp.tanh(x) * 2.0 + x ** 2, (x,), ((x, x),))
    jp, js = jax_jet.jet(lambda x: jnp.tanh(x) * 2.0 + x ** 2, (jnp.asarray(x),), ((jnp.asarray(x),) * 2,))
    assert np.asarray(fp).dtype == np.float32
    for a, b in zip(fs, js):
        assert np.asarray(a).dtype == np.asarray(b).dtype == np.float32
        _close(a, b, rtol=1e-5, atol=1e-5)


# --- composition ------------------------------------------------------------------------------

def _f(L, x):
    return L.np.sum(L.np.sin(x) * L.np.exp(0.3 * x) / (1.0 + x * x))


def test_jet_inside_jit() -> None:
    def terms(x, v, w):
        return jet(lambda x: _f(F, x), (x,), ((v, w, v),))
    eager = terms(MIXED, OTHER, POS)
    jitted = fgrad.jit(terms)(MIXED, OTHER, POS)
    _close(jitted[0], eager[0], rtol=1e-12)
    for a, b in zip(jitted[1], eager[1]):
        _close(a, b, rtol=1e-12)


def test_jet_of_a_jitted_function() -> None:
    g = fgrad.jit(lambda x: _f(F, x))
    _, fs = jet(g, (MIXED,), ((OTHER, POS),))
    _, js = jax_jet.jet(jax.jit(lambda x: _f(J, x)), (jnp.asarray(MIXED),), ((jnp.asarray(OTHER), jnp.asarray(POS)),))
    for a, b in zip(fs, js):
        _close(a, b)


def test_grad_of_a_jet_output() -> None:
    def second(L, jet_fn, x):
        return jet_fn(lambda x: _f(L, x), (x,), ((x * 0.5 + 1.0, x * x),))[1][1]
    g = fgrad.grad(lambda x: second(F, jet, x))(MIXED)
    jg = jax.grad(lambda x: second(J, jax_jet.jet, x))(jnp.asarray(MIXED))
    _close(g, jg)
    # and through jit around grad around jet
    _close(fgrad.jit(fgrad.grad(lambda x: second(F, jet, x)))(MIXED), jg)


def test_vmap_of_jet() -> None:
    def terms(x, v):
        return jet(lambda x: fnp.tanh(x) ** 2, (x,), ((v, v, v),))[1][2]
    out = fgrad.vmap(terms)(MIXED, OTHER)
    ref = jax.vmap(lambda x, v: jax_jet.jet(lambda x: jnp.tanh(x) ** 2, (x,), ((v, v, v),))[1][2])(
        jnp.asarray(MIXED), jnp.asarray(OTHER))
    _close(out, ref)


def test_jet_of_jet() -> None:
    # the inner jet's terms, pushed through an outer jet (mixed partial derivatives)
    def inner(x):
        return jet(fnp.exp, (x,), ((x,),))[1][0]  # x e^x
    _, fs = jet(inner, (0.7,), ((1.0, 0.0),))
    _close(fs[0], (1 + 0.7) * np.exp(0.7))
    _close(fs[1], (2 + 0.7) * np.exp(0.7))


def test_scan_to_order_8() -> None:
    # scan's rule carries the coefficients through the loop (a body of polynomial size, not
    # the jvp of the jvp of ... the body): order 8 of a loop equals the jet of the same loop
    # unrolled in Python (direct rules only; nested grad through the loop takes minutes)
    def step(x, c, xi):
        c = fnp.sin(c) * x + xi * c
        return c, c * c

    def looped(x):
        c, ys = fgrad.lax.scan(lambda c, xi: step(x, c, xi), x, fnp.arange(4.0) * 0.1 * x)
        return c + fnp.sum(ys)

    def unrolled(x):
        c, total = x, 0.0
        for i in range(4):
            c, y = step(x, c, i * 0.1 * x)
            total = total + y
        return c + total
    series = ((1.0, 0.5, -0.3, 0.2, 0.0, 0.1, -0.2, 0.4),)
    fp, fs = jet(looped, (0.8,), series)
    up, us = jet(unrolled, (0.8,), series)
    _close(fp, up, rtol=1e-12)
    for a, b in zip(fs, us):
        _close(a, b, rtol=1e-10, atol=1e-10)
    # and under jit, as the loop it is
    _close(fgrad.jit(lambda x: jet(looped, (x,), series)[1][7])(0.8), us[7], rtol=1e-10)


def test_while_loop_to_order_8() -> None:
    # while's rule: the same, the predicate reading the primal carry only
    def step(x, c):
        return fnp.sin(c) * x + 0.1 * c

    def looped(x):
        return fgrad.lax.while_loop(lambda s: s[0] < 4, lambda s: (s[0] + 1, step(x, s[1])), (0, x))[1]

    def unrolled(x):
        c = x
        for _ in range(4):
            c = step(x, c)
        return c
    series = ((1.0, 0.5, -0.3, 0.2, 0.0, 0.1, -0.2, 0.4),)
    fp, fs = jet(looped, (0.8,), series)
    up, us = jet(unrolled, (0.8,), series)
    _close(fp, up, rtol=1e-12)
    for a, b in zip(fs, us):
        _close(a, b, rtol=1e-10, atol=1e-10)
    xs = np.array([0.8, 0.5])
    _close(fgrad.vmap(lambda x: jet(looped, (x,), series)[1][7])(xs),
           [jet(unrolled, (x,), series)[1][7] for x in xs], rtol=1e-10)


def test_cond_and_switch_to_order_8() -> None:
    # cond's rule: a cond over the branches' jets; each side equals the jet of its branch
    def f(x):
        return fgrad.lax.cond(x > 0, lambda x: fnp.sin(x) * x, lambda x: fnp.exp(x) * 2.0, x)
    series = ((1.0, 0.5, -0.3, 0.2, 0.0, 0.1, -0.2, 0.4),)
    for x0, branch in ((0.8, lambda x: fnp.sin(x) * x), (-0.8, lambda x: fnp.exp(x) * 2.0)):
        fp, fs = jet(f, (x0,), series)
        bp, bs = jet(branch, (x0,), series)
        _close(fp, bp, rtol=1e-12)
        for a, b in zip(fs, bs):
            _close(a, b, rtol=1e-10, atol=1e-10)
    # a batched predicate (vmap) takes each example's branch
    xs = np.array([0.8, -0.8])
    _close(fgrad.vmap(lambda x: jet(f, (x,), series)[1][7])(xs), [jet(f, (x,), series)[1][7] for x in xs],
           rtol=1e-10)

    def g(x, y):  # a switch with pytree branch outputs, one of them unused
        return fgrad.lax.switch(1, [lambda x, y: (x * y, x), lambda x, y: (fnp.tanh(x) * y, y * y)], x, y)[0]
    s2 = series + ((0.3,) * 8,)
    _, fs = jet(g, (0.8, 1.2), s2)
    _, bs = jet(lambda x, y: fnp.tanh(x) * y, (0.8, 1.2), s2)
    for a, b in zip(fs, bs):
        _close(a, b, rtol=1e-10, atol=1e-10)


def test_custom_jvp_function_goes_through_its_own_body() -> None:
    # as JAX's jet: custom rules are first-order, so the series goes through the function
    # (JAX 0.10's jet leaks a tracer on a custom_jvp function, so JAX's reference is the
    # undecorated function)
    @fgrad.custom_jvp
    def f(x):
        return fnp.sin(x) * x
    f.defjvp(lambda p, t: (f(p[0]), 1000.0 * t[0]))  # a deliberately wrong rule
    fp, fs = jet(f, (MIXED,), ((OTHER, POS, OTHER),))
    jp, js = jax_jet.jet(lambda x: jnp.sin(x) * x, (jnp.asarray(MIXED),),
                         ((jnp.asarray(OTHER), jnp.asarray(POS), jnp.asarray(OTHER)),))
    _close(fp, jp)
    for a, b in zip(fs, js):
        _close(a, b)


def test_checkpointed_function() -> None:
    f = fgrad.checkpoint(lambda x: fnp.sin(x) ** 2)
    _, fs = jet(f, (MIXED,), ((OTHER, POS),))
    _, js = jax_jet.jet(lambda x: jnp.sin(x) ** 2, (jnp.asarray(MIXED),), ((jnp.asarray(OTHER), jnp.asarray(POS)),))
    for a, b in zip(fs, js):
        _close(a, b)


# --- errors and names ---------------------------------------------------------------------------

@pytest.mark.slow  # (JAX's nested jacfwd of a loop takes seconds; the default run checks
# both primitives against fgrad's nested jvp in tests/experimental/test_jet_registry.py)
def test_primitives_without_a_direct_rule_go_through_their_jvp_rule() -> None:
    # det and a loop have no rule in jet_rules (nor in JAX's jet): their series come from
    # their jvp rules (see fgrad.experimental.jet), here against JAX's nested forward mode
    a, v = POS[:, :2], OTHER[:, :2]
    series = [[v, 0.5 * v, -v]]
    _, fs = jet(fnp.linalg.det, (a,), tuple(map(tuple, series)))
    _, js = _taylor_derivatives(jnp.linalg.det, [jnp.asarray(a)], series, 3)
    for k in range(3):
        _close(fs[k], js[k])

    def loop(L, x):
        return L.lax.fori_loop(0, 3, lambda i, c: L.np.sin(c) * x, x)
    _, fs = jet(lambda x: loop(F, x), (1.5,), ((1.0, 0.5, -0.25),))
    _, js = _taylor_derivatives(lambda x: loop(J, x), [jnp.asarray(1.5)], [[1.0, 0.5, -0.25]], 3)
    for k in range(3):
        _close(fs[k], js[k])


def test_inconsistent_orders_are_refused_as_in_jax() -> None:
    with pytest.raises(ValueError, match="jet terms have inconsistent lengths"):
        jet(lambda x, y: x * y, (1.0, 2.0), ((1.0,), (1.0, 2.0)))
    with pytest.raises(ValueError, match="jet terms have inconsistent lengths"):
        jax_jet.jet(lambda x, y: x * y, (1.0, 2.0), ((1.0,), (1.0, 2.0)))


def test_pytree_primals_are_refused_as_in_jax() -> None:
    with pytest.raises(ValueError, match="primal value at position 0 is not an array"):
        jet(lambda d: d["a"], ({"a": 1.0},), ((1.0,),))
    with pytest.raises(ValueError, match="primal value at position 0 is not an array"):
        jax_jet.jet(lambda d: d["a"], ({"a": 1.0},), ((1.0,),))
    with pytest.raises(ValueError, match="term 0 for argument 0 is not an array"):
        jet(lambda x: x, (1.0,), (((1.0, 2.0),),))


def test_the_name_is_jaxs() -> None:
    import jax.experimental.jet  # noqa: F401
    assert fgrad.experimental.jet.jet is jet
    assert jet.__doc__ and jet2.__doc__
    assert {"jet", "jet2"} <= set(dir(jax.experimental.jet)) & set(dir(fgrad.experimental.jet))
