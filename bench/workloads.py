"""Issue 10's workloads, fgrad side by side with PyTorch, JAX and HIPS autograd, in one command.

    python bench/workloads.py [--only W1,W4] [--quick] [--rounds N] [--cpu N] [--write]
                              [--cold-cache] [--mem-cap MIB] [--timeout S]

W1 grad of a 200-op chain · W2 MLP step · W3 CNN step · W4 Hessian n=256 · W5 grad^4 and IR
sizes · W6 peak memory · W7 tracing 5,000 ops · W8 grad of a 20-step sin/tanh chain over n = 10^3..10^6,
float64 and float32 · E200 the 200-op chain at n=10^4, jit vs eager
(definitions and method: /work/shared/bench/WORKLOADS.md). Each workload runs in its own
process, pinned to one core with one thread per library (wl_harness); W6 additionally runs
each library in a fresh process. Markdown goes to stdout; --write also replaces the marked
section of bench/RESULTS.md. Progress goes to stderr. The exit status is 1 when an
implementation disagreed with the reference, failed, or a workload did not finish.

Modules: wl_harness (pinning, timing, cross-checks), wl_libs (library imports),
wl_calculus (W1, W4, W5, W7, E200), wl_training (W2, W3), wl_memory (W6), wl_throughput (W8),
wl_report (Markdown).
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# id -> (module, function); the order is the report's order.
WORKLOADS = {
    "W1": ("wl_calculus", "w1"),
    "W2": ("wl_training", "w2"),
    "W3": ("wl_training", "w3"),
    "W4": ("wl_calculus", "w4"),
    "W5": ("wl_calculus", "w5"),
    "W6": ("wl_memory", "w6"),
    "W7": ("wl_calculus", "w7"),
    "E200": ("wl_calculus", "e200"),
    "W8": ("wl_throughput", "w8"),
}


def _config(args):
    from wl_harness import Config
    if args.quick:
        cfg = Config(rounds=5, warmup=1, min_time=0.005, quick=True, probe_timeout=120)
    else:
        cfg = Config()
    if args.rounds:
        cfg.rounds = args.rounds
    if args.mem_cap:
        cfg.mem_cap_mib = args.mem_cap
    return cfg


def run_worker(args) -> None:
    """Child process: pin first (before NumPy loads), then run one workload into a JSON file."""
    from wl_harness import pin_process
    pin_process(args.cpu)
    import importlib

    import wl_libs
    module, fn = WORKLOADS[args.worker]
    t0 = time.perf_counter()
    result = getattr(importlib.import_module(module), fn)(_config(args))
    result["wall_s"] = time.perf_counter() - t0
    # W6's libraries load in its probes, which report their versions in the rows' place
    result["versions"] = {**wl_libs.versions(), **result.get("versions", {})}
    with open(args.result, "w") as f:
        json.dump(result, f)


def _spawn(wid: str, args, timeout: float) -> dict:
    with tempfile.NamedTemporaryFile("r", suffix=".json", prefix=f"wl_{wid}_") as tmp, \
            tempfile.TemporaryDirectory(prefix="wl_cache_") as cache:
        env = dict(os.environ)
        if args.cold_cache:  # fgrad jit's first calls then compile their kernels instead of loading them
            env["FGRAD_CACHE_DIR"] = cache
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", wid, "--result", tmp.name,
               "--cpu", str(args.cpu)]
        cmd += ["--quick"] if args.quick else []
        cmd += ["--rounds", str(args.rounds)] if args.rounds else []
        cmd += ["--mem-cap", str(args.mem_cap)] if args.mem_cap else []
        try:
            # the child's stdout joins our stderr: stdout carries only the final Markdown
            proc = subprocess.run(cmd, stdout=sys.stderr, timeout=timeout, env=env, check=False)
        except subprocess.TimeoutExpired:
            return {"id": wid, "error": f"timed out after {timeout:.0f} s", "rows": []}
        if proc.returncode != 0:
            return {"id": wid, "error": f"worker exited with status {proc.returncode} (see stderr)", "rows": []}
        return json.load(tmp)


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _loadavg() -> str:
    try:
        with open("/proc/loadavg") as f:
            return f.read().split()[0]
    except OSError:
        return "?"


def _header(results: dict, args, cfg, wall: float, load: tuple) -> list[str]:
    versions = {}
    for r in results.values():
        versions.update(r.get("versions", {}))
    names = {"python": "Python", "numpy": "NumPy", "torch": "PyTorch", "jax": "JAX", "autograd": "autograd",
             "numba": "Numba", "fgrad": "fgrad"}
    vers = ", ".join(f"{names[k]} {v}" for k, v in versions.items() if k in names)
    mode = "--quick" if args.quick else "default"
    return [
        f"## Issue 10 — workloads side by side (`python bench/workloads.py{' --quick' if args.quick else ''}`)",
        "",
        (f"{datetime.date.today().isoformat()}, {_cpu_model()}, {os.cpu_count()} CPUs, one core (cpu {args.cpu}) "
         f"and one thread per library; {vers}. Mode {mode}: {cfg.rounds} interleaved rounds, each repetition "
         f"at least {cfg.min_time * 1e3:g} ms; fgrad's on-disk kernel cache "
         f"{'empty per workload (--cold-cache)' if args.cold_cache else 'as found'}; {wall:.0f} s in all; "
         f"load average {load[0]} at the start, {load[1]} at the end (other work on the machine shares the "
         "pinned core)."),
        ("Ratio = median over rounds of (fgrad time / anchor time in the same round); absolute times drift "
         "between runs, ratios are what to track. First call includes tracing and compiling (and, in a "
         "library's first row, its lazy initialisation). Every implementation's result was checked against "
         "the reference before timing. W6 ratios in the target table are the larger of the first- and "
         "second-call ratios."),
    ]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", help="comma-separated workload ids, e.g. W1,W4 (also E200)")
    ap.add_argument("--quick", action="store_true", help="fewer, shorter rounds; W6 on 2^20 elements")
    ap.add_argument("--rounds", type=int, help="interleaved timing rounds (default 15, quick 5)")
    ap.add_argument("--cpu", type=int, default=max(os.sched_getaffinity(0)), help="core to pin to")
    ap.add_argument("--write", action="store_true", help="replace the workloads section of bench/RESULTS.md")
    ap.add_argument("--timeout", type=float, help="seconds per workload (default 900, quick 300)")
    ap.add_argument("--cold-cache", action="store_true",
                    help="give each workload an empty fgrad kernel cache (FGRAD_CACHE_DIR)")
    ap.add_argument("--mem-cap", type=float, help="W6: stop a probe above this many MiB (default 8192)")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--result", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        run_worker(args)
        return 0

    ids = list(WORKLOADS)
    if args.only:
        wanted = [w.strip().upper() for w in args.only.split(",") if w.strip()]
        unknown = [w for w in wanted if w not in WORKLOADS]
        if unknown:
            ap.error(f"unknown workload {', '.join(unknown)}; choose from {', '.join(WORKLOADS)}")
        ids = [w for w in ids if w in wanted]
    timeout = args.timeout or (300 if args.quick else 900)
    import wl_report

    results, t0, load0 = {}, time.perf_counter(), _loadavg()
    for wid in ids:
        print(f"== {wid}", file=sys.stderr, flush=True)
        results[wid] = _spawn(wid, args, timeout)
    markdown = wl_report.document(results, _header(results, args, _config(args), time.perf_counter() - t0,
                                                     (load0, _loadavg())))
    print(markdown)
    if args.write:
        wl_report.write_section(os.path.join(HERE, "RESULTS.md"), markdown)
        print("wrote the workloads section of bench/RESULTS.md", file=sys.stderr)
    bad = [f"{wid}: {r['error']}" for wid, r in results.items() if r.get("error")]
    bad += [f"{wid} / {row['name']}: {row['status']}: {row['detail']}" for wid, r in results.items()
            for row in r["rows"] if row["status"] in ("wrong", "error")]
    for line in bad:
        print("FAILED " + line, file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
