"""`torch.utils.checkpoint`: activation checkpointing for the Tensor facade.

`checkpoint(fn, *args)` runs fn without recording a graph and recomputes it during backward
(PyTorch's reentrant scheme): the backward of the checkpointed region re-runs fn with grad
enabled on detached copies of its inputs and back-propagates through that recomputation, so
the parameters fn closes over (a Module's) receive their gradients then. For functions of
explicit arguments only, `fgrad.checkpoint` (functional, any transform) is the alternative."""
from __future__ import annotations

import contextlib
import warnings
from typing import Any, Callable

from ...core.errors import FgradRuntimeError
from .._errors import CheckpointError  # noqa: F401 (torch.utils.checkpoint.CheckpointError)
from .._tensor import autograd as tensor_autograd
from .._tensor.function import Function
from .._tensor.grad_mode import enable_grad, no_grad
from .._tensor.tensor import Tensor


class _Checkpoint(Function):
    @staticmethod
    def forward(ctx, fn, n_args, *args):
        ctx.fn, ctx.inputs = fn, args
        with no_grad():
            out = fn(*args)
        ctx.single = isinstance(out, Tensor)
        return out if ctx.single else tuple(out)

    @staticmethod
    def backward(ctx, *grads):
        needs = ctx.needs_input_grad[2:]  # (forward's inputs arrive detached: ask ctx which need grads)
        inputs = [a.detach().requires_grad_(bool(n)) if isinstance(a, Tensor) else a for a, n in zip(ctx.inputs, needs)]
        with enable_grad():
            out = ctx.fn(*inputs)
        outs = (out,) if ctx.single else tuple(out)
        pairs = [(o, g) for o, g in zip(outs, grads) if isinstance(o, Tensor) and o.requires_grad and g is not None]
        if pairs:
            tensor_autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
        in_grads = tuple(a.grad if isinstance(a, Tensor) and a.requires_grad else None for a in inputs)
        return (None, None) + in_grads


def checkpoint(function: Callable, *args: Any, use_reentrant: bool | None = None, context_fn: Any = None,
               determinism_check: str = "default", debug: bool = False, preserve_rng_state: bool = True,
               **kwargs: Any) -> Any:
    """function(*args, **kwargs), recomputed during backward instead of keeping its
    intermediate values (see the module docstring). `use_reentrant` is accepted; both
    settings run the reentrant scheme."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Pass "
                      "use_reentrant=True or use_reentrant=False (fgrad runs the reentrant scheme either way).",
                      UserWarning, stacklevel=2)
    if kwargs:
        return checkpoint(lambda *a: function(*a, **kwargs), *args, use_reentrant=True)
    return _Checkpoint.apply(function, len(args), *args)


def checkpoint_sequential(functions: Any, segments: int, input: Any, use_reentrant: bool | None = None,
                          **kwargs: Any) -> Any:
    """Run a Sequential (or list of modules) in `segments` checkpointed chunks; the last
    chunk runs normally (as PyTorch)."""
    fns = list(functions.children()) if hasattr(functions, "children") else list(functions)
    size = max(len(fns) // segments, 1)

    def run(start: int, end: int) -> Callable:
        def forward(x):
            for f in fns[start:end + 1]:
                x = f(x)
            return x
        return forward
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=True if use_reentrant is None else use_reentrant)
    return run(end + 1, len(fns) - 1)(input)


__all__ = ["checkpoint", "checkpoint_sequential"]


def noop_context_fn() -> tuple:
    """The default `context_fn` of `checkpoint`: two do-nothing context managers (one for the
    forward pass, one for the recomputation).

    Returns:
        (contextlib.nullcontext(), contextlib.nullcontext()).
    """
    return contextlib.nullcontext(), contextlib.nullcontext()


def detach_variable(inputs: tuple) -> tuple:
    """The Tensors of `inputs` detached, each keeping its requires_grad; other items unchanged.

    Args:
        inputs: a tuple.

    Returns:
        A tuple of the same length.

    Raises:
        RuntimeError: when `inputs` is not a tuple.
    """
    if not isinstance(inputs, tuple):
        raise FgradRuntimeError(f"Only tuple of tensors is supported. Got Unsupported input type: "
                           f"{type(inputs).__name__}")
    out = []
    for item in inputs:
        if isinstance(item, Tensor):
            detached = item.detach()
            detached.requires_grad = item.requires_grad
            item = detached
        out.append(item)
    return tuple(out)


def check_backward_validity(inputs) -> None:
    """Warn when no Tensor among `inputs` requires grad (a checkpoint would give no gradients).

    Args:
        inputs: an iterable of arguments.

    Returns:
        None.
    """
    if not any(item.requires_grad for item in inputs if isinstance(item, Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      stacklevel=2)


__all__ += ["CheckpointError", "noop_context_fn", "detach_variable", "check_backward_validity"]
