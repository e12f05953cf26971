"""fgrad.torch.nn.utils: gradient clipping, parameter <-> vector, and an allocator setting for
training loops on the CPU."""
from __future__ import annotations

import math
import os
import sys

import numpy as np

from .. import _tensor as T  # the facade namespace: T(data), T.zeros, T.float32, ...
from ...core.errors import FgradRuntimeError, FgradValueError
from .._tensor.grad_mode import no_grad
from .._tensor.tensor import Tensor
from . import utils_rnn as rnn

# `from fgrad.torch.nn.utils.rnn import pad_sequence` (PyTorch's path): utils is a module, so its
# `rnn` is registered as the submodule Python's import looks up
sys.modules[__name__ + ".rnn"] = rnn

__all__ = ["clip_grad_norm_", "clip_grad_value_", "parameters_to_vector", "vector_to_parameters",
           "tune_malloc"]


def _params(parameters) -> list:
    """The parameters as a list, read once: callers pass generators (model.parameters()),
    which a second pass would find empty."""
    return [parameters] if isinstance(parameters, Tensor) else list(parameters)


def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False):
    """Scale the gradients in place so that their joint norm is at most max_norm; returns the
    norm before clipping (a 0-d Tensor), as PyTorch does."""
    parameters = _params(parameters)
    grads = [p._grad._value for p in parameters if p._grad is not None]
    if not grads:
        return T(0.0)
    norm_type = float(norm_type)
    if norm_type == math.inf:
        total = max(float(np.abs(g).max()) for g in grads)
    else:
        total = float(sum(float(np.sum(np.abs(g.astype(np.float64)) ** norm_type)) for g in grads)
                      ** (1.0 / norm_type))
    if error_if_nonfinite and not math.isfinite(total):
        raise FgradRuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is "
                           "non-finite, so it cannot be clipped. To disable this error and scale the "
                           "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`")
    coef = float(max_norm) / (total + 1e-6)
    if coef < 1.0:
        with no_grad():
            for p in parameters:
                if p._grad is not None:
                    p._grad._value *= p._grad._value.dtype.type(coef)
                    p._grad._vbox[0] += 1
    return T(total, dtype=T.float32)


def clip_grad_value_(parameters, clip_value: float) -> None:
    """Clamp every gradient element to [-clip_value, clip_value] in place."""
    c = float(clip_value)
    for p in _params(parameters):
        if p._grad is not None:
            np.clip(p._grad._value, -c, c, out=p._grad._value)
            p._grad._vbox[0] += 1


def parameters_to_vector(parameters):
    """One 1-D tensor holding every parameter (differentiable, like PyTorch's)."""
    return T.cat([p.reshape(-1) for p in _params(parameters)])


def vector_to_parameters(vec, parameters) -> None:
    """Copy slices of the 1-D tensor `vec` into the parameters, in order."""
    start = 0
    with no_grad():
        for p in _params(parameters):
            n = p.numel()
            p.copy_(vec[start:start + n].reshape(tuple(p.shape)))
            start += n
    if start != vec.numel():
        raise FgradValueError(f"vector_to_parameters: the vector has {vec.numel()} elements but the "
                         f"parameters hold {start}")


def tune_malloc(mmap_threshold: int = 32 << 20, trim_threshold: int = 256 << 20) -> bool:
    """Ask glibc's malloc to serve arrays below `mmap_threshold` bytes from its heap and to
    keep up to `trim_threshold` bytes of freed memory instead of returning it to the system.

    A training step allocates and frees many megabyte-sized arrays. With glibc's defaults
    most of them come back as fresh pages from the kernel, and the page faults can cost as
    much as the arithmetic (measured: ~5000 faults and +60% time per step of a small CNN).
    This is process-wide (it is what MALLOC_MMAP_THRESHOLD_/MALLOC_TRIM_THRESHOLD_ set). fgrad
    calls it when the first optimizer is created (FGRAD_TUNE_MALLOC=0 opts out); call it
    yourself for loops without an fgrad optimizer. The cost is that freed memory stays in
    the process. Returns False where it does not apply (not glibc) and leaves settings made
    through those environment variables alone."""
    # only where glibc is present (checked above)
    import ctypes
    if not sys.platform.startswith("linux"):
        return False
    if "MALLOC_MMAP_THRESHOLD_" in os.environ or "MALLOC_TRIM_THRESHOLD_" in os.environ:
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
    return bool(mallopt(M_MMAP_THRESHOLD, int(mmap_threshold))) and \
        bool(mallopt(M_TRIM_THRESHOLD, int(trim_threshold)))
