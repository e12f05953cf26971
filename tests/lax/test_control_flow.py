"""fgrad.lax control flow: cond, switch, while_loop, fori_loop, scan and map.

Each primitive against the Python loop (or `if`) it replaces: values, derivatives of order 2
in forward and reverse mode (check_grads), under jit and vmap and their compositions; the
staged IR keeps one loop equation whatever the trip count; reverse mode through a long scan
and a long while_loop runs in bounded memory; the user errors; the Tensor facade; and, where
JAX is installed, the same programs against jax.lax. tests/cases/control_flow.py puts the
primitives through tests/ops/test_primitives.py's registry too (impl vs abstract_eval,
typecheck, jvp/vjp agreement).
"""
from __future__ import annotations

import re
import tracemalloc

import numpy as onp
import pytest

import fgrad
import fgrad.numpy as np
from fgrad import lax
from fgrad.core import errors
from fgrad.core.ir import Literal, typecheck_jaxpr
from fgrad.interpreters.compile import loops
from fgrad.lax import _common
from fgrad.test_util import check_grads

try:
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
except ImportError:  # pragma: no cover - the differential tests skip
    jax = jnp = None

RNG = onp.random.default_rng(0)
X = RNG.uniform(-1, 1, (6, 3))
W = RNG.uniform(0.5, 1.5, 3)


# --- the programs, each with its Python-loop twin -----------------------------------------------

def rnn(w, x):
    def step(c, xi):
        h, s = c
        h = np.tanh(h * w + xi)
        return (h, s + np.sum(h)), h * h
    (h, s), ys = lax.scan(step, (np.zeros_like(w), 0.0), x)
    return np.sum(ys) + np.sum(h) * s


def rnn_py(w, x):
    h, s, total = np.zeros_like(w), 0.0, 0.0
    for xi in x:
        h = np.tanh(h * w + xi)
        s = s + np.sum(h)
        total = total + np.sum(h * h)
    return total + np.sum(h) * s


def power(w, x, n=5):
    return np.sum(lax.fori_loop(0, n, lambda i, y: np.sin(y) * w + i * 0.1, x[0]))


def power_py(w, x, n=5):
    y = x[0]
    for i in range(n):
        y = np.sin(y) * w + i * 0.1
    return np.sum(y)


def newton(a):
    """sqrt by Newton's method: a while_loop whose trip count depends on the values."""
    def cond(c):
        y, it = c
        return (np.max(np.abs(y * y - a)) > 1e-12) & (it < 60)

    def body(c):
        y, it = c
        return y - (y * y - a) / (2.0 * y), it + 1
    return lax.while_loop(cond, body, (a + 1.0, 0))[0]


def newton_py(a):
    y, it = a + 1.0, 0
    while np.max(np.abs(y * y - a)) > 1e-12 and it < 60:
        y, it = y - (y * y - a) / (2.0 * y), it + 1
    return y


def growth(w, x):
    """A while_loop over a float carry with a closed-over parameter."""
    return lax.while_loop(lambda c: c[1] < 3.0, lambda c: (c[0] * w + 0.5, c[1] + np.sum(c[0] ** 2)), (x[0], 0.0))[0]


def growth_py(w, x):
    y, t = x[0], 0.0
    while t < 3.0:
        y, t = y * w + 0.5, t + np.sum(y ** 2)
    return y


def branchy(w, x):
    return lax.cond(np.sum(x) > 0, lambda a, b: np.sin(a) * b, lambda a, b: a * np.exp(b), w, x[0])


def branchy_py(w, x):
    return np.sin(w) * x[0] if np.sum(x) > 0 else w * np.exp(x[0])


def switchy(w, x):
    branches = [lambda a: a * 2.0, lambda a: np.tanh(a) * w, lambda a: a ** 3]
    return lax.switch(np.argmax(x[0]), branches, x[1])


def switchy_py(w, x):
    return [lambda a: a * 2.0, lambda a: np.tanh(a) * w, lambda a: a ** 3][int(onp.argmax(x[0]))](x[1])


PROGRAMS = {
    "scan": (rnn, rnn_py, (W, X)),
    "fori_loop": (power, power_py, (W, X)),
    "while_loop": (growth, growth_py, (W, X)),
    "cond_true": (branchy, branchy_py, (W, onp.abs(X))),
    "cond_false": (branchy, branchy_py, (W, -onp.abs(X))),
    "switch": (switchy, switchy_py, (W, X)),
}


def close(a, b, tol=1e-10):
    """Equal pytrees of arrays (a list of numbers on either side is one array)."""
    def leaves(t):
        if isinstance(t, list) and all(isinstance(v, (int, float, onp.number, onp.ndarray)) and onp.ndim(v) == 0
                                       for v in t):
            return [onp.asarray(t)]
        return fgrad.tree_util.tree_leaves(t)
    la, lb = leaves(a), leaves(b)
    assert len(la) == len(lb), (a, b)
    for u, v in zip(la, lb):
        onp.testing.assert_allclose(onp.asarray(u), onp.asarray(v), rtol=tol, atol=tol)


# --- values and derivatives against the Python loops ---------------------------------------------

@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_values_and_gradients_match_the_python_loop(name):
    f, f_py, args = PROGRAMS[name]
    close(f(*args), f_py(*args))
    close(fgrad.jacrev(f, argnums=(0, 1))(*args), fgrad.jacrev(f_py, argnums=(0, 1))(*args))
    close(fgrad.jit(f)(*args), f_py(*args))
    close(fgrad.jacfwd(f)(*args), fgrad.jacfwd(f_py)(*args))


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_check_grads_order_2_both_modes(name):
    f, _, args = PROGRAMS[name]
    check_grads(f, args, order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_check_grads_under_jit_and_vmap(name):
    f, f_py, (w, x) = PROGRAMS[name]
    check_grads(fgrad.jit(f), (w, x), order=2, modes=("fwd", "rev"))
    xs = onp.stack([x, x * 0.5])
    if name.startswith("cond"):  # keep both examples on the branch under test
        xs = onp.stack([x, x * 2.0])
    batched = fgrad.vmap(f, in_axes=(None, 0))
    close(batched(w, xs), onp.stack([f_py(w, xs[0]), f_py(w, xs[1])]))
    check_grads(batched, (w, xs), order=2, modes=("fwd", "rev"))
    check_grads(fgrad.jit(batched), (w, xs), order=1, modes=("fwd", "rev"))


def test_grad_of_grad_through_scan():
    w = W.sum() * onp.ones(3) / 3
    f = lambda s: rnn(s * onp.ones(3), X)  # noqa: E731
    f_py = lambda s: rnn_py(s * onp.ones(3), X)  # noqa: E731
    close(fgrad.grad(fgrad.grad(f))(0.8), fgrad.grad(fgrad.grad(f_py))(0.8))
    close(fgrad.hessian(rnn)(w, X), fgrad.hessian(rnn_py)(w, X))


def test_jacfwd_and_jacrev_of_fori_loop():
    close(fgrad.jacfwd(power, argnums=(0, 1))(W, X), fgrad.jacfwd(power_py, argnums=(0, 1))(W, X))
    close(fgrad.jacrev(power)(W, X), fgrad.jacrev(power_py)(W, X))
    close(fgrad.hessian(power)(W, X), fgrad.hessian(power_py)(W, X))


def test_vmap_of_grad_of_while_loop():
    a = onp.array([2.0, 9.0, 0.25, 100.0])
    close(fgrad.vmap(newton)(a), onp.sqrt(a), 1e-10)
    close(fgrad.vmap(fgrad.grad(lambda s: newton(s)))(a), 0.5 / onp.sqrt(a), 1e-9)
    # lanes make different numbers of trips: each keeps its own
    trips = fgrad.vmap(lambda s: lax.while_loop(lambda c: c[0] < s, lambda c: (c[0] * 2.0, c[1] + 1), (1.0, 0))[1])(a)
    onp.testing.assert_array_equal(trips, [1, 4, 0, 7])
    # and vmap over a closed-over parameter of a while_loop differentiated by grad
    loss, loss_py = (lambda w, x: np.sum(growth(w, x))), (lambda w, x: np.sum(growth_py(w, x)))
    grads = fgrad.vmap(fgrad.grad(loss), in_axes=(0, None))(onp.stack([W, W * 0.9]), X)
    close(grads, onp.stack([fgrad.grad(loss_py)(W, X), fgrad.grad(loss_py)(W * 0.9, X)]))


def test_jit_of_grad_of_scan_stays_two_loops():
    g = fgrad.jit(fgrad.grad(rnn, argnums=(0, 1)))
    close(g(W, X), fgrad.grad(rnn_py, argnums=(0, 1))(W, X))
    jaxpr = fgrad.make_jaxpr(fgrad.grad(rnn))(W, X)
    assert [e.primitive.name for e in jaxpr.eqns].count("scan") == 2  # the forward and the backward loop
    typecheck_jaxpr(jaxpr)


def implicit_euler(k, y0, steps=5, h=0.1):
    """dy/dt = -k y^3 by implicit Euler: a Newton while_loop inside a fori_loop (a scan)."""
    def step(i, y):
        def residual(z):
            return z - y + h * k * z ** 3
        return lax.while_loop(lambda z: np.abs(residual(z)) > 1e-13,
                              lambda z: z - residual(z) / (1 + 3 * h * k * z ** 2), y)
    return lax.fori_loop(0, steps, step, y0)


def implicit_euler_py(k, y0, steps=5, h=0.1):
    y = y0
    for _ in range(steps):
        z = y
        while np.abs(z - y + h * k * z ** 3) > 1e-13:
            z = z - (z - y + h * k * z ** 3) / (1 + 3 * h * k * z ** 2)
        y = z
    return y


def test_while_loop_reverse_mode_on_abstract_values_is_deferred():
    """jit(grad(while)), and a while_loop inside a scan body (whose VJP is staged): the trip
    count is unknown while staging, so the VJP is one `deferred` equation, run when the
    values are concrete."""
    g = fgrad.jit(fgrad.grad(newton))
    close(g(2.0), fgrad.grad(newton)(2.0), 1e-12)
    close(g(9.0), 1 / 6, 1e-9)  # the same staged program, another trip count
    assert "deferred[call=while_loop vjp]" in str(fgrad.make_jaxpr(fgrad.grad(newton))(2.0))
    both = fgrad.grad(implicit_euler, argnums=(0, 1))
    want = fgrad.grad(implicit_euler_py, argnums=(0, 1))(1.0, 1.0)
    close(both(1.0, 1.0), want, 1e-9)
    close(fgrad.jit(both)(1.0, 1.0), want, 1e-9)
    close(fgrad.hessian(implicit_euler)(1.0, 1.0), fgrad.hessian(implicit_euler_py)(1.0, 1.0), 1e-8)
    close(fgrad.vmap(fgrad.grad(implicit_euler))(onp.array([1.0, 2.0]), onp.array([1.0, 0.5])),
          [fgrad.grad(implicit_euler_py)(1.0, 1.0), fgrad.grad(implicit_euler_py)(2.0, 0.5)], 1e-9)
    close(fgrad.grad(fgrad.jit(fgrad.grad(newton)))(2.0), fgrad.grad(fgrad.grad(newton))(2.0), 1e-9)
    check_grads(implicit_euler, (1.0, 1.0), order=2, modes=("fwd", "rev"))
    check_grads(g, (2.0,), order=1, modes=("fwd", "rev"))


def test_newton_solver_differentiates_with_plain_grad():
    close(newton(onp.array([2.0, 3.0])), onp.sqrt([2.0, 3.0]))
    close(fgrad.grad(lambda a: np.sum(newton(a)))(onp.array([2.0, 3.0])), 0.5 / onp.sqrt([2.0, 3.0]), 1e-9)
    close(fgrad.grad(fgrad.grad(lambda a: newton(a)))(2.0), -0.25 * 2.0 ** -1.5, 1e-8)
    close(fgrad.grad(fgrad.jit(newton))(2.0), 0.5 / onp.sqrt(2.0), 1e-9)  # jit inside grad runs concretely
    close(fgrad.jvp(newton, (2.0,), (1.0,))[1], 0.5 / onp.sqrt(2.0), 1e-9)
    close(fgrad.jit(fgrad.jacfwd(newton))(onp.array([4.0])), [[0.25]], 1e-9)  # forward mode stages fine


@pytest.mark.parametrize("checkpoint", [None, 1, 3, 1000])
def test_while_loop_checkpoint_policies_agree(checkpoint):
    def f(w, x):
        return lax.while_loop(lambda c: c[1] < 10, lambda c: (np.sin(c[0]) * w + 0.1, c[1] + 1),
                              (x[0], 0), checkpoint=checkpoint)[0]

    def f_py(w, x):
        y = x[0]
        for _ in range(10):
            y = np.sin(y) * w + 0.1
        return y
    close(fgrad.grad(lambda w: np.sum(f(w, X)))(W), fgrad.grad(lambda w: np.sum(f_py(w, X)))(W))
    check_grads(f, (W, X), order=2, modes=("rev",))


def test_scan_options_reverse_length_unroll_and_pytrees():
    def step(c, x):
        return {"a": c["a"] + x["u"], "n": c["n"] + 1}, (c["a"] * x["v"], c["n"])
    xs = {"u": onp.arange(4.0), "v": onp.arange(4.0) * 2}
    for reverse in (False, True):
        c, (ys, ns) = lax.scan(step, {"a": 1.0, "n": 0}, xs, reverse=reverse, unroll=2)
        a, n, want = 1.0, 0, [None] * 4
        for i in (reversed(range(4)) if reverse else range(4)):
            want[i] = (a * xs["v"][i], n)
            a, n = a + xs["u"][i], n + 1
        close(c["a"], a)
        assert int(c["n"]) == 4 and ns.dtype == onp.int64
        close(ys, [w[0] for w in want])
        onp.testing.assert_array_equal(ns, [w[1] for w in want])
    c, ys = lax.scan(lambda c, _: (c * 2.0, c), 1.0, None, length=5)
    close(c, 32.0)
    close(ys, [1.0, 2.0, 4.0, 8.0, 16.0])
    c, ys = lax.scan(lambda c, x: (c + x, None), 0.0, onp.zeros((0,)))  # zero steps
    assert ys is None and float(c) == 0.0
    assert lax.scan(lambda c, x: (c, x * 2), (), onp.ones(3))[1].tolist() == [2.0, 2.0, 2.0]


def test_map_with_and_without_batch_size():
    xs = onp.arange(14.0).reshape(7, 2)
    want = onp.stack([onp.sin(x) * x.sum() for x in xs])
    f = lambda x: np.sin(x) * np.sum(x)  # noqa: E731
    close(lax.map(f, xs), want)
    close(lax.map(f, xs, batch_size=3), want)
    close(lax.map(f, xs, batch_size=7), want)
    out = lax.map(lambda p: {"s": p[0] + p[1], "d": p[0] - p[1]}, (xs[:, 0], xs[:, 1]), batch_size=2)
    close(out["s"], xs.sum(1))
    close(fgrad.grad(lambda x: np.sum(lax.map(f, x, batch_size=3)))(xs),
          fgrad.grad(lambda x: np.sum(np.stack([f(r) for r in x])))(xs))


def test_fori_loop_static_and_traced_bounds():
    body = lambda i, c: c * 2.0 + i  # noqa: E731
    assert float(lax.fori_loop(0, 4, body, 1.0)) == 1.0 * 16 + 0 * 8 + 1 * 4 + 2 * 2 + 3
    assert float(lax.fori_loop(3, 1, body, 1.0)) == 1.0  # empty range
    f = fgrad.jit(lambda n, x: lax.fori_loop(0, n, body, x))
    assert float(f(4, 1.0)) == 27.0 and float(f(0, 1.0)) == 1.0
    assert "while[" in str(fgrad.make_jaxpr(lambda n, x: lax.fori_loop(0, n, body, x))(4, 1.0))
    assert "scan[" in str(fgrad.make_jaxpr(lambda x: lax.fori_loop(0, 4, body, x))(1.0))
    # a batched upper bound: each lane runs its own number of steps
    close(fgrad.vmap(lambda n: lax.fori_loop(0, n, body, 1.0))(onp.array([0, 1, 4])), [1.0, 2.0, 27.0])
    # the counter of Python-int bounds combines with float32 as a Python int would
    assert lax.fori_loop(0, 3, lambda i, c: c + i, onp.float32(0)).dtype == onp.float32
    assert lax.fori_loop(onp.int32(0), onp.int32(3), lambda i, c: c + i, onp.int32(0)).dtype == onp.int32


def test_cond_runs_and_differentiates_only_the_branch_taken():
    f = lambda x: lax.cond(x > 0, np.sqrt, lambda v: -v, x)  # noqa: E731
    with fgrad.debug_nans():  # sqrt(-1) would be NaN: that branch never runs
        assert float(f(-1.0)) == 1.0
        assert float(fgrad.grad(f)(-1.0)) == -1.0
        assert float(fgrad.jvp(f, (-4.0,), (1.0,))[1]) == -1.0
    close(fgrad.grad(f)(4.0), 0.25)
    assert float(lax.cond(onp.int64(3), lambda: 1.0, lambda: 2.0)) == 1.0  # nonzero ints are true
    assert float(lax.switch(-3, [lambda: 1.0, lambda: 2.0])) == 1.0  # clamped, as in JAX
    assert float(lax.switch(9, [lambda: 1.0, lambda: 2.0])) == 2.0
    # a Python number returned by one branch takes the other's dtype
    out = lax.cond(True, lambda x: x * 2, lambda x: 0.0, onp.float32(1.5))
    assert out.dtype == onp.float32 and float(out) == 3.0


def test_vmap_of_cond_with_batched_and_unbatched_predicate():
    f = lambda p, x: lax.cond(p, lambda v: v + 1.0, lambda v: v * 10.0, x)  # noqa: E731
    xs = onp.arange(3.0)
    close(fgrad.vmap(f)(onp.array([True, False, True]), xs), [1.0, 10.0, 3.0])
    close(fgrad.vmap(f, in_axes=(None, 0))(onp.bool_(False), xs), xs * 10)
    assert "select" in str(fgrad.make_jaxpr(fgrad.vmap(f))(onp.array([True, False]), xs[:2]))
    assert "cond[" in str(fgrad.make_jaxpr(fgrad.vmap(f, in_axes=(None, 0)))(onp.bool_(True), xs))


def test_closures_over_traced_values_become_operands():
    """A body that reads an enclosing transform's value: grad, jvp and vmap see it."""
    def f(w):
        return lax.scan(lambda c, x: (c * w + x, None), 0.0, onp.arange(3.0))[0]
    # c = ((0 w + 0) w + 1) w + 2 = w + 2
    close(fgrad.grad(f)(3.0), 1.0)
    close(fgrad.jvp(f, (3.0,), (2.0,))[1], 2.0)
    close(fgrad.vmap(f)(onp.array([1.0, 2.0])), [3.0, 4.0])
    jaxpr = fgrad.make_jaxpr(f)(3.0)
    (eqn,) = [e for e in jaxpr.eqns if e.primitive.name == "scan"]
    assert eqn.params["num_consts"] == 1 and eqn.invars[0] is jaxpr.jaxpr.invars[0]


# --- the staged IR ------------------------------------------------------------------------------

def test_jaxpr_size_does_not_grow_with_the_trip_count():
    def f(x, n):
        return lax.fori_loop(0, n, lambda i, c: np.sin(c) * 0.5 + c * i, x)
    sizes = [len(fgrad.make_jaxpr(lambda x, n=n: f(x, n))(onp.ones(3)).eqns) for n in (10, 10_000)]
    assert sizes[0] == sizes[1]
    grad_sizes = [len(fgrad.make_jaxpr(fgrad.grad(lambda x, n=n: np.sum(f(x, n))))(onp.ones(3)).eqns)
                  for n in (10, 10_000)]
    assert grad_sizes[0] == grad_sizes[1]
    unrolled = fgrad.make_jaxpr(lambda x: [x := np.sin(x) * 0.5 + x * i for i in range(10)][-1])(onp.ones(3))
    assert len(unrolled.eqns) > sizes[0]  # what a Python loop gives


def test_printed_ir_nests_the_bodies():
    text = str(fgrad.make_jaxpr(lambda x: lax.cond(x > 0, np.sin, np.cos, x))(1.0))
    assert re.search(r"cond\[\n +branches=\(\n +\{ lambda ; \w+:f64\[\]\. let\n +\w+:f64\[\] = cos", text), text
    text = str(fgrad.make_jaxpr(lambda x: lax.scan(lambda c, y: (c + y, c), 0.0, x))(onp.ones(3)))
    assert re.search(r"scan\[\n +jaxpr=\{ lambda ; .*\n +\w+:f64\[\] = add", text), text
    assert "length=3" in text and "reverse=False" in text
    text = str(fgrad.make_jaxpr(newton)(2.0))
    assert "body_jaxpr={ lambda" in text and "cond_jaxpr={ lambda" in text


def test_impls_run_on_numpy_arrays_directly():
    """What a jit compiler does: call each control-flow impl on plain arrays."""
    jaxpr = fgrad.make_jaxpr(lambda w, x: (rnn(w, x), newton(w * w), branchy(w, x)))(W, X)
    env = dict(zip(map(id, jaxpr.jaxpr.invars), (W, X)))
    env.update(zip(map(id, jaxpr.jaxpr.constvars), jaxpr.consts))
    names = set()
    for e in jaxpr.eqns:
        vals = [a.val if isinstance(a, Literal) else env[id(a)] for a in e.invars]
        env[id(e.outvars[0])] = out = e.primitive.impl(*vals, xp=onp, **e.params)
        assert type(out) is onp.ndarray and out.shape == e.outvars[0].aval.shape
        names.add(e.primitive.name)
    assert {"scan", "while", "cond"} <= names
    got = [env[id(v)] for v in jaxpr.jaxpr.outvars]
    close(got, [rnn_py(W, X), W, branchy_py(W, X)])
    typecheck_jaxpr(jaxpr)


# --- memory ---------------------------------------------------------------------------------

def _peak_mb(fn) -> float:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 1e6
    finally:
        tracemalloc.stop()


def test_long_scan_under_grad_runs_in_bounded_memory():
    """10,000 steps of a 16-float carry: reverse mode saves the carry entering each step
    (10,000 x 16 x 8 B = 1.3 MB) and recomputes the rest of the body. Bound: 6 MB. A Python
    loop records every operation instead: 2,000 steps already take more."""
    step = lambda c: np.sin(c) * 0.99 + 0.01 * c * c  # noqa: E731

    def f(x):
        return np.sum(lax.scan(lambda c, _: (step(c), None), x, None, length=10_000)[0])

    def f_py(x, n=2_000):
        for _ in range(n):
            x = step(x)
        return np.sum(x)
    x0 = onp.linspace(0, 1, 16)
    g = []
    fgrad.grad(f)(x0)  # (compiles the loop first: a compiler's own allocations are not the pass's)
    peak = _peak_mb(lambda: g.append(fgrad.grad(f)(x0)))
    assert peak < 6.0, peak
    assert _peak_mb(lambda: fgrad.grad(f_py)(x0)) > peak
    close(g[0], fgrad.grad(lambda x: f_py(x, 10_000))(x0), 1e-9)


def test_long_while_loop_under_grad_keeps_sqrt_many_carries():
    """2,500 trips of a 2,000-float carry: saving every carry would take 40 MB; checkpoints
    every ~50 trips keep 50 snapshots and one 50-step segment at a time (~2 MB). Bound: 10 MB."""
    def f(x):
        out = lax.while_loop(lambda c: c[1] < 2500, lambda c: (c[0] * 0.999 + 0.001, c[1] + 1), (x, 0))
        return np.sum(out[0] ** 2)
    x0 = onp.linspace(0, 1, 2000)
    g = []
    assert _peak_mb(lambda: g.append(fgrad.grad(f)(x0))) < 10.0
    y = x0 * 0.999 ** 2500 + (1 - 0.999 ** 2500)
    close(g[0], 2 * y * 0.999 ** 2500, 1e-9)


# --- errors -----------------------------------------------------------------------------------

def _raises(exc, pattern, doc, fn):
    with pytest.raises(exc) as info:
        fn()
    msg = str(info.value)
    assert re.search(pattern, msg, re.S), msg
    assert f"docs/errors.md#{doc}" in msg, msg


def test_errors_name_what_where_and_the_fix():
    _raises(errors.FgradTypeError, r"changes the carry.*f32\[3\].*f64\[3\].*astype", "loop-carry-type",
            lambda: lax.while_loop(lambda c: np.sum(c) < 3, lambda c: c.astype(onp.float64) + 1.0,
                                   onp.zeros(3, onp.float32)))
    _raises(errors.FgradTypeError, r"changes the carry: leaf\[1\].*f64\[2\].*f64\[\]", "loop-carry-type",
            lambda: lax.scan(lambda c, x: ((c[0], np.sum(c[1])), x), (0.0, onp.ones(2)), onp.ones(3)))
    _raises(errors.FgradTypeError, r"structure of the initial value", "loop-carry-type",
            lambda: lax.fori_loop(0, 3, lambda i, c: [c], 1.0))
    _raises(errors.FgradTypeError, r"branches return different types.*false_fun gives f64\[2\], true_fun gives f64\[3\]", "cond-branch-mismatch",
            lambda: lax.cond(True, lambda: onp.ones(3), lambda: onp.ones(2)))
    _raises(errors.FgradTypeError, r"different structures", "cond-branch-mismatch",
            lambda: lax.switch(0, [lambda x: (x, x), lambda x: x], 1.0))
    _raises(errors.FgradTypeError, r"predicate must be a scalar.*bool\[3\].*all", "cond-pred",
            lambda: lax.cond(onp.ones(3) > 0, lambda: 1.0, lambda: 2.0))
    _raises(errors.FgradTypeError, r"predicate must be a scalar boolean or integer, got f64\[\]", "cond-pred",
            lambda: lax.cond(1.5, lambda: 1.0, lambda: 2.0))
    _raises(errors.FgradTypeError, r"index must be a scalar integer", "cond-pred",
            lambda: lax.switch(onp.ones(2, int), [lambda: 1.0, lambda: 2.0]))
    _raises(errors.FgradTypeError, r"cond_fun must return one boolean scalar, got f64\[\]", "while-cond-output",
            lambda: lax.while_loop(lambda c: c, lambda c: c - 1.0, 3.0))
    _raises(errors.FgradTypeError, r"f must return a pair", "scan-body-output",
            lambda: lax.scan(lambda c, x: c + x, 0.0, onp.ones(3)))
    _raises(errors.FgradValueError, r"same leading axis size.*has 3.*has 4", "scan-length",
            lambda: lax.scan(lambda c, x: (c, None), 0.0, (onp.ones(3), onp.ones(4))))
    _raises(errors.FgradValueError, r"no xs.*length=n", "scan-length",
            lambda: lax.scan(lambda c, x: (c, None), 0.0, None))
    _raises(errors.FgradTypeError, r"length must be a concrete Python int", "scan-length",
            lambda: fgrad.jit(lambda n: lax.scan(lambda c, x: (c, None), 0.0, None, length=n))(3))
    # and fgrad keeps working afterwards
    close(fgrad.grad(newton)(4.0), 0.25, 1e-9)


def test_weakly_typed_carries_adapt_as_in_jax():
    c, _ = lax.scan(lambda c, x: (c + x, None), 0.0, onp.ones(3, onp.float32))
    assert c.dtype == onp.float32 and float(c) == 3.0
    out = lax.while_loop(lambda c: c < 10, lambda c: c * onp.float32(2), 1.0)
    assert out.dtype == onp.float32


# --- the Tensor facade --------------------------------------------------------------------------

def test_tensors_are_refused_naming_the_fix():
    # lax control flow computes on arrays and tracers: a Tensor (operand, bound, predicate, or
    # a value a body returns) is a TypeError naming the function and the fix
    t, w = fgrad.torch.tensor([0.5, 1.0]), fgrad.torch.tensor(2.0, requires_grad=True)
    fix = r"got a fgrad\.torch\.Tensor: pass t\.detach\(\)\.numpy\(\)"
    cases = {
        "scan": lambda: lax.scan(lambda c, x: (c * x, c), 1.0, t),
        "while_loop": lambda: lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0, w),
        "fori_loop": lambda: lax.fori_loop(0, fgrad.torch.tensor(3), lambda i, c: c * 2.0, 1.0),
        "cond": lambda: lax.cond(True, lambda v: v, lambda v: v * 0.0, t),
        "switch": lambda: lax.switch(fgrad.torch.tensor(0), [lambda v: v], 1.0),
        "map": lambda: lax.map(lambda v: v, t),
    }
    for name, run in cases.items():
        _raises(errors.FgradTypeError, rf"fgrad\.lax\.{name} got a fgrad\.torch\.Tensor", "foreign-input", run)
    # closed over, a Tensor gives the body a Tensor output: refused there
    _raises(errors.FgradTypeError, fix, "foreign-input",
            lambda: lax.scan(lambda c, x: (c, w * 2.0), 1.0, onp.ones(2)))
    # the fix: plain arrays in, and the loop differentiates as any function of arrays
    x = t.detach().numpy()
    def plain(v):
        c, ys = lax.scan(lambda c, xi: (c * xi + 1, np.sin(c)), 1.0, v)
        return c + np.sum(ys)
    # c1 = 1 * x0 + 1, c2 = c1 * x1 + 1, plain = c2 + sin(1) + sin(c1)
    close(fgrad.grad(plain)(x), [x[1] + onp.cos(x[0] + 1.0), x[0] + 1.0])


# --- against jax.lax --------------------------------------------------------------------------

needs_jax = pytest.mark.skipif(jax is None, reason="JAX is not installed")


def _both(build):
    """(fgrad's function, JAX's) from `build(np_module, lax_module)`."""
    return build(np, lax), build(jnp, jax.lax)


def _rnn_prog(M, L):
    def f(w, x):
        def step(c, xi):
            return M.tanh(c * w + xi), M.sin(c) * xi
        c, ys = L.scan(step, M.zeros_like(w), x, reverse=True)
        return M.sum(c) + M.sum(ys ** 2)
    return f


def _fori_prog(M, L):
    def f(w, x):
        return M.sum(L.fori_loop(1, 7, lambda i, y: M.cos(y) * w / i + x[0], x[1]))
    return f


def _cond_prog(M, L):
    def f(w, x):
        def inner(c, xi):
            c = L.cond(M.sum(xi) > 0, lambda v: v * w, lambda v: v + M.exp(w * 0.1), c)
            k = L.switch(M.argmax(xi), [lambda v: v, lambda v: M.sin(v), lambda v: v * v], c)
            return c * 0.5 + k, None
        return M.sum(L.scan(inner, x[0], x)[0])
    return f


def _while_prog(M, L):
    def f(w, x):
        return M.sum(L.while_loop(lambda c: c[1] < 5, lambda c: (M.sin(c[0]) * w + x[0], c[1] + 1), (x[1], 0))[0])
    return f


@needs_jax
@pytest.mark.parametrize("build", [_rnn_prog, _fori_prog, _cond_prog, _while_prog], ids=lambda b: b.__name__)
def test_against_jax_lax(build):
    f, jf = _both(build)
    args = (W, X)
    close(f(*args), jf(*args))
    close(fgrad.jit(f)(*args), jax.jit(jf)(*args))
    close(fgrad.vmap(f, in_axes=(None, 0))(W, onp.stack([X, -X])), jax.vmap(jf, in_axes=(None, 0))(W, onp.stack([X, -X])))
    close(fgrad.jacfwd(f, argnums=(0, 1))(*args), jax.jacfwd(jf, argnums=(0, 1))(*args))
    if build is not _while_prog:  # JAX has no reverse mode through while_loop
        close(fgrad.grad(f, argnums=(0, 1))(*args), jax.grad(jf, argnums=(0, 1))(*args))
        close(fgrad.hessian(f)(*args), jax.hessian(jf)(*args), 1e-9)
    else:
        close(fgrad.grad(f, argnums=(0, 1))(*args), jax.jacfwd(jf, argnums=(0, 1))(*args))


# --- compiled loops (fgrad.interpreters.compile.loops) ---------------------------------------


def ode(w, b, y0, steps=20, h=0.05):
    """RK4 on dy/dt = tanh(W y + b): matrix-vector products in the body, outer products and
    transposed products in its VJP."""
    def rhs(y):
        return np.tanh(w @ y + b)

    def step(i, y):
        k1 = rhs(y)
        k2 = rhs(y + 0.5 * h * k1)
        k3 = rhs(y + 0.5 * h * k2)
        k4 = rhs(y + h * k3)
        return y + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return np.sum(lax.fori_loop(0, steps, step, y0) ** 2)


def ode_py(w, b, y0, steps=20, h=0.05):
    y = y0
    for _ in range(steps):
        k1 = np.tanh(w @ y + b)
        k2 = np.tanh(w @ (y + 0.5 * h * k1) + b)
        k3 = np.tanh(w @ (y + 0.5 * h * k2) + b)
        k4 = np.tanh(w @ (y + h * k3) + b)
        y = y + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return np.sum(y ** 2)


def shapes(w, x):
    """A scan whose body binds every structural equation the loop compiler lowers: transpose,
    broadcast, slice, pad, concatenate, reshape, reductions, matrix and vector products."""
    def step(c, xi):
        m = np.outer(c, xi) + np.transpose(np.outer(xi, c))        # (3, 3)
        v = m @ c + np.concatenate([c[1:], c[:1]]) * w             # (3,)
        p = np.pad(v[:2], (0, 1)) + np.max(m, axis=0) - np.min(m)
        s = np.sum(np.reshape(m, (9,))) + c @ xi
        return np.tanh(p + 0.1 * s), np.sum(m, axis=1) * xi
    c, ys = lax.scan(step, w, x)
    return np.sum(c) + np.sum(ys ** 2)


def shapes_py(w, x):
    c, total = w, 0.0
    for xi in x:
        m = np.outer(c, xi) + np.transpose(np.outer(xi, c))
        v = m @ c + np.concatenate([c[1:], c[:1]]) * w
        p = np.pad(v[:2], (0, 1)) + np.max(m, axis=0) - np.min(m)
        s = np.sum(np.reshape(m, (9,))) + c @ xi
        c, y = np.tanh(p + 0.1 * s), np.sum(m, axis=1) * xi
        total = total + np.sum(y ** 2)
    return np.sum(c) + total


ODE_ARGS = (RNG.normal(size=(4, 4)) / 2, RNG.normal(size=4) * 0.1, RNG.normal(size=4))
COMPILED = {
    "ode": (ode, ode_py, ODE_ARGS),
    "shapes": (shapes, shapes_py, (W, X * 0.5)),
    "scan": PROGRAMS["scan"],
    "fori_loop": PROGRAMS["fori_loop"],
    "while_loop": (lambda w, x: np.sum(growth(w, x)), lambda w, x: np.sum(growth_py(w, x)), (W, X)),
    "newton": (lambda a: np.sum(newton(a)), lambda a: np.sum(newton_py(a)), (W + 1.0,)),
}


@pytest.fixture
def always_compiled(monkeypatch):
    """Every loop compiled, eagerly too, and the interpreter of lax's bodies forbidden for
    loops (a cond's branch, outside jit, still runs through it)."""
    monkeypatch.setattr(loops, "EAGER_MIN_WORK", 0)
    monkeypatch.setattr(loops, "JIT_MIN_WORK", 0)
    return loops.STATS


@pytest.fixture
def never_compiled(monkeypatch):
    monkeypatch.setattr(loops, "EAGER_MIN_WORK", float("inf"))


def _scan_body(f, *args):
    """The body of the (first) scan equation in f's jaxpr."""
    return next(e for e in fgrad.make_jaxpr(f)(*args).eqns if e.primitive.name == "scan").params["jaxpr"]


def _forbid_interpreter(monkeypatch):
    def refuse(self, args, xp):
        raise AssertionError("a loop body ran through lax's interpreter")
    monkeypatch.setattr(_common.Program, "__call__", refuse)


@pytest.mark.parametrize("name", sorted(COMPILED))
def test_compiled_loops_match_the_interpreter_and_the_python_loop(name, monkeypatch):
    f, f_py, args = COMPILED[name]
    monkeypatch.setattr(loops, "EAGER_MIN_WORK", float("inf"))
    interpreted = (f(*args), fgrad.grad(f)(*args))
    monkeypatch.setattr(loops, "EAGER_MIN_WORK", 0)
    _forbid_interpreter(monkeypatch)
    runs = loops.STATS["compiled_runs"]
    compiled = (f(*args), fgrad.grad(f)(*args))
    assert loops.STATS["compiled_runs"] > runs
    close(compiled, interpreted, tol=1e-12)
    close(compiled, (f_py(*args), fgrad.grad(f_py)(*args)))
    close(fgrad.jit(f)(*args), f_py(*args))
    close(fgrad.jit(fgrad.grad(f))(*args), fgrad.grad(f_py)(*args))
    close(fgrad.grad(fgrad.jit(f))(*args), fgrad.grad(f_py)(*args))


@pytest.mark.parametrize("name", ["ode", "shapes", "newton"])
def test_compiled_loops_check_grads_under_jit_and_vmap(name, always_compiled, monkeypatch):
    f, f_py, args = COMPILED[name]
    _forbid_interpreter(monkeypatch)
    check_grads(fgrad.jit(f), args, order=2, modes=("fwd", "rev"))
    check_grads(f, args, order=2, modes=("fwd", "rev"))
    batched = fgrad.vmap(f, in_axes=(0,) + (None,) * (len(args) - 1))
    stacked = (onp.stack([args[0], args[0] * 0.9]),) + args[1:]
    want = onp.stack([f_py(stacked[0][k], *args[1:]) for k in range(2)])
    close(fgrad.vmap(fgrad.jit(f), in_axes=(0,) + (None,) * (len(args) - 1))(*stacked), want)
    close(fgrad.jit(batched)(*stacked), want)
    check_grads(fgrad.jit(batched), stacked, order=1, modes=("fwd", "rev"))


def test_jit_runs_loops_as_compiled_code(never_compiled, monkeypatch):
    """Under jit (past its interpreted first calls, loops.JIT_MIN_WORK) a scan, its
    reverse-mode loop and a while_loop are each one call of a generated Numba function, which
    the program calls directly: no iteration runs through the interpreter, even with eager
    compilation turned off. (A while_loop's VJP under jit is deferred to run time, where it
    runs eagerly: not checked here.)"""
    monkeypatch.setattr(loops, "JIT_MIN_WORK", 0)
    _forbid_interpreter(monkeypatch)
    grad = fgrad.jit(fgrad.grad(ode, argnums=(0, 1, 2)))
    runs = loops.STATS["compiled_runs"]
    close(grad(*ODE_ARGS), fgrad.grad(ode_py, argnums=(0, 1, 2))(*ODE_ARGS))
    assert loops.STATS["compiled_runs"] == runs + 2  # the forward and the backward scan
    program = grad.lower(*ODE_ARGS)
    called = re.findall(r"= _eqn\d+_(\w+)\(", program.source)
    assert called == ["scan", "scan"], program.source
    close(fgrad.jit(newton)(W + 1.0), newton_py(W + 1.0))
    assert loops.STATS["compiled_runs"] == runs + 3
    assert re.findall(r"= _eqn\d+_(\w+)\(", fgrad.jit(newton).lower(W + 1.0).source) == ["while"]


def test_generated_loop_size_does_not_grow_with_the_trip_count():
    sources = []
    for steps in (10, 1000):
        body = _scan_body(lambda w, b, y0, n=steps: ode(w, b, y0, steps=n), *ODE_ARGS)
        loop = loops.scan_loop(body, 2, 2, steps, False, 1)
        sources.append(loop.as_text().replace(str(steps), "N").replace(str(steps - 1), "N"))
    assert len(sources[0].splitlines()) == len(sources[1].splitlines())


def test_loop_with_no_lowering_runs_its_region_compiled_body(monkeypatch):
    """A body binding a primitive the loop compiler does not lower (sort) runs its iterations
    in Python over the body compiled once by jit's region compiler, never the interpreter."""
    def f(x):
        return lax.scan(lambda c, xi: (np.sort(c * xi)[::-1] + 0.5 * c, np.sum(c)), x[0], x)

    def f_py(x):
        c, ys = x[0], []
        for xi in x:
            ys.append(np.sum(c))
            c = np.sort(c * xi)[::-1] + 0.5 * c
        return c, np.stack(ys)
    body = _scan_body(f, X)
    assert loops.scan_loop(body, 0, 1, len(X), False, 1) is None
    _forbid_interpreter(monkeypatch)
    steps = loops.STATS["program_steps"]
    close(fgrad.jit(f)(X), f_py(X))
    assert loops.STATS["program_steps"] == steps + len(X)
    steps = loops.STATS["program_steps"]
    close(fgrad.jit(lambda w, x: branchy(w, x))(W, X), branchy_py(W, X))  # a cond's branch
    assert loops.STATS["program_steps"] == steps + 1


def test_eager_while_loop_switches_to_compiled_code_mid_loop(monkeypatch):
    monkeypatch.setattr(loops, "EAGER_MIN_WORK", 30)  # a few trips interpreted, then compiled
    runs = loops.STATS["compiled_runs"]
    close(newton(W + 1.0), newton_py(W + 1.0))
    assert loops.STATS["compiled_runs"] == runs + 1


@pytest.mark.parametrize("reverse", [False, True])
def test_unroll_runs_that_many_body_copies_per_iteration_with_identical_values(reverse):
    def f(x, unroll):
        return lax.scan(lambda c, xi: (np.tanh(c * 1.1 + xi), c * xi), x[0] * 0.3, x, reverse=reverse,
                        unroll=unroll)
    base = fgrad.jit(lambda x: f(x, 1))(X)
    for unroll in (2, 4, 6, 7, True):
        got = fgrad.jit(lambda x, k=unroll: f(x, k))(X)
        for a, b in zip(fgrad.tree_util.tree_leaves(got), fgrad.tree_util.tree_leaves(base)):
            onp.testing.assert_array_equal(a, b)
        body = _scan_body(lambda x, k=unroll: f(x, k), X)
        text = loops.scan_loop(body, 0, 1, len(X), reverse, unroll).as_text()
        copies = min(len(X), len(X) if unroll is True else unroll)
        assert text.count("tanh(") == copies + (len(X) % copies and 1)
    loop = fgrad.jit(lambda x: lax.fori_loop(0, 7, lambda i, c: np.sin(c) + i, x[0], unroll=3))(X)
    onp.testing.assert_array_equal(loop, fgrad.jit(lambda x: lax.fori_loop(0, 7, lambda i, c: np.sin(c) + i, x[0]))(X))
