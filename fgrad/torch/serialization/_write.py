"""Writing PyTorch's checkpoint format: a zip archive holding `data.pkl` (a protocol-2 pickle in
which each tensor is a call of `torch._utils._rebuild_tensor_v2` on a storage named by a
persistent id) and one raw little-endian record per storage, aligned to 64 bytes.

The pickle names torch's globals (`torch._utils._rebuild_tensor_v2`, `torch.FloatStorage`,
`torch.float32`, ...) without importing torch: the pure-Python pickler below writes a GLOBAL
opcode for a `_TorchGlobal` marker, so real `torch.load` (weights_only=True) reads fgrad's
state dicts, and fgrad's reader maps those names back to fgrad."""
from __future__ import annotations

import io
import os
import pickle
import secrets
import zipfile
from collections import OrderedDict

import numpy as np

from ...core.errors import FgradTypeError, FgradValueError
from ...core.trace import Tracer
from .._tensor import _dtypes as D
from .._tensor._device import device as _Device
from .._tensor.tensor import Size, Tensor
from ..nn.parameter import Parameter

ALIGNMENT = 64  # torch aligns every record's data to 64 bytes (its .storage_alignment)

# numpy dtype -> torch's legacy storage class name, which the persistent id names
STORAGE_NAMES = {
    np.dtype(np.float32): "FloatStorage", np.dtype(np.float64): "DoubleStorage",
    np.dtype(np.float16): "HalfStorage", np.dtype(np.int64): "LongStorage",
    np.dtype(np.int32): "IntStorage", np.dtype(np.int16): "ShortStorage",
    np.dtype(np.int8): "CharStorage", np.dtype(np.uint8): "ByteStorage",
    np.dtype(np.bool_): "BoolStorage", np.dtype(np.complex64): "ComplexFloatStorage",
    np.dtype(np.complex128): "ComplexDoubleStorage",
}
# (bfloat16's storage class is named in persistent_id: its NumPy dtype comes with ml_dtypes)


class _TorchGlobal:
    """A name in torch's namespace, pickled as a GLOBAL opcode (torch need not be importable)."""

    __slots__ = ("module", "name")

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name

    def __call__(self, *args):  # the pickler insists that a reduction's function be callable
        raise FgradTypeError(f"{self.module}.{self.name} is a name written into checkpoints, not a function")


_REBUILD_TENSOR = _TorchGlobal("torch._utils", "_rebuild_tensor_v2")
# dtypes without a legacy storage class (uint16/32/64, float8_*, complex32): torch writes their
# bytes as an UntypedStorage and names the dtype in _rebuild_tensor_v3's arguments
_REBUILD_TENSOR_V3 = _TorchGlobal("torch._utils", "_rebuild_tensor_v3")
_UNTYPED_STORAGE = _TorchGlobal("torch.storage", "UntypedStorage")
_REBUILD_PARAMETER = _TorchGlobal("torch._utils", "_rebuild_parameter")
_REBUILD_FROM_TYPE = _TorchGlobal("torch._tensor", "_rebuild_from_type_v2")
_TORCH_SIZE = _TorchGlobal("torch", "Size")
_TORCH_DEVICE = _TorchGlobal("torch", "device")
_STORAGE_GLOBALS = {dt: _TorchGlobal("torch", name) for dt, name in STORAGE_NAMES.items()}
_BFLOAT16_STORAGE = _TorchGlobal("torch", "BFloat16Storage")


def _typed_storage(npd) -> bool:
    """Whether torch writes arrays of `npd` with a legacy typed storage (FloatStorage, ...;
    BFloat16Storage), rather than an UntypedStorage and _rebuild_tensor_v3."""
    return npd in STORAGE_NAMES or npd.name == "bfloat16"


def _array_module_value(v):
    """(host-or-device array, location string) for a tensor's value."""
    if isinstance(v, Tracer):
        raise FgradTypeError("fgrad.torch.save: cannot save a traced value (inside fgrad.grad/jit/vmap); "
                             "save concrete tensors")
    if isinstance(v, np.generic):
        return np.asarray(v), "cpu"
    if isinstance(v, np.ndarray):
        return v, "cpu"
    dev = getattr(v, "device", None)  # a CuPy array
    index = getattr(dev, "id", 0)
    return v, f"cuda:{index}"


def _address(a) -> int:
    if isinstance(a, np.ndarray):  # (not a.data: a memoryview refuses ml_dtypes' bfloat16 & co)
        return int(a.__array_interface__["data"][0])
    return int(a.data.ptr)


class _Storage:
    """One storage being written: the root array (contiguous), its key and location."""

    __slots__ = ("root", "key", "location", "dtype")

    def __init__(self, root, key: str, location: str) -> None:
        self.root, self.key, self.location, self.dtype = root, key, location, root.dtype


class _StoragePlan:
    """Assigns tensors to storages: tensors viewing one array's memory (tied weights, views)
    share one storage, written once, as torch writes them."""

    def __init__(self) -> None:
        self.by_root: dict[int, _Storage] = {}
        self.storages: list[_Storage] = []

    def _new(self, root, location) -> _Storage:
        s = _Storage(root, str(len(self.storages)), location)
        self.storages.append(s)
        return s

    def locate(self, value):
        """(storage, element offset, element strides) of an array."""
        a, location = _array_module_value(value)
        if not _typed_storage(a.dtype) and a.dtype not in D._BY_NP:
            raise FgradTypeError(f"fgrad.torch.save: no PyTorch storage type for dtype {a.dtype}")
        root = a
        while getattr(root, "base", None) is not None and type(root.base) is type(a):
            root = root.base
        item = a.dtype.itemsize
        shareable = (root.dtype == a.dtype and (root.flags.c_contiguous or root.flags.f_contiguous)
                     and root.dtype.byteorder in "=|<" and all(s >= 0 and s % item == 0 for s in a.strides))
        if shareable:
            offset = _address(a) - _address(root)
            shareable = offset >= 0 and offset % item == 0
        if not shareable:  # a reinterpreting, reversed or foreign-endian view: its own copy
            own = np.ascontiguousarray(a.astype(a.dtype.newbyteorder("<"), copy=False)) \
                if isinstance(a, np.ndarray) else a.copy()
            s = self._new(own, location)
            return s, 0, tuple(st // item for st in own.strides)
        s = self.by_root.get(id(root))
        if s is None:
            s = self.by_root[id(root)] = self._new(root, location)
        return s, offset // item, tuple(st // item for st in a.strides)


class _Pickler(pickle._Pickler):
    """The pure-Python pickler, taught torch's reductions of fgrad objects."""

    dispatch = dict(pickle._Pickler.dispatch)

    def __init__(self, file, protocol: int, plan: _StoragePlan) -> None:
        super().__init__(file, protocol)
        self._plan = plan

    def _save_torch_global(self, obj: _TorchGlobal) -> None:
        self.write(pickle.GLOBAL + obj.module.encode("utf-8") + b"\n" + obj.name.encode("utf-8") + b"\n")
        self.memoize(obj)

    dispatch[_TorchGlobal] = _save_torch_global

    def _save_dtype(self, obj) -> None:  # torch.float32 & co are module globals of torch
        self.write(pickle.GLOBAL + b"torch\n" + obj.name.encode("utf-8") + b"\n")
        self.memoize(obj)

    dispatch[D.dtype] = _save_dtype

    def persistent_id(self, obj):
        if type(obj) is _Storage:
            typed = _STORAGE_GLOBALS.get(obj.dtype) or (_BFLOAT16_STORAGE if obj.dtype.name == "bfloat16" else None)
            if typed is None:  # counted in bytes, as an UntypedStorage
                return ("storage", _UNTYPED_STORAGE, obj.key, obj.location, int(obj.root.nbytes))
            return ("storage", typed, obj.key, obj.location, int(obj.root.size))
        return None

    def reducer_override(self, obj):
        if isinstance(obj, Tensor):
            if isinstance(obj, Parameter):
                return (_REBUILD_PARAMETER, (obj.detach(), bool(obj.requires_grad), OrderedDict()))
            storage, offset, strides = self._plan.locate(obj._value)
            args = (storage, offset, tuple(obj.shape), strides, bool(obj.requires_grad), OrderedDict())
            if not _typed_storage(storage.dtype):
                args = args + (D.of_np(storage.dtype),)
                if type(obj) is not Tensor:
                    return (_REBUILD_FROM_TYPE, (_REBUILD_TENSOR_V3, type(obj), args,
                                                 dict(getattr(obj, "__dict__", {}))))
                return (_REBUILD_TENSOR_V3, args)
            if type(obj) is not Tensor:  # a user's subclass: torch's spelling, with its attributes
                return (_REBUILD_FROM_TYPE, (_REBUILD_TENSOR, type(obj), args, dict(getattr(obj, "__dict__", {}))))
            return (_REBUILD_TENSOR, args)
        if type(obj) is Size:
            return (_TORCH_SIZE, (tuple(obj),))
        if type(obj) is _Device:
            return (_TORCH_DEVICE, (str(obj),))
        return NotImplemented


def _record_name(f) -> str:
    if isinstance(f, (str, os.PathLike)):
        stem = os.path.splitext(os.path.basename(os.fspath(f)))[0]
        if stem and stem.isprintable() and "/" not in stem:
            return stem
    return "archive"


def _write_record(zf: zipfile.ZipFile, name: str, data, alignment: int = ALIGNMENT) -> None:
    """One stored (uncompressed) member whose data starts at a multiple of `alignment` in the
    file, padded as torch pads: an extra field of id 'FB' filled with 'Z'."""
    view = memoryview(data).cast("B")
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    info.file_size = view.nbytes
    zip64 = view.nbytes * 1.05 > zipfile.ZIP64_LIMIT  # zipfile's own test: it adds a 20-byte field
    start = zf.start_dir + 30 + len(name.encode("utf-8")) + 4 + (20 if zip64 else 0)
    pad = -start % alignment
    info.extra = b"FB" + pad.to_bytes(2, "little") + b"Z" * pad
    with zf.open(info, "w", force_zip64=zip64) as out:
        out.write(view)


def write_archive(obj, fileobj, record: str, protocol: int) -> None:
    """Pickle `obj` and write the archive into the binary, seekable `fileobj`."""
    plan = _StoragePlan()
    buf = io.BytesIO()
    try:
        _Pickler(buf, protocol, plan).dump(obj)
    except (pickle.PicklingError, AttributeError, TypeError) as e:
        if isinstance(e, FgradTypeError):
            raise
        raise FgradTypeError(f"fgrad.torch.save: cannot save an object of type {type(obj).__name__}: "
                             f"pickling failed ({e}). Save picklable objects: tensors, state dicts, "
                             "modules and classes defined at a module's top level") from None
    with zipfile.ZipFile(fileobj, "w", zipfile.ZIP_STORED) as zf:
        _write_record(zf, f"{record}/data.pkl", buf.getbuffer())
        _write_record(zf, f"{record}/.format_version", b"1")
        _write_record(zf, f"{record}/.storage_alignment", str(ALIGNMENT).encode())
        _write_record(zf, f"{record}/byteorder", b"little")
        for s in plan.storages:
            root = s.root
            host = root if isinstance(root, np.ndarray) else root.get()
            flat = np.ravel(host, order="K")  # memory order: no copy for a contiguous root
            _write_record(zf, f"{record}/data/{s.key}", flat.view(np.uint8))
        _write_record(zf, f"{record}/version", b"3\n")
        _write_record(zf, f"{record}/.data/serialization_id", str(secrets.randbits(128)).zfill(40).encode())


def check_protocol(protocol) -> int:
    if not isinstance(protocol, int) or isinstance(protocol, bool) or not 2 <= protocol <= pickle.HIGHEST_PROTOCOL:
        raise FgradValueError(f"fgrad.torch.save: pickle_protocol must be an int in [2, {pickle.HIGHEST_PROTOCOL}], "
                              f"got {protocol!r}")
    return protocol
