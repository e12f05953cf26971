"""Devices: "cpu" keeps NumPy arrays, "cuda"/"cuda:N" keeps CuPy arrays (imported lazily)."""
from __future__ import annotations

import numpy as np

from ..core.errors import FgradRuntimeError


class device:
    """`fgrad.device("cuda:1")`; prints like PyTorch's `device(type='cuda', index=1)`."""

    __slots__ = ("type", "index")

    def __init__(self, type, index=None) -> None:
        if isinstance(type, device):
            type, index = type.type, type.index
        elif isinstance(type, int) and not isinstance(type, bool):
            type, index = "cuda", type
        elif isinstance(type, str) and ":" in type:
            if index is not None:
                raise ValueError(f"device {type!r} already names an index; do not pass index={index}")
            type, _, idx = type.partition(":")
            try:
                index = int(idx)
            except ValueError:
                raise RuntimeError(f"Invalid device string: '{type}:{idx}'") from None
        if type not in ("cpu", "cuda"):
            raise RuntimeError(f"Expected one of cpu, cuda device type at start of device string: {type}")
        if index is not None and (type == "cpu" and index != 0 or index < 0):
            raise RuntimeError(f"Invalid device index {index} for device type {type}")
        self.type = type
        self.index = index

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            try:
                other = device(other)
            except (RuntimeError, ValueError):
                return False
        return isinstance(other, device) and self.type == other.type and self.index == other.index

    def __hash__(self) -> int:
        return hash((self.type, self.index))


CPU = device("cpu")


def as_device(d) -> device:
    if d is None:
        return CPU
    return d if isinstance(d, device) else device(d)


def cupy():
    """The cupy module, or a RuntimeError that says what is missing."""
    try:
        import cupy as cp  # optional dependency: imported only when a GPU is asked for
    except ImportError:
        raise FgradRuntimeError("CUDA requested but CuPy is not installed: pip install fgrad[cuda] "
                           "(or cupy-cuda12x / cupy-cuda11x to match your CUDA).", doc="cuda-missing") from None
    try:
        n = cp.cuda.runtime.getDeviceCount()
    except Exception as e:  # CUDA driver missing or broken
        raise RuntimeError(f"CUDA requested but no GPU visible: CuPy is installed but CUDA reports "
                           f"no usable device ({type(e).__name__}: {e}).") from None
    if n == 0:
        raise RuntimeError("CUDA requested but no GPU visible: CuPy is installed but CUDA reports 0 devices.")
    return cp


def is_cupy(v) -> bool:
    return type(v).__module__.startswith("cupy")


def device_of_value(v) -> device:
    if type(v) is np.ndarray or not is_cupy(v):
        return CPU
    return device("cuda", int(v.device.id))


def to_device(v, dev: device):
    """`v` (a NumPy or CuPy array) on `dev`; returns `v` itself when it is already there."""
    if dev.type == "cpu":
        return v.get() if is_cupy(v) else v
    cp = cupy()
    index = 0 if dev.index is None else dev.index
    if index >= cp.cuda.runtime.getDeviceCount():
        raise RuntimeError(f"CUDA error: invalid device ordinal: cuda:{index} requested but only "
                           f"{cp.cuda.runtime.getDeviceCount()} GPU(s) visible")
    if is_cupy(v) and int(v.device.id) == index:
        return v
    with cp.cuda.Device(index):
        return cp.asarray(v)


def array_module(dev: device):
    return np if dev.type == "cpu" else cupy()
