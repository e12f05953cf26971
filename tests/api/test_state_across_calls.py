"""State across calls: every transform x every way it can keep a value (issue 23).

A transform that keeps a value past the moment it read it (a node's residual, a jit constant,
a linearized function's tape, a replayed backward pass, a cached trace) must keep that value,
not a reference the user can still write into: fgrad.numpy arrays are ordinary writable NumPy
arrays, and every transform snapshots what it keeps (docs/architecture.md, "Values kept across
calls"). Each test here runs a transform once on a function that keeps values each way, then
writes into the inputs, the outputs and the arrays the function closed over (and the function
itself refills a work buffer after using it), and checks the later results (the pullback, the
linearized function, the next calls) against a run where nothing was written.

Closed-over arrays: a transform that runs the Python function again on each call (grad, vmap,
...) reads them live, as eager NumPy does; jit, and everything a returned function (vjp's
pullback, linearize's f_jvp) replays, sees them as they were when traced (JAX's semantics).
Each transform below says which (`live`). `TRANSFORMS` lists every transform; a new transform
must be added (test_every_transform_is_listed checks fgrad's public names).
"""
from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np
import pytest

import fgrad
import fgrad.numpy as fnp
from fgrad import lax

X0 = np.array([0.3, -0.7, 1.1])
ROW1 = np.array([1.0, 2.0, 3.0])
ROW2 = np.array([0.5, -1.5, 2.5])
W0 = np.array([1.5, -0.5, 2.0])
JUNK = 100.0  # what the tests write into arrays


class Env:
    """The arrays a test function closes over: W (a constant) and buf (a work buffer)."""

    def __init__(self, w=W0) -> None:
        self.W = np.array(w, dtype=float)
        self.buf = np.empty(3)


def _middle(env: Env, x, reuse: bool, body: str):
    """sin(x) * W + x * ROW1 + sin(x * ROW2), with ROW1 and ROW2 passed through one buffer that
    is refilled between its uses (`reuse`: the same buffer; else a new array each time), and
    the first two terms computed inside a control-flow body closing over W and the buffer."""
    buf = env.buf if reuse else np.empty(3)
    buf[:] = ROW1

    def part(x):
        return fnp.sin(x) * env.W + x * buf   # sin keeps x; mul keeps W and buf (constants)

    if body == "none":
        a = part(x)
    elif body == "scan":
        a, _ = lax.scan(lambda c, _: (part(x) + 0.0 * c, None), fnp.zeros_like(x), None, length=2)
    elif body == "cond":
        a = lax.cond(True, part, lambda x: x, x)
    elif body == "while":
        a = lax.while_loop(lambda c: c[0] < 1, lambda c: (c[0] + 1, part(x)), (0, fnp.zeros_like(x)))[1]
    elif body == "fori":
        a = lax.fori_loop(0, 2, lambda i, c: part(x) + 0.0 * c, fnp.zeros_like(x))
    else:
        raise AssertionError(body)
    if not reuse:
        buf = np.empty(3)
    buf[:] = ROW2                              # the buffer refilled after its first use
    a = a + fnp.sin(x * buf)
    if reuse:
        buf[:] = JUNK                          # and reused after its last use
    return a


def make_f(env: Env, reuse: bool, body: str = "none", scalar: bool = False, aux: bool = False):
    """The test function: exp of the middle (exp keeps its output, the value returned)."""
    def f(x):
        a = _middle(env, x, reuse, body)
        y = fnp.exp(0.1 * fnp.sum(a)) if scalar else fnp.exp(0.3 * a)
        return (y, a) if aux else y
    return f


class Kept(NamedTuple):
    outputs: list           # arrays the transform handed to the caller (written into later)
    later: Callable         # () -> the later result(s), as a list of arrays


class Transform(NamedTuple):
    name: str
    run: Callable           # (env, reuse) -> Kept
    live: bool              # later calls rerun the Python function (closed-over arrays read live)


ONES = np.ones(3)


def _calls(g, n: int = 1, arg=lambda: X0.copy()):
    """A later result: `g` called `n` times (>= 5 reaches a replayed backward pass), each
    result written into before the next call; the list of every call's results."""
    def later():
        res = []
        for _ in range(n):
            out = g(arg())
            res.append([np.array(o, copy=True) for o in _leaves(out)])
            for o in _leaves(out):
                _scribble(o)
        return res
    return later


def _leaves(out):
    return [np.asarray(o) if not hasattr(o, "numpy") else o for o in fgrad.tree_util.tree_leaves(out)]


def _scribble(a) -> None:
    """Write JUNK into `a` wherever NumPy (or the facade) lets us."""
    if hasattr(a, "detach"):  # a facade Tensor
        a = a.detach().numpy()
    if isinstance(a, np.ndarray) and a.flags.writeable:
        a[...] = JUNK


def t_vjp(body="none"):
    def run(env, reuse):
        x = X0.copy()
        y, pb = fgrad.vjp(make_f(env, reuse, body), x)
        return Kept([x, y], lambda: [pb(ONES)])
    return Transform(f"vjp[{body}]", run, live=False)


def t_vjp_aux():
    def run(env, reuse):
        x = X0.copy()
        y, pb, a = fgrad.vjp(make_f(env, reuse, aux=True), x, has_aux=True)
        return Kept([x, y, a], lambda: [pb(ONES)])
    return Transform("vjp(has_aux)", run, live=False)


def t_vjp_fgrad_array():
    def run(env, reuse):
        x = fnp.array(X0)
        y, pb = fgrad.vjp(make_f(env, reuse), x)
        return Kept([x, y], lambda: [pb(ONES)])
    return Transform("vjp(fgrad.numpy array)", run, live=False)


def t_linearize(body="none"):
    def run(env, reuse):
        x = X0.copy()
        y, fj = fgrad.linearize(make_f(env, reuse, body), x)
        return Kept([x, y], lambda: [fj(ONES)])
    return Transform(f"linearize[{body}]", run, live=False)


def t_linearize_aux():
    def run(env, reuse):
        x = X0.copy()
        y, fj, a = fgrad.linearize(make_f(env, reuse, aux=True), x, has_aux=True)
        return Kept([x, y, a], lambda: [fj(ONES)])
    return Transform("linearize(has_aux)", run, live=False)


def _repeat(name, make, live=True, n=2, scalar=False, body="none"):
    """A transform whose result is a function of x called again later (the calls' results
    and inputs written into in between)."""
    def run(env, reuse):
        g = make(make_f(env, reuse, body, scalar=scalar))
        x = X0.copy()
        first = g(x)
        return Kept([x, *_leaves(first)], _calls(g, n))
    return Transform(name, run, live)


def _jvp_of(f):
    return lambda x: fgrad.jvp(f, (x,), (ONES,))


def _vmap_of(f):
    return lambda x: fgrad.vmap(f)(np.stack([x, 2 * x]))


def t_linear_transpose():
    def run(env, reuse):
        x = X0.copy()
        t = fgrad.linear_transpose(lambda v: v * env.W, x)
        return Kept([x], lambda: [t(ONES)])
    return Transform("linear_transpose", run, live=False)


def _checkpoint_vjp(body="none"):
    def run(env, reuse):
        x = X0.copy()
        y, pb = fgrad.vjp(fgrad.checkpoint(make_f(env, reuse, body)), x)
        return Kept([x, y], lambda: [pb(ONES)])
    return Transform(f"vjp(checkpoint)[{body}]", run, live=False)


def _custom_vjp_fn(env, reuse):
    """A custom_vjp function whose fwd saves its input and a closed-over array, around f."""
    f = make_f(env, reuse)

    @fgrad.custom_vjp
    def g(x):
        return f(x) * env.W

    def fwd(x):
        return g(x), (x, env.W, fgrad.vjp(f, x))

    def bwd(res, ct):
        x, w, (y, pb) = res
        return pb(ct * w)

    g.defvjp(fwd, bwd)
    return g


def _custom_jvp_fn(env, reuse):
    f = make_f(env, reuse)

    @fgrad.custom_jvp
    def g(x):
        return f(x) * env.W

    @g.defjvp
    def g_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        y, dy = fgrad.jvp(f, (x,), (t,))
        return y * env.W, dy * env.W
    return g


def t_custom(kind: str, how: str):
    maker = _custom_vjp_fn if kind == "custom_vjp" else _custom_jvp_fn

    def run(env, reuse):
        g = maker(env, reuse)
        x = X0.copy()
        if how == "vjp":
            y, pb = fgrad.vjp(g, x)
            return Kept([x, y], lambda: [pb(ONES)])
        if how == "linearize":
            y, fj = fgrad.linearize(g, x)
            return Kept([x, y], lambda: [fj(ONES)])
        h = fgrad.jit(fgrad.grad(lambda x: fnp.sum(g(x))))
        first = h(x)
        return Kept([x, first], _calls(h, 2))
    return Transform(f"{how}({kind})", run, live=how not in ("vjp", "linearize", "jit(grad)"))


def t_facade():
    """`import fgrad.torch as torch`: a graph built eagerly, backward() called after the writes. A
    Tensor written in place after a node saved it raises PyTorch's error or keeps its old
    value; a NumPy array an op read is copied (as torch.tensor does)."""
    def run(env, reuse):
        torch = fgrad.torch
        x = torch.tensor(X0.copy(), requires_grad=True)
        f = make_f(env, reuse)
        y = (torch.exp(torch.sin(x) * env.W) * torch.from_numpy(ROW1.copy())).sum() + torch.tensor(0.0) * f(X0).sum()
        def later():
            y.backward()
            return [x.grad.numpy().copy()]
        return Kept([y], later)
    return Transform("facade backward", run, live=False)


def t_facade_numpy_operand():
    def run(env, reuse):
        torch = fgrad.torch
        x = torch.tensor(X0.copy(), requires_grad=True)
        y = (torch.sin(x) * env.W).sum()
        def later():
            y.backward()
            return [x.grad.numpy().copy()]
        return Kept([], later)
    return Transform("facade backward (NumPy operand)", run, live=False)


TRANSFORMS = [
    t_vjp(), t_vjp_aux(), t_vjp_fgrad_array(),
    *(t_vjp(b) for b in ("scan", "cond", "while", "fori")),
    t_linearize(), t_linearize_aux(), *(t_linearize(b) for b in ("scan", "cond")),
    _repeat("grad", fgrad.grad, scalar=True),
    _repeat("value_and_grad", fgrad.value_and_grad, scalar=True),
    _repeat("grad, replayed backward pass", fgrad.grad, n=7, scalar=True),
    _repeat("jvp", _jvp_of),
    _repeat("jacfwd", fgrad.jacfwd),
    _repeat("jacrev", fgrad.jacrev),
    _repeat("hessian", fgrad.hessian, scalar=True),
    _repeat("vmap", _vmap_of),
    _repeat("jit", fgrad.jit, live=False, n=3),
    _repeat("jit(grad)", lambda f: fgrad.jit(fgrad.grad(f)), live=False, n=3, scalar=True),
    _repeat("jit(vmap)", lambda f: fgrad.jit(fgrad.vmap(f)), live=False, n=3),
    *(_repeat(f"jit[{b}]", fgrad.jit, live=False, n=3, body=b) for b in ("scan", "cond", "while", "fori")),
    *(_repeat(f"grad[{b}]", fgrad.grad, n=6, scalar=True, body=b) for b in ("scan", "cond", "while")),
    _checkpoint_vjp(), _checkpoint_vjp("scan"),
    _repeat("grad(checkpoint)", lambda f: fgrad.grad(fgrad.checkpoint(f)), scalar=True),
    # (forward mode of a custom_vjp function is a TypeError, as in JAX: no linearize case)
    *(t_custom("custom_vjp", h) for h in ("vjp", "jit(grad)")),
    *(t_custom("custom_jvp", h) for h in ("vjp", "linearize", "jit(grad)")),
    t_facade(), t_facade_numpy_operand(), t_linear_transpose(),
]

# the ways a value can be kept, and what the test writes into afterwards
WAYS = ["input residual", "output residual", "closed-over constant", "constant operand", "cache across calls"]


def _result(t: Transform, env: Env, reuse: bool, write: str | None) -> list:
    kept = t.run(env, reuse)
    if write == "input residual":
        _scribble(kept.outputs[0] if kept.outputs else None)
    elif write == "output residual":
        for o in kept.outputs[1:]:
            _scribble(o)
    elif write == "closed-over constant":
        env.W[:] = -3.0
    return kept.later()


def _close(a, b) -> None:
    fa, fb = fgrad.tree_util.tree_leaves(a), fgrad.tree_util.tree_leaves(b)
    assert len(fa) == len(fb)
    for u, v in zip(fa, fb):
        np.testing.assert_allclose(np.asarray(u), np.asarray(v), rtol=1e-12, atol=1e-12)


# checkpoint's recomputation and the transpose of a custom_jvp rule read the arrays the user's
# Python closes over as the forward pass saw them: both are staged there (frozen), not rerun
# in the backward pass (fgrad/custom.py: _staged_fun, _custom_jvp_fwd).
def _cases():
    for t in TRANSFORMS:
        for way in WAYS:
            yield pytest.param(t, way, id=f"{t.name}-{way}")


@pytest.mark.parametrize(("t", "way"), list(_cases()))
def test_later_results_ignore_writes(t: Transform, way: str) -> None:
    if way == "closed-over constant" and t.live:
        # a later call reruns the function: it sees the new values, exactly as if they had
        # been there from the start (no stale part of the first call's)
        env = Env()
        kept = t.run(env, reuse=False)
        env.W[:] = -3.0
        _close(kept.later(), t.run(Env(w=np.full(3, -3.0)), reuse=False).later())
        return
    reference = _result(t, Env(), reuse=False, write=None)
    got = _result(t, Env(), reuse=(way == "constant operand"), write=way)
    _close(got, reference)


def _public(module) -> set:
    return {n for n, v in vars(module).items() if not n.startswith("_") and callable(v)
            and getattr(v, "__module__", None) == module.__name__}


# public function of fgrad.api / fgrad.custom -> why it needs no case above
KEEPS_NOTHING = {
    "make_jaxpr": "its jaxpr's constants are staged as jit's are (the jit cases)",
    "stop_gradient": "a function of values, not of functions",
    "forward_through_fun": "custom_vjp's helper, run inside its rules (the custom_vjp cases)",
    "with_forward_rule": "custom_vjp's helper, run inside its rules (the custom_vjp cases)",
    "remat": "the same object as checkpoint",
    "jacobian": "the same object as jacrev",
    "block_until_ready": "a function of values, not of functions",
    "checkpoint_name": "a function of values, not of functions",
    "eval_shape": "keeps nothing: it returns shapes and dtypes",
    "disable_jit": "a context manager: jit under it runs f eagerly, keeping nothing",
    "ShapeDtypeStruct": "a class: a shape and a dtype",
    "Compiled": "a class: jit(f).lower(...).compile() runs the jit cases' program",
    "Lowered": "a class: jit(f).lower(...), the jit cases' program",
    "VJPFunction": "a class: the function vjp returns (the vjp cases)",
    "Traced": "a class: jit(f).trace(...), the jaxpr make_jaxpr stages",
}


def test_every_transform_is_listed() -> None:
    """A new transform in fgrad.api or fgrad.custom needs a case in TRANSFORMS (named after
    it) or a line in KEEPS_NOTHING."""
    import fgrad.api
    import fgrad.custom
    names = " ".join(t.name for t in TRANSFORMS)
    missing = sorted(n for n in _public(fgrad.api) | _public(fgrad.custom)
                     if n not in KEEPS_NOTHING and n not in names)
    assert not missing, f"transforms without a state-across-calls case: {missing}"


# --- jit outputs never alias each other, constants or inputs ------------------------------------

C = np.arange(3.0)

ALIASING = {
    "identity": lambda x: x,
    "input twice": lambda x: (x, x),
    "reshape of input": lambda x: x.reshape(3, 1),
    "transpose of input": lambda x: fnp.transpose(x[None]),
    "slice of input": lambda x: x[1:],
    "constant": lambda x: C,
    "constant and its view": lambda x: (C, C[1:], x * 2),
    "0-d constant": lambda x: np.array(2.5),
    "folded constant": lambda x: C * 2 + 1,
    "grad of a linear function": fgrad.grad(lambda x: fnp.sum(3 * x)),
    "output twice": lambda x: (fnp.sin(x),) * 2,
    "output and its view": lambda x: (lambda y: (y, y[::-1], y.reshape(3, 1)))(fnp.dot(x[None], C[:, None] * x[None])[0]),
    "value and broadcast": lambda x: (fnp.sum(x), fnp.broadcast_to(fnp.sum(x), (3,))),
    "zeros": lambda x: fnp.zeros_like(x),
    "broadcast constant": lambda x: fnp.broadcast_to(1.0, (3,)) + 0 * x,
    "select of inputs": lambda x: fnp.where(True, x, C),
    "astype same dtype": lambda x: x.astype(np.float64),
    "scan carry unchanged": lambda x: lax.scan(lambda c, _: (c, None), x, None, length=0)[0],
    "cond identity": lambda x: lax.cond(True, lambda x: x, lambda x: x, x),
}


@pytest.mark.parametrize("debug_nans", [False, True], ids=["compiled", "evaluated"])
@pytest.mark.parametrize("name", sorted(ALIASING))
def test_jit_outputs_are_fresh(name: str, debug_nans: bool) -> None:
    """Write into every output of a jitted function, call again: nothing changed, and no
    output shares memory with the input or another output (compiled program, and the jaxpr
    evaluated as under debug_nans)."""
    f = ALIASING[name]
    h = fgrad.jit(f)
    x = X0.copy()
    want = [np.array(o, copy=True) for o in fgrad.tree_util.tree_leaves(f(X0.copy()))]
    for call in range(3):
        with fgrad.debug_nans(debug_nans):
            outs = fgrad.tree_util.tree_leaves(h(x))
        assert len(outs) == len(want)
        for o, w in zip(outs, want):
            np.testing.assert_array_equal(o, w)
            assert isinstance(o, np.ndarray) and o.flags.writeable, f"output of {name} is not a writable array"
        for k, o in enumerate(outs):
            assert not np.shares_memory(o, x), f"{name}: output {k} aliases the input"
            for j, p in enumerate(outs[:k]):
                assert not np.shares_memory(o, p), f"{name}: outputs {j} and {k} share memory"
        for o in outs:
            o[...] = JUNK
        np.testing.assert_array_equal(x, X0)
        np.testing.assert_array_equal(C, np.arange(3.0))
