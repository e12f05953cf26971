"""Reductions of fgrad.numpy (axis=, keepdims= as in NumPy)."""
from __future__ import annotations

import numpy as np

from ..core.avals import float_dtype
from ..ops import elementwise as ew
from ..ops import reduce as red
from ..ops.shape import reshape
from ._util import as_value, aval_of, cast, dtype_arg, dtype_of, normalize_axes  # noqa: F401


def _keep(x, shape, axes, keepdims):
    if not keepdims:
        return x
    return reshape(x, tuple(1 if i in axes else d for i, d in enumerate(shape)))


def sum(a, axis=None, dtype=None, keepdims: bool = False):
    """Sum over `axis` (all axes by default)."""
    a = as_value(a, "sum")
    if dtype is not None:
        a = cast(a, dtype_arg(dtype, "sum"))
    elif dtype_of(a).kind in "bi" and dtype_of(a).itemsize < 8:
        a = cast(a, np.dtype(np.int64))  # NumPy sums bool and small ints as int64
    elif dtype_of(a).kind == "u" and dtype_of(a).itemsize < 8:
        a = cast(a, np.dtype(np.uint64))
    shape = aval_of(a).shape
    axes = normalize_axes(axis, len(shape), "sum")
    return _keep(red.reduce_sum(a, axes), shape, axes, keepdims)


def mean(a, axis=None, dtype=None, keepdims: bool = False):
    a = as_value(a, "mean")
    a = cast(a, dtype_arg(dtype, "mean") if dtype is not None else float_dtype(dtype_of(a)))
    shape = aval_of(a).shape
    axes = normalize_axes(axis, len(shape), "mean")
    n = 1
    for i in axes:
        n *= shape[i]
    s = sum(a, axis=axes, keepdims=keepdims)
    return ew.div(s, ew.const(s, float(n)))


def var(a, axis=None, dtype=None, ddof: int = 0, keepdims: bool = False):
    a = as_value(a, "var")
    a = cast(a, dtype_arg(dtype, "var") if dtype is not None else float_dtype(dtype_of(a)))
    shape = aval_of(a).shape
    axes = normalize_axes(axis, len(shape), "var")
    n = 1
    for i in axes:
        n *= shape[i]
    from ._elementwise import subtract
    centered = subtract(a, mean(a, axis=axes, keepdims=True))
    s = sum(ew.mul(centered, centered), axis=axes, keepdims=keepdims)
    return ew.div(s, ew.const(s, float(n - ddof)))


def std(a, axis=None, dtype=None, ddof: int = 0, keepdims: bool = False):
    dtype = dtype_arg(dtype, "std")
    return ew.sqrt(var(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims))


def _extreme(prim_fn, name):
    def fn(a, axis=None, keepdims: bool = False):
        a = as_value(a, name)
        shape = aval_of(a).shape
        axes = normalize_axes(axis, len(shape), name)
        if any(shape[i] == 0 for i in axes):
            raise ValueError(f"{name}: zero-size array to reduction operation (shape {shape}), "
                             "which has no identity")
        return _keep(prim_fn(a, axes), shape, axes, keepdims)
    fn.__name__ = name
    return fn


max = amax = _extreme(red.reduce_max, "max")
min = amin = _extreme(red.reduce_min, "min")


def _arg(prim_fn, name):
    def fn(a, axis=None, keepdims: bool = False):
        a = as_value(a, name)
        shape = aval_of(a).shape
        if axis is None:
            if aval_of(a).size == 0:
                raise ValueError(f"{name}: attempt to get {name} of an empty sequence (an array of "
                                 f"shape {shape}); it has no entries to choose from")
            out = prim_fn(reshape(a, (aval_of(a).size,)), 0)
            return reshape(out, (1,) * len(shape)) if keepdims else out
        (ax,) = normalize_axes(axis, len(shape), name)
        if shape[ax] == 0:
            raise ValueError(f"{name}: attempt to get {name} of an empty sequence: axis {ax} of shape "
                             f"{shape} has size 0")
        out = prim_fn(a, ax)
        return reshape(out, tuple(1 if i == ax else d for i, d in enumerate(shape))) if keepdims else out
    fn.__name__ = name
    return fn


argmax = _arg(red.argmax, "argmax")
argmin = _arg(red.argmin, "argmin")
