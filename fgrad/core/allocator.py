"""glibc's malloc thresholds for programs that free and reallocate many arrays per step.

Eager differentiation allocates every op's result, keeps the graph's saved values until the
backward pass and frees them together; a training loop does it again each step. With
glibc's initial settings, arrays from 128 KiB are mapped fresh for each allocation, and
freed memory at the heap's top beyond 128 KiB goes back to the kernel, so the next step
touches new pages, one page fault per 4 KiB, which can cost as much as the arithmetic. glibc
raises both thresholds itself once a process frees a large mapped block, so whether a
program pays depends on what ran before it. `tune_once` sets them at the first backward
pass of a process (both doors share the engine): arrays below 32 MiB from the heap (glibc's
own upper limit for its adjustment), and up to 256 MiB of freed memory kept.
"""
from __future__ import annotations

import ctypes
import os
import sys

_STATE = {"tuned": False}


def tune_malloc(mmap_threshold: int = 32 << 20, trim_threshold: int = 256 << 20) -> bool:
    """Ask glibc's malloc to serve arrays below `mmap_threshold` bytes from its heap and to
    keep up to `trim_threshold` bytes of freed memory instead of returning it to the system.

    This is process-wide (what MALLOC_MMAP_THRESHOLD_ and MALLOC_TRIM_THRESHOLD_ set). The
    cost is that freed memory stays in the process, up to `trim_threshold` bytes at the
    heap's top.

    Args:
        mmap_threshold: allocations of at least this many bytes are mapped separately.
        trim_threshold: free memory at the heap's top beyond this is returned to the system.

    Returns:
        Whether the settings were applied: False where they do not apply (not Linux, not
        glibc) and where the user has set them through the environment (MALLOC_*_
        variables, or glibc.malloc tunables in GLIBC_TUNABLES), which are left alone.
    """
    if not sys.platform.startswith("linux"):
        return False
    env = os.environ
    if "MALLOC_MMAP_THRESHOLD_" in env or "MALLOC_TRIM_THRESHOLD_" in env or \
            "glibc.malloc" in env.get("GLIBC_TUNABLES", ""):
        return False
    try:
        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError):  # (musl and others: no libc.so.6, or no mallopt)
        return False
    m_trim_threshold, m_mmap_threshold = -1, -3
    return bool(mallopt(m_mmap_threshold, int(mmap_threshold))) and \
        bool(mallopt(m_trim_threshold, int(trim_threshold)))


def tune_once() -> None:
    """`tune_malloc()` the first time it is called in a process, unless FGRAD_TUNE_MALLOC=0
    is set (then glibc's defaults stay)."""
    if _STATE["tuned"]:
        return
    _STATE["tuned"] = True
    if os.environ.get("FGRAD_TUNE_MALLOC", "1") != "0":
        tune_malloc()
