"""Shape manipulation in fgrad.numpy."""
from __future__ import annotations

import numpy as np

from ..core.errors import ShapeError
from ..ops import shape as sh
from ._reductions import normalize_axes
from ._util import as_value, aval_of, broadcast_to  # noqa: F401  (re-exported)


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


def atleast_1d(a):
    a = as_value(a, "atleast_1d")
    return reshape(a, (1,)) if aval_of(a).ndim == 0 else a


def shape(a) -> tuple:
    return aval_of(as_value(a, "shape")).shape


def ndim(a) -> int:
    return len(shape(a))


def size(a) -> int:
    return aval_of(as_value(a, "size")).size


__all__ = [n for n in dir() if not n.startswith("_") and n not in (
    "annotations", "np", "ew", "sh", "float_dtype", "as_value", "cast", "dtype_of", "promote",
    "normalize_axes", "aval_of", "ShapeError")]


def astype(a, dtype):
    from ._util import cast
    return cast(as_value(a, "astype"), np.dtype(dtype))


def flatten(a):
    return ravel(a)


__all__ += ["astype", "flatten"]
