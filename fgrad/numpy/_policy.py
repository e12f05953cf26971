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

`NUMPY` is fgrad.numpy's dialect. `TORCH` is fgrad.torch's, which maps PyTorch's
names and arguments (dim, keepdim, input/other) onto fgrad.numpy and passes `policy=TORCH`.
"""
from __future__ import annotations

import numpy as np

from ..core.avals import PY_NUMBERS, float_dtype, is_weak  # noqa: F401  (is_weak: re-exported)
from ..core.errors import (
    FgradIndexError,
    FgradRuntimeError,
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


# --- PyTorch's dialect ---------------------------------------------------------------------------

_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}
_PY_KINDS = {bool: "b", int: "i", float: "f", complex: "c"}
_NP_BOOL = np.dtype(np.bool_)
_COMPLEX = {np.dtype(np.float64): np.dtype(np.complex128)}


def promote_types(a, b):
    """torch.promote_types on NumPy dtypes: within a category NumPy's rule, across
    categories the higher category's type (int64 + float16 -> float16)."""
    if a == b:
        return a
    ca, cb = _CATEGORY[a.kind], _CATEGORY[b.kind]
    if ca == cb:
        return np.promote_types(a, b)
    return a if ca > cb else b


# PyTorch's names of dtypes in its matmul errors: the legacy tensor type and the C++ type
_LEGACY = {"float16": "Half", "float32": "Float", "float64": "Double", "int8": "Char", "int16": "Short",
           "int32": "Int", "int64": "Long", "uint8": "Byte", "bool": "Bool", "complex64": "ComplexFloat",
           "complex128": "ComplexDouble"}
_CPP = {"float16": "c10::Half", "float32": "float", "float64": "double", "int8": "signed char",
        "int16": "short int", "int32": "int", "int64": "long int", "uint8": "unsigned char", "bool": "bool",
        "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


class TorchPolicy(Policy):
    """PyTorch's dialect (fgrad.torch's): promotion by categories, the default float
    dtype (float32 unless set_default_dtype changed it), and PyTorch's exception types and
    messages."""

    name = "torch"

    def __init__(self) -> None:
        self.default_float = np.dtype(np.float32)

    # --- promotion ------------------------------------------------------------------------

    def default_complex(self):
        return _COMPLEX.get(self.default_float, np.dtype(np.complex64))

    def python_dtype(self, kind: str):
        """The dtype PyTorch gives Python numbers (and lists of them) that NumPy reads as kind
        `kind`: bool, int64, the default float or the default complex dtype."""
        if kind == "f":
            return self.default_float
        return self.default_complex() if kind == "c" else _NP_BOOL if kind == "b" else _INT64

    def scalar_dtype(self, x):
        """The dtype PyTorch gives a Python number; None for anything else."""
        kind = _PY_KINDS.get(type(x))
        return None if kind is None else self.python_dtype(kind)

    @staticmethod
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

    def result_dtype(self, *args):
        """torch.result_type: tensors with dimensions outrank 0-d tensors, which outrank Python
        numbers; a lower-ranked operand only matters when its category is higher."""
        dim = zero = scal = None
        for x in args:
            kind = _PY_KINDS.get(type(x))
            if kind is not None:
                s = self.python_dtype(kind)
                scal = s if scal is None else promote_types(scal, s)
                continue
            v = getattr(x, "_value", x)
            dt = v.dtype
            if v.ndim:
                dim = dt if dim is None else promote_types(dim, dt)
            else:
                zero = dt if zero is None else promote_types(zero, dt)
        return self._combine(dim, self._combine(zero, scal))

    def float_dtype(self, dtype):
        return dtype if dtype.kind in "fc" else self.default_float

    def accumulate_dtype(self, dtype):
        return _INT64 if dtype.kind in "biu" else dtype

    def reduction_float_dtype(self, name, dtype):
        if dtype.kind in "fc":
            return dtype
        if name == "mean":
            raise FgradRuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating "
                               f"point or complex dtype. Got: fgrad.{dtype}")
        raise FgradRuntimeError(f"std and var only support floating point and complex dtypes, got fgrad.{dtype}")

    def check_bool_arithmetic(self, name, operands, result) -> None:
        """PyTorch refuses `-` on a boolean tensor, whatever the other operand."""
        for x in operands:
            if not isinstance(x, _PY_SCALARS) and dtype_of(x).kind == "b":
                raise self.bool_arithmetic_error(name)

    # --- errors -----------------------------------------------------------------------------

    def broadcast_error(self, name, shapes, dim, a, b):
        return FgradRuntimeError(f"The size of tensor a ({a}) must match the size of tensor b ({b}) at non-singleton "
                            f"dimension {dim}: shapes {_shape_str(shapes)} cannot be broadcast together", doc="tensor-shapes")

    def broadcast_to_error(self, name, shape, target, dim):
        if len(target) < len(shape):  # (PyTorch's broadcast_to is expand)
            return FgradRuntimeError(f"expand: the number of sizes provided ({len(target)}) must be greater or equal "
                                f"to the number of dimensions in the tensor ({len(shape)})")
        existing = shape[dim - (len(target) - len(shape))]
        return FgradRuntimeError(f"The expanded size of the tensor ({target[dim]}) must match the existing size "
                            f"({existing}) at non-singleton dimension {dim}.  Target sizes: {list(target)}.  "
                            f"Tensor sizes: {list(shape)}")

    def axis_error(self, name, what, axis, ndim):
        n = max(ndim, 1)
        return FgradIndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {axis})")

    def repeated_axis_error(self, name, axis, repeated):
        return FgradRuntimeError(f"dim {repeated} appears multiple times in the list of dims")

    def negative_dimension_error(self, name, what, dims, d, allow_unknown):
        if allow_unknown:
            return FgradRuntimeError(f"invalid shape dimension {d} at index {list(dims).index(d)} of shape {list(dims)}")
        return FgradRuntimeError(f"Trying to create tensor with negative dimension {d}: {list(dims)}")

    def reshape_error(self, name, shape, in_shape, size, n):
        return FgradRuntimeError(f"shape '{list(shape)}' is invalid for input of size {size} "
                            f"(input shape {tuple(in_shape)})")

    def permutation_error(self, name, axes, ndim, shape):
        if len(axes) != ndim:
            return FgradRuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match "
                                f"the length of the desired ordering of dimensions i.e. input.dim() = {ndim} "
                                f"is not equal to len(dims) = {len(axes)}")
        return FgradRuntimeError(f"permute(): duplicate dims are not allowed (got {axes})")

    def bool_arithmetic_error(self, name):
        what = "Negation, the `-` operator, on" if name == "negative" else "Subtraction, the `-` operator, with"
        return FgradRuntimeError(f"{what} a bool tensor is not supported. If you are trying to invert a mask, use "
                            "the `~` or `logical_not()` operator instead.")

    def negative_power_error(self, name, dtype, y):
        return FgradRuntimeError("Integers to negative integer powers are not allowed.")

    def empty_join_error(self, name):
        if name == "stack":
            return FgradRuntimeError("stack expects a non-empty TensorList")
        return FgradRuntimeError("torch.cat(): expected a non-empty list of Tensors")

    def zero_dim_join_error(self, name, k):
        return FgradRuntimeError(f"zero-dimensional tensor (at position {k}) cannot be concatenated")

    def concatenate_error(self, name, shapes, axis, k, dim):
        first, s = shapes[0], shapes[k]
        if dim is None:
            return FgradRuntimeError(f"Tensors must have same number of dimensions: got {len(first)} and {len(s)} "
                                f"(shapes {first} and {s})")
        return FgradRuntimeError(f"Sizes of tensors must match except in dimension {axis}. Expected size "
                            f"{first[dim]} but got size {s[dim]} for tensor number {k} in the list "
                            f"(shapes {first} and {s})")

    def stack_error(self, name, shapes, k):
        return FgradRuntimeError(f"stack expects each tensor to be equal size, but got {list(shapes[0])} at entry 0 "
                            f"and {list(shapes[k])} at entry {k}")

    def check_matmul_dtypes(self, a, b) -> None:
        """PyTorch multiplies matrices of one dtype only (no promotion)."""
        da, db = dtype_of(a), dtype_of(b)
        if da == db or is_weak(a) or is_weak(b):
            return
        if len(shape_of(a)) == 1 and len(shape_of(b)) == 1:
            raise FgradRuntimeError(f"dot : expected both vectors to have same dtype, but found {_LEGACY[da.name]} and "
                               f"{_LEGACY[db.name]}")
        raise FgradRuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_CPP[da.name]} != {_CPP[db.name]}")

    def matmul_error(self, name, sa, sb):
        if not sa or not sb:
            return FgradRuntimeError(f"both arguments to matmul need to be at least 1D, but they are {len(sa)}D "
                                f"and {len(sb)}D")
        return FgradRuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({'x'.join(map(str, sa))} and "
                            f"{'x'.join(map(str, sb))})")

    def empty_reduction_error(self, name, shape, axis):
        if axis is None and name.startswith("arg"):
            return FgradIndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
        if axis is None:
            return FgradRuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                                "Specify the reduction dim with the 'dim' argument.")
        return FgradIndexError(f"{name}(): Expected reduction dim {axis} to have non-zero size.")


NUMPY = Policy()
TORCH = TorchPolicy()
