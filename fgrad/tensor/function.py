"""fgrad.autograd.Function: user-defined forward/backward on Tensors.

One mechanism with `fgrad.custom_vjp`: `apply` binds the custom_vjp_call primitive, whose
forward rule runs `forward(ctx, ...)` (the ctx is the residual) and whose VJP rule runs
`backward(ctx, ...)`. So the Tensor facade records it like any primitive (grad_fn
`<MyFunctionBackward>`, create_graph, version checks), and it works under fgrad.grad, vjp,
jvp and jit too. Several outputs are returned through one packed primitive output that is
sliced apart (their gradients come back as one packed cotangent).
"""
from __future__ import annotations

import functools

import numpy as np

from ..core.trace import _state
from ..custom import _Call, custom_vjp_call_p
from ..ops import shape as sh
from ..tree_util import tree_flatten
from .tensor import Tensor, _make, version_message

__all__ = ["Function", "FunctionCtx", "once_differentiable"]


class FunctionCtx:
    """The `ctx` of forward/backward: save_for_backward, saved_tensors, needs_input_grad."""

    def __init__(self) -> None:
        self.needs_input_grad: tuple = ()
        self.materialize_grads = True
        self._saved = ()
        self._non_differentiable: set = set()

    def save_for_backward(self, *tensors) -> None:
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument is of type "
                                f"{type(t).__name__}; store other values as ctx attributes")
        self._saved = tuple((t, t._vbox, t._vbox[0]) if t is not None else None for t in tensors)

    @property
    def saved_tensors(self) -> tuple:
        out = []
        for entry in self._saved:
            if entry is None:
                out.append(None)
                continue
            t, box, ver = entry
            if box[0] != ver:
                raise RuntimeError(version_message(None, t._value, -1, box[0], ver))
            out.append(t)
        return tuple(out)

    saved_variables = saved_tensors

    def mark_non_differentiable(self, *tensors) -> None:
        self._non_differentiable.update(id(t) for t in tensors)

    def set_materialize_grads(self, value: bool) -> None:
        self.materialize_grads = bool(value)


class Function:
    """Subclass with static `forward(ctx, *args)` and `backward(ctx, *grad_outputs)`;
    call `MyFunction.apply(*args)`. Tensor arguments are differentiable inputs; other
    arguments are passed through as constants (their gradient slot returns None)."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("subclasses of fgrad.autograd.Function define forward(ctx, *args)")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("subclasses of fgrad.autograd.Function define backward(ctx, *grads)")

    @classmethod
    def apply(cls, *args, **kwargs):
        return _apply(cls, args, kwargs)


def _apply(cls, args, kwargs):
    positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    needs = tuple(isinstance(a, Tensor) and a._requires_grad for a in args)
    layout = {}  # filled by the first forward: how outputs are packed

    def run_forward(*xs):
        full = list(args)
        for i, x in zip(positions, xs):
            # a wrapper of the caller's value shares its version counter, so an in-place change
            # of the input after the call is caught when backward reads ctx.saved_tensors
            full[i] = x if isinstance(x, Tensor) else _make(x, None, False, args[i]._vbox if x is args[i]._value
                                                            else None)
        ctx = FunctionCtx()
        ctx.needs_input_grad = needs
        concrete = not any(isinstance(x, Tensor) for x in xs)
        prev = _state.grad_enabled
        if concrete:
            _state.grad_enabled = False  # forward runs without recording, as in PyTorch
        try:
            outputs = cls.forward(ctx, *full, **kwargs)
        finally:
            _state.grad_enabled = prev
        if not isinstance(outputs, tuple):
            if id(outputs) in ctx._non_differentiable:
                layout["nondiff"] = True
            if isinstance(outputs, Tensor):
                layout["box"] = outputs._vbox
        return _pack(outputs, layout), ctx

    def fun(*xs):
        return _unwrap(run_forward(*xs)[0])

    def fwd(*xs):
        packed, ctx = run_forward(*xs)
        return _unwrap(packed), ctx

    def bwd(ctx, ct):
        graph = isinstance(ct, Tensor)
        cts = _unpack_cts(ct if graph else _make(ct), layout, ctx.materialize_grads)
        grads = cls.backward(ctx, *cts)
        grads = grads if isinstance(grads, tuple) else (grads,)
        if len(grads) != len(args):
            raise RuntimeError(f"function {cls.__name__}Backward returned an incorrect number of gradients "
                               f"(expected {len(args)}, got {len(grads)})")
        res = []
        for i in positions:
            g = grads[i]
            if g is not None and not isinstance(g, Tensor):
                raise TypeError(f"function {cls.__name__}Backward returned a {type(g).__name__} as gradient "
                                f"{i}; gradients must be Tensors or None")
            res.append(None if g is None else (g if graph else g._value))
        return tuple(res)

    fun.__name__ = cls.__name__
    fun._backward_name = getattr(cls, "_backward_name", None) or f"{cls.__name__}Backward"
    flat = [args[i] for i in positions]
    if not flat:
        return cls.forward(FunctionCtx(), *args, **kwargs)
    call = _Call(fun, tree_flatten(tuple(flat))[1], fwd=fwd, bwd=bwd)
    packed = custom_vjp_call_p.bind(*flat, call=call)
    return _unpack_outputs(packed, layout)


def _unwrap(x):
    return x._value if isinstance(x, Tensor) else x


def _pack(outputs, layout):
    """A single output as-is; several as one flat vector of their float outputs (others are
    kept aside as constants)."""
    if not isinstance(outputs, tuple):
        layout.setdefault("single", True)
        return outputs
    layout["single"] = False
    diff, pieces, dtype = [], [], None
    for j, o in enumerate(outputs):
        if isinstance(o, Tensor) and o._value.dtype.kind in "fc":
            dtype = o._value.dtype if dtype is None else np.promote_types(dtype, o._value.dtype)
            diff.append(j)
    if not diff:
        raise TypeError("autograd.Function.forward returned no floating-point Tensor to differentiate")
    layout["n"] = len(outputs)
    layout["diff"] = [(j, tuple(outputs[j]._value.shape), outputs[j]._value.dtype) for j in diff]
    layout["const"] = {j: o for j, o in enumerate(outputs) if j not in diff}
    for j in diff:
        o = outputs[j]
        if o._value.dtype != dtype:
            from ..ops.elementwise import convert_element_type
            o = convert_element_type(o, dtype)
        pieces.append(sh.reshape(o, (int(np.prod(o._value.shape)),)))
    return sh.concatenate(pieces, 0) if len(pieces) > 1 else pieces[0]


def _pieces(packed, layout):
    out, start = [], 0
    for j, shape, dtype in layout["diff"]:
        n = int(np.prod(shape))
        piece = sh.reshape(sh.slice(packed, (start,), (start + n,)), shape)
        if piece._value.dtype != dtype:
            from ..ops.elementwise import convert_element_type
            piece = convert_element_type(piece, dtype)
        out.append(piece)
        start += n
    return out


def _unpack_outputs(packed, layout):
    if layout.get("single", True):
        if layout.get("nondiff"):
            return packed.detach_()
        box = layout.pop("box", None)
        if box is not None and packed._node is not None:
            # the returned tensor and the one forward made (maybe saved in ctx) share a version
            packed._vbox = box
            packed._node.saved = [(box, box[0], i) if i < 0 else (b, v, i) for b, v, i in packed._node.saved]
        return packed
    outs = [None] * layout["n"]
    for (j, _, _), piece in zip(layout["diff"], _pieces(packed, layout)):
        outs[j] = piece
    for j, o in layout["const"].items():
        outs[j] = o
    return tuple(outs)


def _unpack_cts(ct, layout, materialize: bool):
    if layout.get("single", True):
        return (ct,)
    cts = [None] * layout["n"]
    for (j, _, _), piece in zip(layout["diff"], _pieces(ct, layout)):
        cts[j] = piece
    for j, o in layout["const"].items():
        cts[j] = _make(np.zeros(o._value.shape, o._value.dtype)) if materialize and isinstance(o, Tensor) else None
    return tuple(cts)


def once_differentiable(fn):
    """Decorator for Function.backward: the backward itself is run without recording."""
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        prev = _state.grad_enabled
        _state.grad_enabled = False
        try:
            return fn(ctx, *[a.detach() if isinstance(a, Tensor) else a for a in args])
        finally:
            _state.grad_enabled = prev
    return wrapper


# --- moving between devices (a Function: the gradient moves back) --------------------------------

class _ToCopy(Function):
    _backward_name = "ToCopyBackward0"

    @staticmethod
    def forward(ctx, x, dev):
        from ._device import device_of_value, to_device as move
        ctx.src = device_of_value(x._value)
        return _make(move(x._value, dev))

    @staticmethod
    def backward(ctx, g):
        from ._ops import to
        return to(g, ctx.src), None


def to_device(t: Tensor, dev) -> Tensor:
    """`t` on device `dev`, differentiable when it requires grad."""
    from ._device import to_device as move
    if t._requires_grad and _state.grad_enabled:
        return _ToCopy.apply(t, dev)
    return _make(move(t._value, dev))
