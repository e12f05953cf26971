"""Measurement method shared by the workloads (see /work/shared/bench/WORKLOADS.md).

One workload runs in one process, pinned to one core with one thread per library. Each
implementation is built, called once with the time recorded as its first call (tracing and
compiling included), checked against a reference result, warmed up, and then timed in
interleaved rounds whose order rotates. An implementation's ratio to its anchor is the
median over rounds of (its time / the anchor's time in the same round): the two were
measured moments apart, so drift of the machine cancels.

`pin_process` must run before NumPy or any library is imported: BLAS and OpenMP read their
thread counts when they load.
"""
from __future__ import annotations

import gc
import os
import statistics
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS",
               "VECLIB_MAXIMUM_THREADS")


def pin_process(cpu: int) -> None:
    """One thread per library, all on core `cpu`. JAX's CPU client sizes its pool from the
    affinity mask, so the mask, not an env var, is what keeps it to one core."""
    loaded = [m for m in ("numpy", "torch", "jax", "fgrad") if m in sys.modules]
    if loaded:
        raise RuntimeError(f"pin_process must run before importing {', '.join(loaded)}")
    for var in THREAD_VARS:
        os.environ[var] = "1"
    os.environ.setdefault("JAX_PLATFORMS", "cpu")  # no accelerator probing on start-up
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {cpu})


@dataclass
class Impl:
    """One row of a workload.

    `factory()` builds everything (imports included) and returns either `run`, a zero-argument
    callable doing one repetition and returning its result (JAX results already
    block_until_ready-ed), or a pair `(run, inspect)` where `inspect()` returns what to compare
    after the first call (for stateful steps whose `run` returns only the loss).
    `anchor` names the row this one's ratio is taken against."""
    name: str
    lib: str
    factory: Callable[[], Any]
    anchor: str | None = None
    reference: bool = False  # preferred reference for the cross-check


@dataclass
class Config:
    rounds: int = 15
    warmup: int = 2
    min_time: float = 0.02   # each timed repetition loops the call until it lasts about this long
    max_number: int = 2000
    quick: bool = False
    probe_timeout: float = 300.0  # W6: seconds per memory probe process
    mem_cap_mib: float = 8192.0   # W6: a probe is stopped above this much over its baseline


@dataclass
class Row:
    name: str
    lib: str
    anchor: str | None
    status: str = "ok"       # ok | n/a | error | wrong
    detail: str = ""
    first_s: float | None = None
    number: int = 1
    times: list = field(default_factory=list)
    ratios: list = field(default_factory=list)
    ratio: float | None = None
    median_s: float | None = None
    min_s: float | None = None


class MismatchError(AssertionError):
    pass


def describe_error(exc: BaseException) -> str:
    """The exception's type and first line, and where it happened: enough to find it."""
    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    tb = traceback.extract_tb(exc.__traceback__)
    # the innermost frame in this repository (fgrad or bench), else the innermost of all
    mine = [f for f in tb if f.filename.startswith(REPO + os.sep)]
    frame = (mine or tb or [None])[-1]
    where = f" [{os.path.relpath(frame.filename, REPO) if mine else frame.filename}:{frame.lineno}]" if frame else ""
    return f"{type(exc).__name__}: {msg[:200]}{where}"


COMPARED = {"torch", "jax", "jaxlib", "autograd"}  # the libraries a row may be "n/a" for
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def missing_library(exc: BaseException) -> bool:
    """A compared library is not installed (an "n/a" row), as opposed to a failing import inside
    fgrad or an installed library (an error worth reporting)."""
    return isinstance(exc, ModuleNotFoundError) and exc.name in COMPARED


def _build(impl: Impl):
    out = impl.factory()
    if isinstance(out, tuple):
        return out
    return out, None


def log(msg: str) -> None:
    """Progress goes to stderr: the driver passes it through while it collects the results."""
    print(msg, file=sys.stderr, flush=True)


def measure(impls: list[Impl], config: Config, compare: Callable[[Any, Any], None],
            log=log) -> list[Row]:
    """Build, first-call, cross-check, warm up and time `impls`; return one Row per impl.

    A library that is not installed gives an "n/a" row; an implementation that raises gives
    an "error" row; one whose result differs from the reference gives a "wrong" row (and is
    not timed). `compare(ref, out)` raises MismatchError when results differ."""
    rows = {i.name: Row(i.name, i.lib, i.anchor) for i in impls}
    runs, firsts = {}, {}
    for impl in impls:
        row = rows[impl.name]
        try:
            run, inspect = _build(impl)
            gc.collect()
            t0 = time.perf_counter()
            out = run()
            row.first_s = time.perf_counter() - t0
            firsts[impl.name] = inspect() if inspect else out
            runs[impl.name] = run
        except Exception as exc:  # noqa: BLE001 -- a failing implementation must not hide the others
            if missing_library(exc):
                row.status, row.detail = "n/a", f"{exc.name} not installed"
                continue
            row.status, row.detail = "error", describe_error(exc)
            log(f"  {impl.name}: {row.detail}")
        else:
            log(f"  {impl.name}: first call {row.first_s * 1e3:.1f} ms")

    _cross_check(impls, rows, runs, firsts, compare, log)
    _time_rounds(impls, rows, runs, config, log)
    return [rows[i.name] for i in impls]


def _cross_check(impls, rows, runs, firsts, compare, log) -> None:
    ok = [i for i in impls if i.name in runs]
    if not ok:
        return
    # Prefer the declared reference, then any non-fgrad library, then whatever ran.
    ref = next((i for i in ok if i.reference), None) or next((i for i in ok if i.lib != "fgrad"), ok[0])
    for impl in ok:
        if impl is ref:
            continue
        try:
            compare(firsts[ref.name], firsts[impl.name])
        except MismatchError as exc:
            row = rows[impl.name]
            row.status, row.detail = "wrong", f"differs from {ref.name}: {exc}"
            del runs[impl.name]
            log(f"  RESULT MISMATCH {impl.name} vs {ref.name}: {exc}")
    log(f"  cross-check against {ref.name}: "
        f"{sum(rows[i.name].status == 'ok' for i in ok)}/{len(ok)} agree")


def _time_rounds(impls, rows, runs, config: Config, log) -> None:
    names = [i.name for i in impls if i.name in runs]
    # Warm-up doubles as calibration: loop fast calls so one repetition is measurable.
    for name in list(names):
        try:
            t = float("inf")
            for _ in range(config.warmup):
                t0 = time.perf_counter()
                runs[name]()
                t = min(t, time.perf_counter() - t0)
            rows[name].number = max(1, min(config.max_number, int(config.min_time / max(t, 1e-9))))
        except Exception as exc:  # noqa: BLE001 -- reported in its row
            rows[name].status, rows[name].detail = "error", "warm-up: " + describe_error(exc)
            names.remove(name)
    gc.freeze()  # set-up objects leave the collector's generations: collections stay cheap
    for r in range(config.rounds):
        k = r % len(names) if names else 0
        for name in names[k:] + names[:k]:  # rotate the order: no row always goes first
            run, n = runs[name], rows[name].number
            gc.collect()
            try:
                t0 = time.perf_counter()
                for _ in range(n):
                    run()
                rows[name].times.append((time.perf_counter() - t0) / n)
            except Exception as exc:  # noqa: BLE001 -- reported in its row; the others go on
                rows[name].status, rows[name].detail = "error", f"round {r}: " + describe_error(exc)
                rows[name].times.clear()
        names = [name for name in names if rows[name].status == "ok"]
    gc.unfreeze()
    for name in names:
        row = rows[name]
        row.median_s, row.min_s = statistics.median(row.times), min(row.times)
        anchor = rows.get(row.anchor) if row.anchor else None
        if anchor is not None and len(anchor.times) == len(row.times) and anchor.times:
            row.ratios = [a / b for a, b in zip(row.times, anchor.times)]
            row.ratio = statistics.median(row.ratios)
    log("  timed: " + ", ".join(f"{n} {rows[n].median_s * 1e3:.3g} ms" for n in names))


# --- result comparison ---------------------------------------------------------------------

def to_numpy(x):
    """Flatten a result (Tensors of any library, JAX arrays, nested lists) to NumPy arrays."""
    import numpy as np
    if isinstance(x, (list, tuple)):
        return [a for item in x for a in to_numpy(item)]
    if isinstance(x, dict):
        return [a for k in sorted(x) for a in to_numpy(x[k])]
    if hasattr(x, "detach"):  # torch or fgrad Tensor
        x = x.detach()
        x = x.numpy() if hasattr(x, "numpy") else x
    return [np.asarray(x)]


def allclose(rtol: float, atol: float) -> Callable[[Any, Any], None]:
    """A compare function for `measure`: every leaf allclose, shapes equal."""
    import numpy as np

    def compare(ref, out):
        a, b = to_numpy(ref), to_numpy(out)
        if len(a) != len(b):
            raise MismatchError(f"{len(b)} result arrays, expected {len(a)}")
        for i, (x, y) in enumerate(zip(a, b)):
            if x.shape != y.shape:
                raise MismatchError(f"leaf {i}: shape {y.shape}, expected {x.shape}")
            x64, y64 = x.astype(np.float64), y.astype(np.float64)
            if not np.allclose(y64, x64, rtol=rtol, atol=atol, equal_nan=False):
                err = float(np.max(np.abs(y64 - x64)))
                raise MismatchError(f"leaf {i}: max abs error {err:.3g} "
                                    f"(rtol {rtol:g}, atol {atol:g}, |ref| max {float(np.max(np.abs(x64))):.3g})")
    return compare
