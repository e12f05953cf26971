"""A ClosedJaxpr as one generated Python function.

Each step of the plan (`regions.plan`) becomes straight-line code: a call of the primitive's
impl (bound as a global, with its params), a call of a region's Numba kernel, or, for a
region of 0-d float64/bool values, the region's scalar expressions in plain Python. Values
are locals, and each is deleted right after its last use, so its buffer is freed as early
as the interpreter would free it. A kernel output may take over the buffer of an input that
dies at that kernel (one the program allocated itself, that no impl has seen, so nothing
else can be a view of it).

The scalar tier computes with Python floats, which give NumPy's float64 results for the
arithmetic, while the math module raises where NumPy returns inf or NaN (log(0), exp(1000),
x / 0): such a region then reruns through the impls, so results never depend on the tier.
"""
from __future__ import annotations

import math

import numpy as np

from ...core.ir import Literal, Var
from . import scalar_lib
from .kernels import kernel_spec, load_kernel, numba_available
from .regions import MIN_KERNEL_EQNS, plan
from .scalar import Operand, const_expr, lower_expr

_SCALAR_ERRORS = (ArithmeticError, ValueError)


class _Emitter:
    """Writes the program's source, step by step, and collects the globals it refers to
    (constants, impls, params, literals, kernels)."""

    def __init__(self, closed, steps) -> None:
        self.jaxpr = closed.jaxpr
        self.steps = steps
        self.globals: dict = {"np": np, "math": math, "_empty": np.empty, "_asarray": np.asarray,
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
        fn = self.impls.get(id(p))
        if fn is None:
            fn = self.impls[id(p)] = self._global(f"_impl{len(self.impls)}_{p.name}", p.impl)
        args = [self.boxed(a) for a in eqn.invars] + ["xp=np"]
        for k, v in eqn.params.items():
            name = self._global("_p" + self._new(""), v)
            args.append(f"{k}={name}")
        out = self._new()
        self.box[id(eqn.outvars[0])] = out
        for a in eqn.invars:
            self.fresh.discard(id(a))  # an impl may return a view of it
        self.lines.append(f"{indent}{out} = {fn}({', '.join(args)})")

    def kernel(self, step) -> None:
        spec = kernel_spec(step)
        kname = self._global(f"_k{len(self.kernels)}", None)
        self.kernels.append((spec, kname))
        self.lines.append(f"    # {step.eqns[0].primitive.name}... ({len(step.eqns)} equations): kernel {spec.name}")
        call, taken, allocs = [], set(), []
        dying = [a for kind, a in spec.args if kind == "array" and id(a) in self.fresh
                 and self.last.get(id(a)) == step.index and id(a) not in self.outs]
        for kind, v in spec.args:
            if kind == "array":
                call.append(f"{self.boxed(v)}.ravel()")
            elif kind == "scalar":
                call.append(self.flt[id(v)] if id(v) in self.flt else f"{self.boxed(v)}[()]")
            else:
                out = self._new()
                reuse = next((a for a in dying if id(a) not in taken and a.aval == v.aval), None)
                if reuse is not None:
                    taken.add(id(reuse))
                    allocs.append(f"    {out} = {self.box[id(reuse)]}  # in place: its input dies here")
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
            ops = [Operand(const_expr(a.val, a.aval.dtype), a.aval.dtype) if isinstance(a, Literal)
                   else Operand(local[id(a)], a.aval.dtype) for a in e.invars]
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

    # --- the program -----------------------------------------------------------------------

    def emit(self) -> str:
        for i, v in enumerate(self.jaxpr.invars):
            # a 0-d input may come as a Python number (jit's fast path): impls, kernels and the
            # caller get it as an array; the scalar tier converts it with float() anyway
            if v.aval.shape == () and (self.readers.get(id(v), set()) - {"scalar"} or id(v) in self.outs):
                self.lines.append(f"    a{i} = _asarray(a{i})")
        for step in self.steps:
            if step.kind == "call":
                self.call(step.eqns[0])
            elif step.kind == "kernel":
                self.kernel(step)
            else:
                self.scalar(step)
            dead = [self.box[id(a)] for a in step.inputs
                    if self.last.get(id(a)) == step.index and id(a) not in self.outs
                    and id(a) in self.box and self.box[id(a)] not in self.globals]
            if dead:
                self.lines.append(f"    del {', '.join(dict.fromkeys(dead))}")
        outs = [self.boxed(v) for v in self.jaxpr.outvars]
        params = ", ".join(f"a{i}" for i in range(len(self.jaxpr.invars)))
        head = f"def program({params}):"
        return "\n".join([head, *self.lines, f"    return ({', '.join(outs)}{',' if len(outs) == 1 else ''})"]) + "\n"


class Program:
    """A ClosedJaxpr compiled to a Python function: `program(*args)` gives the outputs as a
    tuple. `as_text()` is the generated function and the sources of its kernels."""

    def __init__(self, closed, min_kernel_eqns: int = MIN_KERNEL_EQNS) -> None:
        self.steps = plan(closed.jaxpr, min_kernel_eqns)
        if any(step.kind == "kernel" for step in self.steps) and not numba_available():
            self.steps = plan(closed.jaxpr, math.inf)
        emitter = _Emitter(closed, self.steps)
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
