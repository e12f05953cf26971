"""Partitioning a jaxpr into the steps of a compiled program: maximal regions of element-wise
equations over one shape (each becomes one LLVM kernel, or plain Python for short regions of 0-d
float64/bool values) and single equations run by their primitive's impl.

An equation joins the latest region of its kind unless one of its inputs is made by a step
that comes after that region; the region then runs where it was opened, with the equation
moved up into it. So a region depends only on steps before it and the program stays in
dependency order, while element-wise work split by unrelated calls (a matmul, a reshape) still
fuses.
"""
from __future__ import annotations

from ...core.ir import Literal, Var
from .native import MAX_CALL_ARGS
from .scalar import KERNEL_DTYPES, SCALAR_DTYPES, lowerable

# Regions with fewer equations run their equations one by one: compiling a kernel (llvmlite,
# tens of milliseconds) is not repaid by the two or three NumPy calls it saves per run.
MIN_KERNEL_EQNS = 3
# A region of 0-d values with at least this many equations is compiled as a kernel over one
# element instead of running as Python (high-order derivatives of scalar functions: k nested
# grads give ~2^k equations). Python costs ~20 ns an equation, a kernel call a couple of
# microseconds whatever its length, and both compute the same bits (the C library's functions,
# NumPy's float semantics); below this length Python is as fast and compiles nothing.
SCALAR_KERNEL_EQNS = 256
# A kernel is called through ctypes, which passes at most MAX_CALL_ARGS arguments: one for
# each input and output of its region. A region with more is split in two, in order, until
# each part fits (the same arithmetic in two kernels, so the same bits).
MAX_KERNEL_ARGS = MAX_CALL_ARGS


class Step:
    """One step of a compiled program: `eqns` in order, of kind "call" (one equation, run by
    its impl), "kernel" (an element-wise region of shape `shape`, an LLVM kernel; a region of
    0-d values with SCALAR_KERNEL_EQNS equations or more becomes one too, a kernel over one
    element) or "scalar" (a shorter element-wise region of 0-d float64/bool values, run as
    Python)."""

    __slots__ = ("eqns", "index", "inputs", "kind", "outputs", "shape")

    def __init__(self, kind: str, shape, eqns, index: int) -> None:
        self.kind = kind
        self.shape = shape
        self.eqns = list(eqns)
        self.index = index
        self.inputs: list = []   # Vars read from outside the step, in first-use order
        self.outputs: list = []  # Vars it makes that later steps or the program's outputs read


def _kind_of(eqn) -> str | None:
    """The kind of region `eqn` can join, or None: all its operands have its output's shape or
    are 0-d and its primitive lowers for their dtypes (speed never decides: a kernel and the
    impl may compute an approximated function differently, see scalar.MATH)."""
    shape = eqn.outvars[0].aval.shape
    if any(a.aval.shape not in ((), shape) for a in eqn.invars):
        return None
    if shape == ():
        return "scalar" if lowerable(eqn, SCALAR_DTYPES) else None
    return "kernel" if lowerable(eqn, KERNEL_DTYPES) else None


def plan(jaxpr, min_kernel_eqns: int = MIN_KERNEL_EQNS, regions: bool = True) -> list[Step]:
    """The steps that compute `jaxpr`, in an order that respects its dependencies; with
    `regions` False, one call a equation (the impls' own results, bit for bit)."""
    steps: list[Step] = []
    made_by: dict[int, Step] = {}    # id(var) -> the step that computes it
    latest: dict[tuple, Step] = {}   # (kind, shape) -> the region equations may still join
    for eqn in jaxpr.eqns:
        kind = _kind_of(eqn) if regions else None
        step = None
        if kind is not None:
            key = (kind, eqn.outvars[0].aval.shape)
            region = latest.get(key)
            if region is not None and all(
                    made_by.get(id(a)) is None or made_by[id(a)].index <= region.index
                    for a in eqn.invars if isinstance(a, Var)):
                step = region
                step.eqns.append(eqn)
            else:
                step = latest[key] = Step(kind, key[1], [eqn], len(steps))
                steps.append(step)
        else:
            step = Step("call", eqn.outvars[0].aval.shape, [eqn], len(steps))
            steps.append(step)
        made_by[id(eqn.outvars[0])] = step
    final: list[Step] = []
    for step in steps:
        if step.kind == "call":
            final.append(step)
            continue
        length = sum(e.primitive.kernel_eqns for e in step.eqns)  # (a fused primitive: its composite's)
        if step.kind == "kernel" and length < min_kernel_eqns:
            final.extend(Step("call", e.outvars[0].aval.shape, [e], 0) for e in step.eqns)
        else:
            if step.kind == "scalar" and length >= SCALAR_KERNEL_EQNS and regions:
                step.kind = "kernel"
            final.append(step)
    _connect(final, jaxpr)
    while any(_too_many_args(s) for s in final):
        parts: list[Step] = []
        for s in final:
            if _too_many_args(s):
                half = len(s.eqns) // 2
                parts += [Step("kernel", s.shape, s.eqns[:half], 0), Step("kernel", s.shape, s.eqns[half:], 0)]
            else:
                parts.append(s)
        final = parts
        _connect(final, jaxpr)
    return final


def _too_many_args(step: Step) -> bool:
    """Whether `step` is a kernel with more arguments than a ctypes call passes (and can split)."""
    return step.kind == "kernel" and len(step.inputs) + len(step.outputs) > MAX_KERNEL_ARGS and len(step.eqns) > 1


def _connect(steps: list[Step], jaxpr) -> None:
    """Fill each step's inputs and outputs, and renumber the steps in order."""
    made_by: dict[int, Step] = {}
    for k, step in enumerate(steps):
        step.index = k
        step.inputs = []
        for e in step.eqns:
            made_by[id(e.outvars[0])] = step
    needed: dict[int, set] = {}  # id(var) -> steps (or "out") that read it
    for step in steps:
        seen = set()
        for e in step.eqns:
            for a in e.invars:
                if isinstance(a, Literal):
                    continue
                if made_by.get(id(a)) is not step and id(a) not in seen:
                    seen.add(id(a))
                    step.inputs.append(a)
                    needed.setdefault(id(a), set()).add(step.index)
    for v in jaxpr.outvars:
        if isinstance(v, Var):
            needed.setdefault(id(v), set()).add("out")
    for step in steps:
        step.outputs = [e.outvars[0] for e in step.eqns if id(e.outvars[0]) in needed]
