"""Tensor: the PyTorch-style facade on fgrad's primitives and derivative rules.

A Tensor holds a value (a NumPy/CuPy array, or a tracer inside fgrad.grad & co.). Binding a
primitive on Tensors goes through `_tensor_bind`: the primitive runs on the values by normal
dispatch, and in grad mode, when an input requires grad, the recorder fgrad.vjp uses too
(`fgrad.interpreters.record.record_primitive`) runs it and builds the graph node attached to
the result; the facade adds version counters. Nodes are `fgrad.interpreters.backward.Node`s
whose class name is the primitive's grad_fn name (`_names.py`, the `grad_fn` PyTorch prints);
`backward()` walks them with the one engine, `backward_pass`, calling the primitives' own VJP
rules (see autograd.py). `fgrad.torch.autograd.graph.to_jaxpr` shows a graph as a typed Jaxpr.

Memory: nodes reference their parents and saved values only; a Tensor references its node;
a leaf's AccumulateGrad node references the leaf, which caches it through a weakref. So a
graph has no reference cycle and is freed by reference counting as soon as its output dies.

In-place ops compute the new value with the same ops. A result that belongs to a graph is
rebound into the Tensor (the old buffer stays intact for the nodes that saved it); otherwise
the value is written into the existing buffer (so `.data`, views and `.grad` aliases see it)
and the Tensor's version counter is bumped; a node whose VJP later reads a saved value that
was overwritten raises PyTorch's "modified by an inplace operation" error.
"""
from __future__ import annotations

import math
import warnings
import weakref
from sys import getrefcount as _getrefcount

import numpy as np

from ... import numpy as fnp
from ...core.errors import FgradRuntimeError, FgradTypeError
from ...core.trace import Tracer, _state, concrete_value
from ...interpreters.backward import Leaf, Node
from ...interpreters.backward import Unsaved as _Unsaved
from ...interpreters.record import SubgraphOut as _SubgraphOut
from ...interpreters.record import record_call, record_primitive
from ...extend.numpy import normalize_axis
from ...extend.lax import conj as _lax_conj
from ...extend.lax import convert_element_type, select
from . import _dtypes as D
from ._policy import TORCH
from ._device import CPU, device, device_of_value, is_cupy, to_device
from ._meta import MetaArray
from ._format import tensor_repr
from .grad_mode import GRAD_LAYOUT
from ._layout import dense as _dense
from ._names import grad_fn_name

_nd = np.ndarray
_generic = np.generic
_EMPTY: dict = {}
_new = object.__new__

NON_LEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad field "
    "to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you "
    "access the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead. See "
    "github.com/pytorch/pytorch/pull/30531 for more information.")
LEAF_INPLACE_MESSAGE = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_OF_LEAF_INPLACE_MESSAGE = "a view of a leaf Variable that requires grad is being used in an in-place operation."


# --- graph nodes -------------------------------------------------------------------------------

class TensorNode(Node):
    """A primitive applied to Tensors: `grad_fn` of its output. `saved` lists
    (version box, version at save time, input index or -1 for the output)."""

    __slots__ = ("saved",)

    def name(self) -> str:
        return type(self).__name__

    @property
    def next_functions(self) -> tuple:
        return tuple([_edge(p) for p in self.parents])

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at 0x{id(self):x}>"


def _output_number(node) -> int:
    """Which output of its op `node` stands for: output k of a torch op recorded as one call
    (PyTorch's output_nr, e.g. 1 for linalg.svd's S), else 0."""
    if node is None:
        return 0
    if node.prim is OUTPUT_OF:
        return node.params["k"]
    r = getattr(node, "residuals", None)
    return r.k if type(r) is _SubgraphOut else 0


def _edge(p) -> tuple:
    """(node, output number) of the edge to parent `p`, as next_functions shows it: an output
    of a multi-output node is that node with the output's number."""
    if p is not None and p.prim is OUTPUT_OF:
        return (p.parents[0], p.params["k"])
    return (p, _output_number(p))


class _StructuralRule:
    """What the engine reads of a `prim` that is no primitive but a piece of the graph's
    structure (an output of a multi-output op, a write through a view): differentiable, no
    saved output or inputs of its own, every input read. Subclasses set `name`, `vjp`, and
    `vjp_fwd` when the engine hands the rule the node's residuals."""

    name = "structural"
    nondiff = False
    vjp_fwd = None
    saves_output = False
    saved_inputs = None

    @staticmethod
    def unread_inputs(n: int) -> tuple:
        return ()


class _OutputOf(_StructuralRule):
    """`prim` of the node a Tensor holds when it is output k of a torch op with several
    differentiable outputs (split, unbind, topk, svd...). PyTorch records such an op as ONE
    node with outputs 0, 1, ...: that node is this node's one parent, and the Tensor's grad_fn.
    The rule hands the output's cotangent on as entry k of a tuple with one entry per output
    (None elsewhere); the engine sums those tuples entry by entry (autograd._add_ct), and since
    every output's node is a child of the op's node, the op's node runs once, after all of
    them, with the cotangents of all its outputs. Per-output state (tensor hooks, retain_grad,
    autograd.grad's inputs) lives on these nodes, as PyTorch keeps it per output."""

    name = "output_of"

    @staticmethod
    def vjp(needs, ct, out, *primals, k: int, n: int) -> tuple:
        """The cotangent `ct` of output `k` (of `n`) as the op's node receives it."""
        cts = [None] * n
        cts[k] = ct
        return (tuple(cts),)


OUTPUT_OF = _OutputOf()


def op_node(node):
    """The node users see for `node` (grad_fn): a multi-output op's node for one of its outputs'
    nodes, else `node` itself (None stays None)."""
    if node is not None and node.prim is OUTPUT_OF:
        return node.parents[0]
    return node


class CopySlices(TensorNode):
    """The history of a tensor written in place through one of its views."""

    __slots__ = ()

    def name(self) -> str:
        return "torch::autograd::CopySlices"


_NODE_CLASSES: dict = {"CopySlices": CopySlices}  # (a torch op named CopySlices gets the class above)


def node_class(name: str) -> type:
    """One TensorNode subclass per backward name (PowBackward0, MulBackward0, ...)."""
    cls = _NODE_CLASSES.get(name)
    if cls is None:
        cls = _NODE_CLASSES[name] = type(name, (TensorNode,), {"__slots__": ()})
    return cls


_PRIM_NODE: dict = {}


def _prim_node_class(prim) -> type:
    cls = _PRIM_NODE.get(prim)
    if cls is None:
        cls = _PRIM_NODE[prim] = node_class(grad_fn_name(prim.name))
    return cls


class AccumulateGrad(Leaf):
    """Where a leaf's gradient lands. Holds the leaf strongly; the leaf holds it weakly."""

    __slots__ = ("variable",)

    def __init__(self, variable) -> None:
        Leaf.__init__(self)
        self.variable = variable

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    next_functions = ()

    def __repr__(self) -> str:
        return f"<AccumulateGrad object at 0x{id(self):x}>"


# AccumulateGrad nodes by id, so the engine's {id(leaf): ct} result maps back to leaves.
ACC_NODES: "weakref.WeakValueDictionary[int, AccumulateGrad]" = weakref.WeakValueDictionary()


def _acc_node(t) -> AccumulateGrad:
    ref = t._acc
    node = ref() if ref is not None else None
    if node is None:
        node = AccumulateGrad(t)
        t._acc = weakref.ref(node)
        ACC_NODES[id(node)] = node
    return node


def grad_node(t):
    """The node gradients of `t` flow into: its grad_fn, or its leaf's AccumulateGrad (a view
    whose base was modified in place since gets its grad_fn re-derived first, as grad_fn)."""
    if t._view is not None and t._view[0]._node is not t._view[1]:
        refresh_view(t)
    return t._node if t._node is not None else _acc_node(t)


def live_node(t):
    """The node standing for `t` in a graph: its grad_fn, or its leaf's AccumulateGrad when
    one exists (a leaf no live recorded op used has none), else None."""
    if t._node is not None:
        return t._node
    ref = t._acc
    return ref() if ref is not None else None


# --- hooks ---------------------------------------------------------------------------------------

class RemovableHandle:
    __slots__ = ("_hooks", "_hook")

    def __init__(self, hooks: list, hook) -> None:
        self._hooks, self._hook = hooks, hook

    def remove(self) -> None:
        try:
            self._hooks.remove(self._hook)
        except ValueError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def torch_convention(ct):
    """A cotangent converted between PyTorch's complex convention and the engine's (JAX's):
    PyTorch's gradient of a complex value is the conjugate of JAX's (for a real loss, z.grad
    is df/dx + i df/dy), so cotangents are conjugated where they enter (grad_outputs) and
    where user code sees them (.grad, autograd.grad, hooks, Function.backward); real ones pass
    unchanged. Conjugation is its own inverse, so this converts either way."""
    if isinstance(ct, Tensor):
        return _boundary_call("ConjBackward0", _lax_conj, (ct,)) if ct._value.dtype.kind == "c" else ct
    return _lax_conj(ct) if ct.dtype.kind == "c" else ct


class _TensorHook:
    """A user hook: sees the gradient as a Tensor, may return a replacement. A hook on a
    graph node (`engine_side`) receives the engine's cotangent: the user sees it, and returns
    it, in PyTorch's convention (leaf hooks get theirs converted already)."""

    __slots__ = ("fn", "engine_side")

    def __init__(self, fn, engine_side: bool = False) -> None:
        self.fn, self.engine_side = fn, engine_side

    def __call__(self, ct):
        boxed = ct if isinstance(ct, Tensor) else _make(ct)
        new = self.fn(torch_convention(boxed) if self.engine_side else boxed)
        if new is None:
            return None
        if self.engine_side:
            new = torch_convention(new if isinstance(new, Tensor) else _make(new))
        if isinstance(ct, Tensor):
            return new if isinstance(new, Tensor) else _make(new)
        return new._value if isinstance(new, Tensor) else new


class _RetainGrad:
    """retain_grad(): stores the gradient arriving at a non-leaf's node into its .grad.
    Refers to the Tensor weakly (no cycle through the node)."""

    __slots__ = ("ref",)

    def __init__(self, t) -> None:
        self.ref = weakref.ref(t)

    def __call__(self, ct):
        t = self.ref()
        if t is not None:
            accumulate_grad(t, torch_convention(ct))   # .grad is in PyTorch's convention
        return None


def _add_node_hook(node, hook) -> RemovableHandle:
    hooks = node.hooks
    if hooks is None:
        hooks = node.hooks = []
    # retain_grad's hook stays last, so the retained gradient is the hooked one (as PyTorch)
    if hooks and isinstance(hooks[-1], _RetainGrad) and not isinstance(hook, _RetainGrad):
        hooks.insert(len(hooks) - 1, hook)
    else:
        hooks.append(hook)
    return RemovableHandle(hooks, hook)


def accumulate_grad(t, ct, owned: bool = False) -> None:
    """t.grad = ct if t.grad is None else t.grad + ct (in place when no graph is involved,
    as PyTorch's AccumulateGrad does). `owned`: nothing but the caller refers to the NumPy
    array ct (sole_owner), so a first gradient may keep it instead of copying it, as PyTorch's
    AccumulateGrad steals a gradient whose use count says nothing else holds it."""
    g = t._grad
    if isinstance(ct, Tensor):  # create_graph: gradients carry their own graph
        t._grad = _make(ct._value, ct._node, ct._requires_grad) if g is None else g + ct
        return
    if g is None:
        if type(ct) is not _nd:
            t._grad = _make(ct.copy() if is_cupy(ct) else ct)
            return
        v = t._value
        if type(v) is _nd and not v.flags.c_contiguous and v.shape == ct.shape:
            # PyTorch's gradient layout contract: a dense parameter's first gradient has its
            # strides (a channels-last weight, a transposed matrix); relaxed, the incoming layout
            if GRAD_LAYOUT[0] and _dense(v):
                out = np.empty_like(v, dtype=ct.dtype)
                out[...] = ct
                t._grad = _make(out)
                return
            if not GRAD_LAYOUT[0]:
                t._grad = _make(ct.copy(order="K"))
                return
        t._grad = _make(ct if owned and ct.flags.c_contiguous else ct.copy())
        return
    gv = g._value
    if g._node is None and _writable(gv) and gv.shape == ct.shape and gv.dtype == ct.dtype:
        gv += ct
        g._vbox[0] += 1
    else:
        t._grad = g + _make(ct)


def _counts(a) -> tuple:
    base = a.base
    return _getrefcount(a), (0 if base is None else _getrefcount(base))


def sole_owner(a) -> bool:
    """Whether the caller's one local variable is the only reference to the NumPy array `a`
    and to the memory it shows: `a` owns its writable memory, or is a whole view (a
    transpose's, a reshape's) of an array only `a` refers to; no other array views it, no
    dict, list, graph node, hook or user's Tensor holds either. Call it as sole_owner(local),
    with that local the caller's only name for the array; the counts it compares with are
    measured at import through the same calls."""
    if type(a) is not _nd or not a.flags.writeable:
        return False
    base = a.base
    if base is None:
        return a.flags.owndata and _counts(a)[0] == _SOLE_REFS
    if type(base) is not _nd or base.base is not None or not base.flags.owndata or base.nbytes != a.nbytes:
        return False
    del base  # (counted only through a.base)
    return _counts(a) == (_SOLE_REFS, _BASE_REFS)


def _measure_counts() -> tuple:
    view = np.empty((2, 3)).T  # (its base: referred to by the view alone)
    return _counts(view)


_SOLE_REFS, _BASE_REFS = _measure_counts()
_SOLE_REFS += 1  # (sole_owner's own parameter, on top of the caller's local)


# --- binding primitives on Tensors -----------------------------------------------------------------

def _make(value, node=None, requires_grad=False, vbox=None, into=None):
    """A Tensor around `value` (internal constructor: no conversion, no checks); with `into`,
    that newly allocated instance (of Tensor or a subclass) is initialised instead."""
    t = _new(Tensor) if into is None else into
    t._value = value
    t._node = node
    t._requires_grad = requires_grad
    t._grad = None
    t._vbox = [0] if vbox is None else vbox
    t._acc = None
    t._retain = None
    t._hooks = None
    t._view = None
    return t


def _view_of(out, vals, args):
    """The Tensor input whose storage `out` (a NumPy view) looks into, or None."""
    base = out.base
    for v, a in zip(vals, args):
        if type(v) is _nd and (v is base or v.base is base or v is out) and isinstance(a, Tensor):
            return a
    return None


def mark_view(t, src) -> None:
    """`t` is a view into `src`'s storage: they share the version counter, and `t` remembers
    the root base (PyTorch's `._base`) and the base's grad_fn it was derived from."""
    t._vbox = src._vbox
    base = src._view[0] if src._view is not None else src
    t._view = [base, base._node, None]


def _check_devices(args, vals):
    """Tensors of one op must live on one device (PyTorch's RuntimeError otherwise); CPU 0-d
    values next to GPU ones are moved, as PyTorch allows CPU scalars."""
    devs = {}
    for a, v in zip(args, vals):
        if isinstance(a, Tensor) and not isinstance(v, Tracer) and not isinstance(v, _generic):
            d = device_of_value(v)
            if d.type == "cpu" and v.ndim == 0:
                continue
            devs.setdefault(str(d), d)
    if len(devs) > 1:
        names = sorted(devs, key=lambda s: s == "cpu")
        raise FgradRuntimeError(f"Expected all tensors to be on the same device, but found at least two "
                           f"devices, {names[0]} and {names[1]}! Move them with .to(device) first.")
    if devs and next(iter(devs.values())).type == "cuda":
        dev = next(iter(devs.values()))
        vals = [to_device(v, dev) if type(v) is _nd else v for v in vals]
    return vals


# How many torch.func transforms whose results join the autograd graph are running (their
# own torch op differentiates them through their arguments: see _func._recorded)
TRANSFORMS = [0]

# While a forward-AD dual level is open or saved-tensor hooks are in force (torch.autograd's
# forward_ad and graph), the innermost op interceptor (forward_ad.install): an object whose
# `call(name, fn, args, kwargs)`, `bind(prim, args, params, cls)` and `inplace(t, new)` the
# boundary, `_tensor_bind` and `commit_inplace` hand each op to (None otherwise: one test).
FORWARD_AD = [None]

# The boundary's binding of a primitive whose operands or result are bfloat16 & co. (computed in
# float32, rounded as PyTorch rounds: _boundary._bind_low; set when _boundary loads)
LOW_BIND = [None]


def refuse_captured(tensors) -> None:
    """Inside such a transform, a Tensor that requires grad and is not an argument (closed
    over: its value is concrete, the arguments' are the transform's tracers) would get no
    gradient from the transform's node: say so rather than drop its gradient."""
    for t in tensors:
        if isinstance(t, Tensor) and t._requires_grad and not isinstance(t._value, Tracer):
            raise FgradRuntimeError(
                f"a torch.func transform's function used a Tensor of shape {tuple(t._value.shape)} that requires "
                "grad but is not one of the transform's arguments (it is closed over); fgrad.torch.func "
                "differentiates a transform's results through its arguments only, so this Tensor would get no "
                "gradient. Pass it as an argument (for a module: torch.func.functional_call(model, params, "
                "inputs) with params an argument), or close over t.detach() if it needs no gradient.")


def _low_bind(prim, vals, params) -> bool:
    """Whether a primitive's operands or (a conversion's) result are ml_dtypes' (bfloat16 & co.)."""
    for v in vals:
        if (type(v) is _nd or isinstance(v, _generic)) and (v.dtype.kind == "V" or (v.dtype.itemsize == 1
                                                                          and v.dtype.kind == "f")):
            return True
    new = params.get("new_dtype") if params else None
    return new is not None and prim.name == "convert_element_type" and (
        new.kind == "V" or (new.itemsize == 1 and new.kind == "f"))


def _tensor_bind(prim, args, params, cls=None):
    """A single-primitive torch op's fast path: run `prim` on the Tensors' values; in grad
    mode, when an input requires grad, the recorder (`record_primitive`, shared with
    fgrad.vjp) runs it and builds the node, of class `cls` (the op's grad_fn; by default the
    primitive's, _names.py), and the facade adds what is PyTorch's own: version counters of
    the saved values."""
    if FORWARD_AD[0] is not None:  # a dual level or saved-tensor hooks: the interceptor runs it (forward_ad.install)
        return FORWARD_AD[0].bind(prim, args, params, cls)
    vals = []
    grad = False
    plain = True
    for a in args:
        if isinstance(a, Tensor):
            if a._view is not None and a._view[0]._node is not a._view[1]:
                refresh_view(a)  # its base was modified in place since its grad_fn was derived
            v = a._value
            if a._requires_grad:
                grad = True
        else:
            v = a
        if plain and type(v) is not _nd and not isinstance(v, _generic):
            plain = False
        vals.append(v)
    if D.ML_LOADED[0] and _low_bind(prim, vals, params):
        return LOW_BIND[0](prim, args, params, cls)
    if not plain:
        if any(type(v) is MetaArray for v in vals):  # the meta device: shapes and dtypes, nothing computed
            from ._meta_ops import meta_bind  # (_meta_ops builds on this module: a cycle, resolved at call time)
            return meta_bind(prim, args, vals, params, cls, grad and _state.grad_enabled)
        vals = _check_devices(args, vals)
    state = _state
    if not grad or not state.grad_enabled:
        out = state.trace.process_primitive(prim, vals, params)
        t = _make(out)
        if type(out) is _nd and out.base is not None:
            src = _view_of(out, vals, args)
            if src is not None:
                mark_view(t, src)
        return t
    if TRANSFORMS[0]:
        refuse_captured(args)
    # the node each input links to: its grad_fn, a leaf's AccumulateGrad, or None
    parents = tuple([(a._node if a._node is not None else _acc_node(a))
                     if isinstance(a, Tensor) and a._requires_grad else None for a in args])
    # The naming hook: the node's class is its grad_fn (MulBackward0); custom_vjp and
    # autograd.Function nodes are named after the user's function.
    cls = cls or _PRIM_NODE.get(prim) or _prim_node_class(prim)
    if params and "call" in params:
        name = getattr(getattr(params["call"], "fun", None), "_backward_name", None)
        if name:
            cls = node_class(name)
    # The recorder runs on top of the current trace. On traced values (Tensors inside
    # fgrad.grad & co.) that trace must see the primitive itself, not its vjp_fwd (fwd=False).
    # Positional arguments: (parent, prim, primals, params, parents, node_type, fwd).
    out, node = record_primitive(
        state.trace, prim, vals, params, parents, cls,
        plain or prim.vjp_fwd is None or not any(isinstance(v, Tracer) for v in vals))
    src = _view_of(out, vals, args) if type(out) is _nd and out.base is not None else None
    t = _make(out)
    if src is not None:
        mark_view(t, src)
    if node is None:
        return t
    # each saved Tensor's version now; a rule reading one changed later raises (saved_values)
    saved = [(a._vbox, a._vbox[0], i) for i, a in enumerate(args) if isinstance(a, Tensor)]
    t._node = node
    t._requires_grad = True
    box = t._vbox
    saved.append((box, box[0], -1))
    node.saved = saved
    return t


# --- saved values that were overwritten in place ------------------------------------------------------

def _type_name(v) -> str:
    try:
        dt = D.of_np(v.dtype)
    except (KeyError, AttributeError):
        return type(v).__name__
    return ("torch.cuda." if is_cupy(v) else "torch.") + dt._torch


def version_message(node, value, index: int, current: int, expected: int) -> str:
    shape = list(getattr(value, "shape", ()))
    what = f"[{_type_name(value)} {shape}]"
    producer = node if index < 0 else node.parents[index]
    if isinstance(producer, TensorNode):
        what += f", which is output 0 of {producer.name()},"
    return ("one of the variables needed for gradient computation has been modified by an inplace "
            f"operation: {what} is at version {current}; expected version {expected} instead. "
            "Hint: the in-place operation (x.add_(), x[i] = ..., an optimizer step) ran between "
            "the forward pass and backward(); use an out-of-place op (x = x + ...) or clone() "
            "the tensor before modifying it.")


class ModifiedValue:
    """Stands for a saved value that was overwritten in place: its shape and dtype can be
    read (rules need them), its contents cannot -- reading them raises the version error.
    So only a VJP that really needs the overwritten value fails, as in PyTorch."""

    __slots__ = ("shape", "dtype", "ndim", "size", "message", "original")
    __array_priority__ = 10000

    def __init__(self, value, message: str) -> None:
        self.original = value  # (the buffer itself, now overwritten: for aliasing checks only)
        self.shape, self.dtype = tuple(value.shape), value.dtype
        self.ndim, self.size, self.message = len(self.shape), int(np.prod(self.shape)), message

    def _fail(self, *args, **kwargs):
        raise FgradRuntimeError(self.message, doc="inplace-saved")

    __array__ = __array_ufunc__ = __array_function__ = __float__ = __int__ = __bool__ = _fail
    __getitem__ = __iter__ = __len__ = _fail

    def __getattr__(self, name):
        raise FgradRuntimeError(object.__getattribute__(self, "message"))


def saved_values(node):
    """(out, primals) of `node`, with values overwritten since they were saved replaced by
    ModifiedValue stand-ins."""
    out, primals = node.out, node.primals
    for box, ver, i in node.saved:
        if box[0] != ver:
            primals = list(primals)
            break
    else:
        return out, primals
    for box, ver, i in node.saved:
        if box[0] != ver:
            v = out if i < 0 else primals[i]
            m = ModifiedValue(v, version_message(node, v, i, box[0], ver))
            if i < 0:
                out = m
            else:
                primals[i] = m
    return out, tuple(primals)


# --- in-place operations ----------------------------------------------------------------------------

def check_inplace(t) -> None:
    """PyTorch's rule: a leaf that requires grad (or a view of one) cannot be modified in
    place while grad mode is on -- use `with torch.no_grad():` (as optimizers do)."""
    if not _state.grad_enabled:
        return
    if t._view is not None:
        base = t._view[0]
        if base._node is None and base._requires_grad:
            raise FgradRuntimeError(VIEW_OF_LEAF_INPLACE_MESSAGE)
    if t._requires_grad and t._node is None:
        raise FgradRuntimeError(LEAF_INPLACE_MESSAGE, doc="inplace-leaf")


_CATEGORY_NAME = {"b": "Bool", "u": "Byte", "i": "Long", "f": "Float", "c": "ComplexFloat"}
OVERLAP_MESSAGE = ("unsupported operation: more than one element of the written-to tensor refers to a single "
                   "memory location. Please clone() the tensor before performing the operation.")


def _writable(v) -> bool:
    return (type(v) is _nd and v.flags.writeable) or is_cupy(v)


MULTI_VIEW_ADVICE = ("This view is the output of a function that returns multiple views. Such functions do "
                     "not allow the output views to be modified inplace. You should replace the inplace "
                     "operation by an out-of-place one.")


def view_positions(view, base):
    """The flat (C-order) indices into `base`'s storage of each element of `view`, a NumPy
    view into it; None where that cannot be read from the strides."""
    if type(view) is not _nd or type(base) is not _nd or view.dtype != base.dtype \
            or not base.flags.c_contiguous:
        return None
    size = view.dtype.itemsize
    offset = view.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    if offset % size or any(st % size for st in view.strides):
        return None
    flat = np.arange(base.size, dtype=np.int64)
    return np.lib.stride_tricks.as_strided(flat[offset // size:], view.shape,
                                           [st // size * 8 for st in view.strides]).copy()


def _boundary_call(name, fn, args, saves=None):
    """The facade's boundary (`_boundary.call`: one node `name`; `saves` as there), which
    imports this module: a cycle, resolved at call time."""
    from ._boundary import call  # (a cycle: _boundary imports this module for Tensor)
    return call(name, fn, args, saves=saves)


def _from_base(base, pos, name: str):
    """The graph of a view: base's elements at `pos` (a gather, differentiable), one node
    `name`."""
    # (a gather's gradient reads no value of the base: PyTorch's AsStridedBackward0 saves
    # only the geometry, so later writes into the base leave this view's graph valid)
    return _boundary_call(name, lambda b: fnp.take(fnp.reshape(b, (-1,)), pos), (base,), saves=())


def refresh_view(t) -> None:
    """Re-derive a view's grad_fn from its base's current one (the base was modified in
    place, through this view or another), as PyTorch regenerates a view's grad_fn."""
    base, _, multi = t._view
    if not _state.grad_enabled:
        return
    if multi is not None and (base._node is not None or base._requires_grad):
        raise FgradRuntimeError(f"Output 0 of {multi} is a view and its base or another view of its base has been "
                           "modified inplace. " + MULTI_VIEW_ADVICE)
    t._view[1] = base._node
    if base._node is None and not base._requires_grad:
        return
    pos = view_positions(t._value, base._value)
    if pos is None:
        return
    g = _from_base(base, pos, "AsStridedBackward0")
    t._node, t._requires_grad = g._node, g._requires_grad
    if t._retain is not None:
        _add_node_hook(t._node, t._retain)


def _keep_old_contents(node, tv) -> None:
    """Before `tv` is overwritten in place: the node of the op writing it keeps a copy of the
    contents it saved (as PyTorch saves the original self), under a version box of its own."""
    if node is None or node.primals is None:
        return
    copied = [i for i, p in enumerate(node.primals) if p is tv]
    if copied and getattr(node.prim, "name", None) == "torch_op":
        # (a torch op's node lists in `saved` the inputs its backward reads, as the op declared
        # them: copy_'s and the fills' read none of them, so nothing needs keeping)
        read = {e[2] for e in node.saved}
        copied = [i for i in copied if i in read]
    if copied:
        node.primals = tuple(p.copy() if i in copied else p for i, p in enumerate(node.primals))
        node.saved = [([0], 0, i) if i in copied else (b, v, i) for b, v, i in node.saved]
        if getattr(node.prim, "name", None) == "torch_op":
            # a torch op's node pulls back through its recorded subgraph, whose own saved
            # values are the inputs it ran on: where it reads `tv`, record it again on the copy
            res = node.residuals
            if res.sub.keeps(tv):
                sub = record_call(res.sub.fn, [node.primals[i] for i in res.where], False)[2]
                node.residuals = type(res)(sub, res.k, res.where)


def _commit_view(t, new, name: str = "CopyBackwards"):
    """An in-place op on a view in a graph: the base's storage is written (every view sees
    it) and its history becomes CopySlices(old base, new values); the view's grad_fn is
    re-derived from the base."""
    base, _, multi = t._view
    if multi is not None:
        raise FgradRuntimeError(f"Output 0 of {multi} is a view and is being modified inplace. " + MULTI_VIEW_ADVICE)
    pos = view_positions(t._value, base._value)
    if pos is None:
        raise FgradRuntimeError(f"an in-place operation on this view of a tensor of shape {list(base._value.shape)} "
                           "cannot be recorded for autograd (its layout is not a strided view of its "
                           "base); clone() the view first, or write to the base instead.")
    _keep_old_contents(new._node, t._value)
    shape = tuple(base._value.shape)
    op = new._node
    view_node = t._node

    def copy_slices(b, n):
        return fnp.reshape(fnp.at_set(fnp.reshape(b, (-1,)), pos, n), shape)
    # (CopySlices is linear: its gradient reads neither the old base nor the new values, which
    # PyTorch does not save either, so a later write into the base -- or into `new`, often a
    # slice of the same base -- does not invalidate it)
    res = _boundary_call("CopySlices", copy_slices, (base, new), saves=())
    if res._node is not None and (op is None or (op.prim is not OUTPUT_OF and op.parents
                                                 and op.parents[0] is view_node)):
        # (a constant written by copy_ is CopyBackwards' second input, which needs no gradient;
        # fill_ and zero_ have none)
        extra = (None,) if op is None and name == "CopyBackwards" else ()
        res._node = _wrap_op(res._node, base, op, pos, shape, res._value, extra)
    commit_inplace(base, res)
    refresh_view(t)
    return t


class _CopySlicesRule(_StructuralRule):
    """`prim` of PyTorch's CopySlices over an in-place op on a view: the node wraps the op's
    own node (its residuals, whose first input is the view) and stands in the graph for both, so its
    next_functions are the base's old history followed by the op's other inputs' edges. Its
    rule takes the base's cotangent at the view's positions (`pos`, flat indices into the
    base of `shape`), runs the op's rule on it, and puts the op's gradient for the view back
    at those positions (autograd._copy_slices_vjp). The residuals are (the op's node,
    `recorded`): `recorded` is the same write as a torch op over (base, op's result), which
    to_jaxpr shows."""

    name = "copy_slices"
    vjp_fwd = True  # (the engine hands the rule the node's residuals, the op's node, and frees them with it)

    @staticmethod
    def vjp(needs, ct, out, *primals, residuals, pos, shape) -> list:
        """The gradients for the base's old history and the op's other inputs (`residuals`:
        the op's node, None for a constant written, and `recorded`)."""
        from .autograd import _copy_slices_vjp  # (autograd imports this module)
        return _copy_slices_vjp(needs, ct, residuals[0], pos, shape)


COPY_SLICES = _CopySlicesRule()


def _wrap_op(recorded, base, op, pos, shape, value, extra: tuple = ()):
    """The CopySlices node over `op` (None: a constant was written into the view, and `extra`
    are the edges of the in-place op's other inputs)."""
    node = _new(CopySlices)
    node.prim = COPY_SLICES
    node.params = {"pos": pos, "shape": shape}
    node.parents = (grad_node(base) if base._requires_grad else None,) + (op.parents[1:] if op is not None else extra)
    node.primals = ()
    node.out = _Unsaved.of(value)
    node.hooks = None
    # (a backward pass without retain_graph frees both with the node's values)
    node.residuals = (op, recorded)
    node.saved = ()
    return node


def commit_inplace(t, new, name: str = "CopyBackwards"):
    """Make `new` (the op's result, a Tensor) the contents of `t`; returns `t`. A `new` without
    history written over a tensor with one gets a node `name` (PyTorch's grad_fn of the
    in-place op: CopyBackwards for copy_, FillBackward2, ZeroBackward0, ...) over t's old
    history, which it passes no gradient."""
    if FORWARD_AD[0] is not None:  # an op interceptor sees the write first (forward_ad.install)
        FORWARD_AD[0].inplace(t, new)
    nv = new._value
    tv = t._value
    if nv.dtype != tv.dtype:
        if D._CATEGORY[nv.dtype.kind] > D._CATEGORY[tv.dtype.kind]:
            raise FgradRuntimeError(f"result type {_CATEGORY_NAME[nv.dtype.kind]} can't be cast to the "
                               f"desired output type {_CATEGORY_NAME[tv.dtype.kind]}")
        dt = tv.dtype
        new = _boundary_call("ToCopyBackward0", lambda v: convert_element_type(v, dt), (new,))
        nv = new._value
    if tuple(nv.shape) != tuple(tv.shape):
        raise FgradRuntimeError(f"output with shape {list(tv.shape)} doesn't match the broadcast shape "
                           f"{list(nv.shape)}")
    if type(tv) is _nd and any(st == 0 and n > 1 for st, n in zip(tv.strides, tv.shape)):
        raise FgradRuntimeError(OVERLAP_MESSAGE)  # an expanded view: one element stands for several
    box = t._vbox
    node = new._node
    grad = _state.grad_enabled
    if t._view is not None and grad and (node is not None or t._requires_grad
                                         or t._view[0]._node is not t._view[1]):
        return _commit_view(t, new, name)
    if node is None and t._node is not None and grad:
        # a constant written over a graph tensor: it stays in the graph, with zero gradient
        # to its old history (PyTorch's CopyBackwards/FillBackward)
        new = _boundary_call(name, lambda old, c: select(np.bool_(True), c, old), (t, new), saves=())
        nv, node = new._value, new._node
    if node is None:
        if _writable(tv):
            tv[...] = nv
        else:
            t._value = nv
        box[0] += 1
        return t
    old = t._node
    t._node = node
    t._requires_grad = True
    box[0] += 1
    if type(tv) is _nd and tv.flags.writeable:
        # Written into the storage, so views of `t` see it. The new node's own saved copy of
        # the old contents (if it kept one) is taken before the write and stays valid.
        _keep_old_contents(node, tv)
        node.saved = [(box, box[0], i) if i < 0 else e for e in node.saved for i in [e[2]]]
        tv[...] = nv
    else:
        # A traced or read-only value: rebind. The old buffer stays intact for the nodes that
        # saved it, so the new node's references to it stay valid; `t` gets a new box.
        t._value = nv
        new_box = [box[0]]
        node.saved = [(new_box, new_box[0], i) if i < 0 else ((b, b[0], i) if b is box else (b, v, i))
                      for b, v, i in node.saved]
        t._vbox = new_box
    if t._retain is not None:
        if old is not None and old.hooks and t._retain in old.hooks:
            old.hooks.remove(t._retain)
        _add_node_hook(node, t._retain)
    return t


# --- the Tensor ----------------------------------------------------------------------------------------

class TensorBase:
    """What every Tensor is apart from its torch methods: storage, autograd state, metadata
    and the Python protocols. The public class, `Tensor` at the end of this module, adds the
    methods of _methods.py's table in its class body; those methods are the ops of
    _ops*.py, which are imported while this module is still being built and so see this
    class as `Tensor` (for isinstance only: every tensor is made by `_make`, an instance of
    the public class or a subclass of it)."""

    # _view: None, or [base, base's grad_fn when this view's grad_fn was derived, the name of
    # the multi-view function that made it (unbind, split...) or None] for a Tensor whose
    # value is a NumPy view into another Tensor's (its base's) storage
    __slots__ = ("_value", "_node", "_requires_grad", "_grad", "_vbox", "_acc", "_retain", "_hooks", "_view",
                 "__weakref__")
    __array_priority__ = 1000

    def __init__(self, *data, dtype=None, device=None, requires_grad: bool = False) -> None:
        """`fgrad.torch.Tensor(data)` (float32 by default, like torch.Tensor) or `fgrad.torch.Tensor(*sizes)`."""
        # creation imports Tensor from this module: a cycle, resolved at call time
        from .creation import _legacy_tensor_value
        _make(_legacy_tensor_value(data, dtype, device), into=self)
        if requires_grad:
            self.requires_grad_(True)

    # --- autograd attributes ---
    @property
    def requires_grad(self) -> bool:
        """Whether operations on this tensor are recorded for autograd (PyTorch's; settable
        on leaves, as requires_grad_).
        """
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag) -> None:
        self.requires_grad_(flag)

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        """Set requires_grad in place (PyTorch's): only on leaves, and only for floating-point
        or complex dtypes.
        
        Args:
            requires_grad: the new flag.
        
        Returns:
            self.
        """
        requires_grad = bool(requires_grad)
        if self._node is not None:
            if not requires_grad:
                raise FgradRuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want to use a "
                    "computed variable in a subgraph that doesn't require differentiation use "
                    "var_no_grad = var.detach().")
            return self
        if requires_grad and self._value.dtype.kind not in "fcV":
            raise FgradRuntimeError(f"only Tensors of floating point dtype can require gradients (this "
                               f"tensor has dtype {self.dtype}; convert it with .float() first)")
        self._requires_grad = requires_grad
        return self

    @property
    def grad(self) -> Tensor | None:
        """The gradient accumulated by backward(), or None (PyTorch's; a non-leaf's grad is None
        unless retain_grad() was called, with PyTorch's warning). Settable and deletable.
        """
        if self._node is not None and self._retain is None and self._grad is None:
            warnings.warn(NON_LEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise FgradTypeError(f"assigned grad expected to be a Tensor or None but got grad of "
                                f"type {type(value).__name__}")
            if tuple(value._value.shape) != tuple(self._value.shape):
                raise FgradRuntimeError(f"assigned grad has data of a different size: grad shape "
                                   f"{tuple(value._value.shape)}, tensor shape {tuple(self._value.shape)}")
            if value._value.dtype != self._value.dtype:
                raise FgradRuntimeError(f"assigned grad has data of a different type: grad dtype "
                                   f"{value.dtype}, tensor dtype {self.dtype}")
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        self._grad = None

    @property
    def grad_fn(self):
        """The autograd node that made this tensor (e.g. MulBackward0), or None for a leaf
        (PyTorch's).
        """
        if self._view is not None and self._view[0]._node is not self._view[1]:
            refresh_view(self)
        node = self._node
        if node is not None and node.prim is OUTPUT_OF:
            return node.parents[0]
        return node

    @property
    def is_leaf(self) -> bool:
        """True for tensors made by the user rather than by a recorded operation (PyTorch's).
        """
        return self._node is None

    @property
    def retains_grad(self) -> bool:
        """Whether retain_grad() was called on this non-leaf tensor (PyTorch's).
        """
        return self._retain is not None

    def retain_grad(self) -> None:
        """Keep this non-leaf tensor's gradient in .grad during backward (PyTorch's; a no-op on
        a leaf that requires grad).
        """
        if self._node is None:
            if not self._requires_grad:
                raise FgradRuntimeError("can't retain_grad on Tensor that has requires_grad=False")
            return
        if self._retain is None:
            self._retain = _RetainGrad(self)
            _add_node_hook(self._node, self._retain)

    def register_hook(self, hook) -> RemovableHandle:
        """`hook(grad) -> Tensor or None` runs when the gradient w.r.t. this tensor is computed."""
        if not self._requires_grad:
            raise FgradRuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._node is not None:
            return _add_node_hook(self._node, _TensorHook(hook, engine_side=True))
        if self._hooks is None:
            self._hooks = []
        h = _TensorHook(hook)
        self._hooks.append(h)
        return RemovableHandle(self._hooks, h)

    @property
    def _version(self) -> int:
        return self._vbox[0]

    def backward(self, gradient=None, retain_graph=None, create_graph: bool = False, inputs=None) -> None:
        """Accumulate d(self)/d(leaf) into every leaf's .grad, as ``Tensor.backward``.

        Args:
            gradient: the vector the Jacobian is contracted with, of self's shape; None for a
                scalar (which means 1), required otherwise.
            retain_graph: keep the graph's saved values for another backward pass (default:
                `create_graph`).
            create_graph: record the backward pass, so the gradients can be differentiated
                again.
            inputs: accumulate only into these leaves; default: every leaf that requires grad.

        Returns:
            None (see ``fgrad.torch.autograd.backward``).

        Example:
            >>> import fgrad.torch as torch
            >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
            >>> y = x * x
            >>> y.backward(gradient=torch.tensor([1.0, 10.0]))
            >>> x.grad
            tensor([ 2., 40.])
        """
        # autograd imports Tensor from this module: a cycle, resolved at call time
        from .autograd import backward
        backward((self,), None if gradient is None else (gradient,), retain_graph, create_graph,
                 inputs=inputs)

    # --- values and metadata ---
    @property
    def data(self) -> "Tensor":
        """A Tensor sharing this one's storage, outside any graph."""
        return _make(self._value)

    @data.setter
    def data(self, value) -> None:
        if not isinstance(value, Tensor):
            raise FgradTypeError(f"Tensor.data must be set to a Tensor, not {type(value).__name__}")
        self._value = value._value

    def detach(self) -> "Tensor":
        """A Tensor sharing storage and version counter, with no grad history."""
        return _make(self._value, None, False, self._vbox)

    def detach_(self) -> "Tensor":
        """Detach this tensor from its graph in place: no grad_fn, requires_grad False
        (PyTorch's).
        
        Returns:
            self.
        """
        self._node = None
        self._requires_grad = False
        return self

    @property
    def shape(self) -> "Size":
        """The sizes, as a torch.Size (PyTorch's).
        """
        return Size(self._value.shape)

    def size(self, dim=None):
        """The sizes (PyTorch's): a torch.Size, or the size of dimension `dim`.
        
        Args:
            dim: a dimension (negative counts from the end), or None.
        
        Returns:
            A torch.Size, or an int when dim is given.
        """
        shape = self._value.shape
        if dim is None:
            return Size(shape)
        return shape[_dim(dim, len(shape))]

    def dim(self) -> int:
        """The number of dimensions (PyTorch's; ndimension is the same method).
        
        Returns:
            An int.
        """
        return self._value.ndim

    ndimension = dim

    @property
    def ndim(self) -> int:
        """The number of dimensions (PyTorch's).
        """
        return self._value.ndim

    def numel(self) -> int:
        """The number of elements (PyTorch's; nelement is the same method).
        
        Returns:
            An int.
        """
        return math.prod(self._value.shape)

    nelement = numel

    @property
    def dtype(self):
        """The element type, a torch dtype (PyTorch's).
        """
        return D.of_np(self._value.dtype)

    @property
    def device(self) -> device:
        """Where the values live: cpu, or a CUDA device for a CuPy-backed tensor (PyTorch's).
        """
        v = self._value
        return CPU if type(v) is _nd else device_of_value(v)

    @property
    def is_cuda(self) -> bool:
        """Whether the tensor lives on a CUDA device (PyTorch's).
        """
        return self.device.type == "cuda"

    @property
    def is_meta(self) -> bool:
        """Whether the tensor is on the meta device: a shape and a dtype, no values (PyTorch's).
        """
        return type(self._value) is MetaArray

    def is_floating_point(self) -> bool:
        """Whether the dtype is a floating-point one (PyTorch's).
        
        Returns:
            A bool.
        """
        return D.kind(self._value.dtype) == "f"

    def is_complex(self) -> bool:
        """Whether the dtype is a complex one (PyTorch's).
        
        Returns:
            A bool.
        """
        return self._value.dtype.kind == "c"

    def element_size(self) -> int:
        """The size of one element in bytes (PyTorch's).
        
        Returns:
            An int.
        """
        return self._value.dtype.itemsize

    def data_ptr(self) -> int:
        """The address of the first element (views of one storage share addresses)."""
        v = self._value
        if is_cupy(v):
            return int(v.data.ptr)
        if type(v) is not _nd:
            raise FgradRuntimeError("data_ptr(): a traced tensor has no storage")
        return int(v.__array_interface__["data"][0])

    def item(self):
        """The value of a one-element tensor as a Python number, outside the graph (PyTorch's).
        
        Returns:
            An int, float, complex or bool.
        
        Raises:
            RuntimeError: the tensor has more than one element.
        """
        v = self._value
        if getattr(v, "size", 1) != 1:
            raise FgradRuntimeError(f"a Tensor with {v.size} elements cannot be converted to Scalar")
        return concrete_value(v).item()  # PyTorch's .item(): a number without gradient

    def tolist(self):
        """The values as nested Python lists of numbers (a number for a 0-d tensor; PyTorch's).
        
        Returns:
            A list, or a number.
        """
        v = self._value
        if is_cupy(v):
            v = v.get()
        v = concrete_value(v)
        return v.tolist() if hasattr(v, "tolist") else v.item()

    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The values as a NumPy array sharing this tensor's memory (PyTorch's).
        
        Args:
            force: copy a GPU tensor to the host and allow a tensor that requires grad.
        
        Returns:
            A NumPy array.
        
        Raises:
            RuntimeError: the tensor requires grad and force is False.
            TypeError: the tensor is on a GPU and force is False.
        """
        if self._requires_grad and not force:
            raise FgradRuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.", doc="numpy-requires-grad")
        v = self._value
        if is_cupy(v):
            if not force:
                raise FgradTypeError(f"can't convert {self.device} device type tensor to numpy. Use "
                                "Tensor.cpu() to copy the tensor to host memory first.")
            return v.get()
        if isinstance(v, Tracer):
            return np.asarray(v)  # raises fgrad's TracerArrayConversionError with advice
        if type(v) is MetaArray:
            return np.asarray(v)  # raises: a meta tensor has no values
        return v

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        if dtype is not None and a.dtype != dtype:
            return a.astype(dtype)
        return a.copy() if copy else a

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        # _ops imports Tensor from this module: a cycle, resolved at call time
        from ._ops import array_ufunc
        return array_ufunc(self, ufunc, method, inputs, kwargs)

    def __repr__(self) -> str:
        return tensor_repr(self)

    def __format__(self, spec: str) -> str:
        # as PyTorch: a plain 0-d tensor formats as its number (f"{loss}" prints 0.25), others
        # (and subclasses such as Parameter) as their repr
        if self._value.ndim == 0 and type(self) is Tensor:
            return format(self.item(), spec)
        if spec:
            raise FgradTypeError(f"unsupported format string {spec!r} passed to Tensor.__format__: only a 0-d "
                                 f"tensor formats as a number; this one has shape {tuple(self._value.shape)} "
                                 "(format x.item() or x.tolist() instead)")
        return repr(self)

    def __hash__(self) -> int:
        return id(self)

    def __bool__(self) -> bool:
        v = self._value
        if getattr(v, "size", 1) != 1:
            raise FgradRuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(v)

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self._value.dtype.kind not in "iub" or self._value.ndim != 0 and self.numel() != 1:
            raise FgradTypeError("only integer tensors of a single element can be converted to an index")
        return int(self._value) if isinstance(self._value, Tracer) else int(self.item())

    def __len__(self) -> int:
        shape = self._value.shape
        if not shape:
            raise FgradTypeError("len() of a 0-d tensor")
        return shape[0]

    def __iter__(self):
        if not self._value.shape:
            raise FgradTypeError("iteration over a 0-d tensor")
        # _ops imports Tensor from this module: a cycle, resolved at call time
        from ._ops import unbind
        return iter(unbind(self, 0))

    def __reduce_ex__(self, protocol):
        # creation imports Tensor from this module: a cycle, resolved at call time
        from .creation import _rebuild
        return (_rebuild, (self.detach().cpu().numpy().copy(), self._requires_grad, type(self)))

    def __deepcopy__(self, memo):
        if self._node is not None:
            raise FgradRuntimeError("Only Tensors created explicitly by the user (graph leaves) support "
                               "the deepcopy protocol at the moment.")
        v = self._value
        t = _make(v.copy() if hasattr(v, "copy") else v, None, self._requires_grad)
        if self._grad is not None:
            t._grad = _make(self._grad._value.copy())
        memo[id(self)] = t
        return t

    # --- DLPack: zero-copy exchange with NumPy, CuPy, PyTorch, JAX ... ---
    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule of this tensor's storage (no copy), as the DLPack protocol asks:
        the consumer (`numpy.from_dlpack`, `torch.from_dlpack`, `cupy.from_dlpack`) calls it.
        The array underneath (NumPy or CuPy) exports itself, so `stream` synchronisation and
        the capsule's version are theirs; arguments left None are not passed on, so that
        producers predating DLPack 1.0 keep working."""
        if self._requires_grad:
            # PyTorch's refusal: the consumer would see the data but not the graph
            raise FgradRuntimeError("Can't export tensors that require gradient, use tensor.detach()")
        v = self._dlpack_value()
        kwargs = {k: a for k, a in (("max_version", max_version), ("dl_device", dl_device), ("copy", copy))
                  if a is not None}
        if stream is not None:
            kwargs["stream"] = stream
        return v.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple:
        """(DLPack device type, device index): (1, 0) on the CPU, (2, N) on cuda:N."""
        return tuple(self._dlpack_value().__dlpack_device__())

    def _dlpack_value(self):
        v = self._value
        if isinstance(v, Tracer):
            raise FgradRuntimeError("Can't export a traced tensor (inside fgrad.grad, jit or vmap) through "
                               "DLPack: it has no storage yet. Export concrete tensors, outside the transform.")
        if isinstance(v, _generic):  # a NumPy scalar has no __dlpack__; a 0-d array does
            v = np.asarray(v)
        return v


class Size(tuple):
    """A tensor's shape: a tuple that prints as `torch.Size([2, 3])`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"torch.Size({list(self)})"

    def numel(self) -> int:
        return math.prod(self)

    def __getitem__(self, i):
        r = tuple.__getitem__(self, i)
        return Size(r) if isinstance(i, slice) else r


def _dim(dim, ndim: int) -> int:
    """A PyTorch dim index normalised to [0, ndim) (0-d tensors accept 0 and -1): fgrad.numpy's
    normalize_axis in PyTorch's dialect (its IndexError)."""
    return normalize_axis(dim, ndim, "dim", policy=TORCH)


def wrap(value) -> Tensor:
    return _make(value)


# --- the public class ------------------------------------------------------------------------------

# The torch methods are the functions of _ops*.py, and those modules import this one: while
# the import below builds them, `Tensor` is the base (their isinstance tests hold for every
# tensor all the same); the statement after it binds the public class.
# A static checker cannot read a class made by type(...): it sees this declaration instead,
# whose methods tools/gen_type_stubs.py writes from the same table.
import typing as _typing  # noqa: E402
if _typing.TYPE_CHECKING:
    from ._tensor_methods import TensorMethods  # a stub only: never imported at run time

    class Tensor(TensorMethods, TensorBase):
        """A multi-dimensional array with PyTorch's autograd behaviour, on fgrad's primitives."""
else:
    Tensor = TensorBase
    from ._methods import tensor_methods  # noqa: E402  (the table; imports the ops)

    # One class, made once, with its methods in its own namespace (torch.fx patches operators
    # found in vars(Tensor)). `__hash__` is restated: a namespace that defines `__eq__` alone
    # would make the class unhashable. Its module is the public one, as torch.Tensor's is `torch`
    # (`type(x)` prints <class 'fgrad.torch.Tensor'>, and pickle finds the class there).
    Tensor = type("Tensor", (TensorBase,), {
        "__module__": "fgrad.torch", "__qualname__": "Tensor", "__slots__": (), "__hash__": TensorBase.__hash__,
        "__doc__": "A multi-dimensional array with PyTorch's autograd behaviour, on fgrad's primitives.",
        **tensor_methods()})
