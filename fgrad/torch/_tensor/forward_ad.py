"""fgrad.torch.autograd.forward_ad: forward-mode AD on Tensors with dual tensors, as PyTorch's.

    with forward_ad.dual_level():
        x = forward_ad.make_dual(primal, tangent)
        y = model(x)                                  # any torch ops
        value, jvp = forward_ad.unpack_dual(y)        # jvp = J(primal) @ tangent

Built on the functional door's forward mode (fgrad.jvp's trace). While a level is open, `_Level` is an op
interceptor (`install`, below): the boundary (`_boundary.call`), the single-primitive fast path
(`tensor._tensor_bind`) and in-place writes (`tensor.commit_inplace`) hand it every op. An op none of whose Tensor operands carries a tangent
runs as usual. Otherwise the op runs as usual for its value (and its reverse-mode graph), and
its tangents come from a second torch op, the jvp of the op's computation on values at
the operands' values and tangents: a boundary op itself, so a tangent that depends on Tensors
requiring grad has a graph of its own (reverse over forward).

The tangents live in a table keyed by the Tensor (the Tensor has no slot for one), emptied
when the level exits: after it, every Tensor is plain again, as in PyTorch. One level at a
time (PyTorch refuses nested levels too; higher orders: torch.func.jvp).
"""
from __future__ import annotations

import functools
import weakref
from typing import Any, NamedTuple

import numpy as np

from ... import numpy as fnp
from ...core.errors import FgradRuntimeError, FgradValueError
from ...core.trace import Tracer, _state, new_trace
from ...extend.lax import convert_element_type
from ...interpreters.jvp import JVPTrace, JVPTracer
from ...tree_util import tree_flatten, tree_unflatten
from . import tensor as _tensor_module
from ._boundary import call as _call
from .tensor import FORWARD_AD, Tensor, _EMPTY, _make, view_positions

__all__ = ["UnpackedDualTensor", "dual_level", "enter_dual_level", "exit_dual_level", "make_dual",
           "unpack_dual"]

_SEQ = (list, tuple)

# --- op interceptors: the open dual level and torch.autograd.graph's saved-tensor hooks ----------
# Each has `call`, `bind` and `inplace` (see _Level). The innermost sits in FORWARD_AD; while one
# runs an op it installs the one below it (`below`), so they compose in any order of entering.
_STACK: list = []


def install(obj) -> None:
    """Make `obj` the innermost op interceptor.

    Args:
        obj: an object with `call(name, fn, args, kwargs)`, `bind(prim, args, params, cls)` and
            `inplace(t, new)` (see _Level).
    """
    _STACK.append(obj)
    FORWARD_AD[0] = obj


def uninstall(obj) -> None:
    """Remove `obj` from the interceptors (wherever it sits).

    Args:
        obj: an interceptor given to `install` (others are ignored).
    """
    if obj in _STACK:
        _STACK.remove(obj)
    FORWARD_AD[0] = _STACK[-1] if _STACK else None


def below(obj):
    """The interceptor under `obj`, which `obj` installs while it runs an op.

    Args:
        obj: an installed interceptor.

    Returns:
        The next interceptor down, or None (the ops themselves).
    """
    i = _STACK.index(obj) if obj in _STACK else 0
    return _STACK[i - 1] if i else None


class UnpackedDualTensor(NamedTuple):
    """What `unpack_dual` returns: the primal (a Tensor without tangent) and the tangent (None
    for a Tensor that carries none)."""

    primal: Tensor
    tangent: Tensor | None


class _Level:
    """The open dual level: the tangents (id(Tensor) -> (weakref to it, tangent Tensor)) and the
    hooks the boundary and `_tensor_bind` call while it is installed in FORWARD_AD."""

    def __init__(self, index: int) -> None:
        self.index = index
        self.tangents: dict = {}

    # --- the table ---
    def get(self, t: Tensor):
        entry = self.tangents.get(id(t))
        return entry[1] if entry is not None and entry[0]() is t else None

    def set(self, t: Tensor, tangent: Tensor | None) -> None:
        key = id(t)
        if tangent is None:
            self.tangents.pop(key, None)
            return
        table = self.tangents
        # the entry goes with its Tensor (before the id can name another object)
        ref = weakref.ref(t, lambda _, key=key, table=table: table.pop(key, None))
        table[key] = (ref, tangent)

    # --- the hooks ---
    def call(self, name, fn, args: tuple, kwargs: dict = _EMPTY):
        """The boundary's op `name` (see _boundary.call) with tangents for its outputs when an
        operand carries one."""
        operands = _operands(args, kwargs)
        tangents = [self.get(t) for t in operands]
        FORWARD_AD[0] = below(self)  # (the op's own Tensors, inside fn or its jvp, carry no tangents)
        try:
            out = _call(name, fn, args, kwargs)
            if any(g is not None for g in tangents):
                self._attach(out, _tangent_op(fn, args, kwargs, operands, tangents))
        finally:
            FORWARD_AD[0] = self
        return out

    def bind(self, prim, args: tuple, params: dict, cls=None):
        """`_tensor_bind`'s single-primitive op, with tangents when an operand carries one (it
        then runs as a boundary op named as the primitive's node would be)."""
        if not any(isinstance(a, Tensor) and self.get(a) is not None for a in args):
            FORWARD_AD[0] = below(self)
            try:
                return _tensor_module._tensor_bind(prim, args, params, cls)
            finally:
                FORWARD_AD[0] = self
        name = cls.__name__ if cls is not None else _tensor_module._prim_node_class(prim).__name__
        return self.call(name, lambda *xs: prim.bind(*xs, **params), args)

    def inplace(self, t: Tensor, new: Tensor) -> None:
        """`t` is overwritten by `new` (an in-place op): it takes `new`'s tangent, written into
        its own tangent Tensor when it has one (PyTorch updates the tangent in place), zeros
        when `new` carries none."""
        inner = below(self)
        if inner is not None:
            inner.inplace(t, new)
        old, g = self.get(t), self.get(new)
        FORWARD_AD[0] = inner
        try:
            if t._view is not None and not (_state.grad_enabled and (new._node is not None or t._requires_grad)):
                # a write through a view that no graph records (commit_inplace writes the base's
                # storage directly): the base's tangent takes the new tangent at the view's places
                self._through_view(t, g)
            if old is None:
                if g is not None:
                    self.set(t, g)
                return
            old.copy_(g) if g is not None else old.zero_()
        finally:
            FORWARD_AD[0] = self

    def _through_view(self, view: Tensor, g) -> None:
        base = view._view[0]
        pos = view_positions(view._value, base._value)
        bt = self.get(base)
        if pos is None or (g is None and bt is None):
            return
        full = np.zeros(base._value.shape, base._value.dtype) if bt is None else np.array(bt._value)
        full.reshape(-1)[pos.reshape(-1)] = 0 if g is None else np.asarray(g._value).reshape(-1)
        if bt is None:
            self.set(base, _make(full))
        else:
            bt.copy_(_make(full))

    def _attach(self, out, touts) -> None:
        outs, _ = tree_flatten(out, is_leaf=lambda x: isinstance(x, Tensor))
        tans, _ = tree_flatten(touts, is_leaf=lambda x: isinstance(x, Tensor))
        for o, g in zip(outs, tans):
            if isinstance(o, Tensor) and isinstance(g, Tensor) and o._value.dtype.kind in "fc":
                self.set(o, g)


_LEVEL: list = [None]  # the open level, or None


def _operands(args: tuple, kwargs: dict) -> list:
    """The Tensors among an op's arguments, in the boundary's order (positional ones, those
    inside list or tuple arguments, then keyword ones)."""
    found = []
    for a in (*args, *kwargs.values()):
        if isinstance(a, Tensor):
            found.append(a)
        elif type(a) in _SEQ:
            found.extend(e for e in a if isinstance(e, Tensor))
    return found


def _rebuild(args: tuple, kwargs: dict, values: list) -> tuple:
    """(args, kwargs) with their Tensors (in `_operands` order) replaced by `values`."""
    it = iter(values)

    def swap(a):
        if isinstance(a, Tensor):
            return next(it)
        if type(a) in _SEQ and any(isinstance(e, Tensor) for e in a):
            items = [next(it) if isinstance(e, Tensor) else e for e in a]
            return tuple(items) if type(a) is tuple else items
        return a
    new_args = tuple(swap(a) for a in args)
    return new_args, {k: swap(v) for k, v in kwargs.items()}


def _tangent_op(fn, args: tuple, kwargs: dict, operands: list, tangents: list):
    """The tangents of the op `fn` (on values) at its operands: a torch op over the operands and
    the given tangents, computing `fgrad.jvp` of `fn` in the operands that carry a tangent."""
    dual = [i for i, g in enumerate(tangents) if g is not None]
    n = len(operands)

    def tangent_of(*xs):
        vals, tvals = list(xs[:n]), xs[n:]

        def of_duals(*ds):
            full = list(vals)
            for i, d in zip(dual, ds):
                full[i] = d
            a, k = _rebuild(args, kwargs, full)
            return fn(*a, **k)
        # (a tangent of another float dtype than its primal's is cast for the product)
        tvals = [tv if tv.dtype == vals[i].dtype else convert_element_type(tv, vals[i].dtype)
                 for i, tv in zip(dual, tvals)]
        return _pushforward(of_duals, [vals[i] for i in dual], tvals)
    return _call(None, tangent_of, (*operands, *[tangents[i] for i in dual]))


def _pushforward(f, primals: list, tangents: list):
    """The tangents of f's outputs (a pytree like f's; zeros where an output does not depend on
    the primals, None for a non-array output): fgrad.jvp's trace, without its argument checks
    (the operands and make_dual's tangents are checked already; they cost more than the op)."""
    with new_trace(JVPTrace) as trace:
        out = f(*[JVPTracer(trace, p, t) for p, t in zip(primals, tangents)])
    flat, tree = tree_flatten(out)
    tans = [o.tangent if isinstance(o, Tracer) and o._trace is trace
            else (fnp.zeros_like(o) if hasattr(o, "shape") and hasattr(o, "dtype") else None) for o in flat]
    return tree_unflatten(tree, tans)


def enter_dual_level() -> int:
    """Open a forward-AD level (the `dual_level` context manager calls this).

    Returns:
        The level's index (0: one level at a time).

    Raises:
        RuntimeError: when a level is open already (nested forward AD is not supported; use
            torch.func.jvp for higher orders).
    """
    if _LEVEL[0] is not None:
        raise FgradRuntimeError("Nested forward mode AD is not supported at the moment (a dual level is open "
                                "already); for higher-order forward derivatives use torch.func.jvp.")
    level = _LEVEL[0] = _Level(0)
    install(level)
    return level.index


def exit_dual_level(*, level: int | None = None) -> None:
    """Close the open level: every tangent it holds is dropped.

    Args:
        level: the index `enter_dual_level` returned (default: the open level).

    Raises:
        RuntimeError: when no level is open, or `level` is not the open one.
    """
    current = _LEVEL[0]
    if current is None:
        raise FgradRuntimeError("Dual level must be a positive number (no forward AD level is open: "
                                "exit_dual_level without enter_dual_level).")
    if level is not None and level != current.index:
        raise FgradRuntimeError(f"Trying to exit a forward AD level ({level}) that was not the last one that was "
                                f"created ({current.index}). This is not supported.")
    current.tangents.clear()
    _LEVEL[0] = None
    uninstall(current)


def _current(level: int | None):
    current = _LEVEL[0]
    if current is None:
        return None
    if level is not None and level != current.index:
        raise FgradRuntimeError(f"forward AD level {level} is not open (the open level is {current.index})")
    return current


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A Tensor aliasing `tensor` (same storage, differentiable in reverse mode like a view) that
    carries `tangent` as its forward gradient within the open dual level.

    Args:
        tensor: the primal, a floating-point or complex Tensor without a tangent at this level.
        tangent: a floating-point or complex Tensor of the primal's shape (kept as it is).
        level: the dual level (default: the open one).

    Returns:
        The dual Tensor.

    Raises:
        RuntimeError: outside a dual level, for a tangent of another shape, or a primal that
            carries a tangent already.
        ValueError: for an integer or bool primal or tangent.
    """
    current = _current(level)
    if current is None:
        raise FgradRuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                                "enter_dual_level() first (or use `with forward_ad.dual_level():`).")
    for what, t in (("primal", tensor), ("tangent", tangent)):
        if not isinstance(t, Tensor):
            raise FgradValueError(f"make_dual: the {what} must be a Tensor, not {type(t).__name__}")
        if t._value.dtype.kind not in "fc":
            raise FgradValueError(f"Expected {what} to be floating point or complex, but got: {t.dtype}")
    if tuple(tangent._value.shape) != tuple(tensor._value.shape):
        raise FgradRuntimeError(
            "Trying to set a forward gradient that has a different size than that of the original Tensor, this is "
            f"not supported. Tensor is of size {list(tensor._value.shape)} while the given forward gradient is of "
            f"size {list(tangent._value.shape)}.")
    if current.get(tensor) is not None:
        raise FgradRuntimeError(f"Making a dual Tensor based on a Tensor that already has a forward gradient at "
                                f"the same level {current.index} is not supported; unpack_dual(t).primal is the "
                                "Tensor without it.")
    out = _alias(tensor, "ViewBackward0")
    current.set(out, tangent)
    return out


def _alias(t: Tensor, name: str) -> Tensor:
    """A Tensor sharing `t`'s storage and version counter; in grad mode, when `t` requires grad,
    one node `name` links it to `t`'s history (as PyTorch's view)."""
    saved = FORWARD_AD[0]
    FORWARD_AD[0] = below(_LEVEL[0])
    try:
        if t._requires_grad and _state.grad_enabled:
            return _call(name, _identity, (t,))
        return _make(t._value, None, False, t._vbox)
    finally:
        FORWARD_AD[0] = saved


def _identity(x):
    return x


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """The primal and the tangent of a dual Tensor.

    Args:
        tensor: any Tensor.
        level: the dual level (default: the open one).

    Returns:
        UnpackedDualTensor(primal, tangent): `primal` a Tensor aliasing `tensor` without its
        tangent (differentiable in reverse mode), `tangent` the Tensor given to make_dual or
        computed by the ops (None when `tensor` carries none, or no level is open: then
        `primal` is `tensor` itself).
    """
    current = _current(level)
    if current is None:
        return UnpackedDualTensor(tensor, None)
    tangent = current.get(tensor)
    if tangent is None:
        return UnpackedDualTensor(_alias(tensor, "AliasBackward0"), None)
    return UnpackedDualTensor(_alias(tensor, "AliasBackward0"), tangent)


class dual_level:
    """Context manager (also a decorator) for forward AD: `with dual_level():` opens a level,
    whose tangents are dropped when the block exits. Returns the level's index."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc: Any) -> None:
        exit_dual_level()

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with dual_level():
                return fn(*args, **kwargs)
        return wrapper
