"""Shape manipulation in fgrad.numpy. The functions fgrad.torch maps onto take
`policy=` for PyTorch's promotion and error wording (see _policy.py)."""
from __future__ import annotations

import numpy as np

from ..core.errors import FgradTypeError, FgradValueError, ShapeError
from ..core.trace import Tracer
from ..ops import elementwise as ew
from ..ops import index as ix
from ..ops import shape as sh
from ._index import nonzero as _nonzero
from ._index import take
from ._policy import NUMPY
from ._util import (
    MAX_NDIM,
    as_value,
    aval_of,
    broadcast_shapes,
    cast,
    dtype_arg,
    dtype_of,
    fresh,
    int_arg,
    ints_arg,
    is_traced,
    normalize_axes,
    normalize_axis,
    shape_arg,
    shape_of,
)
from ._util import broadcast_to as _broadcast_to


def resolve_shape(shape, in_shape: tuple, name: str = "reshape", policy=NUMPY) -> tuple:
    """`shape` (at most one -1, for the size that makes the element counts match) for an
    array of shape `in_shape`; the policy's error when no such shape exists."""
    size = 1
    for d in in_shape:
        size *= d
    if type(shape) is tuple and all(type(d) is int and d >= 0 for d in shape):
        resolved = shape  # the common case: already a tuple of sizes
    else:
        shape = shape_arg(shape, name, "new shape", allow_unknown=True, policy=policy)
        resolved = shape
        if -1 in shape:
            known = 1
            for d in shape:
                if d != -1:
                    known *= d
            if shape.count(-1) > 1 or known == 0 or size % known:
                raise policy.reshape_error(name, shape, in_shape, size, None)
            resolved = tuple(size // known if d == -1 else d for d in shape)
    n = 1
    for d in resolved:
        n *= d
    if n != size:
        raise policy.reshape_error(name, shape, in_shape, size, n)
    return resolved


def reshape(a, newshape, *more, policy=NUMPY):
    """`a` with a new shape and the same elements in C order (NumPy's reshape; one entry of
    newshape may be -1, and the shape may also be given as separate ints).

    Args:
        a: an array, a number or a nested list.
        newshape: an int or a tuple of ints.
        *more: further dimensions, when newshape is an int.
        policy: internal: the error rules of the calling door.

    Returns:
        The reshaped array.
    """
    a = as_value(a, "reshape")
    if more:
        newshape = (newshape,) + more
    return sh.reshape(a, resolve_shape(newshape, shape_of(a), policy=policy))


def ravel(a):
    """`a` flattened to one dimension, in C order (NumPy's ravel).

    Args:
        a: an array, a number or a nested list.

    Returns:
        A 1-D array of a.size elements.
    """
    a = as_value(a, "ravel")
    return sh.reshape(a, (aval_of(a).size,))


def transpose(a, axes=None, *, policy=NUMPY):
    """`a` with its axes permuted (NumPy's transpose; reversed by default).

    Args:
        a: an array, a number or a nested list.
        axes: a permutation of range(a.ndim), or None.
        policy: internal: the error rules of the calling door.

    Returns:
        The transposed array.
    """
    a = as_value(a, "transpose")
    nd = len(shape_of(a))
    if axes is None:
        perm = tuple(reversed(range(nd)))
    else:
        given = ints_arg(axes, "transpose", "axes")
        if len(given) != nd:
            raise policy.permutation_error("transpose", given, nd, shape_of(a))
        perm = tuple(normalize_axis(x, nd, "transpose", "axes entry", policy=policy) for x in given)
    if sorted(perm) != list(range(nd)):
        raise policy.permutation_error("transpose", axes, nd, shape_of(a))
    return sh.transpose(a, perm)


def swapaxes(a, axis1: int, axis2: int):
    """`a` with axes axis1 and axis2 exchanged (NumPy's swapaxes).

    Args:
        a: an array, a number or a nested list.
        axis1: an axis (negative counts from the end).
        axis2: another axis.

    Returns:
        The array with the two axes swapped.
    """
    a = as_value(a, "swapaxes")
    nd = len(shape_of(a))
    perm = list(range(nd))
    i, j = normalize_axes(axis1, nd, "swapaxes")[0], normalize_axes(axis2, nd, "swapaxes")[0]
    perm[i], perm[j] = perm[j], perm[i]
    return sh.transpose(a, perm)


def moveaxis(a, source, destination, *, policy=NUMPY):
    """`a` with the axes `source` moved to positions `destination`, the others kept in order
    (NumPy's moveaxis).

    Args:
        a: an array, a number or a nested list.
        source: an axis or a sequence of axes.
        destination: as many target positions.
        policy: internal: the error rules of the calling door.

    Returns:
        The array with its axes moved.
    """
    a = as_value(a, "moveaxis")
    nd = len(shape_of(a))
    src = [normalize_axis(s, nd, "moveaxis", "source", policy=policy)
           for s in ints_arg(source, "moveaxis", "source")]
    dst = [normalize_axis(d, nd, "moveaxis", "destination", policy=policy)
           for d in ints_arg(destination, "moveaxis", "destination")]
    if len(src) != len(dst):
        raise ShapeError(f"moveaxis: source {source!r:.40} and destination {destination!r:.40} must "
                         "name the same number of axes")
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ShapeError(f"moveaxis: repeated axis in source {source!r:.40} or destination "
                         f"{destination!r:.40}")
    order = [n for n in range(nd) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return sh.transpose(a, order)


def expand_dims(a, axis, *, policy=NUMPY):
    """`a` with new axes of length 1 at the positions `axis` of the result (NumPy's
    expand_dims).

    Args:
        a: an array, a number or a nested list.
        axis: an int or a tuple of ints.
        policy: internal: the error rules of the calling door.

    Returns:
        The array with a.ndim + len(axis) dimensions.
    """
    a = as_value(a, "expand_dims")
    shape = list(shape_of(a))
    axes = ints_arg(axis, "expand_dims", "axis")
    for ax in normalize_axes(axes, len(shape) + len(axes), "expand_dims", policy=policy):
        shape.insert(ax, 1)
    return sh.reshape(a, tuple(shape))


def squeeze(a, axis=None):
    """`a` without its axes of length 1 (all of them, or those in `axis`, which must have
    length 1; NumPy's squeeze).

    Args:
        a: an array, a number or a nested list.
        axis: None, an int or a tuple of ints.

    Returns:
        The squeezed array.
    """
    a = as_value(a, "squeeze")
    shape = shape_of(a)
    if axis is None:
        axes = tuple(i for i, d in enumerate(shape) if d == 1)
    else:
        axes = normalize_axes(axis, len(shape), "squeeze")
        for i in axes:
            if shape[i] != 1:
                raise ShapeError(f"squeeze: cannot select axis {i} of shape {shape}: its size is not 1")
    return sh.reshape(a, tuple(d for i, d in enumerate(shape) if i not in axes))


def _atleast(arys, name, expand):
    out = []
    for a in arys:
        a = as_value(a, name)
        out.append(sh.reshape(a, expand(shape_of(a))))
    return out[0] if len(out) == 1 else tuple(out)


def atleast_1d(*arys):
    """Each input viewed with at least 1 dimension (NumPy's atleast_1d: missing axes of length 1 are added).

    Args:
        *arys: arrays, numbers or nested lists.

    Returns:
        One array for one input, else a tuple of arrays.
    """
    return _atleast(arys, "atleast_1d", lambda s: s if len(s) >= 1 else (1,))


def atleast_2d(*arys):
    """Each input viewed with at least 2 dimensions (NumPy's atleast_2d: missing axes of length 1 are added).

    Args:
        *arys: arrays, numbers or nested lists.

    Returns:
        One array for one input, else a tuple of arrays.
    """
    return _atleast(arys, "atleast_2d", lambda s: s if len(s) >= 2 else (1,) + s if len(s) == 1 else (1, 1))


def atleast_3d(*arys):
    """Each input viewed with at least 3 dimensions (NumPy's atleast_3d: missing axes of length 1 are added).

    Args:
        *arys: arrays, numbers or nested lists.

    Returns:
        One array for one input, else a tuple of arrays.
    """
    return _atleast(arys, "atleast_3d", lambda s: s if len(s) >= 3 else
                    (1, 1, 1) if len(s) == 0 else (1,) + s + (1,) if len(s) == 1 else s + (1,))


def shape(a) -> tuple:
    """The shape of `a` (NumPy's shape; also for traced values).

    Args:
        a: an array, a number or a nested list.

    Returns:
        A tuple of ints.
    """
    return shape_of(as_value(a, "shape"))


def ndim(a) -> int:
    """The number of dimensions of `a` (NumPy's ndim).

    Args:
        a: an array, a number or a nested list.

    Returns:
        An int.
    """
    return len(shape(a))


def size(a) -> int:
    """The number of elements of `a` (NumPy's size, without its axis argument).

    Args:
        a: an array, a number or a nested list.

    Returns:
        An int.
    """
    return aval_of(as_value(a, "size")).size


def astype(a, dtype, /, *, copy: bool = True, device=None):
    """`a` as `dtype`: a new array, or with copy=False `a` itself when it has that dtype
    (NumPy's astype)."""
    if dtype is None:
        raise FgradTypeError("astype: dtype must be a data type, got None; pass e.g. float or 'float32'")
    out = cast(as_value(a, "astype"), dtype_arg(dtype, "astype"))
    return fresh(out, a) if copy else out


def flatten(a):
    """`a` flattened to one dimension, in C order (ndarray.flatten as a function; as ravel).

    Args:
        a: an array, a number or a nested list.

    Returns:
        A 1-D array of a.size elements.
    """
    return ravel(a)


# --- joining and splitting -----------------------------------------------------------------

def concatenate(arrays, axis=0, dtype=None, *, policy=NUMPY):
    """Join arrays along an existing axis (axis=None: flatten them first); NumPy's dtype
    promotion."""
    if _is_single_array(arrays):
        arrays = [arrays[i] for i in range(shape_of(arrays)[0])]
    arrays = [as_value(a, "concatenate") for a in arrays]
    if not arrays:
        raise policy.empty_join_error("concatenate")
    if axis is None:
        arrays = [ravel(a) for a in arrays]
        axis = 0
    dtypes = {dtype_of(a) for a in arrays}
    dt = dtype_arg(dtype, "concatenate") if dtype is not None else \
        dtypes.pop() if len(dtypes) == 1 else policy.result_dtype(*arrays)
    shapes = [shape_of(a) for a in arrays]
    nd = len(shapes[0])
    if nd == 0:
        raise policy.zero_dim_join_error("concatenate", 0)
    (ax,) = normalize_axes(axis, nd, "concatenate", policy=policy)
    for k, s in enumerate(shapes):
        if len(s) != nd:
            raise policy.concatenate_error("concatenate", shapes, ax, k, None)
        for i in range(nd):
            if i != ax and s[i] != shapes[0][i]:
                raise policy.concatenate_error("concatenate", shapes, ax, k, i)
    # (a join of one array: a new array all the same)
    return fresh(sh.concatenate([cast(a, dt) for a in arrays], ax), arrays)


def _is_single_array(x) -> bool:
    """A single array passed where a sequence of arrays is expected (NumPy iterates it)."""
    return not isinstance(x, (list, tuple)) and hasattr(x, "shape") and len(shape_of(x)) >= 1


def stack(arrays, axis=0, dtype=None, *, policy=NUMPY):
    """Join equally shaped arrays along a new axis."""
    if _is_single_array(arrays):
        arrays = [arrays[i] for i in range(shape_of(arrays)[0])]
    arrays = [as_value(a, "stack") for a in arrays]
    dtype = dtype_arg(dtype, "stack")
    if not arrays:
        raise policy.empty_join_error("stack")
    shapes = [shape_of(a) for a in arrays]
    for k, s in enumerate(shapes):
        if s != shapes[0]:
            raise policy.stack_error("stack", shapes, k)
    (ax,) = normalize_axes(axis, len(shapes[0]) + 1, "stack", policy=policy)
    new = shapes[0][:ax] + (1,) + shapes[0][ax:]
    return concatenate([sh.reshape(a, new) for a in arrays], axis=ax, dtype=dtype, policy=policy)


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else x


def hstack(tup, dtype=None, *, policy=NUMPY):
    """Arrays joined along axis 1 (axis 0 for 1-D arrays; NumPy's hstack).

    Args:
        tup: a sequence of arrays.
        dtype: the result's dtype, or None for NumPy's promotion.
        policy: internal: the dtype rules of the calling door.

    Returns:
        The joined array.
    """
    dtype = dtype_arg(dtype, "hstack")
    arrs = [atleast_1d(a) for a in _as_list(tup)]
    return concatenate(arrs, axis=0 if arrs and len(shape_of(arrs[0])) == 1 else 1, dtype=dtype, policy=policy)


def vstack(tup, dtype=None, *, policy=NUMPY):
    """Arrays, each at least 2-D, joined along axis 0 (NumPy's vstack).

    Args:
        tup: a sequence of arrays.
        dtype: the result's dtype, or None for NumPy's promotion.
        policy: internal: the dtype rules of the calling door.

    Returns:
        The joined array.
    """
    dtype = dtype_arg(dtype, "vstack")
    return concatenate([atleast_2d(a) for a in _as_list(tup)], axis=0, dtype=dtype, policy=policy)


def dstack(tup):
    """Arrays, each at least 3-D, joined along axis 2 (NumPy's dstack).

    Args:
        tup: a sequence of arrays.

    Returns:
        The joined array.
    """
    return concatenate([atleast_3d(a) for a in _as_list(tup)], axis=2)


def column_stack(tup):
    """1-D arrays as columns (2-D arrays as they are) joined along axis 1 (NumPy's
    column_stack).

    Args:
        tup: a sequence of arrays.

    Returns:
        A 2-D array.
    """
    arrs = []
    for a in _as_list(tup):
        a = as_value(a, "column_stack")
        s = shape_of(a)
        arrs.append(sh.reshape(a, (s[0], 1)) if len(s) == 1 else atleast_2d(a))
    return concatenate(arrs, axis=1)


def _axis_slice(a, ax, lo, hi):
    s = shape_of(a)
    return sh.slice(a, [lo if i == ax else 0 for i in range(len(s))],
                    [hi if i == ax else d for i, d in enumerate(s)])


def array_split(ary, indices_or_sections, axis=0, *, policy=NUMPY):
    """Split into sub-arrays; an int gives that many nearly equal parts."""
    a = as_value(ary, "array_split")
    shape = shape_of(a)
    (ax,) = normalize_axes(axis, len(shape), "array_split", policy=policy)
    n = shape[ax]
    if isinstance(indices_or_sections, (int, np.integer)):
        sections = int_arg(indices_or_sections, "array_split", "number of sections")
        if sections <= 0:
            raise FgradValueError(f"array_split: number sections must be larger than 0, got {sections}")
        each, extra = divmod(n, sections)
        sizes = [each + 1] * extra + [each] * (sections - extra)
        bounds = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
        pairs = list(zip(bounds[:-1], bounds[1:]))
    else:
        points = list(ints_arg(indices_or_sections, "array_split", "split indices"))
        pairs = [range(n)[slice(lo, hi)] for lo, hi in zip([0] + points, points + [None])]
        pairs = [(r.start, r.start + len(r)) if len(r) else (0, 0) for r in pairs]
    return [_axis_slice(a, ax, int(lo), int(hi)) for lo, hi in pairs]


def split(ary, indices_or_sections, axis=0):
    """Split into equal parts (an int that must divide the axis) or at the given indices."""
    if isinstance(indices_or_sections, (int, np.integer)):
        a = as_value(ary, "split")
        shape = shape_of(a)
        (ax,) = normalize_axes(axis, len(shape), "split")
        sections = int_arg(indices_or_sections, "split", "number of sections")
        if sections <= 0 or shape[ax] % sections:
            raise FgradValueError(f"split: array split does not result in an equal division (axis {ax} "
                             f"of shape {shape} into {indices_or_sections} sections)")
    return array_split(ary, indices_or_sections, axis)


def hsplit(ary, indices_or_sections):
    """`ary` split along axis 1 (axis 0 for 1-D arrays) (NumPy's hsplit, as split).

    Args:
        ary: an array.
        indices_or_sections: a number of equal parts, or the indices to split at.

    Returns:
        A list of arrays.
    """
    a = as_value(ary, "hsplit")
    return split(a, indices_or_sections, axis=1 if len(shape_of(a)) > 1 else 0)


def vsplit(ary, indices_or_sections):
    """`ary` split along axis 0 (NumPy's vsplit, as split).

    Args:
        ary: an array.
        indices_or_sections: a number of equal parts, or the indices to split at.

    Returns:
        A list of arrays.
    """
    return split(ary, indices_or_sections, axis=0)


def dsplit(ary, indices_or_sections):
    """`ary` split along axis 2 (NumPy's dsplit, as split).

    Args:
        ary: an array.
        indices_or_sections: a number of equal parts, or the indices to split at.

    Returns:
        A list of arrays.
    """
    return split(ary, indices_or_sections, axis=2)


# --- repetition, reversal, padding, rolling -------------------------------------------------

def _static_value(v, what):
    v = getattr(v, "_value", v)
    return v._concrete(what) if isinstance(v, Tracer) else v


def tile(A, reps):
    """A repeated reps[i] times along each axis (NumPy semantics for differing ndim)."""
    a = as_value(A, "tile")
    reps = ints_arg(reps, "tile", "reps")
    if any(r < 0 for r in reps):
        raise FgradValueError(f"tile: reps must be non-negative integers, got {reps}")
    shape = shape_of(a)
    d = max(len(reps), len(shape))
    reps = (1,) * (d - len(reps)) + reps
    shape = (1,) * (d - len(shape)) + shape
    shape_arg(tuple(r * s for r, s in zip(reps, shape)), "tile", "result shape")
    if 2 * d > MAX_NDIM:  # tiling broadcasts through a (rep, size) pair per axis
        raise ShapeError(f"tile: an array of {d} dimensions can be tiled up to {MAX_NDIM // 2} "
                         "dimensions; reshape it first")
    a = sh.reshape(a, shape)
    if all(r == 1 for r in reps):
        return fresh(a, A)
    big = tuple(x for r, s in zip(reps, shape) for x in (r, s))
    a = sh.broadcast_in_dim(a, big, tuple(range(1, 2 * d, 2)))
    return sh.reshape(a, tuple(r * s for r, s in zip(reps, shape)))


def repeat(a, repeats, axis=None):
    """Repeat each element `repeats` times along `axis` (the flattened array if None)."""
    a = as_value(a, "repeat")
    if axis is None:
        a = ravel(a)
        axis = 0
    shape = shape_of(a)
    (ax,) = normalize_axes(axis, len(shape), "repeat")
    reps = np.asarray(_static_value(repeats, "repeat's repeats"))
    if reps.dtype.kind not in "iu" or (reps.size and reps.min() < 0):
        raise FgradValueError(f"repeat: repeats must be non-negative integers, got {repeats!r:.60}")
    if reps.ndim == 0 or reps.size == 1:
        r = int(reps.reshape(()))
        big = shape[:ax + 1] + (r,) + shape[ax + 1:]
        dims = tuple(range(ax + 1)) + tuple(range(ax + 2, len(shape) + 1))
        out = sh.broadcast_in_dim(a, big, dims)
        return fresh(sh.reshape(out, shape[:ax] + (shape[ax] * r,) + shape[ax + 1:]), a)
    if reps.shape != (shape[ax],):
        raise FgradValueError(f"repeat: operands could not be broadcast together: repeats of shape "
                         f"{reps.shape} for axis {ax} of size {shape[ax]}")
    return take(a, np.repeat(np.arange(shape[ax]), reps), axis=ax)


def flip(m, axis=None, *, policy=NUMPY):
    """Reverse the order of elements along `axis` (all axes by default)."""
    m = as_value(m, "flip")
    return ix.rev(m, normalize_axes(axis, len(shape_of(m)), "flip", policy=policy))


def fliplr(m):
    """`m` reversed along axis 1 (NumPy's fliplr; m must be at least 2-D).

    Args:
        m: an array.

    Returns:
        The flipped array.
    """
    m = as_value(m, "fliplr")
    if len(shape_of(m)) < 2:
        raise FgradValueError("fliplr: input must be >= 2-d")
    return flip(m, 1)


def flipud(m):
    """`m` reversed along axis 0 (NumPy's flipud; m must be at least 1-D).

    Args:
        m: an array.

    Returns:
        The flipped array.
    """
    m = as_value(m, "flipud")
    if len(shape_of(m)) < 1:
        raise FgradValueError("flipud: input must be >= 1-d")
    return flip(m, 0)


def rot90(m, k: int = 1, axes=(0, 1)):
    """Rotate by 90 degrees k times in the plane of `axes` (NumPy semantics)."""
    m = as_value(m, "rot90")
    nd = len(shape_of(m))
    axes = ints_arg(axes, "rot90", "axes")
    if len(axes) != 2:
        raise FgradValueError(f"rot90: axes must name exactly two axes, got {axes}")
    a0, a1 = (normalize_axis(x, nd, "rot90", "axes entry") for x in axes)
    if a0 == a1:
        raise FgradValueError("rot90: axes must be different")
    k = int_arg(k, "rot90", "k", bounded=False) % 4
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, a0), a1)
    perm = list(range(nd))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return sh.transpose(flip(m, a1), perm)
    return flip(sh.transpose(m, perm), a1)


_INDEX_MODES = ("edge", "reflect", "symmetric", "wrap")


def pad(array, pad_width, mode="constant", **kwargs):
    """Pad with a constant (any value, also traced) or by edge/reflect/symmetric/wrap."""
    a = as_value(array, "pad")
    shape = shape_of(a)
    widths = np.asarray(_static_value(pad_width, "pad's pad_width"))
    if widths.dtype.kind not in "iu" and not (widths.dtype.kind == "f" and np.all(widths == np.round(widths))):
        raise FgradTypeError(f"pad: pad_width must be integers, got {pad_width!r:.60}")
    try:
        widths = np.broadcast_to(widths.astype(np.int64), (len(shape), 2))
    except ValueError:
        raise FgradValueError(f"pad: pad_width {pad_width!r:.60} does not fit an array of {len(shape)} "
                         "dimensions (use an int, (before, after), or one pair per axis)") from None
    if (widths < 0).any():
        raise FgradValueError(f"pad: pad widths can't be negative, got {pad_width!r:.60}")
    widths = tuple((int(lo), int(hi)) for lo, hi in widths)
    if mode in ("constant", "empty"):
        unknown = set(kwargs) - {"constant_values"}
        if unknown or (mode == "empty" and kwargs):
            raise FgradTypeError(f"pad: unsupported keyword arguments {sorted(kwargs)} for mode {mode!r}")
        out = sh.pad(a, widths)
        cv = kwargs.get("constant_values", 0)
        dt = aval_of(a).dtype
        if is_traced(cv) or type(cv).__module__.startswith("cupy"):  # (a GPU value: as traced, by primitives)
            c = cast(as_value(cv, "pad"), dt)
            if shape_of(c) != ():
                raise FgradValueError("pad: a traced constant_values must be a scalar")
            outside = np.pad(np.zeros(shape, dt), widths, constant_values=1)
            return ew.add(out, ew.mul(outside, c)) if outside.size else out
        cv = np.asarray(cv)
        if cv.size and np.any(cv != 0):
            return ew.add(out, np.pad(np.zeros(shape, dt), widths, constant_values=cv))
        return fresh(out, a)  # (zero widths: a new array all the same)
    if mode not in _INDEX_MODES:
        raise FgradValueError(f"pad: mode {mode!r} is not supported; use 'constant', 'edge', 'reflect', "
                         "'symmetric' or 'wrap'")
    extra = {k: v for k, v in kwargs.items() if k == "reflect_type"}
    if set(kwargs) - set(extra) or mode in ("edge", "wrap") and extra:
        raise FgradTypeError(f"pad: unsupported keyword arguments {sorted(kwargs)} for mode {mode!r}")
    if extra.get("reflect_type", "even") != "even":
        raise FgradValueError("pad: only reflect_type='even' (the default) is supported")
    for ax, (lo, hi) in enumerate(widths):
        if lo or hi:
            a = take(a, np.pad(np.arange(shape[ax]), (lo, hi), mode=mode, **extra), axis=ax)
    return fresh(a, array)


def roll(a, shift, axis=None, *, policy=NUMPY):
    """Shift elements cyclically along `axis` (of the flattened array when axis is None)."""
    a = x = as_value(a, "roll")
    shape = shape_of(a)
    shifts = ints_arg(shift, "roll", "shift", bounded=False)
    if axis is None:
        return fresh(sh.reshape(roll(ravel(a), shifts, 0), shape), x)
    axes = ints_arg(axis, "roll", "axis")
    if len(shifts) != len(axes) and 1 not in (len(shifts), len(axes)):
        raise FgradValueError(f"roll: shift {shift!r:.40} and axis {axis!r:.40} must have the same length "
                         f"(or one of them a single value), got {len(shifts)} shifts for {len(axes)} axes")
    n_pairs = max(len(shifts), len(axes))
    if len(shifts) == 1:
        shifts = shifts * n_pairs
    if len(axes) == 1:
        axes = axes * n_pairs
    total = {}
    for s, ax in zip(shifts, axes):
        ax = normalize_axis(ax, len(shape), "roll", policy=policy)
        total[ax] = total.get(ax, 0) + s
    for ax, s in sorted(total.items()):
        n = shape[ax]
        if n == 0 or s % n == 0:
            continue
        s %= n
        a = sh.concatenate([_axis_slice(a, ax, n - s, n), _axis_slice(a, ax, 0, n - s)], ax)
    return fresh(a, x)  # (shifts by multiples of the length: a new array all the same)


def broadcast_to(array, shape, *, policy=NUMPY):
    """`array` broadcast to `shape` (NumPy's rules; a differentiable view)."""
    shape = shape_arg(shape, "broadcast_to", policy=policy)
    a = as_value(array, "broadcast_to")
    out = _broadcast_to(a, shape, policy=policy)
    if out is a and isinstance(out, np.ndarray):  # NumPy's is a read-only view, even of the same shape
        out = out.view()
        out.flags.writeable = False
    return out


def broadcast_arrays(*args):
    """The inputs broadcast to their common shape (NumPy's broadcast_arrays; results are
    new read-only arrays where NumPy returns views).

    Args:
        *args: arrays, numbers or nested lists.

    Returns:
        A tuple of arrays of the broadcast shape.
    """
    args = [as_value(a, "broadcast_arrays") for a in args]
    shape = broadcast_shapes("broadcast_arrays", *[shape_of(a) for a in args])
    return tuple(_broadcast_to(a, shape) for a in args)


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """Coordinate arrays from 1-D coordinate vectors (NumPy semantics)."""
    if indexing not in ("xy", "ij"):
        raise FgradValueError("meshgrid: valid values for `indexing` are 'xy' and 'ij'.")
    xs = [ravel(as_value(x, "meshgrid")) for x in xi]
    nd = len(xs)
    out = []
    for i, x in enumerate(xs):
        s = [1] * nd
        s[i] = shape_of(x)[0]
        if indexing == "xy" and nd > 1 and i < 2:
            s[0], s[1] = s[1], s[0]
        out.append(sh.reshape(x, tuple(s)))
    if not sparse and out:
        out = list(broadcast_arrays(*out))
    return tuple(fresh(o, xi) for o in out) if copy else tuple(out)


def nonzero(a):
    """Indices of the non-zero entries (defined in _index; kept here for where(cond))."""
    return _nonzero(a)


__all__ = ["reshape", "ravel", "transpose", "swapaxes", "moveaxis", "expand_dims", "squeeze",
           "atleast_1d", "atleast_2d", "atleast_3d", "shape", "ndim", "size", "astype", "flatten",
           "broadcast_to", "broadcast_arrays", "concatenate", "stack", "hstack", "vstack", "dstack",
           "column_stack", "array_split", "split", "hsplit", "vsplit", "dsplit", "tile", "repeat",
           "flip", "fliplr", "flipud", "rot90", "pad", "roll", "meshgrid"]
