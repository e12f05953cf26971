"""loops.py's loops written as LLVM IR: the Numba source loops.py emits, translated statement
by statement, so that a loop's first compilation needs neither Numba's import nor its compiler
(0.3-0.5 s on a cold cache, where llvmlite builds such a loop in a few tens of milliseconds).

The source is a restricted Python (loops.py writes all of it): `for v in range(...)` and
`while` loops with `break`, `if`/`else`, assignments to scalar locals, to array elements
(`a[i]`, `a[i, j]`, `a[:] = value`) and of a 2-D array's row (`xs = X[i]`), `+=`, and the
generated helper functions of the module (the `_dot<k>` products), inlined where they are
called. Expressions are llvm_kernels' translator's (`_Translator`: Numba's types and
arithmetic, scalar_lib's helpers and vmath's functions from their Python source), with array
reads added, so a loop computes the bits Numba's compilation of the same source computes:
the same operations in the same order, no fast-math (a sum stays sequential), the same
library calls. A local keeps one type (Numba's would be unified where a name takes several,
which this translator does not do): a name assigned values of two types raises Unsupported,
except `_v`, which loops.py assigns just before each use. Anything else raises Unsupported,
and the loop is then compiled by Numba as before (kernels.load_kernel).

The function takes each array as its NumPy object (one pointer: shapes are static, so a call
passes one ctypes argument per array) and reads its data pointer where kernels read it.
"""
from __future__ import annotations

import ast
import hashlib
import os
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ...core.errors import FgradValueError
from . import llvm_kernels, scalar_lib
from .llvm_kernels import Unsupported

# (LLVM's IR pass pipeline level, its code generator's level): Numba's own (O3), whose loop
# passes (vectorizing vmath's element-wise loops, unrolling) a compiled loop's speed needs;
# a loop's IR is small, so the cost to its first call is a few tens of milliseconds
OPT = (3, 3)

# "auto" (the default: a loop this module translates is compiled by llvmlite, any other by
# Numba) or "numba" (every loop by Numba, as before this module: how tests compare the two)
BACKEND = os.environ.get("FGRAD_LOOPS", "auto")


def numba_only() -> bool:
    """Whether every loop goes to Numba (BACKEND "numba"; "auto", the default, translates
    those it can)."""
    if BACKEND not in ("auto", "numba"):
        raise FgradValueError(
            f"FGRAD_LOOPS / llvm_loops.BACKEND is {BACKEND!r}; it takes 'auto' (the default: loops "
            f"compiled from LLVM IR where llvm_loops translates them, else by Numba) or 'numba'")
    return BACKEND == "numba"


# the names a loop may assign values of several types: each use reads the value assigned
# just before it, in the same block (loops.py's reductions' `_v`)
_RETYPED = frozenset(("_v",))

# the operators of `a[i] op= v` that it translates (those of loops.py's dot products)
_ARITH = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}

_B = np.dtype(bool)
_I64 = np.dtype(np.int64)


class _Array(NamedTuple):
    """An array of the loop: a pointer to its first element (an IR value, or an alloca that
    holds one: a row assigned in the loop), its dtype and static shape."""
    ptr: object
    dtype: np.dtype
    shape: tuple
    held: bool  # whether `ptr` is an alloca holding the pointer


class _Scope:
    """The locals of one function body (the loop, or an inlined helper): name -> alloca and
    dtype for scalars, name -> _Array for arrays. Read as an `env` by the expression
    translator: a scalar's name reads its alloca."""

    def __init__(self, tr: _LoopTranslator) -> None:
        self.tr = tr
        self.scalars: dict[str, tuple] = {}
        self.arrays: dict[str, _Array] = {}

    def __contains__(self, name) -> bool:
        return name in self.scalars

    def __getitem__(self, name):
        slot, dt = self.scalars[name]
        return self.tr.b.load(slot), dt

    def assign(self, name: str, value) -> None:
        v, dt = value
        if name in self.arrays:
            raise Unsupported(f"{name} is an array and a scalar")
        old = self.scalars.get(name)
        if old is None or (old[1] != dt and name in _RETYPED):
            old = self.scalars[name] = (self.tr.alloca(self.tr.lltype(dt)), dt)
        elif old[1] != dt:
            raise Unsupported(f"{name} assigned a {dt} and a {old[1]}")
        self.tr.b.store(v, old[0])


class _LoopTranslator(llvm_kernels._Translator):
    """llvm_kernels' expression translator with array reads, and the statements of a loop."""

    def __init__(self, ir, module, builder, entry, functions: dict) -> None:
        super().__init__(ir, module, builder, 1)
        self.entry = entry  # the block that holds the allocas (branched from last)
        self.functions = functions  # the module's helper FunctionDefs, by name
        self.exits: list = []  # the blocks a `break` goes to, innermost last
        self.inlining: list[str] = []

    def alloca(self, ty):
        with self.b.goto_block(self.entry):
            return self.b.alloca(ty)

    # --- expressions ---------------------------------------------------------------------------

    def expr(self, node, env):
        if isinstance(env, _Scope):
            if isinstance(node, ast.Subscript):
                arr = self.array(node.value, env)
                if arr is not None:
                    ptr, dt = self.element(arr, node.slice, env)
                    v = self.b.load(ptr)
                    return (self.b.icmp_unsigned("!=", v, self.ir.Constant(v.type, 0)), _B) if dt == _B else (v, dt)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in self.functions:
                out = self.inline(node, env)
                if out is None:
                    raise Unsupported(f"{node.func.id} returns nothing")
                return out
            if isinstance(node, ast.Name) and node.id in env.arrays:
                raise Unsupported(f"array {node.id} as a value")
        return super().expr(node, env)

    def array(self, node, scope: _Scope) -> _Array | None:
        if isinstance(node, ast.Name):
            return scope.arrays.get(node.id)
        return None

    def pointer(self, arr: _Array):
        return self.b.load(arr.ptr) if arr.held else arr.ptr

    def index(self, node, scope: _Scope):
        v, t = self.expr(node, scope)
        if t.kind not in "iu":
            raise Unsupported(f"an index of {t}")
        return self.cast(v, t, _I64)

    def offset(self, arr: _Array, node, scope: _Scope):
        """The flat offset of `arr[node]` (one index per axis, C order) and the shape left."""
        idx = list(node.elts) if isinstance(node, ast.Tuple) else [node]
        if len(idx) > len(arr.shape) or any(isinstance(i, ast.Slice) for i in idx):
            raise Unsupported(f"an index of {len(idx)} axes into {len(arr.shape)}")
        i64 = self.ir.IntType(64)
        off = None
        for k, node_k in enumerate(idx):
            term = self.index(node_k, scope)
            stride = int(np.prod(arr.shape[k + 1:], dtype=np.int64))
            if stride != 1:
                term = self.b.mul(term, self.ir.Constant(i64, stride))
            off = term if off is None else self.b.add(off, term)
        return off, arr.shape[len(idx):]

    def element(self, arr: _Array, node, scope: _Scope):
        off, rest = self.offset(arr, node, scope)
        if rest:
            raise Unsupported("a row where an element is read")
        return self.b.gep(self.pointer(arr), [off]), arr.dtype

    def store(self, ptr, value, dt: np.dtype) -> None:
        v, t = value
        v = self.cast(v, t, dt)
        if dt == _B:
            v = self.b.zext(v, self.ir.IntType(8))
        self.b.store(v, ptr)

    # --- statements ----------------------------------------------------------------------------

    def statements(self, stmts: list, scope: _Scope, rets: list | None = None) -> None:
        for s in stmts:
            if self.b.block.is_terminated:  # (after a break: unreachable code)
                self.b.position_at_end(self.b.function.append_basic_block("dead"))
            self.statement(s, scope, rets)

    def statement(self, s, scope: _Scope, rets) -> None:
        b = self.b
        if isinstance(s, ast.Assign) and len(s.targets) == 1:
            self.assign(s.targets[0], s.value, scope)
        elif isinstance(s, ast.AugAssign):
            t = s.target
            arr = self.array(t.value, scope) if isinstance(t, ast.Subscript) else None
            if isinstance(t, ast.Name):
                scope.assign(t.id, self.expr(ast.BinOp(ast.Name(t.id, ast.Load()), s.op, s.value), scope))
            elif isinstance(t, ast.Subscript) and arr is not None and type(s.op) in _ARITH:
                # a[i] += v: a[i] read, v added (Numba's types), the sum stored
                ptr, dt = self.element(arr, t.slice, scope)
                old = b.load(ptr)
                old = (b.icmp_unsigned("!=", old, self.ir.Constant(old.type, 0)), _B) if dt == _B else (old, dt)
                self.store(ptr, self.binop(_ARITH[type(s.op)], old, self.expr(s.value, scope)), dt)
            else:
                raise Unsupported(ast.unparse(s))
        elif isinstance(s, ast.For):
            self.for_range(s, scope)
        elif isinstance(s, ast.While):
            self.while_loop(s, scope)
        elif isinstance(s, ast.If):
            self.if_(s, scope)
        elif isinstance(s, ast.Break) and self.exits:
            b.branch(self.exits[-1])
        elif isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) and isinstance(s.value.func, ast.Name) \
                and s.value.func.id in self.functions:
            self.inline(s.value, scope)
        elif isinstance(s, ast.Return) and rets is not None and s.value is not None:
            rets.append(self.expr(s.value, scope))
        elif not isinstance(s, ast.Pass):
            raise Unsupported(ast.unparse(s))

    def assign(self, target, value_node, scope: _Scope) -> None:
        if isinstance(target, ast.Name):
            if isinstance(value_node, ast.Subscript):
                arr = self.array(value_node.value, scope)
                if arr is not None and (len(value_node.slice.elts) if isinstance(value_node.slice, ast.Tuple)
                                        else 1) < len(arr.shape):
                    self.row(target.id, arr, value_node.slice, scope)
                    return
            scope.assign(target.id, self.expr(value_node, scope))
            return
        if not isinstance(target, ast.Subscript):
            raise Unsupported(f"assignment to {ast.unparse(target)}")
        arr = self.array(target.value, scope)
        if arr is None:
            raise Unsupported(f"assignment to {ast.unparse(target)}")
        sl = target.slice
        if isinstance(sl, ast.Slice) and sl.lower is None and sl.upper is None and sl.step is None:
            value = self.expr(value_node, scope)  # a[:] = value: every element
            size = int(np.prod(arr.shape, dtype=np.int64))
            base = self.pointer(arr)
            self.counted(size, lambda i: self.store(self.b.gep(base, [i]), value, arr.dtype))
            return
        value = self.expr(value_node, scope)
        ptr, dt = self.element(arr, sl, scope)
        self.store(ptr, value, dt)

    def row(self, name: str, arr: _Array, node, scope: _Scope) -> None:
        """`name = arr[i]`: a view of a row (a pointer into `arr`, held in an alloca)."""
        off, rest = self.offset(arr, node, scope)
        ptr = self.b.gep(self.pointer(arr), [off])
        old = scope.arrays.get(name)
        if name in scope.scalars or (old is not None and (old.dtype, old.shape) != (arr.dtype, rest)):
            raise Unsupported(f"{name} rebound to another kind of array")
        if old is None:
            old = scope.arrays[name] = _Array(self.alloca(ptr.type), arr.dtype, tuple(rest), True)
        self.b.store(ptr, old.ptr)

    def counted(self, n: int, body) -> None:
        """for i in range(n): body(i), i an int64 IR value (n a Python int)."""
        i64 = self.ir.IntType(64)
        slot = self.alloca(i64)
        self.b.store(self.ir.Constant(i64, 0), slot)
        self.loop(lambda: self.b.icmp_signed("<", self.b.load(slot), self.ir.Constant(i64, n)),
                  lambda: body(self.b.load(slot)),
                  lambda: self.b.store(self.b.add(self.b.load(slot), self.ir.Constant(i64, 1)), slot))

    def loop(self, test, body, step) -> None:
        """The blocks of `while test(): body(); step()` (`break` in body leaves it)."""
        fn = self.b.function
        head, inner, latch, done = (fn.append_basic_block(s) for s in ("head", "body", "latch", "done"))
        self.b.branch(head)
        self.b.position_at_end(head)
        self.b.cbranch(test(), inner, done)
        self.b.position_at_end(inner)
        self.exits.append(done)
        body()
        self.exits.pop()
        if not self.b.block.is_terminated:
            self.b.branch(latch)
        self.b.position_at_end(latch)
        step()
        self.b.branch(head)
        self.b.position_at_end(done)

    def for_range(self, s: ast.For, scope: _Scope) -> None:
        it = s.iter
        if (not isinstance(s.target, ast.Name) or s.orelse or not isinstance(it, ast.Call)
                or not isinstance(it.func, ast.Name) or it.func.id != "range" or it.keywords
                or not 1 <= len(it.args) <= 3):
            raise Unsupported(ast.unparse(s).splitlines()[0])
        ir, b = self.ir, self.b
        i64 = ir.IntType(64)
        args = [self.index(a, scope) for a in it.args]
        start, stop = (ir.Constant(i64, 0), args[0]) if len(args) == 1 else args[:2]
        step = 1
        if len(args) == 3:
            node = it.args[2]
            if not (isinstance(node, ast.Constant) and type(node.value) is int and node.value > 0):
                raise Unsupported("a range step other than a positive constant")
            step = node.value
        counter = self.alloca(i64)  # (Python's: assignments to the loop variable do not steer it)
        b.store(start, counter)
        name = s.target.id

        def body():
            scope.assign(name, (b.load(counter), _I64))
            self.statements(s.body, scope)
        self.loop(lambda: b.icmp_signed("<", b.load(counter), stop), body,
                  lambda: b.store(b.add(b.load(counter), ir.Constant(i64, step)), counter))

    def while_loop(self, s: ast.While, scope: _Scope) -> None:
        if s.orelse:
            raise Unsupported("while ... else")
        self.loop(lambda: self.truth(*self.expr(s.test, scope)), lambda: self.statements(s.body, scope),
                  lambda: None)

    def if_(self, s: ast.If, scope: _Scope) -> None:
        fn, b = self.b.function, self.b
        yes, no, done = (fn.append_basic_block(x) for x in ("then", "else", "endif"))
        b.cbranch(self.truth(*self.expr(s.test, scope)), yes, no)
        for block, body in ((yes, s.body), (no, s.orelse)):
            b.position_at_end(block)
            self.statements(body, scope)
            if not b.block.is_terminated:
                b.branch(done)
        b.position_at_end(done)

    def inline(self, call: ast.Call, scope: _Scope):
        """The module's helper function called by `call`, its body translated in place with
        its parameters bound to the arguments (arrays by reference): its return value (the
        last statement), or None."""
        assert isinstance(call.func, ast.Name)  # (the callers' test)
        name = call.func.id
        fn = self.functions[name]
        params = [a.arg for a in fn.args.args]
        if (call.keywords or len(call.args) != len(params) or fn.args.vararg or fn.args.kwonlyargs
                or name in self.inlining):
            raise Unsupported(f"call of {name}")
        inner = _Scope(self)
        for p, a in zip(params, call.args):
            arr = self.array(a, scope)
            if arr is not None:
                inner.arrays[p] = arr
            else:
                inner.assign(p, self.expr(a, scope))
        body = [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
        rets: list = []
        if any(isinstance(n, ast.Return) for s in body[:-1] for n in ast.walk(s)):
            raise Unsupported(f"{name} returns before its end")
        self.inlining.append(name)
        self.statements(body, inner, rets)
        self.inlining.pop()
        return rets[0] if rets else None


def loop_name(source: str) -> str:
    """The name (and cache key) of the LLVM loop built from loops.py's Numba source `source`."""
    key = repr((llvm_kernels._version(), _own_version(), OPT, source))
    return "m_" + hashlib.sha256(key.encode()).hexdigest()[:20]


_OWN: list = []


def _own_version() -> str:
    if not _OWN:
        _OWN.append(hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16])
    return _OWN[0]


def build_loop(source: str, args: list, name: str) -> str:
    """The LLVM IR of the function `kernel` of loops.py's module `source`, as a C function
    `name` taking one NumPy array object per parameter (`args`: (dtype, shape) each, in
    order; C-contiguous). Raises Unsupported for what it does not translate."""
    try:
        tree = ast.parse(source)
    except SyntaxError as e:
        raise Unsupported("the loop's source does not parse") from e
    # the module's own helpers (the _dot<k> products), inlined; not scalar_lib's, whose calls
    # the expression translator makes as a region's kernel does
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)
                 and n.name not in scalar_lib.HELPERS and n.name not in llvm_kernels._VMATH_NAMES}
    kernel = functions.pop("kernel", None)
    if kernel is None or len(kernel.args.args) != len(args):
        raise Unsupported("no kernel function of the loop's parameters")
    ir = llvm_kernels._ir()
    module = ir.Module(name=name)
    i8p, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [i8p] * len(args)), name=name)
    fn.attributes.add("nounwind")
    entry = fn.append_basic_block("entry")
    start = fn.append_basic_block("start")
    b = ir.IRBuilder(entry)
    tr = _LoopTranslator(ir, module, b, entry, functions)
    scope = _Scope(tr)
    for a, arg, (dt, shape) in zip(kernel.args.args, fn.args, args):
        dt = np.dtype(dt)
        if dt not in llvm_kernels._DTYPES:
            raise Unsupported(f"dtype {dt}")
        # NumPy's array object: PyObject_HEAD (two pointers), then its data pointer
        slot = b.gep(b.bitcast(arg, i8p.as_pointer()), [ir.Constant(i32, 2)])
        elem = ir.IntType(8) if dt == _B else tr.scalar_type(dt)
        scope.arrays[a.arg] = _Array(b.bitcast(b.load(slot), elem.as_pointer()), dt, tuple(shape), False)
    b.position_at_end(start)
    tr.statements(kernel.body, scope)
    if not b.block.is_terminated:
        b.ret_void()
    b.position_at_end(entry)
    b.branch(start)
    return str(module)
