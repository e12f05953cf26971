"""The one reverse-mode engine. `vjp`/`grad` and fgrad.torch's `Tensor.backward()` both record
graphs of `Node`s and walk them here, calling each primitive's VJP rule."""
from __future__ import annotations

import threading

import numpy as np

from ..core import allocator
from ..core.avals import ShapedArray
from ..core.errors import FgradRuntimeError
from ..core.trace import aval_of

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward.")


_new = object.__new__


class Unsaved(ShapedArray):
    """Stands, in a Node, for a value its primitive's VJP rule does not read (see
    `Primitive.def_saves`): only its shape and dtype are kept, so the value is freed as soon
    as nothing else holds it. A rule may ask for its shape and dtype, never its contents."""

    __slots__ = ()

    @classmethod
    def of(cls, x) -> Unsaved:
        """The stand-in for `x` (an array, tracer or number)."""
        u = _new(cls)
        if type(x) is np.ndarray:
            u.shape, u.dtype = x.shape, x.dtype
            return u
        # a tracer's .shape/.dtype read through its nesting without building avals
        shape, dtype = getattr(x, "shape", None), getattr(x, "dtype", None)
        if type(shape) is not tuple or not isinstance(dtype, np.dtype):
            a = aval_of(x)
            shape, dtype = a.shape, a.dtype
        u.shape, u.dtype = shape, dtype
        return u

    def _read(self, *args, **kwargs):
        raise FgradRuntimeError(
            f"internal error: a VJP rule read the contents of a value of type {self.str_short()} that "
            "its primitive declares it does not read (Primitive.def_saves), so it was not saved.")

    __array__ = __array_ufunc__ = __array_function__ = __float__ = __int__ = __bool__ = _read
    __getitem__ = __iter__ = __len__ = _read


class Node:
    """One recorded primitive application. `parents[i]` is the node that made input i,
    or None when input i needs no cotangent. Holds no reference to its outputs' wrappers,
    so graphs are freed by reference counting alone."""

    __slots__ = ("prim", "params", "parents", "primals", "out", "hooks", "residuals", "__weakref__")

    def __init__(self, prim, params, parents, primals, out, residuals=None) -> None:
        self.prim = prim
        self.params = params
        self.parents = parents
        self.primals = primals
        self.out = out
        self.hooks = None
        self.residuals = residuals  # from prim.vjp_fwd: values of this application only


class Leaf(Node):
    """Where cotangents stop: an input of vjp, or a Tensor that accumulates .grad."""

    __slots__ = ()

    def __init__(self) -> None:
        self.prim = None
        self.parents = ()
        self.hooks = None


def _leaves_last(parents) -> tuple:
    """`parents` with the leaves (prim None) after the other nodes: the walk then reaches a
    leaf last among its node's parents, so the backward pass (the reverse order) reaches it
    right after that node, not after the other parents' whole subgraphs (a layer's bias
    gradient is final as soon as the layer's node has run, as in PyTorch's engine, which
    data-parallel reducers start their reductions from)."""
    if len(parents) < 2:
        return parents
    leaves = None
    for p in parents:
        if p is not None and p.prim is None:
            leaves = True
            break
    if leaves is None:
        return parents
    return tuple([p for p in parents if p is not None and p.prim is not None]
                 + [p for p in parents if p is not None and p.prim is None])


def toposort(roots, stop=None) -> list:
    """Nodes reachable from `roots`, parents before children (iterative DFS, a node's leaf
    parents visited last: see _leaves_last). The parents of a node whose id is in `stop` are
    not followed (graph_to_jaxpr cuts at its inputs)."""
    # (the set holds the nodes themselves: they hash by identity, and id() costs a call)
    order, seen = [], set()
    for root in roots:
        if root in seen:
            continue
        seen.add(root)
        stack = [(root, iter(() if stop and id(root) in stop else _leaves_last(root.parents)))]
        while stack:
            node, it = stack[-1]
            for p in it:
                if p is not None and p not in seen:
                    seen.add(p)
                    ps = p.parents
                    # (_leaves_last inlined for nodes of one parent: most of a graph)
                    stack.append((p, iter(() if stop and id(p) in stop else ps if len(ps) < 2 else _leaves_last(ps))))
                    break
            else:
                stack.pop()
                order.append(node)
    return order


class _Passes(threading.local):
    """The backward passes running on this thread, outermost first (a token each)."""

    def __init__(self) -> None:
        self.stack: list = []


_PASSES = _Passes()


def current_pass():
    """A token unique to the outermost backward pass running on this thread, or None when
    none runs (fgrad.viz tells forward from backward equations with it)."""
    stack = _PASSES.stack
    return stack[0] if stack else None


def backward_pass(roots, *, add, retain: bool = True, wrap=None, capture=(), check=None, rule=None,
                  order=None) -> dict:
    """Propagate cotangents from `roots` [(node, ct)] to the leaves (see _backward_pass).
    `order`: the graph's nodes, parents before children, when the caller has them (a
    recording's tape); by default the graph is sorted from the roots. The first pass of a
    process tunes malloc for the steps that follow (fgrad.core.allocator)."""
    allocator.tune_once()
    stack = _PASSES.stack
    stack.append(object())
    try:
        return _backward_pass(roots, add, retain, wrap, capture, check, rule, order)
    finally:
        stack.pop()


def _backward_pass(roots, add, retain: bool, wrap, capture, check, rule=None, order=None) -> dict:
    """Propagate cotangents from `roots` [(node, ct)] to the leaves.

    Returns {id(node): ct} for every leaf reached and every node in `capture`.
    `add(a, b)` sums two cotangents of one node (its caller's array API: fgrad.numpy's
    for vjp, fgrad.torch's for Tensors). `wrap(node)` gives the (out, primals) the rules see (the facade rebuilds Tensors
    there when create_graph=True); `check(node, in_cts)`, when given, sees each rule's results
    (the facade's anomaly mode); `rule(node, needs, ct, out, primals)`, when given, applies
    each node's VJP rule instead of the engine (the facade runs them as ops of its own when it
    records a graph of the backward pass); `retain=False` frees each node's saved values once its
    rule has run, so a value saved by several nodes is freed after its last reader.
    Each cotangent is dropped as soon as its node's rule has consumed it, and the walk holds
    no node it is done with: the peak is the saved values not yet consumed plus the
    cotangents in flight.
    """
    cts: dict = {}
    for node, ct in roots:
        cts[node] = ct if node not in cts else add(cts[node], ct)
    capture_ids = {id(n) for n in capture}
    result = {}
    order = toposort([n for n, _ in roots]) if order is None else list(order)
    pop_ct, get_ct = cts.pop, cts.get
    while order:
        node = order.pop()  # children before parents
        ct = pop_ct(node, None)
        if ct is None:
            continue
        if node.hooks:
            for hook in node.hooks:
                new = hook(ct)
                if new is not None:
                    ct = new
        prim = node.prim
        if prim is None or (capture_ids and id(node) in capture_ids):
            result[id(node)] = ct
            if prim is None:
                continue
        primals = node.primals
        if primals is None:
            raise FgradRuntimeError(FREED_MESSAGE, doc="backward-twice")
        if wrap is None:
            out = node.out
        else:
            out, primals = wrap(node)
        parents = node.parents
        if len(parents) == 1:  # (most ops: no list to build)
            needs = _NEEDS_ONE if parents[0] is not None else _NEEDS_NONE
        else:
            needs = tuple([p is not None for p in parents])  # (a list comprehension: a generator costs 60% more)
        if rule is not None:
            in_cts = rule(node, needs, ct, out, primals)
        elif prim.vjp_fwd is None:
            in_cts = prim.vjp(needs, ct, out, *primals, **node.params)
        else:  # the residuals this node's own forward computed (see Primitive.def_vjp_fwd)
            in_cts = prim.vjp(needs, ct, out, *primals, residuals=getattr(node, "residuals", None),
                              **node.params)
        if check is not None:
            check(node, in_cts)
        # the rule has run: what it read goes now, not when the next rule's results arrive
        ct = out = primals = None
        if not retain:
            node.primals = node.out = None
            node.residuals = None
        for p, c in zip(parents, in_cts):
            if p is not None and c is not None:
                old = get_ct(p)
                cts[p] = c if old is None else add(old, c)
        in_cts = c = old = None
    return result


_NEEDS_ONE = (True,)
_NEEDS_NONE = (False,)
