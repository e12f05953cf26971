"""fgrad.torch.utils.dlpack: zero-copy exchange of tensors with other array libraries (PyTorch's
torch.utils.dlpack; `fgrad.torch.from_dlpack` is the same function).

    t = fgrad.torch.from_dlpack(torch_tensor)      # shares torch_tensor's memory (CPU or GPU)
    a = numpy.from_dlpack(t)                 # a NumPy view of a CPU tensor
    c = cupy.from_dlpack(t)                  # a CuPy view of a GPU tensor
    capsule = fgrad.torch.utils.dlpack.to_dlpack(t) # a "dltensor" capsule, consumed once

A CPU tensor's storage is a NumPy array and a GPU tensor's a CuPy array, so DLPack is their
exchange: the producer's device decides which library imports it (CuPy is imported only for
a GPU producer). Writes through either side show on the other; nothing is copied unless
`device` or `copy=True` asks for it."""
from __future__ import annotations

import ctypes
from enum import IntEnum
from typing import Any

import numpy as np

from ...core.errors import FgradRuntimeError, FgradTypeError, FgradValueError
from .._tensor._device import as_device, cupy
from .._tensor.tensor import Tensor, _make

__all__ = ["DLDeviceType", "from_dlpack", "to_dlpack"]


class DLDeviceType(IntEnum):
    """DLPack's device codes (dlpack.h), as `__dlpack_device__()` reports them."""

    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14


# Host memory NumPy can read in place; device memory CuPy can (pinned and managed memory are
# addressable by both, but the producer reports which side it means).
_HOST = (DLDeviceType.kDLCPU, DLDeviceType.kDLCUDAHost)
_CUDA = (DLDeviceType.kDLCUDA, DLDeviceType.kDLCUDAManaged)

_GetName = ctypes.pythonapi.PyCapsule_GetName
_GetName.restype = ctypes.c_char_p
_GetName.argtypes = [ctypes.py_object]
_GetPointer = ctypes.pythonapi.PyCapsule_GetPointer
_GetPointer.restype = ctypes.c_void_p
_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


# Where the DLTensor sits in the capsule's struct: first in DLManagedTensor; after the version
# (two uint32), manager_ctx, deleter and flags (8 bytes each) in DLManagedTensorVersioned.
_DLTENSOR_OFFSET = {b"dltensor": 0, b"dltensor_versioned": 32}
_CONSUMED = (b"used_dltensor", b"used_dltensor_versioned")


def _is_capsule(obj) -> bool:
    return type(obj).__name__ == "PyCapsule"


def _capsule_device(capsule) -> tuple[int, int]:
    """The (device type, index) recorded in a DLPack capsule: a bare capsule has no
    `__dlpack_device__`, and the device decides whether NumPy or CuPy imports it."""
    name = _GetName(capsule)
    if name in _CONSUMED:
        raise FgradRuntimeError("from_dlpack received an invalid capsule. Note that DLTensor capsules can be "
                           "consumed only once, so you might have already constructed a tensor from it once.")
    if name not in _DLTENSOR_OFFSET:
        raise FgradTypeError(f"from_dlpack: a PyCapsule named {name!r} is not a DLPack tensor "
                        "(expected 'dltensor' or 'dltensor_versioned')")
    ptr = _GetPointer(capsule, name)
    # DLTensor is {void* data; DLDevice device; ...}: the device follows the data pointer
    dev = _DLDevice.from_address(ptr + _DLTENSOR_OFFSET[name] + ctypes.sizeof(ctypes.c_void_p))
    return int(dev.device_type), int(dev.device_id)


class _CapsuleProducer:
    """A bare capsule dressed as a DLPack producer: numpy.from_dlpack accepts only objects
    with `__dlpack__` and `__dlpack_device__`."""

    def __init__(self, capsule, device: tuple[int, int]) -> None:
        self._capsule = capsule
        self._device = device

    def __dlpack__(self, **kwargs):
        return self._capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._device


class _WritableView:
    """Exposes a read-only NumPy array's memory as writable, through the array interface."""

    def __init__(self, arr: np.ndarray) -> None:
        self.__array_interface__ = dict(arr.__array_interface__, data=(arr.__array_interface__["data"][0], False))
        self._keep = arr  # the imported array owns the capsule, hence the producer's memory


def _host_array(obj, capsule: bool) -> np.ndarray:
    arr = np.from_dlpack(obj)
    if capsule and not arr.flags.writeable:
        # An unversioned capsule cannot say whether its memory is read-only, so NumPy assumes it
        # is; PyTorch assumes writable, and a tensor must be writable for in-place ops to reach
        # the producer's memory (zero-copy both ways). Versioned capsules carry the flag.
        arr = np.asarray(_WritableView(arr))
    return arr


def from_dlpack(ext_tensor, *, device=None, copy: bool | None = None) -> Tensor:
    """A Tensor sharing the memory of `ext_tensor`: any object with `__dlpack__` and
    `__dlpack_device__` (a NumPy, CuPy, PyTorch or JAX array, an fgrad Tensor) or a DLPack
    capsule (from `to_dlpack`, `torch.utils.dlpack.to_dlpack`, ...; consumed once).

    CPU memory becomes a NumPy-backed tensor, CUDA memory a CuPy-backed one on the same GPU.
    `device` moves the result there (a copy when it is another device); `copy=True` always
    copies, `copy=False` raises rather than copy. The result is a leaf that does not require
    grad, as in PyTorch."""
    if _is_capsule(ext_tensor):
        dev_type, dev_id = _capsule_device(ext_tensor)
        producer, capsule = _CapsuleProducer(ext_tensor, (dev_type, dev_id)), True
    elif hasattr(ext_tensor, "__dlpack__") and hasattr(ext_tensor, "__dlpack_device__"):
        dev_type, dev_id = (int(x) for x in ext_tensor.__dlpack_device__())
        producer, capsule = ext_tensor, False
    else:
        raise FgradTypeError(f"from_dlpack: expected an object with __dlpack__ and __dlpack_device__ (a NumPy, "
                        f"CuPy or PyTorch array, ...) or a DLPack capsule, got {type(ext_tensor).__name__}")
    if dev_type in _HOST:
        value = _host_array(producer, capsule)
    elif dev_type in _CUDA:
        cp = cupy()  # a GPU producer: CuPy imports it (and says so clearly when it is missing)
        value = cp.from_dlpack(producer)
    else:
        name = DLDeviceType(dev_type).name if dev_type in DLDeviceType._value2member_map_ else str(dev_type)
        raise FgradRuntimeError(f"from_dlpack: unsupported device {name} (device id {dev_id}); fgrad reads CPU "
                           "memory through NumPy and CUDA memory through CuPy")
    out = _make(value)
    if device is not None and as_device(device) != out.device:
        if copy is False:
            raise FgradValueError(f"from_dlpack: the data is on {out.device} and device={device} was asked with "
                             "copy=False; moving it needs a copy")
        return out.to(device)
    if copy:
        out = _make(value.copy())
    return out


def to_dlpack(tensor: Tensor) -> Any:
    """A DLPack capsule ("dltensor", the unversioned kind torch.utils.dlpack.to_dlpack gives)
    sharing `tensor`'s memory; `from_dlpack` of any library consumes it once."""
    if not isinstance(tensor, Tensor):
        raise FgradTypeError(f"to_dlpack: expected a Tensor, got {type(tensor).__name__}")
    try:
        return tensor.__dlpack__()
    except BufferError as e:
        # NumPy refuses read-only arrays (broadcast or expanded views) in unversioned capsules
        raise BufferError(f"to_dlpack: {e} Export tensor.clone() (a writable copy) instead.") from None
