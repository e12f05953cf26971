"""Issue 28's scaling curves, as numbers (bench/scaling.json) and plots (bench/plots/).

    python bench/scaling.py [--quick] [--only size,order,memory] [--cpu N] [--rounds N]
                            [--cold-cache] [--out DIR] [--profile-order K]

1. size: the W8 chain's gradient (wl_throughput: grad of sum of 20 steps of
   `x = sin(x)*1.01 + tanh(x)*0.5`, float64) at n = 10 ... 10^7, fgrad eager and jit beside
   PyTorch eager `.backward()` and jax.jit(grad).
2. order: the k-th derivative of W5's sin(x) exp(-x^2) at 0.7 (wl_calculus), k = 1 ... 8:
   fgrad eager and jit, PyTorch create_graph nesting, jax.jit of the nested grad; per call,
   first call, and the size of each library's program for it (fgrad's and JAX's jaxpr, JAX's
   jaxpr after merging common subexpressions, XLA's optimised HLO, PyTorch's autograd graph),
   plus a cProfile of fgrad's eager k-th derivative.
3. memory: W6's probe (wl_memory, a fresh process per point, peak = VmHWM - baseline) on d
   layers of tanh(1.01 x), 2^20 float32, d = 10 ... 200.

The process pins itself to one core with one thread per library (wl_harness) before NumPy
loads; timings are interleaved rounds whose order rotates (wl_harness.measure). The machine's
`uptime` is recorded at the start and the end. --quick is a smoke run (fewer sizes, orders,
depths and rounds) that writes into a temporary directory unless --out is given.
"""
from __future__ import annotations

import argparse
import datetime
import functools
import json
import os
import subprocess
import sys
import tempfile
import time

# Stdlib-only imports at the top: wl_harness.pin_process must run before NumPy loads.
import wl_harness
import wl_libs as L
import wl_memory
from wl_harness import Config, Impl, allclose, log, measure

HERE = os.path.dirname(os.path.abspath(__file__))

SIZE_EXPS = tuple(range(1, 8))            # n = 10 ... 10^7
ORDERS = tuple(range(1, 9))               # k = 1 ... 8
DEPTHS = (10, 20, 50, 100, 200)
MEM_SIZE = 2 ** 20
MEM_VARIANTS = ("fgrad eager", "fgrad jit", "PyTorch", wl_memory.PYTORCH_FIXED)
FAULTS_FROM = 10 ** 5  # sizes whose page faults per call are recorded (arrays of 0.8 MB and more)
QUICK = {"size": (1, 2, 3, 4, 5), "order": (1, 2, 4, 6, 8), "memory": (10, 50, 200)}

SIZE_ROWS = {"fgrad grad": "fgrad eager", "fgrad jit(grad)": "fgrad jit",
             "PyTorch eager .backward()": "PyTorch eager", "jax.jit(grad)": "jax.jit"}
ORDER_ROWS = ("fgrad eager", "fgrad jit", "PyTorch create_graph", "jax.jit")
X5 = 0.7  # W5's point


# --- helpers ----------------------------------------------------------------------------------

def uptime() -> str:
    """The `uptime` line (load averages over 1, 5 and 15 minutes)."""
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()
    except OSError:
        with open("/proc/loadavg") as f:
            return "loadavg " + f.read().strip()


def source_state() -> dict:
    """The commit measured, and the files under fgrad/ that differ from it in the working tree
    (a shared checkout may hold other work in progress: it is measured too)."""
    def git(*cmd):
        try:
            return subprocess.run(["git", *cmd], cwd=wl_harness.REPO, capture_output=True, text=True,
                                  check=False).stdout.strip()
        except OSError:
            return ""
    changed = [line.split(maxsplit=1)[1] for line in git("status", "--porcelain", "--", "fgrad").splitlines()]
    return {"commit": git("rev-parse", "--short", "HEAD"), "fgrad_changes_not_committed": changed}


def _row_dict(row) -> dict:
    """The numbers of a wl_harness.Row that the plots and tables need."""
    return {"status": row.status, "detail": row.detail, "first_s": row.first_s, "median_s": row.median_s,
            "min_s": row.min_s, "number": row.number, "times": row.times, "ratio": row.ratio,
            "anchor": row.anchor}


# --- curve 1: size ----------------------------------------------------------------------------

def size_curve(config: Config, exps) -> dict:
    """W8's four implementations, measured side by side at each n = 10^e."""
    import numpy as onp
    import wl_throughput as W8
    points = []
    for e in exps:
        n = 10 ** e
        x0 = onp.random.default_rng(0).uniform(-1, 1, n)
        log(f"size n={n:,}")
        cfg = W8._config_for(config, n)
        if n >= 10 ** 7:  # one call lasts seconds: one warm-up, the fewest rounds
            cfg.warmup, cfg.rounds = 1, 3
        rows = measure(W8._impls(x0), cfg, allclose(*W8.TOLERANCE["float64"]))
        point = {"n": n, "rounds": cfg.rounds, "rows": {SIZE_ROWS[r.name]: _row_dict(r) for r in rows}}
        if n >= FAULTS_FROM:
            point["os"] = {SIZE_ROWS[i.name]: os_cost(i) for i in W8._impls(x0)}
        points.append(point)
    return {"title": f"grad of sum({W8.STEPS} x [x = sin(x)*1.01 + tanh(x)*0.5]), float64",
            "points": points, "elementwise_ns": elementwise_costs()}


def os_cost(impl: Impl) -> dict:
    """What one warm call of `impl` costs the kernel: minor page faults (each a fresh page the
    kernel maps and zero-fills), system and user CPU seconds, and wall seconds (getrusage)."""
    import resource
    try:
        run = impl.factory()
        run = run[0] if isinstance(run, tuple) else run
        run()  # compiles, and warms the allocator as the timed rounds were
        r0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
        run()
        wall, r1 = time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_SELF)
    except Exception as exc:  # noqa: BLE001 -- reported in the JSON
        return {"error": wl_harness.describe_error(exc)}
    return {"minor_faults": r1.ru_minflt - r0.ru_minflt, "sys_s": r1.ru_stime - r0.ru_stime,
            "user_s": r1.ru_utime - r0.ru_utime, "wall_s": wall}


def elementwise_costs(n: int = 10 ** 6, repeat: int = 5) -> dict:
    """Nanoseconds per float64 element of the functions the chain's forward and backward call,
    in NumPy (what fgrad's eager impls call) and in PyTorch, best of `repeat`: the per-element
    floor of each eager library on this machine."""
    import numpy as onp
    t = L.torch()
    x = onp.random.default_rng(0).uniform(-1, 1, n)
    tx = t.from_numpy(x)
    cases = {"sin": (onp.sin, t.sin), "cos": (onp.cos, t.cos), "tanh": (onp.tanh, t.tanh),
             "multiply": (lambda v: v * 1.01, lambda v: v * 1.01), "add": (lambda v: v + v, lambda v: v + v)}
    out = {}
    for name, (np_fn, torch_fn) in cases.items():
        row = {}
        for lib, fn, arg in (("NumPy", np_fn, x), ("PyTorch", torch_fn, tx)):
            best = float("inf")
            for _ in range(repeat):
                t0 = time.perf_counter()
                fn(arg)
                best = min(best, time.perf_counter() - t0)
            row[lib] = best * 1e9 / n
        out[name] = row
    return out


# --- curve 2: derivative order ----------------------------------------------------------------

def _order_impls(k: int) -> list[Impl]:
    """wl_calculus's k-th derivative implementations (W5's at k = 4), the four this curve plots,
    renamed to the curve's labels."""
    from dataclasses import replace

    from wl_calculus import derivative_impls
    labels = {f"fgrad grad^{k}": "fgrad eager", f"fgrad jit(grad^{k})": "fgrad jit",
              f"PyTorch create_graph x{k}": "PyTorch create_graph", f"jax.jit(grad^{k})": "jax.jit"}
    return [replace(i, name=labels[i.name], anchor=labels.get(i.anchor))
            for i in derivative_impls(k, X5) if i.name in labels]


def count_after_cse(jaxpr, literal_type) -> int:
    """Equations left in a JAX-style jaxpr after merging equations that apply the same
    primitive with the same params to the same inputs, then dropping unused ones: what JAX's
    raw jaxpr would be with the clean-up fgrad's make_jaxpr does (and XLA does later).

    Args:
        jaxpr: a jaxpr with `.eqns` (each `.primitive.name`, `.invars`, `.outvars`, `.params`)
            and `.outvars`, fgrad's or JAX's.
        literal_type: that library's Literal class (an inline constant, keyed by value).

    Returns:
        The number of equations kept.
    """
    rep: dict[int, object] = {}
    seen: dict = {}
    kept = []
    for e in jaxpr.eqns:
        ins = [a if isinstance(a, literal_type) else rep.get(id(a), a) for a in e.invars]
        key = (e.primitive.name, len(e.outvars), repr(sorted(e.params.items())),
               tuple(("lit", repr(a.val)) if isinstance(a, literal_type) else id(a) for a in ins))
        hit = seen.get(key)
        if hit is not None:
            for o, h in zip(e.outvars, hit.outvars):
                rep[id(o)] = h
            continue
        seen[key] = e
        kept.append((e, ins))
    live = {id(rep.get(id(v), v)) for v in jaxpr.outvars if not isinstance(v, literal_type)}
    n = 0
    for e, ins in reversed(kept):
        if any(id(o) in live for o in e.outvars):
            n += 1
            live.update(id(a) for a in ins if not isinstance(a, literal_type))
    return n


def hlo_instructions(text: str) -> int:
    """Instructions in an optimised HLO module's text (fused computations included), less
    parameters: what XLA's compiled program executes."""
    n = 0
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("ROOT "):
            s = s[5:]
        if s.startswith("%") and " = " in s and "parameter(" not in s:
            n += 1
    return n


def _torch_nodes(t, k: int) -> int:
    """Autograd nodes reachable from the k-th create_graph derivative's grad_fn."""
    from wl_calculus import _f5
    x = t.tensor(X5, dtype=t.float64, requires_grad=True)
    y = _f5(t)(x)
    for _ in range(k):
        (y,) = t.autograd.grad(y, x, create_graph=True)
    seen, stack = set(), [y.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        stack.extend(nxt for nxt, _ in node.next_functions)
    return len(seen)


def program_sizes(k: int) -> dict:
    """The size of each library's program for the k-th derivative (see the module docstring)."""
    from wl_calculus import _f5, _nest
    out = {}
    fg, jax, t = L.fgrad(), L.jax(), L.torch()
    from fgrad.core.ir import Literal as FLiteral
    from jax.extend.core import Literal as JLiteral
    ours = fg.make_jaxpr(_nest(fg.grad, _f5(fg.numpy), k))(X5)
    out["fgrad jaxpr"] = len(ours.jaxpr.eqns)
    out["fgrad jaxpr, after CSE"] = count_after_cse(ours.jaxpr, FLiteral)
    theirs = jax.make_jaxpr(_nest(jax.grad, _f5(jax.numpy), k))(X5)
    out["JAX jaxpr"] = len(theirs.jaxpr.eqns)
    out["JAX jaxpr, after CSE"] = count_after_cse(theirs.jaxpr, JLiteral)
    compiled = jax.jit(_nest(jax.grad, _f5(jax.numpy), k)).lower(X5).compile()
    out["XLA HLO"] = hlo_instructions(compiled.as_text())
    out["PyTorch graph nodes"] = _torch_nodes(t, k)
    return out


def eager_profile(k: int, calls: int = 20, top: int = 8) -> dict:
    """cProfile of fgrad's eager k-th derivative: function calls per derivative and where the
    time goes (own time, the `top` heaviest functions)."""
    import cProfile
    import pstats

    import numpy as onp
    from wl_calculus import _f5, _nest
    fg = L.fgrad()
    g = _nest(fg.grad, _f5(fg.numpy), k)
    x0 = onp.asarray(X5)
    g(x0)
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(calls):
        g(x0)
    prof.disable()
    st = pstats.Stats(prof)
    # st.stats: (file, line, function) -> (primitive calls, calls, own time, cumulative time, callers)
    rows = sorted(st.stats.items(), key=lambda kv: -kv[1][2])[:top]
    binds = sum(v[1] for (file, _, name), v in st.stats.items() if name == "bind" and "fgrad" in file)
    return {"k": k, "calls": calls, "function_calls_per_derivative": st.total_calls / calls,
            "bind_calls_per_derivative": binds / calls, "profiled_s_per_derivative": st.total_tt / calls,
            "top": [{"function": f"{os.path.relpath(file, wl_harness.REPO) if file.startswith(wl_harness.REPO) else file}"
                                 f":{line}({name})",
                     "tottime_share": v[2] / max(st.total_tt, 1e-12), "calls_per_derivative": v[1] / calls}
                    for (file, line, name), v in rows]}


def order_curve(config: Config, orders, profile_k: int) -> dict:
    """The four implementations at each k, measured side by side, with program sizes."""
    points = []
    for k in orders:
        log(f"order k={k}")
        rows = measure(_order_impls(k), config, allclose(rtol=1e-8, atol=1e-10))
        try:
            sizes = program_sizes(k)
        except Exception as exc:  # noqa: BLE001 -- reported in the JSON, the timings stand
            sizes = {"error": wl_harness.describe_error(exc)}
        log(f"  program sizes: {sizes}")
        points.append({"k": k, "rows": {r.name: _row_dict(r) for r in rows}, "sizes": sizes})
    profiles = []
    for k in sorted({min(orders), profile_k} & set(orders)):
        profiles.append(eager_profile(k))
    return {"title": f"k-th derivative of sin(x) exp(-x^2) at {X5}, float64 scalar", "points": points,
            "eager_profiles": profiles}


# --- curve 3: memory against depth ------------------------------------------------------------

def probe_main(variant: str, size: int, depth: int, cpu: int, cap: float) -> None:
    """Child process: W6's probe with `depth` layers instead of wl_memory.LAYERS."""
    wl_harness.pin_process(cpu)
    # wl_memory's builders look `layers` up in their module when they run, with the layer
    # count as its default argument: rebinding the module's name changes the depth for them all.
    wl_memory.layers = functools.partial(wl_memory.layers, n=depth)
    print(json.dumps(wl_memory.probe(variant, size, cap)))


def memory_curve(config: Config, depths, cpu: int) -> dict:
    """One probe process per (depth, variant); gradients checked against PyTorch's."""
    points = []
    for d in depths:
        rows = {}
        for name in MEM_VARIANTS:
            t0 = time.perf_counter()
            cmd = [sys.executable, os.path.abspath(__file__), "--probe", name, str(MEM_SIZE), str(d), str(cpu),
                   str(config.mem_cap_mib)]
            try:
                proc = subprocess.run(cmd, env={**os.environ, **wl_memory.ENV.get(name, {})}, capture_output=True,
                                      text=True, timeout=config.probe_timeout, check=False)
                lines = proc.stdout.strip().splitlines()
                if proc.returncode or not lines:
                    tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
                    row = {"status": "error", "detail": f"probe exited {proc.returncode}: {tail[:200]}"}
                else:
                    row = json.loads(lines[-1])
            except subprocess.TimeoutExpired:
                row = {"status": "error", "detail": f"probe timed out after {config.probe_timeout} s"}
            row.pop("versions", None)
            rows[name] = row
            log(f"memory d={d} {name}: {row.get('first_mib', float('nan')):.0f} / "
                f"{row.get('second_mib', float('nan')):.0f} MiB ({row['status']}, {time.perf_counter() - t0:.1f} s)")
        ref = rows.get("PyTorch")
        for name, row in rows.items():
            if row["status"] == "ok" and ref and ref["status"] == "ok" and row is not ref:
                bad = wl_memory._check(ref["check"], row["check"])
                if bad:
                    row.update(status="wrong", detail=f"{bad} (vs PyTorch)")
                    log(f"  RESULT MISMATCH {name} at d={d}: {bad}")
        for row in rows.values():
            row.pop("check", None)
        points.append({"depth": d, "rows": rows})
    return {"title": f"peak memory, forward + backward of d layers of tanh(1.01 x), 2^{MEM_SIZE.bit_length() - 1} "
                     "float32", "array_mib": MEM_SIZE * 4 / wl_memory.MIB, "points": points}


# --- plots and tables -------------------------------------------------------------------------

STYLE = {"fgrad eager": ("tab:blue", "o", "-"), "fgrad jit": ("tab:orange", "s", "-"),
         "PyTorch eager": ("tab:red", "^", "--"), "PyTorch create_graph": ("tab:red", "^", "--"),
         "PyTorch": ("tab:red", "^", "--"), wl_memory.PYTORCH_FIXED: ("tab:pink", "v", ":"),
         "jax.jit": ("tab:green", "D", "--")}


def _series(points, key, name, field):
    xs, ys = [], []
    for p in points:
        row = p["rows"].get(name, {})
        if row.get("status") == "ok" and row.get(field) is not None:
            xs.append(p[key])
            ys.append(row[field])
    return xs, ys


def plot(results: dict, folder: str) -> list[str]:
    """Draw the curves present in `results` into `folder`; return the files written."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    os.makedirs(folder, exist_ok=True)
    written = []
    note = f"one core, one thread each; {results['date']}; load {results['load_start']} → {results['load_end']}"

    if "size" in results:
        pts = results["size"]["points"]
        fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4.8))
        for name in SIZE_ROWS.values():
            color, marker, ls = STYLE[name]
            xs, ys = _series(pts, "n", name, "median_s")
            a.plot(xs, [y * 1e3 for y in ys], color=color, marker=marker, ls=ls, label=name)
            b.plot(xs, [y * 1e9 / x for x, y in zip(xs, ys)], color=color, marker=marker, ls=ls, label=name)
        a.set(xscale="log", yscale="log", xlabel="n (float64 elements)", ylabel="time per gradient (ms)",
              title="grad of a 20-step sin/tanh chain")
        b.set(xscale="log", yscale="log", xlabel="n (float64 elements)", ylabel="time per element (ns)",
              title="the same, per element")
        for ax in (a, b):
            ax.grid(True, which="both", alpha=0.3)
            ax.legend()
        fig.text(0.5, 0.01, note, ha="center", va="bottom", fontsize=8)
        written.append(_save(fig, folder, "scaling_size.png"))

    if "order" in results:
        pts = results["order"]["points"]
        fig, (a, b, c) = plt.subplots(1, 3, figsize=(16, 4.8))
        for name in ORDER_ROWS:
            color, marker, ls = STYLE[name]
            xs, ys = _series(pts, "k", name, "median_s")
            a.plot(xs, [y * 1e6 for y in ys], color=color, marker=marker, ls=ls, label=name)
            xs, ys = _series(pts, "k", name, "first_s")
            b.plot(xs, [y * 1e3 for y in ys], color=color, marker=marker, ls=ls, label=name)
        a.set(yscale="log", xlabel="derivative order k", ylabel="time per call (µs)",
              title="k-th derivative of sin(x)·exp(-x²), per call")
        b.set(yscale="log", xlabel="derivative order k", ylabel="first call (ms)",
              title="first call (trace + compile for the jits)")
        sizes = [p for p in pts if "error" not in p["sizes"]]
        size_style = {"fgrad jaxpr": ("tab:blue", "o", "-"), "JAX jaxpr": ("tab:green", "D", "-"),
                      "JAX jaxpr, after CSE": ("tab:green", "d", ":"), "XLA HLO": ("tab:olive", "x", "--"),
                      "PyTorch graph nodes": ("tab:red", "^", "--")}
        for label, (color, marker, ls) in size_style.items():
            c.plot([p["k"] for p in sizes], [p["sizes"][label] for p in sizes], color=color, marker=marker,
                   ls=ls, label=label)
        c.set(yscale="log", xlabel="derivative order k", ylabel="equations / instructions / nodes",
              title="program size of the k-th derivative")
        for ax in (a, b, c):
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=8)
        fig.text(0.5, 0.01, note, ha="center", va="bottom", fontsize=8)
        written.append(_save(fig, folder, "scaling_order.png"))

    if "memory" in results:
        mem = results["memory"]
        pts = mem["points"]
        fig, ax = plt.subplots(figsize=(7, 4.8))
        for name in MEM_VARIANTS:
            color, marker, ls = STYLE.get(name, ("tab:orange", "s", "-"))
            xs, ys = _series(pts, "depth", name, "first_mib")
            ax.plot(xs, ys, color=color, marker=marker, ls=ls, label=f"{name}, first call")
            xs, ys = _series(pts, "depth", name, "second_mib")
            ax.plot(xs, ys, color=color, marker=marker, ls=ls, alpha=0.45, mfc="none",
                    label=f"{name}, second call")
        ds = [p["depth"] for p in pts]
        ax.plot(ds, [d * mem["array_mib"] for d in ds], color="gray", ls="-.", label="d arrays of the input's size")
        ax.set(xscale="log", yscale="log", xlabel="depth d (layers)", ylabel="peak memory over baseline (MiB)",
               title="forward + backward, 2^20 float32")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
        fig.text(0.5, 0.01, note, ha="center", va="bottom", fontsize=8)
        written.append(_save(fig, folder, "scaling_memory.png"))
    return written


def _save(fig, folder: str, name: str) -> str:
    path = os.path.join(folder, name)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    # no timestamp in the PNG metadata: an unchanged plot gives unchanged bytes
    fig.savefig(path, dpi=90, metadata={"Software": None})
    import matplotlib.pyplot as plt
    plt.close(fig)
    return path


def _fmt(seconds, scale=1e3, digits=3) -> str:
    return "–" if seconds is None else f"{seconds * scale:.{digits}g}"


def markdown(results: dict) -> str:
    """Compact tables of the numbers (the section's prose is written by hand)."""
    out = []
    if "size" in results:
        out += ["| n | fgrad eager ms | PyTorch ms | eager ratio | fgrad jit ms | jax.jit ms | jit ratio |",
                "|---|---|---|---|---|---|---|"]
        for p in results["size"]["points"]:
            r = p["rows"]
            ratio = lambda name: f"{r[name]['ratio']:.2f}x" if r.get(name, {}).get("ratio") else "–"  # noqa: E731
            med = lambda name: _fmt(r.get(name, {}).get("median_s"))  # noqa: E731
            out.append(f"| 1e{len(str(p['n'])) - 1} | {med('fgrad eager')} | {med('PyTorch eager')} | "
                       f"{ratio('fgrad eager')} | {med('fgrad jit')} | {med('jax.jit')} | {ratio('fgrad jit')} |")
        out.append("")
        with_os = [p for p in results["size"]["points"] if "os" in p]
        if with_os:
            names = list(SIZE_ROWS.values())
            out += ["| n | " + " | ".join(f"{n}: faults, sys / user s" for n in names) + " |",
                    "|---" * (len(names) + 1) + "|"]
            for p in with_os:
                cells = [f"{c['minor_faults']:,}, {c['sys_s']:.2f} / {c['user_s']:.2f}" if "error" not in c else "error"
                         for c in (p["os"][n] for n in names)]
                out.append(f"| 1e{len(str(p['n'])) - 1} | " + " | ".join(cells) + " |")
            out.append("")
        costs = results["size"]["elementwise_ns"]
        out += ["| ns per float64 element, n = 10^6 | " + " | ".join(costs) + " |", "|---" * (len(costs) + 1) + "|"]
        for lib in ("NumPy", "PyTorch"):
            out.append(f"| {lib} | " + " | ".join(f"{c[lib]:.2g}" for c in costs.values()) + " |")
        out.append("")
    if "order" in results:
        out += ["| k | fgrad eager µs | PyTorch µs | eager ratio | fgrad jit µs | jax.jit µs | jit ratio | "
                "first call ms: fgrad jit / jax.jit | fgrad jaxpr | JAX jaxpr (after CSE) | XLA HLO | PyTorch nodes |",
                "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for p in results["order"]["points"]:
            r, s = p["rows"], p["sizes"]
            ratio = lambda name: f"{r[name]['ratio']:.2f}x" if r.get(name, {}).get("ratio") else "–"  # noqa: E731
            med = lambda name: _fmt(r.get(name, {}).get("median_s"), 1e6)  # noqa: E731
            first = lambda name: _fmt(r.get(name, {}).get("first_s"), 1e3, 2)  # noqa: E731
            out.append(f"| {p['k']} | {med('fgrad eager')} | {med('PyTorch create_graph')} | {ratio('fgrad eager')} | "
                       f"{med('fgrad jit')} | {med('jax.jit')} | {ratio('fgrad jit')} | "
                       f"{first('fgrad jit')} / {first('jax.jit')} | {s.get('fgrad jaxpr', '–')} | "
                       f"{s.get('JAX jaxpr', '–')} ({s.get('JAX jaxpr, after CSE', '–')}) | {s.get('XLA HLO', '–')} | "
                       f"{s.get('PyTorch graph nodes', '–')} |")
        out.append("")
    if "memory" in results:
        out += ["| d | " + " | ".join(f"{n} MiB (1st / 2nd)" for n in MEM_VARIANTS) + " |",
                "|---" * (len(MEM_VARIANTS) + 1) + "|"]
        for p in results["memory"]["points"]:
            cells = []
            for n in MEM_VARIANTS:
                row = p["rows"].get(n, {})
                cells.append(f"{row['first_mib']:.0f} / {row['second_mib']:.0f}" if row.get("status") == "ok"
                             else row.get("status", "–"))
            out.append(f"| {p['depth']} | " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)


# --- driver -----------------------------------------------------------------------------------

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smoke run: fewer points and rounds (< 3 minutes)")
    ap.add_argument("--only", help="comma-separated curves among size, order, memory (default: all three)")
    ap.add_argument("--cpu", type=int, default=max(os.sched_getaffinity(0)), help="core to pin to")
    ap.add_argument("--rounds", type=int, help="interleaved timing rounds (default 15, a third of them "
                                                 "from n = 10^6; quick 3)")
    ap.add_argument("--cold-cache", action="store_true",
                    help="an empty fgrad kernel cache (FGRAD_CACHE_DIR) for the whole run and its probes")
    ap.add_argument("--out", help="folder for scaling.json and the plots (default: bench/scaling.json and "
                                  "bench/plots/; with --quick a temporary folder)")
    ap.add_argument("--profile-order", type=int, default=8, help="k of the cProfile'd eager derivative")
    ap.add_argument("--probe", nargs=5, metavar=("VARIANT", "SIZE", "DEPTH", "CPU", "CAP"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.probe:
        v, size, depth, cpu, cap = args.probe
        probe_main(v, int(size), int(depth), int(cpu), float(cap))
        return 0
    curves = ["size", "order", "memory"]
    if args.only:
        wanted = [c.strip().lower() for c in args.only.split(",") if c.strip()]
        unknown = sorted(set(wanted) - set(curves))
        if unknown:
            ap.error(f"unknown curve {', '.join(unknown)}; choose from {', '.join(curves)}")
        curves = [c for c in curves if c in wanted]
    if args.cold_cache:
        os.environ["FGRAD_CACHE_DIR"] = tempfile.mkdtemp(prefix="fgrad_scaling_cache_")
    if args.out:
        json_path, plot_dir = os.path.join(args.out, "scaling.json"), args.out
    elif args.quick:
        tmp = tempfile.mkdtemp(prefix="fgrad_scaling_")
        json_path, plot_dir = os.path.join(tmp, "scaling.json"), tmp
    else:
        json_path, plot_dir = os.path.join(HERE, "scaling.json"), os.path.join(HERE, "plots")

    wl_harness.pin_process(args.cpu)
    from workloads import _cpu_model
    config = Config(rounds=args.rounds or (3 if args.quick else 15), warmup=1 if args.quick else 2,
                    min_time=0.005 if args.quick else 0.02, quick=args.quick, probe_timeout=120)
    t0 = time.perf_counter()
    results = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
               "machine": f"{_cpu_model()}, {os.cpu_count()} CPUs, pinned to cpu {args.cpu}",
               "uptime_start": uptime(), "mode": "quick" if args.quick else "full", "rounds": config.rounds,
               "fgrad_cache": "empty (--cold-cache)" if args.cold_cache else "as found", "source": source_state()}
    results["load_start"] = results["uptime_start"].split("load average:")[-1].strip()
    log(f"start: {results['uptime_start']}")
    if "size" in curves:
        results["size"] = size_curve(config, QUICK["size"] if args.quick else SIZE_EXPS)
    if "order" in curves:
        results["order"] = order_curve(config, QUICK["order"] if args.quick else ORDERS, args.profile_order)
    if "memory" in curves:
        results["memory"] = memory_curve(config, QUICK["memory"] if args.quick else DEPTHS, args.cpu)
    results["uptime_end"] = uptime()
    results["load_end"] = results["uptime_end"].split("load average:")[-1].strip()
    results["wall_s"] = time.perf_counter() - t0
    results["versions"] = L.versions()
    log(f"end: {results['uptime_end']} ({results['wall_s']:.0f} s)")
    os.makedirs(os.path.dirname(json_path), exist_ok=True)
    with open(json_path, "w") as f:
        json.dump(results, f, indent=1)
    written = plot(results, plot_dir)
    print(markdown(results))
    log("wrote " + ", ".join([json_path, *written]))
    bad = [f"{c} {p.get('n', p.get('k', p.get('depth')))} {name}: {row['status']} {row.get('detail', '')}"
           for c in curves for p in results[c]["points"] for name, row in p["rows"].items()
           if row.get("status") not in ("ok", "n/a")]
    for line in bad:
        log("FAILED " + line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
