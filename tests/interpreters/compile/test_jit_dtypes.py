"""jit against eager, dtype by dtype (issue 23, items 5, 7 and 8).

Every element-wise primitive with a lowering (`ALL_PRIMITIVES`, `def_lowering`), applied under
jit to operands of every pair of the kernel dtypes (bool, int8..int64, uint8..uint64, float32,
float64): x of dtype a converted to b (convert_element_type, the cast under fgrad.numpy's
promotion), then every unary and binary primitive on it and y of dtype b, then each binary
result fed to the next binary primitive (casts and integer results feeding further
arithmetic, where kernels' types went wrong). Operands hold every pair of edge values (signed
zeros, infinities, NaN, integer extremes, -1, 1). One kernel per dtype pair computes them
all (an LLVM IR kernel: llvm_kernels.py), and each output must equal eager's bit for
bit (NaN to NaN, the sign of zero included); 0-d operands exercise the scalar tier.

Under `FGRAD_JIT_MATH=fused` (the default; scalar.MATH) kernels compute the functions that
a library approximates (exp, tanh, pow, ...) with the C library or vmath, within a few ulps
of NumPy's own SIMD code: those outputs are compared within ULPS there, and bit for bit under
"eager", where jit leaves them to NumPy as eager does.
"""
from __future__ import annotations

import itertools
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import fgrad
import fgrad.numpy as fnp
from fgrad import lax
from fgrad.core.primitive import ALL_PRIMITIVES
from fgrad.core.trace import aval_of
from fgrad.interpreters.compile import llvm_kernels, loops, scalar
from fgrad.ops import elementwise as ew

from tests.interpreters.compile.test_lowerings import _ARITY, _PARAMS, INEXACT, assert_same

DTYPES = [np.dtype(d) for d in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
                                "uint32", "uint64", "float32", "float64")]
LOWERED = sorted((p for p in ALL_PRIMITIVES if p.lowering is not None), key=lambda p: p.name)
_BINARY = [p for p in LOWERED if _ARITY.get(p.name, 1) == 2]


def edges(dtype: np.dtype) -> np.ndarray:
    """The edge values of `dtype`: signed zeros, +-1, infinities, NaN, extremes."""
    if dtype.kind == "b":
        return np.array([False, True])
    if dtype.kind == "f":
        info = np.finfo(dtype)
        return np.array([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.5, 3.0, np.inf, -np.inf, np.nan,
                         info.max, -info.max, info.tiny, info.smallest_subnormal, 700.0], dtype=dtype)
    info = np.iinfo(dtype)
    vals = [0, 1, 2, 3, 7, info.max, info.max - 1, info.min, info.min + 1]
    if dtype.kind == "i":
        vals += [-1, -2, -7]
    return np.array(vals, dtype=dtype)


def operands(a: np.dtype, b: np.dtype, shape0: bool = False):
    """x of dtype a and y of dtype b holding every pair of their edge values (flattened)."""
    ea, eb = edges(a), edges(b)
    x = np.repeat(ea, eb.size)
    y = np.tile(eb, ea.size)
    return x, y


def _eager(fn, *args):
    with np.errstate(all="ignore"):
        return fn(*args)


def applications(x, y):
    """[(name, fn(cx, y))] for every lowered primitive (and params) whose eager application to
    (cx, y) works, cx being x converted to y's dtype."""
    cx = ew.convert_element_type(x, y.dtype)
    pred = np.arange(x.size) % 3 == 0
    out = [("convert", lambda cx, y, p: cx)]
    for prim in LOWERED:
        arity = _ARITY.get(prim.name, 1)
        for params in _PARAMS.get(prim.name, [{}]):
            if prim.name == "convert_element_type":
                params = {"new_dtype": params["new_dtype"]}
                if params["new_dtype"] == y.dtype:
                    continue

            def fn(cx, y, p, prim=prim, params=params, arity=arity):
                args = [(cx,), (cx, y), (p, cx, y)][arity - 1]
                return prim.bind(*args, **params)
            try:
                r = _eager(fn, cx, y, pred)
                aval = prim.abstract_eval(*[aval_of(v) for v in [(cx,), (cx, y), (pred, cx, y)][arity - 1]],
                                          **params)
            except Exception:  # NumPy or the abstract rule refuses these dtypes
                continue
            if np.asarray(r).dtype != aval.dtype:
                continue  # operands fgrad.numpy converts before binding (sin of an int8)
            out.append((f"{prim.name}{params or ''}", fn))
    # binary results feed the next binary primitive (a // b) ^ b, ...: types through chains
    chained = []
    for name, fn in out:
        if fn is out[0][1] or np.asarray(_eager(fn, cx, y, pred)).dtype != y.dtype:
            continue
        for nxt in _BINARY:
            def chain(cx, y, p, fn=fn, nxt=nxt):
                return nxt.bind(fn(cx, y, p), y)
            try:
                r = _eager(chain, cx, y, pred)
            except Exception:
                continue
            if np.asarray(r).dtype == y.dtype:
                chained.append((f"{nxt.name}({name}, y)", chain))
                break
    return out + chained


def _program(apps, a: np.dtype, b: np.dtype):
    def f(x, y, p):
        cx = ew.convert_element_type(x, b)
        return [fn(cx, y, p) for _, fn in apps]
    return f


def _inexact(name: str) -> bool:
    return scalar.MATH == "fused" and any(name.startswith(n) or f"({n}" in name for n in INEXACT)


def check_pair(a: np.dtype, b: np.dtype, every: int = 1) -> None:
    """jit equals eager on every application for dtypes (a, b), arrays and 0-d values (every
    `every`-th pair of edge values)."""
    x, y = operands(a, b)
    p = np.arange(x.size) % 3 == 0
    apps = applications(x, y)
    f = _program(apps, a, b)
    want = _eager(f, x, y, p)
    got = _eager(fgrad.jit(f), x, y, p)
    for (name, _), g, w in zip(apps, got, want):
        if "(" in name and _inexact(name):
            continue  # a few ulps of an approximated function, grown by what follows
        assert_same(g, w, _inexact(name), f"jit {name} on ({a}, {b})")
    if b not in scalar.SCALAR_DTYPES:
        return  # 0-d values of other dtypes run through the impls
    g0 = fgrad.jit(f)
    for k in range(0, x.size, every):
        x0, y0, p0 = x[k:k + 1].reshape(()), y[k:k + 1].reshape(()), np.array(k % 3 == 0)
        want = _eager(f, x0, y0, p0)
        got = _eager(g0, x0, y0, p0)
        for (name, _), g, w in zip(apps, got, want):
            if not ("(" in name and _inexact(name)):
                assert_same(g, w, _inexact(name), f"jit 0-d {name} on ({x0!r}, {y0!r})")


@pytest.fixture
def kernels_backend(monkeypatch):
    """Every kernel's IR built (llvm_kernels' strict mode), even where its object code is cached."""
    monkeypatch.setattr(llvm_kernels, "BACKEND", "llvm")
    return "llvm"


@pytest.fixture(params=["fused", "eager"])
def math_mode(request, monkeypatch):
    monkeypatch.setattr(scalar, "MATH", request.param)
    return request.param


PAIRS = list(itertools.product(DTYPES, DTYPES))
# the default run's subset under eager math: the casts the issue named, and one pair of each kind
REPRESENTATIVE = [(np.dtype(a), np.dtype(b)) for a, b in [
    ("uint64", "int64"), ("uint32", "int64"), ("int32", "int64"), ("uint64", "float64"),
    ("int64", "uint64"), ("float32", "float64"), ("float64", "float32"), ("bool", "int8"),
    ("float64", "float64"), ("int8", "int8")]]


# the default run's pairs: each dtype with itself and cast to the usual promotion results
DEFAULT_PAIRS = [(a, b) for a, b in PAIRS if a == b or b.name in ("int64", "uint64", "float64")]


@pytest.mark.parametrize("a,b", DEFAULT_PAIRS, ids=lambda d: str(d))
def test_jit_equals_eager_llvm(a, b, monkeypatch):
    """LLVM kernels (the default backend), the default math mode (0-d: a sample of the value
    pairs); every pair of dtypes, every backend and mode: the slow test below."""
    monkeypatch.setattr(llvm_kernels, "BACKEND", "llvm")
    monkeypatch.setattr(scalar, "MATH", "fused")
    check_pair(a, b, every=11)


@pytest.mark.parametrize("a,b", REPRESENTATIVE, ids=lambda d: str(d))
def test_jit_equals_eager_bitwise_under_eager_math(a, b, monkeypatch):
    """FGRAD_JIT_MATH=eager: bit for bit everywhere, the approximated functions included."""
    monkeypatch.setattr(llvm_kernels, "BACKEND", "llvm")
    monkeypatch.setattr(scalar, "MATH", "eager")
    check_pair(a, b, every=11)


@pytest.mark.slow
@pytest.mark.parametrize("a,b", PAIRS, ids=lambda d: str(d))
def test_jit_equals_eager_all_pairs(a, b, monkeypatch, kernels_backend, math_mode):
    check_pair(a, b)


def test_every_lowering_is_applied():
    """Each lowered primitive is applied to some dtype pair above (a primitive the sweep
    skipped everywhere would go untested)."""
    seen = set()
    for a, b in PAIRS:
        if a == b:
            seen |= {name.split("{")[0].split("(")[0] for name, _ in applications(*operands(a, b))}
    assert {p.name for p in LOWERED} <= seen, sorted({p.name for p in LOWERED} - seen)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=str)
def test_power_by_a_scalar_is_eagers(dtype, kernels_backend, math_mode):
    """x ** c for a scalar c, in a kernel: NumPy's power computes the exponents -1, 0, 0.5, 1
    and 2 as 1 / x, 1, sqrt(x), x and x * x (sqrt(-inf) is NaN, sqrt(-0.0) is -0.0, where C's
    pow gives inf and 0.0); other exponents are pow's (within ULPS under "fused")."""
    x = np.tile(edges(np.dtype(dtype)), 5)
    for c in (0.5, 2.0, -1.0, 0.0, 1.0, 3.0, -0.5, 2, 3, -1, -2):
        def f(x):
            t = fnp.power(x, c)
            return t, -(-t)  # (three equations: a kernel)
        want = _eager(f, x)
        for k, g in enumerate(_eager(fgrad.jit(f), x)):
            inexact = math_mode == "fused" and c not in (0.5, 2.0, -1.0, 0.0, 1.0, 2, -1, -2)
            assert_same(g, want[k], inexact, f"jit x ** {c!r} on {np.dtype(dtype)}")
        for v in x[::3]:  # 0-d: the scalar tier (float64), the impls (float32)
            assert_same(_eager(fgrad.jit(f), v)[0], _eager(f, v)[0], inexact, f"jit 0-d {v!r} ** {c!r}")


def test_plan_and_arithmetic_do_not_depend_on_timings(tmp_path):
    """The same program compiles to the same code, and so computes the same bits, whether
    NumPy's functions seem fast or slow on the machine (the planner once timed them and left
    tanh and exp to NumPy on one machine and to vmath on another: results 1-3 ulps apart).
    Two processes, each with its own cache directory and a clock that makes every timed call
    look instant in one and slow in the other."""
    script = textwrap.dedent("""
        import sys, time, itertools
        tick = float(sys.argv[1])
        clock = itertools.count()
        time.perf_counter = lambda: next(clock) * tick
        import numpy as np, fgrad, fgrad.numpy as fnp
        from fgrad.interpreters.compile import Program
        f = lambda x: fnp.tanh(fnp.exp(x) * 0.5 + 1.0) * 2.0
        print(Program(fgrad.make_jaxpr(f)(np.linspace(-3, 3, 4096))).as_text())
    """)
    texts = []
    for tick in ("1e-12", "1e-3"):
        env = {**os.environ, "FGRAD_CACHE_DIR": str(tmp_path / tick)}
        out = subprocess.run([sys.executable, "-c", script, tick], capture_output=True, text=True,
                             env=env, timeout=120)
        assert out.returncode == 0, out.stderr[-2000:]
        texts.append(out.stdout)
    assert texts[0] == texts[1]


@pytest.mark.parametrize("a,b", [(np.dtype(np.uint32), np.dtype(np.int64))], ids=lambda d: str(d))
def test_compiled_loop_bodies_equal_eager(a, b, monkeypatch):
    """The same applications (those loops.py lowers) in a lax.scan body, which jit compiles
    into one generated Numba loop (compile/loops.py), equal eager's scan (its body's impls):
    uint32 // int32 by -1 and (a // b) ^ b did not compile there. (More pairs: slow test.)"""
    monkeypatch.setattr(scalar, "MATH", "fused")
    check_loop(a, b, monkeypatch)


@pytest.mark.slow
@pytest.mark.parametrize("a,b", REPRESENTATIVE[:6], ids=lambda d: str(d))
def test_compiled_loop_bodies_equal_eager_more_pairs(a, b, monkeypatch, math_mode):
    check_loop(a, b, monkeypatch)


def check_loop(a, b, monkeypatch) -> None:
    """jit's compiled scan body equals eager's scan on the (lowerable) applications of (a, b)."""
    x, y = operands(a, b)
    p = np.arange(x.size) % 3 == 0

    def lowers(fn) -> bool:
        jaxpr = fgrad.make_jaxpr(lambda x, y, p: fn(ew.convert_element_type(x, b), y, p))(x, y, p).jaxpr
        return all(scalar.lowerable(e, scalar.KERNEL_DTYPES) for e in jaxpr.eqns)
    apps = [(name, fn) for name, fn in applications(x, y) if lowers(fn)]  # a body loops.py compiles
    f = _program(apps, a, b)
    compiled = []
    scan_loop = loops.scan_loop
    monkeypatch.setattr(loops, "JIT_MIN_WORK", 0)  # compiled from jit's first call
    monkeypatch.setattr(loops, "scan_loop", lambda *args: compiled.append(scan_loop(*args)) or compiled[-1])

    def run(x, y, p):
        def body(c, row):
            return c, f(*row)
        return lax.scan(body, np.float64(0.0), (x.reshape(2, -1), y.reshape(2, -1), p.reshape(2, -1)))[1]
    if x.size % 2:
        x, y, p = x[:-1], y[:-1], p[:-1]
    want = _eager(run, x, y, p)
    got = _eager(fgrad.jit(run), x, y, p)
    assert compiled and compiled[0] is not None, "the body was not compiled into a loop"
    for (name, _), g, w in zip(apps, got, want):
        if "(" in name and _inexact(name):
            continue
        assert_same(g, w, _inexact(name), f"jit scan body {name} on ({a}, {b})")


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_literal_operands_equal_eager(dtype, monkeypatch):
    """Each binary primitive with a trace-time constant (a literal in the kernel's source) of
    every edge value as either operand: INT64_MIN was written as -(2**63), which Numba and the
    LLVM translator read as the uint64 2**63 negated, so max(x, INT64_MIN) gave INT64_MIN."""
    monkeypatch.setattr(llvm_kernels, "BACKEND", "llvm")
    x = np.tile(edges(dtype), 3)
    apps = []
    for prim in _BINARY:
        for c in edges(dtype):
            for side in (0, 1):
                def fn(x, prim=prim, c=c, side=side):
                    k = ew.const(x, c)
                    return prim.bind(*((x, k) if side == 0 else (k, x)))
                try:
                    r = _eager(fn, x)
                    aval = prim.abstract_eval(aval_of(x), aval_of(x))
                except Exception:
                    continue
                if np.asarray(r).dtype == aval.dtype:
                    apps.append((f"{prim.name}({'x, ' if side == 0 else ''}{c!r}{'' if side == 0 else ', x'})", fn))

    def f(x):
        return [fn(x) for _, fn in apps]
    want = _eager(f, x)
    got = _eager(fgrad.jit(f), x)
    for (name, _), g, w in zip(apps, got, want):
        assert_same(g, w, _inexact(name), f"jit {name} on {dtype}")
