"""When a transcendental function is better left to NumPy than fused into a kernel.

A kernel calls the C library for each element (tanh about 15 ns, exp 5 ns), while NumPy has
SIMD versions of many of these functions on some CPUs (tanh and exp under 1 ns an element
with AVX-512). On large arrays, fusing such a function would make the program slower than
running the operations one by one, so the planner leaves it to the impl there. Which
functions are fast is measured, once per process and (primitive, dtype), on the machine
itself: a NumPy call of under `FAST_NS` per element can only be vectorized code. The
measurements are kept in the cache directory (per CPU model and NumPy version) and read by
later processes: a timing near a threshold would otherwise decide differently from one
process to the next, and so plan different kernels that the on-disk cache does not hold.

Kernels over LARGE elements or more compute exp, log, tanh, sin, cos and the logistic function
with vmath's SIMD versions, about `VECTOR_NS` an element: these stay in the kernel unless
NumPy's own loop is faster (float64 tanh and exp on AVX-512 are, at 0.5-0.8 ns; float64 sin
and cos, NumPy's scalar loops at 7 ns, are not).
"""
from __future__ import annotations

import json
import platform
import re
import time
from pathlib import Path

import numpy as np

from . import vmath
from .native import cache_dir, write_atomic
from .scalar import Operand

# Arrays at least this large run NumPy-vectorized transcendental functions through the impl:
# there, the NumPy call (about 1 us) costs less than what its SIMD code saves per element.
LARGE = 1024
FAST_NS = 2.0
# vmath's functions in a kernel, per element (measured on AVX-512: sin 1.2, tanh 1.2, exp 1.0;
# a NumPy step's own memory pass, about 0.3 more, is left out: a kernel holding several of
# them runs slower than the sum, its loop bound by their latency rather than throughput)
VECTOR_NS = 1.2
_SAMPLE = 4096
_CALL = re.compile(r"\b(math\.\w+|fg_\w+)\(")
_NS: dict[str, float] = {}  # NumPy's ns per element, by "primitive|dtypes|params"
_LOADED: list = []  # [True] once the saved measurements were read


def _saved_path() -> Path:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:  # (Linux: the model's name; elsewhere platform's)
            cpu = next((line.split(":", 1)[1].strip() for line in fh if line.startswith("model name")), cpu)
    except OSError:
        pass
    tag = re.sub(r"[^A-Za-z0-9.]+", "-", f"{cpu}-numpy{np.__version__}")[:120]
    return cache_dir() / f"cost-{tag}.json"


def _measured(key: str, prim, dtypes, params) -> float:
    """NumPy's ns per element for `key`: this process's, the cache directory's, or measured
    now (and saved there)."""
    if not _LOADED:
        _LOADED.append(True)
        try:
            _NS.update(json.loads(_saved_path().read_text()))
        except (OSError, ValueError):
            pass
    ns = _NS.get(key)
    if ns is None:
        ns = _NS[key] = _measure(prim, dtypes, params)
        path = _saved_path()
        try:  # merged with what other processes saved meanwhile
            saved = json.loads(path.read_text())
        except (OSError, ValueError):
            saved = {}
        saved[key] = ns
        try:
            write_atomic(path, json.dumps(saved).encode())
        except OSError:  # an unwritable cache directory: this process keeps its own
            pass
    return ns


def prefer_impl(eqn) -> bool:
    """Whether `eqn` (element-wise, lowerable) should run through its impl rather than in a
    kernel: its output is large and its NumPy implementation is faster than the kernel's
    code for it (vmath's SIMD version, or else the C library's)."""
    aval = eqn.outvars[0].aval
    if aval.size < LARGE:
        return False
    dtypes = tuple(a.aval.dtype for a in eqn.invars)
    ops = [Operand(f"x{i}", d) for i, d in enumerate(dtypes)]
    expr = eqn.primitive.lowering(*ops, **eqn.params) or ""
    calls = _CALL.findall(expr)
    if not calls:
        return False  # arithmetic and comparisons: always faster fused
    key = "|".join([eqn.primitive.name, ",".join(d.name for d in dtypes),
                    repr(sorted((k, repr(v)) for k, v in eqn.params.items()))])
    ns = _NS.get(key)
    if ns is None:
        ns = _measured(key, eqn.primitive, dtypes, eqn.params)
    if all(c in vmath.VECTOR for c in calls):
        return ns < VECTOR_NS
    return ns < FAST_NS


def _measure(prim, dtypes, params) -> float:
    """NumPy's time per element for `prim` on typical operands, in ns (best of a few)."""
    base = 1.25 + 0.5 * np.sin(np.arange(_SAMPLE))  # in (0.75, 1.75): inside most domains
    args = [np.ones(_SAMPLE, dtype=bool) if d == np.bool_ else base.astype(d) for d in dtypes]
    best = float("inf")
    with np.errstate(all="ignore"):
        for _ in range(5):
            t = time.perf_counter()
            prim.impl(*args, xp=np, **params)
            best = min(best, time.perf_counter() - t)
    return best / _SAMPLE * 1e9
