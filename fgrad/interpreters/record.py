"""The recorder: runs primitives with concrete values and records a `Node` for each
application that depends on a differentiated input, for the backward engine.

`record_primitive` is the one place that decides what is recorded and builds the node. Two
callers share it: `RecordTrace` (fgrad.vjp / grad: inputs are RecordTracers) and fgrad.torch's
single-primitive fast paths (values of Tensors that require grad), which name their nodes
after PyTorch's `grad_fn` classes through the `node_type` hook and layer what is PyTorch's own
(version counters of saved tensors) on the returned node. `record_call` records a whole
function as one node's subgraph (fgrad.torch's torch ops). `graph_to_jaxpr` turns any of these
recorded graphs into a typed Jaxpr.
"""
from __future__ import annotations

from operator import attrgetter
from typing import Callable, Sequence

import numpy as np

from ..core.avals import weak_aval
from ..core.errors import FgradRuntimeError
from ..core.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var
from ..core.trace import Trace, Tracer, _state, aliases, aval_of, snapshot
from ..tree_util import tree_flatten
from .backward import FREED_MESSAGE, Leaf, Node, Unsaved, backward_pass, toposort

_new = object.__new__
_unsaved = Unsaved.of
_ndarray = np.ndarray


def record_primitive(parent: Trace, prim, primals: Sequence, params: dict, parents: tuple,
                     node_type: type = Node, fwd: bool = True) -> tuple:
    """Run `prim` on `primals` under `parent` and record it: `(out, node)`, node None when
    the application is not differentiable (see below). The caller has established that some
    input is differentiated; `parents[i]` is input i's node, or None for a constant.

    - A primitive with a `vjp_fwd` rule runs that instead (once per recorded application)
      and its residuals go in the node (see `Primitive.def_vjp_fwd`), unless `fwd` is False:
      the facade passes False when the values are tracers, because then the trace that owns
      them must see the primitive itself (its own rule reruns the forward half).
    - Nothing is recorded for `nondiff` primitives (comparisons, argmax) nor for outputs
      that are not float or complex: integers and booleans carry no derivative. Complex
      outputs are recorded like real ones (the rules follow JAX's complex convention, see
      fgrad.ops.complex).
    - The node keeps only the values the primitive's VJP rule reads (`Primitive.def_saves`;
      all of them for an undeclared primitive); the others become `Unsaved` stand-ins.
    - `node_type` is the naming hook: the class of the node, a `Node` subclass (the facade
      passes its `grad_fn` class, e.g. `MulBackward0`, which may add slots it fills itself).
    The facade calls this with positional arguments: keywords cost time on every op.
    """
    residuals = None
    if fwd and prim.vjp_fwd is not None and not prim.nondiff:
        out, residuals = parent.run(prim.vjp_fwd, primals, params)
    else:
        # The parent interprets the primitive itself (each trace sets the current trace for
        # the rules it runs), which skips a second dispatch through bind.
        out = parent.process_primitive(prim, primals, params)
    if prim.nondiff:
        return out, None
    kind = out.dtype.kind
    if kind != "f" and kind != "c":
        return out, None
    # Node.__init__ inlined (this runs for every recorded op of a training step)
    node = _new(node_type)
    node.prim = prim
    node.params = params
    node.parents = parents
    unread = None
    if prim.saved_inputs is not None:
        unread = prim._unread.get(len(primals))
        if unread is None:
            unread = prim.unread_inputs(len(primals))
    if not unread:
        node.primals = tuple(primals)
    else:
        # What the rule does not read goes (Primitive.def_saves), except the values of leaves
        # and constants: graph_to_jaxpr reads them, and they outlive the graph anyway.
        kept = list(primals)
        for i in unread:
            p = parents[i]
            if p is not None and p.prim is not None:
                kept[i] = _unsaved(kept[i])
        node.primals = tuple(kept)
    node.out = out if prim.saves_output else _unsaved(out)
    node.hooks = None
    node.residuals = residuals
    return out, node


class _Known:
    """A stand-in parent trace for `record_known`: its one answer is the known output."""

    __slots__ = ("out",)

    def __init__(self, out) -> None:
        self.out = out

    def process_primitive(self, prim, primals, params):
        return self.out


def record_known(prim, args: Sequence, params: dict, out):
    """`prim` applied to `args` under the current trace when its output `out` is already
    known (a value a checkpoint's forward saved): under a recording trace the application
    is recorded as `record_primitive` records it (so reverse mode goes through prim's rule),
    without running prim again; under any other trace, or with no recorded argument, `out`
    itself, a constant there.

    Args:
        prim: the primitive.
        args: its arguments (this trace's tracers, or values).
        params: its params.
        out: its output on those arguments' values.
    Returns:
        A tracer of the recording trace holding `out`, or `out`.
    """
    trace = _state.trace
    if not isinstance(trace, RecordTrace):
        return out
    primals, parents, recorded = trace.partition(args)
    if not recorded:
        return out
    _, node = record_primitive(_Known(out), prim, tuple(primals), params, tuple(parents), fwd=False)
    return out if node is None else trace._tracer(out, node)


class RecordTracer(Tracer):
    __slots__ = ("primal", "node")

    def __init__(self, trace, primal, node) -> None:
        self._trace = trace
        self.primal = primal
        self.node = node

    @property
    def aval(self):
        return aval_of(self.primal)

    shape = property(lambda self: self.primal.shape)
    dtype = property(lambda self: self.primal.dtype)


class WeakRecordTracer(RecordTracer):
    """A recorded Python number (vjp(f, x, 2.0)): it promotes weakly, as the number does
    eagerly. Not a fast type, so promotion always looks at its aval."""

    __slots__ = ()
    _weak = True

    @property
    def aval(self):
        return weak_aval(aval_of(self.primal))


class RecordTrace(Trace):
    """fgrad.vjp's trace: concrete values (so Python control flow on them works under grad),
    with a node per recorded application.

    `taped=True` (grad over concrete values) also lists the nodes in recording order in
    `tape`, which is a topological order (a node is recorded after its parents): grad's
    replayed backward pass (interpreters/replay.py) keys the graph by it without a graph
    walk. A tape keeps alive nodes the output does not depend on, which the recorder would
    otherwise free at once, so it stops (`tape` becomes None, and that call is not replayed)
    past MAX_NODES nodes or MAX_BYTES of recorded outputs: replaying pays off on many small
    arrays, not on large ones. Whoever tapes sets `tape = None` when done, so leaked tracers
    do not keep the graph alive."""

    name = "grad"
    differentiates = True
    unpack = attrgetter("primal", "node")
    MAX_NODES = 20_000
    MAX_BYTES = 64 << 20

    def __init__(self, parent, taped: bool = False, snapshots: bool = True) -> None:
        super().__init__(parent)
        self.tape: list | None = [] if taped else None
        self._bytes = 0
        # whether nodes keep snapshots of the NumPy constants they read (see _snapshot_consts);
        # record_call's caller may watch those buffers itself (the facade's version counters)
        self.snapshots = snapshots

    def concrete(self, tracer):
        return tracer.primal

    def weaken(self, tracer):
        if type(tracer) is RecordTracer and tracer._trace is self:
            return WeakRecordTracer(self, tracer.primal, tracer.node)
        return tracer

    def process_primitive(self, prim, args, params):
        if len(args) == 1:  # one operand, this trace's own tracer: no lists to build
            a = args[0]
            t = type(a)
            if (t is RecordTracer or t is WeakRecordTracer) and a._trace is self:
                out, node = record_primitive(self.parent, prim, (a.primal,), params, (a.node,))
                return out if node is None else self._tracer(out, node)
        if len(args) == 2:  # two operands, this trace's tracers or NumPy constants: no lists
            a, b = args
            ta, tb = type(a), type(b)
            own_a = (ta is RecordTracer or ta is WeakRecordTracer) and a._trace is self
            own_b = (tb is RecordTracer or tb is WeakRecordTracer) and b._trace is self
            if own_a and own_b:
                out, node = record_primitive(self.parent, prim, (a.primal, b.primal), params, (a.node, b.node))
                return out if node is None else self._tracer(out, node)
            # a NumPy constant operand: the node keeps a snapshot of it (see _snapshot_consts)
            if own_a and tb is _ndarray and prim.vjp_fwd is None:
                out, node = record_primitive(self.parent, prim, (a.primal, b), params, (a.node, None))
                if node is None:
                    return out
                if self.snapshots and (b.base is not None or b.flags.writeable):
                    node.primals = (node.primals[0], snapshot(b))
                return self._tracer(out, node)
            if own_b and ta is _ndarray and prim.vjp_fwd is None:
                out, node = record_primitive(self.parent, prim, (a, b.primal), params, (None, b.node))
                if node is None:
                    return out
                if self.snapshots and (a.base is not None or a.flags.writeable):
                    node.primals = (snapshot(a), node.primals[1])
                return self._tracer(out, node)
        primals, parents, recorded = self.partition(args)
        if not recorded:
            return self.parent.process_primitive(prim, primals, params)
        parents = tuple(parents)
        if prim.vjp_fwd is not None and self.snapshots:  # its residuals may hold the constants themselves
            primals = _snapshot_consts(primals, parents)
        out, node = record_primitive(self.parent, prim, primals, params, parents)
        if node is None:
            return out
        if self.snapshots:
            node.primals = _snapshot_consts(node.primals, parents)
        return self._tracer(out, node)

    def _tracer(self, out, node) -> RecordTracer:
        tape = self.tape
        if tape is not None:
            if type(out) is _ndarray:  # (an enclosing transform's tracer holds no bytes of its own)
                self._bytes += out.nbytes
            if self._bytes > self.MAX_BYTES or len(tape) >= self.MAX_NODES:
                self.tape = None
            else:
                tape.append(node)
        tracer = _new(RecordTracer)  # (RecordTracer.__init__ inlined: one call less per op)
        tracer._trace = self
        tracer.primal = out
        tracer.node = node
        return tracer


def _snapshot_consts(primals: tuple, parents: tuple) -> tuple:
    """`primals` with each constant operand (no parent node: a NumPy array the function
    read, not a value derived from a differentiated input) replaced by its snapshot
    (`core.trace.snapshot`): a node keeps the value the primitive ran on, so a buffer the
    user refills or reuses afterwards (inside the function, or before calling vjp's pullback)
    changes no gradient. Values derived from the inputs are fgrad's own arrays, which nothing
    writes into."""
    out = None
    for i, p in enumerate(parents):
        if p is None:
            x = primals[i]
            s = snapshot(x)
            if s is not x:
                if out is None:
                    out = list(primals)
                out[i] = s
    return primals if out is None else tuple(out)


# --- a whole function as one node ------------------------------------------------------------------

class Subgraph:
    """What a node recorded by `record_call` keeps: the function's own recorded graph, from
    `leaves` (one `Leaf` per differentiated input, in order) to `outs` (per flat output, its
    node, or None for an output that does not depend on a differentiated input), with the
    input values it ran on (`inputs`) and the function of those inputs (`fn`), which a caller
    that differentiates the pullback itself reruns. `order` lists the recorded nodes in
    recording order (a topological order; None when the recorder stopped taping a large
    function), so a pullback walks it instead of sorting the graph again. The node's owner
    stores the subgraph in the node's `residuals`, so the engine frees it with the node's
    other saved values."""

    __slots__ = ("leaves", "outs", "inputs", "fn", "order")

    def __init__(self, leaves, outs, inputs, fn, order=None) -> None:
        self.leaves, self.outs, self.inputs, self.fn = leaves, outs, inputs, fn
        # (the leaves first: the walk pops from the end, so they are reached last)
        self.order = None if order is None else [*leaves, *order]

    def pullback(self, cts: Sequence, add: Callable) -> tuple:
        """One cotangent per differentiated input (None where no output reaches it) for the
        output cotangents `cts` (None for an output that gets none). The subgraph is kept: a
        retained outer graph may pull back through it again."""
        roots = [(n, c) for n, c in zip(self.outs, cts) if n is not None and c is not None]
        res = backward_pass(roots, add=add, retain=True, order=self.order) if roots else {}
        return tuple(res.get(id(leaf)) for leaf in self.leaves)

    def keeps(self, x) -> bool:
        """Whether the recorded graph kept the array `x`, or a view into it, for its rules (an
        input, or a constant `fn` read): an in-place change of `x` since then changes what the
        pullback computes."""
        if not hasattr(x, "base"):
            return False
        for node in toposort([n for n in self.outs if n is not None]):
            prim = node.prim
            if prim is None:
                continue
            # only what the rule reads (Primitive.def_saves): a leaf's value is kept unread too
            unread = prim.unread_inputs(len(node.primals)) if prim.saved_inputs is not None else ()
            kept = [v for k, v in enumerate(node.primals) if k not in unread]
            if prim.saves_output:
                kept.append(node.out)
            for v in kept:
                if hasattr(v, "base") and type(v) is not Unsaved and aliases(v, (x,)):
                    return True
        return False


class SubgraphOut:
    """The residuals of a node that stands for output `k` of a `record_call` (its owner
    keeps one per differentiable output): `graph_to_jaxpr` shows the subgraph's equations.
    `where[n]` is the position among the node's inputs of the subgraph's leaf n (the node
    may have inputs that are not differentiated, with a None parent)."""

    __slots__ = ("sub", "k", "where")

    def __init__(self, sub: Subgraph, k: int, where: tuple) -> None:
        self.sub, self.k, self.where = sub, k, where


def record_call(fn: Callable, primals: Sequence, snapshots: bool = True) -> tuple:
    """Run `fn(*primals)` on a fresh recording trace, every primal differentiated, as one
    application: `(out_tree, out_values, subgraph)`, the subgraph None when no output depends
    on an input, the tree None when the output is one array. Callers that present a whole function as one graph node (the Tensor facade's
    torch ops) keep the subgraph in that node and pull back through it; the values may be
    arrays or tracers of an enclosing transform. `snapshots=False`: the nodes keep the very
    constant buffers `fn` read, for a caller that detects writes into them itself."""
    # (new_trace inlined, and one output handled without a pytree walk: this runs for every
    # torch op of a training step that records)
    # (taped: the recording order is a topological order, so the pullback needs no graph walk)
    trace = RecordTrace(_state.trace, True, snapshots)
    prev = _state.trace
    _state.trace = trace
    try:
        leaves = [Leaf() for _ in primals]
        out = fn(*[RecordTracer(trace, v, leaf) for v, leaf in zip(primals, leaves)])
    finally:
        _state.trace = prev
        trace.active = False
        tape, trace.tape = trace.tape, None
    if type(out) is RecordTracer and out._trace is trace:
        return None, [out.primal], Subgraph(leaves, [out.node], primals, fn, tape)
    flat, tree = tree_flatten(out)
    vals, outs = [], []
    recorded = False
    for o in flat:
        if isinstance(o, RecordTracer) and o._trace is trace:
            vals.append(o.primal)
            outs.append(o.node)
            recorded = True
        else:
            vals.append(o)
            outs.append(None)
    return tree, vals, Subgraph(leaves, outs, primals, fn, tape) if recorded else None


# --- a recorded graph as a Jaxpr ------------------------------------------------------------------

def graph_to_jaxpr(outputs: Sequence[tuple], inputs: Sequence[tuple],
                   values: Callable[[Node], tuple] | None = None,
                   recorded_as: Callable[[Node], Node | None] | None = None) -> ClosedJaxpr:
    """The recorded computation from `inputs` to `outputs` as a typed `ClosedJaxpr`: print it
    to read the IR (as make_jaxpr shows it), call it (`eval_jaxpr`) to rerun the computation
    on other input values, or hand it to jit-level tools.

    Both lists hold `(node, value)` pairs, as a recorded value carries them (a RecordTracer's
    `node` and `primal`, a Tensor's grad_fn or AccumulateGrad node and its value); the node
    may be None (a value that does not depend on a differentiated input).
    - An input pair becomes an input variable of the value's aval. Its node (a `Leaf`, or any
      node: the graph is then cut there) stands for it wherever a recorded application used
      it; an input value used as a constant (the very object) is read from the variable too.
    - An output pair's node gives the output variable; an output without a node is a constant.
    - Everything else the graph read is a constant of the jaxpr (0-d ones inline literals).
    - Leaves that are not among `inputs` are constants holding the value they were used with.
    Only differentiable applications are recorded: what a comparison, argmax or integer op
    computed from an input (relu's mask, an index) is a constant too. So the jaxpr reruns the
    computation as recorded, and equals the function at other inputs only where those stay.
    `values(node) -> (out, primals)` reads a node's saved values (the facade checks them
    for in-place changes there); by default `(node.out, node.primals)`. A graph whose saved
    values were freed by a backward pass without retain_graph raises the engine's RuntimeError.
    `recorded_as(node)`, when given, may name another node whose computation stands for
    `node`'s in the jaxpr (a node whose rule wraps another node's, with other parents: the
    facade's CopySlices); None keeps `node`.
    """
    invars: list[Var] = []
    env: dict[int, Var] = {}        # id(node) -> its variable
    by_value: dict[int, Var] = {}   # id(input value) -> its variable
    for node, value in inputs:
        v = Var(aval_of(value))
        invars.append(v)
        by_value[id(value)] = v
        if node is not None:
            env[id(node)] = v
    constvars: list[Var] = []
    consts: list = []
    const_ids: dict[int, Var] = {}

    def constant(x):
        if isinstance(x, (np.ndarray, np.generic)) and x.shape == ():
            return Literal(x)
        v = const_ids.get(id(x))
        if v is None:
            v = const_ids[id(x)] = Var(aval_of(x))
            constvars.append(v)
            consts.append(x)
        return v

    eqns: list = []
    roots = [n for n, _ in outputs if n is not None]
    _emit_nodes(roots, env, by_value, constant, eqns, values, recorded_as)
    # an output that is a leaf outside `inputs` (or has no node) is a constant, unless it is an input
    outvars = [env.get(id(n)) or by_value.get(id(x)) or constant(x) for n, x in outputs]
    return ClosedJaxpr(Jaxpr(constvars, invars, eqns, outvars), consts)


def _emit_nodes(roots, env, by_value, constant, eqns, values, recorded_as, inlined=None) -> None:
    """graph_to_jaxpr's walk: the equations of the nodes from `roots` down to those in `env`."""
    inlined = {} if inlined is None else inlined  # id(Subgraph) -> {id(its node): variable}
    for node in toposort(roots, env):  # not beyond the inputs: the graph is cut there
        if id(node) in env:
            continue
        if node.prim is None:  # a leaf not among the inputs: the value its consumers saw
            continue
        if node.primals is None:
            raise FgradRuntimeError(FREED_MESSAGE)
        alt = recorded_as(node) if recorded_as is not None else None
        if alt is not None:
            _emit_nodes([alt], env, by_value, constant, eqns, values, recorded_as, inlined)
            env[id(node)] = env[id(alt)]
            continue
        out, primals = (node.out, node.primals) if values is None else values(node)
        atoms = []
        for p, raw, x in zip(node.parents, node.primals, primals):
            v = env.get(id(p)) if p is not None else None
            if v is None:
                v = by_value.get(id(raw))
            atoms.append(v if v is not None else constant(x))
        res = node.residuals
        if type(res) is SubgraphOut:  # a whole function recorded as one node: its equations
            sub = res.sub
            inner = inlined.get(id(sub))
            if inner is None:
                inner = inlined[id(sub)] = {id(leaf): atoms[i] for leaf, i in zip(sub.leaves, res.where)}
            target = sub.outs[res.k]
            for n in toposort([target], inner):
                if id(n) in inner or n.prim is None:
                    continue
                args = [inner.get(id(p)) if p is not None else None for p in n.parents]
                args = [a if a is not None else (by_value.get(id(x)) or constant(x))
                        for a, x in zip(args, n.primals)]
                v = Var(aval_of(n.out))
                eqns.append(Eqn(n.prim, args, [v], n.params))
                inner[id(n)] = v
            env[id(node)] = inner[id(target)]
            continue
        outvar = Var(aval_of(out))
        eqns.append(Eqn(node.prim, atoms, [outvar], node.params))
        env[id(node)] = outvar

