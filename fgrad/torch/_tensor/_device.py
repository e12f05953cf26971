"""Devices: "cpu" keeps NumPy arrays, "cuda"/"cuda:N" keeps CuPy arrays (imported lazily)."""
from __future__ import annotations

import numpy as np

from ...core.errors import FgradRuntimeError, FgradValueError


class device:
    """`fgrad.torch.device("cuda:1")`; prints like PyTorch's `device(type='cuda', index=1)`."""

    __slots__ = ("type", "index")

    def __init__(self, type, index=None) -> None:
        if isinstance(type, device):
            type, index = type.type, type.index
        elif isinstance(type, int) and not isinstance(type, bool):
            type, index = "cuda", type
        elif isinstance(type, str) and ":" in type:
            if index is not None:
                raise FgradValueError(f"device {type!r} already names an index; do not pass index={index}")
            type, _, idx = type.partition(":")
            try:
                index = int(idx)
            except ValueError:
                raise FgradRuntimeError(f"Invalid device string: '{type}:{idx}'") from None
        if type not in ("cpu", "cuda"):
            raise FgradRuntimeError(f"Expected one of cpu, cuda device type at start of device string: {type}")
        if index is not None and (type == "cpu" and index != 0 or index < 0):
            raise FgradRuntimeError(f"Invalid device index {index} for device type {type}")
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
    """`d` (a device, "cpu", "cuda:1", an int GPU index, or None for the CPU) as a `device`."""
    if d is None:
        return CPU
    return d if isinstance(d, device) else device(d)


def cupy():
    """The cupy module, or a RuntimeError that says what is missing. The only way fgrad's
    device code reaches CuPy: nothing imports it until a GPU is asked for."""
    try:
        import cupy as cp  # optional dependency: imported only when a GPU is asked for
    except ImportError:
        raise FgradRuntimeError("CUDA requested but CuPy is not installed: pip install fgrad[cuda] for CUDA 12 "
                                "or fgrad[cuda13] for CUDA 13 (the wheels cupy-cuda12x / cupy-cuda13x; fgrad "
                                "uses whichever cupy is installed).", doc="cuda-missing") from None
    try:
        n = cp.cuda.runtime.getDeviceCount()
    except Exception as e:  # CUDA driver missing or broken
        raise FgradRuntimeError(f"CUDA requested but no GPU visible: CuPy is installed but CUDA reports "
                           f"no usable device ({type(e).__name__}: {e}).") from None
    if n == 0:
        raise FgradRuntimeError("CUDA requested but no GPU visible: CuPy is installed but CUDA reports 0 devices.")
    return cp


def is_cupy(v) -> bool:
    """True for a CuPy array (told by its type's module, so that CuPy need not be imported)."""
    return type(v).__module__.startswith("cupy")


def device_of_value(v) -> device:
    """The device an array lives on: cuda:N for a CuPy array, else the CPU."""
    if type(v) is np.ndarray or not is_cupy(v):
        return CPU
    return device("cuda", int(v.device.id))


def _cuda_index(cp, dev: device) -> int:
    """The GPU `dev` names: its index, or CuPy's current device for a bare "cuda" (as in PyTorch);
    an index past the visible GPUs is PyTorch's invalid-ordinal error."""
    count = cp.cuda.runtime.getDeviceCount()
    index = int(cp.cuda.Device().id) if dev.index is None else dev.index
    if index >= count:
        raise FgradRuntimeError(f"CUDA error: invalid device ordinal: cuda:{index} requested but only "
                           f"{count} GPU(s) visible")
    return index


def resolved(dev: device) -> device:
    """`dev` with its GPU index filled in (a bare "cuda" is CuPy's current device), so that
    two spellings of one device compare equal."""
    return device("cuda", _cuda_index(cupy(), dev)) if dev.type == "cuda" and dev.index is None else dev


def to_device(v, dev: device):
    """`v` (a NumPy or CuPy array) on `dev`; returns `v` itself when it is already there."""
    if dev.type == "cpu":
        return v.get() if is_cupy(v) else v
    cp = cupy()
    index = _cuda_index(cp, dev)
    if is_cupy(v):
        if int(v.device.id) == index:
            return v
        with cp.cuda.Device(index):
            return v.copy()  # CuPy's copy() lands on the current device (asarray would keep v as is)
    with cp.cuda.Device(index):
        return cp.asarray(v)


def array_module(dev: device):
    """numpy for the CPU, cupy for a GPU (imported, with its clear error, only then)."""
    return np if dev.type == "cpu" else cupy()
