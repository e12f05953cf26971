"""jit's numerics do not depend on the process or on the kernel cache: the same programs on the
same inputs give the same bits in a fresh process with an empty cache (kernels compiled), in
a second one on the cache the first filled (kernels loaded), and in a third with a cache of
its own. The programs cover transcendental chains in float32 and float64 on both sides of
vmath.LARGE (C library below, vectorised math above; its functions called below vmath.INLINE
and inlined above), their gradients, and loops (run in Python, as jit's first calls run it,
and compiled, one with a dot product: a sum whose order must not follow the vector width); a fourth process compiles kernels with the narrowest vectors (2 float64 lanes
instead of the CPU's width) and Numba's loops with LLVM's default width."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("numba")

_CHILD = textwrap.dedent("""
    import hashlib, json, sys, warnings
    import numpy as onp
    import fgrad, fgrad.numpy as np
    from fgrad import lax
    from fgrad.interpreters.compile import llvm_kernels, loops
    warnings.simplefilter("ignore")
    if len(sys.argv) > 1:  # the vector width kernels are written for (the CPU's, by default)
        llvm_kernels._WIDTH[:] = [int(sys.argv[1])]

    def chain(x):
        for _ in range(20):
            x = np.sin(x) * 1.01 + np.tanh(x) * 0.5
        return x

    def mixed(x):
        return np.exp(np.cos(x) * 0.5) - np.log1p(x * x) + fgrad.nn.sigmoid(x) * np.tanh(x)

    programs = {
        "chain": chain,
        "grad chain": fgrad.grad(lambda x: np.sum(chain(x))),
        "mixed": mixed,
        "grad mixed": fgrad.grad(lambda x: np.sum(mixed(x))),
        "loop": lambda x: lax.fori_loop(0, 5, lambda i, c: c * 0.5 + np.sin(c) * 0.25, x),
    }
    # the loop again, compiled on jit's first call (by default its first calls run in Python)
    programs["compiled loop"] = programs["loop"]
    # a compiled loop with a dot product (a sum the loop's generated helper adds up)
    programs["compiled dot loop"] = lambda x: lax.fori_loop(
        0, 5, lambda i, c: np.tanh(c) * 0.9 + np.dot(c, c) * 1e-4, x)
    rng = onp.random.default_rng(0)
    out = {}
    default_work = loops.JIT_MIN_WORK
    for dtype in ("float64", "float32"):
        for n in (7, 300, 1500, 5000):
            x = rng.uniform(-2, 2, n).astype(dtype)
            for name, f in programs.items():
                loops.JIT_MIN_WORK = 0 if name.startswith("compiled") else default_work
                y = onp.asarray(fgrad.jit(f)(x))
                assert y.dtype == onp.dtype(dtype), (name, dtype, y.dtype)
                # a sanity bound against the uncompiled program: equal bits across processes
                # would mean little if they were wrong bits
                ref = onp.asarray(f(x))
                tol = 1e-9 if dtype == "float64" else 1e-3
                assert onp.allclose(y, ref, rtol=tol, atol=tol), (name, dtype, n)
                out[f"{name} {dtype} {n}"] = hashlib.sha256(y.tobytes()).hexdigest()
    json.dump(out, sys.stdout)
""")


def _run(cache: str, *args: str, **env_vars: str) -> dict:
    env = dict(os.environ, FGRAD_CACHE_DIR=cache, **env_vars)
    proc = subprocess.run([sys.executable, "-c", _CHILD, *args], capture_output=True, text=True, env=env,
                          timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_jit_bits_equal_across_processes_and_caches(tmp_path):
    shared, other = str(tmp_path / "shared"), str(tmp_path / "other")
    cold = _run(shared)   # empty cache: every kernel compiled in this process
    warm = _run(shared)   # the same cache, now filled: kernels loaded
    fresh = _run(other)   # a cache of its own, compiled again
    # kernels of 2-lane vectors, and the host's features as Numba is told them for its loops:
    # LLVM's own choice of vector width, which fgrad widens to 512 bits on AVX-512 CPUs (the
    # width must not change any element's bits)
    import llvmlite.binding as llvm
    narrow = _run(str(tmp_path / "narrow"), "2", NUMBA_CPU_FEATURES=llvm.get_host_cpu_features().flatten())
    assert os.listdir(shared), "the first process left nothing in its cache"
    assert len(cold) == 2 * 4 * 7
    for label, got in (("warm cache", warm), ("second empty cache", fresh),
                       ("narrower vectors", narrow)):
        differ = sorted(k for k in cold if got.get(k) != cold[k])
        assert not differ, f"jit results differ in bits with a {label}: {differ}"
