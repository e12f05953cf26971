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
    `is_floating_point`, `is_complex`, `is_signed` and `itemsize`.

    The dtypes that ml_dtypes provides (bfloat16, complex32, float8_*) resolve their NumPy
    dtype on first use: importing ml_dtypes takes about a second, which `import fgrad.torch`
    does not pay until such a dtype is used."""

    __slots__ = ("name", "dtype", "is_floating_point", "is_complex", "is_signed", "itemsize", "_torch", "_ml")

    def __init__(self, name: str, np_dtype, torch_name: str, signed: bool | None = None,
                 ml: tuple | None = None) -> None:
        self.name = name
        self._torch = torch_name  # legacy type name, e.g. FloatTensor (used in error messages)
        self._ml = ml
        if ml is not None:  # (ml_dtypes' attribute name, kind, itemsize): the NumPy dtype comes later
            _, k, self.itemsize = ml
        else:
            self.dtype = np.dtype(np_dtype)
            k = kind(self.dtype)
            self.itemsize = self.dtype.itemsize
        self.is_floating_point = k == "f"
        self.is_complex = k == "c"
        self.is_signed = k in "ifc" if signed is None else signed

    def __getattr__(self, attr: str):
        # only reached while the `dtype` slot of an ml_dtypes dtype is unset
        if attr == "dtype" and self._ml is not None:
            load_ml_dtypes()
            return self.dtype
        raise AttributeError(f"'torch.dtype' object has no attribute {attr!r}")

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
        return hash(self.name) if self._ml is not None else hash(self.dtype)

    def __reduce__(self):
        return (as_dtype, (self.name,))


def kind(npd) -> str:
    """PyTorch's kind of the NumPy dtype `npd`, as NumPy's one-letter kinds ("b", "u", "i",
    "f", "c"): NumPy's own, except "f" for ml_dtypes' floats (bfloat16, float8_*, whose NumPy
    kind is "V")."""
    k = npd.kind
    return "f" if k == "V" and npd.type.__module__ == "ml_dtypes" else k


float16 = half = dtype("float16", np.float16, "HalfTensor")
bfloat16 = dtype("bfloat16", None, "BFloat16Tensor", ml=("bfloat16", "f", 2))
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
uint16 = dtype("uint16", np.uint16, "UInt16Tensor")
uint32 = dtype("uint32", np.uint32, "UInt32Tensor")
uint64 = dtype("uint64", np.uint64, "UInt64Tensor")
complex32 = chalf = dtype("complex32", None, "ComplexHalfTensor", ml=("complex32", "c", 4))
# PyTorch's 8-bit floats: storage formats (conversion in and out; PyTorch has no arithmetic on them)
float8_e4m3fn = dtype("float8_e4m3fn", None, "Float8_e4m3fnTensor", ml=("float8_e4m3fn", "f", 1))
float8_e4m3fnuz = dtype("float8_e4m3fnuz", None, "Float8_e4m3fnuzTensor", ml=("float8_e4m3fnuz", "f", 1))
float8_e5m2 = dtype("float8_e5m2", None, "Float8_e5m2Tensor", ml=("float8_e5m2", "f", 1))
float8_e5m2fnuz = dtype("float8_e5m2fnuz", None, "Float8_e5m2fnuzTensor", ml=("float8_e5m2fnuz", "f", 1))
float8_e8m0fnu = dtype("float8_e8m0fnu", None, "Float8_e8m0fnuTensor", signed=False, ml=("float8_e8m0fnu", "f", 1))

ALL = (float16, float32, float64, complex64, complex128, uint8, int8, int16, int32, int64, bool,
       bfloat16, uint16, uint32, uint64, complex32, float8_e4m3fn, float8_e4m3fnuz, float8_e5m2,
       float8_e5m2fnuz, float8_e8m0fnu)
_BY_NP = {d.dtype: d for d in ALL if d._ml is None}
_BY_NAME = {d.name: d for d in ALL}


def load_ml_dtypes() -> None:
    """Import ml_dtypes and give its dtypes (bfloat16, complex32, float8_*) their NumPy dtypes
    (once; the first use of one of them calls this)."""
    if bfloat16._ml is None or "dtype" in _LOADED:
        return
    import ml_dtypes  # here: its import takes about a second, paid only when one of its dtypes is used
    for d in ALL:
        if d._ml is not None:
            d.dtype = np.dtype(getattr(ml_dtypes, d._ml[0]))
            _BY_NP[d.dtype] = d
    _LOADED.add("dtype")
    ML_LOADED[0] = True


_LOADED: set = set()
# Whether ml_dtypes' dtypes are in use: until then no Tensor can hold one, and the facade's
# boundary skips its check for them (bfloat16 arithmetic, _boundary._call_low)
ML_LOADED = [False]


def _by_np(npd) -> "dtype":
    """The facade dtype of the NumPy dtype `npd` (ml_dtypes' dtypes registered on first sight)."""
    try:
        return _BY_NP[npd]
    except KeyError:
        if npd.type.__module__ != "ml_dtypes" or "dtype" in _LOADED:
            raise
    load_ml_dtypes()
    return _BY_NP[npd]


def as_dtype(d) -> dtype:
    """The facade dtype for a facade dtype, NumPy dtype, Python type or name."""
    if d.__class__ is dtype:
        return d
    if isinstance(d, str) and d in _BY_NAME:
        return _BY_NAME[d]
    try:
        return _by_np(np.dtype(d))
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
    """The facade dtype of a NumPy dtype."""
    try:
        return _BY_NP[npd]
    except KeyError:
        return _by_np(npd)


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
