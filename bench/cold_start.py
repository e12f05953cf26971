"""Cold start of jit: the first call of a jitted function in a fresh process, fgrad.jit with
an empty kernel cache and with a warm one, against jax.jit (one thread, x64).

    python bench/cold_start.py [--runs 3] [--only NAME ...] [--skip-jax] [--baseline DIR]

With --baseline DIR (a source tree, e.g. `git archive <commit> | tar -x -C DIR`), the fgrad
package in DIR is measured too, cold and warm, interleaved with the rest: a before/after
comparison that a loaded machine skews less than two separate runs.

Every measurement is a new Python process (this file run with --child), which imports NumPy
first, then times the library's import, then the first call: wrapping the function with jit,
calling it, and waiting for the result. "cold" gives fgrad a new empty cache directory
($FGRAD_CACHE_DIR) per run; "warm" gives it one that an earlier process filled by running
the same function. The children share a bytecode cache (PYTHONPYCACHEPREFIX, filled by one
process per library first), as an installed package has its .pyc files. Each cell is the
median over --runs processes, in milliseconds. Prints a
Markdown table and the ratios to jax.jit (first call, and import plus first call), plus, per
run, which of Numba and llvmlite the fgrad process imported.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ONE_THREAD = {
    "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
    "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
    "NUMBA_NUM_THREADS": "1", "JAX_ENABLE_X64": "1", "JAX_PLATFORMS": "cpu",
}


# --- the functions: each takes (jnp, lax, lib) (the library's numpy, lax and top-level
# module) and returns (function to jit, its arguments as NumPy values) ---------------------

def _elementwise(jnp, lax, lib, np):
    def f(x):
        return jnp.tanh(jnp.sin(x) * 2.0 + jnp.cos(x) * 0.5) * 3.0 + x * x
    return f, (np.linspace(-2, 2, 1000),)


def _mlp_loss(jnp, lax, lib, np):
    return _mlp(jnp, np)


def _mlp(jnp, np):
    rng = np.random.default_rng(0)
    params = (rng.standard_normal((32, 64)) * 0.1, np.zeros(64), rng.standard_normal((64, 10)) * 0.1, np.zeros(10))
    x, y = rng.standard_normal((16, 32)), rng.standard_normal((16, 10))

    def loss(p, x, y):
        w1, b1, w2, b2 = p
        h = jnp.tanh(x @ w1 + b1)
        return jnp.mean((h @ w2 + b2 - y) ** 2)
    return loss, (params, x, y)


def _mlp_grad(jnp, lax, lib, np):
    loss, args = _mlp(jnp, np)
    return lib.value_and_grad(loss), args


def _hessian(jnp, lax, lib, np):
    def f(x):
        return jnp.sum(jnp.sin(x) * x ** 2) + jnp.prod(jnp.cos(x[:3]))
    return lib.hessian(f), (np.linspace(0.1, 1.0, 8),)


def _scan(jnp, lax, lib, np):
    def f(c0, xs):
        def body(c, x):
            c = c * 0.9 + jnp.sin(x)
            return c, jnp.sum(c)
        return lax.scan(body, c0, xs)
    return f, (np.zeros(16), np.linspace(0, 1, 100 * 16).reshape(100, 16))


def _long_scan(jnp, lax, lib, np):
    def f(c0, xs):
        def body(c, x):
            c = c * 0.9 + jnp.sin(x)
            return c, jnp.sum(c)
        return lax.scan(body, c0, xs)
    return f, (np.zeros(16), np.linspace(0, 1, 10_000 * 16).reshape(10_000, 16))


def _while(jnp, lax, lib, np):
    def f(a):  # Newton's square root, to convergence
        def cond(s):
            return jnp.max(jnp.abs(s[0] * s[0] - a)) > 1e-12

        def body(s):
            x, k = s
            return 0.5 * (x + a / x), k + 1
        return lax.while_loop(cond, body, (a + 1.0, 0))
    return f, (np.linspace(1.0, 4.0, 32),)


def _fori(jnp, lax, lib, np):
    def f(x):
        return lax.fori_loop(0, 100, lambda i, v: v * 0.5 + jnp.cos(v), x)
    return f, (np.linspace(0, 1, 64),)


def _reduction(jnp, lax, lib, np):
    def f(x):
        return jnp.sum(x, axis=0) + jnp.max(x, axis=1) - jnp.mean(x * x)
    return f, (np.linspace(0, 1, 100 * 100).reshape(100, 100),)


def _matmul(jnp, lax, lib, np):
    rng = np.random.default_rng(1)
    a, b, c = (rng.standard_normal((64, 64)) for _ in range(3))

    def f(a, b, c, v):
        return jnp.sum(((a @ b) @ c) @ v)
    return f, (a, b, c, rng.standard_normal(64))


def _softmax(jnp, lax, lib, np):
    def f(x):
        m = jnp.max(x, axis=-1, keepdims=True)
        lse = m + jnp.log(jnp.sum(jnp.exp(x - m), axis=-1, keepdims=True))
        return jnp.exp(x - lse), lse
    return f, (np.linspace(-3, 3, 8 * 50).reshape(8, 50),)


def _vmap(jnp, lax, lib, np):
    rng = np.random.default_rng(2)
    w = rng.standard_normal((20, 20))

    def per_row(v):
        return jnp.dot(w, v) + jnp.sin(v)
    return lib.vmap(per_row), (rng.standard_normal((32, 20)),)


CASES = {
    "elementwise chain": _elementwise, "MLP loss": _mlp_loss, "MLP value_and_grad": _mlp_grad,
    "Hessian": _hessian, "scan": _scan, "while_loop": _while, "fori_loop": _fori,
    "reduction": _reduction, "matmul chain": _matmul, "softmax/logsumexp": _softmax,
    "vmap": _vmap, "scan, 10,000 steps": _long_scan,
}


def child(lib_name: str, case: str) -> None:
    """In a fresh process: time the import and the first call; print one JSON line."""
    import numpy as np
    t0 = time.perf_counter()
    if lib_name == "jax":
        import jax
        import jax.numpy as jnp
        from jax import lax
        lib = jax
    else:
        import fgrad as lib
        import fgrad.lax as lax
        import fgrad.numpy as jnp
    t1 = time.perf_counter()
    fn, args = CASES[case](jnp, lax, lib, np)
    t2 = time.perf_counter()
    out = lib.jit(fn)(*args)
    lib.block_until_ready(out)
    t3 = time.perf_counter()
    print(json.dumps({"import": t1 - t0, "first": t3 - t2, "numba": "numba" in sys.modules,
                      "llvmlite": "llvmlite" in sys.modules}))


# Bytecode for the children, as an installed package has it (pip compiles it at install
# time): where PYTHONDONTWRITEBYTECODE is set, fgrad's import would otherwise compile its
# sources in every process while JAX's come with .pyc files. Set up by main().
_PYC: dict = {}


def spawn(lib_name: str, case: str, cache: str | None, source: str | None = None) -> dict:
    """One child's result; `source`: a folder whose fgrad package the child imports instead."""
    env = {**os.environ, **ONE_THREAD, **_PYC}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if cache is not None:
        env["FGRAD_CACHE_DIR"] = cache
    if source is not None:
        env["PYTHONPATH"] = os.pathsep.join([source, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    res = subprocess.run([sys.executable, __file__, "--child", lib_name, case], env=env,
                         capture_output=True, text=True, check=False)
    if res.returncode != 0:
        raise RuntimeError(f"{lib_name} {case!r} failed:\n{res.stderr}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def measure(case: str, runs: int, skip_jax: bool, baseline: str | None = None) -> dict:
    """{config: [result per run]} for configs fgrad cold, fgrad warm, jax, and with a
    `baseline` source folder its fgrad cold and warm ("base cold", "base warm"); runs
    interleaved, so that a loaded machine slows every configuration alike."""
    sources = {"": None} if baseline is None else {"": None, "base ": baseline}
    out: dict = {f"{p}{k}": [] for p in sources for k in ("cold", "warm")}
    out["jax"] = []
    scratch = tempfile.mkdtemp(prefix="fgrad-cases-")
    try:
        for p, src in sources.items():
            spawn("fgrad", case, os.path.join(scratch, f"{p}warm"), src)  # fills the warm cache
        for k in range(runs):
            for p, src in sources.items():
                out[f"{p}cold"].append(spawn("fgrad", case, os.path.join(scratch, f"{p}cold{k}"), src))
                out[f"{p}warm"].append(spawn("fgrad", case, os.path.join(scratch, f"{p}warm"), src))
            if not skip_jax:
                out["jax"].append(spawn("jax", case, None))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return out


def _med(rows: list, key: str) -> float:
    return statistics.median(r[key] if key != "total" else r["import"] + r["first"] for r in rows) * 1e3


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", nargs="*", help="case names (default: all)")
    ap.add_argument("--skip-jax", action="store_true")
    ap.add_argument("--baseline", metavar="DIR",
                    help="also measure the fgrad package in DIR (e.g. an older commit's `git archive`), interleaved")
    ap.add_argument("--child", nargs=2, metavar=("LIB", "CASE"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child(*a.child)
        return
    cases = a.only or list(CASES)
    unknown = [c for c in cases if c not in CASES]
    if unknown:
        raise SystemExit(f"unknown case(s) {unknown}; choose from {list(CASES)}")
    scratch = tempfile.mkdtemp(prefix="fgrad-cold-start-")
    try:
        _PYC["PYTHONPYCACHEPREFIX"] = os.path.join(scratch, "pyc")
        for lib_name in ("fgrad", "jax"):  # fills the bytecode cache
            spawn(lib_name, cases[0], os.path.join(scratch, "kernels") if lib_name == "fgrad" else None)
        report(cases, a.runs, a.skip_jax, a.baseline)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def report(cases: list[str], runs: int, skip_jax: bool, baseline: str | None) -> None:
    """Measure each case and print the table (with the baseline's columns when given) and a
    summary of the ratios to jax.jit."""
    print(f"median of {runs} fresh processes, ms; load average {os.getloadavg()[0]:.2f} at start\n")
    cols = ["function", "fgrad import", "cold first", "warm first"]
    if baseline:
        cols += ["baseline cold first", "baseline warm first"]
    cols += ["jax import", "jax first", "cold/jax first", "warm/jax first", "cold/jax total"]
    if baseline:
        cols += ["baseline cold/jax", "baseline warm/jax"]
    cols.append("numba imported (cold/warm)")
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    keys = ["cold", "warm", "total"] + (["base cold", "base warm"] if baseline else [])
    ratios: dict = {k: [] for k in keys}
    for case in cases:
        r = measure(case, runs, skip_jax, baseline)
        cold, warm = _med(r["cold"], "first"), _med(r["warm"], "first")
        cells = [case, f"{_med(r['cold'], 'import'):.0f}", f"{cold:.1f}", f"{warm:.1f}"]
        if baseline:
            cells += [f"{_med(r['base cold'], 'first'):.1f}", f"{_med(r['base warm'], 'first'):.1f}"]
        if r["jax"]:
            jfirst = _med(r["jax"], "first")
            got = {"cold": cold / jfirst, "warm": warm / jfirst,
                   "total": _med(r["cold"], "total") / _med(r["jax"], "total")}
            if baseline:
                got["base cold"] = _med(r["base cold"], "first") / jfirst
                got["base warm"] = _med(r["base warm"], "first") / jfirst
            for k, v in got.items():
                ratios[k].append(v)
            cells += [f"{_med(r['jax'], 'import'):.0f}", f"{jfirst:.1f}"] + [f"{got[k]:.2f}x" for k in keys]
        else:
            cells += ["-"] * (2 + len(keys))
        cells.append(f"{sum(x['numba'] for x in r['cold'])}/{sum(x['numba'] for x in r['warm'])} of {runs}")
        print("| " + " | ".join(cells) + " |", flush=True)
    if ratios["cold"]:
        print("\nratios to jax.jit's first call over the cases (geometric mean; worst): " + "; ".join(
            f"{k} {statistics.geometric_mean(v):.2f}x, {max(v):.2f}x" for k, v in ratios.items()))


if __name__ == "__main__":
    main()
