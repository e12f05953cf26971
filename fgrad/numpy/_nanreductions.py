"""NaN-ignoring reductions (nansum, nanprod, nanmean, nanvar, nanstd, nanmax, nanmin,
nanargmax, nanargmin) and cumulative operations (nancumsum, nancumprod), NumPy's semantics and
signatures (nanmedian and nanquantile are with the order statistics, _statistics.py).

Each replaces the NaNs by the identity of its reduction (0 for sums, 1 for products, -inf for
maxima) and reduces, counting only the other entries where the count matters, so the
derivative of a NaN entry is 0 and the rest is the plain reduction's (ties of nanmax split
evenly; nanstd's derivative at zero spread is 0, as std's). Integer and boolean arrays hold
no NaN: they reduce as the plain functions. Slices of NaNs only give NumPy's results: 0 for
nansum, 1 for nanprod, NaN for the means, variances and extrema; nanargmax/nanargmin raise
ValueError for them on concrete values, as NumPy does, and give -1 under jit and vmap (as
jax.numpy), where raising is impossible.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import ConcretizationError, FgradValueError
from ..ops import complex as cx
from ..ops import elementwise as ew
from ..ops import reduce as red
from ._cumulative import cumprod
from ._index import cumsum
from ._policy import NUMPY
from ._reductions import _sqrt_flat_at_zero, argmax, argmin, max, min, prod, sum
from ._util import (
    as_value,
    broadcast_args,
    cast,
    dtype_arg,
    dtype_of,
    normalize_axes,
    reject_out,
    shape_of,
)


def _with_nans_as(a: Any, value: float, name: str) -> Any:
    """`a` with its NaNs replaced by `value` (a float array; other dtypes unchanged)."""
    a = as_value(a, name)
    if dtype_of(a).kind not in "fc":
        return a
    return ew.select(ew.isnan(a), ew.const(a, value), a)


def _valid(a: Any) -> Any:
    """Where `a` is not NaN (float arrays; None for others: everything counts)."""
    return ew.logical_not(ew.isnan(a)) if dtype_of(a).kind in "fc" else None


def _and_where(valid: Any, where: Any, shape: tuple) -> Any:
    """The entries that take part: not NaN and selected by NumPy's `where` mask."""
    if where is None or where is True:
        return valid
    w = as_value(where, "where")
    if valid is None:
        return w
    return ew.logical_and(*broadcast_args("where", valid, w))


def nansum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
           initial: Any = None, where: Any = None, *, policy=NUMPY) -> Any:
    """Sum over `axis` treating NaNs as zero (a slice of NaNs sums to 0), NumPy's signature."""
    reject_out(out, "nansum")
    return sum(_with_nans_as(a, 0.0, "nansum"), axis, dtype, None, keepdims, initial, where, policy=policy)


def nanprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
            initial: Any = None, where: Any = None, *, policy=NUMPY) -> Any:
    """Product over `axis` treating NaNs as one (a slice of NaNs gives 1), NumPy's signature."""
    reject_out(out, "nanprod")
    return prod(_with_nans_as(a, 1.0, "nanprod"), axis, dtype, None, keepdims, initial, where, policy=policy)


def _float_input(a: Any, dtype: Any, name: str, policy) -> Any:
    a = as_value(a, name)
    return cast(a, dtype_arg(dtype, name) if dtype is not None else policy.reduction_float_dtype(name, dtype_of(a)))


def _count(mask: Any, shape: tuple, axes: tuple, keepdims: bool, like: Any) -> Any:
    """How many entries each slice reduces (in `like`'s dtype): the sum of `mask`, or the
    slice size without one."""
    if mask is None:
        n = 1
        for i in axes:
            n *= shape[i]
        return ew.const(like, float(n))
    return sum(cast(mask, dtype_of(like)), axis=axes, keepdims=keepdims)


def nanmean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False, *,
            where: Any = None, policy=NUMPY) -> Any:
    """Mean over `axis` of the entries that are not NaN (NaN for a slice of NaNs), NumPy's
    signature; integers average as float64."""
    reject_out(out, "nanmean")
    a = _float_input(a, dtype, "nanmean", policy)
    shape = shape_of(a)
    axes = normalize_axes(axis, len(shape), "nanmean", policy=policy)
    mask = _and_where(_valid(a), where, shape)
    s = sum(_with_nans_as(a, 0.0, "nanmean"), axis=axes, keepdims=keepdims, where=mask)
    return ew.div(*broadcast_args("nanmean", s, _count(mask, shape, axes, keepdims, s)))


def nanvar(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0, keepdims: bool = False, *,
           where: Any = None, mean: Any = None, correction: Any = None, policy=NUMPY) -> Any:
    """Variance over `axis` of the entries that are not NaN: their mean squared deviation from
    their mean, times n / (n - ddof) for n of them (NaN where n <= ddof), NumPy's signature."""
    reject_out(out, "nanvar")
    if correction is not None:
        if ddof != 0:
            raise FgradValueError("nanvar: ddof and correction can't be provided simultaneously")
        ddof = correction
    a = _float_input(a, dtype, "nanvar", policy)
    shape = shape_of(a)
    axes = normalize_axes(axis, len(shape), "nanvar", policy=policy)
    mask = _and_where(_valid(a), where, shape)
    m = nanmean(a, axis=axes, keepdims=True, where=where, policy=policy) if mean is None else \
        cast(as_value(mean, "nanvar's mean"), dtype_of(a))
    # NaN entries become 0 before the subtraction (and the mask leaves them out of the sum), so
    # an inf entry still gives inf - inf = NaN, as in NumPy
    centered = ew.sub(*broadcast_args("nanvar", _with_nans_as(a, 0.0, "nanvar"), m))
    s = sum(cx.abs_squared(centered), axis=axes, keepdims=keepdims, where=mask)  # (real for complex)
    dof = ew.sub(*broadcast_args("nanvar", _count(mask, shape, axes, keepdims, s), ew.const(s, float(ddof))))
    # NumPy: no degrees of freedom left gives NaN (and a warning), not inf
    dof = ew.select(ew.gt(dof, ew.const(dof, 0.0)), dof, ew.const(dof, np.nan))
    return ew.div(*broadcast_args("nanvar", s, dof))


def nanstd(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0, keepdims: bool = False, *,
           where: Any = None, mean: Any = None, correction: Any = None, policy=NUMPY) -> Any:
    """Standard deviation, sqrt(nanvar(...)), NumPy's signature. Its derivative where the
    non-NaN entries are all equal (zero spread, a kink) is 0, as std's."""
    reject_out(out, "nanstd")
    return _sqrt_flat_at_zero(nanvar(a, axis, dtype, None, ddof, keepdims, where=where, mean=mean,
                                     correction=correction, policy=policy))


def _nan_extreme(reduce: Any, fill: float, name: str) -> Any:
    def fn(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, initial: Any = None,
           where: Any = None, *, policy=NUMPY) -> Any:
        reject_out(out, name)
        a = as_value(a, name)
        if dtype_of(a).kind not in "fc":
            return reduce(a, axis, None, keepdims, initial, where, policy=policy)
        shape = shape_of(a)
        axes = normalize_axes(axis, len(shape), name, policy=policy)
        valid = _valid(a)
        r = reduce(_with_nans_as(a, fill, name), axes, None, keepdims, initial, where, policy=policy)
        if initial is not None:
            return r  # initial takes part in every slice, so none is empty of numbers
        # a slice of NaNs only (or masked out only) gives NaN, as NumPy
        hits = sum(cast(_and_where(valid, where, shape), np.dtype(np.int64)), axis=axes, keepdims=keepdims)
        return ew.select(ew.gt(hits, ew.const(hits, 0)), r, ew.const(r, np.nan))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"The {name[3:]}imum over `axis` ignoring NaNs (NaN for a slice of NaNs), NumPy's signature; "
                  "`initial` takes part in the comparison, `where` (which needs `initial`) masks entries out. "
                  "Ties share the derivative evenly; NaN entries get none.")
    return fn


nanmax = _nan_extreme(max, -np.inf, "nanmax")
nanmin = _nan_extreme(min, np.inf, "nanmin")


def _nan_arg(arg: Any, fill: float, name: str) -> Any:
    def fn(a: Any, axis: Any = None, out: Any = None, *, keepdims: bool = False, policy=NUMPY) -> Any:
        reject_out(out, name)
        a = as_value(a, name)
        if dtype_of(a).kind not in "fc":
            return arg(a, axis, keepdims=keepdims, policy=policy)
        valid = _valid(a)
        i = arg(_with_nans_as(a, fill, name), axis, keepdims=keepdims, policy=policy)
        # a slice of NaNs only has no index
        hits = sum(cast(valid, np.dtype(np.int64)), axis=axis, keepdims=keepdims)
        empty = ew.eq(hits, ew.const(hits, 0))
        try:
            all_nan = bool(red.reduce_max(cast(empty, np.dtype(np.int64)), tuple(range(len(shape_of(empty))))))
        except ConcretizationError:
            return ew.select(empty, ew.const(i, -1), i)  # jit/vmap: JAX's -1
        if all_nan:
            raise FgradValueError(f"{name}: All-NaN slice encountered")
        return i
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"Index of the {name[6:]}imum along `axis` (of the flattened array by default) "
                  "ignoring NaNs. A slice of NaNs raises ValueError (as NumPy) on concrete values; under "
                  "jit and vmap its index is -1 (as jax.numpy).")
    return fn


nanargmax = _nan_arg(argmax, -np.inf, "nanargmax")
nanargmin = _nan_arg(argmin, np.inf, "nanargmin")


def nancumsum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, *, policy=NUMPY) -> Any:
    """Cumulative sum along `axis` (of the flattened array by default) treating NaNs as
    zero, NumPy's signature."""
    reject_out(out, "nancumsum")
    return cumsum(_with_nans_as(a, 0.0, "nancumsum"), axis, dtype, policy=policy)


def nancumprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, *, policy=NUMPY) -> Any:
    """Cumulative product along `axis` (of the flattened array by default) treating NaNs as
    one, NumPy's signature."""
    reject_out(out, "nancumprod")
    return cumprod(_with_nans_as(a, 1.0, "nancumprod"), axis, dtype, policy=policy)


__all__ = ["nansum", "nanprod", "nanmean", "nanvar", "nanstd", "nanmax", "nanmin", "nanargmax", "nanargmin",
           "nancumsum", "nancumprod"]
