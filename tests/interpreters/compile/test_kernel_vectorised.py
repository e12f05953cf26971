"""Fused kernels over vmath.LARGE elements or more are vectorised by LLVM whatever their number
of inputs and outputs (kernels.py's alias scopes), several vectors per iteration
(kernels.INTERLEAVE), and an output written in place of a dying input reads that input through
its own pointer (program.py's reuse), so that kernel is vectorised too."""
from __future__ import annotations

import re
import sys

import numpy as onp
import pytest

import fgrad
import fgrad.numpy as np
from fgrad.interpreters.compile import kernels
from fgrad.interpreters.compile.vmath import LARGE

pytest.importorskip("numba")


def _kernel_ir(jitted, *args) -> tuple[str, str]:
    """(source, LLVM IR after optimisation) of the last Numba kernel of `jitted` at `args`,
    compiled in this process."""
    program = jitted.lower(*args)
    spec = [s for s, _ in program.kernels if s.llvm is None][-1]
    jitted(*args)
    module = sys.modules[f"_fgrad_kernel_{spec.name}"]
    return spec.source, module.kernel._library.get_llvm_str()


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    """An empty kernel cache, so that Numba compiles in this process (its IR is readable)."""
    monkeypatch.setenv("FGRAD_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(kernels, "_LOADED", {})


def test_kernel_with_many_outputs_is_vectorised(fresh_cache):
    """Sixteen outputs of one input: without alias scopes LLVM would need 136 run-time pointer
    checks, more than it makes, and keeps the scalar loop (it did from about a dozen on);
    left to itself, it would also compute one vector per iteration."""
    scales = [0.3 + 0.04 * k for k in range(16)]

    def f(x):
        return tuple(np.tanh(x * s) for s in scales)
    x = onp.linspace(-3.0, 3.0, LARGE, dtype=onp.float32)
    source, ir = _kernel_ir(fgrad.jit(f), x)
    assert "fg_vtanh" in source
    assert source.count("= _store_as(") == 16
    vector_stores = re.findall(r"store <\d+ x float>", ir)
    # every output stored as vectors, INTERLEAVE of them per iteration of the main loop
    assert len(vector_stores) >= 16 * kernels.INTERLEAVE, ir[:2000]
    got = fgrad.jit(f)(x)
    for s, g in zip(scales, got):
        onp.testing.assert_allclose(g, onp.tanh(x * onp.float32(s)), rtol=2e-6, atol=1e-7)


def test_output_in_place_reads_its_input_through_its_own_pointer(fresh_cache):
    """`a` dies in the second kernel, whose output takes over its buffer: the kernel loads `a`
    through that output's pointer (one array to LLVM: no run-time check, which two pointers
    to one buffer always fail), and the results equal NumPy's."""
    def f(x):
        a = np.tanh(x * 0.5) + 1.0
        s = np.sum(x)          # ends the first kernel: `a` is a kernel output, fresh
        return np.tanh(a * s) * a - 1.0
    x = onp.linspace(-2.0, 2.0, LARGE)
    jitted = fgrad.jit(f)
    assert "in place" in jitted.lower(x).as_text()
    source, ir = _kernel_ir(jitted, x)
    (load,) = re.findall(r"x\d+ = _ld\d+\((\w+), i\)", source)
    assert load.startswith("o"), source
    assert re.search(r"store <\d+ x double>", ir)
    a = onp.tanh(x * 0.5) + 1.0
    onp.testing.assert_allclose(jitted(x), onp.tanh(a * onp.sum(x)) * a - 1.0, rtol=1e-13, atol=1e-15)
    onp.testing.assert_allclose(jitted(x), onp.tanh(a * onp.sum(x)) * a - 1.0, rtol=1e-13, atol=1e-15)


def test_interleave_option_is_restored(fresh_cache):
    """The forced interleave count is LLVM's process-wide option: set for a kernel's
    compilation only, so Numba code compiled afterwards gets LLVM's own choice again."""
    seen = []
    original = kernels._interleave
    try:
        kernels._interleave = lambda count: (seen.append(count), original(count))
        x = onp.linspace(-3.0, 3.0, LARGE)
        fgrad.jit(lambda x: np.tanh(np.exp(x * 0.25) * 0.125))(x)
    finally:
        kernels._interleave = original
    assert seen == [kernels.INTERLEAVE, 0]
