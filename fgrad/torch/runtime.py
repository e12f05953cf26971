"""Script-level switches of the Tensor facade (`torch.set_num_threads`, determinism,
matmul precision, `torch.accelerator`; `torch.compile` is fgrad.torch._compile, its function
engine `_Compiled` is here): what a training script sets up
before its model runs. Each does what it can on fgrad's CPU back end and says so."""
from __future__ import annotations

import functools
import os
import types
import warnings
from typing import Any, Callable

from threadpoolctl import threadpool_limits

from ..core.errors import FgradError, FgradRuntimeError, FgradValueError
from . import cpu
from ._tensor import cuda
from ._tensor._func import compile_function
from ._tensor._device import device
from ._tensor._device import device as _device_cls

_THREADS = {"n": os.cpu_count() or 1, "interop": 1}
_DETERMINISTIC = {"on": False, "warn_only": False}
_MATMUL_PRECISION = {"value": "highest"}


def set_num_threads(n: int) -> None:
    """The number of threads BLAS (through threadpoolctl) and Numba's parallel kernels use."""
    n = int(n)
    if n < 1:
        raise FgradValueError(f"set_num_threads: expected a positive number of threads, got {n}")
    threadpool_limits(n)
    try:
        import numba  # here: importing numba costs ~0.1 s that scripts not calling this skip
        numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))
    except ImportError:  # pragma: no cover - numba is a dependency
        pass
    _THREADS["n"] = n


def get_num_threads() -> int:
    """The thread count set by set_num_threads (the CPU count by default)."""
    return _THREADS["n"]


def set_num_interop_threads(n: int) -> None:
    """Accepted for PyTorch's API: fgrad runs one op at a time, so there is no inter-op pool."""
    _THREADS["interop"] = int(n)


def get_num_interop_threads() -> int:
    """The value last given to set_num_interop_threads (PyTorch's; fgrad has no inter-op pool).

    Returns:
        An int.
    """
    return _THREADS["interop"]


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Recorded and reported back. fgrad's CPU kernels are deterministic already (no atomics,
    fixed reduction order), so nothing else changes."""
    _DETERMINISTIC["on"], _DETERMINISTIC["warn_only"] = bool(mode), bool(warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    """Whether use_deterministic_algorithms(True) is in force (PyTorch's; fgrad's CPU kernels
    are deterministic either way).

    Returns:
        A bool.
    """
    return _DETERMINISTIC["on"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """The warn_only flag of the last use_deterministic_algorithms call (PyTorch's).

    Returns:
        A bool.
    """
    return _DETERMINISTIC["warn_only"]


def set_float32_matmul_precision(precision: str) -> None:
    """'highest', 'high' or 'medium'. NumPy's float32 matmul is always full precision (there
    is no TF32 on the CPU), so every setting computes the same; the value is kept for
    get_float32_matmul_precision."""
    if precision not in ("highest", "high", "medium"):  # PyTorch warns and keeps the setting
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      "set_float32_matmul_precision call has no effect.", UserWarning, stacklevel=2)
        return
    _MATMUL_PRECISION["value"] = precision


def get_float32_matmul_precision() -> str:
    """The value last set by set_float32_matmul_precision ('highest' by default; every
    setting computes the same in fgrad).

    Returns:
        'highest', 'high' or 'medium'.
    """
    return _MATMUL_PRECISION["value"]


class _Compiled:
    """A function under fgrad.jit that falls back to eager once tracing has failed."""

    def __init__(self, fn: Callable) -> None:
        self._fn = fn
        self._jitted = compile_function(fn)
        self._eager = False
        functools.update_wrapper(self, fn)

    def __call__(self, *args, **kwargs):
        if not self._eager:
            try:
                return self._jitted(*args, **kwargs)
            except (FgradError, TypeError) as e:
                self._eager = True
                warnings.warn(f"fgrad.torch.compile: {getattr(self._fn, '__name__', 'the function')} runs eagerly: "
                              f"tracing it failed ({type(e).__name__}: {str(e).splitlines()[0]})", UserWarning,
                              stacklevel=2)
        return self._fn(*args, **kwargs)


def _accelerator_namespace() -> types.ModuleType:
    """torch.accelerator: the CUDA device when CuPy sees one, else none (the CPU is not an
    accelerator in PyTorch's sense)."""
    ns = types.ModuleType("fgrad.torch.accelerator")
    ns.is_available = cuda.is_available

    def current_accelerator(check_available: bool = False) -> device | None:
        """The CUDA device when CuPy sees a GPU, else None (PyTorch's).

        Args:
            check_available: accepted for PyTorch's signature.

        Returns:
            device("cuda") or None.
        """
        return device("cuda") if cuda.is_available() else None

    def current_device_index() -> int:
        """0 when a GPU is available (fgrad's current device), else -1 (PyTorch's).

        Returns:
            An int.
        """
        return 0 if cuda.is_available() else -1

    def synchronize(device: Any = None) -> None:
        """Wait for the GPU's queued work to finish (cuda.synchronize; PyTorch's).

        Args:
            device: accepted for PyTorch's signature; the current GPU is synchronised.
        """
        cuda.synchronize()

    ns.current_accelerator = current_accelerator
    ns.device_count = cuda.device_count
    ns.current_device_index = current_device_index
    ns.synchronize = synchronize
    return ns


accelerator = _accelerator_namespace()


def get_device_module(device: Any = None) -> types.ModuleType:
    """The module of a device type (torch.get_device_module): fgrad.torch.cuda for "cuda",
    fgrad.torch.cpu for "cpu"; with no argument, the current accelerator's (CUDA when a GPU is
    available), else the CPU's.

    Args:
        device: a device, a device string ("cuda:0", "cpu") or None.

    Returns:
        A module.

    Raises:
        RuntimeError: device is of another type, or names no device type fgrad has.
    """
    if device is None:
        kind = "cuda" if cuda.is_available() else "cpu"
    elif isinstance(device, (str, _device_cls)):
        kind = _device_cls(device).type
    else:
        raise FgradRuntimeError(f"Invalid value of device '{device}', expect torch.device, str, or None")
    return cuda if kind == "cuda" else cpu
