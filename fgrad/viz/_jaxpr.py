"""Jaxprs as pictures: a traced function's IR, with the equations of each backward pass told
apart from the forward ones, and a jit-compiled program with its fused regions boxed.

How forward and backward equations are told apart
-------------------------------------------------
`trace` stages the function as `fgrad.make_jaxpr` does, on a staging trace that notes, for
each equation as it is emitted, whether the reverse-mode engine
(`fgrad.interpreters.backward.current_pass()`) is running at that moment: every VJP rule runs
inside it (so do custom_vjp backward functions, the recomputation of `checkpoint`, and
`Tensor.backward()` called inside the function), and nothing else does. An equation emitted
outside it is *forward*; one emitted inside the k-th backward pass (numbered in the order the
passes first emit an equation) belongs to *backward pass k*. Passes that nest count as the
outermost one: a VJP rule that runs a backward pass of its own (checkpoint's does) is part of
the pass that called it. So `grad(f)` shows forward and backward, and `grad(grad(f))` shows the forward
computation, the first derivative's backward pass (which the second derivative records as
its forward) and the second derivative's backward pass, in three colours. No heuristic on the
data flow is involved: a rule's equation that reads no cotangent (cos(x) in sin's VJP) is
still backward. Forward-mode transforms (jvp, jacfwd) run no backward pass: their tangent
equations are forward. The jaxpr is then simplified as make_jaxpr does (dead code dropped,
common subexpressions merged): a backward equation identical to a live forward one is drawn
once, as forward, since the IR computes it there; dead code is dropped before the merge too, so
one identical to a forward equation that nothing else reads (grad discards f's value) stays
backward. The equations are make_jaxpr's, up to their order.
"""
from __future__ import annotations

import inspect
from typing import Callable, Sequence

import numpy as np

from ..core.avals import PY_NUMBERS, weak_aval
from ..core.errors import FgradRuntimeError
from ..core.ir import ClosedJaxpr, Jaxpr, Literal, cse_jaxpr, dce_jaxpr
from ..core.trace import aval_of, new_trace
from ..interpreters.backward import current_pass
from ..interpreters.compile.program import Program
from ..interpreters.staging import StagingTrace
from ..numpy._util import as_value
from ..torch._tensor.tensor import Tensor, wrap
from ..tree_util import keystr, tree_flatten, tree_flatten_with_path, tree_unflatten
from ._graph import Graph, Html

# Fill colours: inputs, constants, outputs, and the equations of each phase (forward, then
# backward passes 1, 2, ...; more passes than colours reuse the last ones in turn).
INPUT_COLOR = "#d9ead3"
CONST_COLOR = "#eeeeee"
OUTPUT_COLOR = "#b6d7a8"
PHASE_COLORS = ("#cfe2f3", "#fce5cd", "#ead1dc", "#fff2cc", "#d9d2e9")
KERNEL_CLUSTER = {"style": "rounded,filled", "fillcolor": "#fff8e1", "color": "#e69138"}
SCALAR_CLUSTER = {"style": "rounded,filled", "fillcolor": "#f3f3f3", "color": "#999999"}

_MAX_PARAMS_TEXT = 48  # longer params go only into the node's tooltip


def phase_color(phase: int) -> str:
    """The fill colour of equations of `phase` (0 forward, k backward pass k)."""
    if phase < len(PHASE_COLORS):
        return PHASE_COLORS[phase]
    return PHASE_COLORS[1 + (phase - 1) % (len(PHASE_COLORS) - 1)]


def phase_name(phase: int, passes: int) -> str:
    """'forward', 'backward' (a single pass) or 'backward pass k'."""
    if phase == 0:
        return "forward"
    return "backward" if passes == 1 else f"backward pass {phase}"


# --- tracing with phases --------------------------------------------------------------------

class _PhasedStaging(StagingTrace):
    """make_jaxpr's staging trace, noting each equation's phase as it is emitted (see the
    module's docstring)."""

    def __init__(self, parent, name: str = "fgrad.viz.draw") -> None:
        super().__init__(parent, name)
        self.phase_of: dict[int, int] = {}  # id(output Var) -> phase
        # The tokens of the backward passes seen, in order: held (not just their ids) so that
        # a finished pass's id cannot be reused by a later pass.
        self._passes: list = []

    def process_primitive(self, prim, args, params):
        n = len(self.eqns)
        out = super().process_primitive(prim, args, params)
        if len(self.eqns) > n:  # an equation was emitted (not folded into a constant)
            self.phase_of[id(self.eqns[-1].outvars[0])] = self._current_phase()
        return out

    def _current_phase(self) -> int:
        token = current_pass()
        if token is None:
            return 0
        for k, seen in enumerate(self._passes):
            if seen is token:
                return k + 1
        self._passes.append(token)
        return len(self._passes)

    def release(self) -> None:
        """Forget the passes seen."""
        self._passes = []


def input_labels(f: Callable, args: Sequence) -> list[str]:
    """A label per flattened input leaf: the parameter's name, with the leaf's key path in a
    pytree ('params['w']')."""
    try:
        names = list(inspect.signature(f).parameters)
    except (TypeError, ValueError):  # builtins and some callables have no signature
        names = []
    labels = []
    for i, arg in enumerate(args):
        base = names[i] if i < len(names) and not names[i].startswith("*") else f"arg{i}"
        for path, _ in tree_flatten_with_path(arg)[0]:
            labels.append(base + keystr(path))
    return labels


def trace(f: Callable, args: Sequence) -> tuple[ClosedJaxpr, list[str], dict[int, int], int]:
    """Stage `f(*args)` as make_jaxpr does (positional arguments traced, Python numbers weakly
    typed, Tensors boxed): (the ClosedJaxpr, a label per input, id(output Var) -> phase, the
    number of backward passes)."""
    flat, in_tree = tree_flatten(tuple(args))
    name = getattr(f, "__name__", type(f).__name__)
    vals = [x._value if isinstance(x, Tensor) else as_value(x, f"fgrad.viz.draw of {name}: input {i}")
            for i, x in enumerate(flat)]
    labels = input_labels(f, args)
    with new_trace(_PhasedStaging) as st:
        tracers = [st.new_arg(weak_aval(aval_of(v)) if type(x) in PY_NUMBERS else aval_of(v), label)
                   for x, v, label in zip(flat, vals, labels)]
        boxed = [wrap(t) if isinstance(x, Tensor) else t for x, t in zip(flat, tracers)]
        out = f(*tree_unflatten(in_tree, boxed))
        outs = [o._value if isinstance(o, Tensor) else o for o in tree_flatten(out)[0]]
        jaxpr, consts = st.to_jaxpr(outs)
        passes = len(st._passes)
        st.release()
    # make_jaxpr's simplification, with dead code dropped first as well: a backward equation
    # then is not merged into a forward one that computed the same value but was itself unused
    # (grad discards f's value), and keeps its colour. The same equations, up to their order.
    jaxpr, used = dce_jaxpr(jaxpr)
    consts = [consts[i] for i in used]
    jaxpr, used = dce_jaxpr(cse_jaxpr(jaxpr))
    phase_of = {id(e.outvars[0]): st.phase_of[id(e.outvars[0])] for e in jaxpr.eqns}
    return ClosedJaxpr(jaxpr, [consts[i] for i in used]), labels, phase_of, passes


# --- labels ---------------------------------------------------------------------------------

def _param_text(v) -> str:
    if isinstance(v, (Jaxpr, ClosedJaxpr)):
        return f"{{{len(v.eqns)} equations}}"
    if isinstance(v, np.dtype) or (isinstance(v, type) and issubclass(v, np.generic)):
        return np.dtype(v).name
    if isinstance(v, (tuple, list)):
        inner = ", ".join(_param_text(x) for x in v)
        return f"({inner}{',' if len(v) == 1 else ''})"
    if callable(v):
        return getattr(v, "__name__", type(v).__name__)
    return repr(v) if isinstance(v, str) else str(v)


def _params_text(params: dict) -> str:
    return ", ".join(f"{k}={_param_text(v)}" for k, v in sorted(params.items()))


def _literal_text(lit: Literal) -> str:
    return f"{lit} : {lit.aval.str_short()}"


# --- a jaxpr as a graph -----------------------------------------------------------------------

def jaxpr_graph(closed: ClosedJaxpr | Jaxpr, title: str, labels: Sequence[str] | None = None,
                phase_of: dict | None = None, passes: int = 0, program: Program | None = None,
                format: str = "svg", rankdir: str = "TB") -> Graph:
    """The picture of `closed`: a node per input, constant and equation (primitive, params and
    output type), an edge per use, output nodes last. `phase_of` (from `trace`) colours each
    equation by its phase and adds a legend; `program` (a compiled `Program` of this jaxpr)
    boxes each fused region of its plan, labelled with its kernel."""
    jaxpr = closed.jaxpr if isinstance(closed, ClosedJaxpr) else closed
    g = Graph(title, {"rankdir": rankdir}, format=format)
    if labels is not None and len(labels) != len(jaxpr.invars):
        labels = None  # e.g. jit's static arguments are not inputs: the names would not line up
    src: dict[int, str] = {}  # id(Var) -> the node that makes it
    for i, v in enumerate(jaxpr.invars):
        name = labels[i] if labels is not None else f"input {i}"
        src[id(v)] = g.add_node(f"in{i}", f"{name}\n{v.aval.str_short()}", shape="box",
                                style="filled", fillcolor=INPUT_COLOR, tooltip=f"input {i}")
    for i, v in enumerate(jaxpr.constvars):
        src[id(v)] = g.add_node(f"c{i}", f"const\n{v.aval.str_short()}", shape="note",
                                style="filled", fillcolor=CONST_COLOR, tooltip=f"constant {i}")

    cluster_of = _clusters(g, jaxpr, program) if program is not None else {}
    step_of = {id(e): s.index for s in program.steps for e in s.eqns} if program is not None else {}
    order = [e for s in program.steps for e in s.eqns] if program is not None else jaxpr.eqns
    for k, e in enumerate(order):
        nid = f"e{k}"
        out = e.outvars[0]
        params = _params_text(e.params)
        label = e.primitive.name
        if params and len(params) <= _MAX_PARAMS_TEXT:
            label += f"\n{params}"
        label += f"\n{out.aval.str_short()}"
        phase = phase_of.get(id(out), 0) if phase_of is not None else 0
        tooltip = f"{e.primitive.name}[{params}]" if params else e.primitive.name
        attrs = {"fillcolor": phase_color(phase), "tooltip": tooltip}
        if phase_of is not None and passes:
            attrs["class"] = phase_name(phase, passes).replace(" ", "-")
        if id(e) in step_of:
            attrs["tooltip"] += f" (step {step_of[id(e)]} of the program)"
        g.add_node(nid, label, cluster=cluster_of.get(id(e)), **attrs)
        for j, a in enumerate(e.invars):
            if isinstance(a, Literal):
                lid = g.add_node(f"lit{k}_{j}", _literal_text(a), shape="plain", style="",
                                 fontsize="9", tooltip="literal")
                g.add_edge(lid, nid)
            else:
                g.add_edge(src[id(a)], nid)
        src[id(out)] = nid

    for i, a in enumerate(jaxpr.outvars):
        text = "output" if len(jaxpr.outvars) == 1 else f"output {i}"
        oid = g.add_node(f"out{i}", f"{text}\n{a.aval.str_short()}", shape="box",
                         style="filled,bold", fillcolor=OUTPUT_COLOR, tooltip=text)
        if isinstance(a, Literal):
            g.add_edge(g.add_node(f"out{i}_lit", _literal_text(a), shape="plain", style=""), oid)
        else:
            g.add_edge(src[id(a)], oid)

    if phase_of is not None and passes:
        _legend(g, passes)
    return g


def _clusters(g: Graph, jaxpr: Jaxpr, program: Program) -> dict[int, str]:
    """A box per fused region of the program's plan: id(eqn) -> its box."""
    kernel_names = iter(program.kernels)  # (spec, global name), one per kernel step, in order
    cluster_of = {}
    for step in program.steps:
        if step.kind == "call":
            continue
        shape = "[" + ",".join(map(str, step.shape)) + "]"
        if step.kind == "kernel":
            spec, gname = next(kernel_names)
            label = (f"fused kernel {gname} = {spec.name}\n{len(step.eqns)} element-wise "
                     f"equations on {shape}: one Numba loop")
            cid = g.add_cluster(f"cluster_step{step.index}", label, labeljust="l", **KERNEL_CLUSTER)
        else:
            label = f"scalar region\n{len(step.eqns)} equations on 0-d values: plain Python"
            cid = g.add_cluster(f"cluster_step{step.index}", label, labeljust="l", **SCALAR_CLUSTER)
        for e in step.eqns:
            cluster_of[id(e)] = cid
    return cluster_of


def _legend(g: Graph, passes: int) -> None:
    """One node naming each phase's colour, in a row."""
    cells = "".join(f'<TD BGCOLOR="{phase_color(p)}">{phase_name(p, passes)}</TD>' for p in range(passes + 1))
    g.add_node("legend", Html(f'<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="0" CELLPADDING="4">'
                              f"<TR>{cells}</TR></TABLE>"),
               shape="plaintext", style="", fontsize="9", tooltip="legend: the phase of each equation")


# --- jit ----------------------------------------------------------------------------------------

def is_jitted(f) -> bool:
    """Whether `f` was made by fgrad.jit (it can lower itself to a compiled program)."""
    return callable(f) and callable(getattr(f, "lower", None)) and isinstance(getattr(f, "_cache", None), dict)


def jit_program(jitted, args: Sequence) -> tuple[ClosedJaxpr, Program]:
    """The traced jaxpr and the compiled program `jitted` runs for `args`: the very program
    of its cache (`jitted.lower`), whose plan is the compiler's own partition into regions."""
    program = jitted.lower(*args).program
    for entry in jitted._cache.values():
        if entry.program is program:
            return entry.closed, program
    raise FgradRuntimeError("fgrad.viz.draw: the jitted function's cache has no entry for the program "
                       "it lowered; fgrad.jit's internals changed and fgrad.viz needs updating")


__all__ = ["trace", "input_labels", "jaxpr_graph", "is_jitted", "jit_program", "phase_color", "phase_name"]
