"""The one boundary between the facade and fgrad's functional core: a torch op is one node.

`call(name, fn, args)` runs a torch op. `fn` is the op's functional computation, written on
fgrad.numpy/lax over plain values: the Tensors among `args` (and inside list or tuple
arguments, as cat and stack take them) are unboxed before it runs, so nothing below the
facade sees a Tensor. Its results (an array, or a tuple/namedtuple of them) come back as
Tensors. When grad mode is on and an input requires grad, `fn` runs on fgrad's recorder
(`interpreters.record.record_call`, fgrad.vjp's machinery) and the result gets ONE graph
node, of class `name` (PyTorch's grad_fn name, e.g. "MeanBackward0"), whose parents are the
input Tensors' nodes in operand order: `x.mean().grad_fn.next_functions` is
`((AccumulateGrad, 0),)`, as in PyTorch, however many primitives `fn` used.

The node's rule pulls the cotangent back through the recorded subgraph. With
`create_graph=True` the rule is itself a torch op (its inputs are the op's inputs and the
cotangent, its function the pullback of `fn`), so derivatives of any order need nothing else.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ... import numpy as fnp
from ...core.errors import FgradRuntimeError
from ...core.trace import EVAL_TRACE, _state
from ...interpreters.backward import Unsaved
from ...interpreters.record import SubgraphOut, record_call
from ...interpreters.tape import tape as tape_fn
from ...extend.lax import add as _lax_add
from ...extend.lax import convert_element_type
from ...tree_util import tree_unflatten
from ._meta_ops import has_meta, meta_call
from ._names import grad_fn_name
from ._policy import TORCH as _P
from ._dtypes import ML_LOADED
from ._dtypes import dtype as _torch_dtype
from .tensor import (
    FORWARD_AD,
    LOW_BIND,
    OUTPUT_OF,
    TRANSFORMS,
    _EMPTY,
    ModifiedValue,
    Tensor,
    _check_devices,
    _make,
    _nd,
    _view_of,
    grad_node,
    mark_view,
    _NODE_CLASSES,
    node_class,
    op_node,
    refresh_view,
    refuse_captured,
)

_new = object.__new__
_SEQ = (list, tuple)
_generic = np.generic


class _TorchOp:
    """`prim` of every torch op's node: its rule pulls back through the op's recorded
    subgraph (the node's residuals). `vjp_fwd` is set only so that the engine hands the rule
    those residuals and frees them with the node's other saved values."""

    name = "torch_op"
    nondiff = False
    vjp_fwd = True
    saves_output = False

    @staticmethod
    def vjp(needs, ct, out, *primals, residuals):
        sub, k, where = residuals.sub, residuals.k, residuals.where
        n_out = len(sub.outs)
        if type(ct) is tuple:  # a node of several outputs: one cotangent (or None) per output
            ks = tuple([j for j, c in enumerate(ct) if c is not None])
            cs = [ct[j] for j in ks]
            if any(isinstance(c, Tensor) for c in cs):  # create_graph
                return _pullback_op(sub, ks, n_out, where, primals, cs)
            cts = list(ct)
        elif isinstance(ct, Tensor):  # create_graph: the pullback is itself a torch op
            return _pullback_op(sub, (k,), n_out, where, primals, (ct,))
        else:
            cts = [None] * n_out
            cts[k] = ct
        for p in primals:
            if type(p) is ModifiedValue and sub.keeps(p.original):
                p._fail()
        res = sub.pullback(cts, _lax_add)
        if len(where) == len(primals):
            return res
        full = [None] * len(primals)
        for i, c in zip(where, res):
            full[i] = c
        return full


TORCH_OP = _TorchOp()
_WHERE_ONE = (0,)
_PENDING: list = [None]  # (fn, operands) of an op an interceptor is running


class GradOperands(tuple):
    """Declared operand positions (`call`'s `operands`) of which only the Tensors that require
    grad become the node's inputs, in the declared order: PyTorch's nodes for ops without a
    derivative (NotImplemented) list no entry for an operand that needs no gradient, where
    other nodes list (None, 0)."""

    __slots__ = ()


def _pullback_op(sub, ks, n_out, where, primals, cs):
    """The gradients of a torch op's node as a torch op of its inputs and the cotangents `cs`
    of its outputs `ks` (create_graph)."""
    fn = sub.fn
    m = len(cs)

    def pullback(*xs):
        xs, c = xs[:-m], xs[-m:]
        _, _, inner = record_call(fn, xs, False)
        cts = [None] * n_out
        for j, cj in zip(ks, c):
            cts[j] = cj
        res = inner.pullback(cts, _lax_add) if inner is not None else (None,) * len(xs)
        # a Tensor output needs a value: an input the output does not reach gets zeros
        return tuple(r if r is not None else _zeros(x) for r, x in zip(res, xs))

    grads = call(None, pullback, (*[primals[i] for i in where], *cs))
    full = [None] * len(primals)
    for i, g in zip(where, grads):
        full[i] = g
    return full


def _zeros(x):
    return fnp.zeros_like(x)


def _unbox(args):
    """(values, tensors, diff): args with each Tensor (also inside a list or tuple argument)
    replaced by its value; the Tensors in operand order; per Tensor whether it requires grad."""
    vals = list(args)
    tensors = []
    for i, a in enumerate(args):
        if isinstance(a, Tensor):
            if a._view is not None and a._view[0]._node is not a._view[1]:
                refresh_view(a)  # its base was modified in place since its grad_fn was derived
            vals[i] = a._value
            tensors.append((i, None, a))
        elif type(a) in _SEQ and a and any(isinstance(e, Tensor) for e in a):
            inner = list(a)
            for j, e in enumerate(a):
                if isinstance(e, Tensor):
                    if e._view is not None and e._view[0]._node is not e._view[1]:
                        refresh_view(e)
                    inner[j] = e._value
                    tensors.append((i, j, e))
            vals[i] = type(a)(inner) if type(a) is tuple else inner
    return vals, tensors


def call(name, fn, args: tuple, kwargs: dict = _EMPTY, operands: tuple | None = None,
         saves: tuple | None = None) -> Any:
    """Run the torch op `name` (its grad_fn class name; None: the name of the primitive that
    made each output): `fn(*values, **kwargs)` with the Tensors in `args` unboxed, its results as Tensors,
    one graph node for the whole op when an input requires grad (see the module doc).

    Args:
        name: PyTorch's grad_fn class name, or None.
        fn: the op's computation over plain values.
        args, kwargs: its arguments, Tensors among them.
        operands: the positions in `args` of PyTorch's differentiable Tensor operands, in the
            order its node lists them, or None to take every floating Tensor argument in
            argument order. Declared, each position is one entry of `next_functions`: its
            Tensor's node, or (None, 0) where the Tensor needs no gradient or the argument
            is None or missing (a bias left out); Tensors elsewhere are constants of the op.
            A GradOperands declaration keeps only the positions whose Tensor requires grad
            (no entry for the others); the op records no node when none does.
        saves: the positions in `args` of the Tensors whose values the op's backward reads
            (PyTorch's saved variables), or None for all of them. Only these are checked
            against later in-place writes; a linear op whose gradient needs no operand
            value (a copy into slices) declares () and so, as in PyTorch, survives writes
            into its operands, also when the backward pass is recorded (create_graph).

    Returns:
        The results of `fn` as Tensors.
    """
    if FORWARD_AD[0] is not None:  # a dual level or saved-tensor hooks: the interceptor runs it (forward_ad.install)
        if operands is None and saves is None:
            return FORWARD_AD[0].call(name, fn, args, kwargs)
        # (the interceptor calls back with (name, fn, args, kwargs): the declarations wait for
        # that call of this fn)
        prev, _PENDING[0] = _PENDING[0], (fn, operands, saves)
        try:
            return FORWARD_AD[0].call(name, fn, args, kwargs)
        finally:
            _PENDING[0] = prev
    if operands is None and saves is None and _PENDING[0] is not None and _PENDING[0][0] is fn:
        operands, saves = _PENDING[0][1], _PENDING[0][2]
    base, keys = fn, ()
    if kwargs:  # keyword Tensors (weight=, other=) are operands too, after the positional ones
        n = len(args)
        keys = tuple(kwargs)
        args = (*args, *kwargs.values())
        fn = lambda *xs: base(*xs[:n], **dict(zip(keys, xs[n:])))  # noqa: E731
    vals, tensors = _unbox(args)
    if not tensors:
        return _wrap_plain(fn(*vals), vals, tensors)
    if ML_LOADED[0] and _has_low(tensors):  # bfloat16 & co.: computed in float32 (_call_low)
        return _call_low(name, fn, args, operands, tensors, saves=saves)
    if operands is not None:
        # PyTorch's operand list: each declared position's Tensor, or None (an absent operand)
        at = {e[0]: e for e in tensors if e[1] is None}
        ops = [at.get(i) for i in operands]
        tensors = [e for e in ops if e is not None]
        if not tensors:  # (no Tensor operand: the Tensor arguments are constants)
            return _wrap_plain(fn(*vals), vals, tensors)
        if type(operands) is GradOperands:
            ops = [e for e in ops if e is not None and e[2]._requires_grad]
    else:
        ops = None
    grad, plain = False, True
    for _, _, t in tensors:
        if t._requires_grad:
            grad = True
        if type(t._value) is not _nd:
            plain = False
    if not plain:
        if has_meta(tensors):  # the meta device: shapes and dtypes, nothing computed
            return meta_call(name, fn, vals, tensors, grad and _state.grad_enabled)
        _devices(vals, tensors)
    if not grad or not _state.grad_enabled:
        return _wrap_plain(fn(*vals), vals, tensors)
    if ops is None and len(tensors) == 1 and tensors[0][1] is None:  # one Tensor operand (most ops): no list
        i, _, t = tensors[0]
        primals = (t._value,)
        where = _WHERE_ONE
        parents = (grad_node(t),)
        if len(vals) == 1:
            of_diff = fn
        else:
            def of_diff(x):
                full = list(vals)
                full[i] = x
                return fn(*full)
    else:
        if ops is None:
            # every floating Tensor operand is an input of the node (PyTorch lists a None parent
            # for one that needs no gradient, and no edge for an integer or boolean one: a mask,
            # an index); the differentiated ones are the subgraph's leaves
            ops = tensors = [e for e in tensors if e[2]._requires_grad or e[2]._value.dtype.kind in "fc"]
        where = tuple([n for n, e in enumerate(ops) if e is not None and e[2]._requires_grad])
        diff = [ops[n] for n in where]
        primals = tuple([t._value for _, _, t in diff])
        parents = tuple([grad_node(e[2]) if e is not None and e[2]._requires_grad else None for e in ops])

        def of_diff(*xs):
            full = list(vals)
            for (i, j, _), x in zip(diff, xs):
                _put(full, i, j, x)
            return fn(*full)

    if TRANSFORMS[0]:
        refuse_captured([t for _, _, t in tensors])
    # (no snapshots of the constant operands: the version counters below watch them)
    tape = _tape_of(base, keys, fn, vals, tensors) if plain and base in REPLAYABLE and _state.trace is EVAL_TRACE \
        else None
    if tape is None:
        tree, outs, sub = record_call(of_diff, primals, False)
    else:
        tape, slots, taped_diff = tape
        tree, outs, sub = tape.record([vals[i] for i in slots], taped_diff, of_diff)
    if sub is None:
        return _wrap_plain(outs[0] if tree is None else tree_unflatten(tree, outs), vals, tensors)
    cls = (_NODE_CLASSES.get(name) or node_class(name)) if name is not None else None
    # the version of each operand the backward reads, checked when it runs (saved_values)
    if ops is None:
        saved = [(t._vbox, t._vbox[0], n) for n, (i, _, t) in enumerate(tensors) if saves is None or i in saves]
    else:  # (an absent operand's input is None, watched by no counter)
        saved = [(e[2]._vbox, e[2]._vbox[0], n) for n, e in enumerate(ops)
                 if e is not None and (saves is None or e[0] in saves)]
    if tree is None:
        node = _one_primitive(sub, parents, where, cls, saved)
        if node is not None:  # the op is one primitive on its operands: that primitive's node
            t = _make(outs[0], node, True)
            v = outs[0]
            if type(v) is _nd and (v.base is not None or any(v is t2._value for _, _, t2 in tensors)):
                _mark_one(t, v, tensors)
            return t
    inputs = primals if where is _WHERE_ONE else tuple([e[2]._value if e is not None else None for e in ops])
    if tree is not None and cls is not None and _several(outs, sub.outs):
        return _multi_output(cls, parents, inputs, sub, where, saved, tree, outs, tensors)
    results = []
    k = 0
    for v, inner in zip(outs, sub.outs):
        if inner is None or v.dtype.kind not in "fc":
            results.append(_make(v))
        elif inner.prim is None and name is None:  # an input passed through: that Tensor itself
            results.append(tensors[0][2] if ops is None else ops[where[sub.leaves.index(inner)]][2])
        else:
            # (no name: the node is named after the primitive that made this output, as
            # PyTorch names a node after the last op of a formula)
            node = _new(cls or node_class(grad_fn_name(inner.prim.name)))
            node.prim = TORCH_OP
            node.params = _EMPTY
            node.parents = parents
            node.primals = inputs
            node.out = Unsaved.of(v)
            node.hooks = None
            node.residuals = SubgraphOut(sub, k, where)
            node.saved = saved
            results.append(_make(v, node, True))
        k += 1
    for t, v in zip(results, outs):
        if type(v) is _nd and (v.base is not None or any(v is t2._value for _, _, t2 in tensors)):
            _mark_one(t, v, tensors)
    return results[0] if tree is None else tree_unflatten(tree, results)


def _several(outs, inners) -> bool:
    """Whether at least two outputs of an op are differentiable (floating, recorded)."""
    n = 0
    for v, inner in zip(outs, inners):
        if inner is not None and v.dtype.kind in "fc":
            n += 1
    return n > 1


def _multi_output(cls, parents, inputs, sub, where, saved, tree, outs, tensors):
    """The results of an op with several differentiable outputs: ONE node `cls` for the op (its
    rule pulls all the outputs' cotangents back at once), and per output a node of the same
    class whose one parent is the op's node (tensor.OUTPUT_OF: the Tensor's grad_fn is the op's
    node, its output_nr the output's number)."""
    n_out = len(outs)
    node = _new(cls)
    node.prim = TORCH_OP
    node.params = _EMPTY
    node.parents = parents
    node.primals = inputs
    node.out = ()
    node.hooks = None
    node.residuals = SubgraphOut(sub, 0, where)
    node.saved = saved
    results = []
    for k, (v, inner) in enumerate(zip(outs, sub.outs)):
        if inner is None or v.dtype.kind not in "fc":
            t = _make(v)
        else:
            e = _new(cls)
            e.prim = OUTPUT_OF
            e.params = {"k": k, "n": n_out}
            e.parents = (node,)
            e.primals = ()
            e.out = Unsaved.of(v)
            e.hooks = None
            e.residuals = SubgraphOut(sub, k, where)  # (graph_to_jaxpr reads output k there)
            e.saved = ()
            t = _make(v, e, True)
        if type(v) is _nd and (v.base is not None or any(v is t2._value for _, _, t2 in tensors)):
            _mark_one(t, v, tensors)
        results.append(t)
    return tree_unflatten(tree, results)


# --- bfloat16, complex32 and float8: PyTorch's CPU arithmetic on ml_dtypes' dtypes ------------------
#
# PyTorch's CPU kernels compute an op on bfloat16 (complex32) operands in float32 (complex64)
# and round each bfloat16 result once, to nearest even; reductions accumulate in float32; the
# backward pass of such an op is computed in float32 too and its gradients rounded to the
# operands' dtypes. The boundary does exactly that for every op: the op runs on float32 stand-ins
# of the operands (so fgrad's functional core, which refuses ml_dtypes' arrays, never sees one),
# its floating results whose PyTorch dtype is bfloat16 are rounded, and its node's rule widens the
# incoming cotangent and rounds the gradients (LowRule).

_F32 = np.dtype(np.float32)
_C64 = np.dtype(np.complex64)
_AUTO = object()
# the ops whose CPU kernels take a number operand in float32 rather than rounded to bfloat16
_OPMATH_SCALAR = frozenset(["MulBackward0", "MulBackward1", "DivBackward0", "DivBackward1"])


def _is_low(d) -> bool:
    """Whether the NumPy dtype `d` is one of ml_dtypes' (kind "V", or "f" for float8_e5m2)."""
    return d.kind == "V" or (d.itemsize == 1 and d.kind == "f")


def _has_low(tensors) -> bool:
    for _, _, t in tensors:
        v = t._value
        if (type(v) is _nd or isinstance(v, _generic)) and _is_low(v.dtype):
            return True
    return False


def _wide(d):
    """The dtype PyTorch computes `d`'s ops in: complex64 for complex32, else float32."""
    return _C64 if "complex" in d.name else _F32


def compute_dtype(d):
    """The dtype a torch op computes its NumPy dtype `d` in inside the boundary: float32
    (complex64) for ml_dtypes' bfloat16 & co., whose results the boundary rounds; `d` otherwise.
    An op's function that casts to its operand's dtype casts to this one.

    Args:
        d: a NumPy dtype.
    Returns:
        The NumPy dtype to compute in.
    """
    return _wide(d) if _is_low(d) else d


def _float8_error(name, d) -> FgradRuntimeError:
    torch_name = "Float8_" + d.name[len("float8_"):] if d.name.startswith("float8_") else d.name
    return FgradRuntimeError(
        f"{name or 'this op'}: not implemented for '{torch_name}' (PyTorch computes almost nothing on "
        f"float8 dtypes; they are storage formats). Convert the tensor with .float() (or "
        f".to(torch.bfloat16)) first and convert the result back with .to(torch.{d.name}).")


class LowRule:
    """The rule of a node whose op had bfloat16 (complex32) operands or results: the incoming
    cotangent is widened to float32, the op's own rule (`inner`) runs in float32, and each
    gradient is rounded to its operand's dtype (`dts`, per parent; None: left as computed),
    as PyTorch's backward of a bfloat16 op rounds per op. Everything else is the inner rule's."""

    __slots__ = ("inner", "dts")

    def __init__(self, inner, dts) -> None:
        self.inner = inner
        self.dts = dts

    def __getattr__(self, key):
        return getattr(self.inner, key)

    def vjp(self, needs, ct, out, *primals, **kw):
        if type(ct) is tuple:  # (a node of several outputs)
            ct = tuple([c.astype(_wide(c.dtype)) if (type(c) is _nd or isinstance(c, _generic)) and _is_low(c.dtype)
                        else c for c in ct])
        elif (type(ct) is _nd or isinstance(ct, _generic)) and _is_low(ct.dtype):
            ct = ct.astype(_wide(ct.dtype))
        res = self.inner.vjp(needs, ct, out, *primals, **kw)
        return [r.astype(d) if d is not None and (type(r) is _nd or isinstance(r, _generic)) else r
                for r, d in zip(res, self.dts)]


def _result_low(args, tensors):
    """PyTorch's result dtype of an op when it is one of ml_dtypes' dtypes, else None: the
    floating operands of the highest dimension category (dimensioned Tensors over 0-d ones)
    all have that dtype, and no dtype argument asks for another."""
    for a in args:
        if type(a) is _torch_dtype or type(a) is np.dtype:
            return None  # (an explicit result dtype: sum(dtype=torch.float32), to(torch.float64))
    dims, zeros = set(), set()
    for _, _, t in tensors:
        d = t._value.dtype
        if d.kind in "fcV":
            (dims if t._value.ndim else zeros).add(d)
    pick = dims or zeros
    if len(pick) == 1:
        (d,) = pick
        if _is_low(d):
            return d
    return None


def _call_low(name, fn, args, operands, tensors, out_low=_AUTO, saves=None):
    """`call` for an op with an operand of one of ml_dtypes' dtypes (see the section doc);
    `out_low`: the dtype its floating results round to (None: none), by default PyTorch's
    promotion (_result_low)."""
    stand_in = {}
    back_ids = set()
    grads = {}
    held = []  # (the leaves' AccumulateGrad nodes, weakly held until the op's node links them)
    for _, _, t in tensors:
        v = t._value
        d = v.dtype
        if (type(v) is _nd or isinstance(v, _generic)) and _is_low(d) and id(t) not in stand_in:
            if d.itemsize == 1:
                return _call_float8(name, fn, args, operands, d, saves)
            if t._requires_grad:
                g = grad_node(t)
                held.append(g)
                grads[id(g)] = d
            stand_in[id(t)] = _stand_in(t, _wide(d))
            back_ids.add(id(stand_in[id(t)]))
    if out_low is _AUTO:
        out_low = _result_low(args, tensors)
    vals = list(args)
    for i, j, t in tensors:
        p = stand_in.get(id(t))
        if p is not None:
            _put(vals, i, j, p)
    for i, a in enumerate(vals):
        if (type(a) is _nd or isinstance(a, _generic)) and _is_low(a.dtype):
            vals[i] = a.astype(_wide(a.dtype))  # (a value the op made in its operand's dtype: masked_fill's)
    if out_low is not None and out_low.kind != "c" and name not in _OPMATH_SCALAR:
        # PyTorch casts a number (or a 0-d Tensor the result dtype ignores) to the result dtype
        # before its kernel runs, except mul's and div's, which keep it in float32
        for i, a in enumerate(vals):
            if type(a) is float or (isinstance(a, _generic) and a.dtype.kind == "f"):
                vals[i] = float(np.float32(a).astype(out_low))
            elif isinstance(a, Tensor) and id(a) not in back_ids and a._value.ndim == 0 \
                    and a._value.dtype.kind == "f":
                if a._requires_grad:
                    held.append(grad_node(a))
                vals[i] = stand_in[id(a)] = _stand_in(a, a._value.dtype, out_low)
    res = call(name, fn, tuple(vals), _EMPTY, operands, saves)
    back = {}
    for _, _, t in tensors:
        p = stand_in.get(id(t))
        if p is not None:
            back[id(p)] = t
    if out_low is not None and _unrecorded_views(res):
        # a view op (indexing, view, split, ...): on the bfloat16 values themselves, so the
        # results alias the operands' storage as PyTorch's do (exact: nothing is computed)
        ML_LOADED[0] = False
        try:
            return call(name, fn, args, _EMPTY, operands, saves)
        except TypeError:
            pass  # (an op fgrad.numpy refuses ml_dtypes' arrays for: the rounded copies)
        finally:
            ML_LOADED[0] = True
    return _map_results(res, lambda r: _finish(r, back, grads, out_low))


def _call_float8(name, fn, args, operands, d, saves=None):
    """PyTorch moves, copies and converts float8 values but computes nothing on them: the op
    runs on them as it is, and arithmetic (which fgrad.numpy refuses) says how to convert."""
    ML_LOADED[0] = False
    try:
        return call(name, fn, args, _EMPTY, operands, saves)
    except TypeError as e:
        if "not numeric" in str(e):
            raise _float8_error(name, d) from None
        raise
    finally:
        ML_LOADED[0] = True


def _stand_in(t, wide, via=None):
    """A float32 Tensor standing for the bfloat16 Tensor `t` in one op: the same graph node
    (or leaf) and version counter, so the op's node links to `t`'s and watches its writes;
    its value rounded to `via` first where given (a float32 scalar Tensor cast to bfloat16)."""
    v = t._value if via is None else t._value.astype(via)
    p = _make(v.astype(wide), t._node, t._requires_grad, t._vbox)
    if t._requires_grad and t._node is None:
        p._acc = t._acc  # (its AccumulateGrad: the caller holds it)
    return p


def _finish(r, back, grads, out_low):
    """Result `r` of an op run on stand-ins: the operand itself where the op passed a stand-in
    through, its value rounded to `out_low`, its node's rule made LowRule."""
    if not isinstance(r, Tensor):
        return r
    t = back.get(id(r))
    if t is not None:
        return t
    node = op_node(r._node)  # (an output of a multi-output op: the op's node has the rule)
    if node is not None and type(node.prim) is not LowRule:
        node.prim = LowRule(node.prim, tuple([grads.get(id(p)) for p in node.parents]))
    v = r._value
    if out_low is not None and (type(v) is _nd or isinstance(v, _generic)) \
            and v.dtype.kind == ("c" if "complex" in out_low.name else "f"):
        r._value = v.astype(out_low)
        if node is not None and node.out is v:
            # (a rule that reads the op's output, exp's, reads the rounded one, as PyTorch's does)
            node.out = r._value.astype(v.dtype)
        if r._view is not None:  # (a view of a stand-in: now a copy of its own)
            r._view = None
            r._vbox = [0]
    return r


def _unrecorded_views(res) -> bool:
    """Whether some result of `res` that records no node is a view (of a stand-in's value)."""
    found = []

    def see(r):
        if isinstance(r, Tensor) and r._node is None and r._view is not None:
            found.append(r)
        return r
    _map_results(res, see)
    return bool(found)


def _map_results(res, f):
    """`f` over the Tensors of an op's results (one, or a tuple, namedtuple or list of them)."""
    if isinstance(res, tuple):
        out = [_map_results(r, f) for r in res]
        return type(res)(*out) if hasattr(res, "_fields") else tuple(out)
    if isinstance(res, list):
        return [_map_results(r, f) for r in res]
    return f(res)


def _bind_low(prim, args, params, cls):
    """`tensor._tensor_bind` of `prim` when an operand or the result is bfloat16 & co.: the op
    through the boundary (_call_low), so it computes in float32 and rounds as PyTorch does. A
    dtype conversion to or from such a dtype is ToCopyBackward0, rounded once."""
    name = cls.__name__ if cls is not None else grad_fn_name(prim.name)
    if prim.name == "convert_element_type":
        new = params["new_dtype"]
        low = _is_low(new)
        to = _wide(new) if low else new
        one = np.float32(1)

        def fn(x):
            # (x * 1: a primitive of its own, so a conversion to the same dtype is a copy)
            return convert_element_type(convert_element_type(x, to) * one, to)
        name = cls.__name__ if cls is not None else "ToCopyBackward0"
        tensors = _unbox(args)[1]
        if not _has_low(tensors):  # (float32 -> bfloat16: the stand-ins are the operands)
            return _round_new(call(name, fn, args), new)
        return _call_low(name, fn, args, None, tensors, new if low else None)
    tensors = _unbox(args)[1]
    if prim.name not in _LAYOUT:
        for _, _, t in tensors:
            d = t._value.dtype
            if (type(t._value) is _nd or isinstance(t._value, _generic)) and d.itemsize == 1 and _is_low(d):
                raise _float8_error(name, d)
    return _call_low(name, lambda *xs: prim.bind(*xs, **params), args, None, tensors)


# primitives that only move values (exact in any dtype, and PyTorch's on float8 too)
_LAYOUT = frozenset(["reshape", "transpose", "broadcast_in_dim", "slice", "concatenate", "squeeze",
                     "expand_dims", "rev", "copy", "copy_p", "pad", "select_n", "gather", "dynamic_slice"])


def _round_new(r, new):
    """The float32 result `r` of a conversion to ml_dtypes' `new`, rounded; its node's rule
    widens the bfloat16 cotangent."""
    if r._node is not None and type(r._node.prim) is not LowRule:
        r._node.prim = LowRule(r._node.prim, (None,) * len(r._node.parents))
    r._value = r._value.astype(new)
    return r


LOW_BIND[0] = _bind_low


# --- taped ops ------------------------------------------------------------------------------------

REPLAYABLE: set = set()
_TAPES: dict = {}
_MAX_TAPES = 4096
_NOKEY = object()
_INT_SEQ = (tuple, list)


def replayable(fn):
    """Mark `fn`, a torch op's functional computation, as one whose primitive applications
    depend only on its array arguments' shapes and dtypes and on its other (hashable)
    arguments: no random numbers, no global state but PyTorch's default dtype, no arrays
    it closes over. The boundary then tapes it once per such key
    (`interpreters.tape`) and reruns the tape when recording, without its Python.

    Args:
        fn: a module-level function of plain values.
    Returns:
        `fn` itself.
    """
    REPLAYABLE.add(fn)
    return fn


def _static(v):
    """The key of a non-array argument, or _NOKEY when it cannot be part of one."""
    t = type(v)
    if t is int or t is bool or t is str or v is None or t is np.dtype or t is _torch_dtype:
        return (t, v)
    if t is float:
        if v != v:
            return _NOKEY
        return (t, v) if v else (t, v, str(v))  # (-0.0 == 0.0, but they compute differently)
    if t in _INT_SEQ:
        for e in v:
            if type(e) is not int:
                return _NOKEY
        return (t, tuple(v))
    return _NOKEY


def _tape_of(base, keys, fn, vals, tensors):
    """(tape, slots, diff) for running `fn` on `vals` (its arguments, Tensors unboxed; `fn` is
    `base` with the keywords `keys` passed by position, as `call` makes it): the
    tape of its applications for these shapes, dtypes and other arguments (taped on first
    sight), the positions in `vals` of its array arguments, and which of those require grad;
    None where `fn` cannot be taped for them."""
    key = [base, keys, _P.default_float]
    slots = []
    for i, v in enumerate(vals):
        if type(v) is _nd:
            key.append(v.shape)
            key.append(v.dtype)
            slots.append(i)
        else:
            k = _static(v)
            if k is _NOKEY:
                return None
            key.append(k)
    diff = []
    for i, j, t in tensors:
        if j is not None:  # (a Tensor inside a list argument)
            return None
        if t._requires_grad:
            diff.append(slots.index(i))
    key = tuple(key)
    tape = _TAPES.get(key, _NOKEY)
    if tape is _NOKEY:
        if len(_TAPES) >= _MAX_TAPES:
            _TAPES.clear()

        def of_all(*xs):
            full = list(vals)
            for i, x in zip(slots, xs):
                full[i] = x
            return fn(*full)
        tape = _TAPES[key] = tape_fn(of_all, [vals[i] for i in slots])
    return None if tape is None else (tape, slots, diff)


def _one_primitive(sub, parents, where, cls, saved):
    """When the op's recorded subgraph is one primitive whose inputs are the op's operands in
    order (a transpose, an exp with a dtype argument, ...), the node for the op is that
    primitive's own node (its own rule, no pullback through a subgraph), or None otherwise."""
    order = sub.order
    if order is not None and len(order) != len(sub.leaves) + 1:  # (the tape: several primitives)
        return None
    inner = sub.outs[0]
    prim = inner.prim
    # (not a primitive with a forward rule of its own, custom_vjp's call: its residuals are
    # constants to its rule, so a recorded backward pass must rerun it through the subgraph)
    if prim is None or prim.vjp_fwd is not None or len(inner.parents) != len(parents):
        return None
    leaves = sub.leaves
    for j, p in enumerate(inner.parents):
        if p is None:
            if parents[j] is not None:
                return None
        elif p.prim is not None:  # an intermediate value: several primitives
            return None
        else:
            k = next(k for k, leaf in enumerate(leaves) if leaf is p)
            if where[k] != j:
                return None
    node = _new(cls or node_class(grad_fn_name(prim.name)))
    node.prim = prim
    node.params = inner.params
    node.parents = parents
    primals = inner.primals
    if prim.saved_inputs is not None:
        # what the rule does not read goes, as for any recorded node (record_primitive keeps a
        # leaf's value, which here stands for the operand's producer)
        unread = prim.unread_inputs(len(primals))
        if unread:
            primals = tuple([Unsaved.of(v) if k in unread and parents[k] is not None
                             and parents[k].prim is not None else v for k, v in enumerate(primals)])
    node.primals = primals
    node.out = inner.out
    node.hooks = None
    node.residuals = inner.residuals
    node.saved = saved
    return node


def _devices(vals, tensors):
    """PyTorch's one-device rule (and CPU scalars moved next to GPU values) for the Tensors'
    values, written back into `vals`."""
    flat_args = [t for _, _, t in tensors]
    moved = _check_devices(flat_args, [t._value for t in flat_args])
    for (i, j, _), v in zip(tensors, moved):
        _put(vals, i, j, v)


def _put(vals, i, j, v):
    """vals[i] = v, or its entry j (a list or tuple argument, rebuilt) when j is not None."""
    if j is None:
        vals[i] = v
    else:
        seq = list(vals[i])
        seq[j] = v
        vals[i] = tuple(seq) if type(vals[i]) is tuple else seq


def _wrap_plain(out, vals, tensors):
    """The results of an op that records nothing, as Tensors (views marked as such)."""
    if type(out) is _nd:
        t = _make(out)
        if out.base is not None or any(out is t2._value for _, _, t2 in tensors):
            _mark_one(t, out, tensors)
        return t
    if isinstance(out, tuple):
        res = [_wrap_plain(o, vals, tensors) if o is not None else None for o in out]
        return type(out)(*res) if hasattr(out, "_fields") else tuple(res)
    if isinstance(out, list):
        return [_wrap_plain(o, vals, tensors) for o in out]
    # (a NumPy scalar is a float subclass, but a torch op's result: a 0-d Tensor)
    if out is None or (isinstance(out, (bool, int, float, complex, str)) and not isinstance(out, _generic)):
        return out
    return _make(out)


def _mark_one(t, out, tensors):
    src = _view_of(out, [t2._value for _, _, t2 in tensors], [t2 for _, _, t2 in tensors])
    if src is not None:
        mark_view(t, src)


def op(name, fn=None):
    """Decorator form of `call`: `@op("MeanBackward0")` over a function of plain values gives
    the torch op taking Tensors (positional Tensor arguments; keywords pass as they are)."""
    def deco(f):
        def torch_op(*args, **kwargs):
            return call(name, f, args, kwargs)
        torch_op.__name__ = torch_op.__qualname__ = f.__name__
        torch_op.__doc__ = f.__doc__
        torch_op.__wrapped__ = f
        return torch_op
    return deco(fn) if fn is not None else deco

