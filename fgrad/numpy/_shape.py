"""Shape manipulation in fgrad.numpy."""
from __future__ import annotations

import numpy as np

from ..core.errors import ShapeError
from ..ops import shape as sh
from ._reductions import normalize_axes
from ..ops import index as ix
from ._util import as_value, aval_of, broadcast_shapes, broadcast_to, cast, result_dtype


def _resolve_shape(shape, size: int, name: str = "reshape") -> tuple:
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)
    if shape.count(-1) > 1:
        raise ShapeError(f"{name}: only one dimension can be -1, got {shape}")
    if -1 in shape:
        known = 1
        for d in shape:
            if d != -1:
                known *= d
        if known == 0 or size % known:
            raise ShapeError(f"{name}: cannot reshape an array of {size} elements into shape {shape}")
        shape = tuple(size // known if d == -1 else d for d in shape)
    return shape


def reshape(a, newshape, *more):
    a = as_value(a, "reshape")
    if more:
        newshape = (newshape,) + more
    return sh.reshape(a, _resolve_shape(newshape, aval_of(a).size))


def ravel(a):
    a = as_value(a, "ravel")
    return sh.reshape(a, (aval_of(a).size,))


def transpose(a, axes=None):
    a = as_value(a, "transpose")
    nd = aval_of(a).ndim
    perm = tuple(reversed(range(nd))) if axes is None else tuple(int(x) % nd for x in axes)
    if sorted(perm) != list(range(nd)):
        raise ShapeError(f"transpose: axes {axes} are not a permutation of {nd} dimensions")
    return sh.transpose(a, perm)


def swapaxes(a, axis1: int, axis2: int):
    a = as_value(a, "swapaxes")
    nd = aval_of(a).ndim
    perm = list(range(nd))
    i, j = normalize_axes(axis1, nd, "swapaxes")[0], normalize_axes(axis2, nd, "swapaxes")[0]
    perm[i], perm[j] = perm[j], perm[i]
    return sh.transpose(a, perm)


def moveaxis(a, source, destination):
    a = as_value(a, "moveaxis")
    nd = aval_of(a).ndim
    src = [normalize_axes(s, nd, "moveaxis")[0] for s in np.atleast_1d(source)]
    dst = [normalize_axes(d, nd, "moveaxis")[0] for d in np.atleast_1d(destination)]
    order = [n for n in range(nd) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return sh.transpose(a, order)


def expand_dims(a, axis):
    a = as_value(a, "expand_dims")
    shape = list(aval_of(a).shape)
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    nd = len(shape) + len(axes)
    for ax in sorted(int(x) % nd for x in axes):
        shape.insert(ax, 1)
    return sh.reshape(a, tuple(shape))


def squeeze(a, axis=None):
    a = as_value(a, "squeeze")
    shape = aval_of(a).shape
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
        out.append(sh.reshape(a, expand(aval_of(a).shape)))
    return out[0] if len(out) == 1 else tuple(out)


def atleast_1d(*arys):
    return _atleast(arys, "atleast_1d", lambda s: s if len(s) >= 1 else (1,))


def atleast_2d(*arys):
    return _atleast(arys, "atleast_2d", lambda s: s if len(s) >= 2 else (1,) + s if len(s) == 1 else (1, 1))


def atleast_3d(*arys):
    return _atleast(arys, "atleast_3d", lambda s: s if len(s) >= 3 else
                    (1, 1, 1) if len(s) == 0 else (1,) + s + (1,) if len(s) == 1 else s + (1,))


def shape(a) -> tuple:
    return aval_of(as_value(a, "shape")).shape


def ndim(a) -> int:
    return len(shape(a))


def size(a) -> int:
    return aval_of(as_value(a, "size")).size


def astype(a, dtype):
    from ._util import cast
    return cast(as_value(a, "astype"), np.dtype(dtype))


def flatten(a):
    return ravel(a)


# --- joining and splitting -----------------------------------------------------------------

def concatenate(arrays, axis=0, dtype=None):
    """Join arrays along an existing axis (axis=None: flatten them first); NumPy's dtype
    promotion."""
    if _is_single_array(arrays):
        arrays = [arrays[i] for i in range(aval_of(arrays).shape[0])]
    arrays = [as_value(a, "concatenate") for a in arrays]
    if not arrays:
        raise ValueError("concatenate: need at least one array to concatenate")
    if axis is None:
        arrays = [ravel(a) for a in arrays]
        axis = 0
    dt = np.dtype(dtype) if dtype is not None else result_dtype(*arrays)
    shapes = [aval_of(a).shape for a in arrays]
    nd = len(shapes[0])
    if nd == 0:
        raise ValueError("concatenate: zero-dimensional arrays cannot be concatenated")
    (ax,) = normalize_axes(axis, nd, "concatenate")
    for s in shapes:
        if len(s) != nd or any(a != b for i, (a, b) in enumerate(zip(s, shapes[0])) if i != ax):
            raise ShapeError(f"concatenate: all the input array dimensions except for the "
                             f"concatenation axis {ax} must match exactly, got shapes "
                             f"{', '.join(str(t) for t in shapes)}")
    return sh.concatenate([cast(a, dt) for a in arrays], ax)


def _is_single_array(x) -> bool:
    """A single array passed where a sequence of arrays is expected (NumPy iterates it)."""
    return not isinstance(x, (list, tuple)) and hasattr(x, "shape") and len(aval_of(x).shape) >= 1


def stack(arrays, axis=0, dtype=None):
    """Join equally shaped arrays along a new axis."""
    if _is_single_array(arrays):
        arrays = [arrays[i] for i in range(aval_of(arrays).shape[0])]
    arrays = [as_value(a, "stack") for a in arrays]
    if not arrays:
        raise ValueError("stack: need at least one array to stack")
    shapes = [aval_of(a).shape for a in arrays]
    if any(s != shapes[0] for s in shapes):
        raise ShapeError(f"stack: all input arrays must have the same shape, got "
                         f"{', '.join(str(t) for t in shapes)}")
    (ax,) = normalize_axes(axis, len(shapes[0]) + 1, "stack")
    new = shapes[0][:ax] + (1,) + shapes[0][ax:]
    return concatenate([sh.reshape(a, new) for a in arrays], axis=ax, dtype=dtype)


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else x


def hstack(tup, dtype=None):
    arrs = [atleast_1d(a) for a in _as_list(tup)]
    return concatenate(arrs, axis=0 if arrs and aval_of(arrs[0]).ndim == 1 else 1, dtype=dtype)


def vstack(tup, dtype=None):
    return concatenate([atleast_2d(a) for a in _as_list(tup)], axis=0, dtype=dtype)


def dstack(tup):
    return concatenate([atleast_3d(a) for a in _as_list(tup)], axis=2)


def column_stack(tup):
    arrs = []
    for a in _as_list(tup):
        a = as_value(a, "column_stack")
        s = aval_of(a).shape
        arrs.append(sh.reshape(a, (s[0], 1)) if len(s) == 1 else atleast_2d(a))
    return concatenate(arrs, axis=1)


def _axis_slice(a, ax, lo, hi):
    s = aval_of(a).shape
    return sh.slice(a, [lo if i == ax else 0 for i in range(len(s))],
                    [hi if i == ax else d for i, d in enumerate(s)])


def array_split(ary, indices_or_sections, axis=0):
    """Split into sub-arrays; an int gives that many nearly equal parts."""
    a = as_value(ary, "array_split")
    shape = aval_of(a).shape
    (ax,) = normalize_axes(axis, len(shape), "array_split")
    n = shape[ax]
    if isinstance(indices_or_sections, (int, np.integer)):
        sections = int(indices_or_sections)
        if sections <= 0:
            raise ValueError("array_split: number sections must be larger than 0.")
        each, extra = divmod(n, sections)
        sizes = [each + 1] * extra + [each] * (sections - extra)
        bounds = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
        pairs = list(zip(bounds[:-1], bounds[1:]))
    else:
        points = [int(p) for p in indices_or_sections]
        pairs = [range(n)[slice(lo, hi)] for lo, hi in zip([0] + points, points + [None])]
        pairs = [(r.start, r.start + len(r)) if len(r) else (0, 0) for r in pairs]
    return [_axis_slice(a, ax, int(lo), int(hi)) for lo, hi in pairs]


def split(ary, indices_or_sections, axis=0):
    """Split into equal parts (an int that must divide the axis) or at the given indices."""
    if isinstance(indices_or_sections, (int, np.integer)):
        a = as_value(ary, "split")
        shape = aval_of(a).shape
        (ax,) = normalize_axes(axis, len(shape), "split")
        if int(indices_or_sections) <= 0 or shape[ax] % int(indices_or_sections):
            raise ValueError(f"split: array split does not result in an equal division (axis {ax} "
                             f"of shape {shape} into {indices_or_sections} sections)")
    return array_split(ary, indices_or_sections, axis)


def hsplit(ary, indices_or_sections):
    a = as_value(ary, "hsplit")
    return split(a, indices_or_sections, axis=1 if aval_of(a).ndim > 1 else 0)


def vsplit(ary, indices_or_sections):
    return split(ary, indices_or_sections, axis=0)


def dsplit(ary, indices_or_sections):
    return split(ary, indices_or_sections, axis=2)


# --- repetition, reversal, padding, rolling -------------------------------------------------

def _static_value(v, what):
    from ..core.trace import Tracer
    v = getattr(v, "_value", v)
    return v._concrete(what) if isinstance(v, Tracer) else v


def tile(A, reps):
    """A repeated reps[i] times along each axis (NumPy semantics for differing ndim)."""
    a = as_value(A, "tile")
    reps = _static_value(reps, "tile's reps")
    reps = tuple(int(r) for r in (np.atleast_1d(reps)))
    shape = aval_of(a).shape
    d = max(len(reps), len(shape))
    reps = (1,) * (d - len(reps)) + reps
    shape = (1,) * (d - len(shape)) + shape
    a = sh.reshape(a, shape)
    if all(r == 1 for r in reps):
        return a
    big = tuple(x for r, s in zip(reps, shape) for x in (r, s))
    a = sh.broadcast_in_dim(a, big, tuple(range(1, 2 * d, 2)))
    return sh.reshape(a, tuple(r * s for r, s in zip(reps, shape)))


def repeat(a, repeats, axis=None):
    """Repeat each element `repeats` times along `axis` (the flattened array if None)."""
    a = as_value(a, "repeat")
    if axis is None:
        a = ravel(a)
        axis = 0
    shape = aval_of(a).shape
    (ax,) = normalize_axes(axis, len(shape), "repeat")
    reps = np.asarray(_static_value(repeats, "repeat's repeats"))
    if reps.dtype.kind not in "iu" or (reps.size and reps.min() < 0):
        raise ValueError(f"repeat: repeats must be non-negative integers, got {repeats!r:.60}")
    if reps.ndim == 0 or reps.size == 1:
        r = int(reps.reshape(()))
        big = shape[:ax + 1] + (r,) + shape[ax + 1:]
        dims = tuple(range(ax + 1)) + tuple(range(ax + 2, len(shape) + 1))
        out = sh.broadcast_in_dim(a, big, dims)
        return sh.reshape(out, shape[:ax] + (shape[ax] * r,) + shape[ax + 1:])
    if reps.shape != (shape[ax],):
        raise ValueError(f"repeat: operands could not be broadcast together: repeats of shape "
                         f"{reps.shape} for axis {ax} of size {shape[ax]}")
    from ._index import take
    return take(a, np.repeat(np.arange(shape[ax]), reps), axis=ax)


def flip(m, axis=None):
    """Reverse the order of elements along `axis` (all axes by default)."""
    m = as_value(m, "flip")
    return ix.rev(m, normalize_axes(axis, aval_of(m).ndim, "flip"))


def fliplr(m):
    m = as_value(m, "fliplr")
    if aval_of(m).ndim < 2:
        raise ValueError("fliplr: input must be >= 2-d")
    return flip(m, 1)


def flipud(m):
    m = as_value(m, "flipud")
    if aval_of(m).ndim < 1:
        raise ValueError("flipud: input must be >= 1-d")
    return flip(m, 0)


def rot90(m, k: int = 1, axes=(0, 1)):
    """Rotate by 90 degrees k times in the plane of `axes` (NumPy semantics)."""
    m = as_value(m, "rot90")
    nd = aval_of(m).ndim
    a0, a1 = (normalize_axes(x, nd, "rot90")[0] for x in axes)
    if a0 == a1:
        raise ValueError("rot90: axes must be different")
    k %= 4
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
    from ..ops import elementwise as ew
    a = as_value(array, "pad")
    shape = aval_of(a).shape
    widths = np.asarray(_static_value(pad_width, "pad's pad_width"))
    if widths.dtype.kind not in "iu" and not (widths.dtype.kind == "f" and np.all(widths == np.round(widths))):
        raise TypeError(f"pad: pad_width must be integers, got {pad_width!r:.60}")
    try:
        widths = np.broadcast_to(widths.astype(np.int64), (len(shape), 2))
    except ValueError:
        raise ValueError(f"pad: pad_width {pad_width!r:.60} does not fit an array of {len(shape)} "
                         "dimensions (use an int, (before, after), or one pair per axis)") from None
    if (widths < 0).any():
        raise ValueError(f"pad: pad widths can't be negative, got {pad_width!r:.60}")
    widths = tuple((int(lo), int(hi)) for lo, hi in widths)
    if mode in ("constant", "empty"):
        unknown = set(kwargs) - {"constant_values"}
        if unknown or (mode == "empty" and kwargs):
            raise TypeError(f"pad: unsupported keyword arguments {sorted(kwargs)} for mode {mode!r}")
        out = sh.pad(a, widths)
        cv = kwargs.get("constant_values", 0)
        dt = aval_of(a).dtype
        if _is_traced(cv):
            c = cast(as_value(cv, "pad"), dt)
            if aval_of(c).shape != ():
                raise ValueError("pad: a traced constant_values must be a scalar")
            outside = np.pad(np.zeros(shape, dt), widths, constant_values=1)
            return ew.add(out, ew.mul(outside, c)) if outside.size else out
        cv = np.asarray(cv)
        if cv.size and np.any(cv != 0):
            return ew.add(out, np.pad(np.zeros(shape, dt), widths, constant_values=cv))
        return out
    if mode not in _INDEX_MODES:
        raise ValueError(f"pad: mode {mode!r} is not supported; use 'constant', 'edge', 'reflect', "
                         "'symmetric' or 'wrap'")
    extra = {k: v for k, v in kwargs.items() if k == "reflect_type"}
    if set(kwargs) - set(extra) or mode in ("edge", "wrap") and extra:
        raise TypeError(f"pad: unsupported keyword arguments {sorted(kwargs)} for mode {mode!r}")
    if extra.get("reflect_type", "even") != "even":
        raise ValueError("pad: only reflect_type='even' (the default) is supported")
    from ._index import take
    for ax, (lo, hi) in enumerate(widths):
        if lo or hi:
            a = take(a, np.pad(np.arange(shape[ax]), (lo, hi), mode=mode, **extra), axis=ax)
    return a


def _is_traced(x):
    from ._util import is_traced
    return is_traced(x)


def roll(a, shift, axis=None):
    """Shift elements cyclically along `axis` (of the flattened array when axis is None)."""
    a = as_value(a, "roll")
    shape = aval_of(a).shape
    shift = _static_value(shift, "roll's shift")
    if axis is None:
        return sh.reshape(roll(ravel(a), shift, 0), shape)
    total = {}
    for s, ax in np.broadcast(np.atleast_1d(shift), np.atleast_1d(axis)):
        (ax,) = normalize_axes(int(ax), len(shape), "roll")
        total[ax] = total.get(ax, 0) + int(s)
    for ax, s in sorted(total.items()):
        n = shape[ax]
        if n == 0 or s % n == 0:
            continue
        s %= n
        a = sh.concatenate([_axis_slice(a, ax, n - s, n), _axis_slice(a, ax, 0, n - s)], ax)
    return a


def broadcast_arrays(*args):
    args = [as_value(a, "broadcast_arrays") for a in args]
    shape = broadcast_shapes("broadcast_arrays", *[aval_of(a).shape for a in args])
    return tuple(broadcast_to(a, shape) for a in args)


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """Coordinate arrays from 1-D coordinate vectors (NumPy semantics)."""
    if indexing not in ("xy", "ij"):
        raise ValueError("meshgrid: valid values for `indexing` are 'xy' and 'ij'.")
    xs = [ravel(as_value(x, "meshgrid")) for x in xi]
    nd = len(xs)
    out = []
    for i, x in enumerate(xs):
        s = [1] * nd
        s[i] = aval_of(x).shape[0]
        if indexing == "xy" and nd > 1 and i < 2:
            s[0], s[1] = s[1], s[0]
        out.append(sh.reshape(x, tuple(s)))
    if not sparse and out:
        out = list(broadcast_arrays(*out))
    return tuple(out)


def nonzero(a):
    """Indices of the non-zero entries (defined in _index; kept here for where(cond))."""
    from ._index import nonzero as _nonzero
    return _nonzero(a)


__all__ = ["reshape", "ravel", "transpose", "swapaxes", "moveaxis", "expand_dims", "squeeze",
           "atleast_1d", "atleast_2d", "atleast_3d", "shape", "ndim", "size", "astype", "flatten",
           "broadcast_to", "broadcast_arrays", "concatenate", "stack", "hstack", "vstack", "dstack",
           "column_stack", "array_split", "split", "hsplit", "vsplit", "dsplit", "tile", "repeat",
           "flip", "fliplr", "flipud", "rot90", "pad", "roll", "meshgrid"]
