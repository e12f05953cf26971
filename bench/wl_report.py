"""Markdown for the workload results: one table per workload, the issue's target rows with
met/missed, and the marked section of bench/RESULTS.md that `--write` replaces."""
from __future__ import annotations

import os
import statistics

from wl_memory import CHECKPOINT_ROW
from wl_throughput import DTYPES, SIZES, row_name

BEGIN, END = "<!-- workloads:begin -->", "<!-- workloads:end -->"

# The target rows (issue 10's, tightened and extended by issue 28: W2/W3 facade, W5 eager,
# W8): (workload, label, text, [(part, fgrad row, kind, bound)]).
# kind "le": the row's ratio to its anchor must be <= bound; "speedup": the anchor's time over
# the row's (median over rounds) must be >= bound.
TARGETS = [
    ("W1", "W1", "eager ≤ 1.0x PyTorch; jit ≤ 1.0x jax.jit",
     [("eager", "fgrad grad", "le", 1.0), ("jit", "fgrad jit(grad)", "le", 1.0)]),
    ("W4", "W4", "eager ≤ 0.5x torch.func.hessian; jit ≤ 1.5x jax.jit",
     [("eager", "fgrad hessian", "le", 0.5), ("jit", "fgrad jit(hessian)", "le", 1.5)]),
    ("W5", "W5", "eager ≤ 0.8x PyTorch create_graph; jit ≤ 1.0x jax.jit",
     [("eager", "fgrad grad^4", "le", 0.8), ("jit", "fgrad jit(grad^4)", "le", 1.0)]),
    ("W6", "W6", "eager ≤ 1.0x PyTorch; jit ≤ 0.5x PyTorch; checkpoint ≤ 0.3x",
     [("eager", "fgrad eager", "le", 1.0), ("jit", "fgrad jit", "le", 0.5),
      ("checkpoint", CHECKPOINT_ROW, "le", 0.3)]),
    ("W2", "W2", "facade ≤ 1.0x PyTorch; functional + jit ≤ 1.0x jax.jit",
     [("facade", "fgrad facade (nn/optim)", "le", 1.0), ("functional + jit", "fgrad functional + jit", "le", 1.0)]),
    ("W3", "W3", "facade ≤ 1.0x PyTorch; functional + jit ≤ 0.4x jax.jit",
     [("facade", "fgrad facade (nn/optim)", "le", 1.0), ("functional + jit", "fgrad functional + jit", "le", 0.4)]),
    ("W7", "W7", "≤ 0.2x jax.make_jaxpr", [("", "fgrad.make_jaxpr", "le", 0.2)]),
    ("E200", "200-op n=1e4", "jit ≥ 3x faster than eager", [("jit", "fgrad jit f(x)", "speedup", 3.0)]),
] + [
    ("W8", f"W8 {dtype} n={n:.0e}", "eager ≤ 1.0x PyTorch; jit ≤ 1.0x jax.jit",
     [("eager", row_name("fgrad grad", dtype, n), "le", 1.0), ("jit", row_name("fgrad jit(grad)", dtype, n), "le", 1.0)])
    for dtype in DTYPES for n in SIZES
]


def fmt_time(s) -> str:
    if s is None:
        return "–"
    if s < 1e-3:
        return f"{s * 1e6:.3g} µs"
    if s < 1:
        return f"{s * 1e3:.3g} ms"
    return f"{s:.3g} s"


def fmt_ratio(v: float) -> str:
    """Two decimals, or two significant digits below 0.1 (so 0.0015x does not print as 0.00x)."""
    return f"{v:.2f}x" if v >= 0.1 else f"{v:.2g}x"


def _table(header, rows) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return out


def _status_cell(row) -> str:
    return f"{row['status']}: {row['detail']}".replace("|", "\\|")


def _time_rows(result) -> list[str]:
    rows = []
    for r in result["rows"]:
        if r["status"] != "ok":
            rows.append([r["name"], _status_cell(r), "", "", "", r["anchor"] or ""])
            continue
        ratio = f"**{fmt_ratio(r['ratio'])}**" if r["ratio"] is not None else ("–" if not r["anchor"] else "n/a")
        rows.append([r["name"], fmt_time(r["first_s"]), fmt_time(r["median_s"]), fmt_time(r["min_s"]), ratio,
                     r["anchor"] or ""])
    return _table(["implementation", "first call", "per call (median)", "per call (best round)",
                   "ratio to anchor", "anchor"], rows)


def _mib(v) -> str:
    return f"{v:,.0f}" if v is not None else "–"


def _memory_rows(result) -> list[str]:
    rows = []
    for r in result["rows"]:
        if r["status"] == "capped":
            bound = f"> {fmt_ratio(r['ratio_lower_bound'])}" if r.get("ratio_lower_bound") else "n/a"
            rows.append([r["name"], f"> {_mib(r['cap_mib'])} ({r['detail']})", "", bound, _mib(r.get("import_mib")), ""])
            continue
        if r["status"] != "ok":
            rows.append([r["name"], _status_cell(r), "", "", "", ""])
            continue
        ratio = (f"{fmt_ratio(r['ratio_first'])} / {fmt_ratio(r['ratio_second'])}" if r.get("ratio") is not None
                 else ("anchor" if not r["anchor"] else "n/a"))
        rows.append([r["name"], _mib(r.get("first_mib")), _mib(r.get("second_mib")), ratio,
                     _mib(r.get("import_mib")), f"{fmt_time(r.get('first_s'))} / {fmt_time(r.get('second_s'))}"])
    return _table(["implementation", "peak MiB, first call", "peak MiB, second call",
                   "ratio to the lower PyTorch row (first / second)", "baseline RSS MiB", "call time (first / second)"], rows)


def workload_section(result) -> list[str]:
    out = [f"### {result['id']}: {result.get('title', '')}", ""]
    if result.get("error"):
        return out + [f"Not measured: {result['error']}", ""]
    out += _memory_rows(result) if result.get("kind") == "memory" else _time_rows(result)
    for t in result.get("tables", []):
        if t["rows"]:
            out += ["", f"{t['title']}:", ""] + _table(t["header"], t["rows"])
    if result.get("notes"):
        out += [""] + list(result["notes"])
    return out + [""]


def _measured(results: dict, wid: str, row_name: str, kind: str):
    """The figure a target is judged on and whether it is only a lower bound (a W6 probe
    stopped at the memory cap), or None with a reason."""
    result = results.get(wid)
    if result is None:
        return None, "not run"
    if result.get("error"):
        return None, "not measured"
    row = next((r for r in result["rows"] if r["name"] == row_name), None)
    if row is not None and row["status"] == "capped" and row.get("ratio_lower_bound"):
        return (row["ratio_lower_bound"], True), None
    if row is None or row["status"] != "ok":
        return None, (row["status"] if row else "no row")
    if kind == "speedup":
        if not row.get("ratios"):
            return None, "n/a"
        return (statistics.median(1.0 / r for r in row["ratios"]), False), None
    if row.get("ratio") is None:
        return None, "n/a"
    return (row["ratio"], False), None


def summary(results: dict) -> list[str]:
    rows = []
    for wid, label, text, parts in TARGETS:
        if wid not in results:
            continue
        got, verdicts = [], []
        for part, row_name, kind, bound in parts:
            measured, why = _measured(results, wid, row_name, kind)
            prefix = f"{part} " if part else ""
            if measured is None:
                got.append(f"{prefix}{why}")
                verdicts.append(f"{prefix}n/a")
                continue
            value, lower = measured
            ok = value <= bound if kind == "le" else value >= bound
            if lower and ok:  # a lower bound under the target decides nothing
                ok = None
            word = "speedup " if kind == "speedup" else ""
            got.append(f"{prefix}{word}{'> ' if lower else ''}{fmt_ratio(value)}")
            verdicts.append(prefix + {True: "met", False: "**missed**", None: "n/a"}[ok])
        rows.append([label, text, "; ".join(got), "; ".join(verdicts)])
    return _table(["workload", "target", "measured", "verdict"], rows)


def document(results: dict, header: list[str]) -> str:
    out = list(header)
    out += ["", "### Targets (issues 10 and 28)", ""] + summary(results) + [""]
    for result in results.values():
        out += workload_section(result)
    return "\n".join(out).rstrip() + "\n"


def write_section(path: str, markdown: str) -> None:
    """Replace the text between the markers in `path` (appending the section if absent)."""
    text = ""
    if os.path.exists(path):
        with open(path) as f:
            text = f.read()
    block = f"{BEGIN}\n{markdown.rstrip()}\n{END}"
    i = text.find(BEGIN)
    j = text.find(END, i + len(BEGIN)) if i >= 0 else -1
    if i >= 0 and j >= 0:
        text = text[:i] + block + text[j + len(END):]
    else:
        text = (text.rstrip("\n") + "\n\n" if text.strip() else "") + block + "\n"
    with open(path, "w") as f:
        f.write(text)
