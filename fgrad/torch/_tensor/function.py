"""fgrad.torch.autograd.Function: user-defined forward/backward on Tensors.

One mechanism with `fgrad.custom_vjp`: `apply` is a torch op (the boundary's `call`, one
graph node named `<MyFunctionBackward>` over the Tensor arguments) whose computation on the
Tensors' values binds the custom_vjp_call primitive: its forward rule runs `forward(ctx, ...)`
on Tensors around the values (the ctx is the residual) and its VJP rule runs
`backward(ctx, ...)` on Tensors around the cotangents. So create_graph (the boundary re-records
the op, forward and backward on traced values), version checks, and fgrad.torch.func's
transforms (grad, vjp, jvp, vmap: the values are their tracers) all work. forward's outputs
are a pytree (`_Outputs`) that custom.py packs into the primitive's one output -- float,
integer and bool Tensors alike, integers exactly -- with the non-Tensor outputs and the
non-differentiable marks in its static part; several Tensor outputs are sliced apart again
by a second op. Each application's caller (and backward, through the residuals) gets the
structure its own forward run produced; nothing is kept between calls.
"""
from __future__ import annotations

import functools

import numpy as np

from ...api import stop_gradient as _stop_gradient
from ...core.errors import FgradNotImplementedError, FgradRuntimeError, FgradTypeError
from ..._packing import unpack_leaves
from ...core.trace import Tracer, _state, aval_of
from ...custom import _bind, _Call, _pack_jvp, custom_vjp_call_p
from ...tree_util import register_pytree_node, tree_flatten, tree_unflatten
from . import graph
from ._boundary import call as _boundary_call
from ._device import device_of_value
from ._device import to_device as move
from .tensor import Tensor, _make, check_inplace, commit_inplace, op_node, torch_convention, version_message

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
                raise FgradTypeError(f"save_for_backward can only save variables, but argument is of type "
                                f"{type(t).__name__}; store other values as ctx attributes")
        hooks = graph.active_hooks()
        if hooks is not None:  # saved-tensor hooks: packed now, unpacked when backward reads them
            pack_hook, unpack_hook = hooks
            self._saved = tuple(_Packed(pack_hook(t), unpack_hook) if t is not None else None for t in tensors)
            return
        self._saved = tuple((t, t._vbox, t._vbox[0]) if t is not None else None for t in tensors)

    @property
    def saved_tensors(self) -> tuple:
        out = []
        for entry in self._saved:
            if entry is None:
                out.append(None)
                continue
            if type(entry) is _Packed:
                out.append(entry.unpack())
                continue
            t, box, ver = entry
            if box[0] != ver:
                raise FgradRuntimeError(version_message(None, t._value, -1, box[0], ver))
            out.append(t)
        return tuple(out)

    saved_variables = saved_tensors

    def mark_non_differentiable(self, *tensors) -> None:
        self._non_differentiable.update(id(t) for t in tensors)

    def save_for_forward(self, *tensors) -> None:
        """Save Tensors for the Function's `jvp` (forward mode), where `ctx.saved_tensors` gives
        them, as PyTorch's ctx.save_for_forward."""
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise FgradTypeError(f"save_for_forward can only save Tensors or None, not {type(t).__name__}; "
                                     "store other values as ctx attributes")
        self._saved_forward = tuple((t, t._vbox, t._vbox[0]) if t is not None else None for t in tensors)

    def mark_dirty(self, *tensors) -> None:
        """Declare the input Tensors that forward modified in place (each must also be returned
        as an output): apply then returns the caller's input Tensor itself, with the new
        contents and the Function as its grad_fn, as PyTorch does."""
        for t in tensors:
            if not isinstance(t, Tensor):
                raise FgradTypeError(f"mark_dirty takes the input Tensors forward modified in place, not "
                                     f"{type(t).__name__}")
        self._dirty = getattr(self, "_dirty", set()) | {id(t) for t in tensors}

    def set_materialize_grads(self, value: bool) -> None:
        self.materialize_grads = bool(value)


class _Packed:
    """A Tensor saved by save_for_backward while saved-tensor hooks were in force."""

    __slots__ = ("packed", "unpack_hook")

    def __init__(self, packed, unpack_hook) -> None:
        self.packed, self.unpack_hook = packed, unpack_hook

    def unpack(self) -> Tensor:
        t = self.unpack_hook(self.packed)
        if not isinstance(t, Tensor):
            raise FgradTypeError(f"Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
                                 f"{type(t).__name__}")
        return t


class Function:
    """Subclass with static `forward(ctx, *args)` and `backward(ctx, *grad_outputs)`;
    call `MyFunction.apply(*args)`. Tensor arguments are differentiable inputs; other
    arguments are passed through as constants (their gradient slot returns None).

    PyTorch's other style works too: `forward(*args)` without ctx plus a static
    `setup_context(ctx, inputs, output)` that fills ctx. A static `jvp(ctx, *grad_inputs)` gives
    forward mode (torch.func.jvp, forward_ad's dual tensors). fgrad batches forward and
    backward itself under vmap, so `vmap` and `generate_vmap_rule` are not needed (and a
    subclass's `vmap` is not called).

    Example:
        >>> import fgrad.torch as torch
        >>> class Exp(torch.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         y = x.exp()
        ...         ctx.save_for_backward(y)
        ...         return y
        ...     @staticmethod
        ...     def backward(ctx, grad_y):
        ...         y, = ctx.saved_tensors
        ...         return grad_y * y
        >>> x = torch.tensor([0.0, 1.0], requires_grad=True)
        >>> y = Exp.apply(x)
        >>> y.sum().backward()
        >>> x.grad
        tensor([1.0000, 2.7183])
        >>> y.grad_fn.name()
        'ExpBackward'
    """

    generate_vmap_rule = False

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise FgradNotImplementedError("subclasses of fgrad.torch.autograd.Function define forward(ctx, *args)")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise FgradNotImplementedError("subclasses of fgrad.torch.autograd.Function define backward(ctx, *grads)")

    @staticmethod
    def setup_context(ctx, inputs: tuple, output) -> None:
        """Fill `ctx` from forward's inputs and output (for a forward defined without ctx)."""
        raise FgradNotImplementedError("setup_context is not implemented: define forward(ctx, *args), or "
                                       "forward(*args) together with setup_context(ctx, inputs, output)")

    @staticmethod
    def vmap(info, in_dims, *args):
        """PyTorch's batching rule hook. fgrad batches the Function's forward and backward
        itself, so it does not call this; calling it raises, as PyTorch's default does."""
        raise FgradNotImplementedError("To use autograd.Function with vmap, you must either override the vmap "
                                       "staticmethod or set generate_vmap_rule=True (fgrad.torch.func.vmap "
                                       "batches a Function without either).")

    @classmethod
    def apply(cls, *args, **kwargs):
        return _apply(cls, args, kwargs)


def _uses_setup_context(cls) -> bool:
    return cls.setup_context is not Function.setup_context


def _apply(cls, args, kwargs):
    positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    if not positions:
        return cls.forward(FunctionCtx(), *args, **kwargs)
    needs = tuple(isinstance(a, Tensor) and a._requires_grad for a in args)
    boxes = {i: args[i]._vbox for i in positions}
    # What one forward run learns travels with its own values: the output structure in the
    # `_Outputs` pytree (reported to this bind by custom.py), the rest in its ctx (the residuals
    # custom_vjp's forward rule keeps in that application's node). `seen` is this apply's own:
    # the ctx of the forward run on concrete values, whose output Tensor the caller receives.
    seen: list = []
    dirty: dict = {}  # output index -> argument position, for inputs forward marked dirty

    def run_forward(*xs):
        full = list(args)
        for i, x in zip(positions, xs):
            # a wrapper of the caller's value shares its version counter, so an in-place change
            # of the input after the call is caught when backward reads ctx.saved_tensors
            full[i] = _make(x, None, False, boxes[i] if x is args[i]._value else None)
        ctx = FunctionCtx()
        ctx.needs_input_grad = needs
        prev = _state.grad_enabled
        _state.grad_enabled = False  # forward runs without recording, as in PyTorch
        try:
            if _uses_setup_context(cls):
                outputs = cls.forward(*full, **kwargs)
                cls.setup_context(ctx, tuple(full), outputs)
            else:
                outputs = cls.forward(ctx, *full, **kwargs)
        finally:
            _state.grad_enabled = prev
        if isinstance(outputs, Tensor):
            # the returned Tensor and the one forward made (maybe saved in ctx) share a version
            ctx._out_box = outputs._vbox
        if getattr(ctx, "_dirty", None):
            _dirty_outputs(cls, ctx, outputs, full, positions, dirty)
        if not any(isinstance(x, Tracer) for x in xs):
            seen.append(ctx)
        return _Outputs.of(cls, outputs, ctx), ctx

    def fun(*xs):
        return run_forward(*xs)[0]

    def bwd(ctx, ct):
        cts = _grad_outputs(ct, ctx.materialize_grads)
        # backward sees and returns gradients in PyTorch's complex convention (conjugates of the
        # engine's cotangents: see tensor.torch_convention)
        cts = tuple(None if c is None else torch_convention(c) for c in cts)
        grads = cls.backward(ctx, *cts)
        grads = grads if isinstance(grads, tuple) else (grads,)
        if len(grads) != len(args):
            raise FgradRuntimeError(f"function {cls.__name__}Backward returned an incorrect number of gradients "
                               f"(expected {len(args)}, got {len(grads)})")
        res = []
        for i in positions:
            g = grads[i]
            if g is not None and not isinstance(g, Tensor):
                raise FgradTypeError(f"function {cls.__name__}Backward returned a {type(g).__name__} as gradient "
                                f"{i}; gradients must be Tensors or None")
            res.append(None if g is None else torch_convention(g)._value)
        return tuple(res)

    def jvp(call, primals, tangents, live):
        # PyTorch's forward-mode contract: jvp(ctx, *grad_inputs) after forward ran on the primals
        if getattr(cls, "jvp", None) is None:
            raise FgradNotImplementedError(
                "You must implement the jvp function for custom autograd.Function to use it with "
                f"forward mode AD: {cls.__name__} defines forward and backward only. Define a "
                "staticmethod jvp(ctx, *grad_inputs) returning the tangents of forward's outputs, or "
                "use reverse mode (grad, vjp, jacrev, backward).")
        outs, ctx = run_forward(*primals)
        grad_inputs = [None] * len(args)
        for i, p, t in zip(positions, primals, tangents):
            grad_inputs[i] = _make(np.zeros(aval_of(p).shape, aval_of(p).dtype) if t is None else t)
        if getattr(ctx, "_saved_forward", None) is not None:
            ctx._saved = ctx._saved_forward  # (what jvp reads as ctx.saved_tensors)
        touts = cls.jvp(ctx, *grad_inputs)
        touts = touts if isinstance(touts, tuple) else (touts,)
        tvals = [t._value if isinstance(t, Tensor) else t for t, e in zip(touts, outs.spec[1])
                 if not isinstance(e, _Static)]
        if len(tvals) != len(outs.values):
            raise FgradRuntimeError(f"{cls.__name__}.jvp returned {len(touts)} tangents for "
                                    f"{len(outs.spec[1])} outputs of forward; return one per output")
        return _pack_jvp(call, (outs, _Outputs(tuple(tvals), outs.spec)), f"{cls.__name__}.jvp")
    fun.__name__ = cls.__name__
    name = getattr(cls, "_backward_name", None) or f"{cls.__name__}Backward"
    spec: list = []  # (out_tree, out_avals) of this application, reported by its bind

    def on_values(*xs):
        """The Function on the Tensors' values: custom_vjp's primitive, whose forward rule runs
        `forward` and whose VJP rule runs `backward` (on Tensors around the values); its one
        output packs forward's Tensor outputs (custom.py's packing)."""
        call = _Call(fun, tree_flatten(tuple(xs))[1], fwd=run_forward, bwd=bwd, jvp=jvp)
        packed, out_tree, out_avals = _bind(custom_vjp_call_p, call, list(xs))
        spec[:] = [out_tree, out_avals]
        return packed

    def outputs_of(*xs):
        """forward's Tensor outputs: the packed output, or its slices when there are several."""
        packed = on_values(*xs)
        avals = spec[1]
        return packed if len(avals) == 1 else tuple(unpack_leaves(packed, avals))

    # one graph node, named after the Function, whose parents are the Tensor arguments and
    # whose outputs are forward's (output_nr 0, 1, ...), as PyTorch's (the node keeps what
    # save_for_backward got, which saved-tensor hooks pack there)
    with graph.unhooked_nodes():
        res = _boundary_call(name, outputs_of, tuple(args[i] for i in positions))
        out_tree, out_avals = spec
        values = [res] if len(out_avals) == 1 else list(res)
    result = _outputs(tree_unflatten(out_tree, values), seen[-1] if seen else None)
    if dirty:
        # an input forward modified in place (ctx.mark_dirty) is written with the output's
        # contents below: the node's backward reads what save_for_backward got (checked by
        # ctx.saved_tensors), so the node stops watching that input's version, as PyTorch's
        boxes = [args[i]._vbox for i in dirty.values()]
        for v in values:
            node = op_node(v._node) if isinstance(v, Tensor) else None
            if node is not None and node.saved:
                node.saved = [e for e in node.saved if not any(e[0] is b for b in boxes)]
        result = _commit_dirty(result, dirty, args)
    return result


def _dirty_outputs(cls, ctx, outputs, full, positions, dirty: dict) -> None:
    """Fill `dirty` (output index -> argument position) from ctx.mark_dirty's Tensors, each of
    which forward must return."""
    outs = (outputs,) if not isinstance(outputs, tuple) else outputs
    for i in positions:
        if id(full[i]) not in ctx._dirty:
            continue
        k = next((k for k, o in enumerate(outs) if o is full[i]), None)
        if k is None:
            raise FgradRuntimeError(f"{cls.__name__}.forward marked argument {i} dirty (mark_dirty) but did not "
                                    "return it: an input modified in place must also be an output")
        dirty[k] = i


def _commit_dirty(result, dirty: dict, args):
    """apply's outputs with each one of an input marked dirty replaced by that input Tensor,
    which takes the output's contents and history (an in-place op of the Function)."""
    single = not isinstance(result, tuple)
    outs = [result] if single else list(result)
    for k, i in dirty.items():
        t = args[i]
        check_inplace(t)
        commit_inplace(t, outs[k], "CopyBackwards")
        outs[k] = t
    return outs[0] if single else tuple(outs)


class _Static:
    """A forward output that is not a Tensor (a Python number, None, an object): returned as it
    is, never differentiated. Compared by identity (it sits in a treedef's static part)."""

    __slots__ = ("value",)

    def __init__(self, value) -> None:
        self.value = value

    def __repr__(self) -> str:
        return f"static({type(self.value).__name__})"


class _Outputs:
    """What forward returned, as a pytree for custom_vjp's packing: the leaves are the values of
    its Tensor outputs (float, integer and bool ones alike: custom.py carries integers exactly);
    the static part (`spec`) says whether forward returned one output or a tuple, and per output
    either a `_Static` or whether it was marked non-differentiable. So the output structure of
    one application reaches that application's caller (and, through the residuals, its
    backward) with the values, never through state kept between calls."""

    __slots__ = ("values", "spec")

    def __init__(self, values: tuple, spec: tuple) -> None:
        self.values = values
        self.spec = spec  # (single, (entry, ...)); entry: _Static, or bool (marked non-differentiable)

    @staticmethod
    def of(cls, outputs, ctx: FunctionCtx) -> "_Outputs":
        single = not isinstance(outputs, tuple)
        values, entries = [], []
        for o in ((outputs,) if single else outputs):
            if isinstance(o, Tensor):
                values.append(o._value)
                entries.append(id(o) in ctx._non_differentiable)
            else:
                entries.append(_Static(o))
        if not values:
            what = f"a {type(outputs).__name__}" if single else "a tuple with no Tensor"
            raise FgradTypeError(f"{cls.__name__}.forward returned {what}; autograd.Function.forward must "
                            "return a Tensor or a tuple holding at least one")
        return _Outputs(tuple(values), (single, tuple(entries)))


register_pytree_node(_Outputs, lambda o: (o.values, o.spec), lambda spec, vals: _Outputs(tuple(vals), spec))


def _outputs(outs: _Outputs, ctx: FunctionCtx | None):
    """apply's return value: the Tensor outputs (marked ones detached), the other outputs as
    forward returned them. `ctx`: that of the forward run on concrete values, if one ran."""
    single, entries = outs.spec
    it = iter(outs.values)
    result = []
    for e in entries:
        if isinstance(e, _Static):
            result.append(e.value)
            continue
        t = next(it)
        if e:  # ctx.mark_non_differentiable
            t.detach_()
        result.append(t)
    if single:
        t = result[0]
        box = getattr(ctx, "_out_box", None) if not entries[0] else None
        if box is not None and isinstance(t, Tensor):
            # the returned tensor and the one forward made (maybe saved in ctx) share a version
            t._vbox = box
        return t
    return tuple(result)


def _grad_outputs(ct: _Outputs, materialize: bool) -> tuple:
    """backward's grad_outputs (Tensors around the cotangent values) from the cotangent pytree:
    one per output of forward; a zero (None unless `materialize`) for integer outputs and
    outputs marked non-differentiable, None for non-Tensor outputs."""
    single, entries = ct.spec
    it = iter(ct.values)
    cts = []
    for e in entries:
        if isinstance(e, _Static):
            cts.append(None)
            continue
        c = next(it)
        a = aval_of(c)
        if e or a.dtype.kind not in "fc":
            cts.append(_make(np.zeros(a.shape, a.dtype)) if materialize else None)
        else:
            cts.append(_make(c))
    return tuple(cts)


def once_differentiable(fn):
    """Decorator for Function.backward: the backward itself runs without recording. When the
    backward pass is recorded (create_graph=True), the gradients it returns are constants of
    that graph, as in PyTorch (for grad_outputs that do not require grad): a second derivative
    through them is not taken."""
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        prev = _state.grad_enabled
        _state.grad_enabled = False
        try:
            grads = fn(ctx, *[a.detach() if isinstance(a, Tensor) else a for a in args])
        finally:
            _state.grad_enabled = prev
        if not prev:
            return grads
        # (recorded, the backward runs on the recorder's traced values: cut them there)
        single = not isinstance(grads, tuple)
        cut = tuple(_make(_stop_gradient(g._value)) if isinstance(g, Tensor) else g
                    for g in ((grads,) if single else grads))
        return cut[0] if single else cut
    return wrapper


# --- moving between devices (a Function: the gradient moves back) --------------------------------

class _ToCopy(Function):
    _backward_name = "ToCopyBackward0"

    @staticmethod
    def forward(ctx, x, dev):
        ctx.src, ctx.dev = device_of_value(x._value), dev
        return _make(move(x._value, dev))

    @staticmethod
    def backward(ctx, g):
        # _ops imports this module (Function), so its `to` is looked up when backward runs
        from ._ops import to
        return to(g, ctx.src), None

    @staticmethod
    def jvp(ctx, t, _):
        from ._ops import to  # (see backward)
        return to(t, ctx.dev)


def to_device(t: Tensor, dev) -> Tensor:
    """`t` on device `dev`, differentiable when it requires grad."""
    if t._requires_grad and _state.grad_enabled:
        return _ToCopy.apply(t, dev)
    return _make(move(t._value, dev))
