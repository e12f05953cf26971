"""Every fgrad module that compiles with Numba asks for the CPU's full vector width before
Numba's first compile in the process (kernels.prefer_wide_vectors), so the width of one's
loops does not depend on which of them ran first (the bits do not either way: test_determinism)."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

numba = pytest.importorskip("numba")
llvm = pytest.importorskip("llvmlite.binding")

ENTRY_POINTS = {
    "a large fgrad.torch random draw": "import fgrad.torch as t; t.manual_seed(0); t.randn(4096)",
    "ops.numba_kernels": "from fgrad.ops import numba_kernels; numba_kernels.kernels()",
    "an LSTM layer": "import fgrad.torch as t; t.nn.LSTM(8, 8)(t.ones(3, 2, 8))",
    "a float32 log_softmax": "import fgrad.torch as t; t.nn.functional.log_softmax(t.ones(100, 100), 1)",
    # (loops llvm_loops translates are compiled by llvmlite without Numba: FGRAD_LOOPS=numba
    # makes this one Numba's, whose compile is the entry point here)
    "a compiled jit loop built by Numba": textwrap.dedent("""
        import os
        os.environ["FGRAD_LOOPS"] = "numba"
        import numpy as np, fgrad, fgrad.numpy as fnp
        from fgrad import lax
        from fgrad.interpreters.compile import loops
        loops.JIT_MIN_WORK = 0
        fgrad.jit(lambda x: lax.fori_loop(0, 3, lambda i, c: fnp.tanh(c), x))(np.ones(64))
        assert loops.STATS["compiled_runs"], loops.STATS"""),
}


@pytest.mark.slow
@pytest.mark.parametrize("first", list(ENTRY_POINTS))
def test_the_first_numba_user_of_a_process_asks_for_wide_vectors(first, tmp_path):
    if not llvm.get_host_cpu_features().get("avx512f"):
        pytest.skip("the width is only widened on AVX-512 CPUs")
    code = ENTRY_POINTS[first] + textwrap.dedent("""
        from numba.core import config
        print(config.CPU_FEATURES)""")
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("NUMBA_CPU")}
    env["FGRAD_CACHE_DIR"] = str(tmp_path)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300,
                          check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().splitlines()[-1].endswith("-prefer-256-bit"), (first, proc.stdout[-300:])
