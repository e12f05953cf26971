"""The two dialects of fgrad's one array API: how fgrad.numpy promotes dtypes and how it
words its errors.

fgrad.numpy normalises arguments, promotes, broadcasts, does shape arithmetic and validates
in one place. What differs between NumPy and PyTorch is a `Policy`, which those functions
and helpers take as `policy=` (NumPy's by default):

* promotion: `result_dtype` (NumPy's rules with Python numbers weak, or PyTorch's
  categories), `float_dtype` (what integers become in a division or a float function:
  float64, or PyTorch's default float, float32), `accumulate_dtype` (the dtype sums and
  products of small integers are computed in) and `reduction_float_dtype` (mean, var, std);
* error wording: each `*_error` method returns the exception to raise, either fgrad's own
  (ShapeError, TypeError, ... naming the function and the fix) or PyTorch's exception
  type and sentence, which fgrad.torch promises.

`NUMPY` is fgrad.numpy's dialect. Another dialect subclasses `Policy` (public as
fgrad.extend.numpy.Policy): fgrad.torch's `TORCH` (fgrad/torch/_tensor/_policy.py) maps
PyTorch's names and arguments (dim, keepdim, input/other) onto fgrad.numpy and passes
`policy=TORCH`.
"""
from __future__ import annotations

import numpy as np

from ..core.avals import PY_NUMBERS, float_dtype, is_weak  # noqa: F401  (is_weak: re-exported)
from ..core.errors import (
    FgradTypeError,
    FgradValueError,
    ShapeError,
)
from ..core.trace import aval_of

_PY_SCALARS = PY_NUMBERS  # Python numbers (isinstance checks here also accept their subclasses)
_INT64, _UINT64 = np.dtype(np.int64), np.dtype(np.uint64)
_FAST_TYPES = {np.ndarray}  # types whose .shape and .dtype are NumPy's (see register_fast_type)


def register_fast_type(cls) -> None:
    """Types with trustworthy .shape/.dtype that promote() may pass through unchanged."""
    _FAST_TYPES.add(cls)


def dtype_of(x):
    """The dtype of any value fgrad handles; arrays without building an aval."""
    t = type(x)
    if t in _FAST_TYPES:
        return x.dtype
    return aval_of(x).dtype


def shape_of(x) -> tuple:
    """The shape of any value fgrad handles (as dtype_of)."""
    t = type(x)
    if t in _FAST_TYPES:
        return x.shape
    return aval_of(x).shape


# Stand-ins NumPy's promotion treats as weak, for traced Python numbers (jit arguments)
_WEAK_KEYS = {"b": False, "i": 0, "u": 0, "f": 0.0, "c": 0j}


def _promotion_key(a):
    if isinstance(a, _PY_SCALARS):
        return a
    if getattr(a, "_weak", False):
        return _WEAK_KEYS[a.aval.dtype.kind]
    return dtype_of(a)


def _shape_str(shapes) -> str:
    return " and ".join(str(tuple(s)) for s in shapes)


class Policy:
    """NumPy's dialect: fgrad.numpy's promotion and its own error messages."""

    name = "numpy"

    # --- promotion ------------------------------------------------------------------------

    def result_dtype(self, *args):
        """np.result_type with Python numbers (and traced stand-ins for them) weak."""
        return np.result_type(*[_promotion_key(a) for a in args])

    def float_dtype(self, dtype):
        """The dtype a float function or a true division of `dtype` computes in."""
        return float_dtype(dtype)

    def accumulate_dtype(self, dtype):
        """The dtype sum, prod and cumsum of `dtype` accumulate in (NumPy: booleans and
        small integers as int64, small unsigned integers as uint64)."""
        if dtype.kind == "b" or dtype.kind == "i" and dtype.itemsize < 8:
            return _INT64
        if dtype.kind == "u" and dtype.itemsize < 8:
            return _UINT64
        return dtype

    def reduction_float_dtype(self, name: str, dtype):
        """The dtype mean, var and std of `dtype` compute in (integers average as float64)."""
        return float_dtype(dtype)

    def check_bool_arithmetic(self, name: str, operands, result) -> None:
        """NumPy refuses `-` whose result is boolean (True - 1 is an int)."""
        if result.kind == "b":
            raise self.bool_arithmetic_error(name)

    # --- errors -----------------------------------------------------------------------------

    def broadcast_error(self, name, shapes, dim, a, b):
        return ShapeError(f"{name}: shapes {_shape_str(shapes)} cannot be broadcast together (trailing "
                          "dimensions must be equal or 1). Reshape one operand, e.g. x[:, None] or "
                          "x.reshape(...).", doc="broadcast")

    def broadcast_to_error(self, name, shape, target, dim):
        return ShapeError(f"{name}: cannot broadcast an array of shape {tuple(shape)} to shape "
                          f"{tuple(target)} (each trailing dimension must be 1 or equal the target's, and "
                          "the target needs at least as many dimensions)")

    def axis_error(self, name, what, axis, ndim):
        return ShapeError(f"{name}: {what} {axis:.3g} is out of bounds for an array of {ndim} dimensions; "
                          f"use an {what} in [{-ndim}, {ndim})", doc="axis-range")

    def repeated_axis_error(self, name, axis, repeated):
        """`axis` (as given) names the axis `repeated` twice."""
        return ShapeError(f"{name}: repeated axis in {axis}")

    def negative_dimension_error(self, name, what, dims, d, allow_unknown):
        return ShapeError(f"{name}: negative dimension {d} in {what} {dims}; dimensions must be >= 0"
                          f"{' (or a single -1 for an inferred size)' if allow_unknown else ''}")

    def reshape_error(self, name, shape, in_shape, size, n):
        """`shape` cannot hold the `size` elements of an array of shape `in_shape`; `n` is its
        own size, or None when no size for a -1 fits (or it has two)."""
        if n is None and shape.count(-1) > 1:
            return ShapeError(f"{name}: only one dimension can be -1, got {shape}", doc="reshape-size")
        if n is None:
            return ShapeError(f"{name}: cannot reshape an array of {size} elements into shape {shape}: "
                              "no size for the -1 dimension fits", doc="reshape-size")
        return ShapeError(f"{name}: cannot reshape an array of {size} elements into shape {shape}, which "
                          f"has {n}; the sizes must match (use -1 for one inferred dimension)",
                          doc="reshape-size")

    def permutation_error(self, name, axes, ndim, shape):
        if len(axes) != ndim:
            return ShapeError(f"{name}: axes {axes} name {len(axes)} axes but the array has shape "
                              f"{shape} ({ndim} dimensions); give a permutation of {tuple(range(ndim))}")
        return ShapeError(f"{name}: axes {axes} are not a permutation of {ndim} dimensions")

    def bool_arithmetic_error(self, name):
        if name == "negative":
            return FgradTypeError("negative: the numpy boolean negative, the `-` operator, is not supported, use the "
                             "`~` operator or the logical_not function instead.")
        return FgradTypeError(f"{name}: numpy boolean subtract, the `-` operator, is not supported, use the "
                         "bitwise_xor, the `^` operator, or the logical_xor function instead.")

    def negative_power_error(self, name, dtype, y):
        return FgradValueError(f"{name}: integers to negative integer powers are not allowed (x of dtype "
                          f"{dtype} ** {y}); use a float base, e.g. x.astype(float) ** {y}", doc="int-negative-power")

    def empty_join_error(self, name):
        return FgradValueError(f"{name}: need at least one array to {name}")

    def zero_dim_join_error(self, name, k):
        return FgradValueError(f"{name}: zero-dimensional arrays cannot be concatenated")

    def concatenate_error(self, name, shapes, axis, k, dim):
        """shapes[k] does not fit shapes[0]: at axis `dim`, or in its number of axes (dim None)."""
        return ShapeError(f"{name}: all the input array dimensions except for the concatenation axis "
                          f"{axis} must match exactly, got shapes {', '.join(str(t) for t in shapes)}")

    def stack_error(self, name, shapes, k):
        return ShapeError(f"{name}: all input arrays must have the same shape, got "
                          f"{', '.join(str(t) for t in shapes)}")

    def check_matmul_dtypes(self, a, b) -> None:
        """NumPy promotes the operands of a matrix product to a common dtype."""

    def matmul_error(self, name, sa, sb):
        if not sa or not sb:
            return ShapeError(f"{name}: operands of shapes {sa} and {sb}: matmul needs at least 1-D operands "
                              "(use multiply or * for scalars)")
        nb = len(sb)
        return ShapeError(f"{name}: shapes {sa} and {sb} do not align: the last axis of the first "
                          f"({sa[-1]}) must equal the {'only' if nb == 1 else 'second-to-last'} axis of the "
                          f"second ({sb[0] if nb == 1 else sb[-2]})", doc="matmul-shapes")

    def empty_reduction_error(self, name, shape, axis):
        """`name` (max, min, argmax, argmin: no identity) over an empty axis (None: all axes)."""
        if not name.startswith("arg"):
            return FgradValueError(f"{name}: zero-size array to reduction operation (shape {shape}), which has no "
                              "identity", doc="empty-max")
        if axis is None:
            return FgradValueError(f"{name}: attempt to get {name} of an empty sequence (an array of shape {shape}); "
                              "it has no entries to choose from")
        return FgradValueError(f"{name}: attempt to get {name} of an empty sequence: axis {axis} of shape {shape} "
                          "has size 0")


NUMPY = Policy()
