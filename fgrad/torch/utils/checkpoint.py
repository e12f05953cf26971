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

from ...core.errors import FgradRuntimeError, FgradValueError
from .._errors import CheckpointError  # noqa: F401 (torch.utils.checkpoint.CheckpointError)
from .._tensor import autograd as tensor_autograd
from .._tensor import cuda
from .._tensor.creation import get_rng_state, set_rng_state
from .._tensor.function import Function
from .._tensor.grad_mode import enable_grad, no_grad
from .._tensor.tensor import Tensor
from ._selective_checkpoint import (SAC_IGNORED_OPS, CheckpointPolicy,  # noqa: F401
                                     SelectiveCheckpointContext, create_selective_checkpoint_contexts, op_log)


class CheckpointFunction(Function):
    """PyTorch's reentrant checkpoint as an autograd.Function: `CheckpointFunction.apply(
    run_function, preserve_rng_state, *args)` runs run_function(*args) without recording and
    reruns it in backward (with the forward pass's RNG state when preserve_rng_state, so
    dropout draws the same masks) to back-propagate through the recomputation."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        ctx.run_function, ctx.inputs = run_function, args
        ctx.preserve_rng_state = bool(preserve_rng_state)
        ctx.recompute_context = getattr(run_function, "_recompute_context", None)
        if ctx.preserve_rng_state:
            ctx.rng_state = get_rng_state()
        with no_grad():
            out = run_function(*args)
        ctx.single = isinstance(out, Tensor)
        ctx.check = getattr(run_function, "_determinism", None)
        if ctx.check is not None:
            ctx.out_meta = [_meta(o) for o in ((out,) if ctx.single else tuple(out))]
        return out if ctx.single else tuple(out)

    @staticmethod
    def backward(ctx, *grads):
        needs = ctx.needs_input_grad[2:]  # (forward's inputs arrive detached: ask ctx which need grads)
        inputs = [a.detach().requires_grad_(bool(n)) if isinstance(a, Tensor) else a for a, n in zip(ctx.inputs, needs)]
        outer = get_rng_state() if ctx.preserve_rng_state else None
        try:
            if outer is not None:
                set_rng_state(ctx.rng_state)
            with enable_grad(), (ctx.recompute_context or contextlib.nullcontext()):
                out = ctx.run_function(*inputs)
        finally:
            if outer is not None:
                set_rng_state(outer)
        outs = (out,) if ctx.single else tuple(out)
        if ctx.check is not None:
            _check_recomputation(ctx.out_meta, [_meta(o) for o in outs], ctx.check)
        pairs = [(o, g) for o, g in zip(outs, grads) if isinstance(o, Tensor) and o.requires_grad and g is not None]
        if pairs:
            tensor_autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
        in_grads = tuple(a.grad if isinstance(a, Tensor) and a.requires_grad else None for a in inputs)
        return (None, None) + in_grads


def _meta(x) -> Any:
    """What the determinism check compares of a value: a Tensor's shape, dtype and device."""
    return {"shape": x.shape, "dtype": x.dtype, "device": x.device} if isinstance(x, Tensor) else None


_DEBUG_TIP = ("\nTip: To see a more detailed error message, either pass `debug=True` to "
              "`torch.utils.checkpoint.checkpoint(...)` or wrap the code block with "
              "`with torch.utils.checkpoint.set_checkpoint_debug_enabled(True):` to enable checkpoint-debug mode "
              "globally.\n")


def _check_recomputation(saved: list, recomputed: list, check: "_Determinism") -> None:
    """Raise CheckpointError when the recomputation's outputs differ in metadata from the
    forward pass's (PyTorch compares the tensors saved for backward; fgrad, which
    differentiates through the recomputation, compares the region's outputs)."""
    lines = [f"tensor at position {i}:\nsaved metadata: {a}\nrecomputed metadata: {b}\n"
             for i, (a, b) in enumerate(zip(saved, recomputed)) if a != b]
    if len(saved) != len(recomputed):
        lines.append(f"the forward pass returned {len(saved)} values, the recomputation {len(recomputed)}\n")
    if not lines:
        return
    message = ("torch.utils.checkpoint: Recomputed values for the following tensors have different metadata than "
               "during the forward pass.\n" + "".join(lines))
    if check.log is None:
        raise CheckpointError(message + _DEBUG_TIP)
    forward_ops, recompute_ops = check.log.runs + [[]] * (2 - len(check.log.runs))
    raise CheckpointError(message + "\nOperations executed during the original forward:\n\n" + "\n".join(forward_ops)
                          + "\n\nOperations executed during recomputation:\n\n" + "\n".join(recompute_ops)
                          + "\n\nERROR: Detected non-determinism while running activation checkpointing: "
                          "compare the operators of the two runs above to find where they differ.")


class _Determinism:
    """checkpoint's determinism check of a use_reentrant=False region, with the op log of
    debug mode (None without it)."""

    def __init__(self, log: "_OpLogRun | None") -> None:
        self.log = log


class _OpLogRun:
    """run_function for debug mode: each run of the function (the forward pass, then each
    recomputation) logs the ops it executes."""

    def __init__(self, fn: Callable) -> None:
        self.fn = fn
        self.runs: list = []

    def __call__(self, *args):
        ops: list = []
        self.runs.append(ops)
        with op_log(ops):
            return self.fn(*args)


class _WithContexts:
    """run_function for CheckpointFunction with context_fn's two contexts: the first around the
    forward run, the second (read by backward) around the recomputation."""

    def __init__(self, fn: Callable, forward_context, recompute_context) -> None:
        self.fn, self._forward_context, self._recompute_context = fn, forward_context, recompute_context
        self._ran = False

    def __call__(self, *args):
        if self._ran:  # the recomputation (backward enters its context)
            return self.fn(*args)
        self._ran = True
        with self._forward_context:
            return self.fn(*args)


def checkpoint(function: Callable, *args: Any, use_reentrant: bool | None = None, context_fn: Callable = None,
               determinism_check: str = "default", debug: bool = False, preserve_rng_state: bool = True,
               **kwargs: Any) -> Any:
    """function(*args, **kwargs), recomputed during backward instead of keeping its
    intermediate values (see the module docstring).

    Args:
        function: the checkpointed computation.
        *args: its arguments; the Tensors among them that require grad get gradients.
        use_reentrant: True or False (PyTorch's two schemes give the same gradients; fgrad runs
            the reentrant one for both); None warns, as PyTorch does.
        context_fn: (use_reentrant=False only) a function returning two context managers, one
            entered around the forward run, one around the recomputation.
        determinism_check: (use_reentrant=False) "default" checks that the recomputation's
            outputs have the forward pass's shapes, dtypes and devices; "none" skips that.
        debug: (use_reentrant=False) on a failed check, list the ops of both runs
            (set_checkpoint_debug_enabled overrides it).
        preserve_rng_state: rerun with the forward pass's CPU RNG state (dropout then draws
            the same masks in the recomputation).
        **kwargs: keyword arguments of `function`.

    Returns:
        function's outputs.

    Raises:
        ValueError: for context_fn or debug with use_reentrant=True, or an unknown
            determinism_check.
        CheckpointError: (in backward) the recomputation differs from the forward pass.
    """
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Pass "
                      "use_reentrant=True or use_reentrant=False (fgrad runs the reentrant scheme either way).",
                      UserWarning, stacklevel=2)
        use_reentrant = True
    if use_reentrant and ((context_fn is not None and context_fn is not noop_context_fn) or debug):
        raise FgradValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
    if not use_reentrant and determinism_check not in ("default", "none"):
        raise FgradValueError(f"determinism_check should be one of ['default', 'none'], but got {determinism_check}")
    debug = _DEBUG[0] if _DEBUG[0] is not None else debug
    run = (lambda *a: function(*a, **kwargs)) if kwargs else function
    log = None
    if not use_reentrant and debug:
        run = log = _OpLogRun(run)
    if context_fn is not None and context_fn is not noop_context_fn:
        forward_context, recompute_context = context_fn()
        run = _WithContexts(run, forward_context, recompute_context)
        run._recompute_context = recompute_context
    if not use_reentrant and determinism_check == "default":
        if not isinstance(run, (_WithContexts, _OpLogRun)):
            run = _WithContexts(run, contextlib.nullcontext(), None)
        run._determinism = _Determinism(log)
    return CheckpointFunction.apply(run, preserve_rng_state, *args)


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


__all__ += ["CheckpointError", "noop_context_fn", "detach_variable", "check_backward_validity", "CheckpointFunction",
            "DefaultDeviceType"]


class DefaultDeviceType:
    """The device type whose RNG state checkpoint preserves besides the CPU's (PyTorch's holder
    of that setting): until set, "cuda" when a GPU is available, else "cpu".

    fgrad's checkpoint restores the CPU generator's state, the one fgrad.torch's random
    functions draw from on every device."""

    _default_device_type: str | None = None

    @staticmethod
    def set_device_type(device: str = "cuda") -> None:
        """Set the device type (a string such as "cuda").

        Args:
            device: the device type.
        """
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type() -> str:
        """The device type set, or the default (see the class).

        Returns:
            A string.
        """
        if not DefaultDeviceType._default_device_type:
            DefaultDeviceType._default_device_type = "cuda" if cuda.is_available() else "cpu"
        return DefaultDeviceType._default_device_type


def get_device_states(*args: Any) -> tuple:
    """The devices of the non-CPU Tensors among `args` (nested lists, tuples and dicts
    included) and, for each, the state of the generator its random numbers come from: fgrad
    draws on every device from the CPU generator, so that generator's state.

    Args:
        *args: a checkpointed function's arguments.

    Returns:
        (a list of device indices, a list of state Tensors); both empty for CPU tensors.
    """
    ids: list = []

    def visit(a):
        if isinstance(a, Tensor):
            if a.device.type not in ("cpu", "meta"):
                ids.append(a.get_device())
        elif isinstance(a, (list, tuple)):
            for x in a:
                visit(x)
        elif isinstance(a, dict):
            for x in a.values():
                visit(x)
    visit(args)
    return ids, [get_rng_state() for _ in ids]


def set_device_states(devices: list, states: list, *, device_type: str | None = None) -> None:
    """Restore the generator states get_device_states returned (fgrad's one generator serves
    every device: each state is set on it in turn).

    Args:
        devices: device indices.
        states: their states.
        device_type: accepted as PyTorch's; "meta" sets nothing.
    """
    if device_type is None:
        device_type = DefaultDeviceType.get_device_type()
    if device_type == "meta":
        return
    for _, state in zip(devices, states):
        set_rng_state(state)


class GraphExecGroup:
    """PyTorch's grouping of backward calls so that a non-reentrant checkpoint recomputes at
    most once across them. fgrad runs the reentrant scheme, for which PyTorch documents the
    group as having no effect; as in PyTorch, groups cannot be nested."""

    _current: "GraphExecGroup | None" = None

    def __enter__(self) -> "GraphExecGroup":
        if GraphExecGroup._current is not None:
            raise FgradRuntimeError(f"GraphExecGroup contexts cannot be nested. Already inside group "
                                    f"{GraphExecGroup._current}")
        GraphExecGroup._current = self
        return self

    def __exit__(self, *args: object) -> None:
        GraphExecGroup._current = None


__all__ += ["get_device_states", "set_device_states", "GraphExecGroup", "CheckpointPolicy",
            "SelectiveCheckpointContext", "create_selective_checkpoint_contexts", "SAC_IGNORED_OPS"]


# set_checkpoint_debug_enabled's setting: None defers to each checkpoint's `debug`
_DEBUG: list = [None]


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled: bool | None):
    """Within the block, checkpoint's debug mode is `enabled` whatever `debug=` a call passes
    (None: each call's own): a use_reentrant=False region whose recomputation differs from its
    forward pass then reports the ops each run executed.

    Args:
        enabled: True, False or None.

    Yields:
        None.
    """
    prev = _DEBUG[0]
    _DEBUG[0] = enabled
    try:
        yield
    finally:
        _DEBUG[0] = prev


__all__ += ["set_checkpoint_debug_enabled"]


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool):
    """Whether the checkpoints run inside the block may stop their recomputation early (only
    the forward pass needs to be inside).

    PyTorch's non-reentrant checkpoint stops recomputing once it has every tensor backward
    saved, so code after that point in the function does not run again; enable=False makes it
    recompute the whole function. fgrad back-propagates through the recomputation's outputs
    (the reentrant scheme), which needs the whole function, so its recomputation always runs to
    the end whatever `enable` says: PyTorch's behaviour under enable=False. Under enable=True
    (the default) values and gradients are PyTorch's too; only side effects placed after the
    last saved tensor (a print, a counter) run once more in fgrad than in PyTorch.

    Args:
        enable: allow early stopping (PyTorch) or not.

    Yields:
        None.
    """
    yield


__all__ += ["set_checkpoint_early_stop"]
