"""Mixed precision: `torch.autocast` and `GradScaler`.

autocast is accepted everywhere and changes no dtype: fgrad has no bfloat16, and float16
matmuls on the CPU would be slower and less accurate than float32, so autocast regions run
in the precision of their inputs (numerically, PyTorch with autocast disabled).
GradScaler implements PyTorch's loss scaling (scale, unscale_, skipped steps on inf/NaN,
the growth/backoff schedule), so scripts that use it train identically with or without it.
"""
from __future__ import annotations

import functools
import math
import warnings
from typing import Any

from ..core.errors import FgradRuntimeError, FgradValueError
from ._tensor import _ops as ops
from ._tensor import cuda, no_grad
from ._tensor.tensor import Tensor

# depth: enabled autocast regions; nesting: every autocast region, and the explicit
# autocast_increment_nesting() calls (PyTorch's counter, separate from the enabled state)
_AUTOCAST = {"depth": 0, "nesting": 0}


class autocast:
    """`with fgrad.torch.autocast(device_type="cpu", dtype=fgrad.bfloat16):` or as a decorator;
    accepted, with no dtype changes (see the module docstring)."""

    def __init__(self, device_type: str = "cuda", dtype: Any = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        if device_type not in ("cuda", "cpu", "xpu", "mps", "hpu", "xla", "meta"):
            raise FgradRuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
        self.device_type, self.fast_dtype, self.enabled = device_type, dtype, bool(enabled)

    def __enter__(self) -> "autocast":
        _AUTOCAST["nesting"] += 1
        if self.enabled:
            _AUTOCAST["depth"] += 1
        return self

    def __exit__(self, *exc) -> None:
        _AUTOCAST["nesting"] -= 1
        if self.enabled:
            _AUTOCAST["depth"] -= 1

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return wrapped


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether an autocast region is active (PyTorch's torch.is_autocast_enabled).

    Args:
        device_type: accepted for PyTorch's signature; one flag serves every device.

    Returns:
        A bool.
    """
    return _AUTOCAST["depth"] > 0


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
