"""Torch ops on meta tensors: shapes and dtypes by abstract evaluation (see _meta)."""
from __future__ import annotations

import numpy as np

from ...api import make_jaxpr
from ...core.trace import _state
from ...core.errors import FgradNotImplementedError, FgradRuntimeError
from ...tree_util import tree_flatten, tree_unflatten
from ._meta import SHAPES_ONLY, MetaArray
from ._names import grad_fn_name
from .tensor import _EMPTY, _NODE_CLASSES, Tensor, _make, grad_node, node_class

__all__ = ["meta_call", "meta_bind", "has_meta", "to_meta"]


def has_meta(tensors) -> bool:
    """Whether any of the (position, list index, Tensor) entries holds a meta value.

    Args:
        tensors: the boundary's list of Tensor arguments.

    Returns:
        True or False.
    """
    for _, _, t in tensors:
        if type(t._value) is MetaArray:
            return True
    return False


class _MetaOp:
    """`prim` of a meta tensor's grad_fn: there are no values to pull back."""

    name = "meta_op"
    nondiff = False
    vjp_fwd = None
    saves_output = False

    @staticmethod
    def vjp(*args, **kwargs):
        raise FgradNotImplementedError("backward through meta tensors: they have shapes and no values, so there is "
                                       "no gradient to compute (run the computation on the CPU for gradients)")


META_OP = _MetaOp()


def _meta_node(name: str, parents: tuple):
    """A grad_fn of class `name` over `parents` whose backward refuses (META_OP)."""
    node = object.__new__(_NODE_CLASSES.get(name) or node_class(name))
    node.prim = META_OP
    node.params = _EMPTY
    node.parents = parents
    node.primals = ()
    node.out = None
    node.hooks = None
    node.residuals = None
    node.saved = []
    return node


def meta_call(name, fn, vals: list, tensors: list, grad: bool):
    """Run the torch op `name` (its grad_fn name, or None) on meta operands: the shapes and
    dtypes of `fn(*vals)` by abstract evaluation, as meta Tensors.

    Args:
        name: PyTorch's grad_fn class name for the op, or None (the last primitive's).
        fn: the op's computation over plain values.
        vals: its arguments, Tensors unboxed (meta ones as MetaArray, possibly inside lists).
        tensors: (position, list index or None, Tensor) of each Tensor argument.
        grad: whether the result records a grad_fn (grad mode on and an operand requires grad).

    Returns:
        The results as meta Tensors (the structure `fn` returns).

    Raises:
        RuntimeError: a non-scalar CPU tensor is mixed with meta ones (PyTorch's device rule).
    """
    for _, _, t in tensors:
        v = t._value
        if type(v) is not MetaArray and getattr(v, "ndim", 0) != 0:
            raise FgradRuntimeError("Expected all tensors to be on the same device, but found at least two "
                                    "devices, meta and cpu! Move them with .to('meta') first.")
    slots, stand_ins = [], []
    for i, v in enumerate(vals):
        if type(v) is MetaArray:
            slots.append((i, None))
            stand_ins.append(v.stand_in())
        elif type(v) in (list, tuple):
            for j, e in enumerate(v):
                if type(e) is MetaArray:
                    slots.append((i, j))
                    stand_ins.append(e.stand_in())

    def of_meta(*xs):
        full = list(vals)
        for (i, j), x in zip(slots, xs):
            if j is None:
                full[i] = x
            else:
                seq = list(full[i])
                seq[j] = x
                full[i] = tuple(seq) if type(full[i]) is tuple else seq
        return fn(*full)

    SHAPES_ONLY[0] += 1
    try:
        closed, shapes = make_jaxpr(of_meta, return_shape=True)(*stand_ins)
    finally:
        SHAPES_ONLY[0] -= 1
    leaves, tree = tree_flatten(shapes)
    node = None
    if grad:
        if name is None:
            eqns = closed.jaxpr.eqns
            name = grad_fn_name(eqns[-1].primitive.name) if eqns else None
        if name is not None:
            node = _meta_node(name, tuple(grad_node(t) if t._requires_grad else None for _, _, t in tensors
                                          if t._requires_grad or t._value.dtype.kind in "fc"))
    out = [_make(MetaArray(s.shape, s.dtype), node if node is not None and np.dtype(s.dtype).kind in "fc" else None,
                 node is not None and np.dtype(s.dtype).kind in "fc") for s in leaves]
    return tree_unflatten(tree, out)


def meta_bind(prim, args: tuple, vals: list, params: dict, cls, grad: bool):
    """`_tensor_bind` of the primitive `prim` on meta operands: its output's shape and dtype as a
    meta Tensor, with a grad_fn of class `cls` (by default the primitive's) when `grad`.

    Args:
        prim: the primitive.
        args: its operands (Tensors among them).
        vals: the operands' values.
        params: the primitive's parameters.
        cls: the node class `_tensor_bind` was given, or None.
        grad: whether the result records a grad_fn.

    Returns:
        A meta Tensor.
    """
    tensors = [(i, None, a) for i, a in enumerate(args) if isinstance(a, Tensor)]
    name = cls.__name__ if cls is not None else grad_fn_name(prim.name)
    call_fn = params.get("call") if params else None
    custom = getattr(getattr(call_fn, "fun", None), "_backward_name", None)
    if custom:
        name = custom
    return meta_call(name, lambda *xs: prim.bind(*xs, **params), list(vals), tensors, grad)


def to_meta(t: Tensor) -> Tensor:
    """`t.to("meta")`: a meta tensor of t's shape and dtype (grad_fn ToCopyBackward0 when t
    requires grad in grad mode, as PyTorch's).

    Args:
        t: a Tensor on any device.

    Returns:
        A meta Tensor.
    """
    v = t._value
    grad = t._requires_grad and _state.grad_enabled
    node = None
    if grad:
        node = _meta_node("ToCopyBackward0", (grad_node(t),))
    return _make(MetaArray(v.shape, v.dtype), node, grad)
