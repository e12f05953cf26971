"""Mixed precision: `torch.autocast` and `GradScaler`.

autocast is accepted everywhere and changes no dtype: fgrad computes in bfloat16 only through
conversion, and float16 matmuls on the CPU would be slower and less accurate than float32, so
autocast regions run in the precision of their inputs (numerically, PyTorch with autocast
disabled). The autocast state a script can read is PyTorch's: per device type, whether a region
is enabled and its dtype (torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu"),
their setters and the deprecated cpu/gpu spellings).
GradScaler implements PyTorch's loss scaling (scale, unscale_, skipped steps on inf/NaN,
the growth/backoff schedule), so scripts that use it train identically with or without it.
"""
from __future__ import annotations

import functools
import math
import warnings
from typing import Any

from ..core.errors import FgradRuntimeError, FgradTypeError, FgradValueError
from ._tensor import _dtypes as D
from ._tensor import _ops as ops
from ._tensor import cuda, no_grad
from ._tensor.tensor import Tensor

# nesting: every autocast region, and the explicit autocast_increment_nesting() calls (PyTorch's
# counter, separate from the enabled state)
_AUTOCAST = {"nesting": 0}
# per device type: whether autocast is on, and the dtype it would compute in (PyTorch's defaults)
_DEFAULT_DTYPES = {"cpu": D.bfloat16, "cuda": D.float16, "xpu": D.float16, "mps": D.float16, "hpu": D.bfloat16,
                   "xla": D.bfloat16, "ipu": D.float16, "mtia": D.float16, "maia": D.bfloat16,
                   "privateuseone": D.float16}
_DTYPES = dict(_DEFAULT_DTYPES)
_ENABLED = {name: False for name in _DEFAULT_DTYPES}


def _device_type(device_type, fn: str) -> str:
    """`device_type` checked to be one autocast keeps state for (a "cuda:0" form counts as "cuda")."""
    if not isinstance(device_type, str):
        raise FgradTypeError(f"{fn}(): argument 'device_type' must be str, not {type(device_type).__name__}")
    name = device_type.split(":")[0]
    if name not in _DEFAULT_DTYPES:
        raise FgradRuntimeError(f"{fn}(): unknown device type {device_type!r}; expected one of "
                                f"{', '.join(_DEFAULT_DTYPES)}")
    return name


def _check_dtype(dtype, fn: str) -> None:
    if not isinstance(dtype, D.dtype):
        raise FgradTypeError(f"{fn}(): dtype must be a torch.dtype (e.g. torch.bfloat16), not {dtype!r}")


def _check_bool(enabled, fn: str) -> None:
    if not isinstance(enabled, bool):
        raise FgradTypeError(f"{fn}(): enabled must be a bool, not {type(enabled).__name__} ({enabled!r})")


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"torch.{old} is deprecated. Please use torch.{new} instead.", DeprecationWarning, stacklevel=3)


class autocast:
    """`with fgrad.torch.autocast(device_type="cpu", dtype=fgrad.bfloat16):` or as a decorator;
    accepted, with no dtype changes (see the module docstring)."""

    def __init__(self, device_type: str = "cuda", dtype: Any = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        if device_type not in _DEFAULT_DTYPES:
            raise FgradRuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
        if dtype is not None:
            _check_dtype(dtype, "autocast")
        self.device_type, self.enabled = device_type, bool(enabled)
        self.fast_dtype = _DTYPES[device_type] if dtype is None else dtype
        if self.enabled and device_type == "cuda" and not cuda.is_available():
            warnings.warn("User provided device_type of 'cuda', but CUDA is not available. Disabling",
                          UserWarning, stacklevel=2)
            self.enabled = False
        self._saved: list = []

    def __enter__(self) -> "autocast":
        dev = self.device_type
        self._saved.append((_ENABLED[dev], _DTYPES[dev]))
        _ENABLED[dev], _DTYPES[dev] = self.enabled, self.fast_dtype
        _AUTOCAST["nesting"] += 1
        return self

    def __exit__(self, *exc) -> None:
        _AUTOCAST["nesting"] -= 1
        _ENABLED[self.device_type], _DTYPES[self.device_type] = self._saved.pop()

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return wrapped


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether autocast is on for `device_type` (PyTorch's torch.is_autocast_enabled).

    Args:
        device_type: "cpu", "cuda", ...; None: "cuda", as PyTorch.

    Returns:
        A bool.

    Raises:
        RuntimeError: an unknown device type.
    """
    return _ENABLED[_device_type("cuda" if device_type is None else device_type, "is_autocast_enabled")]


def set_autocast_enabled(*args) -> None:
    """Turn autocast on or off for a device type outside any region (torch.set_autocast_enabled):
    `set_autocast_enabled(device_type, enabled)`, or PyTorch's older `set_autocast_enabled(enabled)`
    for "cuda".

    Args:
        *args: (device_type, enabled) or (enabled,).

    Raises:
        TypeError: enabled is not a bool, or the arguments are neither form.
    """
    if len(args) == 1:
        device_type, enabled = "cuda", args[0]
    elif len(args) == 2:
        device_type, enabled = args
    else:
        raise FgradTypeError(f"set_autocast_enabled() takes (device_type, enabled) or (enabled), got {len(args)} "
                             "arguments")
    _check_bool(enabled, "set_autocast_enabled")
    _ENABLED[_device_type(device_type, "set_autocast_enabled")] = enabled


def get_autocast_dtype(device_type: str) -> D.dtype:
    """The dtype autocast computes in on `device_type` (torch.get_autocast_dtype): the region's,
    else the one set, else PyTorch's default (bfloat16 on the CPU, float16 on CUDA).

    Args:
        device_type: "cpu", "cuda", ...

    Returns:
        A torch dtype.

    Raises:
        TypeError, RuntimeError: device_type is not a string, or an unknown device type.
    """
    return _DTYPES[_device_type(device_type, "get_autocast_dtype")]


def set_autocast_dtype(device_type: str, dtype: D.dtype) -> None:
    """Set the dtype autocast uses on `device_type` (torch.set_autocast_dtype).

    Args:
        device_type: "cpu", "cuda", ...
        dtype: a torch dtype.

    Raises:
        TypeError: dtype is not a torch dtype.
    """
    name = _device_type(device_type, "set_autocast_dtype")
    _check_dtype(dtype, "set_autocast_dtype")
    _DTYPES[name] = dtype


def is_autocast_cpu_enabled() -> bool:
    """Deprecated spelling of is_autocast_enabled("cpu") (with PyTorch's DeprecationWarning).

    Returns:
        A bool.
    """
    _deprecated("is_autocast_cpu_enabled()", "is_autocast_enabled('cpu')")
    return _ENABLED["cpu"]


def set_autocast_cpu_enabled(enabled: bool) -> None:
    """Deprecated spelling of set_autocast_enabled("cpu", enabled).

    Args:
        enabled: a bool.
    """
    _deprecated("set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)")
    _check_bool(enabled, "set_autocast_cpu_enabled")
    _ENABLED["cpu"] = enabled


def get_autocast_cpu_dtype() -> D.dtype:
    """Deprecated spelling of get_autocast_dtype("cpu").

    Returns:
        A torch dtype.
    """
    _deprecated("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')")
    return _DTYPES["cpu"]


def get_autocast_gpu_dtype() -> D.dtype:
    """Deprecated spelling of get_autocast_dtype("cuda").

    Returns:
        A torch dtype.
    """
    _deprecated("get_autocast_gpu_dtype()", "get_autocast_dtype('cuda')")
    return _DTYPES["cuda"]


def set_autocast_cpu_dtype(dtype: D.dtype) -> None:
    """Deprecated spelling of set_autocast_dtype("cpu", dtype).

    Args:
        dtype: a torch dtype.
    """
    _deprecated("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)")
    _check_dtype(dtype, "set_autocast_cpu_dtype")
    _DTYPES["cpu"] = dtype


def set_autocast_gpu_dtype(dtype: D.dtype) -> None:
    """Deprecated spelling of set_autocast_dtype("cuda", dtype).

    Args:
        dtype: a torch dtype.
    """
    _deprecated("set_autocast_gpu_dtype(dtype)", "set_autocast_dtype('cuda', dtype)")
    _check_dtype(dtype, "set_autocast_gpu_dtype")
    _DTYPES["cuda"] = dtype


class GradScaler:
    """Loss scaling as PyTorch's GradScaler: `scaler.scale(loss).backward()`,
    `scaler.step(optimizer)` (skipped when a gradient is inf or NaN), `scaler.update()`.
    For device "cuda" without a GPU it disables itself with PyTorch's warning."""

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True) -> None:
        if enabled and device == "cuda" and not cuda.is_available():
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                          UserWarning, stacklevel=2)
            enabled = False
        self._enabled = enabled
        self._device = device
        self._scale = float(init_scale)
        self._growth_factor, self._backoff_factor = float(growth_factor), float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._growth_tracker = 0
        self._found_inf: dict[int, bool] = {}  # per optimizer, since its last step
        self._unscaled: set[int] = set()

    def is_enabled(self) -> bool:
        return self._enabled

    def get_scale(self) -> float:
        return self._scale if self._enabled else 1.0

    def scale(self, outputs):
        """outputs * scale (a Tensor or a nested list/tuple of them)."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            return ops.mul(outputs, self._scale)
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        raise FgradValueError("outputs must be a Tensor or an iterable of Tensors")

    def unscale_(self, optimizer) -> None:
        """Divide the optimizer's gradients by the scale, once per step, noting infs/NaNs."""
        if not self._enabled:
            return
        if id(optimizer) in self._unscaled:
            raise FgradRuntimeError("unscale_() has already been called on this optimizer since the last update().")
        inv = 1.0 / self._scale
        found = False
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    p.grad.mul_(inv)
                    if not bool(ops.isfinite(p.grad).all()):
                        found = True
        self._found_inf[id(optimizer)] = found
        self._unscaled.add(id(optimizer))

    def step(self, optimizer, *args, **kwargs):
        """optimizer.step() unless a gradient was inf or NaN (then the step is skipped)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if id(optimizer) not in self._unscaled:
            self.unscale_(optimizer)
        if self._found_inf.get(id(optimizer)):
            return None
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale: float | None = None) -> None:
        """Back off after a skipped step, grow after growth_interval good ones."""
        if not self._enabled:
            return
        if new_scale is not None:
            self._scale = float(new_scale.item() if isinstance(new_scale, Tensor) else new_scale)
        elif any(self._found_inf.values()):
            self._scale *= self._backoff_factor
            self._growth_tracker = 0
        else:
            self._growth_tracker += 1
            if self._growth_tracker == self._growth_interval:
                self._scale *= self._growth_factor
                self._growth_tracker = 0
        if not math.isfinite(self._scale):
            raise FgradRuntimeError(f"GradScaler: the scale became {self._scale}; lower growth_factor")
        self._found_inf.clear()
        self._unscaled.clear()

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def state_dict(self) -> dict:
        if not self._enabled:
            return {}
        return {"scale": self._scale, "growth_factor": self._growth_factor, "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval, "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict: dict) -> None:
        if not self._enabled:
            return
        if not state_dict:
            raise FgradRuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        self._scale = float(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])
