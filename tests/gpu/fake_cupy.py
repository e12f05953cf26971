"""A strict stand-in for CuPy, for machines without a GPU: it runs fgrad's CuPy code paths
(device moves, `xp`-generic impls, the facade's device logic) on host memory, and refuses
what real CuPy refuses, so that a NumPy-only call on a GPU array fails here as it would there.

What it checks, as CuPy does:
- arrays are `cupy.ndarray`s (type module "cupy"), not NumPy arrays; `numpy.asarray(a)` and
  anything else that converts implicitly raises CuPy's TypeError ("Implicit conversion to a
  NumPy array is not allowed"); `.get()` / `cupy.asnumpy` copy to the host;
- arithmetic, ufuncs and cupy functions refuse NumPy arrays (0-d ones too) as operands: CuPy's
  kernels accept only CuPy arrays and scalars ("Unsupported type <class 'numpy.ndarray'>");
  NumPy index arrays are accepted (CuPy copies them over), and so are NumPy values assigned
  through an advanced index (`a[idx] = v`), but not through a basic one (`a[1:3] = v`, which
  CuPy fills with scalars only); cupyx.scatter_add takes CUDA's atomicAdd dtypes only;
- NumPy functions called on these arrays dispatch to the cupy namespace (`__array_function__`,
  `__array_ufunc__`), results are `cupy.ndarray`s (0-d arrays where NumPy gives scalars);
- `cupy.asarray(numpy_array)` copies (host and device memory never alias);
- `cupy.cuda` (devices, runtime, streams), the default memory pool, DLPack with device type
  kDLCUDA, `cupyx.scatter_add` and `cupyx.scipy.{special,linalg,signal}`.

What it cannot check: which functions real CuPy lacks, GPU numerics, kernel compilation,
asynchrony. It is a test of logic, not of arithmetic; tests/gpu runs on the real thing.

    from tests.gpu import fake_cupy
    cp = fake_cupy.install(monkeypatch)   # sys.modules["cupy"], ["cupyx"], ... until the test ends
"""
from __future__ import annotations

import ctypes
import functools
import sys
import types
import weakref

import numpy as np
import scipy.linalg
import scipy.signal
import scipy.special

IMPLICIT = ("Implicit conversion to a NumPy array is not allowed. Please use `.get()` to construct a "
            "NumPy array explicitly.")
KDLCUDA = 2


class CUDARuntimeError(RuntimeError):
    """cupy_backends.cuda.api.runtime.CUDARuntimeError."""


class _State:
    """The simulated machine: how many GPUs, which is current, what the pool holds."""

    def __init__(self, device_count: int = 1, broken: bool = False) -> None:
        self.device_count = device_count
        self.broken = broken  # getDeviceCount raises, as with a missing or broken driver
        self.current = 0
        self.used = {}        # device -> bytes held by live arrays
        self.reserved = {}    # device -> bytes the pool keeps (peak since free_all_blocks)


STATE = _State()


# --- the array ----------------------------------------------------------------------------

def _unsupported(x) -> TypeError:
    return TypeError(f"Unsupported type {type(x)}")


def _operand(x):
    """An operand of a CuPy kernel: a CuPy array or a scalar, nothing else."""
    if type(x) is ndarray:
        return x._a
    if isinstance(x, (bool, int, float, complex, np.generic)):
        return x
    raise _unsupported(x)


def _arg(x):
    """An argument of a cupy function: CuPy arrays unwrap, NumPy arrays are refused, containers
    are looked into (concatenate([...]))."""
    if type(x) is ndarray:
        return x._a
    if isinstance(x, np.ndarray):
        raise _unsupported(x)
    if isinstance(x, (list, tuple)):
        return type(x)(_arg(y) for y in x)
    return x


def _index(x):
    """An index: CuPy arrays unwrap; NumPy arrays and lists are accepted (CuPy copies them over)."""
    if type(x) is ndarray:
        return x._a
    if isinstance(x, tuple):
        return tuple(_index(y) for y in x)
    return x


def _advanced(key) -> bool:
    """Whether an index holds arrays or lists (advanced indexing), not only ints and slices."""
    parts = key if isinstance(key, tuple) else (key,)
    return any(isinstance(p, (list, np.ndarray, ndarray, bool, np.bool_)) for p in parts)


def _device_of(args) -> int:
    for a in args:
        if type(a) is ndarray:
            return a._dev
        if isinstance(a, (list, tuple)):
            for b in a:
                if type(b) is ndarray:
                    return b._dev
    return STATE.current


def _wrap(a, dev: int | None = None) -> "ndarray":
    out = ndarray.__new__(ndarray)
    out._a = a
    out._dev = STATE.current if dev is None else dev
    if a.base is None and a.nbytes:  # owns its memory: counts in the pool until collected
        STATE.used[out._dev] = STATE.used.get(out._dev, 0) + a.nbytes
        STATE.reserved[out._dev] = max(STATE.reserved.get(out._dev, 0), STATE.used[out._dev])
        weakref.finalize(out, _release, out._dev, a.nbytes)
    return out


def _release(dev: int, nbytes: int) -> None:
    STATE.used[dev] = STATE.used.get(dev, 0) - nbytes


def _out(r, dev: int | None = None):
    """NumPy results as CuPy gives them: arrays (0-d for scalars), tuples of arrays."""
    if isinstance(r, np.ndarray):
        return _wrap(r, dev)
    if isinstance(r, np.generic):
        return _wrap(np.asarray(r), dev)
    if isinstance(r, tuple):
        return tuple(_out(x, dev) for x in r)
    if isinstance(r, list):
        return [_out(x, dev) for x in r]
    return r


def _rebuild(a: np.ndarray) -> "ndarray":
    return _wrap(a)


class Device:
    """cupy.cuda.Device: an index, a context manager, use() and synchronize()."""

    def __init__(self, device=None) -> None:
        _check_driver()
        if device is None:
            device = STATE.current
        device = int(device.id if isinstance(device, Device) else device)
        if not 0 <= device < STATE.device_count:
            raise CUDARuntimeError("cudaErrorInvalidDevice: invalid device ordinal")
        self.id = device
        self._prev = []

    def use(self) -> None:
        STATE.current = self.id

    def synchronize(self) -> None:
        pass  # host memory: nothing is ever in flight

    @property
    def compute_capability(self) -> str:
        return "90"

    def __enter__(self) -> "Device":
        self._prev.append(STATE.current)
        STATE.current = self.id
        return self

    def __exit__(self, *exc) -> None:
        STATE.current = self._prev.pop()

    def __eq__(self, other) -> bool:
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self) -> int:
        return hash(self.id)

    def __repr__(self) -> str:
        return f"<CUDA Device {self.id}>"


class _Pointer:
    def __init__(self, a: np.ndarray) -> None:
        self.ptr = a.__array_interface__["data"][0]


class ndarray:
    """cupy.ndarray over a NumPy array standing for device memory."""

    __slots__ = ("_a", "_dev", "__weakref__")
    __array_priority__ = 100
    __hash__ = None

    def __init__(self, shape, dtype=float, memptr=None, strides=None, order="C") -> None:
        self._a = np.empty(shape, dtype, order=order)
        self._dev = STATE.current

    # conversions CuPy refuses or does explicitly
    def __array__(self, dtype=None, copy=None):
        raise TypeError(IMPLICIT)

    def get(self, stream=None, order="C", out=None, blocking=True) -> np.ndarray:
        return np.array(self._a, order=order, copy=True)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return getattr(_ufunc(ufunc), method)(*inputs, **kwargs)

    def __array_function__(self, func, types_, args, kwargs):
        module = cupy
        for part in func.__module__.split(".")[1:]:
            module = getattr(module, part, None)
            if module is None:
                return NotImplemented
        impl = getattr(module, func.__name__, None)
        return NotImplemented if impl is None else impl(*args, **kwargs)

    @property
    def __cuda_array_interface__(self) -> dict:
        d = dict(self._a.__array_interface__)
        d["version"] = 3
        d["stream"] = 1
        return d

    @property
    def device(self) -> Device:
        return Device(self._dev)

    @property
    def data(self) -> _Pointer:
        return _Pointer(self._a)

    # attributes that read the same as NumPy's
    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    strides = property(lambda self: self._a.strides)
    itemsize = property(lambda self: self._a.itemsize)
    nbytes = property(lambda self: self._a.nbytes)
    flags = property(lambda self: self._a.flags)
    T = property(lambda self: _wrap(self._a.T, self._dev))
    mT = property(lambda self: _wrap(np.swapaxes(self._a, -1, -2), self._dev))

    @property
    def real(self) -> "ndarray":
        return _wrap(self._a.real, self._dev)

    @real.setter
    def real(self, value) -> None:
        self._a.real = _operand(value)

    @property
    def imag(self) -> "ndarray":
        return _wrap(self._a.imag, self._dev)

    @imag.setter
    def imag(self, value) -> None:
        self._a.imag = _operand(value)

    @property
    def base(self):
        return None if self._a.base is None else _wrap(self._a.base, self._dev)

    def __getattr__(self, name):
        # methods (sum, reshape, astype, ...) run on the host array; never NumPy's conversion
        # hooks (__array_interface__, __array_struct__), which would let NumPy read the data
        if name.startswith("__"):
            raise AttributeError(name)
        attr = getattr(self._a, name)
        if not callable(attr):
            return _out(attr, self._dev)

        def method(*args, **kwargs):
            args = tuple(_index(a) for a in args)
            kwargs = {k: _index(v) for k, v in kwargs.items()}
            return _out(attr(*args, **kwargs), self._dev)
        method.__name__ = name
        return method

    def __getitem__(self, key):
        return _out(self._a[_index(key)], self._dev)

    def __setitem__(self, key, value) -> None:
        if isinstance(value, np.ndarray) and value.ndim and not _advanced(key):
            # CuPy fills basic-indexed views with scalars only (ndarray.fill)
            raise ValueError("non-scalar numpy.ndarray cannot be used for fill")
        self._a[_index(key)] = _index(value)

    def __len__(self) -> int:
        return len(self._a)

    def __iter__(self):
        if self._a.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(len(self._a)))

    def __bool__(self) -> bool:
        return bool(self._a)

    def __int__(self) -> int:
        return int(self._a)

    def __float__(self) -> float:
        return float(self._a)

    def __complex__(self) -> complex:
        return complex(self._a)

    def __index__(self) -> int:
        return self._a.__index__()

    def __repr__(self) -> str:
        return repr(self._a)

    def __str__(self) -> str:
        return str(self._a)

    def __copy__(self) -> "ndarray":
        return _wrap(self._a.copy(), self._dev)

    def __deepcopy__(self, memo) -> "ndarray":
        return _wrap(self._a.copy(), self._dev)

    def __reduce__(self):
        return _rebuild, (self._a.copy(),)

    def copy(self, order="C") -> "ndarray":
        # CuPy copies onto the current device (how arrays move between GPUs)
        return _wrap(self._a.copy(order=order), STATE.current)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        if dl_device is not None and tuple(dl_device) != (KDLCUDA, self._dev):
            raise BufferError("cannot export a CUDA array to another device")
        kwargs = {} if max_version is None else {"max_version": max_version}
        capsule = self._a.__dlpack__(**kwargs)
        _set_capsule_device(capsule, KDLCUDA, self._dev)  # what a consumer reads: CUDA memory
        return capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return (KDLCUDA, self._dev)


def _binary(name: str, inplace: bool = False):
    op = getattr(np.ndarray, name)

    def method(self, other):
        if type(other) is not ndarray and getattr(other, "__array_priority__", 0) > ndarray.__array_priority__:
            return NotImplemented  # fgrad's Tensor and tracers take over, as with CuPy
        o = _operand(other)
        r = op(self._a, o)
        return self if inplace else _out(r, self._dev)
    method.__name__ = name
    return method


for _n in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor",
           "lshift", "rshift", "divmod"):
    setattr(ndarray, f"__{_n}__", _binary(f"__{_n}__"))
    setattr(ndarray, f"__r{_n}__", _binary(f"__r{_n}__"))
    if _n != "divmod":
        setattr(ndarray, f"__i{_n}__", _binary(f"__i{_n}__", inplace=True))
for _n in ("lt", "le", "gt", "ge", "eq", "ne"):
    setattr(ndarray, f"__{_n}__", _binary(f"__{_n}__"))
def _unary(name: str):
    op = getattr(np.ndarray, name)

    def method(self):
        return _out(op(self._a), self._dev)
    method.__name__ = name
    return method


for _n in ("neg", "pos", "abs", "invert"):
    setattr(ndarray, f"__{_n}__", _unary(f"__{_n}__"))
ndarray.__module__ = "cupy"


# --- functions ----------------------------------------------------------------------------

class _Ufunc:
    """A cupy ufunc: operands must be CuPy arrays or scalars."""

    def __init__(self, f) -> None:
        self._f = f
        self.__name__ = f.__name__
        self.nin, self.nout, self.identity = getattr(f, "nin", 1), getattr(f, "nout", 1), getattr(f, "identity", None)

    def _kwargs(self, kwargs):
        kw = dict(kwargs)
        if "out" in kw:
            out = kw["out"]
            kw["out"] = tuple(_operand(o) for o in out) if isinstance(out, tuple) else _operand(out)
        return kw

    def __call__(self, *args, **kwargs):
        r = self._f(*(_operand(a) for a in args), **self._kwargs(kwargs))
        return _out(r, _device_of(args))

    def reduce(self, a, *args, **kwargs):
        return _out(self._f.reduce(_operand(a), *args, **self._kwargs(kwargs)), _device_of((a,)))

    def accumulate(self, a, *args, **kwargs):
        return _out(self._f.accumulate(_operand(a), *args, **self._kwargs(kwargs)), _device_of((a,)))

    def reduceat(self, a, indices, *args, **kwargs):
        return _out(self._f.reduceat(_operand(a), _index(indices), *args, **self._kwargs(kwargs)), _device_of((a,)))

    def outer(self, a, b, **kwargs):
        return _out(self._f.outer(_operand(a), _operand(b), **self._kwargs(kwargs)), _device_of((a, b)))

    def at(self, a, indices, b=None) -> None:
        args = () if b is None else (_operand(b),)
        self._f.at(_operand(a), _index(indices), *args)


@functools.lru_cache(maxsize=None)
def _ufunc(f) -> _Ufunc:
    return _Ufunc(f)


def _function(f, name: str):
    def call(*args, **kwargs):
        r = f(*(_arg(a) for a in args), **{k: _arg(v) for k, v in kwargs.items()})
        return _out(r, _device_of(args))
    call.__name__ = name
    call.__qualname__ = name
    return call


class _Namespace(types.ModuleType):
    """A module of cupy functions over a NumPy/SciPy module: ufuncs and functions are wrapped,
    types and constants pass through, submodules become namespaces too."""

    def __init__(self, name: str, host, overrides: dict | None = None) -> None:
        super().__init__(name)
        self._host = host
        self.__dict__.update(overrides or {})

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        obj = getattr(self._host, name)
        if isinstance(obj, np.ufunc):
            out = _ufunc(obj)
        elif isinstance(obj, types.ModuleType):
            out = _Namespace(f"{self.__name__}.{name}", obj)
        elif callable(obj) and not isinstance(obj, type):
            out = _function(obj, name)
        else:
            out = obj
        setattr(self, name, out)
        return out


def _check_driver() -> None:
    if STATE.broken:
        raise CUDARuntimeError("cudaErrorNoDevice: no CUDA-capable device is detected")


def asarray(a, dtype=None, order=None, *, blocking=False):
    """CuPy's asarray: a CuPy array of the right dtype is returned as is; host data is copied."""
    if type(a) is ndarray:
        return a if dtype is None or np.dtype(dtype) == a.dtype else a.astype(dtype)
    if hasattr(a, "__cuda_array_interface__"):
        raise TypeError("the fake CuPy reads no foreign device arrays")
    _check_driver()
    return _wrap(np.array(a, dtype=dtype, order=order or "K", copy=True))


def array(obj, dtype=None, copy=True, order="K", subok=False, ndmin=0, *, blocking=False):
    if type(obj) is ndarray:
        a = np.array(obj._a, dtype=dtype, copy=bool(copy), order=order, ndmin=ndmin)
        return obj if a is obj._a else _wrap(a, STATE.current)
    if isinstance(obj, (list, tuple)) and any(type(x) is ndarray for x in obj):
        return _wrap(np.array([x._a if type(x) is ndarray else x for x in obj], dtype=dtype, ndmin=ndmin))
    _check_driver()
    return _wrap(np.array(obj, dtype=dtype, copy=True, order=order, ndmin=ndmin))


def asnumpy(a, stream=None, order="C", out=None, *, blocking=True) -> np.ndarray:
    return a.get() if type(a) is ndarray else np.asarray(a, order=order)


def ascontiguousarray(a, dtype=None):
    if type(a) is not ndarray:
        raise _unsupported(a)
    return _wrap(np.ascontiguousarray(a._a, dtype=dtype), a._dev)


def get_array_module(*args):
    return cupy if any(type(a) is ndarray for a in args) else np


_GetName = ctypes.pythonapi.PyCapsule_GetName
_GetName.restype = ctypes.c_char_p
_GetName.argtypes = [ctypes.py_object]
_GetPointer = ctypes.pythonapi.PyCapsule_GetPointer
_GetPointer.restype = ctypes.c_void_p
_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
# offset of DLTensor.device in DLManagedTensor / DLManagedTensorVersioned (see dlpack.h)
_DEVICE_OFFSET = {b"dltensor": 8, b"dltensor_versioned": 40}


def _device_field(capsule):
    name = _GetName(capsule)
    return (ctypes.c_int32 * 2).from_address(_GetPointer(capsule, name) + _DEVICE_OFFSET[name])


def _capsule_device(capsule) -> tuple[int, int]:
    field = _device_field(capsule)
    return field[0], field[1]


def _set_capsule_device(capsule, device_type: int, device_id: int) -> None:
    """Rewrite the device a capsule of host memory claims: the stand-in's arrays are host
    memory playing GPU memory, and consumers decide by this field."""
    field = _device_field(capsule)
    field[0], field[1] = device_type, device_id


class _DLPackCapsule:
    def __init__(self, capsule) -> None:
        self._c = capsule

    def __dlpack__(self, **kwargs):
        return self._c

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)


class _Writable:
    """A read-only host array's memory, writable (CuPy arrays always are): NumPy imports
    unversioned capsules read-only."""

    def __init__(self, a: np.ndarray) -> None:
        self.__array_interface__ = dict(a.__array_interface__, data=(a.__array_interface__["data"][0], False))
        self._keep = a


def _imported(capsule, dev: int | None = None) -> ndarray:
    if _capsule_device(capsule)[0] == KDLCUDA:
        _set_capsule_device(capsule, 1, 0)  # back to what it is, host memory, for NumPy to read
    a = np.from_dlpack(_DLPackCapsule(capsule))
    return _wrap(a if a.flags.writeable else np.asarray(_Writable(a)), dev)


def from_dlpack(obj, *, device=None, copy=None):
    """cupy.from_dlpack: CUDA producers only (CuPy refuses CPU ones), capsules accepted."""
    if not hasattr(obj, "__dlpack_device__"):
        return _imported(obj)
    dev_type, dev_id = obj.__dlpack_device__()
    if dev_type == 1:
        raise TypeError("CPU arrays cannot be directly imported to CuPy. Use `cupy.array(numpy.from_dlpack(input))` "
                        "instead.")
    if dev_type != KDLCUDA:
        raise TypeError(f"Unsupported array type: {dev_type}")
    return _imported(obj.__dlpack__(stream=1), int(dev_id))


class MemoryPool:
    """cupy.cuda.MemoryPool: byte counts of the current device."""

    def used_bytes(self) -> int:
        return STATE.used.get(STATE.current, 0)

    def total_bytes(self) -> int:
        return max(STATE.reserved.get(STATE.current, 0), self.used_bytes())

    def free_bytes(self) -> int:
        return self.total_bytes() - self.used_bytes()

    def free_all_blocks(self, stream=None) -> None:
        STATE.reserved[STATE.current] = self.used_bytes()


_POOL = MemoryPool()


class _Stream:
    ptr = 0

    def synchronize(self) -> None:
        pass


def _runtime() -> types.ModuleType:
    rt = types.ModuleType("cupy.cuda.runtime")

    def getDeviceCount() -> int:
        _check_driver()
        return STATE.device_count

    def getDevice() -> int:
        return STATE.current

    def setDevice(i: int) -> None:
        Device(i).use()

    def getDeviceProperties(i: int) -> dict:
        Device(i)
        return {"name": b"Fake CuPy GPU", "major": 9, "minor": 0, "totalGlobalMem": 1 << 34,
                "multiProcessorCount": 1}

    def memGetInfo() -> tuple[int, int]:
        total = 1 << 34
        return total - _POOL.total_bytes(), total

    for f in (getDeviceCount, getDevice, setDevice, getDeviceProperties, memGetInfo):
        setattr(rt, f.__name__, f)
    rt.CUDARuntimeError = CUDARuntimeError
    return rt


_SCATTER_ADD_TYPES = (np.int32, np.float16, np.float32, np.float64, np.uint32, np.uint64)


def _scatter_add(a, slices, value) -> None:
    """cupyx.scatter_add: atomicAdd, which CUDA has for a few dtypes only."""
    if _advanced(slices) and a.dtype.type not in _SCATTER_ADD_TYPES:
        raise TypeError("scatter_add only supports int32, float16, float32, float64, uint32, uint64, as data type")
    np.add.at(_operand(a), _index(slices), _index(value))


def _build():
    cuda = types.ModuleType("cupy.cuda")
    cuda.Device = Device
    cuda.runtime = _runtime()
    cuda.MemoryPool = MemoryPool
    cuda.Stream = _Stream
    cuda.get_current_stream = lambda device=None: _Stream()
    cuda.is_available = lambda: not STATE.broken and STATE.device_count > 0
    random = _Namespace("cupy.random", np.random)
    overrides = {
        "ndarray": ndarray, "asarray": asarray, "asanyarray": asarray, "array": array, "asnumpy": asnumpy,
        "ascontiguousarray": ascontiguousarray, "get_array_module": get_array_module,
        "from_dlpack": from_dlpack, "cuda": cuda, "random": random,
        "get_default_memory_pool": lambda: _POOL, "get_default_pinned_memory_pool": lambda: MemoryPool(),
        "__version__": "0.0.fake", "__file__": __file__, "_fake": sys.modules[__name__],
    }
    cp = _Namespace("cupy", np, overrides)
    cupyx = types.ModuleType("cupyx")
    cupyx.scatter_add = _scatter_add
    cupyx.scipy = types.ModuleType("cupyx.scipy")
    cupyx.scipy.special = _Namespace("cupyx.scipy.special", scipy.special)
    cupyx.scipy.linalg = _Namespace("cupyx.scipy.linalg", scipy.linalg)
    cupyx.scipy.signal = _Namespace("cupyx.scipy.signal", scipy.signal)
    modules = {"cupy": cp, "cupy.cuda": cuda, "cupy.cuda.runtime": cuda.runtime, "cupy.random": random,
               "cupyx": cupyx, "cupyx.scipy": cupyx.scipy, "cupyx.scipy.special": cupyx.scipy.special,
               "cupyx.scipy.linalg": cupyx.scipy.linalg, "cupyx.scipy.signal": cupyx.scipy.signal}
    return cp, modules


cupy = None


def install(monkeypatch=None, device_count: int = 1, broken: bool = False):
    """Put the fake into sys.modules as cupy, cupyx, ... (through `monkeypatch` when given, so
    that it is removed when the test ends) and return the cupy module."""
    global cupy, STATE
    STATE = _State(device_count, broken)
    cupy, modules = _build()
    for name, mod in modules.items():
        if monkeypatch is not None:
            monkeypatch.setitem(sys.modules, name, mod)
        else:
            sys.modules[name] = mod
    return cupy


def is_installed() -> bool:
    """True when sys.modules["cupy"] is this fake."""
    return getattr(sys.modules.get("cupy"), "_fake", None) is sys.modules[__name__]


__all__ = ["install", "is_installed", "ndarray", "Device", "MemoryPool", "CUDARuntimeError"]
