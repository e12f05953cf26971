"""data_parallel: the functional side's data parallelism, JAX's pmap + psum idiom over MPI.

Each rank runs the same (jitted or plain) `value_and_grad` step on its own shard of the
global batch; the wrapper then averages the step's value and gradients across ranks in one
all_reduce, outside the step (collectives need concrete arrays, not jit's tracers). With
equal shards, the mean of the per-shard mean losses is the global batch's mean loss and the
mean of their gradients its gradient, so every rank applies the same update."""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ..core.errors import FgradTypeError, FgradValueError
from . import _comm
from .collectives import OPS, all_reduce

__all__ = ["data_parallel"]


def data_parallel(step: Callable[..., tuple[Any, Any]] | None = None, *, op: str = "mean",
                  reduce_value: bool = True, timeout: float | None = None) -> Any:
    """Wrap `step(*args) -> (value, grads)` (what `fgrad.value_and_grad(loss)` or its
    `fgrad.jit` returns) so that each call returns the ranks' mean value and mean gradients.

        grad_step = fgrad.distributed.data_parallel(fgrad.jit(fgrad.value_and_grad(loss)))
        params = fgrad.distributed.broadcast(params)      # start from rank 0's parameters
        for x, y in my_shard_of_each_global_batch:
            loss_value, grads = grad_step(params, x, y)   # both averaged over the ranks
            params = tree_map(lambda p, g: p - lr * g, params, grads)

    `value` and `grads` may be any pytrees of arrays (with `has_aux=True` the value is
    `(loss, aux)`, and aux is averaged too: pass `reduce_value=False` to average only the
    gradients and get each rank's own value back). `op` is all_reduce's ("mean", or "sum"
    when each rank's loss is already scaled by its share of the global batch). Usable as a
    decorator, with or without arguments. Every rank must call the wrapped step the same
    number of times (a rank that stops makes the others raise DistributedTimeoutError after
    `timeout` seconds)."""
    if op not in OPS:
        raise FgradValueError(f"data_parallel: op must be one of {', '.join(map(repr, OPS))}, got {op!r}")

    def wrap(step: Callable[..., tuple[Any, Any]]) -> Callable[..., tuple[Any, Any]]:
        if not callable(step):
            raise FgradTypeError(f"data_parallel wraps a callable step, got {type(step).__name__}")

        @functools.wraps(step)
        def parallel_step(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
            _comm._require("data_parallel step")
            out = step(*args, **kwargs)
            if not isinstance(out, tuple) or len(out) != 2:
                raise FgradTypeError("data_parallel: the step must return (value, grads), as fgrad.value_and_grad "
                                f"does; got {type(out).__name__}"
                                + (f" of length {len(out)}" if isinstance(out, tuple) else ""))
            value, grads = out
            if reduce_value:
                # one all_reduce for both: one round of messages per step, not two
                return all_reduce((value, grads), op, timeout=timeout)
            return value, all_reduce(grads, op, timeout=timeout)

        return parallel_step

    return wrap if step is None else wrap(step)
