"""Traced Python runs once per trace: a counter in every body of every control-flow primitive
and every custom rule, under every transform, counts what JAX counts on the same program
(jax is the oracle where the construct exists there; autograd.Function, which JAX lacks,
must run each of its Python functions at most once per trace, as custom_vjp does).

A side effect in traced Python (an iterator advanced, a counter, a print) then happens as
often as the user expects from JAX. Adding a construct is one entry of CONSTRUCTS, a
transform one entry of TRANSFORMS; both take the library (fgrad or jax) as an argument."""
from __future__ import annotations

import collections
import types
from typing import Callable

import numpy as onp
import pytest

import fgrad

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)


def _libs():
    import jax.numpy as jnp
    import fgrad.numpy as fnp
    return {
        "fgrad": types.SimpleNamespace(np=fnp, lax=fgrad.lax, grad=fgrad.grad, vjp=fgrad.vjp, jvp=fgrad.jvp,
                                       vmap=fgrad.vmap, jit=fgrad.jit, custom_vjp=fgrad.custom_vjp,
                                       custom_jvp=fgrad.custom_jvp, checkpoint=fgrad.checkpoint),
        "jax": types.SimpleNamespace(np=jnp, lax=jax.lax, grad=jax.grad, vjp=jax.vjp, jvp=jax.jvp,
                                     vmap=jax.vmap, jit=jax.jit, custom_vjp=jax.custom_vjp,
                                     custom_jvp=jax.custom_jvp, checkpoint=jax.checkpoint),
    }


# --- constructs: make(L, count) -> f(x) for a scalar float x, counting its Python bodies -------

def _cond(L, count):
    def f(x):
        def yes(v):
            count("true")
            return L.np.sin(v)

        def no(v):
            count("false")
            return L.np.cos(v)
        return L.lax.cond(x > 0.5, yes, no, x)
    return f


def _switch(L, count):
    def f(x):
        def branch(k):
            def b(v):
                count(f"branch{k}")
                return L.np.sin(v) * (k + 1.0)
            return b
        return L.lax.switch((x > 0.5).astype(L.np.int32), [branch(0), branch(1)], x)
    return f


def _while(L, count):
    def f(x):
        def cond(c):
            count("cond")
            return c[0] < 3

        def body(c):
            count("body")
            return c[0] + 1, c[1] * 1.5 + L.np.sin(c[1])
        return L.lax.while_loop(cond, body, (0, x))[1]
    return f


def _fori(upper: Callable) -> Callable:
    """fori_loop from 0 to upper(L, x): a Python int (a scan) or a traced one (a while_loop)."""
    def make(L, count):
        def f(x):
            def body(i, c):
                count("body")
                return c * 1.5 + L.np.sin(c)
            return L.lax.fori_loop(0, upper(L, x), body, x)
        return f
    return make


def _scan(L, count):
    def f(x):
        def body(c, a):
            count("body")
            return c * a + L.np.sin(c), c * 2.0
        c, ys = L.lax.scan(body, x, L.np.arange(1.0, 4.0))
        return c + L.np.sum(ys)
    return f


def _map(L, count):
    def f(x):
        def body(a):
            count("body")
            return L.np.sin(a * x)
        return L.np.sum(L.lax.map(body, L.np.arange(1.0, 4.0)))
    return f


def _custom_vjp(L, count):
    @L.custom_vjp
    def g(x):
        count("f")
        return L.np.sin(x)

    def fwd(x):
        count("fwd")
        return L.np.sin(x), x

    def bwd(x, ct):
        count("bwd")
        return (3.0 * L.np.cos(x) * ct,)
    g.defvjp(fwd, bwd)
    return lambda x: g(x) * 2.0


def _custom_jvp(L, count):
    @L.custom_jvp
    def g(x):
        count("f")
        return L.np.sin(x)

    @g.defjvp
    def g_jvp(primals, tangents):
        count("jvp")
        (x,), (t,) = primals, tangents
        return L.np.sin(x), 3.0 * L.np.cos(x) * t
    return lambda x: g(x) * 2.0


def _checkpoint(L, count):
    def g(x):
        count("f")
        return L.np.sin(L.np.sin(x))
    return lambda x: L.checkpoint(g)(x) * 2.0


CONSTRUCTS = {
    "cond": _cond, "switch": _switch, "while_loop": _while,
    "fori_loop(static)": _fori(lambda L, x: 3),
    "fori_loop(dynamic)": _fori(lambda L, x: L.np.asarray(3) + (x > 100.0).astype(L.np.int64)),
    "scan": _scan, "map": _map, "custom_vjp": _custom_vjp,
    "custom_jvp": _custom_jvp, "checkpoint": _checkpoint,
}

X = 0.7
XS = onp.array([0.2, 0.7, 1.3])

TRANSFORMS = {
    "none": lambda L, f: f(X),
    "grad": lambda L, f: L.grad(f)(X),
    "vjp": lambda L, f: L.vjp(f, X)[1](1.0),
    "jvp": lambda L, f: L.jvp(f, (X,), (1.0,)),
    "vmap": lambda L, f: L.vmap(f)(XS),
    "jit": lambda L, f: L.jit(f)(X),
    "jit(grad)": lambda L, f: L.jit(L.grad(f))(X),
    "vmap(grad)": lambda L, f: L.vmap(L.grad(f))(XS),
}


def _counts(lib: str, construct: str, transform: str):
    """{body name: runs} of one program, or the exception type it raised."""
    L = _libs()[lib]
    counter: collections.Counter = collections.Counter()
    f = CONSTRUCTS[construct](L, lambda name: counter.update([name]))
    try:
        TRANSFORMS[transform](L, f)
    except Exception as e:  # noqa: BLE001 -- the oracle's refusals are part of what is compared
        return type(e).__name__
    return dict(counter)


@pytest.mark.parametrize("transform", list(TRANSFORMS))
@pytest.mark.parametrize("construct", list(CONSTRUCTS))
def test_counts_match_jax(construct, transform):
    want = _counts("jax", construct, transform)
    got = _counts("fgrad", construct, transform)
    if isinstance(want, str):
        # JAX refuses (forward mode of custom_vjp, reverse mode of while_loop): fgrad may refuse
        # too, or run each body once per trace
        if isinstance(got, str):
            return
        assert all(v == 1 for v in got.values()), f"{construct} under {transform}: {got} (JAX: {want})"
        return
    assert got == want, f"{construct} under {transform}: fgrad ran {got}, JAX {want}"


# --- autograd.Function: no JAX oracle; each of its functions runs once per trace ----------------

class _Counted(fgrad.torch.autograd.Function):
    counter: collections.Counter = collections.Counter()

    @staticmethod
    def forward(ctx, x):
        _Counted.counter.update(["forward"])
        ctx.save_for_backward(x)
        return x.sin()

    @staticmethod
    def backward(ctx, g):
        _Counted.counter.update(["backward"])
        (x,) = ctx.saved_tensors
        return 3.0 * x.cos() * g


FUNCTION_EXPECTED = {  # as custom_vjp's fwd and bwd in JAX (forward plays fun's and fwd's part)
    "none": {"forward": 1},
    "grad": {"forward": 1, "backward": 1},
    "vjp": {"forward": 1, "backward": 1},
    "vmap": {"forward": 1},
    "jit": {"forward": 1},
    "jit(grad)": {"forward": 1, "backward": 1},
    "vmap(grad)": {"forward": 1, "backward": 1},
}


@pytest.mark.parametrize("transform", list(FUNCTION_EXPECTED))
def test_autograd_function_runs_once_per_trace(transform):
    # Tensors take the facade's doors: torch.func's transforms, torch.compile's engine for jit
    # (fgrad's own transforms refuse Tensors)
    tf = fgrad.torch.func
    L = types.SimpleNamespace(grad=tf.grad, vjp=tf.vjp, vmap=tf.vmap, jit=tf.compile_function)
    _Counted.counter.clear()
    f = lambda x: _Counted.apply(x) * 2.0  # noqa: E731
    boxed = {"none": lambda: f(fgrad.torch.tensor(X)),
             "grad": lambda: L.grad(f)(fgrad.torch.tensor(X)),
             "vjp": lambda: L.vjp(f, fgrad.torch.tensor(X))[1](fgrad.torch.tensor(1.0)),
             "vmap": lambda: L.vmap(f)(fgrad.torch.tensor(XS)),
             "jit": lambda: L.jit(f)(fgrad.torch.tensor(X)),
             "jit(grad)": lambda: L.jit(L.grad(f))(fgrad.torch.tensor(X)),
             "vmap(grad)": lambda: L.vmap(L.grad(f))(fgrad.torch.tensor(XS))}
    boxed[transform]()
    assert dict(_Counted.counter) == FUNCTION_EXPECTED[transform]


def test_tensor_facade_backward_runs_function_once():
    _Counted.counter.clear()
    x = fgrad.torch.tensor(X, requires_grad=True)
    (_Counted.apply(x) * 2.0).backward()
    assert dict(_Counted.counter) == {"forward": 1, "backward": 1}
