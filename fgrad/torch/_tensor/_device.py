"""Devices: "cpu" keeps NumPy arrays, "cuda"/"cuda:N" keeps CuPy arrays (imported lazily),
"meta" keeps shapes and dtypes only (_meta.MetaArray)."""
from __future__ import annotations

import numpy as np

from ...core.errors import FgradNotImplementedError, FgradRuntimeError, FgradValueError
from ._meta import NO_DATA, MetaArray


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
        if type not in ("cpu", "cuda", "meta"):
            raise FgradRuntimeError(f"Expected one of cpu, cuda, meta device type at start of device string: {type}")
        if index is not None and (type in ("cpu", "meta") and index != 0 or index < 0):
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

    def __enter__(self) -> "device":
        """`with torch.device("meta"):` factories called without a device allocate on this one
        (the default device, restored on exit)."""
        set_default(self)
        _PREVIOUS.append(self)
        return self

    def __exit__(self, *exc) -> None:
        _PREVIOUS.pop()
        set_default(_PREVIOUS[-1] if _PREVIOUS else _OUTSIDE[0])


CPU = device("cpu")
META = device("meta")

# The device factories allocate on when given none (torch.set_default_device, `with device`):
# the CPU or the meta device. _PREVIOUS holds the open `with device(...)` blocks, _OUTSIDE the
# default set outside them.
DEFAULT = [CPU]
_PREVIOUS: list = []
_OUTSIDE = [CPU]


def set_default(d: device, outside: bool = False) -> None:
    """Make `d` the default device (outside=True: as set_default_device does, also the one the
    outermost `with device` block restores). Only the CPU and the meta device can be defaults:
    fgrad's factories place values on a GPU only when given device=."""
    if d.type not in ("cpu", "meta"):
        raise FgradNotImplementedError(
            f"{str(d)!r} as the default device: fgrad's factories allocate on the CPU (or the meta device) "
            f"unless given a device; pass device={str(d)!r} to them or move tensors and modules with "
            f".to({str(d)!r}) instead.")
    DEFAULT[0] = d
    if outside:
        _OUTSIDE[0] = d


def factory_device(d) -> device:
    """The device a factory given `d` (None: the default device) allocates on."""
    return DEFAULT[0] if d is None else as_device(d)


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
    """The device an array lives on: cuda:N for a CuPy array, meta for a meta value, else the CPU."""
    if type(v) is np.ndarray:
        return CPU
    if is_meta(v):
        return META
    if not is_cupy(v):
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


def is_meta(v) -> bool:
    """True for a meta device value (a _meta.MetaArray)."""
    return type(v) is MetaArray


def to_device(v, dev: device):
    """`v` (a NumPy or CuPy array, or a meta value) on `dev`; returns `v` itself when it is already
    there. To the meta device a value keeps its shape and dtype; from it there is nothing to copy."""
    if dev.type == "meta":
        if is_meta(v):
            return v
        return MetaArray(v.shape, v.dtype)
    if is_meta(v):
        raise FgradNotImplementedError(f"{NO_DATA} (moving a meta tensor to {dev}: make a tensor there, e.g. "
                                       f"torch.empty_like(t, device='{dev}'), or module.to_empty(device='{dev}'))")
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
    """numpy for the CPU (and the meta device, whose values are made from NumPy's shapes), cupy for
    a GPU (imported, with its clear error, only then)."""
    return np if dev.type in ("cpu", "meta") else cupy()
