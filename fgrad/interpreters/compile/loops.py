"""Whole loops as one compiled function: the loop of a `scan` or `while` equation (fgrad.lax)
and its body, compiled together, so an iteration costs no Python at all. The code is written
as Numba source; llvm_loops.py translates it to LLVM IR, which llvmlite compiles without
importing Numba (kernels.load_kernel), and Numba compiles the loops it does not translate.

A body jaxpr becomes straight-line code inside the loop. Its element-wise equations are
partitioned as jit partitions a program (`regions.plan`): each region is one inner loop over
the flattened elements, each 0-d equation one scalar statement, with the primitives' own
lowering rules (`Primitive.def_lowering`). The structural equations a loop body binds
(reshape, broadcast_in_dim, transpose, slice, pad, concatenate, reduce_sum/max/min) are
loops over static strides, and `dot_general` with operands of at most two axes (the
matrix-vector products of a neural ODE and their VJPs) is a generated helper whose sums run
in a fixed order (several independent partial sums, no fast-math), so its bits are the same
on every machine. Every array value has a buffer allocated
once, before the loop (shapes are static), which each iteration overwrites; the carry lives
in its own buffers, updated after the body (through temporaries where one carry's new value
is another's old one), or written in place by the region that computes it where nothing
reads the old value after it (`_in_place`: a neural ODE's weight gradient is accumulated
without a copy per step). Element-wise regions compute exp, log, tanh and the logistic
function with vmath's vectorisable versions (kernels.py), whatever their size: the C
library's take 5-25 ns an element, one at a time. A scan writes its stacked outputs
straight into preallocated arrays. The function allocates nothing: its parameters are the
consts, the carry (a copy of its initial value, left holding the final one), the xs and ys
and every buffer of the body, all allocated by the caller, so its compiled code needs no
runtime (kernels.py keeps it on disk and calls it without Numba).

A body with an equation outside that set has no loop lowering (`scan_loop` and `while_loop`
return None): the caller then runs the loop in Python (fgrad.lax: under jit, over the body
compiled once by jit's region compiler, `Program`).

`JIT_RULES` lets a primitive replace its impl in jit's programs by a callable specialized for
one equation (built when the program is generated): fgrad.lax registers its loops there.
"""
from __future__ import annotations

import hashlib
import math
import re
from typing import Callable, NamedTuple

import numpy as np

from ...core.ir import Literal
from . import scalar_lib
from .kernels import KernelSpec, load_kernel, native_call_fits, numba_available, vectorised, vmath_helpers
from .regions import plan
from .scalar import KERNEL_DTYPES, const_expr, lower_expr, lowerable, operand

# Counters for tests and benchmarks: loop functions generated (compiled on first call, by
# llvmlite or Numba, or loaded from the cache), loop runs by compiled code, and iterations of
# a Python loop over a region-compiled body (a loop with no loop lowering, under jit).
STATS = {"loops_built": 0, "compiled_runs": 0, "program_steps": 0}

# primitive -> factory(eqn) -> callable(*operands) | None: what jit's program calls for
# that equation instead of the primitive's impl (None: the impl)
JIT_RULES: dict = {}

# Eagerly (outside jit), a loop is compiled when its body would run at least this many
# equations in all (the trip count times the body's length): below, its compile time (tens of
# milliseconds by llvmlite, 0.3 to 1 s by Numba, then cached on disk) is not repaid.
EAGER_MIN_WORK = 20_000

# Under jit, a loop equation's first calls run their iterations in Python over the body
# compiled by jit's region compiler (no loop to compile: what keeps a jitted function's
# first call fast), until that equation has run this many body equations over
# all its calls; the calls after that run the compiled loop (a while_loop switches mid-loop,
# as eagerly). The threshold is eager's: a call with that much work compiles at once, as
# compiling repays itself within the call; smaller loops never pay for a compile unless
# they are called often. The
# switch depends on the call history only, never on a measured time, so a program called
# the same way computes the same bits on every run and machine.
# Element-wise arithmetic (+, -, *, /, sqrt, comparisons, max/min) gives the same bits in
# both tiers; transcendental functions (vmath's in the compiled loop), reductions and dot
# products (other summation orders) may differ by a few ulps between them.
JIT_MIN_WORK = EAGER_MIN_WORK


class JitLoopTier:
    """The tier counter of one loop equation of a jit program: how many body equations its
    interpreted calls have run (see JIT_MIN_WORK). Calls are counted in the order they
    start; concurrent calls from several threads have no order, so which of them is the
    first compiled one is not fixed."""

    __slots__ = ("done", "eqns")

    def __init__(self, body_eqns: int) -> None:
        self.eqns = max(1, body_eqns)
        self.done = 0

    def compiled(self, trips: int) -> bool:
        """Whether a call running `trips` iterations runs compiled; if not, the work is counted."""
        work = trips * self.eqns
        if self.done + work >= JIT_MIN_WORK:
            return True
        self.done += work
        return False

    def budget(self) -> int:
        """The trips a call of a loop of unknown length may run interpreted before it switches
        to compiled code (0: compiled from the start)."""
        left = JIT_MIN_WORK - self.done
        return 0 if left <= 0 else -(-left // self.eqns)

    def count(self, trips: int) -> None:
        """Record `trips` interpreted iterations."""
        self.done += trips * self.eqns

_HEADER = '''"""fgrad loop {name}: generated by fgrad.interpreters.compile.loops from a loop body."""
import math

import numba
import numpy as np

_OPTS = dict(error_model="numpy", boundscheck=False, nogil=True, cache=True)
# the loop itself: no Python wrapper and no runtime (it allocates nothing, raises nothing),
# so its object code calls only the C library (kernels.py keeps it and calls it through ctypes)
_BARE = dict(_OPTS, no_cpython_wrapper=True, no_cfunc_wrapper=True, _nrt=False)
'''

_NATURAL = frozenset(np.dtype(d) for d in ("bool", "int64", "float64"))
_FLOATS = frozenset(np.dtype(d) for d in ("float32", "float64"))


class _Unsupported(Exception):
    """An equation with no loop lowering (internal: the caller falls back)."""


class _Ref(NamedTuple):
    """Where a value lives in the generated code: a scalar expression (kind "s", 0-d values)
    or the name of a flat, C-ordered buffer (kind "a")."""
    kind: str
    text: str


def _np_dtype(d) -> str:
    d = np.dtype(d)
    return "np.bool_" if d == np.bool_ else f"np.{d.name}"


def _cast(dtype, expr: str) -> str:
    """`expr` as a Numba value of `dtype` (Numba widens small integers in arithmetic)."""
    dtype = np.dtype(dtype)
    return expr if dtype in _NATURAL else f"{_np_dtype(dtype)}({expr})"


def _strides(shape) -> list[int]:
    out, acc = [], 1
    for d in reversed(shape):
        out.append(acc)
        acc *= d
    return out[::-1]


def _offset(base: int, strides, idx) -> str:
    terms = [str(base)] if base else []
    for s, i in zip(strides, idx):
        if s == 1:
            terms.append(i)
        elif s:
            terms.append(f"{i} * {s}")
    return " + ".join(terms) or "0"


class _Emitter:
    """Writes the code of one jaxpr (a loop body or a while's predicate) as statements, its
    buffers allocated in `pre` (before the loop) and helper functions added to `helpers`."""

    def __init__(self, prefix: str, pre: list, helpers: dict) -> None:
        self.prefix = prefix
        self.pre = pre
        self.helpers = helpers
        self.refs: dict[int, _Ref] = {}
        self.lines: list[str] = []
        self.count = 0

    def _name(self, kind: str) -> str:
        self.count += 1
        return f"{kind}{self.prefix}{self.count}"

    def buffer(self, aval) -> str:
        if aval.dtype not in KERNEL_DTYPES:
            raise _Unsupported(f"dtype {aval.dtype}")
        name = self._name("b")
        self.pre.append(f"{name} = np.empty({aval.size}, {_np_dtype(aval.dtype)})")
        return name

    def ref(self, a) -> _Ref:
        if isinstance(a, Literal):
            if np.ndim(a.val) != 0:
                raise _Unsupported("an array literal")
            return _Ref("s", const_expr(a.val, a.aval.dtype))
        return self.refs[id(a)]

    def scalar(self, v, expr: str) -> None:
        name = self._name("s")
        self.lines.append(f"{name} = {_cast(v.aval.dtype, expr)}")
        self.refs[id(v)] = _Ref("s", name)

    # --- the jaxpr ---------------------------------------------------------------------------

    def emit(self, jaxpr) -> list[_Ref]:
        """The code of `jaxpr` (its inputs already in `refs`): its outputs' refs."""
        for v in list(jaxpr.invars) + [o for e in jaxpr.eqns for o in e.outvars]:
            if v.aval.dtype not in KERNEL_DTYPES:
                raise _Unsupported(f"dtype {v.aval.dtype}")
        steps = plan(jaxpr, 1)
        fused = _fusable_outers(steps, jaxpr)
        for step in steps:
            if step.kind == "call":
                e = step.eqns[0]
                if id(e) in fused:  # read element by element by the regions that use it
                    l, r = (self.ref(a) for a in e.invars)
                    self.refs[id(e.outvars[0])] = _Ref("o", f"{l.text}[_r] * {r.text}[_c]")
                else:
                    self.equation(e)
            else:
                self.region(step.eqns, step.inputs, step.outputs, step.shape)
        return [self.ref(a) for a in jaxpr.outvars]

    def region(self, eqns, inputs, outputs, shape) -> None:
        """Element-wise equations over `shape`: scalar statements, or one loop."""
        if shape == ():
            for e in eqns:
                self.scalar(e.outvars[0], self.lower(e, lambda a: self.ref(a).text))
            return
        size = math.prod(shape)
        names: dict[int, str] = {}
        body = []
        outer = any(self.refs[id(a)].kind == "o" for a in inputs)
        for a in inputs:
            r = self.refs[id(a)]
            if r.kind == "s":
                names[id(a)] = r.text
            else:
                names[id(a)] = self._name("x")
                body.append(f"    {names[id(a)]} = {r.text if r.kind == 'o' else f'{r.text}[_e]'}")
        for e in eqns:
            t = names[id(e.outvars[0])] = self._name("t")
            expr = self.lower(e, lambda a: self.ref(a).text if isinstance(a, Literal) else names[id(a)])
            # vmath's exp, log, tanh and logistic (not sine and cosine, whose arguments a loop
            # does not check): the C library's take 5-25 ns an element, one at a time
            body.append(f"    {t} = {vectorised([expr], trig=False)[0][0]}")
        for v in outputs:
            b = self.buffer(v.aval)
            body.append(f"    {b}[_e] = {names[id(v)]}")
            self.refs[id(v)] = _Ref("a", b)
        if outer:  # a 2-D loop: outer products are read as a[_r] * b[_c]
            self.lines += [f"for _r in range({shape[0]}):", f"    for _c in range({shape[1]}):",
                           f"        _e = _r * {shape[1]} + _c"]
            self.lines.extend("    " + b for b in body)
        else:
            self.lines.append(f"for _e in range({size}):")
            self.lines.extend(body)

    @staticmethod
    def lower(e, text_of) -> str:
        expr = lower_expr(e, [operand(text_of(a), a) for a in e.invars])
        if expr is None:
            raise _Unsupported(e.primitive.name)
        return expr

    def equation(self, e) -> None:
        name = e.primitive.name
        out = e.outvars[0]
        shape = out.aval.shape
        if lowerable(e, KERNEL_DTYPES) and all(a.aval.shape in ((), shape) for a in e.invars):
            self.region([e], [a for a in e.invars if not isinstance(a, Literal)], [out], shape)
            return
        rule = _STRUCTURAL.get(name)
        if rule is None:
            raise _Unsupported(name)
        rule(self, e)

    # --- structural equations ----------------------------------------------------------------

    def copy(self, dst: str, dst_base: int, dst_strides, src: _Ref, src_base: int, src_strides, shape) -> None:
        """dst[dst_base + idx . dst_strides] = src[src_base + idx . src_strides] over `shape`."""
        if 0 in shape:
            return
        idx = [f"_j{d}" for d in range(len(shape))]
        for d, n in enumerate(shape):
            self.lines.append("    " * d + f"for _j{d} in range({n}):")
        value = src.text if src.kind == "s" else f"{src.text}[{_offset(src_base, src_strides, idx)}]"
        self.lines.append("    " * len(shape) + f"{dst}[{_offset(dst_base, dst_strides, idx)}] = {value}")

    def strided(self, e, src: _Ref, base: int, strides) -> None:
        """The output of `e` read from `src` at `base` + its index . `strides`."""
        out = e.outvars[0]
        if out.aval.shape == ():
            self.scalar(out, src.text if src.kind == "s" else f"{src.text}[{base}]")
            return
        b = self.buffer(out.aval)
        self.copy(b, 0, _strides(out.aval.shape), src, base, strides, out.aval.shape)
        self.refs[id(out)] = _Ref("a", b)

    def reshape(self, e) -> None:
        x, out = e.invars[0], e.outvars[0]
        src = self.ref(x)
        if src.kind == "s" or out.aval.shape == ():
            self.strided(e, src, 0, [0] * len(out.aval.shape))
        else:  # the same elements in the same (C) order: the same buffer
            self.refs[id(out)] = src

    def broadcast_in_dim(self, e) -> None:
        x = e.invars[0]
        shape, dims = e.params["shape"], e.params["broadcast_dimensions"]
        xs = _strides(x.aval.shape)
        strides = [0] * len(shape)
        for src, dst in enumerate(dims):
            if x.aval.shape[src] != 1:
                strides[dst] = xs[src]
        self.strided(e, self.ref(x), 0, strides)

    def transpose(self, e) -> None:
        x = e.invars[0]
        xs = _strides(x.aval.shape)
        self.strided(e, self.ref(x), 0, [xs[p] for p in e.params["permutation"]])

    def slice(self, e) -> None:
        x = e.invars[0]
        xs = _strides(x.aval.shape)
        base = sum(s * st for s, st in zip(e.params["start_indices"], xs))
        self.strided(e, self.ref(x), base, xs)

    def pad(self, e) -> None:
        x, out = e.invars[0], e.outvars[0]
        b = self.buffer(out.aval)
        os_ = _strides(out.aval.shape)
        self.lines.append(f"{b}[:] = {const_expr(0, out.aval.dtype)}")
        base = sum(lo * st for (lo, _), st in zip(e.params["widths"], os_))
        self.copy(b, base, os_, self.ref(x), 0, _strides(x.aval.shape), x.aval.shape)
        self.refs[id(out)] = _Ref("a", b)

    def concatenate(self, e) -> None:
        out, dim = e.outvars[0], e.params["dimension"]
        b = self.buffer(out.aval)
        os_ = _strides(out.aval.shape)
        at = 0
        for x in e.invars:
            self.copy(b, at * os_[dim], os_, self.ref(x), 0, _strides(x.aval.shape), x.aval.shape)
            at += x.aval.shape[dim]
        self.refs[id(out)] = _Ref("a", b)

    def reduce(self, e) -> None:
        x, out = e.invars[0], e.outvars[0]
        kind = e.primitive.name
        d = x.aval.dtype
        if d == np.bool_ or x.aval.size == 0:
            raise _Unsupported(f"{kind} of {x.aval.str_short()}")
        src = self.ref(x)
        if src.kind == "s":
            self.scalar(out, src.text)
            return
        if kind == "reduce_sum":
            init = const_expr(0, d)
        elif d.kind == "f":
            init = "-math.inf" if kind == "reduce_max" else "math.inf"
            init = _cast(d, init)
        else:
            info = np.iinfo(d)
            init = const_expr(info.min if kind == "reduce_max" else info.max, d)
        axes = set(e.params["axes"])
        shape = x.aval.shape
        idx = [f"_j{k}" for k in range(len(shape))]
        os_ = _strides(out.aval.shape)
        kept = [os_[sum(1 for j in range(k) if j not in axes)] if k not in axes else 0 for k in range(len(shape))]
        if out.aval.shape == ():
            acc = self._name("s")
            self.lines.append(f"{acc} = {init}")
            target = acc
        else:
            acc = self.buffer(out.aval)
            self.lines.append(f"{acc}[:] = {init}")
            target = f"{acc}[{_offset(0, kept, idx)}]"
        for k, n in enumerate(shape):
            self.lines.append("    " * k + f"for _j{k} in range({n}):")
        pad = "    " * len(shape)
        value = f"{src.text}[{_offset(0, _strides(shape), idx)}]"
        if kind == "reduce_sum":
            self.lines.append(f"{pad}{target} = {_cast(d, f'{target} + {value}')}")
        else:
            op = ">" if kind == "reduce_max" else "<"
            self.lines.append(f"{pad}_v = {value}")
            self.lines.append(f"{pad}if _v {op} {target} or _v != _v:")  # NaN wins, as in NumPy
            self.lines.append(f"{pad}    {target} = _v")
        self.refs[id(out)] = _Ref("s" if out.aval.shape == () else "a", acc)

    def dot_general(self, e) -> None:
        lhs, rhs = e.invars
        out = e.outvars[0]
        (lc, rc), (lb, rb) = e.params["dimension_numbers"]
        la, ra = lhs.aval, rhs.aval
        if (lb or rb or len(lc) > 1 or la.ndim > 2 or ra.ndim > 2 or la.ndim == 0 or ra.ndim == 0
                or la.dtype not in _FLOATS or ra.dtype != la.dtype):
            raise _Unsupported("dot_general beyond matrix products")
        L, R = self.ref(lhs), self.ref(rhs)
        nL, sLf, nC, sLc = _operand_layout(la.shape, lc)
        nR, sRf, _, sRc = _operand_layout(ra.shape, rc)
        key = (nL, sLf, nC, sLc, nR, sRf, sRc, la.dtype.name, out.aval.shape == ())
        name = self.helpers.get(key)
        if name is None:
            name = f"_dot{len(self.helpers)}"
            self.helpers[key] = name
            self.helpers[(name,)] = _dot_source(name, *key)
        if out.aval.shape == ():
            self.scalar(out, f"{name}({L.text}, {R.text})")
            return
        b = self.buffer(out.aval)
        self.lines.append(f"{name}({L.text}, {R.text}, {b})")
        self.refs[id(out)] = _Ref("a", b)


def _fusable_outers(steps, jaxpr) -> set[int]:
    """The outer products of two vectors (dot_general without contraction, the VJP of a
    matrix-vector product) that only element-wise regions of their shape read: fused into
    those regions, they are never written out (what makes the accumulation of a weight's
    gradient one pass over it per step)."""
    readers: dict[int, list] = {}
    for step in steps:
        for a in step.inputs:
            readers.setdefault(id(a), []).append(step)
    outs = {id(v) for v in jaxpr.outvars}
    fused = set()
    for step in steps:
        e = step.eqns[0]
        if step.kind != "call" or e.primitive.name != "dot_general":
            continue
        (lc, _), (lb, _) = e.params["dimension_numbers"]
        v = e.outvars[0]
        if (lc or lb or any(a.aval.ndim != 1 or isinstance(a, Literal) for a in e.invars)
                or v.aval.dtype not in _FLOATS or id(v) in outs):
            continue
        rs = readers.get(id(v))
        if rs and all(r.kind == "kernel" and r.shape == v.aval.shape for r in rs):
            fused.add(id(e))
    return fused


def _operand_layout(shape, contract) -> tuple[int, int, int, int]:
    """(free size, free stride, contracted size, contracted stride) of a dot_general operand of
    at most two axes in C order (its free axes, when it has two, are its whole flat extent)."""
    st = _strides(shape)
    if not contract:
        return math.prod(shape), 1, 1, 0
    c = contract[0]
    free = [k for k in range(len(shape)) if k != c]
    if not free:
        return 1, 0, shape[c], st[c]
    return shape[free[0]], st[free[0]], shape[c], st[c]


def _dot_source(name: str, nL, sLf, nC, sLc, nR, sRf, sRc, dtype: str, scalar: bool) -> str:
    """out[fl * nR + fr] = sum_c L[fl*sLf + c*sLc] * R[c*sRc + fr*sRf], with the innermost
    loop over a unit stride where there is one."""
    zero = "0.0" if dtype == "float64" else "np.float32(0.0)"
    Lx = _offset(0, [sLf, sLc], ["fl", "c"])
    Rx = _offset(0, [sRc, sRf], ["c", "fr"])
    # No fast-math: every sum is added in the order written here, and products are not
    # contracted into FMAs, so the bits depend neither on the CPU (its vector width, FMA) nor
    # on which of fgrad's Numba users compiled first in the process (that sets the width).
    lines = ["@numba.njit(**_OPTS)"]
    if scalar:  # a dot product of vectors: _BLOCK partial sums (c % _BLOCK), a fixed tree
        full = nC - nC % _BLOCK
        tree, h = [f"a{k}" for k in range(_BLOCK)], _BLOCK
        while h > 1:
            h //= 2
            tree = [f"({tree[k]} + {tree[k + h]})" for k in range(h)]
        lines += [f"def {name}(L, R):", "    fl = 0", "    fr = 0", *[f"    a{k} = {zero}" for k in range(_BLOCK)],
                  f"    for cb in range(0, {full}, {_BLOCK}):",
                  *[f"        c = cb + {k}\n        a{k} += L[{Lx}] * R[{Rx}]" for k in range(_BLOCK)],
                  f"    acc = {tree[0]}", f"    for c in range({full}, {nC}):", f"        acc += L[{Lx}] * R[{Rx}]",
                  "    return acc"]
        return "\n".join(lines) + "\n"
    lines.append(f"def {name}(L, R, out):")
    if sRf == 1 and nR > 1 and nC > 1:  # rows of R are contiguous: out row += L[fl, c] * R[c, :]
        lines += [f"    for fl in range({nL}):",
                  f"        for fr in range({nR}):", f"            out[fl * {nR} + fr] = {zero}",
                  f"        for c in range({nC}):", f"            l = L[{Lx}]",
                  f"            for fr in range({nR}):", f"                out[fl * {nR} + fr] += l * R[{Rx}]"]
    elif sLf == 1 and sLc != 1 and nR == 1 and nC > 1:  # columns of L are contiguous (A.T @ x)
        lines += ["    fr = 0", f"    for fl in range({nL}):", f"        out[fl] = {zero}",
                  f"    for c in range({nC}):", f"        r = R[{Rx}]",
                  f"        for fl in range({nL}):", f"            out[fl] += L[{Lx}] * r"]
    else:  # dot products (A @ x), or outer products (nC == 1): _BLOCK rows at a time, so that
        # as many independent sums hide the latency of each (one sum at a time is 5x slower)
        full = nL - nL % _BLOCK
        if full:
            rows = [_offset(0, [sLf, sLc], [f"(fb + {k})", "c"]) for k in range(_BLOCK)]
            lines += [f"    for fb in range(0, {full}, {_BLOCK}):", f"        for fr in range({nR}):",
                      *[f"            a{k} = {zero}" for k in range(_BLOCK)],
                      f"            for c in range({nC}):", f"                r = R[{Rx}]",
                      *[f"                a{k} += L[{rows[k]}] * r" for k in range(_BLOCK)],
                      *[f"            out[(fb + {k}) * {nR} + fr] = a{k}" for k in range(_BLOCK)]]
        if full < nL:
            lines += [f"    for fl in range({full}, {nL}):", f"        for fr in range({nR}):",
                      f"            acc = {zero}", f"            for c in range({nC}):",
                      f"                acc += L[{Lx}] * R[{Rx}]", f"            out[fl * {nR} + fr] = acc"]
    return "\n".join(lines) + "\n"


_BLOCK = 8


_STRUCTURAL: dict[str, Callable] = {
    "reshape": _Emitter.reshape,
    "broadcast_in_dim": _Emitter.broadcast_in_dim,
    "transpose": _Emitter.transpose,
    "slice": _Emitter.slice,
    "pad": _Emitter.pad,
    "concatenate": _Emitter.concatenate,
    "reduce_sum": _Emitter.reduce,
    "reduce_max": _Emitter.reduce,
    "reduce_min": _Emitter.reduce,
    "dot_general": _Emitter.dot_general,
}


# --- loops -----------------------------------------------------------------------------------

def _inputs(em: _Emitter, invars, names: list[str]) -> list[str]:
    """Bind `invars` to the function's flat parameters `names`; the statements that read the
    0-d ones as scalars."""
    lines = []
    for v, n in zip(invars, names):
        if v.aval.shape == ():
            lines.append(f"{n}_s = {n}[0]")
            em.refs[id(v)] = _Ref("s", f"{n}_s")
        else:
            em.refs[id(v)] = _Ref("a", n)
    return lines


def _carry_init(em: _Emitter, invars) -> tuple[list[str], list[str], list[_Ref]]:
    """The carry's own state, bound to the body's carry inputs: parameters `car{k}` (copies
    of the initial values, which the loop overwrites and leaves the final values in), 0-d
    ones read into locals. Returns the statements before the loop, those after it (the
    locals written back) and the carry's refs."""
    lines, after, refs = [], [], []
    for k, v in enumerate(invars):
        if v.aval.shape == ():
            lines.append(f"cs{k} = car{k}[0]")
            after.append(f"car{k}[0] = cs{k}")
            r = _Ref("s", f"cs{k}")
        else:
            r = _Ref("a", f"car{k}")
        em.refs[id(v)] = r
        refs.append(r)
    return lines, after, refs


def _copy(dst: str, src: str, size: int) -> list[str]:
    """dst[:size] = src[:size], element by element (a slice assignment may allocate)."""
    return [f"for _e in range({size}):", f"    {dst}[_e] = {src}[_e]"]


def _in_place(lines: list[str], later: list[str], pre: list[str], carry: list[_Ref],
              new: list[_Ref]) -> tuple[list[str], list[str], list[_Ref]]:
    """`lines` (a body's statements) and `new` (its carry's new values) rewritten so that an
    element-wise region whose output is a carry's new value writes the carry's own buffer,
    instead of a buffer copied into the carry after the body (for a 128x128 gradient, a
    pass over 128 KiB a step). Only where nothing can see the difference: the region reads
    the old carry only at the element it writes (`[_e]`), no statement after it (`later`,
    the stacked-output stores, included) reads the old carry, and the new value is no other
    carry's. Returns `lines`, `later` and `new`, rewritten."""
    lines, later, new = list(lines), list(later), list(new)
    texts = [n.text for n in new]
    for k, (c, n) in enumerate(zip(carry, new)):
        if c.kind != "a" or n.kind != "a" or n.text == c.text or texts.count(n.text) != 1:
            continue
        if c.text in texts or f"{n.text} = np.empty(" not in "\n".join(pre):
            continue  # the old carry is another's new value; or `n` is no buffer of the body
        uses = [i for i, line in enumerate(lines) if re.search(rf"\b{n.text}\b", line)]
        w = uses[0]
        if not re.fullmatch(rf"\s+{n.text}\[_e\] = \w+", lines[w]):
            continue  # written by a structural equation or a helper: left alone
        start = max(i for i in range(w + 1) if not lines[i].startswith(" "))
        end = next((i for i in range(w + 1, len(lines)) if not lines[i].startswith(" ")), len(lines))
        pat = re.compile(rf"\b{c.text}\b(?!\[_e\])")
        if (not lines[start].startswith(("for _e ", "for _r ")) or any(pat.search(x) for x in lines[start:end])
                or any(re.search(rf"\b{c.text}\b", x) for x in lines[end:] + later)):
            continue
        lines = [re.sub(rf"\b{n.text}\b", c.text, x) for x in lines]
        later = [re.sub(rf"\b{n.text}\b", c.text, x) for x in later]
        pre.remove(next(x for x in pre if x.startswith(f"{n.text} = np.empty(")))
        new[k] = c
        texts[k] = c.text
    return lines, later, new


def _carry_update(carry: list[_Ref], new: list[_Ref], avals, pre: list) -> list[str]:
    """Statements that make `new` the carry: values read from carry buffers go through
    temporaries first (a carry's new value may be another's old one)."""
    first, then = [], []
    owned = {r.text for r in carry if r.kind == "a"}
    for k, (c, n, a) in enumerate(zip(carry, new, avals)):
        if c.kind == "s":
            first.append(f"_n{k} = {_cast(a.dtype, n.text)}")
            then.append(f"{c.text} = _n{k}")
        elif n.text != c.text:
            if n.text in owned:
                pre.append(f"_n{k} = np.empty({a.size}, {_np_dtype(a.dtype)})")
                first += _copy(f"_n{k}", n.text, a.size)
                then += _copy(c.text, f"_n{k}", a.size)
            else:
                then += _copy(c.text, n.text, a.size)
    return first + then


def _indent(lines: list[str], n: int) -> list[str]:
    return ["    " * n + line for line in lines]


_NUMBA_TYPES = {np.dtype(np.bool_): "numba.bool_"}


def _function(params: list[tuple[str, np.dtype, tuple]], pre: list[str], code: list[str],
              helpers: dict) -> KernelSpec:
    """The module of loop function `kernel`: its parameters `params` ((name, dtype, shape)
    of a C-ordered array each), then the buffers that `pre` allocates (which the caller
    allocates instead), running statements `code`. Its spec's `args` are the arrays'
    (dtype, shape), in order."""
    params = list(params)
    for line in pre:
        name, size, dtype = re.fullmatch(r"(\w+) = np\.empty\((\d+), np\.(\w+)\)", line).groups()
        params.append((name, np.dtype(dtype), (int(size),)))
    types = [_NUMBA_TYPES.get(d, f"numba.{d.name}") + f"[{', '.join([':'] * (len(s) - 1) + ['::1'])}]"
             for _, d, s in params]
    args = [(d, s) for _, d, s in params]
    # (a body with hundreds of buffers has more than a ctypes call takes: Numba's dispatcher
    # calls it then, through its Python wrapper)
    bare = native_call_fits(args)
    fn = ([f"@numba.njit(numba.void({', '.join(types)}), **{'_BARE' if bare else '_OPTS'})",
           f"def kernel({', '.join(n for n, _, _ in params)}):"] + _indent(code, 1))
    spec = _module(fn, helpers)
    spec.args, spec.bare = args, bare
    return spec


def _module(fn_lines: list[str], helpers: dict) -> KernelSpec:
    text = "\n".join(fn_lines)
    words = _words(text) | {w for key, src in helpers.items() if len(key) == 1 for w in _words(src)}
    used = sorted(set(scalar_lib.HELPERS) & words)
    parts = vmath_helpers(sorted(words))
    if used:
        parts.append("".join(f"{k} = {v!r}\n" for k, v in sorted(scalar_lib.CONSTANTS.items())))
        parts += ["@numba.njit(**_OPTS)\n" + scalar_lib.numba_source(h) for h in used]
    parts += [src for key, src in helpers.items() if len(key) == 1]
    parts.append(text + "\n")
    body = "\n\n".join(parts)
    name = "l_" + hashlib.sha256((_HEADER + body).encode()).hexdigest()[:20]
    return KernelSpec(_HEADER.format(name=name) + "\n\n" + body, name, [])


def _words(text: str) -> set[str]:
    return set(re.findall(r"\b\w+\b", text))


def _flat(x, aval) -> np.ndarray:
    return np.ascontiguousarray(x, dtype=aval.dtype).reshape(aval.size)


def _scratch(spec: KernelSpec, start: int) -> list[np.ndarray]:
    """New buffers for the loop's parameters from `start` on (its body's values)."""
    return [np.empty(shape, dtype) for dtype, shape in spec.args[start:]]


class CompiledLoop:
    """A loop's generated function (`spec`, Numba source), compiled on first call from
    llvm_loops' IR or by Numba (or linked from the object code an earlier process kept:
    kernels.load_kernel)."""

    __slots__ = ("_fn", "spec")

    def __init__(self, spec: KernelSpec) -> None:
        self.spec = spec
        self._fn = None
        STATS["loops_built"] += 1

    def function(self):
        if self._fn is None:
            self._fn = load_kernel(self.spec)
        return self._fn

    def as_text(self) -> str:
        return self.spec.source


class ScanLoop(CompiledLoop):
    """`run(consts, init, xs) -> (final carry, stacked ys)`: a scan run by one Numba function."""

    __slots__ = ("body", "length", "num_carry", "num_consts")

    def __init__(self, spec: KernelSpec, body, num_consts: int, num_carry: int, length: int) -> None:
        super().__init__(spec)
        self.body, self.num_consts, self.num_carry, self.length = body, num_consts, num_carry, length

    def __call__(self, consts, init, xs) -> tuple[list, list]:
        fn = self.function()
        ins, outs = self.body.in_avals, self.body.out_avals
        nc, K, n = self.num_consts, self.num_carry, self.length
        flat = [_flat(v, a) for v, a in zip(consts, ins[:nc])]
        carry = [np.array(v, a.dtype).reshape(a.size) for v, a in zip(init, ins[nc:nc + K])]
        rows = [np.ascontiguousarray(x, dtype=a.dtype).reshape(n, a.size) for x, a in zip(xs, ins[nc + K:])]
        ys = [np.empty((n, a.size), a.dtype) for a in outs[K:]]
        fn(*flat, *carry, *rows, *ys, *_scratch(self.spec, nc + K + len(rows) + len(ys)))
        STATS["compiled_runs"] += 1
        return ([c.reshape(a.shape) for c, a in zip(carry, outs[:K])],
                [y.reshape((n,) + tuple(a.shape)) for y, a in zip(ys, outs[K:])])


class WhileLoop(CompiledLoop):
    """`run(cond_consts, body_consts, init) -> final carry`: a while loop in one Numba function."""

    __slots__ = ("avals",)

    def __init__(self, spec: KernelSpec, avals) -> None:
        super().__init__(spec)
        self.avals = avals  # cond consts, body consts, carry

    def __call__(self, cond_consts, body_consts, init) -> list:
        fn = self.function()
        nc, K = len(cond_consts) + len(body_consts), len(init)
        consts = [_flat(v, a) for v, a in zip(list(cond_consts) + list(body_consts), self.avals)]
        carry = [np.array(v, a.dtype).reshape(a.size) for v, a in zip(init, self.avals[nc:])]
        fn(*consts, *carry, *_scratch(self.spec, nc + K))
        STATS["compiled_runs"] += 1
        return [c.reshape(a.shape) for c, a in zip(carry, self.avals[nc:])]


def scan_loop(body, num_consts: int, num_carry: int, length: int, reverse: bool,
              unroll: int | bool) -> ScanLoop | None:
    """The whole scan of `body` (a closure-converted ClosedJaxpr: consts, carry, x slices ->
    carry, y slices) as one Numba function; None without Numba, or when the body has an
    equation with no loop lowering. `unroll` copies of the body run per loop iteration (all
    `length` for True), as in JAX; the values do not depend on it."""
    if not numba_available():
        return None
    j = body.jaxpr
    nc, K = num_consts, num_carry
    pre: list[str] = []
    helpers: dict = {}
    em = _Emitter("", pre, helpers)
    p_names = [f"p{k}" for k in range(nc)]
    head = _inputs(em, j.invars[:nc], p_names)
    init, final, carry = _carry_init(em, j.invars[nc:nc + K])
    loads = []
    for k, v in enumerate(j.invars[nc + K:]):
        if v.aval.shape == ():
            loads.append(f"xs{k} = X{k}[_i, 0]")
            em.refs[id(v)] = _Ref("s", f"xs{k}")
        else:
            loads.append(f"xs{k} = X{k}[_i]")
            em.refs[id(v)] = _Ref("a", f"xs{k}")
    try:
        outs = em.emit(j)
    except _Unsupported:
        return None
    stores = []
    for k, (r, v) in enumerate(zip(outs[K:], j.outvars[K:])):
        stores += ([f"Y{k}[_i, 0] = {r.text}"] if r.kind == "s" else
                   [f"for _e in range({v.aval.size}):", f"    Y{k}[_i, _e] = {r.text}[_e]"])
    body_lines, stores, new = _in_place(em.lines, stores, pre, carry, outs[:K])
    update = _carry_update(carry, new, [v.aval for v in j.invars[nc:nc + K]], pre)
    step = loads + body_lines + stores + update
    k = length if unroll is True else (1 if unroll is False else int(unroll))
    k = max(1, min(k, length)) if length else 1
    outer, rem = divmod(length, k)

    def at(expr: str) -> str:
        return f"_i = {length - 1} - ({expr})" if reverse else f"_i = {expr}"
    loop = [f"for _it in range({outer}):"]
    for c in range(k):
        loop += _indent([at(f"_it * {k} + {c}" if k > 1 else "_it")] + step, 1)
    if rem:
        loop += [f"for _it in range({rem}):"] + _indent([at(f"{outer * k} + _it")] + step, 1)
    ins = body.in_avals
    params = ([(f"p{k}", a.dtype, (a.size,)) for k, a in enumerate(ins[:nc])]
              + [(f"car{k}", a.dtype, (a.size,)) for k, a in enumerate(ins[nc:nc + K])]
              + [(f"X{k}", a.dtype, (length, a.size)) for k, a in enumerate(ins[nc + K:])]
              + [(f"Y{k}", a.dtype, (length, a.size)) for k, a in enumerate(body.out_avals[K:])])
    return ScanLoop(_function(params, pre, head + init + loop + final, helpers), body, nc, K, length)


def while_loop(cond, body, cond_nconsts: int, body_nconsts: int) -> WhileLoop | None:
    """`while cond(carry): carry = body(carry)` with both closure-converted jaxprs compiled
    into one Numba function; None as for `scan_loop`."""
    if not numba_available():
        return None
    cj, bj = cond.jaxpr, body.jaxpr
    ncc, nbc = cond_nconsts, body_nconsts
    K = len(bj.invars) - nbc
    pre: list[str] = []
    helpers: dict = {}
    ce, be = _Emitter("c", pre, helpers), _Emitter("", pre, helpers)
    cp, bp = [f"q{k}" for k in range(ncc)], [f"p{k}" for k in range(nbc)]
    head = _inputs(ce, cj.invars[:ncc], cp) + _inputs(be, bj.invars[:nbc], bp)
    init, final, carry = _carry_init(be, bj.invars[nbc:])
    for v, r in zip(cj.invars[ncc:], carry):
        ce.refs[id(v)] = r
    try:
        (pred,) = ce.emit(cj)
        outs = be.emit(bj)
    except _Unsupported:
        return None
    body_lines, _, new = _in_place(be.lines, [], pre, carry, outs)
    update = _carry_update(carry, new, [v.aval for v in bj.invars[nbc:]], pre)
    loop = ["while True:"] + _indent(ce.lines + [f"if not {pred.text}:", "    break"] + body_lines + update, 1)
    avals = list(cond.in_avals[:ncc]) + list(body.in_avals)
    names = cp + bp + [f"car{k}" for k in range(K)]
    params = [(n, a.dtype, (a.size,)) for n, a in zip(names, avals)]
    return WhileLoop(_function(params, pre, head + init + loop + final, helpers), avals)
