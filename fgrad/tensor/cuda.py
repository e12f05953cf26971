"""fgrad.cuda: what PyTorch's torch.cuda offers a training script (CuPy underneath)."""
from __future__ import annotations

from ._device import as_device
from ._device import cupy as _cupy
from .creation import manual_seed as seed_default

__all__ = ["is_available", "device_count", "current_device", "set_device", "synchronize",
           "get_device_name", "manual_seed", "manual_seed_all"]


def is_available() -> bool:
    """True when CuPy is installed and CUDA reports at least one GPU."""
    try:
        _cupy()
    except RuntimeError:
        return False
    return True


def device_count() -> int:
    try:
        return int(_cupy().cuda.runtime.getDeviceCount())
    except RuntimeError:
        return 0


def current_device() -> int:
    return int(_cupy().cuda.Device().id)


def set_device(device) -> None:
    d = as_device(device)
    _cupy().cuda.Device(d.index or 0).use()


def synchronize(device=None) -> None:
    _cupy().cuda.Device().synchronize()


def get_device_name(device=None) -> str:
    cp = _cupy()
    index = 0 if device is None else (as_device(device).index or 0)
    props = cp.cuda.runtime.getDeviceProperties(index)
    name = props["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


def manual_seed(seed) -> None:
    """Random tensors on the GPU are drawn by the default generator, so this seeds it."""
    seed_default(seed)


manual_seed_all = manual_seed
