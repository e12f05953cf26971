"""Abstract values: the shape and dtype a traced value stands for."""
from __future__ import annotations

import numpy as np

_SHORT = {
    "float16": "f16", "float32": "f32", "float64": "f64", "int8": "i8", "int16": "i16",
    "int32": "i32", "int64": "i64", "uint8": "u8", "uint16": "u16", "uint32": "u32",
    "uint64": "u64", "bool": "bool", "complex64": "c64", "complex128": "c128",
}


class ShapedArray:
    """Shape and dtype of an array; what tracers and IR variables carry."""

    __slots__ = ("shape", "dtype")
    # A weakly typed value stands for a Python number: it promotes like one (x32 * 2.0 stays
    # float32). Only WeakShapedArray sets it, so ordinary avals pay nothing for the flag.
    weak_type = False

    def __init__(self, shape: tuple, dtype) -> None:
        self.shape = tuple([int(d) for d in shape])  # (a list: tuple(generator) resizes)
        self.dtype = np.dtype(dtype)

    @classmethod
    def of_array(cls, x) -> "ShapedArray":
        """From an array whose .shape and .dtype are already canonical (skips conversion)."""
        a = cls.__new__(cls)
        a.shape = x.shape
        a.dtype = x.dtype
        return a

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    def str_short(self) -> str:
        return f"{_SHORT.get(self.dtype.name, self.dtype.name)}[{','.join(map(str, self.shape))}]"

    __repr__ = str_short

    def __eq__(self, other) -> bool:
        return isinstance(other, ShapedArray) and self.shape == other.shape and self.dtype == other.dtype

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype))


class WeakShapedArray(ShapedArray):
    """The aval of a traced Python number (a jit argument given as 2.0, or Python arithmetic
    on such values): it keeps NumPy's weak-scalar promotion under staging."""

    __slots__ = ()
    weak_type = True


PY_NUMBERS = (bool, int, float, complex)


def is_weak(x) -> bool:
    """A Python number, or a traced value standing for one (its class sets `_weak`): it takes
    the dtype it meets, as NumPy's promotion treats Python scalars."""
    return x.__class__ in PY_NUMBERS or getattr(x, "_weak", False)


def weak_aval(aval: ShapedArray) -> ShapedArray:
    return WeakShapedArray(aval.shape, aval.dtype)


def is_float(dtype) -> bool:
    return np.dtype(dtype).kind in "fc"


def float_dtype(dtype):
    """The dtype NumPy gives a float function of `dtype` (ints become float64)."""
    dtype = np.dtype(dtype)
    return dtype if dtype.kind in "fc" else np.dtype(np.float64)
