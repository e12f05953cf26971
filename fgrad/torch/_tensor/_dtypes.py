"""dtypes of the Tensor facade (`torch.float32`, ...) and PyTorch's type promotion.

A `dtype` is a thin, interned wrapper of a NumPy dtype: it prints as `torch.float32`,
compares equal to the matching NumPy dtype, and NumPy accepts it anywhere a dtype goes
(`np.zeros(3, dtype=torch.float32)`) through its `.dtype` attribute.
"""
from __future__ import annotations

import numpy as np

from ...core.errors import FgradTypeError
from ._policy import _CATEGORY, TORCH  # noqa: F401
from ._policy import promote_types as _promote_types


class dtype:
    """A tensor element type, as PyTorch's torch.dtype (torch.float32, torch.int64, ...): its
    `name`, the NumPy `dtype` that holds the values, and PyTorch's attributes
    `is_floating_point`, `is_complex`, `is_signed` and `itemsize`."""

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
        return f"torch.{self.name}"

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
        raise FgradTypeError(f"fgrad has no dtype for {d!r}; use one of "
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


# --- default float dtype and promotion: PyTorch's dialect of fgrad.numpy (numpy/_policy.py) ----------

def get_default_dtype() -> dtype:
    """The dtype of floating-point tensors made from Python floats (PyTorch's
    torch.get_default_dtype; float32 unless changed).

    Returns:
        A torch dtype.
    """
    return _BY_NP[TORCH.default_float]


def set_default_dtype(d) -> None:
    """Set the default floating-point dtype (PyTorch's torch.set_default_dtype).

    Args:
        d: a floating-point dtype (torch.float32, torch.float64, ...).

    Raises:
        TypeError: d is not a floating-point dtype.
    """
    d = np_dtype(d)
    if d.kind != "f":
        raise FgradTypeError(f"only floating-point types are supported as the default type, got {d}")
    TORCH.default_float = d


def promote_types(type1, type2) -> dtype:
    """torch.promote_types: within a category NumPy's rule, across categories the higher
    category's type (int64 + float16 -> float16)."""
    return _BY_NP[_promote_types(np_dtype(type1), np_dtype(type2))]
