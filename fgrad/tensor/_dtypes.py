"""dtypes of the Tensor facade (`fgrad.float32`, ...) and PyTorch's type promotion.

A `dtype` is a thin, interned wrapper of a NumPy dtype: it prints as `fgrad.float32`,
compares equal to the matching NumPy dtype, and NumPy accepts it anywhere a dtype goes
(`np.zeros(3, dtype=fgrad.float32)`) through its `.dtype` attribute.
"""
from __future__ import annotations

import numpy as np


class dtype:
    __slots__ = ("name", "dtype", "is_floating_point", "is_complex", "is_signed", "itemsize", "_torch")

    def __init__(self, name: str, np_dtype, torch_name: str) -> None:
        self.name = name
        self.dtype = np.dtype(np_dtype)
        self.is_floating_point = self.dtype.kind == "f"
        self.is_complex = self.dtype.kind == "c"
        self.is_signed = self.dtype.kind in "ifc"
        self.itemsize = self.dtype.itemsize
        self._torch = torch_name  # legacy type name, e.g. FloatTensor (used in error messages)

    def __repr__(self) -> str:
        return f"fgrad.{self.name}"

    def __eq__(self, other) -> bool:
        if isinstance(other, dtype):
            return other is self
        try:
            return self.dtype == np.dtype(other)
        except TypeError:
            return False

    def __hash__(self) -> int:
        return hash(self.dtype)

    def __reduce__(self):
        return (as_dtype, (self.name,))


float16 = half = dtype("float16", np.float16, "HalfTensor")
float32 = float = dtype("float32", np.float32, "FloatTensor")
float64 = double = dtype("float64", np.float64, "DoubleTensor")
complex64 = cfloat = dtype("complex64", np.complex64, "ComplexFloatTensor")
complex128 = cdouble = dtype("complex128", np.complex128, "ComplexDoubleTensor")
uint8 = dtype("uint8", np.uint8, "ByteTensor")
int8 = dtype("int8", np.int8, "CharTensor")
int16 = short = dtype("int16", np.int16, "ShortTensor")
int32 = int = dtype("int32", np.int32, "IntTensor")
int64 = long = dtype("int64", np.int64, "LongTensor")
bool = dtype("bool", np.bool_, "BoolTensor")

ALL = (float16, float32, float64, complex64, complex128, uint8, int8, int16, int32, int64, bool)
_BY_NP = {d.dtype: d for d in ALL}
_BY_NAME = {d.name: d for d in ALL}


def as_dtype(d) -> dtype:
    """The facade dtype for a facade dtype, NumPy dtype, Python type or name."""
    if d.__class__ is dtype:
        return d
    if isinstance(d, str) and d in _BY_NAME:
        return _BY_NAME[d]
    try:
        return _BY_NP[np.dtype(d)]
    except (KeyError, TypeError):
        raise TypeError(f"fgrad has no dtype for {d!r}; use one of "
                        f"{', '.join(repr(x) for x in ALL)}") from None


def np_dtype(d):
    """The NumPy dtype for any dtype spelling (None stays None)."""
    if d is None:
        return None
    if d.__class__ is dtype:
        return d.dtype
    return as_dtype(d).dtype


def of_np(npd) -> dtype:
    return _BY_NP[npd]


# --- default float dtype -------------------------------------------------------------------

_default = [np.dtype(np.float32)]


def get_default_dtype() -> dtype:
    return _BY_NP[_default[0]]


def set_default_dtype(d) -> None:
    d = np_dtype(d)
    if d.kind != "f":
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    _default[0] = d


def default_float():
    """The NumPy dtype that Python floats and int->float results take (float32 unless changed)."""
    return _default[0]


# --- PyTorch's type promotion -----------------------------------------------------------------

_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def promote_types(a, b):
    """torch.promote_types on NumPy dtypes: within a category NumPy's rule, across
    categories the higher category's type (int64 + float16 -> float16)."""
    if a == b:
        return a
    ca, cb = _CATEGORY[a.kind], _CATEGORY[b.kind]
    if ca == cb:
        return np.promote_types(a, b)
    return a if ca > cb else b


def _scalar_dtype(x):
    t = type(x)
    if t is _pybool:
        return _NP_BOOL
    if t is _pyint:
        return _NP_INT64
    if t is _pyfloat:
        return _default[0]
    if t is _pycomplex:
        return np.dtype(np.complex64) if _default[0] == np.float32 else np.dtype(np.complex128)
    return None


_pybool, _pyint, _pyfloat, _pycomplex = type(True), type(1), type(1.0), type(1j)
_NP_BOOL = np.dtype(np.bool_)
_NP_INT64 = np.dtype(np.int64)


def _combine(higher, lower):
    """c10's combine_categories: the higher-priority group wins unless the lower one is of
    a higher category."""
    if higher is None:
        return lower
    if lower is None:
        return higher
    ch, cl = _CATEGORY[higher.kind], _CATEGORY[lower.kind]
    if ch == 3:
        return higher
    if cl == 3:
        return np.dtype(np.complex128 if higher == np.float64 else np.complex64) if ch == 2 else lower
    if ch == 2:
        return higher
    if higher.kind == "b" or cl == 2:
        return promote_types(higher, lower)
    return higher


def result_type(*args):
    """torch.result_type: tensors with dimensions outrank 0-d tensors, which outrank Python
    numbers; a lower-ranked operand only matters when its category is higher."""
    dim = zero = scal = None
    for x in args:
        s = _scalar_dtype(x)
        if s is not None:
            scal = s if scal is None else promote_types(scal, s)
            continue
        v = getattr(x, "_value", x)
        dt = v.dtype
        if v.ndim:
            dim = dt if dim is None else promote_types(dim, dt)
        else:
            zero = dt if zero is None else promote_types(zero, dt)
    return _combine(dim, _combine(zero, scal))


def is_python_scalar(x) -> bool:
    t = type(x)
    return t is _pyfloat or t is _pyint or t is _pybool or t is _pycomplex
