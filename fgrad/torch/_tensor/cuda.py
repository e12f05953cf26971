"""fgrad.torch.cuda: what PyTorch's torch.cuda offers a training script (CuPy underneath).

Only the functions that ask about the GPU import CuPy (is_available, device_count, ...). The
memory queries answer 0 while CuPy has not been imported: fgrad allocates GPU memory through
CuPy alone, so before that import nothing of fgrad's is on a GPU."""
from __future__ import annotations

import sys

from ...core.errors import FgradValueError
from ._device import as_device
from ._device import cupy as _cupy
from .creation import manual_seed as seed_default

__all__ = ["is_available", "device_count", "current_device", "set_device", "synchronize",
           "get_device_name", "get_device_capability", "manual_seed", "manual_seed_all",
           "memory_allocated", "memory_reserved", "empty_cache", "mem_get_info"]


def is_available() -> bool:
    """True when CuPy is installed and CUDA reports at least one GPU."""
    try:
        _cupy()
    except RuntimeError:
        return False
    return True


def device_count() -> int:
    """The number of GPUs CUDA makes visible (0 without CuPy or a driver)."""
    try:
        return int(_cupy().cuda.runtime.getDeviceCount())
    except RuntimeError:
        return 0


def _index(cp, device) -> int:
    """The GPU index `device` names (None, an int, "cuda", "cuda:1", a device): a bare "cuda"
    or None is CuPy's current device, as in PyTorch."""
    if device is None:
        return int(cp.cuda.Device().id)
    d = as_device(device)
    if d.type != "cuda":
        raise FgradValueError(f"Expected a cuda device, but got: {d}")
    return int(cp.cuda.Device().id) if d.index is None else d.index


def current_device() -> int:
    """The index of the GPU that a bare "cuda" means."""
    return int(_cupy().cuda.Device().id)


def set_device(device) -> None:
    """Make `device` (an index or "cuda:N") the one a bare "cuda" means."""
    cp = _cupy()
    cp.cuda.Device(_index(cp, device)).use()


def synchronize(device=None) -> None:
    """Wait until the work queued on `device` (default: the current GPU) has finished: GPU
    kernels run asynchronously, so timings must synchronize before reading the clock."""
    cp = _cupy()
    cp.cuda.Device(_index(cp, device)).synchronize()


def get_device_name(device=None) -> str:
    """The GPU's name as CUDA reports it, e.g. 'NVIDIA H200'."""
    cp = _cupy()
    name = cp.cuda.runtime.getDeviceProperties(_index(cp, device))["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


def get_device_capability(device=None) -> tuple[int, int]:
    """The GPU's compute capability (major, minor), e.g. (9, 0) on Hopper."""
    cp = _cupy()
    props = cp.cuda.runtime.getDeviceProperties(_index(cp, device))
    return int(props["major"]), int(props["minor"])


def manual_seed(seed: int) -> None:
    """Seed the random numbers of GPU tensors. fgrad draws them with the default generator
    (on the host, then copies them over), so this seeds that generator, CPU draws included:
    the same seed gives the same values on either device."""
    seed_default(seed)


def manual_seed_all(seed: int) -> None:
    """manual_seed for every GPU: they share the default generator."""
    seed_default(seed)


def _pool_on(device):
    """(cupy, device index) for the memory queries, or None while CuPy is not imported."""
    cp = sys.modules.get("cupy")
    if cp is None:
        return None
    cp = _cupy()
    return cp, _index(cp, device)


def _pool_bytes(device, query: str) -> int:
    """The memory pool's `query` ("used_bytes", "total_bytes") on `device`, 0 while CuPy is not
    imported (so that nothing of fgrad's is on a GPU)."""
    got = _pool_on(device)
    if got is None:
        return 0
    cp, index = got
    with cp.cuda.Device(index):
        return int(getattr(cp.get_default_memory_pool(), query)())


def memory_allocated(device=None) -> int:
    """Bytes of GPU memory held by live arrays on `device` (CuPy's default memory pool, which
    every fgrad GPU tensor is allocated from); 0 before any GPU tensor exists."""
    return _pool_bytes(device, "used_bytes")


def memory_reserved(device=None) -> int:
    """Bytes the memory pool holds on `device`: allocated plus freed blocks kept for reuse
    (PyTorch's caching allocator keeps them likewise)."""
    return _pool_bytes(device, "total_bytes")


def empty_cache() -> None:
    """Return the pool's freed blocks to CUDA (live tensors keep their memory)."""
    cp = sys.modules.get("cupy")
    if cp is not None:
        _cupy().get_default_memory_pool().free_all_blocks()


def mem_get_info(device=None) -> tuple[int, int]:
    """(free, total) bytes of `device`'s memory as the CUDA driver reports them."""
    cp = _cupy()
    with cp.cuda.Device(_index(cp, device)):
        free, total = cp.cuda.runtime.memGetInfo()
    return int(free), int(total)
