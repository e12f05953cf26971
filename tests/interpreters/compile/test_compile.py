"""fgrad.jit compiles: one generated Python function per signature, element-wise regions fused
into Numba kernels (cached in memory and on disk), other primitives called through their
impls, buffers freed after their last use; and it falls back to replaying the IR under
transforms. (That compiled results equal eval_jaxpr's: tests/interpreters/compile/test_lowerings.py.)"""
from __future__ import annotations

import gc
import os
import subprocess
import sys
import textwrap
import tracemalloc

import numpy as onp
import pytest

import fgrad
import fgrad.numpy as np
from fgrad.interpreters.compile import STATS, Program
from fgrad.ops import elementwise as ew

rng = onp.random.default_rng(0)


def _chain(x):
    for _ in range(3):
        x = np.tanh(np.sin(x) * 0.9 + 0.1) * x
    return x


def test_second_call_neither_retraces_nor_recompiles():
    f = fgrad.jit(lambda x: np.sum(_chain(x)))
    x = rng.standard_normal(8)
    f(x)
    built = STATS["kernels_built"] + STATS["kernels_reused"]
    assert (f.stats.traces, f.stats.compiles) == (1, 1)
    for v in (x, x + 1.0, x.astype(onp.float64) * 2):
        onp.testing.assert_allclose(f(v), onp.sum(_chain_np(v)), rtol=1e-12)
    assert (f.stats.traces, f.stats.compiles) == (1, 1)
    assert STATS["kernels_built"] + STATS["kernels_reused"] == built  # no kernel looked up again
    f(rng.standard_normal(5))  # a new shape: one more trace and compilation
    assert (f.stats.traces, f.stats.compiles) == (2, 2)
    f(onp.float32(1.0) * rng.standard_normal(5).astype(onp.float32))
    assert (f.stats.traces, f.stats.compiles) == (3, 3) and len(f._cache) == 3


def _chain_np(x):
    for _ in range(3):
        x = onp.tanh(onp.sin(x) * 0.9 + 0.1) * x
    return x


def test_lower_shows_the_program_and_its_kernels():
    x = rng.standard_normal((3, 4))
    text = fgrad.jit(lambda x: np.sum(_chain(x), axis=0)).lower(x).as_text()
    assert "def program(a0):" in text and "_impl" in text and "reduce_sum" in text
    assert ("@numba.cfunc" in text or "LLVM IR written by" in text) and "math.tanh(" in text and "del " in text


def test_a_primitive_without_lowering_runs_through_its_impl(monkeypatch):
    f = lambda x: np.exp(np.cos(np.sin(x * 2.0 + 1.0)) * 3.0 - 1.0) * x
    x = rng.standard_normal(6)
    fused = fgrad.jit(f).lower(x)
    assert [s.kind for s in fused.steps] == ["kernel"]
    monkeypatch.setattr(ew.cos_p, "lowering", None)
    jitted = fgrad.jit(f)
    program = jitted.lower(x)
    assert [s.kind for s in program.steps] == ["kernel", "call", "kernel"]
    assert "_cos(" in program.as_text() and "math.cos" not in program.as_text()
    onp.testing.assert_array_equal(jitted(x), f(x))  # same operations, so bit for bit
    assert jitted.stats.compiles == 1


def test_without_numba_regions_run_through_the_impls(monkeypatch):
    from fgrad.interpreters.compile import program as program_module
    monkeypatch.setattr(program_module, "numba_available", lambda: False)
    x = rng.standard_normal(6)
    program = Program(fgrad.make_jaxpr(_chain)(x))
    assert {s.kind for s in program.steps} == {"call"} and "numba" not in program.as_text()
    onp.testing.assert_array_equal(program(x)[0], _chain(x))


def test_a_lowering_may_decline_operand_dtypes():
    # integer sin is computed by the impl (which converts), not by a float lowering
    x = onp.arange(-3, 4)
    f = fgrad.jit(lambda x: ew.sin(x) * 2.0 + 1.0)
    onp.testing.assert_array_equal(f(x), onp.sin(x) * 2.0 + 1.0)


def test_jit_under_transforms_replays_the_ir_and_is_not_compiled():
    f = fgrad.jit(lambda x: np.sum(_chain(x) * x))
    g = lambda x: np.sum(_chain(x) * x)
    x = rng.standard_normal(5)
    onp.testing.assert_allclose(fgrad.grad(f)(x), fgrad.grad(g)(x), rtol=1e-12)
    onp.testing.assert_allclose(fgrad.vmap(f)(onp.stack([x, 2 * x])), [g(x), g(2 * x)], rtol=1e-12)
    onp.testing.assert_allclose(fgrad.jvp(f, (x,), (x,))[1], fgrad.jvp(g, (x,), (x,))[1], rtol=1e-12)
    assert f.stats.compiles == 0
    onp.testing.assert_allclose(f(x), g(x), rtol=1e-12)
    assert f.stats.compiles == 1
    h = fgrad.jit(fgrad.grad(g))
    onp.testing.assert_allclose(h(x), fgrad.grad(g)(x), rtol=1e-12)
    assert h.stats.compiles == 1


def test_debug_nans_is_honoured():
    f = fgrad.jit(lambda x: np.log(x) * 2.0 + 1.0)
    assert onp.isnan(f(onp.array([-1.0, 1.0]))[0])
    with fgrad.debug_nans(), pytest.raises(FloatingPointError, match="log"):
        f(onp.array([-1.0, 1.0]))


def test_scalar_tier_falls_back_where_math_raises():
    f = fgrad.jit(lambda x, y: (np.log(x) * 2.0, y / x + 1.0, np.exp(y) * 0.5 - x))
    assert f.lower(2.0, 3.0).steps[0].kind == "scalar"
    assert f(2.0, 3.0) == pytest.approx((onp.log(2.0) * 2.0, 2.5, onp.exp(3.0) * 0.5 - 2.0))
    with onp.errstate(all="ignore"):
        outs = f(0.0, 1000.0)  # log(0), 1000 / 0 and exp(1000) raise in math; NumPy gives infinities
    assert [float(o) for o in outs] == [-onp.inf, onp.inf, onp.inf]
    assert all(isinstance(o, onp.ndarray) and o.dtype == onp.float64 for o in outs)


def test_python_numbers_and_bools_take_the_fast_path_and_keep_their_types():
    f = fgrad.jit(lambda x, flag: np.where(flag, x * 2.0, x))
    x32 = rng.standard_normal(4).astype(onp.float32)
    assert f(x32, True).dtype == onp.float32
    onp.testing.assert_array_equal(f(x32, False), x32)
    g = fgrad.jit(lambda x: x * 3.0 + 1.0)
    out = g(2.0)
    assert isinstance(out, onp.ndarray) and out.dtype == onp.float64 and out == 7.0


def test_outputs_inputs_literals_and_pytrees():
    f = fgrad.jit(lambda x, y: {"same": x, "twice": (x * 2.0 + 1.0, x * 2.0 + 1.0), "y": y})
    x = rng.standard_normal(3)
    out = f(x, 4.0)
    # a new array, as jax.jit gives (tests/api/test_state_across_calls.py: outputs never alias)
    assert out["same"] is not x and not onp.shares_memory(out["same"], x)
    onp.testing.assert_array_equal(out["same"], x)
    onp.testing.assert_array_equal(out["twice"][0], x * 2.0 + 1.0)
    assert not onp.shares_memory(out["twice"][0], out["twice"][1])
    assert out["y"] == 4.0 and type(out["y"]) is onp.ndarray


def test_non_contiguous_and_read_only_inputs():
    f = fgrad.jit(lambda a, b: np.tanh(a) * b + a * 2.0 - 1.0)
    a = rng.standard_normal((6, 8)).T[::2]                 # (4, 6), strided
    b = onp.asfortranarray(rng.standard_normal((4, 6)))
    b.setflags(write=False)
    onp.testing.assert_allclose(f(a, b), onp.tanh(a) * b + a * 2.0 - 1.0, rtol=1e-14)
    v = rng.standard_normal(12)
    onp.testing.assert_allclose(f(v[::3], v[1::3]), onp.tanh(v[::3]) * v[1::3] + v[::3] * 2.0 - 1.0, rtol=1e-14)


def test_fgrad_numpy_arrays_come_back_as_arrays():
    f = fgrad.jit(lambda x: np.sin(x) * 2.0 + x - 1.0)
    x = np.asarray(rng.standard_normal(4))
    out = f(x)
    assert type(out) is type(x)
    onp.testing.assert_allclose(out, onp.sin(x) * 2.0 + x - 1.0, rtol=1e-14)


def test_integer_and_boolean_regions():
    f = fgrad.jit(lambda i, j: np.where((i % 3 == 0) | (j > 2), i // 2 - j, i * j + 1))
    i, j = onp.arange(-6, 6), onp.arange(12)[::-1].copy()
    want = onp.where((i % 3 == 0) | (j > 2), i // 2 - j, i * j + 1)
    assert f.lower(i, j).steps[0].kind == "kernel"
    onp.testing.assert_array_equal(f(i, j), want)


def test_kernel_output_reuses_a_dying_intermediate_buffer():
    def f(x):
        a = np.sin(x) * 2.0 + 1.0
        s = np.sum(x)
        return a * s + a * a - 1.0
    x = rng.standard_normal(7)
    jitted = fgrad.jit(f)
    assert "in place" in jitted.lower(x).as_text()
    onp.testing.assert_array_equal(jitted(x), f(x))
    onp.testing.assert_array_equal(jitted(x), f(x))


def _peak(run) -> int:
    gc.collect()
    tracemalloc.start()
    run()
    top = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return top


def test_buffers_are_freed_after_their_last_use():
    """A chain of n non-fused steps holds a couple of buffers at a time, not n; a fused
    chain allocates its output only (no temporaries)."""
    def steps(x):
        for _ in range(8):
            x = np.cumsum(x, axis=0)[::-1]
        return x

    def chain(x):
        for _ in range(10):
            x = np.sin(x) * 0.5 + x
        return x
    x = onp.ones((1 << 16,))
    program = Program(fgrad.make_jaxpr(steps)(x))
    assert program.source.count("del ") >= 8
    assert _peak(lambda: program(x)) < 3 * x.nbytes
    fused = Program(fgrad.make_jaxpr(chain)(x))
    fused(x)  # compiles the kernel
    assert _peak(lambda: fused(x)) < 1.2 * x.nbytes


def test_kernels_are_cached_on_disk_across_processes(tmp_path):
    script = textwrap.dedent("""
        import time
        import numpy as onp
        import fgrad, fgrad.numpy as np
        from fgrad.interpreters.compile import STATS
        f = fgrad.jit(lambda x: np.tanh(np.sin(x) * 1.5 + 0.25) * x - np.cos(x))
        f(onp.linspace(0.0, 1.0, 9))
        print(STATS["kernels_built"], STATS["disk_cache_hits"])
    """)
    env = {**os.environ, "FGRAD_CACHE_DIR": str(tmp_path)}
    runs = [subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                           check=True).stdout.split() for _ in range(2)]
    assert runs == [["1", "0"], ["1", "1"]]  # compiled once, then loaded from Numba's cache
    assert len(list((tmp_path / "kernels").glob("k_*.json"))) == 1  # (either backend's object code)


def test_importing_fgrad_does_not_import_numba():
    out = subprocess.run([sys.executable, "-c", "import sys, fgrad; print('numba' in sys.modules)"],
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_widening_conversion_inside_a_kernel_computes_in_the_wide_dtype():
    # Numba's float() keeps float32 values float32: a float32 -> float64 conversion followed by
    # arithmetic must round like NumPy (in float64), not in float32
    rng = onp.random.default_rng(0)
    x, y = rng.random(1000).astype(onp.float32), rng.random(1000).astype(onp.float32)

    def f(a, b):
        return np.astype(a, onp.float64) - np.astype(b, onp.float64) * 3.0
    onp.testing.assert_array_equal(fgrad.jit(f)(x, y), f(x, y))
