"""The LLVM kernel backend (compile/llvm_kernels.py): element-wise kernels written as LLVM IR
and compiled with llvmlite, without Numba (the only code generator of a region's kernel).

Its types follow Numba's (checked here against Numba's own typing of every pair of dtypes),
so its kernels compute what loops.py's Numba loops compute from the same expressions: every
lowering in every dtype equals the impl (bit for bit where the operation is exact); vmath's
kernels are its too; an expression it cannot translate, or IR llvmlite cannot compile, is a
clear error; a fresh process's jit(grad) of W1 never imports Numba, and a later process
links the cached object code without compiling."""
from __future__ import annotations

import itertools
import json
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import fgrad
import fgrad.numpy as fnp
from fgrad.core.errors import FgradNotImplementedError, FgradRuntimeError, FgradValueError
from fgrad.core.ir import Var
from fgrad.interpreters.compile import Program, kernels, llvm_kernels
from fgrad.interpreters.compile.scalar import KERNEL_DTYPES
from fgrad.ops import elementwise as ew

from tests.interpreters.compile import test_lowerings as lowerings

DTYPES = sorted(KERNEL_DTYPES, key=str)


@pytest.fixture
def backend(monkeypatch):
    """Sets llvm_kernels.BACKEND for the test ("llvm": no Numba fallback)."""
    def use(name: str) -> None:
        monkeypatch.setattr(llvm_kernels, "BACKEND", name)
    return use


def _kernel_specs(program):
    return [spec for spec, _ in program.kernels]


# --- types: Numba's, pair by pair ------------------------------------------------------------

def _numba_typing():
    numba = pytest.importorskip("numba")
    from numba.core.registry import cpu_target
    ctx = cpu_target.typing_context
    ctx.refresh()
    return numba, ctx


def test_types_are_numbas():
    """arith_type, compare_type, unify (x if c else y) and neg_type give the types Numba's
    typing context resolves for every pair of kernel dtypes (and Python's int and float
    literals, which the translator types as int64 and float64)."""
    import operator
    numba, ctx = _numba_typing()
    from numba import types

    def nb(d):
        return numba.from_dtype(np.dtype(d))

    def resolve(op, *args):
        sig = ctx.resolve_function_type(ctx.resolve_value_type(op), args, {})
        return sig

    def dt(t):
        return np.dtype(str(t)) if str(t) != "bool" else np.dtype(bool)
    operands = [(np.dtype(d), nb(d)) for d in DTYPES] + [(np.dtype(np.int64), types.IntegerLiteral(3)),
                                                         (np.dtype(np.float64), types.float64)]
    for (a, ta), (b, tb) in itertools.product(operands, operands):
        for op in (operator.add, operator.sub, operator.mul, operator.floordiv, operator.mod):
            sig = resolve(op, ta, tb)
            assert dt(sig.return_type) == llvm_kernels.arith_type(a, b), (op, a, b, sig)
        sig = resolve(operator.truediv, ta, tb)
        want = llvm_kernels.arith_type(a, b) if "f" in (a.kind, b.kind) else np.dtype(np.float64)
        assert dt(sig.return_type) == want, ("/", a, b)
        sig = resolve(operator.lt, ta, tb)
        assert dt(sig.args[0]) == llvm_kernels.compare_type(a, b), ("<", a, b, sig)
        assert dt(types.unliteral(ctx.unify_types(ta, tb))) == llvm_kernels.unify(a, b), ("unify", a, b)
        if "f" not in (a.kind, b.kind):
            sig = resolve(operator.and_, ta, tb)
            want = np.dtype(bool) if a == b == np.dtype(bool) else llvm_kernels.arith_type(a, b)
            assert dt(sig.return_type) == want, ("&", a, b)
    for a, ta in operands:
        assert dt(resolve(operator.neg, ta).return_type) == llvm_kernels.neg_type(a)


# --- every lowering, both backends -----------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_llvm_kernel_lowerings_match_impls(dtype, backend):
    """One LLVM kernel per dtype computes every lowering's result for every pair of special
    values (signed zeros, infinities, NaN, integer extremes, division by zero): each equals
    the impl (bit for bit, or within the lowering tests' ulps for library functions)."""
    x, y, p = lowerings._pairs(np.dtype(dtype))
    apps = lowerings._applications(x, y, p)
    invars = {id(x): Var(lowerings._aval(x)), id(y): Var(lowerings._aval(y)), id(p): Var(lowerings._aval(p))}
    closed = lowerings._program(apps, invars)
    backend("llvm")
    program = Program(closed, min_kernel_eqns=1)
    (spec,) = _kernel_specs(program)
    assert spec.llvm is not None and "LLVM IR written by" in program.as_text()
    got = program(x, y, p)
    for (prim, params, _, want), g in zip(apps, got):
        lowerings.assert_same(g, want, prim.name in lowerings.INEXACT, f"{prim.name}{params or ''} on {dtype}")


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=str)
def test_llvm_mixed_dtype_programs_keep_dtypes_and_values(dtype, backend):
    """The lowering tests' class test (conversions between every dtype around every lowering)
    with every kernel built by the LLVM backend."""
    backend("llvm")
    lowerings.test_compiled_programs_keep_dtypes_and_values(dtype, 16)


def test_large_kernels_with_vmath_are_llvm_kernels_too(backend):
    """A kernel over vmath.LARGE elements that uses vmath's functions is written as LLVM IR,
    like one of pure arithmetic, at any size."""
    backend("auto")
    x = np.linspace(-2.0, 2.0, 4096)
    trig = Program(fgrad.make_jaxpr(lambda v: fnp.sin(v * 2.0 + 1.0) * v - 3.0)(x))
    arith = Program(fgrad.make_jaxpr(lambda v: (v * 2.0 + 1.0) * v - 3.0)(x))
    assert _kernel_specs(trig)[0].llvm is not None and "fg_vsin" in trig.as_text()
    assert _kernel_specs(arith)[0].llvm is not None
    np.testing.assert_array_equal(arith(x)[0], (x * 2.0 + 1.0) * x - 3.0)
    np.testing.assert_allclose(trig(x)[0], np.sin(x * 2.0 + 1.0) * x - 3.0, rtol=1e-14, atol=1e-14)


# --- errors ------------------------------------------------------------------------------------

def _pow_mul_lowering(x, y):
    # x * y written as (x * y) ** 1.0: exact (pow(v, 1) is v), which the translator rejects
    # (it has no ** operator)
    return f"(({x} * {y}) ** 1.0)" if x.dtype.kind == "f" else None


@pytest.mark.parametrize("mode", ["auto", "llvm"])
def test_an_expression_the_translator_rejects_is_an_error(backend, monkeypatch, mode):
    """No other code generator takes over: the error names the kernel, the expression and
    what to do."""
    monkeypatch.setattr(ew.mul_p, "lowering", _pow_mul_lowering)
    x = np.linspace(-3.0, 3.0, 11)
    closed = fgrad.make_jaxpr(lambda v: fnp.tanh(v * v + 1.0) - v)(x)
    backend(mode)
    with pytest.raises(FgradNotImplementedError, match=r"cannot translate it \(.*\*\*"):
        Program(closed)


def test_backend_names_only_llvm_modes(backend):
    """FGRAD_KERNELS=numba (the removed backend) is an error that lists the values it takes."""
    backend("numba")
    x = np.linspace(-3.0, 3.0, 11)
    with pytest.raises(FgradValueError, match="'auto'.*'llvm'"):
        Program(fgrad.make_jaxpr(lambda v: fnp.tanh(v * v + 1.0) - v)(x))


def test_llvmlite_failure_is_an_error(backend, monkeypatch):
    """Where llvmlite cannot compile a kernel's IR, loading the program says so."""
    from fgrad.interpreters.compile import native
    monkeypatch.setattr(native, "compile_ir", lambda *args: None)
    monkeypatch.setattr(native, "load", lambda *args: None)
    backend("auto")
    x = np.linspace(-3.0, 3.0, 13)
    program = Program(fgrad.make_jaxpr(lambda v: fnp.exp(v * 0.25 - 1.0) * v + 0.5)(x))
    (spec,) = _kernel_specs(program)
    kernels._LOADED.pop(spec.name, None)
    with pytest.raises(FgradRuntimeError, match="llvmlite could not compile"):
        program(x)
    assert spec.name not in kernels._LOADED


# --- a cold process -------------------------------------------------------------------------

_W1 = textwrap.dedent("""
    import json, sys, time
    sys.path.insert(0, {bench!r})
    import numpy as onp
    import fgrad, fgrad.numpy as fnp
    from wl_calculus import chain
    from fgrad.interpreters.compile import STATS
    x = onp.random.default_rng(0).uniform(-1, 1, 16)
    g = fgrad.jit(fgrad.grad(lambda v: fnp.sum(chain(fnp, v, 200))))
    t = time.perf_counter()
    out = g(x)
    first = time.perf_counter() - t
    print(json.dumps({{"out": out.tolist(), "numba": "numba" in sys.modules, "first": first, **STATS}}))
""")


def _w1(cache, kernels_backend: str) -> dict:
    bench = str(pathlib.Path(__file__).resolve().parents[3] / "bench")
    env = {**os.environ, "FGRAD_CACHE_DIR": str(cache), "FGRAD_KERNELS": kernels_backend}
    out = subprocess.run([sys.executable, "-c", _W1.format(bench=bench)], env=env, capture_output=True,
                         text=True, check=True).stdout
    return json.loads(out.splitlines()[-1])


def test_cold_w1_jit_grad_does_not_import_numba(tmp_path):
    """W1's jit(grad) in a fresh process with an empty cache: its kernel is compiled by
    llvmlite and Numba is never imported; the next process links the cached object code
    (nothing compiled), with the same bits."""
    cold = _w1(tmp_path / "llvm", "auto")
    assert cold["numba"] is False and cold["llvm_compiled"] >= 1 and cold["disk_cache_hits"] == 0
    warm = _w1(tmp_path / "llvm", "auto")
    assert warm["numba"] is False and warm["llvm_compiled"] == 0
    assert warm["disk_cache_hits"] == warm["kernels_built"] == cold["kernels_built"]
    assert cold["out"] == warm["out"]


def test_helper_source_is_parsed_from_its_own_lines(tmp_path, monkeypatch):
    """The translator parses a helper from its own lines (up to the next top-level
    statement); where a line at column 0 inside it (in brackets, a string) cuts that short,
    the module's file is parsed whole: the same FunctionDef as inspect's source either way.
    Every helper of scalar_lib and vmath parses as inspect's source does."""
    import ast
    import importlib.util
    import inspect

    from fgrad.interpreters.compile import scalar_lib, vmath
    path = tmp_path / "fg_chunked_helpers.py"
    path.write_text(textwrap.dedent('''\
        C = 2.0


        def plain(x):
            return x * C
        # a comment at column 0

        def bracket(x):
            y = (x +
        1.0)
            return y


        def stringy(x):
            """A docstring whose second line is at column 0:
        here."""
            return x
        '''))
    spec = importlib.util.spec_from_file_location("fg_chunked_helpers", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for name in ("plain", "bracket", "stringy"):
        fn = getattr(module, name)
        got = llvm_kernels._function_def(fn)
        assert ast.dump(got) == ast.dump(ast.parse(inspect.getsource(fn)).body[0]), name
    for name, fn in [*scalar_lib.HELPERS.items(), *((n, getattr(vmath, n)) for n in llvm_kernels._VMATH_NAMES)]:
        want = ast.parse(textwrap.dedent(inspect.getsource(fn))).body[0]
        assert ast.dump(llvm_kernels._function_def(fn)) == ast.dump(want), name
