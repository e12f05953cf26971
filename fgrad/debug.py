"""fgrad.debug: JAX's `jax.debug.print` and `jax.debug.callback`.

The callback runs when the values exist, with concrete arrays, as in JAX: at once eagerly
and under grad/jvp/vjp (with the primal values: derivatives are not printed); under jit on
every call of the compiled program, with that call's values; under vmap once per example.
Under jit it is one equation of the `debug_callback` primitive, which is `effectful`: dead-code
elimination keeps it although nothing reads its (empty) output.

A callback none of whose arguments is traced (`debug.print("hello")` under jit) runs once,
when jit traces, where JAX runs it on every call: staging folds an operation without a
traced operand into a constant (docs/jax-differences.md).
"""
from __future__ import annotations

import builtins
from typing import Any, Callable

import numpy as np

from .core.avals import ShapedArray
from .core.primitive import Primitive
from .core.trace import Tracer
from .tree_util import tree_flatten, tree_unflatten

__all__ = ["callback", "print"]


debug_callback_p = Primitive("debug_callback")
debug_callback_p.effectful = True
_TOKEN = ShapedArray((0,), np.dtype(np.float64))


@debug_callback_p.def_impl
def _impl(*leaves, xp, call):
    call(*leaves)
    return xp.zeros((0,))


debug_callback_p.def_abstract_eval(lambda *avals, call: _TOKEN)
# the callback sees primal values; its empty output carries no derivative
debug_callback_p.def_jvp(lambda primals, tangents, call: (debug_callback_p.bind(*primals, call=call), None))
debug_callback_p.def_vjp(lambda needs, ct, out, *primals, call: [None] * len(primals))
debug_callback_p.def_saves(inputs=False, output=False)


def callback(callback: Callable[..., Any], *args, ordered: bool = False, **kwargs) -> None:
    """Call `callback(*args, **kwargs)` for its side effect with the arguments' (pytrees of
    arrays) concrete values: at once, or under jit on every run of the compiled program, or
    once per example under vmap; returns None. `ordered` is accepted: fgrad runs callbacks
    in program order."""
    leaves, tree = tree_flatten((args, kwargs))
    if not any(isinstance(v, Tracer) for v in leaves):
        callback(*args, **kwargs)
        return

    def call(*values):  # (a new function per call site: two callbacks are never merged)
        a, k = tree_unflatten(tree, values)
        callback(*a, **k)
    traced = [i for i, v in enumerate(leaves) if isinstance(v, Tracer)]
    fixed = dict((i, v) for i, v in enumerate(leaves) if not isinstance(v, Tracer))

    def call_traced(*values):  # non-array leaves (strings, numbers) stay out of the primitive
        it = iter(values)
        call(*[fixed[i] if i in fixed else next(it) for i in range(len(leaves))])
    debug_callback_p.bind(*[leaves[i] for i in traced], call=call_traced)


def print(fmt: str, *args, ordered: bool = False, **kwargs) -> None:  # noqa: A001 (JAX's name)
    """Print `fmt.format(*args, **kwargs)` with the arguments' values when they exist (see
    `callback`)."""
    callback(lambda *a, **k: builtins.print(fmt.format(*a, **k)), *args, ordered=ordered, **kwargs)
