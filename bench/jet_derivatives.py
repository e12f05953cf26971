"""k-th derivative of f(x) = sin(x) exp(-x^2) at one point, k = 4, 8, 16: Taylor mode
against nested reverse mode (issue 25, item 3).

Methods, one thread each, float64:
  * fgrad.derivatives(f, k)      one jet: every derivative 0..k at once (eager and fgrad.jit);
  * nested fgrad.grad, k deep    the k-th derivative only (eager and fgrad.jit);
  * nested jax.grad under jax.jit, k deep;
  * jax.experimental.jet         series (1, 0, ..., 0), eager and under jax.jit.
Reported: time per call (median; a jitted function's first call, its tracing and
compilation, separately) and the IR size, the number of equations of the traced program
(make_jaxpr, nested jaxprs counted). Results are cross-checked against fgrad.derivatives.
Each measurement runs in its own process with a time limit (nested grad grows as 2^k): one
past it is reported as such. Run: python bench/jet_derivatives.py [--limit SECONDS]
"""
import os

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

X = 0.7
ORDERS = (4, 8, 16)
METHODS = ("fgrad.derivatives", "fgrad.jit(derivatives)", "fgrad nested grad",
           "fgrad.jit(nested grad)", "jax.jit(nested grad)", "jax jet", "jax.jit(jax jet)")


def _time_per_call(fn, budget: float = 1.0, max_calls: int = 200) -> float:
    times = []
    start = time.perf_counter()
    while len(times) < max_calls and (time.perf_counter() - start < budget or len(times) < 3):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def _count_fgrad(jaxpr) -> int:
    from fgrad.core.ir import ClosedJaxpr, Jaxpr
    n = 0
    for e in jaxpr.eqns:
        n += 1
        for p in e.params.values():
            for sub in (p if isinstance(p, (tuple, list)) else (p,)):
                if isinstance(sub, ClosedJaxpr):
                    n += _count_fgrad(sub.jaxpr)
                elif isinstance(sub, Jaxpr):
                    n += _count_fgrad(sub)
    return n


def _count_jax(jaxpr) -> int:
    import jax.extend.core as jcore
    n = 0
    for e in jaxpr.eqns:
        n += 1
        for p in e.params.values():
            for sub in (p if isinstance(p, (tuple, list)) else (p,)):
                if isinstance(sub, jcore.ClosedJaxpr):
                    n += _count_jax(sub.jaxpr)
                elif isinstance(sub, jcore.Jaxpr):
                    n += _count_jax(sub)
    return n


def measure(method: str, k: int) -> dict:
    """One method at one order: {value, first_s, per_call_s, eqns}."""
    if method.startswith("fgrad"):
        import fgrad
        import fgrad.numpy as fnp

        def f(x):
            return fnp.sin(x) * fnp.exp(-x ** 2)
        if "derivatives" in method:
            fn = lambda x: fgrad.derivatives(f, k)(x)[k]  # noqa: E731
        else:
            fn = f
            for _ in range(k):
                fn = fgrad.grad(fn)
        t = time.perf_counter()
        eqns = _count_fgrad(fgrad.make_jaxpr(fn)(X).jaxpr)
        trace_s = time.perf_counter() - t
        if "jit" in method:
            fn = fgrad.jit(fn)
        t = time.perf_counter()
        value = float(fn(X))
        first_s = time.perf_counter() - t
        return dict(value=value, first_s=first_s, trace_s=trace_s, per_call_s=_time_per_call(lambda: fn(X)),
                    eqns=eqns)
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    from jax.experimental import jet

    def f(x):
        return jnp.sin(x) * jnp.exp(-x ** 2)
    if "jet" in method:
        def fn(x):
            one, zero = jnp.ones_like(x), jnp.zeros_like(x)
            return jet.jet(f, (x,), ((one,) + (zero,) * (k - 1),))[1][k - 1]
    else:
        fn = f
        for _ in range(k):
            fn = jax.grad(fn)
    x = jnp.asarray(X)
    t = time.perf_counter()
    eqns = _count_jax(jax.make_jaxpr(fn)(x).jaxpr)
    trace_s = time.perf_counter() - t
    if "jit" in method:
        fn = jax.jit(fn)
    t = time.perf_counter()
    value = float(fn(x))
    first_s = time.perf_counter() - t
    return dict(value=value, first_s=first_s, trace_s=trace_s,
                per_call_s=_time_per_call(lambda: fn(x).block_until_ready()), eqns=eqns)


def _run_one(method: str, k: int, limit: float) -> dict:
    try:
        out = subprocess.run([sys.executable, __file__, "--one", method, str(k)], capture_output=True,
                             text=True, timeout=limit)
    except subprocess.TimeoutExpired:
        return {"timeout": limit}
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def _fmt_time(s: float) -> str:
    return f"{s * 1e6:.0f} us" if s < 1e-3 else f"{s * 1e3:.1f} ms" if s < 1 else f"{s:.1f} s"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--one", nargs=2, metavar=("METHOD", "K"))
    ap.add_argument("--limit", type=float, default=60.0, help="seconds allowed per measurement")
    args = ap.parse_args()
    if args.one:
        print(json.dumps(measure(args.one[0], int(args.one[1]))))
        return
    print(f"f(x) = sin(x) exp(-x^2) at x = {X}; per call: median; first: the first call of the "
          f"function (jit: tracing and compilation); eqns: traced program's equations; "
          f"limit {args.limit:.0f} s per measurement\n")
    print("| k | method | per call | first call | IR eqns | d^k f |")
    print("|---|---|---|---|---|---|")
    for k in ORDERS:
        ref = None
        for method in METHODS:
            r = _run_one(method, k, args.limit)
            if "timeout" in r:
                print(f"| {k} | {method} | over {r['timeout']:.0f} s (stopped) | | | |", flush=True)
                continue
            if "error" in r:
                print(f"| {k} | {method} | error: {r['error'][:80]} | | | |", flush=True)
                continue
            ref = r["value"] if ref is None else ref
            agree = "" if abs(r["value"] - ref) <= 1e-8 * max(1.0, abs(ref)) else " (DIFFERS)"
            print(f"| {k} | {method} | {_fmt_time(r['per_call_s'])} | {_fmt_time(r['first_s'])} | "
                  f"{r['eqns']} | {r['value']:.10g}{agree} |", flush=True)


if __name__ == "__main__":
    main()
