"""Argument checks shared by the samplers (dtype and shape arguments, JAX's rules)."""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import numpy as fnp
from ..core.errors import FgradTypeError, FgradValueError
from ..core.trace import Tracer
from ._prng import canonical_shape


def float_dtype(name: str, dtype: Any, *, complex_ok: bool = False) -> np.dtype:
    """The sampler's float dtype: None is float64 (fgrad's default float, JAX's with
    x64 enabled); float32 and float64 are supported."""
    dt = np.dtype(np.float64 if dtype is None else dtype)
    if dt not in (np.float32, np.float64):
        kind = "a float or complex" if complex_ok else "a float"
        raise FgradValueError(f"dtype argument to `{name}` must be {kind} dtype (float32 or float64), "
                              f"got {dt}")
    return dt


def int_dtype(name: str, dtype: Any) -> np.dtype:
    """The sampler's integer dtype: None is int64 (JAX's default with x64 enabled)."""
    dt = np.dtype(np.int64 if dtype is None else dtype)
    if dt.kind not in "iu":
        raise FgradValueError(f"dtype argument to `{name}` must be an int dtype, got {dt}")
    return dt


def shape_of(x: Any) -> tuple:
    return tuple(x.shape) if isinstance(x, Tracer) or hasattr(x, "shape") else np.shape(x)


def broadcast_shapes(name: str, *shapes: tuple) -> tuple:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise FgradValueError(f"{name}: parameter shapes {', '.join(map(str, shapes))} do not "
                              "broadcast together") from None


def check_shape(name: str, shape: tuple, *param_shapes: tuple) -> None:
    """JAX's rule: the parameters broadcast to exactly `shape`."""
    if param_shapes:
        out = broadcast_shapes(name, shape, *param_shapes)
        if out != tuple(shape):
            raise FgradValueError(f"{name}: parameter shapes {', '.join(map(str, param_shapes))} must "
                                  f"broadcast to the shape argument {tuple(shape)} (their broadcast "
                                  f"with it is {out}); pass shape={out} or reshape the parameters")


def param_shape(name: str, shape: Any, *params: Any) -> tuple:
    """`shape`, or the parameters' broadcast shape when it is None, checked against them."""
    pshapes = [shape_of(p) for p in params]
    if shape is None:
        return broadcast_shapes(name, *pshapes) if pshapes else ()
    shape = canonical_shape(name, shape)
    check_shape(name, shape, *pshapes)
    return shape


def as_dtype(x: Any, dtype: np.dtype) -> Any:
    """x converted to `dtype` (a traced value stays traced)."""
    if isinstance(x, Tracer):
        return x.astype(dtype) if x.dtype != dtype else x
    arr = fnp.asarray(x)
    if arr.dtype.kind == "c" and np.dtype(dtype).kind != "c":
        raise FgradTypeError(f"expected a real parameter, got complex value {x!r}")
    return arr.astype(dtype) if arr.dtype != dtype else arr


def nextafter(x: Any, up: bool) -> Any:
    """The float next to x toward +inf (up) or -inf, written with frexp/ldexp so that it
    traces (NumPy's nextafter on concrete values)."""
    if not up:
        return fnp.negative(nextafter(fnp.negative(x), True))
    dtype = x.dtype
    info = np.finfo(dtype)
    m, e = fnp.frexp(x)
    step = fnp.ldexp(np.asarray(1.0, dtype), e - (info.nmant + 1))
    # below a negative power of two the spacing halves
    step = fnp.where(m == -0.5, step * np.asarray(0.5, dtype), step)
    step = fnp.maximum(step, np.asarray(info.smallest_subnormal, dtype))
    out = fnp.where(x == 0, np.asarray(info.smallest_subnormal, dtype), x + step)
    return fnp.where(x == -np.inf, np.asarray(-info.max, dtype), out)
