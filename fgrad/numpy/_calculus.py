"""Discrete calculus of sampled functions: gradient (finite differences), trapezoid
(integration), ediff1d, and NumPy 2's cumulative_sum/cumulative_prod (with include_initial).

All are linear combinations of slices of the data (with coefficients from the spacings), so
they are differentiable in the data and in the spacings or sample points, under every
transform; NumPy's formulas are followed term by term, so the values agree with NumPy's to
rounding.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import FgradTypeError, FgradValueError
from ..ops import elementwise as ew
from ..ops import shape as sh
from ._cumulative import cumprod
from ._elementwise import add, divide, multiply, subtract
from ._index import cumsum
from ._policy import NUMPY
from ._reductions import sum
from ._shape import concatenate, ravel
from ._util import (
    as_value,
    cast,
    dtype_of,
    int_arg,
    is_traced,
    normalize_axes,
    normalize_axis,
    reject_out,
    shape_of,
)


def _part(x: Any, axis: int, lo: int, hi: int) -> Any:
    """x[..., lo:hi, ...] along `axis` (0 <= lo <= hi <= its length)."""
    shape = shape_of(x)
    start, limit = [0] * len(shape), list(shape)
    start[axis], limit[axis] = lo, hi
    return sh.slice(x, start, limit)


def _along(c: Any, axis: int, nd: int) -> Any:
    """A 1-D array of coefficients shaped to broadcast along `axis` of an nd-array."""
    shape = [1] * nd
    shape[axis] = shape_of(c)[0]
    return sh.reshape(c, tuple(shape))


def _spacing(d: Any, n: int, dt: np.dtype, name: str) -> tuple:
    """(scalar spacing, None) or (None, 1-D differences of the sample points) for one axis of
    length n. Concrete points that are evenly spaced count as a scalar spacing, as in NumPy
    (which then uses the same formulas)."""
    d = as_value(d, f"{name}'s spacing")
    if not shape_of(d):
        return cast(d, dt), None
    if len(shape_of(d)) != 1:
        raise FgradValueError(f"{name}: distances must be either scalars or 1d")
    if shape_of(d)[0] != n:
        raise FgradValueError(f"{name}: when 1d, distances must match the length of the corresponding dimension")
    d = cast(d, dt if dtype_of(d).kind not in "fc" else np.result_type(dtype_of(d), dt))
    diffs = ew.sub(_part(d, 0, 1, n), _part(d, 0, 0, n - 1))
    if not is_traced(diffs):
        arr = diffs  # a NumPy or CuPy array: compared on its own device, one bool comes back
        if bool((arr == arr[0]).all()):
            return cast(arr[0], dt), None
    return None, cast(diffs, dt)


def gradient(f: Any, *varargs: Any, axis: Any = None, edge_order: int = 1, policy=NUMPY) -> Any:
    """The gradient of the sampled function `f` by finite differences, NumPy's gradient:
    second-order central differences inside and one-sided differences of order `edge_order`
    (1 or 2) at the ends. `varargs` are the spacings: none (1), one scalar for every axis, or
    one per axis, each a scalar or the 1-D sample points. One array per axis in `axis` (all
    by default): a tuple when there are several. Integers differentiate in float64."""
    f = as_value(f, "gradient")
    shape = shape_of(f)
    nd = len(shape)
    axes = normalize_axes(axis, nd, "gradient", policy=policy)
    if axis is not None and not isinstance(axis, (tuple, list)):
        axes = (normalize_axis(axis, nd, "gradient", policy=policy),)
    elif axis is not None:
        axes = tuple(normalize_axis(a, nd, "gradient", policy=policy) for a in axis)
    if len(varargs) == 0:
        spacings = [1.0] * len(axes)
    elif len(varargs) == 1 and not shape_of(as_value(varargs[0], "gradient's spacing")):
        spacings = [varargs[0]] * len(axes)
    elif len(varargs) == len(axes):
        spacings = list(varargs)
    else:
        raise FgradTypeError("gradient: invalid number of arguments (give no spacing, one scalar, or one spacing per "
                        f"axis: {len(axes)})")
    edge_order = int_arg(edge_order, "gradient", "edge_order")
    if edge_order > 2 or edge_order < 1:
        raise FgradValueError("gradient: 'edge_order' greater than 2 not supported")
    dt = dtype_of(f) if dtype_of(f).kind in "fc" else policy.float_dtype(dtype_of(f))
    f = cast(f, dt)
    outs = []
    for ax, spacing in zip(axes, spacings):
        n = shape[ax]
        if n < edge_order + 1:
            raise FgradValueError("gradient: Shape of array too small to calculate a numerical gradient, at least "
                             "(edge_order + 1) elements are required.")
        h, dx = _spacing(spacing, n, dt, "gradient")
        outs.append(_gradient_axis(f, ax, n, h, dx, edge_order, nd))
    return tuple(outs) if len(outs) > 1 else outs[0]


def _gradient_axis(f, ax: int, n: int, h, dx, edge_order: int, nd: int) -> Any:
    """NumPy's formulas along one axis: `h` a uniform spacing, else `dx` the n - 1 steps."""
    p = lambda lo, hi: _part(f, ax, lo, hi)  # noqa: E731
    parts = []
    if edge_order == 1:
        first = divide(subtract(p(1, 2), p(0, 1)), h if dx is None else _part(dx, 0, 0, 1))
        last = divide(subtract(p(n - 1, n), p(n - 2, n - 1)), h if dx is None else _part(dx, 0, n - 2, n - 1))
    elif dx is None:
        first = add(add(multiply(divide(-1.5, h), p(0, 1)), multiply(divide(2.0, h), p(1, 2))),
                    multiply(divide(-0.5, h), p(2, 3)))
        last = add(add(multiply(divide(0.5, h), p(n - 3, n - 2)), multiply(divide(-2.0, h), p(n - 2, n - 1))),
                   multiply(divide(1.5, h), p(n - 1, n)))
    else:
        d1, d2 = _part(dx, 0, 0, 1), _part(dx, 0, 1, 2)
        a = divide(ew.neg(add(multiply(2.0, d1), d2)), multiply(d1, add(d1, d2)))
        b = divide(add(d1, d2), multiply(d1, d2))
        c = divide(ew.neg(d1), multiply(d2, add(d1, d2)))
        first = add(add(multiply(a, p(0, 1)), multiply(b, p(1, 2))), multiply(c, p(2, 3)))
        d1, d2 = _part(dx, 0, n - 3, n - 2), _part(dx, 0, n - 2, n - 1)
        a = divide(d2, multiply(d1, add(d1, d2)))
        b = divide(ew.neg(add(d2, d1)), multiply(d1, d2))
        c = divide(add(multiply(2.0, d2), d1), multiply(d2, add(d1, d2)))
        last = add(add(multiply(a, p(n - 3, n - 2)), multiply(b, p(n - 2, n - 1))), multiply(c, p(n - 1, n)))
    parts.append(first)
    if n > 2:
        if dx is None:
            inner = divide(subtract(p(2, n), p(0, n - 2)), multiply(2.0, h))
        else:
            d1, d2 = _along(_part(dx, 0, 0, n - 2), ax, nd), _along(_part(dx, 0, 1, n - 1), ax, nd)
            a = divide(ew.neg(d2), multiply(d1, add(d1, d2)))
            b = divide(subtract(d2, d1), multiply(d1, d2))
            c = divide(d1, multiply(d2, add(d1, d2)))
            inner = add(add(multiply(a, p(0, n - 2)), multiply(b, p(1, n - 1))), multiply(c, p(2, n)))
        parts.append(inner)
    parts.append(last)
    return cast(concatenate(parts, axis=ax), dtype_of(f))


def trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1, *, policy=NUMPY) -> Any:
    """The integral of the samples `y` along `axis` by the trapezoidal rule, at the sample
    points `x` (1-D, or shaped like `y`) or evenly `dx` apart, NumPy's trapezoid."""
    y = as_value(y, "trapezoid")
    nd = len(shape_of(y))
    ax = normalize_axis(axis, nd, "trapezoid", policy=policy)
    n = shape_of(y)[ax]
    if x is not None:
        given, x = x, as_value(x, "trapezoid's x")
        if not shape_of(x):  # (NumPy's diff refuses it: a number is no spacing in the x place)
            raise FgradValueError(f"trapezoid: x must be the sample points, at least 1-D (diff requires input that "
                                  f"is at least one dimensional), got the 0-d value {given!r:.40}; pass a constant "
                                  f"spacing as dx={given!r:.40}")
    if x is None or n < 2:
        # a Python number stays weak (float32 samples integrate in float32, as in NumPy)
        d = (dx if isinstance(dx, (int, float)) else as_value(dx, "trapezoid's dx")) if x is None else 1.0
    else:
        if len(shape_of(x)) == 1:
            d = _along(subtract(_part(x, 0, 1, n), _part(x, 0, 0, n - 1)), ax, nd)
        else:
            xa = normalize_axis(axis, len(shape_of(x)), "trapezoid", policy=policy)
            m = shape_of(x)[xa]
            d = subtract(_part(x, xa, 1, m), _part(x, xa, 0, m - 1))
    if n < 2:  # no interval: the integral is 0 (in the dtype the rule computes in)
        return sum(multiply(multiply(y, 0.0), d), axis=ax)
    mid = divide(multiply(d, add(_part(y, ax, 1, n), _part(y, ax, 0, n - 1))), 2.0)
    return sum(mid, axis=ax)


def ediff1d(ary: Any, to_end: Any = None, to_begin: Any = None) -> Any:
    """The differences of consecutive elements of the flattened `ary`, with `to_begin` and
    `to_end` (flattened) joined at the ends, NumPy's ediff1d (the result has ary's dtype)."""
    a = ravel(as_value(ary, "ediff1d"))
    n = shape_of(a)[0]
    begin, end = (None if v is None else _end(v, a, what) for v, what in ((to_begin, "to_begin"), (to_end, "to_end")))
    parts = [p for p in (begin, ew.sub(_part(a, 0, 1, n), _part(a, 0, 0, n - 1)) if n > 1 else sh.slice(a, [0], [0]),
                         end) if p is not None]
    return concatenate(parts) if len(parts) > 1 else parts[0]


def _end(v: Any, a: Any, what: str) -> Any:
    """to_begin or to_end, flattened, in `a`'s dtype (NumPy refuses a cast across kinds)."""
    v = ravel(as_value(v, f"ediff1d's {what}"))
    if not np.can_cast(dtype_of(v), dtype_of(a), casting="same_kind"):
        raise FgradTypeError(f"ediff1d: dtype of `{what}` must be compatible with input `ary` under the `same_kind` rule.")
    return cast(v, dtype_of(a))


def _cumulative(fn: Any, identity: float, name: str) -> Any:
    def cumulative(x: Any, /, *, axis: Any = None, dtype: Any = None, out: Any = None,
                   include_initial: bool = False, policy=NUMPY) -> Any:
        reject_out(out, name)
        x = as_value(x, name)
        nd = len(shape_of(x))
        if axis is None:
            if nd > 1:
                raise FgradValueError(f"{name}: axis must be specified for multi-dimensional arrays")
            axis = 0
        if nd == 0:
            raise FgradValueError(f"{name}: the input must be at least 1-dimensional")
        ax = normalize_axis(axis, nd, name, policy=policy)
        r = fn(x, axis=ax, dtype=dtype, policy=policy)
        if not include_initial:
            return r
        shape = list(shape_of(r))
        shape[ax] = 1
        first = sh.broadcast_in_dim(ew.const(r, identity), tuple(shape), ())
        return sh.concatenate([first, r], ax)
    cumulative.__name__ = cumulative.__qualname__ = name
    return cumulative


cumulative_sum = _cumulative(cumsum, 0, "cumulative_sum")
cumulative_sum.__doc__ = """Cumulative sum along `axis` (NumPy 2's cumulative_sum: axis may be omitted
for 1-D arrays only; `include_initial` puts the 0 in front)."""
cumulative_prod = _cumulative(cumprod, 1, "cumulative_prod")
cumulative_prod.__doc__ = """Cumulative product along `axis` (NumPy 2's cumulative_prod: axis may be
omitted for 1-D arrays only; `include_initial` puts the 1 in front)."""

__all__ = ["gradient", "trapezoid", "ediff1d", "cumulative_sum", "cumulative_prod"]
