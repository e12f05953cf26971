"""What the control-flow primitives share: staging a body into a closure-converted jaxpr,
running a body on plain arrays, which outputs of a body depend on batched inputs, and the
user-facing checks of the values that flow around a loop or between branches.

Closure conversion: a body is staged once, on its inputs' avals, by a StagingTrace whose
parent is the current trace. Whatever the body reads that is not an input (arrays it
closes over, values of enclosing transforms) becomes a constant of the staged jaxpr, and
`stage` turns those constants into leading inputs: the primitive receives them as
ordinary operands, so every enclosing transform sees them (their derivatives flow, vmap
batches them, jit stages them)."""
from __future__ import annotations

from typing import Callable, NamedTuple, Sequence

import numpy as np

from .._packing import pack
from ..api import vmap
from ..core.avals import PY_NUMBERS, ShapedArray, weak_aval
from ..core.errors import FgradTypeError
from ..core.ir import ClosedJaxpr, Jaxpr, Literal, Var, cse_jaxpr, dce_jaxpr, eval_jaxpr
from ..core.trace import EVAL_TRACE, _state, aval_of, new_trace
from ..interpreters.compile import Program as JitProgram
from ..interpreters.compile import loops
from ..interpreters.staging import StagingTrace
from ..numpy._util import plain_value
from ..ops.elementwise import convert_element_type
from ..tree_util import keystr, tree_flatten_with_path, tree_unflatten

# --- bodies ---------------------------------------------------------------------------------

class Body(ClosedJaxpr):
    """A staged body or branch, closure-converted (no constants: what it read from outside
    is among its inputs). Prints, type-checks and evaluates as the ClosedJaxpr it is, and
    keeps the `Program` that runs it on plain arrays, built on first use."""

    __slots__ = ("_compiled", "_program")

    def __init__(self, jaxpr: Jaxpr) -> None:
        super().__init__(jaxpr, [])
        self._program = None
        self._compiled: dict = {}

    def program(self) -> "Program":
        if self._program is None:
            self._program = Program(self.jaxpr)
        return self._program

    def compiled(self, key, build: Callable):
        """What `build()` made for `key` (a compiled loop over this body, None for none), built
        once: jit replays the same Body on every call."""
        try:
            return self._compiled[key]
        except KeyError:
            made = self._compiled[key] = build()
            return made

    def region_program(self) -> Callable[[Sequence], list]:
        """`run(args) -> outputs`, the body compiled once by jit's region compiler (fused
        kernels, direct impl calls): what a loop whose body has no loop lowering runs per
        iteration under jit, instead of interpreting it equation by equation."""
        def build():
            # (a body's outputs go to the next iteration, not to the user: no copies)
            program = JitProgram(ClosedJaxpr(self.jaxpr, []), fresh_outputs=False)

            def run(args):
                loops.STATS["program_steps"] += 1
                return list(program(*args))
            return run
        return self.compiled("program", build)

    def with_outputs(self, outvars: list) -> "Body":
        """The same equations with other outputs (e.g. the inputs appended, to save them)."""
        return Body(Jaxpr([], self.jaxpr.invars, self.jaxpr.eqns, outvars))


class Program:
    """A jaxpr compiled for NumPy arrays: every equation's impl called directly, values in a
    list indexed by slot. What impls run once per iteration, so it skips the trace dispatch
    that `eval_jaxpr` pays on every bind."""

    __slots__ = ("n_in", "template", "steps", "outs")

    def __init__(self, jaxpr: Jaxpr) -> None:
        slots: dict[int, int] = {}
        template: list = []
        for v in jaxpr.invars:
            slots[id(v)] = len(template)
            template.append(None)

        def ref(a) -> int:
            if isinstance(a, Literal):
                template.append(a.val)
                return len(template) - 1
            return slots[id(a)]
        steps = []
        for e in jaxpr.eqns:
            refs = tuple(ref(a) for a in e.invars)
            slots[id(e.outvars[0])] = len(template)
            template.append(None)
            steps.append((e.primitive.raw_impl, refs, e.params, len(template) - 1))
        self.n_in = len(jaxpr.invars)
        self.outs = tuple(ref(a) for a in jaxpr.outvars)
        self.template = template
        self.steps = tuple(steps)

    def __call__(self, args: Sequence, xp) -> list:
        env = self.template.copy()
        env[:self.n_in] = args
        ndarray = np.ndarray
        for impl, refs, params, out in self.steps:
            r = impl(*[env[i] for i in refs], xp=xp, **params)
            # NumPy returns scalars for 0-d results; impls return arrays (Primitive.def_impl)
            env[out] = r if type(r) is ndarray else xp.asarray(r)
        return [env[r] for r in self.outs]


def runner(body: Body, xp) -> Callable[[Sequence], list]:
    """`run(args) -> outputs` for an impl: the compiled program on NumPy arrays; through the
    eval trace (which converts values between NumPy and CuPy, and checks debug_nans) for
    other array namespaces or while debug_nans is on."""
    if xp is np and not _state.debug_nans:
        program = body.program()
        return lambda args: program(args, np)
    return lambda args: EVAL_TRACE.run(eval_jaxpr, (body.jaxpr, [], *args))


def compile_eagerly(xp, work: int) -> bool:
    """Whether an impl run outside jit compiles its loop: NumPy arrays, no debug_nans (which
    checks every equation), and a loop long enough to repay Numba's compile time (`work`: the
    equations it would run, `loops.EAGER_MIN_WORK`)."""
    return xp is np and not _state.debug_nans and work >= loops.EAGER_MIN_WORK


def call(body: ClosedJaxpr, args: Sequence) -> list:
    """The body applied to `args` by binding its equations (traceable: what rules stage)."""
    return eval_jaxpr(body.jaxpr, body.consts, *args)


class Staged(NamedTuple):
    """A staged function: `body` takes `consts` (the values it closed over) then the inputs."""
    body: Body
    consts: list
    out_tree: object
    out_avals: tuple
    out_weak: tuple     # per output leaf: a Python number (or a value standing for one)
    out_paths: tuple    # per output leaf: its key path in the output, for messages


def stage(fn: Callable, in_avals: Sequence[ShapedArray], name: str) -> Staged:
    """Stage `fn(*leaves) -> pytree` on `in_avals`, closure-converted (see the module docstring)."""
    with new_trace(StagingTrace, name) as st:
        args = [st.new_arg(a) for a in in_avals]
        out = fn(*args)
        pairs, tree = tree_flatten_with_path(out)
        weak = tuple(type(x) in PY_NUMBERS or bool(getattr(x, "_weak", False)) for _, x in pairs)
        leaves = [_output_value(x, name, p) for p, x in pairs]
        jaxpr, consts = st.to_jaxpr(leaves)
    jaxpr, used = dce_jaxpr(cse_jaxpr(jaxpr))
    body = Body(Jaxpr([], list(jaxpr.constvars) + list(jaxpr.invars), jaxpr.eqns, jaxpr.outvars))
    avals = tuple(ShapedArray(v.aval.shape, v.aval.dtype) for v in jaxpr.outvars)
    return Staged(body, [consts[i] for i in used], tree, avals, weak, tuple(p for p, _ in pairs))


def _output_value(x, name: str, path) -> object:
    return plain_value(x, f"fgrad.lax.{name}", f"output{keystr(path)} of {name}")


def join_consts(staged: Sequence[Staged]) -> tuple[list[Body], list]:
    """Bodies that all take every staged function's constants, then the common inputs: each
    ignores the others' constants (how cond's branches share one operand list)."""
    consts = [c for s in staged for c in s.consts]
    counts = [len(s.consts) for s in staged]
    bodies = []
    for k, s in enumerate(staged):
        j = s.body.jaxpr
        own = j.invars[:counts[k]]
        before = [Var(aval_of(c)) for s2 in staged[:k] for c in s2.consts]
        after = [Var(aval_of(c)) for s2 in staged[k + 1:] for c in s2.consts]
        bodies.append(Body(Jaxpr([], before + own + after + j.invars[counts[k]:], j.eqns, j.outvars)))
    return bodies, consts


def add_invars(body: Body, at: int, avals: Sequence[ShapedArray]) -> Body:
    """`body` with unused inputs of `avals` inserted at position `at`."""
    j = body.jaxpr
    extra = [Var(a) for a in avals]
    return Body(Jaxpr([], j.invars[:at] + extra + j.invars[at:], j.eqns, j.outvars))


# --- operands -------------------------------------------------------------------------------

def operand_values(leaves: Sequence, what: str, fname: str) -> tuple[list, list]:
    """(operands to bind, avals) for the leaves of a user's operands (arrays, tracers, Python
    numbers, which stay weakly typed, as they are eagerly) to the control-flow function `fname`."""
    ops, avals = [], []
    for i, x in enumerate(leaves):
        v = plain_value(x, f"fgrad.lax.{fname}", f"{what} leaf {i}")
        ops.append(v)
        a = aval_of(v)
        avals.append(weak_aval(a) if type(x) in PY_NUMBERS or getattr(x, "_weak", False)
                     else ShapedArray(a.shape, a.dtype))
    return ops, avals


def unflatten(tree, leaves: Sequence):
    return tree_unflatten(tree, list(leaves))


def cast_to(x, dtype):
    """`x` as `dtype` (traced values by a primitive, Python numbers directly)."""
    if type(x) in PY_NUMBERS:
        return np.asarray(x, dtype)
    return x if aval_of(x).dtype == dtype else convert_element_type(x, dtype)


def describe_avals(avals: Sequence[ShapedArray]) -> str:
    return "(" + ", ".join(a.str_short() for a in avals) + ")"


class CarryView(NamedTuple):
    """The carry part of a staged body's outputs."""
    tree: object
    avals: tuple
    weak: tuple
    paths: tuple


def carry_casts(fname: str, what: str, in_tree, in_avals: Sequence[ShapedArray],
                out: CarryView) -> tuple[list, list]:
    """Check that a loop body returns its carry with the structure, shapes and dtypes it got.
    As in JAX, a weakly typed leaf adapts: returns (in_casts, out_casts), the dtypes the
    initial carry's leaves (Python numbers given as init) or the body's output leaves (Python
    numbers returned) must be cast to (None: no change)."""
    if out.tree != in_tree:
        raise FgradTypeError(
            f"{fname}: {what} must return the carry with the structure of the initial value, "
            f"{in_tree}, but returned {out.tree}. Return the same containers (tuple vs list, "
            "dict keys) and the same number of leaves.", doc="loop-carry-type")
    in_casts: list = [None] * len(in_avals)
    out_casts: list = [None] * len(in_avals)
    for i, (a, b) in enumerate(zip(in_avals, out.avals)):
        if a.shape == b.shape and a.dtype == b.dtype:
            continue
        if a.shape == b.shape and out.weak[i]:
            out_casts[i] = a.dtype
            continue
        if a.shape == b.shape and a.weak_type:
            in_casts[i] = b.dtype
            continue
        path = keystr(out.paths[i]) or " (the carry)"
        raise FgradTypeError(
            f"{fname}: {what} changes the carry: leaf{path} enters as {a.str_short()} and is "
            f"returned as {b.str_short()}. A loop carry keeps its shape and dtype on every "
            f"iteration. Return it with shape {a.shape} and dtype {a.dtype.name} (cast with "
            f".astype({a.dtype.name}), or give the initial value the type the body produces).",
            doc="loop-carry-type")
    return in_casts, out_casts


def stage_carry_body(fname: str, what: str, make_fn: Callable, avals: list, in_tree, carry_of: Callable[[Staged], CarryView]) -> tuple[Staged, list]:
    """Stage a loop body whose first len(in_tree) inputs are the carry, which its outputs
    (`carry_of(staged)`) must give back with the same types; weakly typed leaves adapt once
    (see carry_casts). `make_fn(out_casts)` is the function to stage, its carry outputs cast
    to `out_casts`. Returns (staged, the input avals used)."""
    n = in_tree.num_leaves
    staged = stage(make_fn([None] * n), avals, fname)
    in_casts, out_casts = carry_casts(fname, what, in_tree, avals[:n], carry_of(staged))
    if any(c is not None for c in in_casts + out_casts):
        avals = [ShapedArray(a.shape, c) if c is not None else a
                 for a, c in zip(avals, in_casts + [None] * (len(avals) - n))]
        staged = stage(make_fn(out_casts), avals, fname)
        carry_casts(fname, what, in_tree, avals[:n], carry_of(staged))
    return staged, avals


def cast_leaves(leaves: Sequence, casts: Sequence) -> list:
    """Each leaf cast to its entry of `casts` (None: left as it is)."""
    return [x if c is None else cast_to(x, c) for x, c in zip(leaves, casts)]


# --- batching -------------------------------------------------------------------------------

def batched_outputs(jaxpr: Jaxpr, flags: Sequence[bool]) -> list[bool]:
    """Which outputs depend on the inputs flagged batched (any batched input of an equation
    batches its output: what BatchTrace does, or more)."""
    dep = {id(v): bool(f) for v, f in zip(jaxpr.invars, flags)}
    for e in jaxpr.eqns:
        dep[id(e.outvars[0])] = any(dep.get(id(a), False) for a in e.invars if isinstance(a, Var))
    return [isinstance(a, Var) and dep.get(id(a), False) for a in jaxpr.outvars]


def carry_fixpoint(jaxpr: Jaxpr, num_consts: int, num_carry: int, flags: Sequence[bool]) -> tuple[list, list]:
    """(carry flags, other output flags) of a loop body: a carry is batched if its initial
    value is, or if the body makes it depend on something batched on some iteration."""
    flags = list(flags)
    carry = flags[num_consts:num_consts + num_carry]
    while True:
        out = batched_outputs(jaxpr, flags[:num_consts] + carry + flags[num_consts + num_carry:])
        new = [a or b for a, b in zip(carry, out[:num_carry])]
        if new == carry:
            return carry, out[num_carry:]
        carry = new


def pack_batched(n: int, leaves: Sequence, avals: Sequence[ShapedArray]):
    """Leaves with a leading batch axis (of size n) packed example by example: the batched
    form of `pack(leaves, avals)`, batch axis 0."""
    return vmap(lambda *ls: pack(list(ls), avals), axis_size=n)(*leaves)
