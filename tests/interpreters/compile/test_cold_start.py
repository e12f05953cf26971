"""A jitted function's first call in a fresh process with an empty kernel cache neither imports
Numba (0.2-0.6 s to import) nor compiles with it: small element-wise programs run through the
scalar tier and NumPy, larger regions through llvmlite's kernels, and loops' first calls in
Python over their region-compiled bodies (loops.JIT_MIN_WORK). With a warm cache, kernels
are linked from their saved object code without building their IR."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

_CHILD = textwrap.dedent("""
    import sys
    import numpy as onp
    import fgrad
    import fgrad.numpy as np
    from fgrad import lax

    def check(what):
        assert "numba" not in sys.modules, f"{what} imported numba"

    check("import fgrad")
    out = fgrad.jit(lambda x: x * 2 + 1)(onp.ones(3))
    assert out.tolist() == [3.0, 3.0, 3.0]
    check("jit(lambda x: x * 2 + 1)")
    x = onp.linspace(0.0, 1.0, 16)
    s = fgrad.jit(lambda x: lax.scan(lambda c, xi: (c * 0.5 + np.sin(xi), c), x[:4], x.reshape(4, 4)))(x)
    check("jit of a scan")
    y = fgrad.jit(lambda x: lax.fori_loop(0, 20, lambda i, v: v * 0.5 + np.cos(v), x))(x)
    check("jit of a fori_loop")
    w = fgrad.jit(lambda a: lax.while_loop(lambda v: np.max(np.abs(v * v - a)) > 1e-12,
                                           lambda v: 0.5 * (v + a / v), a + 1.0))(x + 1.0)
    check("jit of a while_loop")
    assert onp.allclose(w, onp.sqrt(x + 1.0))
    print("ok")
""")


_LONG_SCAN_CHILD = textwrap.dedent("""
    import json, sys
    import numpy as onp
    import fgrad
    import fgrad.numpy as np
    from fgrad import lax
    from fgrad.interpreters.compile import STATS, loops

    def f(c0, xs):
        return lax.scan(lambda c, x: (c * 0.9 + np.sin(x), np.sum(c * 0.9 + np.sin(x))), c0, xs)
    xs = onp.linspace(0, 1, 10_000 * 16).reshape(10_000, 16)
    c, ys = fgrad.jit(f)(onp.zeros(16), xs)
    print(json.dumps({"numba": "numba" in sys.modules, "compiled": loops.STATS["compiled_runs"],
                      "llvm": STATS["llvm_compiled"], "c": c.tolist(), "ys": ys[::1000].tolist()}))
""")


def test_a_long_loops_first_call_compiles_it_without_numba(tmp_path):
    """The first call of a jitted scan long enough to be compiled at once (loops.JIT_MIN_WORK),
    in a fresh process with an empty cache, compiles its loop from LLVM IR (llvm_loops):
    Numba is not imported."""
    env = dict(os.environ, FGRAD_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("FGRAD_LOOPS", None)
    proc = subprocess.run([sys.executable, "-c", _LONG_SCAN_CHILD], capture_output=True, text=True, env=env,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["numba"] is False and out["compiled"] == 1 and out["llvm"] >= 1
    import numpy as onp
    c, ys = onp.zeros(16), []
    for x in onp.linspace(0, 1, 10_000 * 16).reshape(10_000, 16):
        c = c * 0.9 + onp.sin(x)
        ys.append(c.sum())
    onp.testing.assert_allclose(out["c"], c, rtol=1e-12)
    onp.testing.assert_allclose(out["ys"], ys[::1000], rtol=1e-12)


def test_first_jit_calls_do_not_import_numba(tmp_path):
    env = dict(os.environ, FGRAD_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, env=env,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip().endswith("ok")


_WARM_CHILD = textwrap.dedent("""
    import json
    import numpy as onp
    import fgrad
    from fgrad.interpreters.compile import STATS, llvm_kernels

    built = []
    build = llvm_kernels.build_kernel

    def counted(*args):
        built.append(1)
        return build(*args)
    llvm_kernels.build_kernel = counted
    x = onp.linspace(-3.0, 3.0, 500)
    y = fgrad.jit(lambda x: (x * 1.5 + 0.25) * x - x / 3.0)(x)
    print(json.dumps({"built": len(built), "compiled": STATS["llvm_compiled"], "out": y.tolist()}))
""")


def _warm_run(cache) -> dict:
    env = dict(os.environ, FGRAD_CACHE_DIR=str(cache), FGRAD_KERNELS="auto")
    proc = subprocess.run([sys.executable, "-c", _WARM_CHILD], capture_output=True, text=True, env=env,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_a_warm_cache_links_kernels_without_building_their_ir(tmp_path):
    """A kernel whose object code an earlier process saved is linked by name: its LLVM IR is
    not built. Where the saved entry turns out damaged,
    the IR is built then, compiled and saved again, with the same result."""
    cache = tmp_path / "cache"
    cold = _warm_run(cache)
    assert cold["built"] == 1 and cold["compiled"] == 1
    warm = _warm_run(cache)
    assert (warm["built"], warm["compiled"]) == (0, 0)
    for obj in (cache / "kernels").glob("*.o"):
        obj.write_bytes(obj.read_bytes()[:10])
    damaged = _warm_run(cache)
    assert (damaged["built"], damaged["compiled"]) == (1, 1)
    assert cold["out"] == warm["out"] == damaged["out"]


_CASES_CHILD = textwrap.dedent("""
    import json
    import sys
    import numpy as onp
    sys.path.insert(0, sys.argv[1])
    import cold_start
    import fgrad
    import fgrad.lax as lax
    import fgrad.numpy as jnp
    from fgrad.interpreters.compile import STATS, eager_math

    rows = {}
    for case, make in cold_start.CASES.items():
        fn, args = make(jnp, lax, fgrad, onp)
        before = dict(STATS)
        fgrad.block_until_ready(fgrad.jit(fn)(*args))
        rows[case] = {"built": STATS["kernels_built"] - before["kernels_built"],
                      "compiled": STATS["llvm_compiled"] - before["llvm_compiled"],
                      "numba": "numba" in sys.modules,
                      "same-bits eager kernels": sorted(p.name for p, _ in eager_math._KERNELS
                                                        if eager_math.INSTALLED[p])}
    print(json.dumps(rows))
""")

# (cases whose first call imports Numba: none, since a loop whose work reaches
# loops.JIT_MIN_WORK, compiled on its first call, is compiled from llvm_loops' IR)
_NUMBA_WHEN_COLD: set[str] = set()


@pytest.mark.slow
def test_first_calls_of_the_cold_start_benchmark(tmp_path):
    """The class: every function bench/cold_start.py times, first called in a process with an
    empty cache and again in one with the cache the first filled. Cold, none builds an eager
    kernel that only saves time (eager_math's same-bits kernels: their arrays are small; a
    vmath kernel that the size requires for its bits may be built) or imports Numba (but a
    loop long enough to compile with it, run last); warm, each links as many kernels as it
    built cold, compiles none and imports Numba for none."""
    from pathlib import Path
    bench = Path(__file__).resolve().parents[3] / "bench"
    env = dict(os.environ, FGRAD_CACHE_DIR=str(tmp_path / "cache"))
    runs = []
    for _ in ("cold", "warm"):
        proc = subprocess.run([sys.executable, "-c", _CASES_CHILD, str(bench)], capture_output=True,
                              text=True, env=env, timeout=300, check=False)
        assert proc.returncode == 0, proc.stderr[-3000:]
        runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    cold, warm = runs
    if _NUMBA_WHEN_COLD:
        assert list(cold)[-len(_NUMBA_WHEN_COLD):] == sorted(_NUMBA_WHEN_COLD)  # (Numba's cases last)
    for case, row in cold.items():
        assert row["same-bits eager kernels"] == [], case
        assert row["numba"] == (case in _NUMBA_WHEN_COLD), case
        assert row["compiled"] <= row["built"], case
        assert warm[case] == {**row, "compiled": 0, "numba": False}, case
