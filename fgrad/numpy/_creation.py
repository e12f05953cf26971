"""Array creation in fgrad.numpy. Results are fgrad.numpy Arrays (NumPy arrays with `.at`;
constants have no derivative): `zeros_like(x)` of a traced x is a constant of x's shape and dtype, never a
tracer. Only values computed from traced arguments are traced: `full(shape, x)`,
`full_like(a, x)` and `linspace(x, y)` with a traced x or y."""
from __future__ import annotations

import functools
import math

import numpy as np

from ..core.avals import float_dtype
from ..core.errors import FgradTypeError, FgradValueError, ShapeError
from ..core.trace import aval_of
from ..ops import elementwise as ew
from ._array import as_array
from ._elementwise import add, divide, floor, multiply, subtract
from ._reductions import any as any_
from ._shape import concatenate, moveaxis, reshape
from ._util import (
    MAX_SIZE,
    as_value,
    broadcast_shapes,
    broadcast_to,
    cast,
    dtype_arg,
    dtype_of,
    int_arg,
    is_traced,
    normalize_axis,
    promote,
    shape_arg,
    static_arg,
)


def _is_cupy(x) -> bool:
    return type(x).__module__.startswith("cupy")


def _xp_like(a):
    """cupy for a CuPy array, else numpy."""
    if _is_cupy(a):
        import cupy  # optional dependency: only for CuPy arrays
        return cupy
    return np


_static = static_arg  # a concrete value for an argument that fixes a shape or a grid


def _shape(shape, name: str = "array creation") -> tuple:
    return shape_arg(shape, name)


def _fill(fill_value, shape, name: str):
    """fill_value as an fgrad value (numeric; traced stays traced) that broadcasts to `shape`."""
    v = as_value(fill_value, f"{name}'s fill_value")
    vs = aval_of(v).shape
    if vs != shape and (len(vs) > len(shape) or any(a not in (1, b) for a, b in zip(vs[::-1], shape[::-1]))):
        raise ShapeError(f"{name}: fill_value of shape {vs} cannot be broadcast to the array shape "
                         f"{shape}; pass a scalar or an array whose trailing dimensions are 1 or match")
    return v


def zeros(shape, dtype=float):
    """A new array of zeros (float64 by default)."""
    return np.zeros(_shape(shape, "zeros"), dtype=dtype_arg(dtype, "zeros"))


def ones(shape, dtype=float):
    """A new array of ones (float64 by default; NumPy's ones).

    Args:
        shape: an int or a tuple of ints.
        dtype: the dtype.

    Returns:
        A NumPy array.
    """
    return np.ones(_shape(shape, "ones"), dtype=dtype_arg(dtype, "ones"))


def empty(shape, dtype=float):
    """Like NumPy's empty, but filled with zeros so results never depend on stale memory."""
    return np.zeros(_shape(shape, "empty"), dtype=dtype_arg(dtype, "empty"))


def full(shape, fill_value, dtype=None):
    """An array of `shape` filled with `fill_value`; a traced fill value gives a traced
    (differentiable) result, broadcast from it."""
    shape = _shape(shape, "full")
    dtype = dtype_arg(dtype, "full")
    v = _fill(fill_value, shape, "full")
    if is_traced(v):
        if dtype is not None:
            v = cast(v, dtype)
        return broadcast_to(v, shape)
    if _is_cupy(v):  # a GPU fill value fills a GPU array (np.full would convert it implicitly)
        out = _xp_like(v).empty(shape, dtype=v.dtype if dtype is None else dtype)
        out[...] = v
        return out
    return np.full(shape, v, dtype=dtype)


def _matrix(name, N, M, k, n_name="N"):
    """(N, M, k) of eye/tri: sizes checked, and k clamped to [-N, M] (beyond that the result
    no longer changes, so any integer k is fine)."""
    N = int_arg(N, name, n_name)
    M = N if M is None else int_arg(M, name, "M")
    shape_arg((N, M), name)
    k = int_arg(k, name, "k", bounded=False)
    return N, M, min(max(k, -N), M)


def eye(N, M=None, k: int = 0, dtype=float):
    """The N x M identity (ones on diagonal k)."""
    N, M, k = _matrix("eye", N, M, k)
    return np.eye(N, M, k=k, dtype=dtype_arg(dtype, "eye"))


def identity(n, dtype=None):
    """The n x n identity matrix (float64 by default; NumPy's identity).

    Args:
        n: the number of rows and columns.
        dtype: the dtype, or None for float64.

    Returns:
        A NumPy array.
    """
    n, _, _ = _matrix("identity", n, None, 0, "n")
    return np.identity(n, dtype=float if dtype is None else dtype_arg(dtype, "identity"))


def tri(N, M=None, k: int = 0, dtype=float):
    """Ones at and below diagonal k."""
    N, M, k = _matrix("tri", N, M, k)
    return np.tri(N, M, k=k, dtype=dtype_arg(dtype, "tri"))


def _real_scalar(v, name, what):
    v = as_value(_static(v, f"{name}'s {what}"), f"{name}'s {what}")
    if np.ndim(v) != 0 or v.dtype.kind not in "biuf":
        raise FgradTypeError(f"{name}: {what} must be a real number, got {type(v).__name__} {v!r:.60}")
    return v


def arange(start, stop=None, step=None, dtype=None):
    """Evenly spaced values in [start, stop); the bounds must be concrete."""
    start, stop, step = (None if v is None else _static(v, "arange's bounds") for v in (start, stop, step))
    dtype = dtype_arg(dtype, "arange")
    lo, hi, st = (None if v is None else _real_scalar(v, "arange", w).item()
                  for v, w in ((start, "start"), (stop, "stop"), (step, "step")))
    lo, hi = (0, lo) if hi is None else (lo, hi)
    st = 1 if st is None else st
    if st == 0:
        raise FgradValueError("arange: step must not be zero")
    if not all(math.isfinite(x) for x in (lo, hi, st)):
        raise FgradValueError(f"arange: start, stop and step must be finite, got {lo}, {hi}, {st}")
    if math.ceil((hi - lo) / st) > MAX_SIZE:
        raise ShapeError(f"arange: [{lo}, {hi}) in steps of {st} has more values than an array can "
                         f"hold ({MAX_SIZE:.3g}); check the bounds")
    return np.arange(start, stop, step, dtype=dtype)


def linspace(start, stop, num: int = 50, endpoint: bool = True, retstep: bool = False, dtype=None,
             axis: int = 0):
    """`num` evenly spaced samples from start to stop. Traced start/stop give a traced,
    differentiable result (linear in both)."""
    num = int_arg(num, "linspace", "num")
    if num < 0:
        raise FgradValueError(f"linspace: number of samples, {num}, must be non-negative")
    dtype = dtype_arg(dtype, "linspace")
    for flag, what in ((endpoint, "endpoint"), (retstep, "retstep")):
        if not isinstance(flag, (bool, np.bool_, int, np.integer)):
            raise FgradTypeError(f"linspace: {what} must be True or False, got {type(flag).__name__} {flag!r:.40}")
    start, stop = _bound(start, "start"), _bound(stop, "stop")
    bshape = broadcast_shapes("linspace", aval_of(start).shape, aval_of(stop).shape)
    shape_arg((num,) + bshape, "linspace", "result shape")
    axis = normalize_axis(axis, len(bshape) + 1, "linspace")
    if not (is_traced(start) or is_traced(stop)):
        return np.linspace(start, stop, num, endpoint=endpoint, retstep=retstep, dtype=dtype, axis=axis)
    return _traced_linspace(start, stop, num, endpoint, retstep, dtype, axis)


def _traced_linspace(start, stop, num: int, endpoint: bool, retstep: bool, dtype, axis: int):
    """linspace with traced bounds, step for step NumPy's algorithm (arange * step + start, the
    last sample set to stop), so eager and traced results agree to the last bit."""
    start, stop = promote("linspace", start, stop)
    ft = float_dtype(dtype_of(start))
    start, stop = cast(start, ft), cast(stop, ft)
    div = (num - 1) if endpoint else num
    delta = subtract(stop, start)
    bshape = aval_of(delta).shape
    y = np.arange(num, dtype=ft).reshape((num,) + (1,) * len(bshape))
    if div > 0:
        step = divide(delta, np.asarray(div, ft))
        # NumPy's special case for steps that underflow to 0 (denormal deltas): y / div * delta
        tiny = broadcast_to(any_(ew.eq(step, ew.const(step, 0.0))), (num,) + bshape)
        y = ew.select(tiny, multiply(divide(y, np.asarray(div, ft)), delta), multiply(y, step))
    else:
        step = multiply(delta, np.asarray(np.nan, ft))
        y = multiply(y, delta)
    out = add(y, start)
    if endpoint and num > 1:
        out = concatenate([out[:-1], reshape(broadcast_to(stop, bshape), (1,) + bshape)], axis=0)
    if axis != 0:
        out = moveaxis(out, 0, axis)
    if dtype is not None:
        if dtype.kind in "iu":
            out = floor(out)
        out = cast(out, dtype)
    return (out, step) if retstep else out


def _bound(v, what: str):
    """A linspace bound as a value fgrad computes with; a Python number stays one, so that it
    is weak as in NumPy (linspace(float32 x, 2.0) is float32). as_value checks it anyway
    (an int beyond 64 bits is an error)."""
    checked = as_value(v, f"linspace's {what}")
    return v if type(v) in (int, float) else checked


def _like(a, dtype, shape, name):
    av = aval_of(as_value(a, name))
    return ((av.shape if shape is None else _shape(shape, name)),
            (av.dtype if dtype is None else dtype_arg(dtype, name)))


def zeros_like(a, dtype=None, shape=None):
    """Zeros of a's shape and dtype: a constant, even when `a` is traced."""
    s, d = _like(a, dtype, shape, "zeros_like")
    return _xp_like(a).zeros(s, dtype=d)


def ones_like(a, dtype=None, shape=None):
    """An array of ones with a's shape and dtype (or those given; NumPy's ones_like). A
    CuPy input gives a CuPy array.

    Args:
        a: an array.
        dtype: the dtype, or None for a's.
        shape: the shape, or None for a's.

    Returns:
        A new array.
    """
    s, d = _like(a, dtype, shape, "ones_like")
    return _xp_like(a).ones(s, dtype=d)


def empty_like(a, dtype=None, shape=None):
    """Like NumPy's empty_like, but zero-filled."""
    return zeros_like(a, dtype=dtype, shape=shape)


def full_like(a, fill_value, dtype=None, shape=None):
    """An array like `a` filled with `fill_value` (traced only if fill_value is traced)."""
    s, d = _like(a, dtype, shape, "full_like")
    v = _fill(fill_value, s, "full_like")
    if is_traced(v):
        return broadcast_to(cast(v, d), s)
    return _xp_like(a).full(s, fill_value, dtype=d)


__all__ = ["zeros", "ones", "empty", "full", "eye", "identity", "tri", "arange", "linspace",
           "zeros_like", "ones_like", "empty_like", "full_like"]


def _making_arrays(fn):
    """`fn` whose plain-NumPy results come back as fgrad.numpy Arrays (which have `.at`)."""
    @functools.wraps(fn)
    def make(*args, **kwargs):
        out = fn(*args, **kwargs)
        if type(out) is tuple:  # linspace(..., retstep=True)
            return tuple(as_array(o) for o in out)
        return as_array(out)
    return make


for _name in ("zeros", "ones", "empty", "full", "eye", "identity", "tri", "arange", "linspace",
              "zeros_like", "ones_like", "empty_like", "full_like"):
    globals()[_name] = _making_arrays(globals()[_name])
del _name
