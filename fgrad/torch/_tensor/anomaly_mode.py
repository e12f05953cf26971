"""Anomaly detection (`fgrad.torch.autograd.detect_anomaly`): backward() checks each rule's
results and names the operation whose derivative produced a NaN."""
from __future__ import annotations

import numpy as np

from ...core.errors import FgradRuntimeError
from ...core.trace import concrete_value

_MODE = {"on": False, "check_nan": True}


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection is on (set_detect_anomaly / detect_anomaly; PyTorch's).

    Returns:
        A bool.
    """
    return _MODE["on"]


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly detection checks backward results for NaN (PyTorch's).

    Returns:
        A bool.
    """
    return _MODE["check_nan"]


class set_detect_anomaly:
    """Turn anomaly detection on or off (a function call, or a context manager that
    restores the previous setting)."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self._prev = dict(_MODE)
        _MODE["on"], _MODE["check_nan"] = bool(mode), bool(check_nan)

    def __enter__(self) -> "set_detect_anomaly":
        return self

    def __exit__(self, *exc) -> None:
        _MODE.update(self._prev)


class detect_anomaly(set_detect_anomaly):
    """`with fgrad.torch.autograd.detect_anomaly():` backward raises at the first NaN gradient,
    naming the function whose backward produced it (e.g. 'DivBackward0')."""

    def __init__(self, check_nan: bool = True) -> None:
        self._check_nan = check_nan
        self._prev = dict(_MODE)

    def __enter__(self) -> "detect_anomaly":
        _MODE["on"], _MODE["check_nan"] = True, self._check_nan
        return self


def check_nan(node, in_cts) -> None:
    """The engine's `check` hook in anomaly mode."""
    for i, c in enumerate(in_cts):
        if c is None:
            continue
        v = getattr(c, "_value", c)
        try:
            v = np.asarray(concrete_value(v))
        except Exception:  # noqa: BLE001 - a traced value (inside fgrad.grad): nothing to check
            continue
        if v.dtype.kind in "fc" and np.isnan(v).any():
            name = node.name() if hasattr(node, "name") else type(node).__name__
            raise FgradRuntimeError(f"Function '{name}' returned nan values in its {i}th output.")


def engine_check():
    """The check backward_pass should run now (None when anomaly mode is off)."""
    return check_nan if _MODE["on"] and _MODE["check_nan"] else None
