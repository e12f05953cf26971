"""fgrad.torch.autograd: backward() and grad() over Tensor graphs, run by the one reverse-mode
engine (`fgrad.interpreters.backward.backward_pass`) with the primitives' own VJP rules.

Without create_graph the engine runs with grad mode off on raw arrays (fast). With
create_graph=True, `_graph_wrap` hands the rules Tensors connected to the graph (each saved
input as a Tensor whose node is its producer, the saved output as a Tensor of the node
itself), and grad mode stays on, so the rules -- which call fgrad ops -- record a new graph:
higher order derivatives need no other machinery.
"""
from __future__ import annotations

import sys as _sys
import threading as _threading

import numpy as np

from ...core.errors import FgradRuntimeError, FgradTypeError
from ...core.trace import _state
from ... import numpy as _fnp
from ...interpreters.backward import FREED_MESSAGE as _FREED_MESSAGE
from ...interpreters.backward import Unsaved, backward_pass
from ...extend.lax import add as _lax_add
from ...extend.lax import convert_element_type
from . import forward_ad, function, graph  # noqa: F401  (torch.autograd.forward_ad, .function, .graph)
from . import _dtypes as D
from ._device import is_cupy
from .anomaly_mode import (  # noqa: F401
    detect_anomaly,
    engine_check,
    is_anomaly_enabled,
    set_detect_anomaly,
)
from ._boundary import TORCH_OP, LowRule, call, compute_dtype
from .creation import as_tensor
from .function import Function, FunctionCtx, once_differentiable  # noqa: F401  (public here)
from .grad_mode import (  # noqa: F401
    enable_grad,
    enforce_grad_layout_policy,
    inference_mode,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)
from .tensor import (
    ACC_NODES,
    COPY_SLICES as _COPY_SLICES,
    OUTPUT_OF as _OUTPUT_OF,
    Size,
    Tensor,
    _make,
    accumulate_grad,
    grad_node,
    live_node,
    saved_values,
    sole_owner,
    torch_convention,
)

# `import fgrad.torch.autograd.graph` works as in PyTorch (fgrad.torch.autograd is this module's alias)
_sys.modules.setdefault(__name__.rsplit(".", 2)[0] + ".autograd.graph", graph)
_sys.modules.setdefault(__name__.rsplit(".", 2)[0] + ".autograd.forward_ad", forward_ad)
# torch.autograd.function: the module of Function, FunctionCtx, once_differentiable
_sys.modules.setdefault(__name__.rsplit(".", 2)[0] + ".autograd.function", function)
SavedTensor = graph.SavedTensor


class _Threading(_threading.local):
    def __init__(self) -> None:
        self.multithreading = True


_THREADING = _Threading()


def is_multithreading_enabled() -> bool:
    """Whether multithreaded backward is enabled on this thread (the default).

    fgrad's engine runs every backward pass on the calling thread, as PyTorch's does on the
    CPU either way; the setting is kept and reported as PyTorch's.

    Returns:
        A bool.
    """
    return _THREADING.multithreading


class set_multithreading_enabled:
    """Enable or disable multithreaded backward on this thread: takes effect when called, and
    as a context manager restores the previous setting on exit.

    Args:
        mode: the setting.
    """

    def __init__(self, mode: bool) -> None:
        self.prev = _THREADING.multithreading
        self.mode = bool(mode)
        _THREADING.multithreading = self.mode

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        _THREADING.multithreading = self.prev

    def clone(self) -> "set_multithreading_enabled":
        """A copy of this context manager (PyTorch's decorator protocol)."""
        return type(self)(self.mode)


def is_view_replay_enabled() -> bool:
    """Whether a view's grad_fn is rebuilt by replaying the view op after its base is modified
    in place: never in fgrad, which rebuilds it as a gather of the base (AsStridedBackward0),
    PyTorch's default too.

    Returns:
        False.
    """
    return False


def kineto_available() -> bool:
    """Whether PyTorch's Kineto profiler backend is available: never in fgrad.

    Returns:
        False.
    """
    return False

__all__ = ["backward", "grad", "detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled", "Function", "FunctionCtx", "once_differentiable", "no_grad", "enable_grad",
           "set_grad_enabled", "is_grad_enabled", "inference_mode", "enforce_grad_layout_policy"]


def _add_ct(a, b):
    """Sum of two cotangents (tuples for multi-output autograd.Functions); Tensors (a graph
    of the backward pass, create_graph=True) add as a torch op."""
    if type(a) is tuple:
        return tuple(y if x is None else x if y is None else _add_ct(x, y) for x, y in zip(a, b))
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        return call("AddBackward0", _lax_add, (a, b))
    return _lax_add(a, b)


def _graph_rule(node, needs, ct, out, primals):
    """A node's VJP rule while the backward pass is recorded (create_graph=True): a torch op
    over the rule's operands (the saved output and inputs, connected to the graph, and the
    cotangent), so the gradients it returns are Tensors with a history. A torch op's own node
    pulls back through its subgraph as a torch op already."""
    prim = node.prim
    if prim is _OUTPUT_OF:  # (these rules handle Tensor cotangents themselves)
        return prim.vjp(needs, ct, out, *primals, **node.params)
    if prim is _COPY_SLICES:
        return prim.vjp(needs, ct, out, *primals, residuals=node.residuals, **node.params)
    if type(prim) is LowRule:  # (an op on bfloat16 & co.: its rule in float32, gradients rounded)
        return _low_graph_rule(node, prim, needs, ct, out, primals)
    if prim is TORCH_OP:
        return prim.vjp(needs, ct, out, *primals, residuals=node.residuals)
    params = node.params
    if prim.vjp_fwd is not None:
        params = dict(params, residuals=node.residuals)

    def vjp_rule(o, c, *xs):
        return tuple(prim.vjp(needs, c, o, *xs, **params))
    # (named after the rule's last primitive, as PyTorch names the last op of its formula)
    return call(None, vjp_rule, (out, ct, *primals))


def _values(node):
    """(out, primals) of `node` for its rule: the saved values, those packed by saved-tensor
    hooks unpacked (torch.autograd.graph.saved_tensors_hooks)."""
    out, primals = saved_values(node)
    if node in graph.PACKED:
        out, primals = graph.unpacked_values(node, out, primals)
    return out, primals


def _engine_rule(node, needs, ct, out, primals):
    """A node's VJP rule as the engine applies it (used when post hooks must see its results)."""
    prim = node.prim
    if prim.vjp_fwd is None:
        return prim.vjp(needs, ct, out, *primals, **node.params)
    return prim.vjp(needs, ct, out, *primals, residuals=getattr(node, "residuals", None), **node.params)


def _with_post_hooks(rule):
    """`rule` followed by the node's post hooks (Node.register_hook), which see and may replace
    its results."""
    def hooked(node, needs, ct, out, primals):
        in_cts = rule(node, needs, ct, out, primals)
        if node in graph.POST_HOOKS:
            in_cts = graph.run_post_hooks(node, ct, tuple(in_cts))
        return in_cts
    return hooked


def _copy_slices_vjp(needs, ct, op, pos, shape) -> list:
    """The rule of a CopySlices node over the in-place op node `op` on a view (None: a constant
    was written into it), as PyTorch's CopySlices runs the op's node inside its own: `ct` (the
    base's cotangent) at the view's positions `pos` goes through the op's rule; the base's old
    history gets `ct` with the op's gradient for the view at those positions, the op's other
    inputs their gradients. With a Tensor `ct` (create_graph) every step is a torch op.

    Args:
        needs: per parent of the CopySlices node, whether it needs a gradient.
        ct: the cotangent of the base after the write (an array, or a Tensor).
        op: the op's node, or None.
        pos: the flat positions into the base of the view's elements (the view's shape).
        shape: the base's shape.

    Returns:
        One gradient (or None) per parent: the base's, then the op's inputs after the first.
    """
    graph_mode = isinstance(ct, Tensor)

    def at_view(c):
        return _fnp.take(_fnp.reshape(c, (-1,)), pos)

    def put(c, g):
        return _fnp.reshape(_fnp.at_set(_fnp.reshape(c, (-1,)), pos, g), shape)

    if op is None:
        in_cts = [None]
    else:
        if op.primals is None:
            raise FgradRuntimeError(_FREED_MESSAGE, doc="backward-twice")
        view_ct = call(None, at_view, (ct,)) if graph_mode else at_view(ct)
        op_needs = tuple([p is not None for p in op.parents])
        if graph_mode:
            out, primals = _graph_wrap(op)
            in_cts = list(_graph_rule(op, op_needs, view_ct, out, primals))
        else:
            out, primals = _values(op)
            in_cts = list(_engine_rule(op, op_needs, view_ct, out, primals))
    if not needs[0]:
        return [None, *in_cts[1:]]
    g = in_cts[0]
    if g is None:  # (a constant written into the view: no gradient reaches the old contents there)
        base_ct = call(None, lambda c: put(c, _fnp.zeros(pos.shape, c.dtype)), (ct,)) if graph_mode \
            else put(ct, np.zeros(pos.shape, ct.dtype))
    elif graph_mode or isinstance(g, Tensor):
        base_ct = call(None, put, (ct, g))
    else:
        base_ct = put(ct, g)
    return [base_ct, *in_cts[1:]]


def _low_graph_rule(node, prim, needs, ct, out, primals):
    """_graph_rule of a node whose op had bfloat16 (complex32) operands (_boundary.LowRule): the
    cotangent widened, the op's own rule recorded, each gradient rounded to its operand's dtype,
    all as torch ops (so the gradients are bfloat16 and differentiable, as PyTorch's)."""
    if type(ct) is tuple:  # (a node of several outputs)
        ct = tuple([c if c is None else _widened(c) for c in ct])
    else:
        ct = _widened(ct)
    # (an operand's gradient through the recorded rule reaches it through a conversion from its
    # own dtype, so that gradient is rounded as well)
    primals = tuple([_make(v._value.astype(d), v._node, True).to(D.of_np(v._value.dtype))
                     if d is not None and isinstance(v, Tensor) and v._node is not None else v
                     for v, d in zip(primals, prim.dts)])
    node.prim = prim.inner
    try:
        res = _graph_rule(node, needs, ct, out, primals)
    finally:
        node.prim = prim
    return [r.to(D.of_np(d)) if d is not None and isinstance(r, Tensor) else r for r, d in zip(res, prim.dts)]


def _widened(ct: Tensor) -> Tensor:
    wide = compute_dtype(ct._value.dtype)
    return ct.to(D.of_np(wide)) if wide != ct._value.dtype else ct


def _graph_wrap(node):
    # values the rule does not read (Unsaved) stay stand-ins: there is nothing to connect
    out, primals = _values(node)
    if type(out) is not tuple and type(out) is not Unsaved:
        out = _make(out, node, True)
    primals = tuple(v if p is None or type(v) is Unsaved else _make(v, p, True)
                    for p, v in zip(node.parents, primals))
    return out, primals


def _run(roots, retain_graph, create_graph, capture=()) -> dict:
    retain = bool(create_graph) if retain_graph is None else bool(retain_graph)
    prev = _state.grad_enabled
    _state.grad_enabled = bool(create_graph)
    wrap = _graph_wrap if create_graph else (_values if graph.PACKED else saved_values)
    rule = _graph_rule if create_graph else None
    if graph.OP_HOOKED:
        rule = _with_post_hooks(rule or _engine_rule)
    try:
        return backward_pass(roots, retain=retain, wrap=wrap, add=_add_ct, capture=capture,
                             check=engine_check(), rule=rule)
    finally:
        _state.grad_enabled = prev


def _as_tuple(x) -> tuple:
    if x is None:
        return ()
    # (a GradientEdge is a NamedTuple, yet one input)
    return (x,) if isinstance(x, (Tensor, graph.GradientEdge)) else tuple(x)


def _roots(outputs, grad_outputs, create_graph: bool) -> list:
    roots = []
    for i, (t, g) in enumerate(zip(outputs, grad_outputs)):
        if not isinstance(t, Tensor):
            raise FgradTypeError(f"element {i} of tensors is a {type(t).__name__}, not a Tensor")
        if not t._requires_grad:
            raise FgradRuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        v = t._value
        if g is None:
            if v.size != 1:
                raise FgradRuntimeError(f"grad can be implicitly created only for scalar outputs (output {i} has "
                                   f"shape {tuple(v.shape)}: pass gradient= of that shape, or reduce it to "
                                   "a scalar first, e.g. with .sum())", doc="backward-nonscalar")
            seed = _cupy_ones(v) if is_cupy(v) else np.ones(v.shape, v.dtype)
            roots.append((grad_node(t), _make(seed) if create_graph else seed))
            continue
        if not isinstance(g, Tensor):
            g = as_tensor(g)
        if tuple(g._value.shape) != tuple(v.shape):
            raise FgradRuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {Size(g._value.shape)} "
                               f"and output[{i}] has a shape of {Size(v.shape)}.")
        if g._value.dtype != v.dtype:
            g = call("ToCopyBackward0", lambda a, dt=v.dtype: convert_element_type(a, dt), (g,))
        g = torch_convention(g)
        roots.append((grad_node(t), g if create_graph else g._value))
    return roots


def _cupy_ones(v):
    import cupy  # optional dependency (GPU arrays): only reached with a CuPy array
    return cupy.ones(v.shape, v.dtype)


def _user_grad(t, ct):
    """The gradient of `t` as user code sees it: in PyTorch's convention, after the tensor
    hooks of a leaf (registered with register_hook; a non-leaf's ran on its node)."""
    ct = torch_convention(ct)
    if t._node is None and t._hooks:
        for hook in list(t._hooks):
            new = hook(ct)
            if new is not None:
                ct = new
    return ct


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph: bool = False,
             grad_variables=None, inputs=None) -> None:
    """Accumulate the gradients of `tensors` into the .grad of the graph's leaves, as
    ``torch.autograd.backward``.

    Args:
        tensors: a Tensor or a sequence of Tensors to differentiate.
        grad_tensors: the vector each Tensor's Jacobian is contracted with, one per Tensor
            (a Tensor of its shape, or None for a scalar, which means 1).
        retain_graph: keep the values the graph saved, so a second backward can run through
            it (default: `create_graph`); otherwise they are freed.
        create_graph: record the backward pass itself, so the .grad it produces can be
            differentiated again.
        grad_variables: PyTorch's old name for `grad_tensors`.
        inputs: accumulate only into these leaves (Tensors); default: every leaf that
            requires grad.

    Returns:
        None; the gradients are added into each leaf's ``.grad``.

    Example:
        >>> import fgrad.torch as torch
        >>> w = torch.tensor([1.0, 2.0], requires_grad=True)
        >>> torch.autograd.backward((w ** 2).sum())
        >>> w.grad
        tensor([2., 4.])
    """
    with _Call():
        _backward(tensors, grad_tensors, retain_graph, create_graph, grad_variables, inputs)


class _Call:
    """One backward()/grad() call: what hooks queued for its end (register_multi_grad_hook)
    runs when it returns."""

    def __enter__(self) -> None:
        self.frame: list = []
        graph._END_OF_CALL.append(self.frame)

    def __exit__(self, exc_type, *exc) -> None:
        graph._END_OF_CALL.pop()
        if exc_type is None:
            for callback in self.frame:
                callback()


def _backward(tensors, grad_tensors, retain_graph, create_graph, grad_variables, inputs) -> None:
    tensors = _as_tuple(tensors)
    grads = _as_tuple(grad_tensors if grad_tensors is not None else grad_variables)
    grads = grads or (None,) * len(tensors)
    if len(grads) != len(tensors):
        raise FgradRuntimeError(f"got {len(grads)} gradients for {len(tensors)} tensors; pass one per tensor")
    roots = _roots(tensors, grads, create_graph)
    if inputs is None:
        result = _run(roots, retain_graph, create_graph)
        for k in tuple(result):
            node = ACC_NODES.get(k)
            if node is not None:
                # (popped: a cotangent only this loop refers to becomes the leaf's .grad uncopied)
                g = _user_grad(node.variable, result.pop(k))
                owned = sole_owner(g)  # (its own statement: a call's argument list holds g too)
                accumulate_grad(node.variable, g, owned)
                if node in graph.POST_HOOKS:  # AccumulateGrad's post hooks: after the accumulation
                    for fn in list(graph.POST_HOOKS[node]):
                        fn((), (g if isinstance(g, Tensor) else _make(g),))
        return
    inputs = _as_tuple(inputs)
    if not inputs:
        raise FgradRuntimeError("'inputs' argument to backward() cannot be empty.")
    nodes = [_input_node(t, i) for i, t in enumerate(inputs)]
    result = _run(roots, retain_graph, create_graph, capture=[n for n in nodes if n is not None])
    for t, n in zip(inputs, nodes):
        if n is not None and id(n) in result:
            if isinstance(t, Tensor) and t._node is not None and t._retain is not None:
                continue  # (a non-leaf that retains its grad: its node's retain_grad hook stored it)
            accumulate_grad(t, _user_grad(t, result[id(n)]))


def _input_node(t, i):
    if isinstance(t, graph.GradientEdge):
        return t.node
    if not isinstance(t, Tensor):
        raise FgradTypeError(f"inputs[{i}] is a {type(t).__name__}, not a Tensor")
    if not t._requires_grad:
        raise FgradRuntimeError("One of the differentiated Tensors does not require grad")
    return live_node(t)  # None: the leaf is not in any live graph


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph: bool = False,
         only_inputs: bool = True, allow_unused=None, is_grads_batched: bool = False,
         materialize_grads: bool = False) -> tuple:
    """The gradients of `outputs` with respect to `inputs`, returned rather than accumulated
    into ``.grad``, as ``torch.autograd.grad``.

    Args:
        outputs: a Tensor or a sequence of Tensors to differentiate.
        inputs: a Tensor or a sequence of Tensors (or GradientEdges from
            ``torch.autograd.graph.get_gradient_edge``) to differentiate with respect to.
        grad_outputs: the vector each output's Jacobian is contracted with, one per output
            (None for a scalar output, which means 1).
        retain_graph: keep the values the graph saved for another backward pass through it
            (default: `create_graph`).
        create_graph: record the backward pass, so the gradients can be differentiated
            again (higher derivatives).
        only_inputs: accepted for PyTorch compatibility (deprecated there); changes nothing.
        allow_unused: give None for an input the outputs do not depend on, instead of
            raising.
        is_grads_batched: each of `grad_outputs` has a leading batch dimension; the result
            holds, per input, the gradients for every batch entry stacked along a new first
            dimension (as PyTorch computes with vmap).
        materialize_grads: give zeros instead of None for unused inputs (implies
            `allow_unused`).

    Returns:
        A tuple with one gradient per input, each of its input's shape.

    Example:
        >>> import fgrad.torch as torch
        >>> x = torch.tensor([3.0], requires_grad=True)
        >>> dx, = torch.autograd.grad(x ** 2, x, create_graph=True)
        >>> dx
        tensor([6.], grad_fn=<MulBackward0>)
        >>> torch.autograd.grad(dx, x)
        (tensor([2.]),)
    """
    with _Call():
        if is_grads_batched:
            return _grad_batched(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                                 materialize_grads)
        return _grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused, materialize_grads)


def _grad_batched(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused, materialize_grads):
    """grad(..., is_grads_batched=True): one backward pass per batch entry of grad_outputs."""
    grads = _as_tuple(grad_outputs)
    if not grads or any(g is None for g in grads):
        raise FgradRuntimeError("is_grads_batched=True needs grad_outputs: one Tensor per output, with the batch "
                                "as its first dimension")
    sizes = {int(g.shape[0]) if isinstance(g, Tensor) and g.dim() > 0 else None for g in grads}
    if len(sizes) != 1 or None in sizes:
        raise FgradRuntimeError(f"is_grads_batched=True: every grad_output needs the same leading batch dimension; "
                                f"got shapes {[tuple(g.shape) for g in grads]}")
    n = sizes.pop()
    per = []
    for b in range(n):
        keep = True if b < n - 1 else retain_graph
        per.append(_grad(outputs, inputs, tuple(g[b] for g in grads), keep, create_graph, allow_unused,
                         materialize_grads))
    from ._ops_shape import stack  # (the ops import this module's package: resolved at call time)
    res = []
    for k in range(len(per[0]) if per else 0):
        col = [p[k] for p in per]
        if all(c is None for c in col):
            res.append(None)
            continue
        like = next(c for c in col if c is not None)
        res.append(stack([c if c is not None else _make(np.zeros_like(like._value)) for c in col]))
    return tuple(res)


def _grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused, materialize_grads) -> tuple:
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    grads = _as_tuple(grad_outputs) or (None,) * len(outputs)
    if len(grads) != len(outputs):
        raise FgradRuntimeError(f"grad_outputs has {len(grads)} entries for {len(outputs)} outputs")
    allow_unused = materialize_grads if allow_unused is None else allow_unused
    roots = _roots(outputs, grads, create_graph)
    nodes = [_input_node(t, i) for i, t in enumerate(inputs)]
    result = _run(roots, retain_graph, create_graph, capture=[n for n in nodes if n is not None])
    res = []
    for i, (t, n) in enumerate(zip(inputs, nodes)):
        ct = result.get(id(n)) if n is not None else None
        if ct is None:
            if not allow_unused:
                raise FgradRuntimeError(f"The differentiated Tensor at index {i} appears to not have been used in "
                                   "the graph. Set allow_unused=True if this is the desired behavior.", doc="grad-unused-input")
            materialize = materialize_grads and isinstance(t, Tensor)
            res.append(_make(np.zeros_like(t._value)) if materialize else None)
            continue
        if isinstance(t, graph.GradientEdge):
            if type(ct) is tuple:  # (an edge to one output of a node of several outputs)
                ct = ct[t.output_nr]
                if ct is None:
                    res.append(None)  # (no gradient reached that output)
                    continue
            ct = torch_convention(ct)
        else:
            ct = _user_grad(t, ct)
        res.append(ct if isinstance(ct, Tensor) else _make(ct))
    return tuple(res)
