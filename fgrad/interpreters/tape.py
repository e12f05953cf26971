"""A function's primitive applications, taped once and rerun on other values with recording.

`record_call` (record.py) records a function as one node's subgraph by running it on
RecordTracers. The function's own Python (argument normalisation, promotion, broadcasting in
fgrad.numpy) costs more than the primitives it binds on small arrays, and a training loop
runs the same function on values of the same shapes and dtypes again and again. `tape` runs
the function once on RecordTracers of a `TapeTrace`, which logs every primitive application
that depends on an input; `Tape.record` then reruns those applications on new values and
records them exactly as `record_call` would (`record_primitive` on the same primitives with
the same params, same operands, same order), without the function's Python.

A tape is only valid where the function's primitive applications are determined by its
inputs' shapes and dtypes and by the caller's static arguments (its key). `tape` refuses
(returns None) whenever the run shows otherwise:
- the function looked at a value (any concretisation of a tracer: bool(), float(), a value
  turned into a shape or an index): its applications may depend on the values;
- an application read a constant array of more than 64 KiB (a tape keeps its constants;
  ops on arrays that large gain nothing from it);
- an output is not the result of a taped application or an input (a constant: a rerun would
  hand out one array to every caller);
- a tracer of another trace took part, or a primitive gave something other than one NumPy
  array or scalar;
- the function raised or warned (the caller's own run raises or warns as it should; a rerun
  would not warn).
Under the eval trace (eager torch ops) the rerun for a given set of differentiated inputs is
compiled on its first run into one straight-line function (`_compile`) that calls the impls
and builds the nodes itself: which applications record a node is fixed by the key, so the
per-application dispatch of the general rerun decides nothing there that it did not decide
the first time. Any other trace above (a transform, debug_nans) takes the general rerun.

Every value derived from an input is a tracer, so a constant the function reads is made from
its static arguments or from what the function itself closes over or reads globally: the
caller decides which functions may be taped at all (one that draws random numbers, closes
over arrays that change or reads global state other than its key must not be).
"""
from __future__ import annotations

import warnings
from typing import Callable, Sequence

import numpy as np

from ..core import trace as _core_trace
from ..core.trace import EVAL_TRACE, Tracer, _state, aliases
from ..tree_util import tree_flatten
from ..core.errors import FgradRuntimeError
from .backward import _NEEDS_NONE, _NEEDS_ONE, _PASSES, FREED_MESSAGE, Leaf, Node, Unsaved
from .record import RecordTrace, RecordTracer, Subgraph, WeakRecordTracer, record_primitive

_ndarray = np.ndarray
_generic = np.generic
_NUMBERS = (bool, int, float, complex)
_new = object.__new__
_MAX_CONST_BYTES = 1 << 16


class _Refused(Exception):
    """The function cannot be taped (see the module doc)."""


class TapeTrace(RecordTrace):
    """Runs a function on concrete values and logs each primitive application that depends on
    an input as (primitive, params, operand slots, output slot). A slot is an index into the
    rerun's values: the inputs first, then constants and results as they appear. Each
    tracer's `node` field holds its slot (this trace records no nodes)."""

    name = "grad"  # (the function must see the same trace kind as under record_call)

    def __init__(self, parent, n_inputs: int) -> None:
        super().__init__(parent, False, False)
        self.eqns: list = []
        self.consts: list = []          # (slot, value)
        self.const_slots: dict = {}     # id(value) -> slot
        self.n = n_inputs
        self.ok = True
        self.depth = 0

    def concrete(self, tracer):
        self.ok = False  # the function looked at a value
        return tracer.primal

    def _const(self, x) -> int:
        slot = self.const_slots.get(id(x))
        if slot is not None:
            return slot
        t = type(x)
        if isinstance(x, _ndarray):  # (fgrad.numpy's Array among them)
            # small enough to keep with the tape (one element broadcast to a shape: every
            # stride 0, whatever its size)
            if x.nbytes > _MAX_CONST_BYTES and any(x.strides):
                raise _Refused
        elif not (t in _NUMBERS or isinstance(x, _generic)):
            raise _Refused
        slot = self.const_slots[id(x)] = self.n
        self.n += 1
        self.consts.append((slot, x))
        return slot

    def process_primitive(self, prim, args, params):
        if self.depth:  # (an impl binding primitives of its own: not the function's applications)
            return self.parent.process_primitive(prim, args, params)
        vals, slots = [], []
        live = False
        for a in args:
            t = type(a)
            if (t is RecordTracer or t is WeakRecordTracer) and a._trace is self:
                vals.append(a.primal)
                slots.append(a.node)
                live = True
            else:
                if isinstance(a, Tracer):
                    raise _Refused
                vals.append(a)
                slots.append(None)
        self.depth += 1
        try:
            out = self.parent.process_primitive(prim, vals, params)
        finally:
            self.depth -= 1
        if not isinstance(out, (_ndarray, _generic)):
            raise _Refused
        if not live:  # a function of constants: a constant itself
            return out
        for k, a in enumerate(args):
            if slots[k] is None:
                slots[k] = self._const(a)
        slot = self.n
        self.n += 1
        self.eqns.append((prim, params, tuple(slots), slot))
        tracer = _new(RecordTracer)
        tracer._trace = self
        tracer.primal = out
        tracer.node = slot
        return tracer


class TapedSubgraph(Subgraph):
    """The subgraph of a taped op: its pullback walks the recording order with the engine's
    own steps for nodes like these (no hooks, nothing freed, no capture), not through the
    engine's general loop, one of which ran per op of a backward pass."""

    __slots__ = ()

    def pullback(self, cts: Sequence, add: Callable) -> tuple:
        order = self.order
        if order is None or not _PASSES.stack:  # (a walk outside any backward pass: the engine's own)
            return Subgraph.pullback(self, cts, add)
        pending: dict = {}
        for n, c in zip(self.outs, cts):
            if n is not None and c is not None:
                old = pending.get(n)
                pending[n] = c if old is None else add(old, c)
        if not pending:
            return (None,) * len(self.leaves)
        pop_ct, get_ct = pending.pop, pending.get
        found = {}
        for node in reversed(order):  # (children before parents, as backward_pass walks a tape)
            ct = pop_ct(node, None)
            if ct is None:
                continue
            prim = node.prim
            if prim is None:
                found[node] = ct
                continue
            primals = node.primals
            if primals is None:
                raise FgradRuntimeError(FREED_MESSAGE, doc="backward-twice")
            parents = node.parents
            if len(parents) == 1:
                needs = _NEEDS_ONE if parents[0] is not None else _NEEDS_NONE
            else:
                needs = tuple([p is not None for p in parents])
            if prim.vjp_fwd is None:
                in_cts = prim.vjp(needs, ct, node.out, *primals, **node.params)
            else:
                in_cts = prim.vjp(needs, ct, node.out, *primals, residuals=node.residuals, **node.params)
            for p, c in zip(parents, in_cts):
                if p is not None and c is not None:
                    old = get_ct(p)
                    pending[p] = c if old is None else add(old, c)
        return tuple([found.get(leaf) for leaf in self.leaves])


class Tape:
    """A function's taped applications (see the module doc); `record` reruns them."""

    __slots__ = ("eqns", "template", "n", "outs", "tree", "single", "plans")

    def __init__(self, eqns, consts, n, outs, tree, single) -> None:
        self.eqns, self.n = eqns, n
        self.template = [None] * n  # (the values a rerun starts from: the constants in place)
        for slot, v in consts:
            self.template[slot] = v
        self.outs, self.tree, self.single = outs, tree, single
        self.plans: dict = {}  # (diff, budget) -> compiled replay (_compile), or None

    def record(self, values: Sequence, diff: Sequence[int], fn: Callable) -> tuple:
        """What `record_call(fn, [values[i] for i in diff], False)` returns, where `fn` is the
        taped function with the inputs not in `diff` fixed to their `values`: the applications
        rerun on `values` under the current trace, each recorded (`record_primitive`) where an
        operand depends on an input in `diff` (a `Leaf` each, in order).

        Args:
            values: one value per taped input (NumPy arrays of the taped shapes and dtypes).
            diff: the positions of the differentiated inputs, ascending.
            fn: the function of the differentiated inputs, kept in the subgraph (a caller
                that differentiates the pullback reruns it).
        Returns:
            (out_tree, out_values, subgraph) as `record_call` gives them.
        """
        key = plan = None
        # (the compiled replay calls NumPy impls as the eval trace does: plain arrays only)
        if _state.trace is EVAL_TRACE and not _core_trace._debug_nans_threads:
            for v in values:
                if type(v) is not _ndarray:
                    break
            else:
                key = (tuple(diff), RecordTrace.MAX_NODES, RecordTrace.MAX_BYTES)
                plan = self.plans.get(key, _NONE)
                if plan is not None and plan is not _NONE:
                    vals, outs, leaves, order = plan(values)
                    return self._result(vals, outs, leaves, order, values, diff, fn)
        vals, outs, leaves, order, nodes, env = self._record(values, diff)
        if plan is _NONE:  # (first run under the eval trace for this `diff`: compile from it)
            self.plans[key] = _compile(self, diff, nodes, order, env) if order is not None else None
        return self._result(vals, outs, leaves, order, values, diff, fn)

    def _result(self, vals, outs, leaves, order, values, diff, fn) -> tuple:
        primals = tuple([values[i] for i in diff])
        if self.single:
            if outs[0] is not None:
                return None, vals, TapedSubgraph(leaves, outs, primals, fn, order)
            return self.tree, vals, None
        recorded = any(outs)
        return self.tree, vals, TapedSubgraph(leaves, outs, primals, fn, order) if recorded else None

    def _record(self, values: Sequence, diff: Sequence[int]) -> tuple:
        """The general rerun under any trace: (out values, out nodes, leaves, order, nodes, values)."""
        env = self.template.copy()
        env[:len(values)] = values
        nodes = [None] * self.n
        leaves = []
        for i in diff:
            leaf = nodes[i] = Leaf()
            leaves.append(leaf)
        parent = _state.trace
        order: list | None = []
        nbytes = 0
        max_nodes, max_bytes = RecordTrace.MAX_NODES, RecordTrace.MAX_BYTES
        for prim, params, slots, slot in self.eqns:
            if len(slots) == 1:  # (most applications: no lists to build)
                s = slots[0]
                p = nodes[s]
                if p is None:
                    env[slot] = parent.process_primitive(prim, (env[s],), params)
                    continue
                out, node = record_primitive(parent, prim, (env[s],), params, (p,))
            else:
                args = [env[s] for s in slots]
                parents = [nodes[s] for s in slots]
                if not any(parents):
                    env[slot] = parent.process_primitive(prim, args, params)
                    continue
                out, node = record_primitive(parent, prim, args, params, tuple(parents))
            env[slot] = out
            if node is not None:
                nodes[slot] = node
                if order is not None:  # (RecordTrace's tape and its budget)
                    if type(out) is _ndarray:
                        nbytes += out.nbytes
                    if nbytes > max_bytes or len(order) >= max_nodes:
                        order = None
                    else:
                        order.append(node)
        outs = [nodes[s] for s in self.outs]
        vals = [env[s] for s in self.outs]
        return vals, outs, leaves, order, nodes, env


def tape(fn: Callable, values: Sequence) -> Tape | None:
    """Run `fn(*values)` once on tracers that log its applications; the `Tape`, or None when
    the function cannot be taped (see the module doc).

    Args:
        fn: a function of arrays whose applications depend only on their shapes and dtypes.
        values: one NumPy array per input.
    Returns:
        The Tape, or None.
    """
    trace = TapeTrace(_state.trace, len(values))
    prev = _state.trace
    _state.trace = trace
    try:
        with warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("always")
            tracers = []
            for k, v in enumerate(values):
                t = _new(RecordTracer)
                t._trace, t.primal, t.node = trace, v, k
                tracers.append(t)
            out = fn(*tracers)
    except Exception:  # (refused, or an error the caller's own run raises as it should)
        return None
    finally:
        _state.trace = prev
        trace.active = False
    if not trace.ok or warned:  # (a rerun would not warn again)
        return None
    single = type(out) is RecordTracer and out._trace is trace
    flat, tree = tree_flatten(out)
    outs = []
    for o in flat:
        if type(o) is not RecordTracer or o._trace is not trace:
            return None
        outs.append(o.node)
    return Tape(trace.eqns, trace.consts, trace.n, outs, tree, single)


_NONE = object()  # (no plan compiled yet for that key)


def _compile(tape: Tape, diff: Sequence[int], nodes: list, order: list, env: list) -> Callable | None:
    """The rerun of `tape` for differentiated inputs `diff` under the eval trace, as one
    straight-line Python function of the input values that calls the impls itself:
    `replay(values) -> (out values, out nodes, leaves, order)`, what `Tape._record` gives.

    Which applications record a node is fixed by the inputs' shapes and dtypes (the tape's
    key) and `diff`, so the general run that produced `nodes` decides it once; the function
    then does what that run did for each application (`EvalTrace.process_primitive`'s
    impl call and fresh-storage rule, `record_primitive`'s node with what the rule reads),
    without the per-application dispatch. None when some constant is not a plain NumPy
    value (the eval trace converts those) or a recorded application's node is not a plain
    `Node`.

    Args:
        tape: the tape.
        diff: the positions of the differentiated inputs.
        nodes: per slot, the node the general run recorded (a `Leaf` for an input in diff).
        order: the nodes the general run listed, in order (its budget was not exceeded).
        env: per slot, the value the general run computed (their shapes and dtypes are the
            key's: an unsaved stand-in is built from them without looking at the value).
    Returns:
        The replay function, or None.
    """
    ns: dict = {"np": np, "nd": _ndarray, "asarray": np.asarray, "aliases": aliases, "Leaf": Leaf,
                "new": _new, "Node": Node, "unsaved": Unsaved.of, "Unsaved": Unsaved, "record_primitive": record_primitive,
                "EV": EVAL_TRACE}
    for slot, v in enumerate(tape.template):
        if v is None:
            continue
        if not (type(v) is _ndarray or type(v) in _NUMBERS or isinstance(v, _generic)):
            return None
        ns[f"v{slot}"] = v
    # (the inputs hold the first slots, before the constants and results)
    n_values = min([slot for *_, slot in tape.eqns]
                   + [s for s, v in enumerate(tape.template) if v is not None] + [len(tape.template)])
    names = ", ".join(f"v{k}" for k in range(n_values))
    lines = ["def replay(values):"]
    lines.append(f"    {names}, = values" if n_values else "    pass")
    leaves = []
    for i in diff:
        lines.append(f"    n{i} = Leaf()")
        leaves.append(f"n{i}")
    listed = []
    for k, (prim, params, slots, slot) in enumerate(tape.eqns):
        ns[f"P{k}"] = prim
        ns[f"p{k}"] = params
        args = ", ".join(f"v{s}" for s in slots)
        targs = f"({args},)"
        parents = [f"n{s}" if nodes[s] is not None else "None" for s in slots]
        node = nodes[slot]
        live = any(nodes[s] is not None for s in slots)
        if live and prim.vjp_fwd is not None and not prim.nondiff:
            # (a forward rule with residuals: record_primitive itself)
            lines.append(f"    v{slot}, n = record_primitive(EV, P{k}, {targs}, p{k}, ({', '.join(parents)},))")
            if node is not None:
                lines.append(f"    n{slot} = n")
                listed.append(f"n{slot}")
            continue
        if node is not None and type(node) is not Node:
            return None
        ns[f"I{k}"] = prim.raw_impl
        kw = f", **p{k}" if params else ""
        lines.append(f"    o = I{k}({args}{', ' if args else ''}xp=np{kw})")
        lines.append("    if type(o) is not nd:")
        lines.append("        o = asarray(o)")
        if slots:
            same = " or ".join(f"o is v{s}" for s in slots)
            lines.append(f"    elif {same}:")
            lines.append("        o = o.view()" if prim.view else "        o = o.copy()")
            if not prim.view:
                lines.append(f"    elif o.base is not None and aliases(o, {targs}):")
                lines.append("        o = o.copy()")
        lines.append(f"    v{slot} = o")
        if node is None:
            continue
        unread = prim.unread_inputs(len(slots)) if prim.saved_inputs is not None else ()
        kept = []
        for j, s in enumerate(slots):
            inner = nodes[s] is not None and nodes[s].prim is not None
            if j in unread and inner:
                kept.append(_stand_in(lines, ns, s, env[s]))
            else:
                kept.append(f"v{s}")
        lines.append(f"    n = new(Node); n.prim = P{k}; n.params = p{k}; n.parents = ({', '.join(parents)},)")
        lines.append(f"    n.primals = ({', '.join(kept)},)")
        lines.append("    n.out = o" if prim.saves_output else f"    n.out = {_stand_in(lines, ns, slot, env[slot])}")
        lines.append("    n.hooks = None; n.residuals = None")
        lines.append(f"    n{slot} = n")
        listed.append(f"n{slot}")
    if len(listed) != len(order):
        return None
    outs = ", ".join(f"v{s}" for s in tape.outs)
    out_nodes = ", ".join(f"n{s}" if nodes[s] is not None else "None" for s in tape.outs)
    lines.append(f"    return [{outs}], [{out_nodes}], [{', '.join(leaves)}], [{', '.join(listed)}]")
    exec("\n".join(lines), ns)  # noqa: S102 (source built above from slot numbers only)
    return ns["replay"]


def _stand_in(lines: list, ns: dict, slot: int, value) -> str:
    """The expression for slot's `Unsaved` stand-in in `_compile`'s source: built from the
    shape and dtype the general run saw (`Unsaved.of` without its type dispatch) where that
    was a NumPy array, else by `Unsaved.of` on the value."""
    if type(value) is not _ndarray:
        return f"unsaved(v{slot})"
    ns[f"S{slot}"], ns[f"D{slot}"] = value.shape, value.dtype
    lines.append(f"    u{slot} = new(Unsaved); u{slot}.shape = S{slot}; u{slot}.dtype = D{slot}")
    return f"u{slot}"
