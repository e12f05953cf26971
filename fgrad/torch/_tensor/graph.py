"""fgrad.torch.autograd.graph: the graph recorded by Tensor operations -- PyTorch's API over it
(Node, saved-tensor hooks, gradient edges, hooks over several tensors) and, fgrad's own, the
graph as a typed Jaxpr.

    x = fgrad.torch.randn(3, requires_grad=True)
    y = (x * x).sin().sum()
    print(fgrad.torch.autograd.graph.to_jaxpr(y))      # { lambda ; a:f32[3]. let b:f32[3] = mul a a ...
    fgrad.torch.autograd.graph.to_jaxpr(y)(x_new)      # reruns the recorded computation on x_new

The same conversion (`fgrad.interpreters.record.graph_to_jaxpr`) serves fgrad.vjp's
recording (`vjp_fn.forward_jaxpr()`): both recorders build the same nodes.

Saved-tensor hooks: while `saved_tensors_hooks` (or save_on_cpu, allow_mutation_on_saved_tensors)
is in force, `_Saving` intercepts ops (forward_ad.install, as a dual level does) and packs the
values each new node keeps for its rule (`saved_slots`: what the primitive's rule reads, or a
torch op's inputs); the backward pass reads the unpacked values (autograd._values). The packed
objects, node metadata and post hooks live in weak tables keyed by the node (nodes have slots).
"""
from __future__ import annotations

import abc
import contextlib
import weakref
from typing import Any, Callable, NamedTuple, Sequence

from ...core.errors import FgradRuntimeError, FgradTypeError, FgradValueError
from ...core.ir import ClosedJaxpr
from ...interpreters.backward import FREED_MESSAGE, Unsaved, toposort
from ...interpreters.record import graph_to_jaxpr, record_call
from ...tree_util import tree_flatten
from . import forward_ad as _fa
from . import tensor as _tensor_module
from ._boundary import call as _boundary_call
from .forward_ad import below
from .tensor import (
    _EMPTY,
    FORWARD_AD,
    COPY_SLICES,
    AccumulateGrad,
    ModifiedValue,
    RemovableHandle,
    Tensor,
    TensorNode,
    _TensorHook,
    _add_node_hook,
    _keep_old_contents,
    _make,
    _output_number,
    grad_node,
    live_node,
    op_node,
    saved_values,
    torch_convention,
)

__all__ = ["to_jaxpr", "Node", "GradientEdge", "get_gradient_edge", "increment_version", "saved_tensors_hooks",
           "save_on_cpu", "disable_saved_tensors_hooks", "allow_mutation_on_saved_tensors",
           "register_multi_grad_hook"]


def _tensors(x, what: str) -> list:
    ts = [x] if isinstance(x, Tensor) else list(x)
    for i, t in enumerate(ts):
        if not isinstance(t, Tensor):
            raise FgradTypeError(f"to_jaxpr: {what}[{i}] is a {type(t).__name__}, not a Tensor")
    return ts


def _values_checked(input_values: set):
    """The `values` hook: a node's saved values, refusing a constant (not one of the inputs)
    that was overwritten in place since it was saved: the jaxpr could not replay it."""
    def values(node) -> tuple:
        out, primals = saved_values(node)
        for p, raw, x in zip(node.parents, node.primals, primals):
            if p is None and isinstance(x, ModifiedValue) and id(raw) not in input_values:
                raise FgradRuntimeError(x.message)
        return out, primals
    return values


def to_jaxpr(outputs: Tensor | Sequence[Tensor], inputs: Tensor | Sequence[Tensor] | None = None) -> ClosedJaxpr:
    """The computation recorded from `inputs` to `outputs` (grad mode on) as a `ClosedJaxpr`:
    `print` shows it as fgrad.make_jaxpr does; calling it with one array per input reruns it
    (`fgrad.core.ir.eval_jaxpr`) and returns the list of outputs.

    `inputs` default to the graph's leaves that require grad, in the order the recorded ops
    first used them. An input may also be a non-leaf Tensor (the graph is cut there) or a
    Tensor that does not require grad (the ops that read its value read the input instead).
    Any other value the graph read is a constant of the jaxpr, including what an op that is
    not recorded (no derivative: comparisons, argmax, integer results) computed from an
    input, e.g. relu's mask: at other input values the jaxpr reruns the recorded branch.
    Needs the saved values, so not after a backward() without retain_graph=True.
    """
    outs = _tensors(outputs, "outputs")
    roots = [n for n in map(live_node, outs) if n is not None]
    if inputs is None:
        ins = [n.variable for n in toposort(roots) if isinstance(n, AccumulateGrad)]
    else:
        ins = _tensors(inputs, "inputs")
    return graph_to_jaxpr([(live_node(t), t._value) for t in outs], [(live_node(t), t._value) for t in ins],
                          _values_checked({id(t._value) for t in ins}), _recorded_as)


def _recorded_as(node):
    """A CopySlices node's computation for the jaxpr: the write as one torch op over the base
    and the in-place op's result (its rule runs the op's node, which is not its parent)."""
    return node.residuals[1] if node.prim is COPY_SLICES and node.residuals is not None else None


# --- grad_fn's type: torch.autograd.graph.Node ------------------------------------------------------

class Node(abc.ABC):
    """The type of every `grad_fn` (and of the AccumulateGrad nodes of leaves):
    `isinstance(t.grad_fn, torch.autograd.graph.Node)` holds. A node offers `name()`,
    `next_functions`, `metadata` (a dict of the user's), `register_hook` and `register_prehook`,
    and `_saved_<name>` / `_raw_saved_<name>` for the values it keeps for backward."""

    @abc.abstractmethod
    def name(self) -> str:
        """The node's name (e.g. "MulBackward0")."""

    @property
    @abc.abstractmethod
    def next_functions(self) -> tuple:
        """((parent node or None, 0), ...) per input of the op."""

    @property
    @abc.abstractmethod
    def metadata(self) -> dict:
        """A dict kept with the node for the user's own data."""

    @abc.abstractmethod
    def register_hook(self, fn: Callable) -> RemovableHandle:
        """`fn(grad_inputs, grad_outputs)` after the node computed its gradients."""

    @abc.abstractmethod
    def register_prehook(self, fn: Callable) -> RemovableHandle:
        """`fn(grad_outputs)` before the node computes its gradients."""


Node.register(TensorNode)
Node.register(AccumulateGrad)

_METADATA: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
# node -> its post hooks (fn(grad_inputs, grad_outputs)); the backward pass reads it (autograd.py)
POST_HOOKS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
# the operation nodes (not leaves) that have post hooks: while there are none, the engine runs
# the rules without the hook wrapper (autograd._run)
OP_HOOKED: "weakref.WeakSet" = weakref.WeakSet()


def _metadata(node) -> dict:
    d = _METADATA.get(node)
    if d is None:
        d = _METADATA[node] = {}
    return d


class _PreHook:
    """A node pre-hook: `fn(grad_outputs) -> grad_outputs or None`, one gradient per output of
    the node (None for an output no gradient reached), in PyTorch's complex convention."""

    __slots__ = ("inner", "fn")

    def __init__(self, fn: Callable) -> None:
        def one(g):
            res = fn((g,))
            return None if res is None else _one_per_output(res, 1)[0]
        self.inner = _TensorHook(one, engine_side=True)
        self.fn = fn

    def __call__(self, ct):
        if type(ct) is not tuple:
            return self.inner(ct)
        # a node of several outputs: the engine's cotangent is a tuple with one entry per output
        res = self.fn(tuple([_boxed(c) for c in ct]))
        if res is None:
            return None
        res = _one_per_output(res, len(ct))
        return tuple([_engine_value(g, old) for g, old in zip(res, ct)])


def _one_per_output(res, n: int):
    if isinstance(res, (tuple, list)) and len(res) == n:
        return res
    raise FgradTypeError(f"a node pre-hook returned {type(res).__name__}"
                         + (f" of length {len(res)}" if isinstance(res, (tuple, list)) else "")
                         + f"; return None or a tuple with one gradient per output of the node (here: {n})")


def _engine_value(g, old):
    """A gradient a hook returned (PyTorch's convention), as the engine holds it: a Tensor where
    the engine had one (create_graph), else its value; None stays None."""
    if g is None:
        return None
    g = torch_convention(g if isinstance(g, Tensor) else _make(g))
    return g if isinstance(old, Tensor) else g._value


def _register_prehook(node, fn: Callable) -> RemovableHandle:
    """Node.register_prehook: `fn(grad_outputs)` runs before the node's rule (and may return
    replacement grad_outputs)."""
    return _add_node_hook(node, _PreHook(fn))


def _register_hook(node, fn: Callable) -> RemovableHandle:
    """Node.register_hook: `fn(grad_inputs, grad_outputs)` runs after the node's rule (and may
    return replacement grad_inputs); on a leaf's AccumulateGrad, after backward() accumulated
    the gradient into .grad, with grad_inputs ()."""
    hooks = POST_HOOKS.get(node)
    if hooks is None:
        hooks = POST_HOOKS[node] = []
    hooks.append(fn)
    if not isinstance(node, AccumulateGrad):  # (a leaf's run in backward(), not in the engine)
        OP_HOOKED.add(node)
    return RemovableHandle(hooks, fn)


for _cls in (TensorNode, AccumulateGrad):
    _cls.metadata = property(_metadata, doc="A dict kept with the node for the user's own data.")
    _cls.register_hook = _register_hook
    _cls.register_prehook = _register_prehook


def run_post_hooks(node, grad_outputs, grad_inputs: tuple) -> tuple:
    """Run the node's post hooks (Node.register_hook) on (grad_inputs, grad_outputs) as PyTorch
    shows them (Tensors or None, in its complex convention).

    Args:
        node: the node whose rule just ran.
        grad_outputs: the cotangent the rule received (the engine's value or Tensor).
        grad_inputs: the rule's results, one per input of the node.

    Returns:
        The grad_inputs for the engine: a hook's replacement converted back, or `grad_inputs`
        itself when no hook replaced them.
    """
    hooks = POST_HOOKS.get(node)
    if not hooks:
        return grad_inputs
    boxed = tuple(_boxed(g) for g in grad_inputs)
    # (a node of several outputs gets one cotangent per output from the engine)
    outs = tuple([_boxed(g) for g in grad_outputs]) if type(grad_outputs) is tuple else (_boxed(grad_outputs),)
    replaced = False
    for fn in list(hooks):
        res = fn(boxed, outs)
        if res is not None:
            res = tuple(res) if isinstance(res, (tuple, list)) else (res,)
            if len(res) != len(boxed):
                raise FgradRuntimeError(f"hook of {type(node).__name__} returned {len(res)} gradients; it must "
                                        f"return one per input of the node ({len(boxed)}) or None")
            boxed, replaced = res, True
    if not replaced:
        return grad_inputs
    return tuple([_engine_value(g, old) for g, old in zip(boxed, grad_inputs)])


def _boxed(g):
    if g is None:
        return None
    return torch_convention(g if isinstance(g, Tensor) else _make(g))


# --- the values a node saves: grad_fn._saved_<name>, _raw_saved_<name>, saved-tensor hooks --------

# Argument names of the saved inputs where PyTorch's differ from (self, other)
_INPUT_NAMES = {
    "MmBackward0": ("self", "mat2"), "BmmBackward0": ("self", "mat2"), "MvBackward0": ("self", "vec"),
    "DotBackward0": ("self", "tensor"), "AddmmBackward0": ("self", "mat1", "mat2"),
    "PowBackward1": ("self", "exponent"), "PowBackward2": ("self", "exponent"),
    "AddcmulBackward0": ("self", "tensor1", "tensor2"), "AddcdivBackward0": ("self", "tensor1", "tensor2"),
}


def saved_slots(node) -> list:
    """The values `node` keeps for its rule, as PyTorch would save them. A single-primitive
    node keeps what its primitive's rule reads (Primitive.def_saves), a product's operand only
    for the other operands' gradients; a torch op's node (several primitives, pulled back
    through its subgraph) keeps its inputs.

    Args:
        node: a graph node.

    Returns:
        Input indices, and -1 for the output; [] once a backward pass freed the node.
    """
    primals = node.primals
    if primals is None:
        return []
    prim = node.prim
    if getattr(prim, "name", None) == "torch_op":
        # the inputs its op declared read (the boundary's `saves`: a CopySlices none)
        watched = {i for _, _, i in node.saved}
        return [i for i, v in enumerate(primals) if type(v) is not Unsaved and i in watched]
    unread = prim.unread_inputs(len(primals)) if getattr(prim, "saved_inputs", None) is not None else ()
    slots = [i for i, v in enumerate(primals) if i not in unread and type(v) is not Unsaved and _is_array(v)]
    if prim.name in _BILINEAR:
        # an operand of a product is read only for the other operands' gradients: PyTorch saves
        # it only when one of them requires grad (a first layer's weight is not saved)
        parents = node.parents
        slots = [i for i in slots if any(parents[j] is not None for j in slots if j != i)]
    if getattr(prim, "saves_output", False) and type(node.out) is not Unsaved and node.out is not None \
            and type(node.out) is not tuple:
        slots.append(-1)
    return slots


# primitives linear in each operand they read (mul, matmul, linear layers, convolutions)
_BILINEAR = frozenset({"mul", "dot_general", "addmm", "conv2d", "conv_general_dilated"})


def _is_array(v) -> bool:
    return hasattr(v, "shape") and hasattr(v, "dtype") and getattr(v, "ndim", None) is not None


def _slot_names(node) -> dict:
    names = _INPUT_NAMES.get(type(node).__name__, ("self", "other"))
    out = {}
    for i in saved_slots(node):
        if i < 0:
            out["result"] = i
        elif i < len(names):
            out[names[i]] = i
        else:
            out[f"input{i}"] = i
    return out


def _pack_order(node, slots: Sequence[int]) -> list:
    """`slots` (saved_slots(node)) in the order PyTorch packs them: its generated autograd code
    saves a node's inputs sorted by their argument names (mul saves `other` before `self`, mm
    `mat2` before `self`, dot `self` before `tensor`), then its outputs, so saved_tensors_hooks'
    pack hooks run in that order.

    Args:
        node: a graph node.
        slots: input indices, and -1 for the output.

    Returns:
        The same slots, reordered; inputs PyTorch has no name for keep their order after the
        named ones.
    """
    names = _INPUT_NAMES.get(type(node).__name__, ("self", "other"))
    return sorted(slots, key=lambda i: (2, "", i) if i < 0 else (0, names[i], i) if i < len(names) else (1, "", i))


class SavedTensor:
    """One value a node keeps for backward (`grad_fn._raw_saved_self`): `register_hooks(pack,
    unpack)` packs it now and unpacks it when backward reads it."""

    __slots__ = ("_node", "_slot")

    def __init__(self, node, slot: int) -> None:
        self._node, self._slot = node, slot

    def register_hooks(self, pack_hook: Callable, unpack_hook: Callable) -> None:
        """Pack the saved value with `pack_hook(tensor)` (called now); backward reads
        `unpack_hook(packed)`, which must return a Tensor.

        Raises:
            RuntimeError: when the value already has hooks, or was freed by a backward pass.
            TypeError: when a hook is not callable.
        """
        if not callable(pack_hook) or not callable(unpack_hook):
            raise FgradTypeError("register_hooks: pack_hook and unpack_hook must be callables")
        entries = PACKED.get(self._node)
        if entries is not None and self._slot in entries:
            raise FgradRuntimeError("Calling register_hooks on a saved tensor whose hooks have already been set. "
                                    "Hint: only one pair of hooks is allowed at a time.")
        value = _saved_value(self._node, self._slot, unpack=False)
        _pack(self._node, self._slot, _make(value), pack_hook, unpack_hook)

    def __repr__(self) -> str:
        return f"<SavedTensor of {type(self._node).__name__} at 0x{id(self):x}>"


# node -> {slot: (packed object, unpack_hook)}: the values packed by saved-tensor hooks
PACKED: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _pack(node, slot: int, tensor: Tensor, pack_hook: Callable, unpack_hook: Callable) -> None:
    entries = PACKED.get(node)
    if entries is None:
        entries = PACKED[node] = {}
    entries[slot] = (pack_hook(tensor), unpack_hook)


def _unpacked(node, slot: int):
    """The value backward reads for `slot`: unpack_hook's Tensor's value (TypeError otherwise)."""
    packed, unpack_hook = PACKED[node][slot]
    t = unpack_hook(packed)
    if not isinstance(t, Tensor):
        raise FgradTypeError(f"Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
                             f"{type(t).__name__}")
    return t._value


def _saved_value(node, slot: int, unpack: bool = True):
    if node.primals is None:
        raise FgradRuntimeError(FREED_MESSAGE, doc="backward-twice")
    entries = PACKED.get(node)
    if unpack and entries is not None and slot in entries:
        return _unpacked(node, slot)
    out, primals = saved_values(node)
    v = out if slot < 0 else primals[slot]
    if isinstance(v, ModifiedValue):
        v._fail()
    return v


def _rewrapped(node, slot: int, parent, value) -> Tensor:
    """A saved value (`value`; with hooks, the unpack hook's Tensor's) given the history of the
    tensor that was saved, as PyTorch rebuilds it: a leaf input's gradient lands in that leaf
    (the new Tensor shares its AccumulateGrad), a non-leaf input keeps its grad_fn, the output
    gets `node` itself."""
    if isinstance(parent, AccumulateGrad):
        t = _make(value, None, True)
        t._acc = weakref.ref(parent)
        return t
    if slot < 0:
        return _make(value, node, True)
    return _make(value, parent, True) if parent is not None else _make(value)


def _node_getattr(node, attr: str):
    """grad_fn._saved_<name> (the saved value as a Tensor, through the unpack hook when one was
    set; a leaf input is that leaf itself) and grad_fn._raw_saved_<name> (its SavedTensor)."""
    for prefix, raw in (("_raw_saved_", True), ("_saved_", False)):
        if attr.startswith(prefix):
            if node.primals is None:  # (freed by a backward pass: which names it had is gone too)
                raise FgradRuntimeError(FREED_MESSAGE, doc="backward-twice")
            slot = _slot_names(node).get(attr[len(prefix):])
            if slot is None:
                break
            if raw:
                return SavedTensor(node, slot)
            value = _saved_value(node, slot)
            parent = node.parents[slot] if slot >= 0 else None
            if slot not in PACKED.get(node, ()) and isinstance(parent, AccumulateGrad) \
                    and parent.variable._value is value:
                return parent.variable
            return _rewrapped(node, slot, parent, value)
    raise AttributeError(f"'{type(node).__name__}' object has no attribute '{attr}'")


def _node_dir(node) -> list:
    names = set(object.__dir__(node))
    if node.primals is not None:
        for name in _slot_names(node):
            names.update((f"_saved_{name}", f"_raw_saved_{name}"))
    return sorted(names)


TensorNode.__getattr__ = _node_getattr
TensorNode.__dir__ = _node_dir


def unpacked_values(node, out, primals) -> tuple:
    """The values a node's rule reads, with those packed by saved-tensor hooks unpacked (the
    backward pass's `wrap` calls this for the nodes in PACKED). A torch op's node re-records its
    subgraph on unpacked inputs that differ from what it ran on.

    Args:
        node: a node in PACKED.
        out, primals: its saved output and inputs (tensor.saved_values).

    Returns:
        (out, primals) for the rule.
    """
    entries = PACKED[node]
    primals = list(primals)
    changed = False
    for slot in entries:
        v = _unpacked(node, slot)
        if slot < 0:
            out = v
        else:
            changed = changed or v is not primals[slot]
            primals[slot] = v
    if changed and getattr(node.prim, "name", None) == "torch_op":
        res = node.residuals
        sub = record_call(res.sub.fn, [primals[i] for i in res.where], False)[2]
        node.residuals = type(res)(sub, res.k, res.where)
    return out, tuple(primals)


# the saved_tensors_hooks in force, innermost last; a disable_saved_tensors_hooks message
_HOOKS: list = []
_DISABLED: list = [None]


class _Saving:
    """The op interceptor (forward_ad.install) while saved-tensor hooks are in force: after an
    op that recorded nodes, each node's saved values are packed by the innermost hooks."""

    def call(self, name, fn, args: tuple, kwargs: dict = _EMPTY):
        FORWARD_AD[0] = below(self)
        try:
            out = _boundary_call(name, fn, args, kwargs)
        finally:
            FORWARD_AD[0] = self
        self._pack_outputs(out, _fa._operands(args, kwargs))
        return out

    def bind(self, prim, args: tuple, params: dict, cls=None):
        FORWARD_AD[0] = below(self)
        try:
            out = _tensor_module._tensor_bind(prim, args, params, cls)
        finally:
            FORWARD_AD[0] = self
        self._pack_outputs(out, [a for a in args if isinstance(a, Tensor)])
        return out

    def inplace(self, t: Tensor, new: Tensor) -> None:
        inner = below(self)
        if inner is not None:
            inner.inplace(t, new)
        if _MUTATION[0] is not None:
            _MUTATION[0].before_write(t)
        self._repack_old_contents(t, new)

    @staticmethod
    def _repack_old_contents(t: Tensor, new: Tensor) -> None:
        """Before `new` is written into `t`: the op that computed `new` packed `t` itself where
        its rule reads it, and `t` is about to be overwritten. PyTorch's in-place ops save a
        copy of self's old contents (original_self) instead: that copy is packed in its place (so
        the pack hook runs once more for such an op than in PyTorch, which knows before the op
        runs that it is in place)."""
        hooks = active_hooks()
        node = op_node(new._node)
        if hooks is None or node is None or node.primals is None or _UNHOOKED[0]:
            return
        entries = PACKED.get(node)
        tv = t._value
        if not entries or not hasattr(tv, "copy"):
            return
        for slot in [k for k in entries if k >= 0 and node.primals[k] is tv]:
            _pack(node, slot, _make(tv.copy()), hooks[0], hooks[1])

    def _pack_outputs(self, out, operands: list) -> None:
        if _MUTATION[0] is not None:
            _MUTATION[0].track(out)
        if not _HOOKS or _DISABLED[0] is not None or _UNHOOKED[0]:
            return
        pack_hook, unpack_hook = _HOOKS[-1]
        known = {id(op_node(t._node)) for t in operands if t._node is not None}
        outs = [o for o in tree_flatten(out, is_leaf=lambda x: isinstance(x, Tensor))[0] if isinstance(o, Tensor)]
        seen = set()
        for o in outs:
            node = op_node(o._node)  # (the node that saves: a multi-output op's own)
            if node is None or id(node) in known or id(node) in seen or node in PACKED:
                continue
            seen.add(id(node))
            for slot in _pack_order(node, saved_slots(node)):
                if slot < 0:
                    # the output without its grad_fn: a packed object that is this Tensor would
                    # keep the node (PACKED's key) alive through PACKED's value
                    tensor = _make(o._value, None, o._requires_grad, o._vbox)
                else:
                    v = node.primals[slot]
                    tensor = next((t for t in operands if t._value is v), None)
                    if tensor is None:  # a number operand (x * 2): PyTorch saves no tensor for it
                        continue
                _pack(node, slot, tensor, pack_hook, unpack_hook)


_SAVING = _Saving()
_UNHOOKED = [0]  # >0 while ops run whose nodes pack nothing themselves (autograd.Function's)


def active_hooks():
    """The (pack_hook, unpack_hook) in force, or None (none, or disabled).

    Returns:
        A pair of callables, or None.
    """
    return _HOOKS[-1] if _HOOKS and _DISABLED[0] is None else None


@contextlib.contextmanager
def unhooked_nodes():
    """The nodes made inside pack nothing: an autograd.Function's node keeps what its
    save_for_backward got, packed there (FunctionCtx.save_for_backward), as PyTorch packs it."""
    _UNHOOKED[0] += 1
    try:
        yield
    finally:
        _UNHOOKED[0] -= 1
_MUTATION: list = [None]


def _sync_interceptor() -> None:
    """Install the saved-tensor interceptor while hooks or allow_mutation_on_saved_tensors are in
    force, remove it otherwise."""
    wanted = bool(_HOOKS) or _MUTATION[0] is not None
    if wanted and _SAVING not in _fa._STACK:
        _fa.install(_SAVING)
    elif not wanted and _SAVING in _fa._STACK:
        _fa.uninstall(_SAVING)


class saved_tensors_hooks:
    """Context manager: every value an op saves for backward inside it is packed by
    `pack_hook(tensor)` when the op runs, and `unpack_hook(packed)` (which must return a Tensor)
    gives the value back when backward reads it. Inner contexts override outer ones.

    Args:
        pack_hook: Tensor -> any object.
        unpack_hook: that object -> Tensor.
    """

    def __init__(self, pack_hook: Callable[[Tensor], Any], unpack_hook: Callable[[Any], Tensor]) -> None:
        self.pack_hook, self.unpack_hook = pack_hook, unpack_hook

    def __enter__(self) -> "saved_tensors_hooks":
        for what, hook in (("pack_hook", self.pack_hook), ("unpack_hook", self.unpack_hook)):
            if not callable(hook):
                raise FgradTypeError(f"saved_tensors_hooks: {what} must be a callable (Tensor -> object for "
                                     f"pack_hook, object -> Tensor for unpack_hook), not {type(hook).__name__}")
        if _DISABLED[0] is not None:
            raise FgradRuntimeError(_DISABLED[0])
        _HOOKS.append((self.pack_hook, self.unpack_hook))
        _sync_interceptor()
        return self

    def __exit__(self, *exc: Any) -> None:
        _HOOKS.pop()
        _sync_interceptor()


class save_on_cpu(saved_tensors_hooks):
    """saved_tensors_hooks that keep each saved value on the CPU and move it back to its device
    when backward reads it (PyTorch's way of trading device memory for transfers).

    Args:
        pin_memory: accepted for PyTorch's signature (fgrad's CPU arrays are not pinned).
        device_type: accepted for PyTorch's signature.
    """

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack(t: Tensor):
            return (t.device, t.detach().cpu())

        def unpack(packed) -> Tensor:
            dev, t = packed
            return t.to(dev)
        super().__init__(pack, unpack)


class disable_saved_tensors_hooks(contextlib.ContextDecorator):
    """Context manager (or function decorator) under which saved-tensor hooks cannot be used:
    entering saved_tensors_hooks (or save_on_cpu) inside it raises RuntimeError(error_message),
    and so does entering it while such hooks are in force.

    Args:
        error_message: the message of that error.
    """

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message

    def __enter__(self) -> None:
        if _HOOKS:
            raise FgradRuntimeError(self.error_message)
        self.prev = _DISABLED[0]
        _DISABLED[0] = self.error_message

    def __exit__(self, *exc: Any) -> None:
        _DISABLED[0] = self.prev


class allow_mutation_on_saved_tensors(contextlib.ContextDecorator):
    """Context manager: inside it, a Tensor that an op saved for backward may be modified in
    place; the nodes that saved it keep a copy of the old contents (taken just before the
    write), so backward computes the gradients of the values the ops saw.

    Returns (on entering):
        The context object.
    """

    def __enter__(self) -> "allow_mutation_on_saved_tensors":
        if _MUTATION[0] is not None:
            raise FgradRuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
        self.nodes: list = []
        self.live = 0
        _MUTATION[0] = self
        _sync_interceptor()
        return self

    def __exit__(self, *exc: Any) -> None:
        _MUTATION[0] = None
        self.nodes = []
        _sync_interceptor()

    def track(self, out) -> None:
        for o in tree_flatten(out, is_leaf=lambda x: isinstance(x, Tensor))[0]:
            if isinstance(o, Tensor) and o._node is not None:
                self.nodes.append(weakref.ref(op_node(o._node)))
        if len(self.nodes) > 2 * self.live + 1024:  # (a long context: drop the graphs that died)
            self.nodes = [r for r in self.nodes if r() is not None]
            self.live = len(self.nodes)

    def before_write(self, t: Tensor) -> None:
        tv = t._value
        for ref in self.nodes:
            node = ref()
            if node is None or node.primals is None:
                continue
            _keep_old_contents(node, tv)
            if node.out is tv:
                node.out = tv.copy()
                node.saved = [([0], 0, i) if i < 0 else (b, v, i) for b, v, i in node.saved]


# --- edges, versions, hooks over several tensors ------------------------------------------------------

class GradientEdge(NamedTuple):
    """Where a Tensor's gradient enters the graph: its node and the node's output index.
    `torch.autograd.grad` takes one in place of a Tensor among its inputs."""

    node: Any
    output_nr: int
    ownership_token: Any = None


def get_gradient_edge(tensor: Tensor) -> GradientEdge:
    """The GradientEdge of `tensor`: its grad_fn (a leaf's AccumulateGrad) and which output of
    that node it is (its output_nr).

    Args:
        tensor: a Tensor that requires grad.

    Returns:
        GradientEdge(node, output_nr).

    Raises:
        RuntimeError: when `tensor` does not require grad.
    """
    if not isinstance(tensor, Tensor):
        raise FgradTypeError(f"get_gradient_edge expects a Tensor, not {type(tensor).__name__}")
    if not tensor._requires_grad:
        raise FgradRuntimeError("It is not possible to get the gradient edge for a Tensor that does not require "
                                "gradients (set requires_grad=True on the leaf it comes from)")
    node = grad_node(tensor)
    return GradientEdge(op_node(node), _output_number(node))


def increment_version(tensor) -> None:
    """Bump the version counter of `tensor` (or of each Tensor of an iterable), as an in-place
    change made outside fgrad.torch's ops would: a node that saved it then refuses to run.

    Args:
        tensor: a Tensor, or an iterable of Tensors.
    """
    for t in ([tensor] if isinstance(tensor, Tensor) else list(tensor)):
        if not isinstance(t, Tensor):
            raise FgradTypeError(f"increment_version expects Tensors, not {type(t).__name__}")
        t._vbox[0] += 1


class _MultiHandle:
    """The handle of register_multi_grad_hook: removes the hook from every tensor."""

    def __init__(self, handles: list) -> None:
        self.handles = handles

    def remove(self) -> None:
        for h in self.handles:
            h.remove()

    def __enter__(self) -> "_MultiHandle":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


def register_multi_grad_hook(tensors: Sequence[Tensor], fn: Callable, *, mode: str = "all") -> _MultiHandle:
    """A hook over several tensors' gradients in one backward call.

    Args:
        tensors: Tensors (those that do not require grad are ignored).
        fn: with mode="all", `fn(grads)` once per backward()/grad() call that computed a gradient
            of at least one of them, after the call computed them all (None for those it did
            not); with mode="any", `fn(grad)` with the first of them computed in the call.
        mode: "all" or "any".

    Returns:
        A handle whose remove() unregisters the hook.

    Raises:
        ValueError: for another mode.
    """
    if mode not in ("all", "any"):
        raise FgradValueError(f"Expects mode to be one of ('all', 'any') but got {mode!r}")
    tensors = list(tensors)
    state: dict = {}  # id(call's callback list) -> grads of that call (or True: "any" has fired)

    def make(i: int):
        def hook(grad):
            calls = _END_OF_CALL
            if not calls:  # (a hook run outside backward()/grad(): nothing to wait for)
                if mode == "any":
                    fn(grad)
                else:
                    grads = [None] * len(tensors)
                    grads[i] = grad
                    fn(grads)
                return None
            frame = calls[-1]
            key = id(frame)
            if mode == "any":
                if key not in state:
                    state[key] = True
                    frame.append(lambda: state.pop(key, None))
                    fn(grad)
                return None
            grads = state.get(key)
            if grads is None:
                grads = state[key] = [None] * len(tensors)

                def finish():
                    fn(state.pop(key))
                frame.append(finish)
            grads[i] = grad
            return None
        return hook
    handles = [t.register_hook(make(i)) for i, t in enumerate(tensors) if t.requires_grad]
    return _MultiHandle(handles)


# one list per running backward()/grad() call, innermost last: what runs when that call ends
_END_OF_CALL: list = []
