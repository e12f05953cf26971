"""jit's tiling (fgrad.interpreters.compile.program): runs of element-wise steps over one large
shape execute block by block, so values made and used inside the run exist one block at a
time. Programs compiled with tiny blocks (every run tiled, blocks that do not divide the
size) compute what eval_jaxpr computes, over the registry's cases and generated programs;
the peak memory of the compiled W6 program (grad of 100 tanh layers) is a few arrays, where
untiled it holds every layer's output (measured with tracemalloc, which sees NumPy's
buffers: bytes allocated, not time)."""
from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fgrad
import fgrad.numpy as fnp
from fgrad.core.ir import eval_jaxpr
from fgrad.interpreters.compile import Program, scalar
from fgrad.interpreters.compile import program as program_mod

from tests.interpreters.compile.test_lowerings import (
    INEXACT,
    JIT_CASES,
    _check_program,
    _staged,
    check_generated_program,
)


@pytest.fixture
def tiny_tiles(monkeypatch):
    """Every run of two or more element-wise steps tiled, in blocks of 3 elements."""
    monkeypatch.setattr(program_mod, "MAX_TILE", 3)
    monkeypatch.setattr(program_mod, "MIN_TILE", 3)
    monkeypatch.setattr(program_mod, "MIN_TILED", 2)


def _check_tiled(closed, args, what: str) -> None:
    """_check_program, where a transcendental function anywhere (nested jaxprs too) allows
    ulps: in blocks of 3 elements NumPy computes every element in its loops' scalar tail,
    which may differ from its SIMD body by an ulp (real blocks, powers of two no smaller
    than any SIMD width, send each element down the same path as the whole-array call)."""
    text = str(closed)
    _check_program(closed, args, what, inexact=any(f" {name}" in text for name in INEXACT))


@pytest.mark.parametrize("case", JIT_CASES, ids=lambda c: c.name)
def test_registry_programs_tiled_equal_eval_jaxpr(case, tiny_tiles):
    args, staged = _staged(case.name)
    for kind, closed in staged.items():
        _check_tiled(closed, args, f"{case.name} ({kind}, tiled)")


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_generated_programs_tiled_equal_eval_jaxpr(dtype, data, tiny_tiles):
    check_generated_program(dtype, data, _check_tiled)


def _layers(x, n):
    for _ in range(n):
        x = fnp.tanh(1.01 * x)
    return x


def test_tiled_run_inputs_of_every_layout(tiny_tiles, monkeypatch):
    """Inputs from before a run: transposed (not contiguous), broadcast (stride 0), 0-d (a
    Python float argument, a 0-d array), and an integer array; several outputs, one of them
    also read inside the run, and values read after the run."""
    def f(a, b, s, t, k):
        u = fnp.tanh(a * s) + b
        v = fnp.exp(u * t) - u * u + k
        w = fnp.sin(v) * u
        return w, u, fnp.sum(v) + fnp.sum(w * 2.0)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((7, 5)).T
    b = np.broadcast_to(rng.standard_normal(7), (5, 7))
    k = np.arange(35).reshape(5, 7)
    closed = fgrad.make_jaxpr(f)(a, b, 0.5, np.array(0.25), k)
    vals = (a, b, np.array(0.5), np.array(0.25), k)
    want = eval_jaxpr(closed.jaxpr, closed.consts, *vals)
    # every equation a call (each element-wise one tileable), and kernels between calls of
    # the functions FGRAD_JIT_MATH=eager leaves to NumPy
    for min_kernel_eqns in (math.inf, 2):
        if min_kernel_eqns == 2:
            monkeypatch.setattr(scalar, "MATH", "eager")
        prog = Program(closed, min_kernel_eqns)
        text = prog.as_text()
        assert "in blocks of 3 elements" in text, text
        if min_kernel_eqns == 2:
            assert "kernel k_" in text.split("in blocks of")[1], text
        for g, w in zip(prog(*vals), want):
            np.testing.assert_allclose(g, w, rtol=1e-12, err_msg=text)
    got = fgrad.jit(f)(a, b, 0.5, np.array(0.25), k)
    want = f(a, b, 0.5, np.array(0.25), k)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12)


def test_block_size_keeps_the_live_values_in_budget():
    assert program_mod.block_size(1, 8) == program_mod.MAX_TILE
    for live, itemsize in ((100, 4), (300, 8), (10 ** 6, 8)):
        b = program_mod.block_size(live, itemsize)
        assert program_mod.MIN_TILE <= b <= program_mod.MAX_TILE and b & (b - 1) == 0
        assert b == program_mod.MIN_TILE or live * b * itemsize <= program_mod.TILE_BUDGET
    assert program_mod.block_size(10 ** 6, 8) == program_mod.MIN_TILE


def test_runs_whose_values_all_escape_are_not_tiled():
    closed = fgrad.make_jaxpr(lambda x: (fnp.tanh(x), fnp.exp(x)))(np.ones(program_mod.MIN_TILED))
    assert "in blocks" not in Program(closed).as_text()


def _peak_bytes(fn, *args) -> int:
    """Bytes NumPy allocated at the peak of fn(*args) above what was live before it."""
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        fn(*args)
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def test_compiled_w6_peak_is_a_few_arrays(monkeypatch):
    """jit(grad) of 100 tanh layers: tiled, the forward values live one block at a time, so
    the program's peak is its output and a few blocks (untiled: every layer's output). Under
    FGRAD_JIT_MATH=eager, where each tanh is a NumPy call between kernels."""
    monkeypatch.setattr(scalar, "MATH", "eager")
    n, layers = 1 << 18, 100
    x = np.full(n, 0.5, np.float32)
    g = fgrad.jit(fgrad.grad(lambda v: fnp.sum(_layers(v, layers))))
    want = fgrad.grad(lambda v: fnp.sum(_layers(v, layers)))(x)
    np.testing.assert_allclose(g(x), want, rtol=1e-5)
    # the output, and per block the layers' forward values and a few temporaries
    bound = x.nbytes + (layers + 4) * program_mod.MAX_TILE * x.itemsize
    tiled = _peak_bytes(g, x)
    assert tiled <= bound, f"tiled program peak: {tiled / x.nbytes:.1f} input-sized arrays"
    monkeypatch.setattr(program_mod, "MIN_TILED", 1 << 62)  # untiled: the comparison that makes the bound mean something
    g_whole = fgrad.jit(fgrad.grad(lambda v: fnp.sum(_layers(v, layers))))
    np.testing.assert_allclose(g_whole(x), want, rtol=1e-5)
    whole = _peak_bytes(g_whole, x) / x.nbytes
    assert whole >= layers, f"untiled program peak: {whole:.1f} arrays"
    assert bound / x.nbytes < layers / 3
