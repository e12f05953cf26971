"""Reading PyTorch checkpoints without torch: its zip archive (`<record>/data.pkl` plus one raw
record per storage) and its legacy stream of pickles. A restricted unpickler maps torch's
globals (`torch._utils._rebuild_tensor_v2`, `torch.FloatStorage`, `torch.float32`, ...) to
fgrad's; with weights_only=True every other global is refused, as torch refuses it."""
from __future__ import annotations

import _compat_pickle
import builtins
import codecs
import collections
import importlib
import io
import os
import pickle
import struct
import zipfile

import numpy as np

from ...core.errors import FgradNotImplementedError, FgradRuntimeError, FgradValueError
from .._tensor import _dtypes as D
from .._tensor import cuda as _cuda
from .._tensor._device import device as _Device
from .._tensor.tensor import Size, Tensor, _make
from ..nn.module import Module
from ..nn.parameter import Parameter
from ._write import STORAGE_NAMES

_STORAGE_DTYPES = {name: dt for dt, name in STORAGE_NAMES.items()}
_STORAGE_DTYPES["UntypedStorage"] = np.dtype(np.uint8)
# torch storages fgrad has no dtype for: read as opaque items, refused when a tensor views them
_OPAQUE = {"BFloat16Storage": "bfloat16", "Float8_e4m3fnStorage": "float8_e4m3fn", "Float8_e5m2Storage": "float8_e5m2",
           "UInt16Storage": "uint16", "UInt32Storage": "uint32", "UInt64Storage": "uint64"}
_OPAQUE_ITEMSIZE = {"bfloat16": 2, "float8_e4m3fn": 1, "float8_e5m2": 1, "uint16": 2, "uint32": 4, "uint64": 8}


class StorageType:
    """What `torch.FloatStorage` & co unpickle to: the dtype of a storage's elements."""

    __slots__ = ("name", "dtype")

    def __init__(self, name: str) -> None:
        self.name = name
        if name in _STORAGE_DTYPES:
            self.dtype = _STORAGE_DTYPES[name]
        elif name == "BFloat16Storage":
            pass  # (its dtype, ml_dtypes' bfloat16, resolves when a checkpoint uses it: __getattr__)
        else:  # a structured dtype whose field names the torch dtype, for the error message
            what = _OPAQUE[name]
            self.dtype = np.dtype([(what, f"V{_OPAQUE_ITEMSIZE[what]}")])

    def __getattr__(self, attr: str):
        # only reached while BFloat16Storage's `dtype` slot is unset
        if attr == "dtype" and self.name == "BFloat16Storage":
            self.dtype = D.bfloat16.dtype
            return self.dtype
        raise AttributeError(attr)

    def __repr__(self) -> str:
        return f"StorageType(torch.{self.name})"


class LoadedStorage:
    """A storage read from a checkpoint: raw bytes and the device its tensors will live on.
    A `map_location` callable receives one with the saved location string and may return
    `storage` (keep), `storage.cpu()`, `storage.cuda(i)` or `storage.to(device)`."""

    __slots__ = ("_raw", "dtype", "device")

    def __init__(self, raw: np.ndarray, dtype: np.dtype, device: str = "cpu") -> None:
        self._raw, self.dtype, self.device = raw, dtype, device

    def size(self) -> int:
        """Number of elements."""
        return self._raw.size // self.dtype.itemsize

    def nbytes(self) -> int:
        return int(self._raw.size)

    def to(self, device) -> "LoadedStorage":
        """This storage's bytes, to be placed on `device` (a string or fgrad.torch.device)."""
        return LoadedStorage(self._raw, self.dtype, str(_Device(device)))

    def cpu(self) -> "LoadedStorage":
        return self.to("cpu")

    def cuda(self, device=None, non_blocking: bool = False) -> "LoadedStorage":
        return self.to("cuda" if device is None else _Device("cuda", device) if isinstance(device, int)
                       else device)

    def elements(self, dtype: np.dtype) -> np.ndarray:
        """The bytes as a 1-D array of `dtype` (sharing memory)."""
        usable = self._raw.size - self._raw.size % dtype.itemsize
        return self._raw[:usable].view(dtype)




def _tensor_from(storage: LoadedStorage, offset: int, size, stride) -> Tensor:
    """A Tensor viewing `storage` (its elements from `offset`, with element strides), checked
    to lie inside the storage: a file cannot make it read memory beyond its own bytes."""
    dtype = storage.dtype
    if dtype.type.__module__ == "ml_dtypes":
        D.load_ml_dtypes()
    if dtype not in D._BY_NP:
        name = dtype.names[0] if dtype.names else str(dtype)
        raise FgradNotImplementedError(f"fgrad.torch.load: the checkpoint holds a {name} tensor, a dtype "
                                       f"fgrad.torch does not have; convert it in PyTorch first (e.g. .float())")
    size, stride = tuple(int(n) for n in size), tuple(int(s) for s in stride)
    if len(size) != len(stride) or any(n < 0 for n in size) or any(s < 0 for s in stride) or offset < 0:
        raise FgradValueError(f"fgrad.torch.load: invalid tensor layout: size {size}, stride {stride}, "
                              f"offset {offset}")
    elems = storage.elements(dtype)
    if 0 in size:
        arr = np.empty(size, dtype)
    else:
        last = offset + sum((n - 1) * s for n, s in zip(size, stride))
        if last >= elems.size:
            raise FgradValueError(f"fgrad.torch.load: a tensor of size {size}, stride {stride} and offset "
                                  f"{offset} reaches past its storage of {elems.size} elements (damaged file?)")
        steps = tuple(s * dtype.itemsize for s in stride)
        if dtype.type.__module__ == "ml_dtypes":  # (bfloat16, float8_*, complex32: as_strided rebuilds the dtype from its typestr, which NumPy cannot
            # read back for ml_dtypes' types: stride raw items of the same size, then reinterpret)
            raw = elems.view(np.dtype(f"V{dtype.itemsize}"))[offset:]
            arr = np.lib.stride_tricks.as_strided(raw, size, steps).view(dtype)
        else:
            arr = np.lib.stride_tricks.as_strided(elems[offset:], size, steps)
    t = _make(arr)
    if storage.device != "cpu":
        t = t.to(storage.device)
    return t


# --- torch's reconstruction functions, on fgrad ----------------------------------------------------

def _rebuild_tensor(storage, storage_offset, size, stride):
    if not isinstance(storage, LoadedStorage):
        raise FgradValueError(f"fgrad.torch.load: expected a storage, got {type(storage).__name__}")
    return _tensor_from(storage, int(storage_offset), size, stride)


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None):
    t = _rebuild_tensor(storage, storage_offset, size, stride)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype, metadata=None):
    """torch's rebuild for dtypes without a legacy storage class: the storage's bytes (an
    UntypedStorage) read as `dtype`."""
    if not isinstance(storage, LoadedStorage):
        raise FgradValueError(f"fgrad.torch.load: expected a storage, got {type(storage).__name__}")
    if not isinstance(dtype, D.dtype):
        raise FgradValueError(f"fgrad.torch.load: expected a dtype in _rebuild_tensor_v3, got {dtype!r}")
    typed = LoadedStorage(storage._raw, dtype.dtype, storage.device)
    return _rebuild_tensor_v2(typed, storage_offset, size, stride, requires_grad, backward_hooks, metadata)


def _rebuild_parameter(data, requires_grad, backward_hooks):
    return Parameter(data, bool(requires_grad))


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    return Parameter(data, bool(requires_grad))  # fgrad Parameters carry no Python attributes


def _rebuild_from_type_v2(func, new_type, args, state):
    """A tensor of a Tensor subclass: the tensor `func(*args)` rebuilt, as an instance of
    `new_type` sharing its storage, with the attributes in `state`."""
    out = func(*args)
    if new_type is Parameter and not isinstance(out, Parameter):
        return Parameter(out, out.requires_grad)
    if isinstance(new_type, type) and issubclass(new_type, Tensor) and type(out) is not new_type:
        out = _make(out._value, None, out.requires_grad, into=object.__new__(new_type))
    if state:
        for k, v in (state.items() if isinstance(state, dict) else ()):
            setattr(out, k, v)
    return out


def _torch_globals() -> dict:
    """torch's global names -> fgrad's objects: what a torch checkpoint of tensors names."""
    table = {
        "torch._utils._rebuild_tensor": _rebuild_tensor,
        "torch._utils._rebuild_tensor_v2": _rebuild_tensor_v2,
        "torch._utils._rebuild_tensor_v3": _rebuild_tensor_v3,
        "torch._utils._rebuild_parameter": _rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": _rebuild_parameter_with_state,
        "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
        "torch.nn.parameter.Parameter": Parameter,
        "torch.Tensor": Tensor,
        "torch.Size": Size,
        "torch.device": _Device,
        "torch.UntypedStorage": StorageType("UntypedStorage"),
        "torch.storage.UntypedStorage": StorageType("UntypedStorage"),
    }
    for name in list(STORAGE_NAMES.values()) + [n for n in _OPAQUE if n not in _STORAGE_DTYPES]:
        table[f"torch.{name}"] = StorageType(name)
    for d in D.ALL:
        table[f"torch.{d.name}"] = d
    for alias in ("half", "float", "double", "cfloat", "cdouble", "short", "int", "long"):
        table[f"torch.{alias}"] = getattr(D, alias)
    for name in ("bfloat16",):
        if hasattr(D, name):
            table[f"torch.{name}"] = getattr(D, name)
    return table


_TORCH_GLOBALS: dict | None = None

# Plain Python globals that torch's weights_only unpickler allows too
_SAFE_BUILTINS = {
    "collections.OrderedDict": collections.OrderedDict,
    "collections.Counter": collections.Counter,
    "builtins.set": builtins.set,
    "builtins.frozenset": builtins.frozenset,
    "builtins.complex": builtins.complex,
    "builtins.bytearray": builtins.bytearray,
    "_codecs.encode": codecs.encode,  # how protocol 2 spells bytes
}


def weights_only_error(detail: str) -> pickle.UnpicklingError:
    return pickle.UnpicklingError(
        "Weights only load failed. This file can still be loaded, to do so you have two options, do those "
        "steps only if you trust the source of the checkpoint.\n\t(1) Re-running `torch.load` with "
        "`weights_only` set to `False` will likely succeed, but it can result in arbitrary code execution. "
        "Do it only if you got the file from a trusted source.\n\t(2) Alternatively, to load with "
        "`weights_only=True` please check the recommended steps in the following error message.\n\t"
        "WeightsUnpickler error: " + detail)


class _Unpickler(pickle.Unpickler):
    def __init__(self, file, weights_only: bool, safe: dict, persistent_load) -> None:
        super().__init__(file, encoding="utf-8")
        self._weights_only, self._safe, self._pload = weights_only, safe, persistent_load

    def find_class(self, module: str, name: str):
        global _TORCH_GLOBALS
        if _TORCH_GLOBALS is None:
            _TORCH_GLOBALS = _torch_globals()
        # Python 2 names, which protocol 2 pickles carry (`__builtin__.complex`): pickle's own mapping
        if (module, name) in _compat_pickle.NAME_MAPPING:
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        elif module in _compat_pickle.IMPORT_MAPPING:
            module = _compat_pickle.IMPORT_MAPPING[module]
        full = f"{module}.{name}"
        if full in _TORCH_GLOBALS:
            return _TORCH_GLOBALS[full]
        if full in _SAFE_BUILTINS:
            return _SAFE_BUILTINS[full]
        if full in self._safe:
            return self._safe[full]
        if self._weights_only:
            raise weights_only_error(
                f"Unsupported global: GLOBAL {full} was not an allowed global by default. Please use "
                f"`torch.serialization.add_safe_globals([{full}])` or the `torch.serialization.safe_globals"
                f"([{full}])` context manager to allowlist this global if you trust this class/function.")
        if module == "torch" or module.startswith("torch."):
            found = _fgrad_counterpart(module, name)
            if found is None:
                raise pickle.UnpicklingError(f"fgrad.torch.load: the file needs the torch global {full}, "
                                             f"which fgrad.torch does not have")
        else:
            found = super().find_class(module, name)
        if isinstance(found, type) and issubclass(found, Module) and found is not Module:
            return _module_loader(found)
        return found

    def persistent_load(self, pid):
        return self._pload(pid)


def _fgrad_counterpart(module: str, name: str):
    """fgrad's object for a torch global of a whole pickled object: the same path under fgrad
    (`torch.optim.sgd.SGD` -> `fgrad.torch.optim.sgd.SGD`), else, for `torch.nn.modules.<file>.X`
    and the like, the name in the nearest package fgrad has (`fgrad.torch.nn.X`)."""
    if (module, name) == ("torch.nn.modules.linear", "NonDynamicallyQuantizableLinear"):
        name = "Linear"  # torch's marker subclass inside MultiheadAttention; a Linear to fgrad
    parts = module.split(".")
    for i in range(len(parts), 0, -1):
        try:
            return _attr_path(importlib.import_module("fgrad." + ".".join(parts[:i])), name)
        except (ImportError, AttributeError):
            continue
    return None


_LOADERS: dict = {}
# torch.nn.Module's own bookkeeping (hook tables), which a fresh fgrad Module replaces
_TORCH_MODULE_KEYS = frozenset((
    "_backward_hooks", "_backward_pre_hooks", "_forward_hooks", "_forward_hooks_always_called",
    "_forward_hooks_with_kwargs", "_forward_pre_hooks", "_forward_pre_hooks_with_kwargs", "_is_full_backward_hook",
    "_load_state_dict_post_hooks", "_load_state_dict_pre_hooks", "_state_dict_hooks", "_state_dict_pre_hooks",
    "_non_persistent_buffers_set"))


def _module_loader(cls):
    """A stand-in subclass of the fgrad Module class `cls` that unpickles its instances: the state
    of a module pickled by fgrad is set as is; that of one pickled by torch (its own bookkeeping:
    `_non_persistent_buffers_set`, hook dicts) is translated onto a fresh fgrad Module. The object
    then takes `cls` as its class."""
    loader = _LOADERS.get(cls)
    if loader is None:
        def __setstate__(self, state):
            if isinstance(state, dict) and "_non_persistent_buffers_set" in state:
                Module.__init__(self)
                for k, v in state.items():
                    if k not in _TORCH_MODULE_KEYS:
                        self.__dict__[k] = v
                self.__dict__["_non_persistent_buffers"] = set(state["_non_persistent_buffers_set"])
            else:
                cls.__setstate__(self, state)
            self.__class__ = cls

        loader = _LOADERS[cls] = type(cls.__name__, (cls,), {"__setstate__": __setstate__,
                                                             "__module__": cls.__module__,
                                                             "__qualname__": cls.__qualname__})
    return loader


def _attr_path(obj, dotted: str):
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


def safe_global_table(safe_globals: list) -> dict:
    out = {}
    for g in safe_globals:
        if isinstance(g, tuple) and len(g) == 2 and isinstance(g[1], str):
            out[g[1]] = g[0]
        else:
            out[f"{g.__module__}.{getattr(g, '__qualname__', g.__name__)}"] = g
    return out


# --- map_location ------------------------------------------------------------------------------------

def _placer(map_location):
    """A function (LoadedStorage, saved location) -> LoadedStorage placed as asked."""
    def default(storage, location):
        dev = _Device(location) if location.split(":")[0] in ("cpu", "cuda") else None
        if dev is None:
            raise FgradRuntimeError(f"fgrad.torch.load: the checkpoint places a tensor on {location!r}, a device "
                                    "fgrad.torch does not have; pass map_location='cpu'")
        if dev.type == "cuda":
            if not _cuda.is_available():
                raise FgradRuntimeError(
                    "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. "
                    "If you are running on a CPU-only machine, please use torch.load with "
                    "map_location=torch.device('cpu') to map your storages to the CPU.")
        return storage.to(dev)

    if map_location is None:
        return default
    if isinstance(map_location, (str, _Device)):
        target = str(_Device(map_location))
        return lambda storage, location: storage.to(target)
    if isinstance(map_location, dict):
        table = {str(k): v for k, v in map_location.items()}
        return lambda storage, location: default(storage, str(table.get(location, location)))
    if callable(map_location):
        def call(storage, location):
            out = map_location(storage, location)
            if out is None:
                return default(storage, location)
            if not isinstance(out, LoadedStorage):
                raise FgradValueError(f"fgrad.torch.load: map_location returned {type(out).__name__}; it must "
                                      "return the storage it was given (possibly .cpu()/.cuda()/.to()) or None")
            return out
        return call
    raise FgradValueError(f"fgrad.torch.load: map_location must be None, a string, a device, a dict or a "
                          f"callable, got {type(map_location).__name__}")


def _check_pid(pid, length: int):
    if not (isinstance(pid, tuple) and len(pid) == length and pid[0] == "storage"
            and isinstance(pid[1], StorageType)):
        raise pickle.UnpicklingError(f"fgrad.torch.load: unexpected persistent id {pid!r} (damaged file?)")
    return pid


# --- the zip archive ----------------------------------------------------------------------------------

def archive_prefix(names: list) -> str | None:
    """The record prefix (`archive/`) of a torch zip checkpoint, or None."""
    for n in names:
        if n.endswith("data.pkl") and n.count("/") == 1:
            return n[:-len("data.pkl")]
    return None


def _member_offset(fh, info: zipfile.ZipInfo) -> int:
    fh.seek(info.header_offset)
    head = fh.read(30)
    n, m = struct.unpack("<HH", head[26:30])
    return info.header_offset + 30 + n + m


def read_zip(zf: zipfile.ZipFile, fh, prefix: str, map_location, weights_only: bool, safe: dict,
             mmap_path: str | None):
    """The object a torch zip checkpoint holds; `fh` is the seekable file `zf` reads."""
    place = _placer(map_location)
    big = False
    if prefix + "byteorder" in zf.namelist():
        big = zf.read(prefix + "byteorder").strip() == b"big"
    loaded: dict = {}

    def storage_bytes(key: str, nbytes: int) -> np.ndarray:
        name = f"{prefix}data/{key}"
        try:
            info = zf.getinfo(name)
        except KeyError:
            raise FgradValueError(f"fgrad.torch.load: the checkpoint has no record {name!r} (damaged file?)") from None
        if info.file_size < nbytes:
            raise FgradValueError(f"fgrad.torch.load: record {name!r} holds {info.file_size} bytes, its storage "
                                  f"needs {nbytes} (damaged file?)")
        if nbytes == 0:
            return np.empty(0, np.uint8)
        if info.compress_type != zipfile.ZIP_STORED:  # not written by torch, but a valid archive
            with zf.open(info) as src:
                return np.frombuffer(bytearray(src.read(nbytes)), np.uint8)
        offset = _member_offset(fh, info)
        if mmap_path is not None:
            # copy-on-write pages of the file: writes to the tensors never reach it
            return np.memmap(mmap_path, np.uint8, mode="c", offset=offset, shape=(nbytes,))
        # stored bytes read straight into the array (no copy through zipfile's CRC-checking reader)
        buf = np.empty(nbytes, np.uint8)
        fh.seek(offset)
        view, got = memoryview(buf), 0
        while got < nbytes:
            k = fh.readinto(view[got:])
            if not k:
                raise FgradValueError(f"fgrad.torch.load: record {name!r} ends early (damaged file?)")
            got += k
        return buf

    def persistent_load(pid):
        _, stype, key, location, numel = _check_pid(pid, 5)
        key = str(key)
        st = loaded.get(key)
        if st is None:
            nbytes = int(numel) * stype.dtype.itemsize
            raw = storage_bytes(key, nbytes)
            if big and stype.dtype.itemsize > 1:
                raw = raw.view(stype.dtype.newbyteorder(">")).astype(stype.dtype).view(np.uint8)
            st = loaded[key] = place(LoadedStorage(raw, stype.dtype), str(location))
        if st.dtype != stype.dtype:  # one storage read as two types: a typed view of its bytes
            return LoadedStorage(st._raw, stype.dtype, st.device)
        return st

    pkl = zf.read(prefix + "data.pkl")
    return _Unpickler(io.BytesIO(pkl), weights_only, safe, persistent_load).load()


# --- the legacy format (torch < 1.6, or _use_new_zipfile_serialization=False) -------------------------

LEGACY_MAGIC = 0x1950A86A20F9469CFC6C


def read_legacy(fh, map_location, weights_only: bool, safe: dict):
    """A stream of pickles: magic number, protocol version, system info, the object (storages as
    persistent ids), the list of storage keys, then each storage: element count and bytes."""
    def small():
        return _Unpickler(fh, True, {}, lambda pid: None).load()

    if small() != LEGACY_MAGIC:
        raise FgradValueError("fgrad.torch.load: not a PyTorch checkpoint (bad magic number)")
    if small() != 1001:
        raise FgradValueError("fgrad.torch.load: unsupported legacy PyTorch protocol version")
    info = small()
    if isinstance(info, dict) and not info.get("little_endian", True):
        raise FgradNotImplementedError("fgrad.torch.load: big-endian legacy checkpoints are not supported")
    place = _placer(map_location)
    storages: dict = {}

    def persistent_load(pid):
        if not (isinstance(pid, tuple) and len(pid) == 6):
            _check_pid(pid, 6)
        _, stype, key, location, numel, view = _check_pid(pid, 6)
        st = storages.get(key)
        if st is None:
            # filled after the object's pickle: tensors made now view these bytes
            st = storages[key] = LoadedStorage(np.zeros(int(numel) * stype.dtype.itemsize, np.uint8), stype.dtype)
            if place(st, str(location)).device != "cpu":
                raise FgradNotImplementedError("fgrad.torch.load: legacy-format checkpoints load on the CPU only; "
                                               "pass map_location='cpu' and move the tensors with .to()")
        if view is not None:
            _, offset, size = view
            item = stype.dtype.itemsize
            return LoadedStorage(st._raw[offset * item:(offset + size) * item], stype.dtype)
        return st

    result = _Unpickler(fh, weights_only, safe, persistent_load).load()
    keys = small()
    for key in keys:
        st = storages.get(key)
        (numel,) = struct.unpack("<q", fh.read(8))
        if st is None or numel * st.dtype.itemsize != st._raw.size:
            raise FgradValueError(f"fgrad.torch.load: legacy storage {key!r} does not match its record (damaged file?)")
        data = fh.read(st._raw.size)
        if len(data) != st._raw.size:
            raise FgradValueError(f"fgrad.torch.load: legacy storage {key!r} ends early (damaged file?)")
        st._raw[:] = np.frombuffer(data, np.uint8)
    return result


def is_legacy(head: bytes) -> bool:
    return head[:2] == b"\x80\x02"


def opened(f):
    """(seekable binary file, path or None, whether to close it)."""
    if isinstance(f, (str, os.PathLike)):
        path = os.fspath(f)
        if not os.path.exists(path):
            raise FileNotFoundError(f"fgrad.torch.load: no such file: {path!r}")
        return open(path, "rb"), path, True
    if not hasattr(f, "read"):
        raise FgradValueError(f"fgrad.torch.load: expected a path or a binary file object, got {type(f).__name__}")
    seekable = getattr(f, "seekable", lambda: False)()
    return (f if seekable else io.BytesIO(f.read())), None, False
