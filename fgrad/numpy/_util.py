"""Argument normalisation shared by fgrad.numpy: value checks, dtype promotion
(NumPy's rules, Python scalars weak) and explicit broadcasting."""
from __future__ import annotations

import numpy as np

from ..core.errors import ShapeError
from ..core.trace import Tracer, aval_of, facade
from ..ops.elementwise import convert_element_type
from ..ops.shape import broadcast_in_dim

_PY_SCALARS = (bool, int, float, complex)


def is_traced(x) -> bool:
    """True for values fgrad tracks (tracers and Tensors), which must not go through np.asarray."""
    return isinstance(x, Tracer) or (facade.tensor_type is not None and isinstance(x, facade.tensor_type))


def is_array(x) -> bool:
    return is_traced(x) or isinstance(x, (np.ndarray, np.generic)) or type(x).__module__.startswith("cupy")


def as_value(x, name: str = "argument"):
    """An array-like fgrad can bind: arrays and tracers pass, Python data become NumPy arrays."""
    if is_array(x):
        return x
    if isinstance(x, _PY_SCALARS):
        return np.asarray(x)
    try:
        arr = np.asarray(x)
    except (ValueError, TypeError) as e:
        raise TypeError(f"{name}: cannot use {type(x).__name__} {x!r:.80} as an array ({e}). "
                        "Pass a NumPy array, a Python number, or a nested list of numbers of "
                        "equal lengths.") from None
    if arr.dtype.kind not in "biufc":
        raise TypeError(f"{name}: {type(x).__name__} {x!r:.80} is not numeric (dtype {arr.dtype}). "
                        "fgrad works on arrays of numbers.")
    return arr


def dtype_of(x):
    return x.dtype if type(x) in _FAST_TYPES else aval_of(x).dtype


def result_dtype(*args):
    keys = [a if isinstance(a, _PY_SCALARS) else dtype_of(a) for a in args]
    return np.result_type(*keys)


def cast(x, dtype):
    """`x` as `dtype`: plain data is converted directly, traced values by a primitive."""
    if isinstance(x, _PY_SCALARS):
        return np.array(x, dtype=dtype)
    if not is_traced(x):
        x = as_value(x)
        return x if x.dtype == dtype else x.astype(dtype)
    return convert_element_type(x, dtype)


def broadcast_shapes(name: str, *shapes) -> tuple:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ShapeError(f"{name}: shapes {' and '.join(str(tuple(s)) for s in shapes)} cannot be "
                         "broadcast together (trailing dimensions must be equal or 1). Reshape one "
                         "operand, e.g. x[:, None] or x.reshape(...).") from None


def broadcast_to(x, shape):
    shape = tuple(shape)
    xs = aval_of(x).shape
    if xs == shape:
        return x
    if len(xs) > len(shape) or broadcast_shapes("broadcast_to", xs, shape) != shape:
        raise ShapeError(f"broadcast_to: cannot broadcast shape {xs} to {shape}")
    return broadcast_in_dim(x, shape, tuple(range(len(shape) - len(xs), len(shape))))


def promote(name: str, *args, dtype=None):
    """Common dtype and shape for an elementwise operation. 0-d operands stay 0-d:
    elementwise primitives accept them beside full-shape operands."""
    if dtype is None and len(args) == 2:
        fast = _promote_fast(*args)
        if fast is not None:
            return fast
    args = [a if isinstance(a, _PY_SCALARS) else as_value(a, name) for a in args]
    dtype = result_dtype(*args) if dtype is None else dtype
    args = [cast(a, dtype) for a in args]
    shapes = [aval_of(a).shape for a in args]
    full = [s for s in shapes if s != ()]
    if full and any(s != full[0] for s in full):
        shape = broadcast_shapes(name, *shapes)
        args = [a if s == () else broadcast_to(a, shape) for a, s in zip(args, shapes)]
    return args


def _promote_fast(x, y):
    """The common cases without the general machinery: same dtype and shape, or a
    float array with a Python number."""
    tx, ty = type(x), type(y)
    if tx is float or tx is int:
        if ty is not float and ty is not int and hasattr(y, "dtype") and y.dtype.kind == "f":
            return [np.array(x, dtype=y.dtype), y]
        return None
    if ty is float or ty is int:
        if hasattr(x, "dtype") and x.dtype.kind == "f":
            return [x, np.array(y, dtype=x.dtype)]
        return None
    if tx in _FAST_TYPES and ty in _FAST_TYPES and x.dtype == y.dtype and x.shape == y.shape:
        return [x, y]
    return None


_FAST_TYPES = {np.ndarray}


def register_fast_type(cls) -> None:
    """Types with trustworthy .shape/.dtype that promote() may pass through unchanged."""
    _FAST_TYPES.add(cls)
