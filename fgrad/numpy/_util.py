"""Argument normalisation shared by fgrad.numpy: value checks, dtype promotion
(NumPy's rules, Python scalars weak), explicit broadcasting, and the validators of
shape / dtype / axis / integer arguments (each error names the function, the value and
the fix)."""
from __future__ import annotations

import builtins
import functools
import operator
from typing import Any

import numpy as np

from ..core.errors import (
    ConcretizationError,
    FgradIndexError,
    FgradTypeError,
    FgradValueError,
    ShapeError,
    reject_out,
)
from ..core.trace import Tracer, aliases, aval_of, xp_of
from ..ops.elementwise import const, convert_element_type
from ..ops.shape import broadcast_in_dim, concatenate, reshape
from ._policy import (  # noqa: F401
    _FAST_TYPES,
    _PY_SCALARS,
    NUMPY,
    dtype_of,
    is_weak,
    register_fast_type,
    shape_of,
)

_NUMERIC_KINDS = "biufc"
_INT64 = 2 ** 63


def _numpy_max_ndim() -> int:
    """The most dimensions a NumPy array may have (64 since NumPy 2, 32 before)."""
    try:
        np.empty((1,) * 64)
        return 64
    except ValueError:
        return 32


MAX_NDIM = _numpy_max_ndim()
# the most elements an array may have: NumPy counts bytes in a signed index-sized integer,
# and the widest element fgrad uses (complex128) has 16 bytes
MAX_SIZE = np.iinfo(np.intp).max // 16


def _values(operands) -> list:
    """The arrays among `operands` (arrays, or lists of them)."""
    out: list = []
    for a in operands:
        if type(a) in (list, tuple):
            out += _values(a)
        elif not isinstance(a, Tracer):
            out.append(a)
    return out


def fresh(out: Any, *operands: Any) -> Any:
    """`out`, or a copy of it where it is one of `operands` (arrays, or lists of them) or
    may share memory with one: what a public function returns that NumPy (or
    PyTorch) documents as returning a new array. The lax-level functions it is written
    with hand back their operand when they have nothing to do (a sum over no axes, a
    concatenation of one array, a product by 1): free inside traced programs, but an eager
    result the user writes into must not be their input. Traced values are immutable and
    pass unchanged."""
    if isinstance(out, Tracer):
        return out
    if hasattr(out, "base") and aliases(out, _values(operands)):
        return out.copy()
    return out


def _describe(v) -> str:
    return f"{type(v).__name__} {v!r:.60}"


def is_traced(x) -> bool:
    """True for values fgrad tracks (tracers), which must not go through np.asarray."""
    return isinstance(x, Tracer)


def is_array(x) -> bool:
    return is_traced(x) or isinstance(x, (np.ndarray, np.generic)) or type(x).__module__.startswith("cupy")


def _not_numeric(x, name: str) -> TypeError:
    return FgradTypeError(f"{name}: {type(x).__name__} {x!r:.80} is not numeric (dtype {x.dtype}). "
                     "fgrad works on arrays of booleans, integers, floats or complex numbers; "
                     "convert it first (e.g. x.astype(float)).")


def refuse_foreign(x, entry: str) -> None:
    """FgradTypeError when `x` is an object of a layer built above fgrad's functional core
    whose class declares `__fgrad_foreign__(entry) -> message`: that layer's objects carry
    state the functional entry points (fgrad.grad, jit, vmap, custom_vjp, lax control flow,
    ...) would silently drop, so the message names the layer's own door instead. `entry` is
    the public name of the function that received `x` (e.g. "fgrad.grad")."""
    tx = type(x)
    if tx is np.ndarray or tx is float:  # (the common cases, without an attribute lookup)
        return
    hook = getattr(tx, "__fgrad_foreign__", None)
    if hook is not None:
        raise FgradTypeError(hook(entry), doc="foreign-input")


def plain_value(x, entry: str, name: str = "argument"):
    """`as_value(x, name)` for an input of the functional entry point `entry`, after
    `refuse_foreign`."""
    refuse_foreign(x, entry)
    return as_value(x, name)


def as_value(x, name: str = "argument"):
    """An array-like fgrad can bind: numeric arrays and tracers pass, Python data become
    NumPy arrays; anything else (strings, objects, ragged lists, ints beyond 64 bits) is a
    TypeError/ValueError naming `name`."""
    tx = type(x)
    if tx is np.ndarray:
        if x.dtype.kind in _NUMERIC_KINDS:
            return x
        raise _not_numeric(x, name)
    if tx is float:
        return np.asarray(x)
    if is_array(x):
        if isinstance(x, np.generic) and x.dtype.kind not in _NUMERIC_KINDS:
            raise _not_numeric(x, name)
        return x
    refuse_foreign(x, f"fgrad.numpy.{name}" if name.isidentifier() else name)  # (a layer above's object)
    if isinstance(x, _PY_SCALARS):
        if isinstance(x, int) and not -_INT64 <= x < 2 * _INT64:
            raise FgradValueError(f"{name}: the integer {x:.3g} does not fit in a 64-bit integer "
                             "(NumPy's widest). Pass it as a float (e.g. 1e30) instead.")
        return np.asarray(x)
    if isinstance(x, (list, tuple)) and _holds_traced(x, 0):
        return _stack_nested(x, name)
    try:
        arr = np.asarray(x)
    except (ValueError, TypeError, OverflowError) as e:
        raise FgradTypeError(f"{name}: cannot use {type(x).__name__} {x!r:.80} as an array ({e}). "
                        "Pass a NumPy array, a Python number, or a nested list of numbers of "
                        "equal lengths.", doc="ragged-input") from None
    if arr.dtype.kind not in _NUMERIC_KINDS:
        raise FgradTypeError(f"{name}: {type(x).__name__} {x!r:.80} is not numeric (dtype {arr.dtype}). "
                        "fgrad works on arrays of numbers (an integer beyond 64 bits also gives "
                        "this: pass it as a float).", doc="non-numeric-input")
    return arr


def _holds_traced(seq: list | tuple, depth: int) -> bool:
    """True when a (nested) list/tuple holds a tracer anywhere (an object of a layer above, a
    Tensor, is refused: its own door unboxes it). The walk stops below
    MAX_NDIM levels: NumPy refuses deeper nesting anyway (and a list holding itself ends)."""
    if depth > MAX_NDIM:
        return False
    for e in seq:
        te = type(e)
        if te is float or te is int:
            continue
        if isinstance(e, (list, tuple)):
            if _holds_traced(e, depth + 1):
                return True
        elif is_traced(e):
            return True
        else:
            refuse_foreign(e, "fgrad.numpy.array")
    return False


def _stack_nested(seq: list | tuple, name: str) -> Any:
    """A (nested) list/tuple that holds traced values, as one traced array: the shape and dtype
    np.array would give (its rules: a Python int counts as int64, a float as float64, whatever
    the other entries are), built with reshape + concatenate so that derivatives reach every
    traced entry. Sub-lists without traced values become NumPy arrays as usual."""

    def convert(item: Any, depth: int) -> tuple:
        """(node, shape, leaves): node is a leaf value or a list of child nodes."""
        if not (isinstance(item, (list, tuple)) and _holds_traced(item, depth)):
            v = as_value(item, name)
            return v, aval_of(v).shape, [v]
        parts = [convert(e, depth + 1) for e in item]
        shapes = {shape for _, shape, _ in parts}
        if len(shapes) > 1:
            raise FgradTypeError(
                f"{name}: cannot use {type(seq).__name__} {seq!r:.80} as an array: entries at "
                f"depth {depth} have different shapes {sorted(shapes, key=str)}. Pass a nested list "
                "of numbers and arrays of equal lengths (stack ragged data yourself).", doc="ragged-traced-list")
        if depth + 1 + len(next(iter(shapes))) > MAX_NDIM:
            raise ShapeError(f"{name}: the nested list has more than {MAX_NDIM} dimensions")
        return [p for p, _, _ in parts], (len(parts),) + next(iter(shapes)), \
            [leaf for _, _, leaves in parts for leaf in leaves]

    def build(node: Any, shape: tuple, dtype: np.dtype) -> Any:
        if type(node) is not list:
            return cast(node, dtype)
        inner = shape[1:]
        return concatenate([reshape(build(c, inner, dtype), (1,) + inner) for c in node], 0)

    tree, shape, leaves = convert(seq, 0)
    dtype = functools.reduce(np.promote_types, {dtype_of(v) for v in leaves})
    return build(tree, shape, dtype)


# --- argument validators --------------------------------------------------------------------

def static_arg(v, what: str):
    """The concrete value behind an argument that must be known (a shape, an axis, a count):
    tracers concretised (a clear ConcretizationError under jit/vmap). Other integer-like
    objects are read through Python's `__index__` by the callers (int_arg)."""
    if isinstance(v, Tracer):
        v = v._concrete(what)
    return v


def int_arg(v, name: str, what: str, bounded: bool = True) -> int:
    """A Python int from an integer argument (int, NumPy integer, 0-d integer array, concrete
    traced scalar). Non-integers are a TypeError; with `bounded`, values outside the 64-bit
    range NumPy can hold are a ValueError that says so."""
    if type(v) is not int:
        v = static_arg(v, f"{name}'s {what}")
        try:
            v = operator.index(v)
        except ConcretizationError:
            raise
        except TypeError:
            raise FgradTypeError(f"{name}: {what} must be an integer, got {_describe(v)}") from None
    if bounded and not -_INT64 <= v < _INT64:
        raise FgradValueError(f"{name}: {what} {v:.3g} is out of range: it must fit in a 64-bit integer "
                         f"(-2**63 <= {what} < 2**63)")
    return v


def index_arg(v, name: str, what: str = "index") -> int:
    """An integer index: like int_arg, but a value NumPy cannot represent (beyond 64 bits) is
    an IndexError (it is out of bounds for any axis), not an OverflowError."""
    try:
        return int_arg(v, name, what)
    except ValueError:
        raise FgradIndexError(f"{name}: {what} {v!r:.40} is out of bounds: indices must fit in a 64-bit "
                         f"integer (|{what}| < 2**63) and lie within the axis") from None


def ints_arg(v, name: str, what: str, bounded: bool = True) -> tuple:
    """A tuple of Python ints from an int or a flat sequence (tuple, list, 1-D integer array)
    of them. Strings, nested or ragged sequences and non-integers are a TypeError."""
    if type(v) is int and -_INT64 <= v < _INT64:  # the common cases
        return (v,)
    if type(v) is tuple and all(type(d) is int and -_INT64 <= d < _INT64 for d in v):
        return v
    v = static_arg(v, f"{name}'s {what}")
    if isinstance(v, (int, np.integer)):
        return (int_arg(v, name, what, bounded),)
    if isinstance(v, (str, bytes, dict, set)) or not hasattr(v, "__iter__"):
        raise FgradTypeError(f"{name}: {what} must be an integer or a sequence of integers, got "
                        f"{_describe(v)}")
    if isinstance(v, np.ndarray):
        if v.ndim == 0:
            return (int_arg(v, name, what, bounded),)
        if v.ndim != 1 or (v.size and v.dtype.kind not in "iu"):
            raise FgradTypeError(f"{name}: {what} must be an integer or a flat sequence of integers, "
                            f"got an array of shape {v.shape} and dtype {v.dtype}")
    out = []
    for d in v:
        if isinstance(d, (list, tuple, np.ndarray)) and not (isinstance(d, np.ndarray) and d.ndim == 0):
            raise FgradTypeError(f"{name}: {what} must be an integer or a flat sequence of integers, "
                            f"got the nested {_describe(v)}")
        out.append(int_arg(d, name, what, bounded))
    return tuple(out)


def shape_arg(shape, name: str, what: str = "shape", allow_unknown: bool = False, policy=NUMPY) -> tuple:
    """A validated shape: an int or a flat sequence of ints, each >= 0 (-1 too, once, with
    `allow_unknown`, for reshape), at most MAX_NDIM of them, with a total size NumPy can
    allocate. Wrong types are a TypeError, wrong values a ShapeError (a ValueError)."""
    if type(shape) is tuple and all(type(d) is int for d in shape):
        dims = shape  # the common case: only the values need checking
    elif type(shape) is int:
        dims = (shape,)
    else:
        dims = _shape_dims(shape, name, what)
    if len(dims) > MAX_NDIM:
        raise ShapeError(f"{name}: {what} has {len(dims)} dimensions, more than NumPy's limit of "
                         f"{MAX_NDIM}")
    lowest = -1 if allow_unknown else 0
    size = 1
    for d in dims:
        if d < lowest:
            raise policy.negative_dimension_error(name, what, dims, d, allow_unknown)
        if d > MAX_SIZE:
            raise ShapeError(f"{name}: dimension {d:.3g} in {what} is larger than an array can hold "
                             f"({MAX_SIZE:.3g}); check the {what}")
        size *= d
    if size > MAX_SIZE or size < -MAX_SIZE:
        raise ShapeError(f"{name}: {what} {dims} has {builtins.abs(size):.3g} elements, more than an "
                         f"array can hold ({MAX_SIZE:.3g}); check the {what}")
    return dims


def _shape_dims(shape, name, what) -> tuple:
    shape = static_arg(shape, f"{name}'s {what}")
    if isinstance(shape, (str, bytes)):
        raise FgradTypeError(f"{name}: {what} must be an integer or a sequence of integers, got "
                        f"{_describe(shape)}. Pass e.g. (2, 3).")
    if isinstance(shape, np.ndarray) and shape.size == 0 and shape.ndim == 1:
        dims = ()
    else:
        try:
            dims = ints_arg(shape, name, what)
        except TypeError as e:
            raise FgradTypeError(f"{e}. A {what} is an int or a sequence of ints, e.g. (2, 3).") from None
        except ValueError:
            raise ShapeError(f"{name}: {what} {shape!r:.80} has a dimension beyond 64 bits; no array "
                             "can be that large") from None
    return dims


def dtype_arg(dtype, name: str, what: str = "dtype"):
    """None, or the numeric np.dtype that `dtype` names (a NumPy dtype, a type such as float,
    or a name such as 'float32'). Anything else is a TypeError that says what to pass."""
    if dtype is None or isinstance(dtype, np.dtype) and dtype.kind in _NUMERIC_KINDS:
        return dtype
    cacheable = isinstance(dtype, (type, str))
    if cacheable and dtype in _DTYPE_CACHE:
        return _DTYPE_CACHE[dtype]
    if isinstance(dtype, (np.ndarray, list, dict)) or (isinstance(dtype, tuple)):
        dt = None  # structured-dtype specs and arrays are not data types fgrad supports
    else:
        try:
            dt = np.dtype(dtype)
        except (TypeError, ValueError, KeyError, AttributeError, RecursionError, OverflowError):
            dt = None
    if dt is None:
        raise FgradTypeError(f"{name}: {what} {_describe(dtype)} is not a data type. Pass a NumPy "
                        "dtype or its name, e.g. float, np.float32 or 'int64'.")
    if dt.kind not in _NUMERIC_KINDS:
        raise FgradTypeError(f"{name}: {what} {_describe(dtype)} means {dt}, which is not numeric; "
                        "fgrad arrays hold booleans, integers, floats or complex numbers.")
    if cacheable:
        _DTYPE_CACHE[dtype] = dt
    return dt


_DTYPE_CACHE: dict = {}  # numeric dtypes by the type or name that spelled them (float, 'float32')


def normalize_axis(axis, ndim: int, name: str, what: str = "axis", policy=NUMPY) -> int:
    """One axis in [0, ndim): an integer in [-ndim, ndim) (TypeError for non-integers,
    the policy's error when out of bounds; a 0-d array takes 0 and -1)."""
    if type(axis) is not int:
        axis = int_arg(axis, name, what, bounded=False)
    if not -max(ndim, 1) <= axis < max(ndim, 1):  # a 0-d array takes 0 and -1
        raise policy.axis_error(name, what, axis, ndim)
    return axis % ndim if ndim else 0


def normalize_axes(axis, ndim: int, name: str, policy=NUMPY) -> tuple:
    """Sorted, distinct axes in [0, ndim) from None (all axes), an int, or a sequence of ints."""
    if type(axis) is int and -ndim <= axis < ndim:  # the common case
        return (axis % ndim,)
    if axis is None:
        return tuple(range(ndim))
    if type(axis) is int or isinstance(axis, np.integer):
        axes = (axis,)
    elif isinstance(axis, (tuple, list)):
        axes = axis
    elif isinstance(axis, np.ndarray) and axis.ndim <= 1 and (axis.dtype.kind in "iu" or not axis.size):
        axes = tuple(axis.reshape(-1))
    elif isinstance(axis, Tracer) or (hasattr(type(axis), "__index__") and not isinstance(axis, (bool, np.bool_))):
        axes = (axis,)  # one integer-like axis (read through __index__ by normalize_axis)
    else:
        raise FgradTypeError(f"{name}: axis must be None, an integer or a tuple of integers (e.g. "
                        f"axis=0 or axis=(0, 1)), got {_describe(axis)}")
    out = [normalize_axis(a, ndim, name, policy=policy) for a in axes]
    if len(set(out)) != len(out):
        raise policy.repeated_axis_error(name, axis, next(a for a in out if out.count(a) > 1))
    return tuple(sorted(out)) if ndim else ()


def result_dtype(*args, policy=NUMPY):
    """The dtype operands promote to: NumPy's rules (Python numbers weak) or `policy`'s."""
    return policy.result_dtype(*args)


def cast(x, dtype):
    """`x` as `dtype`: plain data is converted directly, traced values by a primitive."""
    if isinstance(x, _PY_SCALARS):
        return np.array(x, dtype=dtype)
    if not is_traced(x):
        x = as_value(x)
        return x if x.dtype == dtype else x.astype(dtype)
    return x if dtype_of(x) == dtype else convert_element_type(x, dtype)


def broadcast_shapes(name: str, *shapes, policy=NUMPY) -> tuple:
    """NumPy's broadcasting of shapes, done here (np.broadcast_shapes stops at 32 dimensions
    while NumPy 2's arrays and ufuncs go to 64)."""
    shapes = [tuple(s) for s in shapes]
    out = [1] * max((len(s) for s in shapes), default=0)
    n = len(out)
    for s in shapes:
        for i, d in enumerate(s, n - len(s)):
            if d != out[i]:
                if out[i] == 1:
                    out[i] = d
                elif d != 1:
                    raise policy.broadcast_error(name, shapes, i, out[i], d)
    return tuple(out)


def broadcast_to(x, shape, name: str = "broadcast_to", policy=NUMPY):
    shape = tuple(shape)
    xs = shape_of(x)
    if xs == shape:
        return x
    lead = len(shape) - len(xs)
    bad = next((i for i in range(max(lead, 0), len(shape)) if xs[i - lead] not in (1, shape[i])), None)
    if lead < 0 or bad is not None:
        raise policy.broadcast_to_error(name, xs, shape, bad)
    return broadcast_in_dim(x, shape, tuple(range(lead, len(shape))))


def promote(name: str, *args, dtype=None, policy=NUMPY, to_float: bool = False):
    """Common dtype and shape for an elementwise operation (NumPy's or `policy`'s promotion;
    with `to_float`, the float dtype of that, for divisions and float functions: integer
    operands then convert straight to it). 0-d operands stay 0-d: elementwise primitives
    accept them beside full-shape operands."""
    if dtype is None and len(args) == 2 and policy is NUMPY:
        fast = _promote_fast(*args)
        if fast is not None and (not to_float or fast[0].dtype.kind in "fc"):
            return fast
    args = [a if isinstance(a, _PY_SCALARS) else as_value(a, name) for a in args]
    if dtype is None:
        dtype = policy.result_dtype(*args)
        dtype = policy.float_dtype(dtype) if to_float else dtype
    args = [cast(a, dtype) for a in args]
    xp = xp_of(args)
    if xp is not np:  # beside a GPU array, host values (Python numbers made 0-d arrays) move to the
        # GPU too: callers combine promoted values with Python operators, which CuPy refuses across devices
        args = [xp.asarray(a) if isinstance(a, (np.ndarray, np.generic)) else a for a in args]
    return broadcast_args(name, *args, policy=policy)


def broadcast_args(name: str, *args, policy=NUMPY) -> list:
    """`args` broadcast to one shape; 0-d ones stay 0-d (elementwise primitives take them)."""
    shapes = [shape_of(a) for a in args]
    full = [s for s in shapes if s != ()]
    if full and any(s != full[0] for s in full):
        shape = broadcast_shapes(name, *shapes, policy=policy)
        return [a if s == () else broadcast_to(a, shape) for a, s in zip(args, shapes)]
    return list(args)


def _promote_fast(x, y):
    """The common cases without the general machinery: same dtype and shape, or a
    float array with a Python number."""
    # (a Python number becomes const's cached read-only 0-d array: x * 0.9 in a loop reuses
    # one object, which a replayed backward pass then takes as one input)
    tx, ty = type(x), type(y)
    if tx is float or tx is int:
        if ty in _FAST_TYPES and y.dtype.kind == "f":
            return [const(y, x), y]
        return None
    if ty is float or ty is int:
        if tx in _FAST_TYPES and x.dtype.kind == "f":
            return [x, const(x, y)]
        return None
    if tx in _FAST_TYPES and ty in _FAST_TYPES and x.dtype == y.dtype and x.shape == y.shape:
        return [x, y]
    return None
