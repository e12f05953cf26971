"""fgrad.debug: JAX's `jax.debug.print` and `jax.debug.callback`.

Eagerly, under `disable_jit()` and under grad/jvp/vjp (whose traced values have concrete
primals) the callback runs at once with concrete arrays (the primal values: derivatives are
not printed), as in JAX. Under jit and vmap, where no concrete value exists while the Python
runs, fgrad cannot yet stage a host callback into the compiled program, so the callback runs
once at trace time with the traced values (`debug.print` shows `Traced<f64[3]>...`, as a
Python print would), and not on later calls that reuse the trace. JAX runs it on every call
with the run-time values (per example under vmap): docs/jax-differences.md.
"""
from __future__ import annotations

import builtins
from typing import Any, Callable

from .core import errors
from .core.trace import Tracer, concrete_value
from .tree_util import tree_map

__all__ = ["callback", "print"]


def _concrete(x):
    if not isinstance(x, Tracer):
        return x
    try:
        return concrete_value(x, "debug.callback's argument")
    except errors.ConcretizationError:
        return x  # under jit or vmap: the traced value itself (see the module docstring)


def callback(callback: Callable[..., Any], *args, ordered: bool = False, **kwargs) -> None:
    """Call `callback(*args, **kwargs)` for its side effect, with the arguments' (pytrees of
    arrays) concrete values where they exist; returns None. `ordered` is accepted: fgrad
    runs callbacks in program order. Under jit and vmap it runs at trace time (see
    fgrad.debug's docstring)."""
    args, kwargs = tree_map(_concrete, (args, kwargs))
    callback(*args, **kwargs)


def print(fmt: str, *args, ordered: bool = False, **kwargs) -> None:  # noqa: A001 (JAX's name)
    """Print `fmt.format(*args, **kwargs)` with the arguments' values (see `callback` for
    when they are concrete)."""
    callback(lambda *a, **k: builtins.print(fmt.format(*a, **k)), *args, ordered=ordered, **kwargs)
