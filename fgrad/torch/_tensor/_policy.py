"""PyTorch's dialect of fgrad.numpy's array API (`TORCH`, a `Policy`): PyTorch's type promotion
by categories, its default float dtype (float32 unless set_default_dtype changed it) and its
exception types and messages. The facade maps PyTorch's names and arguments onto fgrad.numpy
and passes `policy=TORCH`; fgrad.numpy itself knows only the `Policy` interface."""
from __future__ import annotations

import numpy as np

from ...core.avals import PY_NUMBERS as _PY_SCALARS
from ...core.avals import is_weak
from ...core.errors import FgradIndexError, FgradRuntimeError
from ...extend.numpy import Policy, dtype_of, shape_of

_INT64 = np.dtype(np.int64)


def _shape_str(shapes) -> str:
    return " and ".join(str(tuple(s)) for s in shapes)


# --- PyTorch's dialect ---------------------------------------------------------------------------

_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}
_PY_KINDS = {bool: "b", int: "i", float: "f", complex: "c"}
_NP_BOOL = np.dtype(np.bool_)
_COMPLEX = {np.dtype(np.float64): np.dtype(np.complex128)}


def _kind(d) -> str:
    """NumPy's kind of dtype `d`, with ml_dtypes' floats (bfloat16, float8_*; NumPy's kind "V",
    except float8_e5m2's "f") as "f"."""
    return "f" if d.kind == "V" else d.kind


_BAREBONES_UNSIGNED = {np.dtype(np.uint16), np.dtype(np.uint32), np.dtype(np.uint64)}
_COMPLEX_OF = {np.dtype(np.float32): np.dtype(np.complex64), np.dtype(np.float64): np.dtype(np.complex128)}
_REAL_OF = {c: f for f, c in _COMPLEX_OF.items()}


def _float8(d) -> bool:
    """Whether d is one of ml_dtypes' 8-bit floats (PyTorch's float8_* dtypes)."""
    return d.itemsize == 1 and d.kind in "Vf" and d.type.__module__ == "ml_dtypes"


def _complex_of(f):
    """The complex dtype with float parts `f` (complex32 for float16: an ml_dtypes dtype)."""
    if f == np.float16:
        import ml_dtypes  # here: a complex32 operand means ml_dtypes is loaded already
        return np.dtype(ml_dtypes.complex32)
    return _COMPLEX_OF[f]


def _real_of(c):
    """The float dtype of the complex dtype `c`'s parts."""
    return np.dtype(np.float16) if c.itemsize == 4 else _REAL_OF[c]


def promote_types(a, b):
    """torch.promote_types on NumPy dtypes: within a category NumPy's rule, across
    categories the higher category's type (int64 + float16 -> float16), a complex type and a
    float one the complex type of both precisions (complex64 + float64 -> complex128).
    PyTorch promotes uint16/32/64 and the float8 types with no other type.

    Raises:
        RuntimeError: for uint16/32/64 or a float8 type and another type.
    """
    if a == b:
        return a
    for d, other in ((a, b), (b, a)):
        if _float8(d) or d in _BAREBONES_UNSIGNED and _kind(other) != "f":
            family = "uint16, uint32, uint64 types" if d.kind == "u" else "Float8 Types"
            raise FgradRuntimeError(f"Promotion for {family} is not supported, attempted to promote {a.name} and "
                                    f"{b.name}; convert one of them first (e.g. .to(torch.float32))")
    ca, cb = _CATEGORY[_kind(a)], _CATEGORY[_kind(b)]
    if ca == cb:
        return np.promote_types(a, b)
    if {ca, cb} == {2, 3}:
        c, f = (a, b) if ca == 3 else (b, a)
        return _complex_of(np.promote_types(_real_of(c), f))
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
        ch, cl = _CATEGORY[_kind(higher)], _CATEGORY[_kind(lower)]
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
        """PyTorch refuses `-` on a boolean tensor or a Python bool, whatever the other operand."""
        for x in operands:
            if isinstance(x, bool) or (not isinstance(x, _PY_SCALARS) and dtype_of(x).kind == "b"):
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


TORCH = TorchPolicy()
