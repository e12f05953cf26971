"""`fgrad.print_environment_info()`: what a bug report needs to know about this installation."""
from __future__ import annotations

import importlib.metadata
import os
import platform
import sys

from threadpoolctl import threadpool_info

from . import __version__
from .interpreters.compile.native import cache_dir

# the packages fgrad uses or can use, in the order the report lists them
_PACKAGES = ("numpy", "scipy", "numba", "llvmlite", "threadpoolctl", "cupy", "mpi4py")


def _version(dist: str) -> str:
    for name in (dist, f"{dist}-cuda12x", f"{dist}-cuda13x") if dist == "cupy" else (dist,):
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return "not installed"


def _blas() -> list[str]:
    """The BLAS and OpenMP libraries NumPy loaded, with their threads and kernels."""
    # (threadpoolctl inspects the libraries this process has loaded; NumPy's BLAS is among them)
    lines = []
    for info in threadpool_info():
        kernel = info.get("architecture") or ""
        lines.append(f"  {info.get('internal_api')} {info.get('version')}: {info.get('num_threads')} threads"
                     + (f", {kernel} kernels" if kernel else "") + f" ({info.get('filepath')})")
    return lines or ["  none found"]


def print_environment_info(return_string: bool = False) -> str | None:
    """Print (or return) the versions and settings a bug report needs: fgrad, Python, the
    platform, numpy/scipy/numba/llvmlite/threadpoolctl/cupy/mpi4py, the BLAS NumPy uses and
    its threads, the kernel cache directory and the fgrad environment variables set.

    Args:
        return_string: return the report instead of printing it (as jax.print_environment_info).

    Returns:
        The report when `return_string` is True, else None.

    Example:
        >>> import fgrad
        >>> fgrad.print_environment_info()  # doctest: +SKIP
        fgrad:    0.1.0
        python:   3.11.7 ...
    """
    rows = [("fgrad", __version__), ("python", sys.version.replace("\n", " ")),
            ("platform", platform.platform()), ("machine", f"{platform.machine()}, {os.cpu_count()} CPUs")]
    rows += [(name, _version(name)) for name in _PACKAGES]
    rows.append(("cache dir", str(cache_dir())))
    width = max(len(k) for k, _ in rows) + 2
    text = [f"{k + ':':<{width}}{v}" for k, v in rows]
    text.append("BLAS / OpenMP:")
    text += _blas()
    env = sorted((k, v) for k, v in os.environ.items() if k.startswith("FGRAD_"))
    text.append("environment: " + (", ".join(f"{k}={v}" for k, v in env) if env else "no FGRAD_* variables set"))
    report = "\n".join(text)
    if return_string:
        return report
    print(report)
    return None
