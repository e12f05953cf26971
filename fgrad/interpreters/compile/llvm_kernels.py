"""Element-wise kernels written as LLVM IR directly (llvmlite.ir): the one code generator of
a jit region's kernel (loops.py's loops are Numba's).

Numba would cost a cold process about 0.4 s before its first kernel (importing it, setting
up its typing and target contexts) and 2-4 ms per statement of type inference and lowering.
This module writes each kernel as a C-ABI function (array objects in, their data pointer,
number of axes and shape read at NumPy's PyArrayObject slots; 0-d inputs as C scalars) by
translating each scalar expression's Python AST into IR; native.py compiles it to object
code with llvmlite (MCJIT's code generator), caches that on disk and links it. A kernel of
~440 statements builds in a few tens of milliseconds.

Its types and arithmetic are Numba's (the kernels were Numba's before, and loops.py's loops
still are, so a kernel computes what the same expressions compute in a loop): literals are
int64/float64/bool; `+ - * // % & | ^` on integers compute in int64,
or uint64 when both operands are unsigned, and on floats in float32 only when both operands
are float32 or small integers (`arith_type`); `<< >>` in the left operand's signedness at 64
bits; comparisons and `x if c else y` unify their
operands as NumPy promotes them (`unify`; comparisons of a float are
`arith_type`'s); `//` and `%` follow Python (floor) with Numba's
NumPy error model (integer division by zero gives 0, float division by zero inf or NaN);
`math.f` calls the C library's f (float32's fN variant), or the LLVM intrinsic Numba uses;
`x if c else y`, `and` and `or` compute both sides and select, which is what LLVM makes of
Numba's branches on these pure, trap-free values. scalar_lib's helpers and vmath's functions
are translated from their Python source (if/return/assignment, as selects; tuples of
results; vmath's `_f2i`/`_i2f` as bitcasts), except the helpers whose Numba spelling
differs (`_NUMBA`), which have their IR here. Anything else raises `Unsupported`, which
kernels.py reports as an error (the lowering tests translate every rule in every dtype).

A kernel over `vmath.LARGE` elements or more computes exp, log, tanh, sin, cos and the
logistic function with vmath's versions (kernels.py's `vectorised` rewrites the expressions),
`vmath_lanes()` elements at a time, whole vector blocks loaded and stored as vectors. Where a
sine's or cosine's argument was beyond vmath.TRIG_MAX (infinities included), the kernel then
computes every output again with the C library's functions. The operations are IEEE's, in
the source's order (no fast-math, no fused multiply-adds), so the bits are those of vmath's
functions run as plain Python, whatever the vector width.

`BACKEND` ($FGRAD_KERNELS): "auto" (the default: a kernel whose object code is cached is
linked by name, without building its IR) or "llvm" (every kernel's IR is built: how tests
prove the translator's coverage whatever the cache holds).
"""
from __future__ import annotations

import ast
import hashlib
import inspect
import os
import textwrap
from pathlib import Path
from typing import Callable

import numpy as np

from ...core.errors import FgradNotImplementedError, FgradValueError
from . import scalar_lib, vmath

BACKEND = os.environ.get("FGRAD_KERNELS", "auto")
# (LLVM's IR pass pipeline level, its code generator's level). Measured on W1's jit(grad) (one
# 440-statement kernel over 16 float64, cold process): without the IR pipeline the kernel
# compiles in 25-50 ms, against 200-350 ms with any level of it (whose loop vectorizer doubles
# the code), and runs as fast (12.0 us a call, Numba's O3 kernel 12.4 us), because the IR is
# written already in SSA form and vectorised (LANES); code generation O1 rather than O0 buys
# 3-5% for 20 ms (a real register allocator).
OPT = (0, 1)
# Elements a kernel computes at once, as vectors: the dependency chains of LANES elements (the
# library calls, mostly) overlap in the CPU; one element at a time ran W1 2.4x slower.
LANES = 4
# For the loops of kernels that compute with vmath's functions (long chains of dependent
# arithmetic: polynomials, a division): how many vectors of the host's width they compute
# per step, so that the CPU overlaps their chains (one vector at a time leaves it waiting on
# each result); the code generator splits these wider IR vectors into registers.
VMATH_INTERLEAVE = 4

_B, _I64, _U64 = np.dtype(bool), np.dtype(np.int64), np.dtype(np.uint64)
_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
_DTYPES = frozenset(np.dtype(d) for d in (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64"))
# dtypes whose values a float32 holds exactly: float32 arithmetic with them stays float32
_SMALL = frozenset(np.dtype(d) for d in ("bool", "int8", "int16", "uint8", "float32"))

# math functions: the LLVM intrinsic Numba calls, or else the C library's (float32: name + "f")
_INTRINSIC = {"sin": "llvm.sin", "cos": "llvm.cos", "exp": "llvm.exp", "log": "llvm.log",
              "sqrt": "llvm.sqrt", "fabs": "llvm.fabs"}
_LIBM = frozenset(("tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
                   "expm1", "log1p", "erf", "erfc", "log10", "log2"))
_NP_CASTS = {f"{d.name}": d for d in _DTYPES if d != _B} | {"bool_": _B}


# The result type of vmath's functions (float64 for each today: their constants are float64,
# float32 arguments included), as an outlined function is first declared; checked.
_OUTLINED_RESULT = _F64


class _Results(tuple):
    """A helper's several results: (IR value, dtype) pairs."""


class Unsupported(Exception):
    """An expression, statement or type the translator does not handle (the kernel goes to
    Numba)."""


def strict() -> bool:
    """Whether every kernel's IR is built even where its object code is cached (BACKEND
    "llvm"; "auto", the default, links cached code by name): how tests prove that the
    translator covers every kernel they run, whatever the cache holds."""
    if BACKEND not in ("auto", "llvm"):
        raise FgradValueError(
            f"FGRAD_KERNELS / llvm_kernels.BACKEND is {BACKEND!r}; it takes 'auto' (the default) or "
            f"'llvm' (build every kernel's IR, even where its object code is cached). Element-wise "
            f"kernels are always written as LLVM IR: there is no Numba backend for them")
    return BACKEND == "llvm"


def unsupported_error(name: str, reason: str) -> FgradNotImplementedError:
    """The error of a kernel the translator rejected: a lowering rule wrote Python it does not
    translate (a bug: the lowering tests translate every rule in every dtype)."""
    return FgradNotImplementedError(
        f"kernel {name}: the LLVM kernel translator (fgrad/interpreters/compile/llvm_kernels.py) "
        f"cannot translate it ({reason}); a lowering rule wrote an expression it does not know. "
        f"Please report this with the function you jit; fgrad.disable_jit() runs it without kernels")


def arith_type(a: np.dtype, b: np.dtype) -> np.dtype:
    """The type Numba computes `a op b` in, for + - * // %: floats as described in the
    module docstring, integers in int64 (uint64 when both are unsigned)."""
    if a.kind == "f" or b.kind == "f":
        return _F32 if a in _SMALL and b in _SMALL else _F64
    return _U64 if a.kind == "u" and b.kind == "u" else _I64


def unify(a: np.dtype, b: np.dtype) -> np.dtype:
    """The common type of a comparison's operands, or of `x if c else y`'s values (Numba's
    unification, which is NumPy's promotion for these dtypes)."""
    return np.promote_types(a, b)


def compare_type(a: np.dtype, b: np.dtype) -> np.dtype:
    """The type Numba compares `a` and `b` in: `arith_type`'s float when either is a float,
    else `unify`'s integer type."""
    return arith_type(a, b) if a.kind == "f" or b.kind == "f" else unify(a, b)


def neg_type(a: np.dtype) -> np.dtype:
    """The type of -a, +a and ~a (integers widen to 64 bits, keeping their signedness)."""
    if a.kind == "f":
        return a
    return _U64 if a.kind == "u" else _I64


# --- the translator ----------------------------------------------------------------------------


def _ir():
    # llvmlite is an optional dependency (it comes with Numba): imported when a kernel is built
    from llvmlite import ir
    return ir


class _Translator:
    """Builds IR for Python scalar expressions with `builder`, values typed as (IR value,
    NumPy dtype)."""

    def __init__(self, ir, module, builder, lanes: int = 1) -> None:
        self.ir = ir
        self.module = module
        self.b = builder
        self.lanes = lanes  # values are vectors of this many elements (1: scalars)
        self.outline = False  # whether vmath's functions are called (True) or inlined
        self._result_types: dict = {}  # outlined function key -> (IR function, result dtype)

    # types and constants

    def lltype(self, dt: np.dtype):
        """The IR type of a value of `dt` (a vector of `lanes` of them)."""
        t = self.scalar_type(dt)
        return t if self.lanes == 1 else self.ir.VectorType(t, self.lanes)

    def scalar_type(self, dt: np.dtype):
        ir = self.ir
        if dt == _B:
            return ir.IntType(1)
        if dt.kind in "iu":
            return ir.IntType(8 * dt.itemsize)
        if dt == _F32:
            return ir.FloatType()
        if dt == _F64:
            return ir.DoubleType()
        raise Unsupported(f"dtype {dt}")

    def const(self, value, dt: np.dtype):
        return (self.ir.Constant(self.lltype(dt), value), dt)

    # conversions (Numba's context.cast)

    def cast(self, v, src: np.dtype, dst: np.dtype):
        b = self.b
        if src == dst:
            return v
        if dst == _B:
            return self.truth(v, src)
        to = self.lltype(dst)
        if src == _B:
            return b.zext(v, to) if dst.kind in "iu" else b.uitofp(v, to)
        if src.kind in "iu" and dst.kind in "iu":
            if dst.itemsize < src.itemsize:
                return b.trunc(v, to)
            if dst.itemsize > src.itemsize:
                return b.sext(v, to) if src.kind == "i" else b.zext(v, to)
            return v
        if src.kind in "iu":
            return b.sitofp(v, to) if src.kind == "i" else b.uitofp(v, to)
        if dst.kind in "iu":
            return b.fptosi(v, to) if dst.kind == "i" else b.fptoui(v, to)
        return b.fpext(v, to) if dst.itemsize > src.itemsize else b.fptrunc(v, to)

    def truth(self, v, dt: np.dtype):
        if dt == _B:
            return v
        zero = self.ir.Constant(v.type, 0)
        if dt.kind == "f":
            return self.b.fcmp_unordered("!=", v, zero)  # NaN is true
        return self.b.icmp_unsigned("!=", v, zero)

    # operations

    def intrinsic(self, name: str, args: list):
        t = args[0].type
        full = f"{name}.{f'v{self.lanes}' if self.lanes > 1 else ''}{(t.element if self.lanes > 1 else t).intrinsic_name}"
        fn = self.module.globals.get(full)
        if fn is None:
            fn = self.ir.Function(self.module, self.ir.FunctionType(t, [t] * len(args)), name=full)
        return self.b.call(fn, args)

    def libm(self, name: str, args: list, dt: np.dtype):
        """A call of the C library's `name` (float32: its f variant), declared pure."""
        ir, b = self.ir, self.b
        sym = name + ("f" if dt == _F32 else "")
        fn = self.module.globals.get(sym)
        if fn is None:
            t = self.scalar_type(dt)
            fn = ir.Function(self.module, ir.FunctionType(t, [t] * len(args)), name=sym)
            fn.attributes.add("nounwind")
            fn.attributes.add("readnone")
        if self.lanes == 1:
            return b.call(fn, args)
        out = ir.Constant(self.lltype(dt), ir.Undefined)
        for k in range(self.lanes):  # the C library's scalar function, lane by lane
            lane = ir.Constant(ir.IntType(32), k)
            out = b.insert_element(out, b.call(fn, [b.extract_element(a, lane) for a in args]), lane)
        return out

    def select(self, c, x, y):
        return self.b.select(c, x, y)

    def compare(self, op: str, x, y):
        (xv, xt), (yv, yt) = x, y
        d = compare_type(xt, yt)
        xv, yv = self.cast(xv, xt, d), self.cast(yv, yt, d)
        if d.kind == "f":
            return (self.b.fcmp_unordered(op, xv, yv) if op == "!=" else self.b.fcmp_ordered(op, xv, yv)), _B
        if d.kind == "i":
            return self.b.icmp_signed(op, xv, yv), _B
        return self.b.icmp_unsigned(op, xv, yv), _B

    def binop(self, op: str, x, y):
        (xv, xt), (yv, yt) = x, y
        if op in "&|^":
            if xt.kind == "f" or yt.kind == "f":
                raise Unsupported(f"{op} on {xt} and {yt}")
            r = _B if xt == yt == _B else arith_type(xt, yt)
        elif op == "/":
            r = arith_type(xt, yt) if (xt.kind == "f" or yt.kind == "f") else _F64
        else:
            r = arith_type(xt, yt)
        xv, yv = self.cast(xv, xt, r), self.cast(yv, yt, r)
        b = self.b
        if op == "&":
            return b.and_(xv, yv), r
        if op == "|":
            return b.or_(xv, yv), r
        if op == "^":
            return b.xor(xv, yv), r
        if r.kind == "f":
            if op in "+-*/":
                return {"+": b.fadd, "-": b.fsub, "*": b.fmul, "/": b.fdiv}[op](xv, yv), r
            q, m = self.float_divmod(xv, yv, r)
            return (q if op == "//" else m), r
        if op in "+-*":
            return {"+": b.add, "-": b.sub, "*": b.mul}[op](xv, yv), r
        q, m = self.int_divmod(xv, yv, r)
        return (q if op == "//" else m), r

    def shift(self, op: str, x, y):
        """x << y and x >> y of integers: Numba computes them in the left operand's signedness
        at 64 bits (an arithmetic right shift for signed values), the count cast to that type."""
        (xv, xt), (yv, yt) = x, y
        if xt.kind not in "iu" or yt.kind not in "iu":
            raise Unsupported(f"{op} on {xt} and {yt}")
        r = _U64 if xt.kind == "u" else _I64
        xv, yv = self.cast(xv, xt, r), self.cast(yv, yt, r)
        if op == "<<":
            return self.b.shl(xv, yv), r
        return (self.b.ashr(xv, yv) if r == _I64 else self.b.lshr(xv, yv)), r

    def int_divmod(self, x, y, r: np.dtype):
        """Numba's integer divmod (floor semantics): 0 and 0 for y == 0, and for MIN // -1."""
        ir, b = self.ir, self.b
        t = x.type
        zero, one = ir.Constant(t, 0), ir.Constant(t, 1)
        bad = b.icmp_unsigned("==", y, zero)
        if r.kind == "u":
            ys = b.select(bad, one, y)
            return b.select(bad, zero, b.udiv(x, ys)), b.select(bad, zero, b.urem(x, ys))
        minval = ir.Constant(t, -(1 << (8 * r.itemsize - 1)))
        ovf = b.and_(b.icmp_signed("==", x, minval), b.icmp_signed("==", y, ir.Constant(t, -1)))
        bad = b.or_(bad, ovf)
        ys = b.select(bad, one, y)
        q, m = b.sdiv(x, ys), b.srem(x, ys)
        fix = b.and_(b.icmp_signed("!=", m, zero), b.icmp_signed("<", b.xor(ys, m), zero))
        q = b.select(fix, b.sub(q, one), q)
        m = b.select(fix, b.add(m, ys), m)
        return b.select(bad, zero, q), b.select(bad, zero, m)

    def float_divmod(self, vx, wx, r: np.dtype):
        """Numba's float divmod (CPython's float_divmod), and x / y and fmod(x, y) for y == 0."""
        ir, b = self.ir, self.b
        t = vx.type
        zero, nzero, one, half = (ir.Constant(t, v) for v in (0.0, -0.0, 1.0, 0.5))
        mod = b.frem(vx, wx)
        div = b.fdiv(b.fsub(vx, mod), wx)
        mod_true = b.fcmp_unordered("!=", mod, zero)
        wx_ltz = b.fcmp_ordered("<", wx, zero)
        adj = b.and_(mod_true, b.icmp_unsigned("!=", wx_ltz, b.fcmp_ordered("<", mod, zero)))
        div = b.select(adj, b.fsub(div, one), div)
        mod = b.select(mod_true, b.select(adj, b.fadd(mod, wx), mod), b.select(wx_ltz, nzero, zero))
        fl = self.intrinsic("llvm.floor", [div])
        fl = b.select(b.fcmp_ordered(">", b.fsub(div, fl), half), b.fadd(fl, one), fl)
        sq = b.fmul(div, div)
        floordiv = b.select(b.fcmp_ordered("!=", div, zero), fl, b.fdiv(b.fmul(sq, vx), wx))
        y_zero = b.fcmp_ordered("==", wx, zero)
        return b.select(y_zero, b.fdiv(vx, wx), floordiv), b.select(y_zero, b.frem(vx, wx), mod)

    # expressions

    def expr(self, node, env: dict):
        """(IR value, dtype) of the expression `node` over `env` (name -> value)."""
        if isinstance(node, ast.Constant):
            v = node.value
            if isinstance(v, bool):
                return self.const(int(v), _B)
            if isinstance(v, int):
                if -(1 << 63) <= v < (1 << 63):
                    return self.const(v, _I64)
                if 0 <= v < (1 << 64):
                    return self.const(v, _U64)
            if isinstance(v, float):
                return self.const(v, _F64)
            raise Unsupported(f"constant {v!r}")
        if isinstance(node, ast.Name):
            if node.id in env:
                return env[node.id]
            raise Unsupported(f"name {node.id}")
        if isinstance(node, ast.Attribute):
            if (isinstance(node.value, ast.Name) and node.value.id in ("math", "np")
                    and node.attr in ("inf", "nan", "pi", "e")):
                return self.const(float(getattr(np, node.attr)), _F64)
            raise Unsupported(ast.unparse(node))
        if isinstance(node, ast.UnaryOp):
            v, t = self.expr(node.operand, env)
            if isinstance(node.op, ast.Not):
                return self.b.not_(self.truth(v, t)), _B
            if isinstance(node.op, ast.Invert) and t == _B:
                return self.b.not_(v), _B
            if isinstance(node.op, ast.Invert) and t.kind == "f":
                raise Unsupported(f"~ on {t}")
            r = neg_type(t)
            v = self.cast(v, t, r)
            if isinstance(node.op, ast.UAdd):
                return v, r
            if isinstance(node.op, ast.USub):
                return (self.b.fneg(v) if r.kind == "f" else self.b.neg(v)), r
            return self.b.not_(v), r  # ~
        if isinstance(node, ast.BinOp):
            op = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
                  ast.Mod: "%", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^",
                  ast.LShift: "<<", ast.RShift: ">>"}.get(type(node.op))
            if op is None:
                raise Unsupported(ast.unparse(node))
            if op in ("<<", ">>"):
                return self.shift(op, self.expr(node.left, env), self.expr(node.right, env))
            return self.binop(op, self.expr(node.left, env), self.expr(node.right, env))
        if isinstance(node, ast.Tuple):  # (a helper's several results)
            return _Results(self.expr(e, env) for e in node.elts)
        if isinstance(node, ast.Compare):
            if len(node.ops) != 1:
                raise Unsupported("chained comparison")
            op = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}.get(type(node.ops[0]))
            if op is None:
                raise Unsupported(ast.unparse(node))
            return self.compare(op, self.expr(node.left, env), self.expr(node.comparators[0], env))
        if isinstance(node, ast.BoolOp):
            vals = [self.expr(v, env) for v in node.values]
            if any(t != _B for _, t in vals):
                raise Unsupported("and/or of non-bool values")
            out = vals[0][0]
            for v, _ in vals[1:]:
                out = self.b.and_(out, v) if isinstance(node.op, ast.And) else self.b.or_(out, v)
            return out, _B
        if isinstance(node, ast.IfExp):
            c = self.truth(*self.expr(node.test, env))
            return self.choose(c, self.expr(node.body, env), self.expr(node.orelse, env))
        if isinstance(node, ast.Call) and not node.keywords:
            return self.call(node, [self.expr(a, env) for a in node.args])
        if (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)
                and node.value.id in vmath.TABLES and node.value.id not in env):
            return self.table(node.value.id, self.expr(node.slice, env))
        raise Unsupported(ast.unparse(node))

    def table(self, name: str, index):
        """vmath's table `name` (a tuple of floats, an internal constant array of the module)
        read at the integer `index`: each lane its own element, a gather. vmath computes the
        index in range (a masked integer)."""
        ir, b = self.ir, self.b
        v, t = index
        if t.kind not in "iu":
            raise Unsupported(f"{name}[...] indexed by {t}")
        v = self.cast(v, t, _I64)
        dbl, i32, i64 = ir.DoubleType(), ir.IntType(32), ir.IntType(64)
        g = self.module.globals.get(f"fg_table.{name}")
        if g is None:
            values = vmath.TABLES[name]
            ty = ir.ArrayType(dbl, len(values))
            g = ir.GlobalVariable(self.module, ty, name=f"fg_table.{name}")
            g.linkage = "internal"
            g.global_constant = True
            g.initializer = ir.Constant(ty, [float(x) for x in values])
            g.align = 64
        base = b.gep(g, [ir.Constant(i32, 0), ir.Constant(i32, 0)])
        if self.lanes == 1:
            return b.load(b.gep(base, [v])), _F64
        n = self.lanes
        vt = ir.VectorType(i64, n)
        start = b.insert_element(ir.Constant(vt, ir.Undefined), b.ptrtoint(base, i64), ir.Constant(i32, 0))
        start = b.shuffle_vector(start, ir.Constant(vt, ir.Undefined), ir.Constant(ir.VectorType(i32, n), None))
        ptrs = b.inttoptr(b.add(start, b.shl(v, ir.Constant(vt, 3))), ir.VectorType(dbl.as_pointer(), n))
        sym = f"llvm.masked.gather.v{n}f64.v{n}p0"
        fn = self.module.globals.get(sym)
        if fn is None:
            fn = ir.Function(self.module, ir.FunctionType(ir.VectorType(dbl, n), [
                ptrs.type, i32, ir.VectorType(ir.IntType(1), n), ir.VectorType(dbl, n)]), name=sym)
        every = ir.Constant(ir.VectorType(ir.IntType(1), n), [1] * n)
        return b.call(fn, [ptrs, ir.Constant(i32, 8), every, ir.Constant(ir.VectorType(dbl, n), None)]), _F64

    def choose(self, c, x, y):
        """`x if c else y` (c an i1), in their unified type."""
        (xv, xt), (yv, yt) = x, y
        r = unify(xt, yt)
        return self.b.select(c, self.cast(xv, xt, r), self.cast(yv, yt, r)), r

    def call(self, node, args: list):
        f = node.func
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
            if f.value.id == "math":
                return self.math(f.attr, args)
            if f.value.id == "np" and f.attr in _NP_CASTS and len(args) == 1:
                dt = _NP_CASTS[f.attr]
                return self.cast(args[0][0], args[0][1], dt), dt
        if isinstance(f, ast.Name) and len(args) == 1:
            (v, t), = args
            if f.id == "abs":
                if t.kind == "f":
                    return self.intrinsic("llvm.fabs", [v]), t
                if t == _B:
                    return self.b.zext(v, self.lltype(np.dtype(np.int8))), np.dtype(np.int8)
                if t.kind == "u":
                    return v, t
                neg = self.b.icmp_signed("<", v, self.ir.Constant(v.type, 0))
                return self.b.select(neg, self.b.neg(v), v), t
            if f.id == "float" and t != _B:
                return (v, t) if t.kind == "f" else (self.cast(v, t, _F64), _F64)
            if f.id == "int":
                if t.kind in "iu":
                    return v, t
                return self.cast(v, t, _I64), _I64
        if isinstance(f, ast.Name) and f.id in ("_f2i", "_i2f") and len(args) == 1:
            # vmath's bit casts: a float64's bits as an int64 and back
            (v, t), = args
            src, dst = (_F64, _I64) if f.id == "_f2i" else (_I64, _F64)
            if t != src:
                raise Unsupported(f"{f.id} of {t}")
            return self.b.bitcast(v, self.lltype(dst)), dst
        if isinstance(f, ast.Name) and (f.id in scalar_lib.HELPERS or f.id in _VMATH_NAMES):
            return self.helper(f.id, args)
        raise Unsupported(ast.unparse(node))

    def math(self, name: str, args: list):
        if len(args) == 1:
            (v, t), = args
            if name in ("isinf", "isfinite"):
                if t.kind != "f":
                    return self.const(int(name == "isfinite"), _B)
                a = self.intrinsic("llvm.fabs", [v])
                inf = self.ir.Constant(v.type, float("inf"))
                if name == "isinf":
                    return self.b.fcmp_ordered("==", a, inf), _B
                return self.b.fcmp_ordered("!=", a, inf), _B  # ordered: false for NaN
            if name not in _INTRINSIC and name not in _LIBM:
                raise Unsupported(f"math.{name}")
            if t.kind != "f":  # Numba converts an integer argument to float64
                v, t = self.cast(v, t, _F64), _F64
            if name in _INTRINSIC:
                return self.intrinsic(_INTRINSIC[name], [v]), t
            return self.libm(name, [v], t), t
        if len(args) == 2 and name in ("pow", "atan2"):
            (xv, xt), (yv, yt) = args
            if xt.kind != "f" or yt.kind != "f":
                raise Unsupported(f"math.{name} of {xt} and {yt}")  # (integer exponents: powi)
            r = _F32 if xt == yt == _F32 else _F64
            xv, yv = self.cast(xv, xt, r), self.cast(yv, yt, r)
            if name == "pow":
                return self.intrinsic("llvm.pow", [xv, yv]), r
            return self.libm("atan2", [xv, yv], r), r
        raise Unsupported(f"math.{name} with {len(args)} arguments")

    # scalar_lib's helpers

    def helper(self, name: str, args: list):
        native = _NATIVE_HELPERS.get(name)
        if native is not None:
            return native(self, args)
        if self.outline and name in _VMATH_PUBLIC:
            return self.outlined(name, args)
        fn = _helper_ast(name)
        params = [a.arg for a in fn.args.args]
        if len(params) != len(args) or fn.args.vararg or fn.args.kwonlyargs:
            raise Unsupported(f"{name} called with {len(args)} arguments")
        consts = scalar_lib.CONSTANTS if name in scalar_lib.HELPERS else vmath.CONSTANTS
        env = {k: self.const(v, _F64) for k, v in consts.items() if isinstance(v, float)}  # (not tables)
        env.update(zip(params, args))
        rets: list = []
        body = [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
        if not body or not isinstance(body[-1], ast.Return):
            raise Unsupported(f"{name} does not end with a return")
        self.block(body, env, None, rets)
        if isinstance(rets[-1][1], _Results):  # several results: from one unconditional return
            if len(rets) != 1:
                raise Unsupported(f"{name} returns a tuple from more than one place")
            return rets[0][1]
        r = rets[0][1][1]
        for _, (_, t) in rets[1:]:
            r = unify(r, t)
        (_, (out, t)) = rets[-1]
        out = self.cast(out, t, r)
        for live, (v, t) in reversed(rets[:-1]):
            out = self.b.select(live, self.cast(v, t, r), out)
        return out, r

    def outlined(self, name: str, args: list):
        """A call of vmath's function `name` compiled once per module as a function of its own
        (for these argument types), rather than inlined at each call: the code generator's
        time grows with the code, and a fused chain calls each function many times. The
        function takes one register's vector; the kernel's wider vectors are split into
        those, one call each."""
        ir, b = self.ir, self.b
        sig = tuple(t for _, t in args)
        width = min(vector_width(), self.lanes)
        key = f"{name}.v{width}." + ".".join(t.name for t in sig)
        if key not in self._result_types:
            # Its result type is the translation's: the function is declared returning
            # _OUTLINED_RESULT and translated once; one of another type is translated again.
            fn, t = self._define_outlined(name, key, sig, width, _OUTLINED_RESULT)
            if fn is None:
                fn, t = self._define_outlined(name, self.module.get_unique_name(key), sig, width, t)
            self._result_types[key] = (fn, t)
        fn, rt = self._result_types[key]
        i32 = ir.IntType(32)
        parts = []
        for k in range(0, self.lanes, width):
            mask = ir.Constant(ir.VectorType(i32, width), [ir.Constant(i32, k + j) for j in range(width)])
            chunk = [v if width == self.lanes else b.shuffle_vector(v, v, mask) for v, _ in args]
            parts.append(b.call(fn, chunk, cconv="fastcc"))
        while len(parts) > 1:  # joined back, pairwise
            n = len(parts[0].type)
            mask = ir.Constant(ir.VectorType(i32, 2 * n), [ir.Constant(i32, j) for j in range(2 * n)])
            parts = [b.shuffle_vector(parts[k], parts[k + 1], mask) for k in range(0, len(parts), 2)]
        return parts[0], rt

    def _define_outlined(self, name: str, symbol: str, sig: tuple, width: int, rt: np.dtype):
        """vmath's function `name` for arguments of dtypes `sig` as an internal function
        `symbol` of the module, on vectors of `width`, declared returning `rt`: (the
        function, rt), or (None, the translation's result type) where that is not `rt` (the
        function is then removed from the module)."""
        ir = self.ir
        body_b = ir.IRBuilder()
        inner = _Translator(ir, self.module, body_b, width)
        fn = ir.Function(self.module, ir.FunctionType(inner.lltype(rt), [inner.lltype(t) for t in sig]), name=symbol)
        fn.linkage = "internal"
        fn.calling_convention = "fastcc"
        fn.attributes.add("nounwind")
        fn.attributes.add("noinline")
        body_b.position_at_end(fn.append_basic_block("entry"))
        v, t = inner.helper(name, list(zip(fn.args, sig)))
        if t != rt:
            del self.module.globals[symbol]
            return None, t
        body_b.ret(v)
        return fn, t

    def block(self, stmts: list, env: dict, live, rets: list):
        """Run `stmts` where `live` (an i1, None for always) says this path is taken and no
        return came before; returns the path's `live` after them (a constant false after a
        return)."""
        ir, b = self.ir, self.b
        false = ir.Constant(self.lltype(_B), 0)
        for s in stmts:
            if isinstance(s, ast.Return):
                if s.value is None:
                    raise Unsupported("return without a value")
                rets.append((live if live is not None else ir.Constant(self.lltype(_B), 1), self.expr(s.value, env)))
                return false
            if isinstance(s, (ast.Assign, ast.AugAssign)):
                target = s.targets[0] if isinstance(s, ast.Assign) else s.target
                if (isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(target, ast.Tuple)
                        and live is None and all(isinstance(e, ast.Name) for e in target.elts)):
                    values = self.expr(s.value, env)  # a, b = helper(...): unpacked
                    if not isinstance(values, _Results) or len(values) != len(target.elts):
                        raise Unsupported(ast.unparse(s))
                    env.update((e.id, v) for e, v in zip(target.elts, values))
                    continue
                if not isinstance(target, ast.Name) or (isinstance(s, ast.Assign) and len(s.targets) != 1):
                    raise Unsupported(ast.unparse(s))
                if isinstance(s, ast.Assign):
                    value = self.expr(s.value, env)
                else:
                    value = self.expr(ast.BinOp(ast.Name(target.id, ast.Load()), s.op, s.value), env)
                old = env.get(target.id)
                if old is not None and live is not None:
                    if old[1] != value[1]:
                        raise Unsupported(f"{target.id} changes type")
                    value = (b.select(live, value[0], old[0]), value[1])
                env[target.id] = value
                continue
            if isinstance(s, ast.If):
                c = self.truth(*self.expr(s.test, env))
                yes = c if live is None else b.and_(live, c)
                no = b.not_(c) if live is None else b.and_(live, b.not_(c))
                yes = self.block(s.body, env, yes, rets)
                no = self.block(s.orelse, env, no, rets) if s.orelse else no
                live = b.or_(yes, no)
                continue
            raise Unsupported(ast.unparse(s))
        return live


def _float_unary(intr: str | None, libm: str | None = None):
    def build(tr: _Translator, args):
        if len(args) != 1 or args[0][1].kind != "f":
            raise Unsupported("a helper of one float")
        (v, t), = args
        return (tr.intrinsic(intr, [v]) if intr else tr.libm(libm, [v], t)), t
    return build


def _fmod(tr: _Translator, args):
    if len(args) != 2 or any(t.kind != "f" for _, t in args):
        raise Unsupported("fg_fmod of non-floats")
    (xv, xt), (yv, yt) = args
    r = unify(xt, yt)
    return tr.b.frem(tr.cast(xv, xt, r), tr.cast(yv, yt, r)), r


# The helpers whose Numba spelling (scalar_lib._NUMBA: np.floor, np.ceil, np.rint, np.fmod,
# np.cbrt) is not their Python source: what Numba compiles those NumPy functions to.
_NATIVE_UNARY = {"fg_floor": ("llvm.floor", None), "fg_ceil": ("llvm.ceil", None),
                 "fg_rint": ("llvm.rint", None), "fg_cbrt": (None, "cbrt")}
_NATIVE_HELPERS = {**{name: _float_unary(*how) for name, how in _NATIVE_UNARY.items()}, "fg_fmod": _fmod}
# The intrinsics LLVM lowers to vector instructions on x86-64 and AArch64 (llvm.sin, llvm.exp,
# ... call the C library one element at a time, and so does frem: fmod)
_VECTOR_INTRINSICS = frozenset(("llvm.sqrt", "llvm.fabs", "llvm.floor", "llvm.ceil", "llvm.rint"))
_VECTOR_CALLS: frozenset | None = None


def vector_calls() -> frozenset:
    """The calls a lowered expression may hold (math.<name>, scalar_lib's fg_<name>) whose IR
    calls no C library function: vector intrinsics, inline tests (isinf, isfinite), and
    scalar_lib helpers whose Python source calls nothing. A kernel of these alone is arithmetic,
    so it may take the wide vector loop with the same bits (kernels.kernel_spec)."""
    global _VECTOR_CALLS
    if _VECTOR_CALLS is None:
        math_calls = {f"math.{n}" for n, intr in _INTRINSIC.items() if intr in _VECTOR_INTRINSICS}
        native = {n for n, (intr, _) in _NATIVE_UNARY.items() if intr in _VECTOR_INTRINSICS}
        python = {n for n in scalar_lib.HELPERS if n not in _NATIVE_HELPERS
                  and not any(isinstance(c, ast.Call) for c in ast.walk(_helper_ast(n)))}
        _VECTOR_CALLS = frozenset(math_calls | {"math.isinf", "math.isfinite"} | native | python)
    return _VECTOR_CALLS
_HELPER_AST: dict = {}
_MODULE_LINES: dict = {}  # file -> its lines, read once


# vmath's functions and their private helpers, translated from their Python source like
# scalar_lib's (their _f2i/_i2f as bitcasts)
_VMATH_PUBLIC = frozenset((*vmath.VECTOR.values(), *vmath.VECTOR32.values()))
_VMATH_NAMES = frozenset(vmath.needed(_VMATH_PUBLIC))


def _helper_ast(name: str):
    """The FunctionDef of scalar_lib's helper or vmath's function `name`: parsed from its
    own lines (inspect.getsource would tokenize the whole file for each function, and
    parsing the whole file costs a cold first call more than the functions it uses)."""
    fn = _HELPER_AST.get(name)
    if fn is None:
        source = scalar_lib.HELPERS[name] if name in scalar_lib.HELPERS else getattr(vmath, name)
        fn = _HELPER_AST[name] = _function_def(source)
    return fn


def _function_def(source: Callable) -> ast.FunctionDef:
    """The FunctionDef of the top-level function `source` of a module: its lines, from its
    first to the next that starts a top-level statement, parsed alone; else (a line at
    column 0 inside it, such as a string's, cuts it short) its module's file parsed whole."""
    code = source.__code__
    lines = _MODULE_LINES.get(code.co_filename)
    if lines is None:
        lines = _MODULE_LINES[code.co_filename] = Path(code.co_filename).read_text(encoding="utf-8").splitlines(True)
    start = end = code.co_firstlineno - 1
    while end < len(lines) and not lines[end].startswith(("def ", "async def ")):
        end += 1  # (its decorators)
    end += 1
    while end < len(lines) and (not lines[end].strip() or lines[end][0] in " \t#"):
        end += 1
    try:
        node = ast.parse("".join(lines[start:end])).body[0]
    except (SyntaxError, IndexError):
        node = None
    if isinstance(node, ast.FunctionDef) and node.name == source.__name__:
        return node
    tree = ast.parse("".join(lines))
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == source.__name__:
            return node
    # (a file changed since its import, or a function defined elsewhere under this name)
    return ast.parse(textwrap.dedent(inspect.getsource(source))).body[0]


# --- the kernel --------------------------------------------------------------------------------

_SOURCE_HASH: list = []


def _version() -> str:
    """A hash of what a kernel's IR depends on besides its expressions: this translator's
    source and scalar_lib's (a changed translator never loads an old kernel's object code)."""
    if not _SOURCE_HASH:
        h = hashlib.sha256()
        for path in (Path(__file__), Path(scalar_lib.__file__), Path(vmath.__file__)):
            h.update(path.read_bytes())
        _SOURCE_HASH.append(h.hexdigest()[:16])
    return _SOURCE_HASH[0]


class LLVMKernel:
    """A kernel's IR (`text`) and entry symbol (`name`, also its cache key). The IR may be
    given as `build() -> text`, called on first use of `text` (it may raise Unsupported): a
    kernel whose object code is cached is linked by name and never needs its IR."""

    __slots__ = ("_build", "_text", "name")

    def __init__(self, name: str, text: str | None = None, build: Callable[[], str] | None = None) -> None:
        self.name = name
        self._text = text
        self._build = build

    @property
    def text(self) -> str:
        """The kernel's LLVM IR (built now if it was given as a function)."""
        if self._text is None:
            self._text = self._build()
        return self._text


_WIDTH: list = []  # [float64 lanes of the host's widest vector registers] once read


def vector_width() -> int:
    """How many float64 values the host CPU's widest vector registers hold (8 with AVX-512,
    4 with AVX, else 2): read from the CPU's features, never from a timing."""
    if not _WIDTH:
        import llvmlite.binding as llvm  # optional dependency (comes with Numba)
        features = llvm.get_host_cpu_features()
        _WIDTH.append(8 if features.get("avx512f") else 4 if features.get("avx") else 2)
    return _WIDTH[0]


def vmath_lanes() -> int:
    """Elements the vectorised loop of a kernel with vmath's functions computes at once:
    VMATH_INTERLEAVE vectors of the host's width (the code generator splits the wider IR
    vectors into registers)."""
    return vector_width() * VMATH_INTERLEAVE


def kernel_name(inputs, pre, exprs, outputs, vexprs=None, checked=(), outline: bool = False) -> str:
    """The name (and cache key) of the kernel these arguments of `build_kernel` describe."""
    key = repr((_version(), OPT, LANES, [(k, n, str(d)) for k, n, d in inputs], pre, exprs,
                [(n, str(d)) for n, d in outputs]))
    if vexprs is not None:
        key += repr((outline, vmath_lanes(), vexprs, list(checked)))
    return "k_" + hashlib.sha256(key.encode()).hexdigest()[:20]


def build_kernel(inputs: list, pre: list, exprs: list, outputs: list, vexprs: list | None = None,
                 checked=(), outline: bool = False) -> LLVMKernel:
    """The IR of a kernel: `inputs` [(kind "array" | "scalar", local name, dtype)] in
    parameter order (arrays as array objects, scalars as C values), then one array-object
    parameter per output; `pre` [(local, expression)] computed once; `exprs` the loop body's
    expressions (local t<k> is exprs[k]); `outputs` [(local, dtype)] stored per element.

    With `vexprs` (exprs with vmath's functions in place of the C library's: kernels.py's
    `vectorised`) the loop computes those, `vmath_lanes()` elements at a time; where an
    argument named in `checked` (those of vmath's sines and cosines) was beyond
    vmath.TRIG_MAX in absolute value (or NaN-free infinite), the loop over `exprs` then
    computes every output again with the C library. `outline`: each of vmath's functions is
    compiled once and called (see _Translator.outlined), instead of inlined at each use.
    Raises Unsupported for what it cannot translate."""
    ir = _ir()
    for _, _, d in inputs:
        if d not in _DTYPES:
            raise Unsupported(f"dtype {d}")
    for _, d in outputs:
        if d not in _DTYPES:
            raise Unsupported(f"dtype {d}")
    name = kernel_name(inputs, pre, exprs, outputs, vexprs, checked, outline)
    module = ir.Module(name=name)
    i8p, i64, i32 = ir.IntType(8).as_pointer(), ir.IntType(64), ir.IntType(32)
    b = ir.IRBuilder()
    # The C library's loop: LANES elements at a time where it is the kernel's loop; one where it
    # only reruns a vmath kernel whose sine or cosine met an argument out of range (rare, and
    # one lane is a quarter of the code to generate on the kernel's first call; same bits)
    tr = _Translator(ir, module, b, LANES if vexprs is None else 1)

    def c_type(d):  # a 0-d input as a C value (a bool as a C bool: a byte)
        return ir.IntType(8) if d == _B else tr.scalar_type(d)
    params = [i8p if k == "array" else c_type(d) for k, _, d in inputs] + [i8p] * len(outputs)
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), params), name=name)
    fn.attributes.add("nounwind")
    entry, dims_test, dims_loop, head = (fn.append_basic_block(s) for s in ("entry", "dims_test", "dims", "head"))
    b.position_at_end(entry)

    def slot(obj, k: int, ty):
        # NumPy's array object: PyObject_HEAD (two pointers), data, nd, dimensions
        slots = b.bitcast(obj, i8p.as_pointer())
        return b.load(b.bitcast(b.gep(slots, [ir.Constant(i32, k)]), ty.as_pointer()))

    def lanes(t: _Translator, values, d):
        if t.lanes == 1:
            return values[0]
        vec = ir.Constant(t.lltype(d), ir.Undefined)
        for k, v in enumerate(values):
            vec = b.insert_element(vec, v, ir.Constant(i32, k))
        return vec
    scalars: dict = {}  # local -> (its value as a C value, dtype)
    arrays = []  # (local, typed data pointer, dtype)
    for (kind, local, d), arg in zip(inputs, fn.args):
        if kind == "array":
            arrays.append((local, b.bitcast(slot(arg, 2, i8p), c_type(d).as_pointer()), d))
        else:
            scalars[local] = (b.icmp_unsigned("!=", arg, ir.Constant(arg.type, 0)) if d == _B else arg, d)
    outs = [b.bitcast(slot(arg, 2, i8p), c_type(d).as_pointer()) for arg, (_, d) in zip(fn.args[len(inputs):], outputs)]
    q0 = fn.args[len(inputs)]
    nd = b.sext(slot(q0, 3, i32), i64)
    dims = b.bitcast(slot(q0, 4, i8p), i64.as_pointer())

    def loop_env(t: _Translator) -> dict:
        """The scalar inputs as vectors of t's lanes, and `pre`'s locals (in the entry block)."""
        env = {local: (lanes(t, [v] * t.lanes, d), d) for local, (v, d) in scalars.items()}
        for local, text in pre:
            env[local] = t.expr(_parse(text), env)
        return env
    env = loop_env(tr)
    if vexprs is not None:
        vtr = _Translator(ir, module, b, vmath_lanes())
        vtr.outline = outline
        venv = loop_env(vtr)
    b.branch(dims_test)
    # n = the product of the first output's dimensions
    b.position_at_end(dims_test)
    k = b.phi(i64)
    n = b.phi(i64)
    k.add_incoming(ir.Constant(i64, 0), entry)
    n.add_incoming(ir.Constant(i64, 1), entry)
    b.cbranch(b.icmp_signed("<", k, nd), dims_loop, head)
    b.position_at_end(dims_loop)
    k.add_incoming(b.add(k, ir.Constant(i64, 1)), dims_loop)
    n.add_incoming(b.mul(n, b.load(b.gep(dims, [k]))), dims_loop)
    b.branch(dims_test)
    b.position_at_end(head)
    last = b.sub(n, ir.Constant(i64, 1))
    done = fn.append_basic_block("done")
    body = fn.append_basic_block("body") if vexprs is None or checked else None
    if vexprs is None:
        b.cbranch(b.icmp_signed(">", n, ir.Constant(i64, 0)), body, done)
    else:
        vhead = fn.append_basic_block("vhead")
        b.cbranch(b.icmp_signed(">", n, ir.Constant(i64, 0)), vhead, done)
        _vector_loop(vtr, venv, vhead, body, done, n, last, arrays, outs, outputs, vexprs, checked)
    if body is None:  # (vmath's functions alone: no C-library pass)
        b.position_at_end(done)
        b.ret_void()
        return LLVMKernel(name, str(module))
    into_body = b.block  # (head, or the end of the vectorised pass)
    # tr.lanes elements at a time, as vectors: their dependency chains (library calls, mostly)
    # then overlap in the CPU, which one element's chain cannot. The last block's lanes past
    # the end repeat the last element (loaded before any store, stored with its own value).
    b.position_at_end(body)
    i = b.phi(i64)
    i.add_incoming(ir.Constant(i64, 0), into_body)
    idx = _clamped(tr, i, n, last)
    for local, ptr, d in arrays:
        v = lanes(tr, [b.load(b.gep(ptr, [j])) for j in idx], np.dtype(np.uint8) if d == _B else d)
        env[local] = (b.icmp_unsigned("!=", v, ir.Constant(v.type, 0)) if d == _B else v, d)
    for ptr, (local, d) in zip(outs, _loop_values(tr, env, exprs, outputs)):
        _store_clamped(tr, ptr, idx, local, d)
    i_next = b.add(i, ir.Constant(i64, tr.lanes))
    i.add_incoming(i_next, b.block)
    b.cbranch(b.icmp_signed("<", i_next, n), body, done)
    b.position_at_end(done)
    b.ret_void()
    return LLVMKernel(name, str(module))


def _clamped(tr: _Translator, i, n, last) -> list:
    """The indices i, i+1, ... of a block of tr's lanes, those past the end the last one's."""
    ir, b = tr.ir, tr.b
    idx = []
    for k in range(tr.lanes):
        j = b.add(i, ir.Constant(ir.IntType(64), k))
        idx.append(b.select(b.icmp_signed("<", j, n), j, last))
    return idx


def _loop_values(tr: _Translator, env: dict, exprs: list, outputs: list) -> list:
    """The loop body: exprs computed into env's t<k>, then the outputs' values as their
    dtypes (bool as a byte), [(value, dtype)]."""
    for k, text in enumerate(exprs):
        env[f"t{k}"] = tr.expr(_parse(text), env)
    values = []
    for local, d in outputs:
        v, t = env[local] if local in env else tr.expr(_parse(local), env)
        v = tr.cast(v, t, d)
        if d == _B:
            v = tr.b.zext(v, tr.lltype(np.dtype(np.uint8)))
        values.append((v, d))
    return values


def _store_clamped(tr: _Translator, ptr, idx: list, v, d) -> None:
    """Store vector v's lanes at the indices `idx`, one element at a time (v a scalar where
    tr has one lane)."""
    ir, b = tr.ir, tr.b
    if tr.lanes == 1:
        b.store(v, b.gep(ptr, [idx[0]]))
        return
    for k, j in enumerate(idx):
        b.store(b.extract_element(v, ir.Constant(ir.IntType(32), k)), b.gep(ptr, [j]))


def _vector_loop(tr: _Translator, env: dict, vhead, c_loop, done, n, last, arrays, outs, outputs,
                 vexprs: list, checked) -> None:
    """The loop over `vexprs` (vmath's functions), tr.lanes elements at a time, from block
    `vhead`: whole blocks loaded and stored as vectors; the last partial one copied element
    by element into a stack buffer per input (lanes past the end repeat the last element),
    computed like a whole block, and its outputs copied back from stack buffers element by
    element. (Two short loops rather than one load and one store per lane: the code
    generator's time grows with the code, and a kernel's first call waits on it.) Where an
    argument in `checked` was out of vmath's range it goes on to `c_loop` (the C library's
    pass over every element), else to `done`. Leaves the builder in the block that enters
    `c_loop`."""
    ir, b = tr.ir, tr.b
    fn = b.block.function
    i64 = ir.IntType(64)
    width = tr.lanes
    fast_ld, slow_ld, vbody, fast_st, slow_st, latch, vend = (
        fn.append_basic_block(s) for s in ("vload", "vload_tail", "vbody", "vstore", "vstore_tail", "vlatch", "vend"))
    pre_block = b.block

    def raw_type(d):
        return np.dtype(np.uint8) if d == _B else d
    # the partial block's buffers, in the entry block (an alloca in the loop would grow the stack)
    with b.goto_entry_block():
        in_bufs = [b.alloca(tr.lltype(raw_type(d))) for _, _, d in arrays]
        out_bufs = [b.alloca(tr.lltype(raw_type(d))) for _, d in outputs]
    for buf in in_bufs + out_bufs:
        buf.align = 64
    b.position_at_end(vhead)
    i = b.phi(i64)
    i.add_incoming(ir.Constant(i64, 0), pre_block)
    flag_t = ir.VectorType(ir.IntType(1), width)
    bad = b.phi(flag_t) if checked else None
    if checked:
        bad.add_incoming(ir.Constant(flag_t, None), pre_block)
    whole = b.icmp_signed("<=", b.add(i, ir.Constant(i64, width)), n)
    b.cbranch(whole, fast_ld, slow_ld)
    b.position_at_end(fast_ld)
    fast = [b.load(b.bitcast(b.gep(ptr, [i]), tr.lltype(raw_type(d)).as_pointer()), align=d.itemsize)
            for _, ptr, d in arrays]
    b.branch(vbody)

    def copy_loop(label: str, count, body) -> None:
        """for j in range(count): body(j), as blocks from the builder's (count >= 1)."""
        top = fn.append_basic_block(label)
        after = fn.append_basic_block(label + "_end")
        entry = b.block
        b.branch(top)
        b.position_at_end(top)
        j = b.phi(i64)
        j.add_incoming(ir.Constant(i64, 0), entry)
        body(j)
        j_next = b.add(j, ir.Constant(i64, 1))
        j.add_incoming(j_next, b.block)
        b.cbranch(b.icmp_signed("<", j_next, count), top, after)
        b.position_at_end(after)

    def elem(buf, d, j):  # element j of a stack buffer
        return b.gep(b.bitcast(buf, tr.scalar_type(raw_type(d)).as_pointer()), [j])

    def fill(j):
        k = b.add(i, j)
        src = b.select(b.icmp_signed("<", k, n), k, last)
        for (_, ptr, d), buf in zip(arrays, in_bufs):
            b.store(b.load(b.gep(ptr, [src])), elem(buf, d, j))
    b.position_at_end(slow_ld)
    if arrays:
        copy_loop("vcopy_in", ir.Constant(i64, width), fill)
    slow = [b.load(buf, align=64) for buf in in_bufs]
    slow_end = b.block
    b.branch(vbody)
    b.position_at_end(vbody)
    phis = []
    for f, s_ in zip(fast, slow):  # (every phi first: LLVM rejects a block with others between them)
        v = b.phi(f.type)
        v.add_incoming(f, fast_ld)
        v.add_incoming(s_, slow_end)
        phis.append(v)
    for (local, _, d), v in zip(arrays, phis):
        env[local] = (b.icmp_unsigned("!=", v, ir.Constant(v.type, 0)) if d == _B else v, d)
    env["TRIG_MAX"] = tr.const(vmath.TRIG_MAX, _F64)
    values = _loop_values(tr, env, vexprs, outputs)
    bad_next = bad
    for a in checked:  # (NaN is not beyond: vmath's functions give NaN for it)
        far, _ = tr.expr(_parse(f"abs({a}) > TRIG_MAX"), env)
        bad_next = b.or_(bad_next, far)
    b.cbranch(whole, fast_st, slow_st)
    b.position_at_end(fast_st)
    for ptr, (v, d) in zip(outs, values):
        b.store(v, b.bitcast(b.gep(ptr, [i]), v.type.as_pointer()), align=d.itemsize)
    b.branch(latch)
    b.position_at_end(slow_st)
    for buf, (v, _) in zip(out_bufs, values):
        b.store(v, buf, align=64)

    def drain(j):
        for ptr, buf, (_, d) in zip(outs, out_bufs, outputs):
            b.store(b.load(elem(buf, d, j)), b.gep(ptr, [b.add(i, j)]))
    copy_loop("vcopy_out", b.sub(n, i), drain)
    b.branch(latch)
    b.position_at_end(latch)
    i_next = b.add(i, ir.Constant(i64, width))
    i.add_incoming(i_next, latch)
    if checked:
        bad.add_incoming(bad_next, latch)
    b.cbranch(b.icmp_signed("<", i_next, n), vhead, vend)
    b.position_at_end(vend)
    if checked:
        any_bad = b.icmp_unsigned("!=", b.bitcast(bad_next, ir.IntType(width)), ir.Constant(ir.IntType(width), 0))
        b.cbranch(any_bad, c_loop, done)
    else:
        b.branch(done)


def _parse(text: str):
    try:
        return ast.parse(text, mode="eval").body
    except SyntaxError as e:
        raise Unsupported(f"{text!r} does not parse") from e
