"""Selective activation checkpointing (torch.utils.checkpoint's SAC): a policy decides, op by op,
which results of a checkpointed region are kept from the forward pass instead of recomputed.

`create_selective_checkpoint_contexts(policy)` gives checkpoint's `context_fn` two contexts.
The first, around the forward run, calls the policy after each op with a
`SelectiveCheckpointContext`, the op and its arguments, and keeps the results of the ops it
marks MUST_SAVE / PREFER_SAVE. The second, around the recomputation in backward, matches the
ops by position (the n-th call of an op to the n-th kept result). fgrad differentiates through
the recomputation (its checkpoint is PyTorch's reentrant scheme), so a saved op is evaluated
again for its place in the gradient graph: values and gradients are PyTorch's, the memory saved
is not, and a saved result that comes out different (a random draw without
preserve_rng_state, changed global state) raises CheckpointError instead of giving gradients
of other values. As in PyTorch, an op sequence that differs in the recomputation raises too,
and so does a saved result modified in place (unless allow_cache_entry_mutation).

Ops are named as PyTorch's aten ops (`torch.ops.aten.mm.default`; fgrad.torch.ops gives the
same spellings): an op is identified by its aten name, the name of its grad_fn without
"Backward<n>" (MmBackward0 -> aten.mm). The overload ("default", "Tensor") is not told apart.
"""
from __future__ import annotations

import enum
import re
import types
from collections import defaultdict
from typing import Any, Callable

import numpy as np

from ...core.errors import FgradRuntimeError, FgradTypeError, FgradValueError
from .._errors import CheckpointError
from .._tensor import forward_ad as _fa
from .._tensor._boundary import call as _boundary_call
from .._tensor._names import grad_fn_name
from .._tensor.tensor import FORWARD_AD, Tensor, _EMPTY, _tensor_bind


class CheckpointPolicy(enum.Enum):
    """What selective checkpointing does with an op's result: SAVE keeps it from the forward
    pass, RECOMPUTE recomputes it in backward (CPU_OFFLOAD: saved; fgrad's tensors are on the
    CPU already). MUST_* and PREFER_* act alike here (PyTorch's compiler may override PREFER_*)."""

    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


_SAVING = {CheckpointPolicy.MUST_SAVE, CheckpointPolicy.PREFER_SAVE, CheckpointPolicy.MUST_CPU_OFFLOAD,
           CheckpointPolicy.PREFER_CPU_OFFLOAD}


class SelectiveCheckpointContext:
    """What the policy function receives first: `is_recompute` (always False: the policy is
    asked during the forward pass only, as in PyTorch) and `op_output`, the op's result."""

    def __init__(self, *, is_recompute: bool, op_output: Any = None) -> None:
        self.is_recompute = is_recompute
        self.op_output = op_output


class OpOverload:
    """An aten op as selective checkpointing names it (`torch.ops.aten.mm.default`): equal to
    another of the same op name whatever the overload (see the module docstring)."""

    __slots__ = ("op", "overload")

    def __init__(self, op: str, overload: str = "default") -> None:
        self.op, self.overload = op, overload

    def name(self) -> str:
        """PyTorch's schema name, "aten::mm".

        Returns:
            A string.
        """
        return f"aten::{self.op}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, OpOverload) and other.op == self.op

    def __hash__(self) -> int:
        return hash(self.op)

    def __repr__(self) -> str:
        return f"aten.{self.op}.{self.overload}"


class _OpPacket:
    """`torch.ops.aten.mm`: its overloads as attributes (`.default`, `.Tensor`, ...)."""

    def __init__(self, op: str) -> None:
        self._op = op

    def __getattr__(self, overload: str) -> OpOverload:
        if overload.startswith("__"):
            raise AttributeError(overload)
        return OpOverload(self._op, overload)

    def __repr__(self) -> str:
        return f"aten.{self._op}"


class _Namespace(types.ModuleType):
    """`torch.ops.aten`: any op name gives its packet."""

    def __getattr__(self, op: str) -> _OpPacket:
        if op.startswith("__"):
            raise AttributeError(op)
        return _OpPacket(op)


ops = types.ModuleType("fgrad.torch.ops", "torch.ops: aten ops by name, for selective checkpoint policies.")
ops.aten = _Namespace("fgrad.torch.ops.aten")

_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")
_BACKWARD = re.compile(r"Backward\d*$")
_OPS: dict = {}


def _op_of(node_name: str | None, fallback: str) -> OpOverload:
    """The aten op of a torch op whose grad_fn class is `node_name` (None: `fallback`'s name)."""
    key = node_name or fallback
    op = _OPS.get(key)
    if op is None:
        base = _BACKWARD.sub("", node_name) if node_name else fallback
        op = _OPS[key] = OpOverload(_CAMEL.sub("_", base).lower() if node_name else base)
    return op


def _tensors(out) -> list:
    if isinstance(out, Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _tensors(o)]
    return []


class _Interceptor:
    """An op interceptor (installed with forward_ad.install) that runs each torch op with the
    interceptors below it and then hands the op, its result and its arguments to `_seen`."""

    def _seen(self, op: OpOverload, out, args: tuple, kwargs: dict):
        """What the interceptor does after `op` ran; returns the op's result."""
        raise NotImplementedError

    def call(self, name, fn, args: tuple, kwargs: dict = _EMPTY):
        FORWARD_AD[0] = _fa.below(self)
        try:
            out = _boundary_call(name, fn, args, kwargs)
        finally:
            FORWARD_AD[0] = self
        return self._seen(_op_of(name, getattr(fn, "__name__", "op")), out, args, dict(kwargs))

    def bind(self, prim, args: tuple, params: dict, cls=None):
        FORWARD_AD[0] = _fa.below(self)
        try:
            out = _tensor_bind(prim, args, params, cls)
        finally:
            FORWARD_AD[0] = self
        node = cls.__name__ if cls is not None else grad_fn_name(prim.name)
        return self._seen(_op_of(node, prim.name), out, args, dict(params))

    def inplace(self, t: Tensor, new: Tensor) -> None:
        inner = _fa.below(self)
        if inner is not None:
            inner.inplace(t, new)


class _Numbered(_Interceptor):
    """An interceptor of selective checkpointing: the ops a policy sees (SAC_IGNORED_OPS
    aside) are numbered per op, the n-th call of an op in the recomputation matching the n-th
    of the forward pass, and handed to `_nth` with their number."""

    def __init__(self, storage: dict) -> None:
        self.storage = storage  # {op: {n: the kept results of its n-th call, or None}}
        self.counter: dict = defaultdict(int)

    def _seen(self, op: OpOverload, out, args: tuple, kwargs: dict):
        if op in SAC_IGNORED_OPS:
            return out
        idx = self.counter[op]
        self.counter[op] += 1
        return self._nth(op, idx, out, args, kwargs)

    def _nth(self, op: OpOverload, idx: int, out, args: tuple, kwargs: dict):
        raise NotImplementedError


class _Caching(_Numbered):
    """The forward pass's op interceptor: asks the policy after each op, keeps what it saves."""

    def __init__(self, policy_fn: Callable, storage: dict) -> None:
        super().__init__(storage)
        self.policy_fn = policy_fn

    def _nth(self, op: OpOverload, idx: int, out, args: tuple, kwargs: dict):
        policy = self.policy_fn(SelectiveCheckpointContext(is_recompute=False, op_output=out), op, *args, **kwargs)
        if isinstance(policy, bool):  # PyTorch's older form: True saves
            policy = CheckpointPolicy.MUST_SAVE if policy else CheckpointPolicy.PREFER_RECOMPUTE
        if not isinstance(policy, CheckpointPolicy):
            raise FgradTypeError(f"selective checkpoint: the policy function returned {policy!r} for {op}; return a "
                                 "torch.utils.checkpoint.CheckpointPolicy (e.g. CheckpointPolicy.MUST_SAVE)")
        if policy in _SAVING:
            kept = [(t.detach(), t._vbox[0]) for t in _tensors(out)]
            self.storage[op][idx] = kept
        else:
            self.storage[op][idx] = None
        return out


class _Cached(_Numbered):
    """The recomputation's op interceptor: each saved op gets the forward pass's result."""

    def __init__(self, storage: dict, allow_mutation: bool) -> None:
        super().__init__(storage)
        self.allow_mutation = allow_mutation

    def _nth(self, op: OpOverload, idx: int, out, args: tuple, kwargs: dict):
        entries = self.storage.get(op)
        if entries is None or idx not in entries:
            raise CheckpointError(f"torch.utils.checkpoint: the recomputation ran {op} a {idx + 1}th time, which the "
                                  "forward pass did not. This can happen if the operations in the checkpointed region "
                                  "are nondeterministic or depend on global state that changed between forward and "
                                  "backward.")
        kept = entries[idx]
        if kept is None:
            return out
        fresh = _tensors(out)
        for t, (saved, version) in zip(fresh, kept):
            if saved._vbox[0] != version and not self.allow_mutation:
                raise FgradRuntimeError(f"selective checkpoint: a result of {op} kept from the forward pass was "
                                        "modified in place afterwards; clone it before modifying it, or pass "
                                        "allow_cache_entry_mutation=True")
            if not np.array_equal(t._value, saved._value, equal_nan=t._value.dtype.kind in "fc"):
                raise CheckpointError(f"torch.utils.checkpoint: the recomputed result of {op} (call {idx + 1}) differs "
                                      "from the one the policy saved in the forward pass. fgrad differentiates "
                                      "through the recomputation, so its inputs must be the forward pass's: a random "
                                      "draw in the region needs preserve_rng_state=True, and global state must not "
                                      "change between forward and backward.")
        return out


class _Logging(_Interceptor):
    """An op interceptor that appends each op's name to a list (checkpoint's debug mode)."""

    def __init__(self, ops: list) -> None:
        self.ops = ops

    def _seen(self, op: OpOverload, out, args: tuple, kwargs: dict):
        self.ops.append(str(op))
        return out


def op_log(ops: list) -> "_Installed":
    """A context in which every torch op's aten name is appended to `ops`.

    Args:
        ops: the list to append to.

    Returns:
        A context manager.
    """
    return _Installed(lambda: _Logging(ops))


class _Installed:
    """A context manager that makes an interceptor the innermost one while it is entered."""

    def __init__(self, make: Callable) -> None:
        self._make = make
        self._active: list = []

    def __enter__(self):
        obj = self._make()
        self._active.append(obj)
        _fa.install(obj)
        return obj

    def __exit__(self, *exc: Any) -> None:
        _fa.uninstall(self._active.pop())


def create_selective_checkpoint_contexts(policy_fn_or_list: Any, allow_cache_entry_mutation: bool = False) -> tuple:
    """The two contexts of selective checkpointing, for checkpoint's `context_fn`
    (`functools.partial(create_selective_checkpoint_contexts, policy)`).

    Args:
        policy_fn_or_list: a function `policy(ctx, op, *args, **kwargs) -> CheckpointPolicy`
            called after each op of the forward pass, or a list of ops
            (`torch.ops.aten.mm.default`, ...) to save (MUST_SAVE; others PREFER_RECOMPUTE).
        allow_cache_entry_mutation: allow a saved result to be modified in place before the
            recomputation reads it (by default that raises).

    Returns:
        (the forward pass's context, the recomputation's context).

    Raises:
        ValueError: a list entry is not an op.
        TypeError: policy_fn_or_list is neither a function nor a list.
    """
    if isinstance(policy_fn_or_list, list):
        for op in policy_fn_or_list:
            if not isinstance(op, OpOverload):
                raise FgradValueError(f"Expected op in `op_list` to be an OpOverload but got: {op!r} of type "
                                      f"{type(op).__name__}. Name ops as torch.ops.aten.mm.default.")
        chosen = set(policy_fn_or_list)

        def policy_fn(ctx, op, *args, **kwargs):
            return CheckpointPolicy.MUST_SAVE if op in chosen else CheckpointPolicy.PREFER_RECOMPUTE
    elif callable(policy_fn_or_list):
        policy_fn = policy_fn_or_list
    else:
        raise FgradTypeError("policy_fn_or_list must be either a function or a list of ops.")
    storage: dict = defaultdict(dict)
    return (_Installed(lambda: _Caching(policy_fn, storage)),
            _Installed(lambda: _Cached(storage, allow_cache_entry_mutation)))


# ops that never reach a policy (PyTorch's list: metadata queries and detach)
SAC_IGNORED_OPS = {getattr(getattr(ops.aten, name), overload) for name, overload in (
    ("detach", "default"), ("size", "default"), ("sym_size", "default"), ("stride", "default"),
    ("sym_stride", "default"), ("storage_offset", "default"), ("sym_storage_offset", "default"),
    ("numel", "default"), ("sym_numel", "default"), ("dim", "default"), ("is_contiguous", "default"),
    ("is_strides_like_format", "default"), ("is_non_overlapping_and_dense", "default"))}
