"""Replayed backward passes: a first-order eager `grad` whose recorded graph has been seen
before runs its backward pass as one generated program instead of through the engine.

Eagerly, `grad(f)(x)` records a graph of nodes (forward) and walks it calling each node's VJP
rule (backward). Every rule call binds primitives through the trace machinery, about 3 us a
node in Python, which dominates small-array workloads (W1 in bench/WORKLOADS.md). A training
loop records the same graph on every call: the same primitives with the same params, shapes,
dtypes and wiring, only the values differ. So the backward pass is keyed by that structure
(`_key`); after `HOT` sightings of a key, the engine's own walk is traced once over stand-ins
(the rules staged into a Jaxpr, exactly as jit(grad) stages them) and compiled by jit's
program generator without regions (no Numba kernels, no scalar tier), so each equation is
one direct call of the primitive's impl (`np.multiply` itself where that is the impl): the same impls on the same values in the same order as the engine, hence
bit-identical results. Later calls with the key pass their saved values to that program.

The key holds everything the rules may look at besides values: each node's primitive and
params, which node feeds which operand, every saved value's type, shape and dtype, and which
saved values are one object (the trace sees them as one variable). Graphs the engine must
walk itself are never replayed: nodes with hooks or forward residuals (scan, while, custom_vjp), leaves
other than the differentiated input, values that are not NumPy arrays or scalars (tracers of
an enclosing transform, GPU arrays), unhashable params, graphs past the tape's budget
(RecordTrace's tape budget: large arrays, where the per-node overhead is negligible and the engine
frees saved values as it goes), and any graph whose rules could not be staged (a rule that
branches on a value).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..core.avals import PY_NUMBERS, weak_aval
from ..core.ir import ClosedJaxpr, cse_jaxpr, dce_jaxpr
from ..core.trace import EVAL_TRACE, _state, aval_of, new_trace
from .backward import Leaf, Node, Unsaved, backward_pass
from .compile.program import Program
from .staging import StagingTrace

# Sightings of a graph's key before its program is built (building costs about 0.1 ms a node,
# each replay saves about 2 us a node: a graph recorded a few times is likely in a loop).
HOT = 4
# Keys remembered at most; the cache is emptied when full (graphs that change every call).
MAX_KEYS = 512

_ndarray = np.ndarray
_generic = np.generic
_new = object.__new__
_cache: dict = {}  # key -> program function, a sighting count (int), or None (never replayed)


class ReplayStats:
    """How many backward passes ran as a replayed program, and how many programs were built
    (tests check both; `fgrad.interpreters.replay.stats`)."""

    __slots__ = ("programs", "replays")

    def __init__(self) -> None:
        self.replays = 0
        self.programs = 0

    def __repr__(self) -> str:
        return f"ReplayStats(replays={self.replays}, programs={self.programs})"


stats = ReplayStats()


def replay_grad(tape: list, root, seed, leaf, add: Callable):
    """The cotangent reaching `leaf` when `seed` is pulled back from `root` (what
    `backward_pass([(root, seed)], add=add).get(id(leaf))` gives), computed by this graph
    structure's program; NotImplemented when the engine must walk it (see the module).
    `tape` lists the graph's nodes in recording order (RecordTrace.tape; None: not
    taped)."""
    if tape is None or _state.trace is not EVAL_TRACE or _state.debug_nans or type(seed) is not _ndarray:
        return NotImplemented
    walked = _key(tape, root, leaf)
    if walked is None:
        return NotImplemented
    key, vals = walked
    try:
        entry = _cache.get(key)
    except TypeError:  # unhashable params
        return NotImplemented
    if entry is None:
        if key in _cache:
            return NotImplemented
        if len(_cache) >= MAX_KEYS:
            _cache.clear()
        _cache[key] = 1
        return NotImplemented
    if type(entry) is int:
        if entry + 1 < HOT:
            _cache[key] = entry + 1
            return NotImplemented
        entry = _cache[key] = _build(tape, root, leaf, vals, seed, add)
        if entry is None:
            return NotImplemented
        stats.programs += 1
    stats.replays += 1
    return entry(seed, *vals)[0]


def _key(tape: list, root, leaf):
    """(key, values) of the recorded graph, or None when it is not replayable. `values` are
    the distinct saved values in first-use order (the program's inputs after the seed). The
    key is flat: per node its primitive, params, arity, the tape positions of its parents
    (-1: a constant, -2: the leaf) and its saved values (below); last, the root's position
    and output type.

    A node's output that was not saved (an `Unsaved`) adds nothing: its shape and dtype are
    those of the same value where a later node takes it as an operand, which that node's
    items record, and a value no later node takes gets no cotangent, except the root's,
    recorded last. (Those are most of a graph's outputs; the key is built on every call.)"""
    key: list = []
    vals: list = []
    seen: dict = {}    # id(value) -> its index in vals
    pos: dict = {leaf: -2, None: -1}
    append, see, vappend, get = key.append, seen.get, vals.append, pos.get
    for i, node in enumerate(tape):
        pos[node] = i
        if node.residuals is not None or node.hooks is not None:
            return None
        params = node.params
        parents = node.parents
        append(node.prim)
        append(tuple(params.items()) if params else ())
        append(len(parents))
        for p in parents:
            k = get(p)
            if k is None:  # a node of another graph
                return None
            append(k)
        out = node.out
        for v in (*node.primals, out) if type(out) is not Unsaved else node.primals:
            # an item per value: its index (an int) when seen before; else a (shape, dtype)
            # for an array, (None, shape, dtype) for an Unsaved, (type, dtype) for a number (so
            # the flat key parses one way only: no item is a Primitive)
            t = type(v)
            if t is _ndarray:
                j = see(id(v))
                if j is None:
                    seen[id(v)] = len(vals)
                    vappend(v)
                    append((v.shape, v.dtype))
                else:
                    append(j)
            elif t is Unsaved:
                append((None, v.shape, v.dtype))
            elif t in PY_NUMBERS or isinstance(v, _generic):
                j = see(id(v))
                if j is None:
                    seen[id(v)] = len(vals)
                    vappend(v)
                    append((t, getattr(v, "dtype", None)))
                else:
                    append(j)
            else:  # a tracer of an enclosing transform, a GPU array, ...
                return None
    r = pos.get(root)
    if r is None or r < 0:
        return None
    append(r)
    out = root.out
    append((type(out), getattr(out, "shape", None), getattr(out, "dtype", None)))
    return tuple(key), vals


def _build(tape, root, leaf, vals, seed, add):
    """The program computing leaf's cotangent from (seed, *vals), or None when the rules do
    not stage. The engine itself is traced, over a copy of the graph whose saved values are
    the staged inputs, so the program is the engine's computation by construction."""
    index = {id(v): k for k, v in enumerate(vals)}
    try:
        with new_trace(StagingTrace, "replay") as st:
            seed_in = st.new_arg(aval_of(seed), "seed")
            ins = [st.new_arg(weak_aval(aval_of(v)) if type(v) in PY_NUMBERS else aval_of(v), f"saved {k}")
                   for k, v in enumerate(vals)]

            def staged(v):
                k = index.get(id(v))
                return v if k is None else ins[k]  # (Unsaved stand-ins stay as they are)

            copies: dict = {leaf: Leaf()}
            for node in tape:
                copy = _new(Node)
                copy.prim = node.prim
                copy.params = node.params
                copy.parents = tuple([None if p is None else copies[p] for p in node.parents])
                copy.primals = tuple([staged(v) for v in node.primals])
                copy.out = staged(node.out)
                copy.hooks = None
                copy.residuals = None
                copies[node] = copy
            ct = backward_pass([(copies[root], seed_in)], add=add, retain=True).get(id(copies[leaf]))
            if ct is None:
                return None
            jaxpr, consts = st.to_jaxpr([ct])
        jaxpr, used = dce_jaxpr(cse_jaxpr(jaxpr))
        # (outputs as the engine gives them: a cotangent made from this call's values)
        return Program(ClosedJaxpr(jaxpr, [consts[i] for i in used]), regions=False,
                       fresh_outputs=False).load()
    except Exception:  # noqa: BLE001  (a rule that does not stage: the engine walks this graph, and
        return None    # raises there whatever error is genuine)
