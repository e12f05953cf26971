"""Array creation in fgrad.numpy. Results are plain NumPy arrays (constants have no
derivative): `zeros_like(x)` of a traced x is a constant of x's shape and dtype, never a
tracer. Only values computed from traced arguments are traced: `full(shape, x)`,
`full_like(a, x)` and `linspace(x, y)` with a traced x or y."""
from __future__ import annotations

import numpy as np

from ..core.trace import Tracer, aval_of, facade
from ._util import as_value, broadcast_to, cast, is_traced


def _is_cupy(x) -> bool:
    return type(x).__module__.startswith("cupy")


def _xp_like(a):
    """cupy for a CuPy array (or a Tensor holding one), else numpy."""
    if facade.tensor_type is not None and isinstance(a, facade.tensor_type):
        a = a._value
    if _is_cupy(a):
        import cupy
        return cupy
    return np


def _static(v, what: str):
    """A concrete Python/NumPy value for an argument that fixes a shape or a grid."""
    if facade.tensor_type is not None and isinstance(v, facade.tensor_type):
        v = v._value
    if isinstance(v, Tracer):
        v = v._concrete(what)
    return v


def _shape(shape) -> tuple:
    shape = _static(shape, "an array shape")
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(_static(d, "an array shape")) for d in shape)


def zeros(shape, dtype=float):
    """A new array of zeros (float64 by default)."""
    return np.zeros(_shape(shape), dtype=dtype)


def ones(shape, dtype=float):
    return np.ones(_shape(shape), dtype=dtype)


def empty(shape, dtype=float):
    """Like NumPy's empty, but filled with zeros so results never depend on stale memory."""
    return np.zeros(_shape(shape), dtype=dtype)


def full(shape, fill_value, dtype=None):
    """An array of `shape` filled with `fill_value`; a traced fill value gives a traced
    (differentiable) result, broadcast from it."""
    shape = _shape(shape)
    if is_traced(fill_value):
        v = as_value(fill_value, "full")
        if dtype is not None:
            v = cast(v, np.dtype(dtype))
        return broadcast_to(v, shape)
    return np.full(shape, fill_value, dtype=dtype)


def eye(N, M=None, k: int = 0, dtype=float):
    """The N x M identity (ones on diagonal k)."""
    return np.eye(int(_static(N, "eye's N")), None if M is None else int(_static(M, "eye's M")),
                  k=int(_static(k, "eye's k")), dtype=dtype)


def identity(n, dtype=None):
    return np.identity(int(_static(n, "identity's n")), dtype=float if dtype is None else dtype)


def tri(N, M=None, k: int = 0, dtype=float):
    """Ones at and below diagonal k."""
    return np.tri(int(_static(N, "tri's N")), None if M is None else int(_static(M, "tri's M")),
                  k=int(_static(k, "tri's k")), dtype=dtype)


def arange(start, stop=None, step=None, dtype=None):
    """Evenly spaced values in [start, stop); the bounds must be concrete."""
    start, stop, step = (None if v is None else _static(v, "arange's bounds") for v in (start, stop, step))
    return np.arange(start, stop, step, dtype=dtype)


def linspace(start, stop, num: int = 50, endpoint: bool = True, retstep: bool = False, dtype=None,
             axis: int = 0):
    """`num` evenly spaced samples from start to stop. Traced start/stop give a traced,
    differentiable result (linear in both)."""
    num = int(_static(num, "linspace's num"))
    if num < 0:
        raise ValueError(f"linspace: number of samples, {num}, must be non-negative")
    if not (is_traced(start) or is_traced(stop)):
        return np.linspace(start, stop, num, endpoint=endpoint, retstep=retstep, dtype=dtype, axis=axis)
    from ._elementwise import add, multiply, subtract
    from ._shape import moveaxis
    from ._util import dtype_of, promote
    start, stop = promote("linspace", start, stop)
    from ..core.avals import float_dtype
    ft = float_dtype(dtype_of(start))
    start, stop = cast(start, ft), cast(stop, ft)
    div = (num - 1) if endpoint else num
    delta = subtract(stop, start)
    bshape = aval_of(delta).shape
    frac = (np.arange(num, dtype=ft) / (div if div > 0 else 1)).reshape((num,) + (1,) * len(bshape))
    step = delta * (1.0 / div) if div > 0 else delta * np.nan
    out = add(start, multiply(frac, delta))
    if axis != 0:
        out = moveaxis(out, 0, axis)
    if dtype is not None:
        out = cast(out, np.dtype(dtype))
    return (out, step) if retstep else out


def _like(a, dtype, shape):
    av = aval_of(as_value(a, "*_like"))
    return (av.shape if shape is None else _shape(shape)), (av.dtype if dtype is None else np.dtype(dtype))


def zeros_like(a, dtype=None, shape=None):
    """Zeros of a's shape and dtype: a constant, even when `a` is traced."""
    s, d = _like(a, dtype, shape)
    return _xp_like(a).zeros(s, dtype=d)


def ones_like(a, dtype=None, shape=None):
    s, d = _like(a, dtype, shape)
    return _xp_like(a).ones(s, dtype=d)


def empty_like(a, dtype=None, shape=None):
    """Like NumPy's empty_like, but zero-filled."""
    return zeros_like(a, dtype=dtype, shape=shape)


def full_like(a, fill_value, dtype=None, shape=None):
    """An array like `a` filled with `fill_value` (traced only if fill_value is traced)."""
    s, d = _like(a, dtype, shape)
    if is_traced(fill_value):
        return broadcast_to(cast(as_value(fill_value, "full_like"), d), s)
    return _xp_like(a).full(s, fill_value, dtype=d)


__all__ = ["zeros", "ones", "empty", "full", "eye", "identity", "tri", "arange", "linspace",
           "zeros_like", "ones_like", "empty_like", "full_like"]
