"""The compared libraries, imported on demand and configured the same way everywhere.

Each accessor raises ImportError when its library is missing; the harness turns that into
an "n/a" row. Configuration that must precede the first use lives here: PyTorch gets one
intra-op (and inter-op) thread, JAX gets float64 (W1, W4, W5 and W7 are float64; float32
workloads pass float32 arrays, which stay float32).
"""
from __future__ import annotations

import functools
import sys


@functools.lru_cache(None)
def torch():
    import torch as _torch
    _torch.set_num_threads(1)
    try:
        _torch.set_num_interop_threads(1)
    except RuntimeError:  # only allowed before the first parallel region; harmless if late
        pass
    return _torch


@functools.lru_cache(None)
def jax():
    import jax as _jax
    _jax.config.update("jax_enable_x64", True)
    # start the CPU backend now, so that no implementation's first call pays for it
    _jax.numpy.zeros(1).block_until_ready()
    return _jax


@functools.lru_cache(None)
def autograd():
    import autograd as _autograd
    import autograd.numpy
    import autograd.scipy.special
    return _autograd


@functools.lru_cache(None)
def fgrad():
    import fgrad as _fgrad
    return _fgrad


@functools.lru_cache(None)
def fgrad_torch():
    """fgrad's PyTorch door (`import fgrad.torch as torch`)."""
    import fgrad.torch as _torch
    return _torch


def block(tree):
    """jax.block_until_ready on a pytree: JAX dispatches asynchronously."""
    return jax().block_until_ready(tree)


def versions() -> dict:
    """Versions of whatever this process imported (read at the end of a workload)."""
    out = {"python": sys.version.split()[0]}
    for name in ("numpy", "torch", "jax", "autograd", "fgrad", "numba"):
        mod = sys.modules.get(name)
        if mod is not None:
            out[name] = getattr(mod, "__version__", "?")
    if out.get("autograd") == "?":  # autograd has no __version__; its distribution does
        from importlib.metadata import PackageNotFoundError, version
        try:
            out["autograd"] = version("autograd")
        except PackageNotFoundError:
            pass
    return out
