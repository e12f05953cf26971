"""A ClosedJaxpr as one generated Python function.

Each step of the plan (`regions.plan`) becomes straight-line code: a call of the primitive's
impl (bound as a global, with its params), a call of a region's LLVM kernel, or, for a
region of 0-d float64/bool values, the region's scalar expressions in plain Python (a kernel
over one element from regions.SCALAR_KERNEL_EQNS equations up). Values
are locals, and each is deleted right after its last use, so its buffer is freed as early
as the interpreter would free it. A kernel output may take over the buffer of an input that
dies at that kernel (one the program allocated itself, that no impl has seen, so nothing
else can be a view of it). A run of element-wise steps over one large shape whose values
die inside it runs as one loop over blocks (`tile_runs`, `_Emitter.tiled`): its intermediate
values, such as the forward values a backward pass in the same run reads, then exist one
block at a time instead of at full size.

The scalar tier computes with Python floats, which give NumPy's float64 results for the
arithmetic, while the math module raises where NumPy returns inf or NaN (log(0), exp(1000),
x / 0): such a region then reruns through the impls, so results never depend on the tier.
"""
from __future__ import annotations

import math

import numpy as np

from ...core.ir import Literal, Var
from ...core.primitive import ignore_fp_errors, restore_fp_errors
from ...core.trace import aliases
from . import scalar_lib
from .kernels import kernel_spec, load_kernel, numba_available
from .loops import JIT_RULES
from .regions import MIN_KERNEL_EQNS, plan
from .scalar import KERNEL_DTYPES, const_expr, lower_expr, lowerable, operand

_SCALAR_ERRORS = (ArithmeticError, ValueError)

# Tiling: a run of consecutive element-wise steps over one large shape (kernels, and the
# element-wise calls left to their impls, as FGRAD_JIT_MATH=eager leaves exp) runs block by
# block, so a value made and used only inside the run never exists at full size: forward
# values saved for a backward pass in the same run live one block at a time (what XLA's
# fusion gets). The block is the largest
# power of two up to MAX_TILE elements whose values live at once fit TILE_BUDGET bytes, about
# half a server CPU's last-level cache: measured on 2^20-2^22 element chains, a block whose
# values stay in cache runs 1.5-3x faster than the whole-array program, one that spills runs
# slower. Runs over fewer than MIN_TILED elements are left whole (blocks would save little).
MAX_TILE = 1 << 15
MIN_TILE = 1 << 10
TILE_BUDGET = 16 << 20
MIN_TILED = 1 << 17


def block_size(live: int, itemsize: int) -> int:
    """Elements per block for a run holding `live` block values of `itemsize` bytes at once."""
    b = MAX_TILE
    while b > MIN_TILE and live * b * itemsize > TILE_BUDGET:
        b //= 2
    return b


def _tileable(step) -> bool:
    """A step that computes element by element over its (non-empty) shape: a kernel, or a
    call of an element-wise primitive (one with a lowering for its dtypes) whose operands
    have its output's shape or are 0-d."""
    if step.kind == "kernel":
        return True
    if step.kind != "call":
        return False
    e = step.eqns[0]
    shape = e.outvars[0].aval.shape
    return (bool(shape) and all(a.aval.shape in ((), shape) for a in e.invars)
            and e.primitive not in JIT_RULES and lowerable(e, KERNEL_DTYPES, any_math=True))


def tile_runs(steps) -> list[tuple[int, int]]:
    """(first, last + 1) of each maximal run of at least two consecutive tileable steps over
    one shape of at least MIN_TILED elements."""
    runs, k = [], 0
    while k < len(steps):
        step = steps[k]
        j = k + 1
        if _tileable(step) and math.prod(step.shape) >= MIN_TILED:
            while j < len(steps) and _tileable(steps[j]) and steps[j].shape == step.shape:
                j += 1
        if j - k >= 2:
            runs.append((k, j))
        k = j
    return runs


class _Emitter:
    """Writes the program's source, step by step, and collects the globals it refers to
    (constants, impls, params, literals, kernels)."""

    def __init__(self, closed, steps, unalias: bool = True) -> None:
        self.unalias = unalias
        self.prologue = 0  # the lines converting 0-d inputs, before everything else
        self.jaxpr = closed.jaxpr
        self.steps = steps
        self.globals: dict = {"np": np, "math": math, "_empty": np.empty, "_asarray": np.asarray,
                              "_contig": np.ascontiguousarray,
                              "_SCALAR_ERRORS": _SCALAR_ERRORS, **scalar_lib.HELPERS,
                              **scalar_lib.CONSTANTS}
        self.lines: list[str] = []
        self.box: dict[int, str] = {}    # id(var) -> the local (or global) holding its array
        self.flt: dict[int, str] = {}    # id(var) -> the local holding its Python float/bool
        self.count = 0
        self.kernels: list = []          # (spec, global name)
        self.impls: dict[int, str] = {}  # id(primitive) -> the global holding its impl
        for i, (v, c) in enumerate(zip(self.jaxpr.constvars, closed.consts)):
            # as plain arrays: impls and kernels never see fgrad.numpy's Array subclass
            self.box[id(v)] = self._global(f"c{i}", np.asarray(c) if isinstance(c, np.ndarray) else c)
        for i, v in enumerate(self.jaxpr.invars):
            self.box[id(v)] = f"a{i}"
        self.outs = {id(v) for v in self.jaxpr.outvars if isinstance(v, Var)}
        self.last: dict[int, int] = {}
        self.readers: dict[int, set] = {}
        for step in steps:
            for a in step.inputs:
                self.last[id(a)] = step.index
                self.readers.setdefault(id(a), set()).add(step.kind)
        self.fresh: set[int] = set()     # kernel-allocated buffers no impl has seen

    def _global(self, name: str, value) -> str:
        self.globals[name] = value
        return name

    def _new(self, prefix: str = "v") -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def boxed(self, a) -> str:
        """An expression for the array value of atom `a`."""
        if isinstance(a, Literal):
            return self._global(f"_l{self._new('')}", a.val)
        name = self.box.get(id(a))
        return name if name is not None else f"_asarray({self.flt[id(a)]})"

    # --- steps -----------------------------------------------------------------------------

    def call(self, eqn, indent: str = "    ") -> None:
        p = eqn.primitive
        rule = JIT_RULES.get(p)
        special = rule(eqn) if rule is not None else None
        if special is not None:  # a callable made for this equation (a compiled loop)
            fn = self._global(f"_eqn{self._new('')}_{p.name}", special)
            args = [self.boxed(a) for a in eqn.invars]
        elif p.np_function is not None and not eqn.params and eqn.outvars[0].aval.shape != ():
            # the impl is np.<name>(*operands) (Primitive.def_np_function): call that directly
            # (not for 0-d results, which NumPy returns as scalars and the impl as arrays)
            np_name, quiet = p.np_function
            fn = self._global(f"_np_{np_name}", getattr(np, np_name))
            args = [self.boxed(a) for a in eqn.invars]
            if quiet:
                self._direct(eqn, f"{fn}({', '.join(args)})", indent, quiet=True)
                return
        else:
            fn = self.impls.get(id(p))
            if fn is None:
                fn = self.impls[id(p)] = self._global(f"_impl{len(self.impls)}_{p.name}", p.impl)
            args = [self.boxed(a) for a in eqn.invars] + ["xp=np"]
            for k, v in eqn.params.items():
                name = self._global("_p" + self._new(""), v)
                args.append(f"{k}={name}")
        self._direct(eqn, f"{fn}({', '.join(args)})", indent)

    def _direct(self, eqn, call: str, indent: str, quiet: bool = False) -> None:
        """`out = call` for the equation's one output (between silencing floating-point
        warnings and restoring them, when `quiet`)."""
        out = self._new()
        self.box[id(eqn.outvars[0])] = out
        for a in eqn.invars:
            self.fresh.discard(id(a))  # an impl may return a view of it
        if quiet:
            self.globals["_ignore_fp"], self.globals["_restore_fp"] = ignore_fp_errors, restore_fp_errors
            self.lines += [f"{indent}_tok = _ignore_fp()", f"{indent}try:", f"{indent}    {out} = {call}",
                           f"{indent}finally:", f"{indent}    _restore_fp(_tok)"]
        else:
            self.lines.append(f"{indent}{out} = {call}")

    def kernel(self, step) -> None:
        spec = kernel_spec(step)
        dying = [k for k, a in enumerate(step.inputs) if a.aval.shape and id(a) in self.fresh
                 and self.last.get(id(a)) == step.index and id(a) not in self.outs] if spec.in_place else []
        reuse: dict[int, int] = {}  # output position -> the input position whose buffer it takes
        for j, v in enumerate(step.outputs):
            k = next((k for k in dying if k not in reuse.values() and step.inputs[k].aval == v.aval), None)
            if k is not None:
                reuse[j] = k
        if reuse:  # the kernel must know: it reads such an input through its output's pointer
            spec = kernel_spec(step, reuse)
        kname = self._global(f"_k{len(self.kernels)}", None)
        self.kernels.append((spec, kname))
        self.lines.append(f"    # {step.eqns[0].primitive.name}... ({len(step.eqns)} equations): kernel {spec.name}")
        call, allocs = [], []
        j = 0
        for kind, v in spec.args:
            if kind == "array":
                call.append(f"{self.boxed(v)}.ravel()")
            elif kind == "scalar":
                call.append(self.flt[id(v)] if id(v) in self.flt else f"{self.boxed(v)}[()]")
            else:
                out = self._new()
                k, j = reuse.get(j), j + 1
                if k is not None:
                    allocs.append(f"    {out} = {self.box[id(step.inputs[k])]}  # in place: its input dies here")
                else:
                    dt = self._global(f"_dt_{v.aval.dtype.name}", v.aval.dtype)
                    allocs.append(f"    {out} = _empty({v.aval.shape!r}, {dt})")
                call.append(out if len(v.aval.shape) == 1 else f"{out}.ravel()")
                self.box[id(v)] = out
                self.fresh.add(id(v))
        self.lines.extend(allocs)
        self.lines.append(f"    {kname}({', '.join(call)})")

    def scalar(self, step) -> None:
        """A 0-d float64/bool region in Python, rerun through the impls where math raises."""
        local: dict[int, str] = {}
        body = []
        for a in step.inputs:
            if id(a) in self.flt:
                local[id(a)] = self.flt[id(a)]
            else:
                name = local[id(a)] = self._new("f")
                conv = "bool" if a.aval.dtype == np.bool_ else "float"
                body.append(f"{name} = {conv}({self.box[id(a)]})")
        for e in step.eqns:
            ops = [operand(const_expr(a.val, a.aval.dtype) if isinstance(a, Literal) else local[id(a)], a)
                   for a in e.invars]
            name = local[id(e.outvars[0])] = self._new("f")
            body.append(f"{name} = {lower_expr(e, ops)}")
        boxes = []
        for v in step.outputs:
            kinds = self.readers.get(id(v), set())
            if "call" in kinds or id(v) in self.outs:
                boxes.append(v)
        box_names = {id(v): self._new() for v in boxes}
        body.extend(f"{box_names[id(v)]} = _asarray({local[id(v)]})" for v in boxes)
        self.lines.append(f"    try:  # {len(step.eqns)} equations on 0-d values")
        self.lines.extend("        " + b for b in body)
        self.lines.append("    except _SCALAR_ERRORS:  # inf or NaN where math raises: the impls")
        saved_box = dict(self.box)
        for e in step.eqns:
            self.call(e, indent="        ")
        for v in step.outputs:
            if id(v) in box_names:
                self.lines.append(f"        {box_names[id(v)]} = {self.box[id(v)]}")
            kinds = self.readers.get(id(v), set())
            if "scalar" in kinds or "kernel" in kinds:
                conv = "bool" if v.aval.dtype == np.bool_ else "float"
                self.lines.append(f"        {local[id(v)]} = {conv}({self.box[id(v)]})")
        self.box = saved_box
        for v in step.outputs:
            if id(v) in box_names:
                self.box[id(v)] = box_names[id(v)]
            self.flt[id(v)] = local[id(v)]

    def _impl(self, p) -> str:
        """The global holding primitive `p`'s impl."""
        fn = self.impls.get(id(p))
        if fn is None:
            fn = self.impls[id(p)] = self._global(f"_impl{len(self.impls)}_{p.name}", p.impl)
        return fn

    def tiled(self, run: list) -> bool:
        """The steps of `run` (see tile_runs) as one loop over blocks (block_size); False
        (nothing written) when every value the run makes is needed after it, as then tiling
        saves no memory. Inputs from before the run are read through flat views, sliced per
        block; values needed after the run are written into full-size arrays allocated
        before the loop; the rest exist one block at a time, each deleted after its last use
        in the block."""
        end = run[-1].index + 1
        made = [e.outvars[0] for st in run for e in st.eqns]
        made_ids = {id(v) for v in made}
        escaping = [v for v in made if id(v) in self.outs or self.last.get(id(v), -1) >= end]
        if len(escaping) == len(made):
            return False
        shape = run[0].shape
        n = math.prod(shape)
        last_in: dict[int, int] = {}  # id(var) -> the position in the run of its last reader
        for k, st in enumerate(run):
            for a in st.inputs:
                last_in[id(a)] = k
        alive = peak = 0  # block values alive at once (for the block size)
        for k, st in enumerate(run):
            alive += len(st.outputs)
            peak = max(peak, alive)
            alive -= sum(1 for a in st.inputs if id(a) in made_ids and last_in[id(a)] == k)
        tile = block_size(peak, max(v.aval.dtype.itemsize for v in made))
        self.lines.append(f"    # {len(run)} element-wise steps over {shape}, in blocks of {tile} elements")
        flat: dict[int, str] = {}     # id(input from before the run) -> its flat view
        for st in run:
            for a in st.inputs:
                if id(a) not in made_ids and a.aval.shape and id(a) not in flat:
                    flat[id(a)] = self._new("r")
                    self.lines.append(f"    {flat[id(a)]} = {self.boxed(a)}.reshape(-1)")
        full: dict[int, str] = {}     # id(value needed after the run) -> its flat full-size array
        for v in escaping:
            box = self.box[id(v)] = self._new()
            dt = self._global(f"_dt_{v.aval.dtype.name}", v.aval.dtype)
            full[id(v)] = self._new("r")
            self.lines.append(f"    {box} = _empty({v.aval.shape!r}, {dt})")
            self.lines.append(f"    {full[id(v)]} = {box}.reshape(-1)")
        by_kernel = {id(v) for st in run if st.kind == "kernel" for v in st.outputs}
        local: dict[int, str] = {}    # id(var) -> its block (a flat array of the block's length)
        body = []
        for k, st in enumerate(run):
            for a in st.inputs:
                if id(a) in flat and id(a) not in local:
                    local[id(a)] = self._new("b")
                    body.append(f"{local[id(a)]} = {flat[id(a)]}[_s:_e]")
            if st.kind == "call":
                e = st.eqns[0]
                args = [local.get(id(a)) or self.boxed(a) for a in e.invars] + ["xp=np"]
                args += [f"{key}={self._global('_p' + self._new(''), v)}" for key, v in e.params.items()]
                out = local[id(e.outvars[0])] = self._new("b")
                body.append(f"{out} = {self._impl(e.primitive)}({', '.join(args)})")
                if id(e.outvars[0]) in full:
                    body.append(f"{full[id(e.outvars[0])]}[_s:_e] = {out}")
            else:
                spec = kernel_spec(st)
                kname = self._global(f"_k{len(self.kernels)}", None)
                self.kernels.append((spec, kname))
                call = []
                for kind, v in spec.args:
                    if kind == "array":
                        # a block of a value from before the run may be strided (a broadcast
                        # constant), and so may an impl's result (one may return its input):
                        # kernels take contiguous arrays (a no-op for the others)
                        call.append(local[id(v)] if id(v) in by_kernel else f"_contig({local[id(v)]})")
                    elif kind == "scalar":
                        call.append(self.flt[id(v)] if id(v) in self.flt else f"{self.boxed(v)}[()]")
                    else:
                        out = local[id(v)] = self._new("b")
                        if id(v) in full:  # written in place into the full-size array
                            body.append(f"{out} = {full[id(v)]}[_s:_e]")
                        else:
                            dt = self._global(f"_dt_{v.aval.dtype.name}", v.aval.dtype)
                            body.append(f"{out} = _empty(_e - _s, {dt})")
                        call.append(out)
                body.append(f"{kname}({', '.join(call)})  # {st.eqns[0].primitive.name}... "
                            f"({len(st.eqns)} equations): kernel {spec.name}")
            dead = [local[id(a)] for a in st.inputs if id(a) in local and last_in[id(a)] == k]
            if dead:
                body.append(f"del {', '.join(dict.fromkeys(dead))}")
        self.lines.append(f"    for _s in range(0, {n}, {tile}):")
        self.lines.append(f"        _e = min(_s + {tile}, {n})")
        self.lines.extend("        " + b for b in body)
        for v in escaping:
            self.fresh.add(id(v))  # allocated here: no impl has seen it whole
        names = list(flat.values()) + list(full.values())
        if names:
            self.lines.append(f"    del {', '.join(names)}")
        return True

    # --- the program -----------------------------------------------------------------------

    def emit(self) -> str:
        for i, v in enumerate(self.jaxpr.invars):
            # a 0-d input may come as a Python number (jit's fast path): impls, kernels and the
            # caller get it as an array; the scalar tier converts it with float() anyway
            if v.aval.shape == () and (self.readers.get(id(v), set()) - {"scalar"} or id(v) in self.outs):
                self.lines.append(f"    a{i} = _asarray(a{i})")
        self.prologue = len(self.lines)
        runs = {first: self.steps[first:end] for first, end in tile_runs(self.steps)}
        k = 0
        while k < len(self.steps):
            run = runs.get(k)
            if run is not None and self.tiled(run):
                done = run
            else:
                done = [self.steps[k]]
                step = done[0]
                if step.kind == "call":
                    self.call(step.eqns[0])
                elif step.kind == "kernel":
                    self.kernel(step)
                else:
                    self.scalar(step)
            first, last = done[0].index, done[-1].index
            dead = [self.box[id(a)] for step in done for a in step.inputs
                    if first <= self.last.get(id(a), -1) <= last and id(a) not in self.outs
                    and id(a) in self.box and self.box[id(a)] not in self.globals]
            if dead:
                self.lines.append(f"    del {', '.join(dict.fromkeys(dead))}")
            k = last + 1
        outs, keep = self.fresh_outputs() if self.unalias else ([self.boxed(v) for v in self.jaxpr.outvars], [])
        params = ", ".join(f"a{i}" for i in range(len(self.jaxpr.invars)))
        head = f"def program({params}):"
        lines = self.lines
        if keep:  # inputs the output checks compare with, held past their last use
            lines = lines[:self.prologue] + [f"    _ins = ({', '.join(keep)},)"] + lines[self.prologue:]
        return "\n".join([head, *lines, f"    return ({', '.join(outs)}{',' if len(outs) == 1 else ''})"]) + "\n"

    def fresh_outputs(self) -> tuple[list[str], list[str]]:
        """The return expressions of the outputs, none of which shares memory with an input, a
        constant, a literal or another output (JAX's outputs are new buffers; a NumPy user
        writes into results): an output that is an input, a constant or a literal, or repeats
        an earlier one, is copied; one an impl made (which may return a view of its operands)
        is checked at run time against the inputs, constants and earlier outputs it may view,
        and copied only when it does (`_unaliased`). Kernel and scalar-tier outputs are new
        arrays and cost nothing. Also the input names to hold until then (see emit)."""
        invars = {id(v): f"a{i}" for i, v in enumerate(self.jaxpr.invars)}
        consts = {id(v): self.box[id(v)] for v in self.jaxpr.constvars}
        # id(var) -> the ids of the buffers it may view: itself when new, plus, when an impl
        # made it, everything its operands may view (inputs, constants, literals included)
        roots: dict[int, frozenset] = {}
        names: dict[int, str] = {**invars, **consts}
        for step in self.steps:
            if step.kind != "call":
                for v in step.outputs:
                    roots[id(v)] = frozenset((id(v),))
                continue
            e = step.eqns[0]
            r = {id(e.outvars[0])}
            for a in e.invars:
                if isinstance(a, Literal):
                    names[id(a)] = self._global(f"_lit{self._new('')}", a.val)
                    r.add(id(a))
                else:
                    r |= roots.get(id(a), {id(a)})
            roots[id(e.outvars[0])] = frozenset(r)
        self.globals["_unaliased"] = _unaliased
        outs: list[str] = []
        keep: dict[str, None] = {}
        done: list[tuple[frozenset, str]] = []  # earlier outputs: (roots, expression)
        seen: set[int] = set()
        for v in self.jaxpr.outvars:
            expr = self.boxed(v)
            if isinstance(v, Literal) or id(v) in names or id(v) in seen:
                expr = f"np.array({expr})"  # (a copy, and an array for a Python-number input)
                r = frozenset((id(v),))
            else:
                r = roots.get(id(v), frozenset((id(v),)))
                others = [names[k] for k in r if k in names and k != id(v)]
                others += [x for rs, x in done if rs & r]
                if others:
                    for x in others:
                        if x in invars.values():
                            keep[x] = None
                    held = [f"_ins[{list(keep).index(x)}]" if x in keep else x for x in others]
                    expr = f"_unaliased({expr}, ({', '.join(held)},))"
            seen.add(id(v))
            name = self._new("o")
            self.lines.append(f"    {name} = {expr}")
            done.append((r, name))
            outs.append(name)
        return outs, list(keep)


def _unaliased(o, others: tuple):
    """`o`, or a copy of it when it shares memory with one of `others` (a program's inputs,
    constants and earlier outputs that it may view; see _Emitter.fresh_outputs)."""
    return o.copy() if isinstance(o, np.ndarray) and aliases(o, others) else o


def fresh_arrays(outs, others) -> list:
    """`outs` (a jaxpr's outputs, evaluated), each a writable array sharing memory with none
    of `others` (its inputs and constants) nor with an earlier output: what a compiled
    program's outputs are (fresh_outputs), for the paths that evaluate the jaxpr instead."""
    res: list = []
    for o in outs:
        if isinstance(o, np.ndarray) and not o.flags.writeable:
            o = o.copy()
        res.append(_unaliased(o, (*others, *res)))
    return res


class Program:
    """A ClosedJaxpr compiled to a Python function: `program(*args)` gives the outputs as a
    tuple. `as_text()` is the generated function and the sources of its kernels."""

    def __init__(self, closed, min_kernel_eqns: int = MIN_KERNEL_EQNS, regions: bool = True,
                 fresh_outputs: bool = True) -> None:
        self.steps = plan(closed.jaxpr, min_kernel_eqns, regions)
        if any(step.kind == "kernel" for step in self.steps) and not numba_available():
            self.steps = plan(closed.jaxpr, math.inf)
        emitter = _Emitter(closed, self.steps, fresh_outputs)
        self.source = emitter.emit()
        self._globals = emitter.globals
        self.kernels = emitter.kernels
        self._fn = None

    def as_text(self) -> str:
        """The generated Python function, then each kernel's source."""
        parts = [self.source]
        seen = set()
        for spec, name in self.kernels:
            if spec.name not in seen:
                seen.add(spec.name)
                parts.append(f"# --- {name} = {spec.name} ---\n{spec.source}")
        return "\n".join(parts)

    def load(self):
        """The generated function, its kernels compiled (or loaded from the cache)."""
        if self._fn is None:
            for spec, name in self.kernels:
                self._globals[name] = load_kernel(spec)
            code = compile(self.source, "<fgrad.jit program>", "exec")
            exec(code, self._globals)
            self._fn = self._globals["program"]
        return self._fn

    def __call__(self, *args):
        return (self._fn or self.load())(*args)
