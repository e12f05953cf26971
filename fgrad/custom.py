"""User-defined derivative rules (custom_vjp, custom_jvp) and checkpoint.

Each is one primitive whose params carry the user's functions, so every trace
(record, jvp, staging, vmap, the Tensor facade) handles it like any other
primitive. The call object is created per call and holds the forward residuals
that the backward rule needs.
"""
from __future__ import annotations

import functools
from typing import Callable

import numpy as np

from .core.primitive import Primitive
from .core.trace import aval_of
from .tree_util import tree_flatten, tree_unflatten


class _Call:
    """The static params of one call: user functions and pytree structure (hash by identity)."""

    __slots__ = ("fun", "fwd", "bwd", "jvp", "in_tree", "out_tree", "residuals", "__weakref__")

    def __init__(self, fun, in_tree, fwd=None, bwd=None, jvp=None) -> None:
        self.fun, self.in_tree, self.fwd, self.bwd, self.jvp = fun, in_tree, fwd, bwd, jvp
        self.out_tree = None
        self.residuals = None

    def __repr__(self) -> str:
        return getattr(self.fun, "__name__", "fun")

    def run(self, fn, flat):
        out = fn(*tree_unflatten(self.in_tree, flat))
        return out


def _single(out, what: str):
    leaves, tree = tree_flatten(out)
    if len(leaves) != 1:
        raise TypeError(f"{what} must return a single array (got a pytree with {len(leaves)} leaves); "
                        "return one array, or concatenate the outputs.")
    return leaves[0]


def _out_aval(call, avals):
    from .api import make_jaxpr
    closed = make_jaxpr(lambda *xs: _single(call.run(call.fun, list(xs)), call.fun.__name__))(
        *[np.zeros(a.shape, a.dtype) for a in avals])
    return closed.out_avals[0]


def _bind_call(prim, args, call_args: dict, fun):
    """Bind `prim` on the flattened arguments, with the call object as its one param."""
    from .numpy._util import as_value
    flat, in_tree = tree_flatten(args)
    flat = [x if hasattr(x, "shape") else as_value(x) for x in flat]
    return prim.bind(*flat, call=_Call(fun, in_tree, **call_args))


def _zeros_for(x):
    return np.zeros(aval_of(x).shape, aval_of(x).dtype)


# --- custom_vjp ---------------------------------------------------------------------------

custom_vjp_call_p = Primitive("custom_vjp_call", backward_name="CustomFunctionBackward")


def _custom_vjp_impl(*xs, call, xp):
    if call.fwd is None:
        return _single(call.run(call.fun, list(xs)), "custom_vjp function")
    res = call.fwd(*tree_unflatten(call.in_tree, list(xs)))
    if not (isinstance(res, tuple) and len(res) == 2):
        raise TypeError(f"custom_vjp fwd of {call!r} must return (output, residuals), got {type(res).__name__}")
    out, call.residuals = res
    return _single(out, "custom_vjp fwd")


def _custom_vjp_vjp(needs, ct, out, *xs, call):
    residuals = call.residuals
    if residuals is None or any(not isinstance(x, (np.ndarray, np.generic)) for x in xs):
        # Traced inputs (higher order, create_graph): residuals must depend on them, so the
        # forward rule runs again on what this node saw. Concrete inputs reuse the first run.
        res = call.fwd(*tree_unflatten(call.in_tree, list(xs)))
        residuals = res[1]
    cts = call.bwd(residuals, ct)
    if not isinstance(cts, (tuple, list)):
        raise TypeError(f"custom_vjp bwd of {call!r} must return a tuple with one cotangent per "
                        f"argument, got {type(cts).__name__}")
    flat, tree = tree_flatten(tuple(cts), is_leaf=lambda v: v is None)
    if len(flat) != len(xs):
        raise ValueError(f"custom_vjp bwd of {call!r} returned {len(flat)} cotangents for "
                         f"{len(xs)} inputs; return one per argument (None for zero).")
    result = []
    for need, c, x in zip(needs, flat, xs):
        if not need or c is None:
            result.append(None)
            continue
        if tuple(aval_of(c).shape) != tuple(aval_of(x).shape):
            raise ValueError(f"custom_vjp bwd of {call!r}: cotangent shape {aval_of(c).shape} for an "
                             f"input of shape {aval_of(x).shape}")
        result.append(c)
    return result


def _custom_vjp_jvp(primals, tangents, *, call):
    # Forward mode runs through the function's own primitives (the custom rule is reverse-only).
    from .api import jvp
    ts = [_zeros_for(p) if t is None else t for p, t in zip(primals, tangents)]
    return jvp(lambda *xs: _single(call.run(call.fun, list(xs)), "custom_vjp function"),
               tuple(primals), tuple(ts))


custom_vjp_call_p.def_impl(_custom_vjp_impl)
custom_vjp_call_p.def_abstract_eval(lambda *avals, call: _out_aval(call, avals))
custom_vjp_call_p.def_vjp(_custom_vjp_vjp)
custom_vjp_call_p.def_jvp(_custom_vjp_jvp)


class custom_vjp:
    """Decorator: give a function a hand-written reverse-mode rule (JAX's API).

    >>> @custom_vjp
    ... def f(x): return fnp.sin(x)
    >>> f.defvjp(lambda x: (fnp.sin(x), fnp.cos(x)), lambda cos_x, ct: (ct * cos_x,))
    """

    def __init__(self, fun: Callable) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.fwd = self.bwd = None

    def defvjp(self, fwd: Callable, bwd: Callable) -> None:
        self.fwd, self.bwd = fwd, bwd

    def __call__(self, *args):
        if self.fwd is None:
            raise TypeError(f"custom_vjp function {self.fun.__name__} has no rule: call "
                            f"{self.fun.__name__}.defvjp(fwd, bwd) first")
        return _bind_call(custom_vjp_call_p, args, dict(fwd=self.fwd, bwd=self.bwd), self.fun)


# --- custom_jvp ---------------------------------------------------------------------------

custom_jvp_call_p = Primitive("custom_jvp_call")
custom_jvp_call_p.def_impl(lambda *xs, call, xp: _single(call.run(call.fun, list(xs)), "custom_jvp function"))
custom_jvp_call_p.def_abstract_eval(lambda *avals, call: _out_aval(call, avals))


def _custom_jvp_jvp(primals, tangents, *, call):
    ts = [_zeros_for(p) if t is None else t for p, t in zip(primals, tangents)]
    out = call.jvp(tuple(tree_unflatten(call.in_tree, list(primals))),
                   tuple(tree_unflatten(call.in_tree, ts)))
    if not (isinstance(out, tuple) and len(out) == 2):
        raise TypeError(f"custom_jvp rule of {call!r} must return (primal_out, tangent_out)")
    return _single(out[0], "custom_jvp rule"), _single(out[1], "custom_jvp rule")


def _custom_jvp_vjp(needs, ct, out, *xs, call):
    # The rule is linear in the tangents, so its transpose is the gradient of <ct, jvp(t)> in t.
    from . import numpy as fnp
    from .api import vjp

    def tangent_out(*ts):
        return call.jvp(tuple(tree_unflatten(call.in_tree, list(xs))),
                        tuple(tree_unflatten(call.in_tree, list(ts))))[1]
    _, f_vjp = vjp(lambda *ts: fnp.sum(fnp.multiply(_single(tangent_out(*ts), "custom_jvp rule"), ct)),
                   *[_zeros_for(x) for x in xs])
    cts = f_vjp(np.ones((), aval_of(ct).dtype))
    return [c if need else None for need, c in zip(needs, cts)]


custom_jvp_call_p.def_jvp(_custom_jvp_jvp)
custom_jvp_call_p.def_vjp(_custom_jvp_vjp)


class custom_jvp:
    """Decorator: give a function a hand-written forward-mode rule (JAX's API).
    Reverse mode transposes that rule, so one definition serves grad too."""

    def __init__(self, fun: Callable) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.jvp = None

    def defjvp(self, jvp: Callable) -> Callable:
        self.jvp = jvp
        return jvp

    def __call__(self, *args):
        if self.jvp is None:
            raise TypeError(f"custom_jvp function {self.fun.__name__} has no rule: decorate one with "
                            f"@{self.fun.__name__}.defjvp")
        return _bind_call(custom_jvp_call_p, args, dict(jvp=self.jvp), self.fun)


# --- checkpoint ---------------------------------------------------------------------------

checkpoint_p = Primitive("checkpoint")
checkpoint_p.def_impl(lambda *xs, call, xp: _single(call.run(call.fun, list(xs)), "checkpointed function"))
checkpoint_p.def_abstract_eval(lambda *avals, call: _out_aval(call, avals))


def _checkpoint_vjp(needs, ct, out, *xs, call):
    from .api import vjp
    _, f_vjp = vjp(lambda *ys: _single(call.run(call.fun, list(ys)), "checkpointed function"), *xs)
    return [c if need else None for need, c in zip(needs, f_vjp(ct))]


def _checkpoint_jvp(primals, tangents, *, call):
    from .api import jvp
    ts = [_zeros_for(p) if t is None else t for p, t in zip(primals, tangents)]
    return jvp(lambda *ys: _single(call.run(call.fun, list(ys)), "checkpointed function"),
               tuple(primals), tuple(ts))


checkpoint_p.def_vjp(_checkpoint_vjp)
checkpoint_p.def_jvp(_checkpoint_jvp)


def checkpoint(fun: Callable) -> Callable:
    """Rematerialise fun's intermediates in the backward pass: only its inputs are saved."""
    @functools.wraps(fun)
    def wrapped(*args):
        return _bind_call(checkpoint_p, args, {}, fun)
    return wrapped


remat = checkpoint
