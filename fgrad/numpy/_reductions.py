"""Reductions of fgrad.numpy, with NumPy's signatures (axis=, dtype=, out=, keepdims=,
initial=, where=), which the ndarray-style methods of traced values share: numpy.sum(x) on a
traced x calls x.sum(axis=None, dtype=None, out=None). out= must be None (fgrad values are
immutable); where= is a boolean mask broadcast against the array. Each takes `policy=` (see
_policy.py): the accumulation dtype, the float dtype of mean/var/std and the error wording."""
from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from ..core.errors import FgradTypeError, FgradValueError
from ..ops import complex as cx
from ..ops import elementwise as ew
from ..ops import reduce as red
from ..ops.shape import reshape
from ._policy import NUMPY
from ._util import (  # noqa: F401
    as_value,
    fresh,
    aval_of,
    broadcast_args,
    broadcast_to,
    cast,
    dtype_arg,
    dtype_of,
    normalize_axes,
    reject_out,
    shape_of,
)


def _keep(x, shape, axes, keepdims):
    if not keepdims:
        return x
    return reshape(x, tuple(1 if i in axes else d for i, d in enumerate(shape)))


def _mask(where: Any, shape: tuple, name: str) -> Any:
    """NumPy's where= as a boolean array of the reduced array's shape; None when it selects
    everything (None or True, NumPy's default)."""
    if where is None or where is True:
        return None
    w = as_value(where, f"{name}'s where")
    if dtype_of(w).kind != "b":
        raise FgradTypeError(f"{name}: where= must be a boolean mask, got dtype {dtype_of(w)}; compare "
                        "first (e.g. where=x > 0)", doc="where-mask-dtype")
    return broadcast_to(w, shape)


def _initial(initial: Any, like: Any, name: str) -> Any:
    """NumPy's initial= as a 0-d value of `like`'s dtype."""
    v = as_value(initial, f"{name}'s initial")
    if shape_of(v) != ():
        raise FgradValueError(f"{name}: initial must be a scalar, got an array of shape {shape_of(v)}", doc="initial-not-scalar")
    return cast(v, dtype_of(like))


def _accumulation(name: str, reduce_fn: Any, identity: int, combine: Any, doc: str) -> Any:
    """sum and prod: NumPy's signature; booleans and small integers accumulate in the
    policy's dtype (NumPy: int64, uint64 for unsigned); `where` masks entries out (as the
    identity), `initial` is combined with the result."""
    def fn(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
           initial: Any = None, where: Any = None, *, policy=NUMPY) -> Any:
        reject_out(out, name)
        a = x = as_value(a, name)
        a = cast(a, dtype_arg(dtype, name) if dtype is not None else policy.accumulate_dtype(dtype_of(a)))
        shape = shape_of(a)
        axes = normalize_axes(axis, len(shape), name, policy=policy)
        mask = _mask(where, shape, name)
        if mask is not None:
            a = ew.select(mask, a, ew.const(a, identity))
        r = _keep(reduce_fn(a, axes), shape, axes, keepdims)
        # (axis=(): a new array all the same)
        return fresh(r, x) if initial is None else combine(r, _initial(initial, r, name))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


sum = _accumulation("sum", red.reduce_sum, 0, ew.add, """Sum over `axis` (all axes by default), NumPy's
signature. Booleans and small integers are summed as int64 (uint64 for unsigned), as in NumPy;
`where` masks entries out, `initial` is added to the result.""")
prod = _accumulation("prod", red.reduce_prod, 1, ew.mul, """Product over `axis` (all axes by default),
NumPy's signature (`where` masks entries out, `initial` multiplies the result); its gradient is
exact where entries are 0.""")


def _count(mask: Any, shape: tuple, axes: tuple, keepdims: bool, dtype: Any) -> Any:
    """How many entries each reduction sees: a Python number without a mask, else the sum of
    the mask (in `dtype`, so that dividing by it keeps the result's dtype, as NumPy does)."""
    if mask is None:
        n = 1
        for i in axes:
            n *= shape[i]
        return n
    return sum(cast(mask, dtype), axis=axes, keepdims=keepdims)


def mean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False, *,
         where: Any = None, policy=NUMPY) -> Any:
    """Arithmetic mean over `axis` (integers average as float64), NumPy's signature."""
    reject_out(out, "mean")
    a = as_value(a, "mean")
    a = cast(a, dtype_arg(dtype, "mean") if dtype is not None else policy.reduction_float_dtype("mean", dtype_of(a)))
    shape = shape_of(a)
    axes = normalize_axes(axis, len(shape), "mean", policy=policy)
    mask = _mask(where, shape, "mean")
    s = sum(a, axis=axes, keepdims=keepdims, where=mask)
    n = _count(mask, shape, axes, keepdims, dtype_of(s))
    return ew.div(s, ew.const(s, float(n)) if mask is None else n)


_mean = mean  # var's `mean=` argument shadows the function inside var


def var(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0, keepdims: bool = False, *,
        where: Any = None, mean: Any = None, correction: Any = None, policy=NUMPY) -> Any:
    """Variance over `axis`: mean((a - a.mean()) ** 2) * n / (n - ddof), NumPy's signature
    (`mean=` a precomputed mean with keepdims=True, `correction=` another name for ddof).
    Smooth everywhere: its gradient at zero spread is 0."""
    reject_out(out, "var")
    if correction is not None:
        if ddof != 0:
            raise FgradValueError("var: ddof and correction can't be provided simultaneously", doc="ddof-and-correction")
        ddof = correction
    a = as_value(a, "var")
    a = cast(a, dtype_arg(dtype, "var") if dtype is not None else policy.reduction_float_dtype("var", dtype_of(a)))
    shape = shape_of(a)
    axes = normalize_axes(axis, len(shape), "var", policy=policy)
    mask = _mask(where, shape, "var")
    m = _mean(a, axis=axes, keepdims=True, where=mask) if mean is None else \
        cast(as_value(mean, "var's mean"), dtype_of(a))
    centered = ew.sub(*broadcast_args("var", a, m))
    # |a - mean|^2: the variance of complex values is real, as NumPy's
    s = sum(cx.abs_squared(centered), axis=axes, keepdims=keepdims, where=mask)
    n = _count(mask, shape, axes, keepdims, dtype_of(s))
    if mask is None:
        # NumPy divides by max(n - ddof, 0): no spread left to measure gives inf or nan
        return ew.div(s, ew.const(s, float(builtins.max(n - ddof, 0))))
    return ew.div(s, ew.maximum(ew.sub(n, ew.const(n, float(ddof))), ew.const(n, 0.0)))


def _sqrt_flat_at_zero(v: Any) -> Any:
    """sqrt whose derivative at 0 is 0 rather than inf: the norm'(0) = 0 convention (std at
    zero spread). The root is taken of a guarded value and the result selected (the double
    where), so no inf * 0 = NaN reaches the gradient, at any order."""
    zero = ew.eq(v, ew.const(v, 0.0))
    return ew.select(zero, ew.const(v, 0.0), ew.sqrt(ew.select(zero, ew.const(v, 1.0), v)))


def std(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0, keepdims: bool = False, *,
        where: Any = None, mean: Any = None, correction: Any = None, policy=NUMPY) -> Any:
    """Standard deviation, sqrt(var(...)), NumPy's signature. Its gradient where every entry
    is equal (zero spread, a kink) is 0, by the norm'(0) = 0 convention."""
    reject_out(out, "std")
    dtype = dtype_arg(dtype, "std")
    return _sqrt_flat_at_zero(var(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, where=where,
                                  mean=mean, correction=correction, policy=policy))


def _extreme(prim_fn: Any, pick: Any, name: str, ufunc: str) -> Any:
    def fn(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, initial: Any = None,
           where: Any = None, *, policy=NUMPY) -> Any:
        reject_out(out, name)
        a = as_value(a, name)
        shape = shape_of(a)
        axes = normalize_axes(axis, len(shape), name, policy=policy)
        mask = _mask(where, shape, name)
        empty = builtins.any(shape[i] == 0 for i in axes)
        if initial is None:
            if mask is not None:
                raise FgradValueError(f"{name}: reduction operation '{ufunc}' does not have an identity, so "
                                 "to use a where mask one has to specify 'initial'", doc="where-needs-initial")
            if empty:
                raise policy.empty_reduction_error(name, shape, axis)
            return fresh(_keep(prim_fn(a, axes), shape, axes, keepdims), a)
        init = _initial(initial, a, name)
        if empty:  # NumPy returns initial for every (empty) slice
            reduced = tuple(d for i, d in enumerate(shape) if i not in axes)
            return _keep(broadcast_to(init, reduced), shape, axes, keepdims)
        if mask is not None:
            a = ew.select(mask, a, init)
        return _keep(pick(prim_fn(a, axes), init), shape, axes, keepdims)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"The {ufunc} over `axis` (all axes by default), NumPy's signature; `initial` "
                  "takes part in the comparison (and is the result of an empty reduction), "
                  "`where` (which needs `initial`) masks entries out. Ties share the gradient.")
    return fn


max = amax = _extreme(red.reduce_max, ew.maximum, "max", "maximum")
min = amin = _extreme(red.reduce_min, ew.minimum, "min", "minimum")


def _logical(name: str) -> Any:
    def fn(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, *, where: Any = None,
           policy=NUMPY) -> Any:
        reject_out(out, name)
        b = cast(as_value(a, name), np.dtype(bool))  # nonzero (and NaN) is True, as in NumPy
        shape = shape_of(b)
        axes = normalize_axes(axis, len(shape), name, policy=policy)
        mask = _mask(where, shape, name)
        # count the entries that decide the answer: a True for any, a False for all; an empty
        # reduction counts none (any() is False, all() is True, as in NumPy)
        hits = b if name == "any" else ew.logical_not(b)
        if mask is not None:
            hits = ew.logical_and(hits, mask)
        count = red.reduce_sum(cast(hits, np.dtype(np.int64)), axes)
        found = ew.gt(count, ew.const(count, 0))
        return _keep(found if name == "any" else ew.logical_not(found), shape, axes, keepdims)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"Whether {name} entries along `axis` are nonzero (all axes by default), NumPy's "
                  "signature: a boolean result with no derivative.")
    return fn


any = _logical("any")
all = _logical("all")


def _arg(prim_fn, name):
    def fn(a: Any, axis: Any = None, out: Any = None, *, keepdims: bool = False, policy=NUMPY) -> Any:
        reject_out(out, name)
        a = as_value(a, name)
        shape = shape_of(a)
        if axis is None:
            if aval_of(a).size == 0:
                raise policy.empty_reduction_error(name, shape, None)
            out = prim_fn(reshape(a, (aval_of(a).size,)), 0)
            return reshape(out, (1,) * len(shape)) if keepdims else out
        (ax,) = normalize_axes(axis, len(shape), name, policy=policy)
        if shape[ax] == 0:
            raise policy.empty_reduction_error(name, shape, ax)
        out = prim_fn(a, ax)
        return reshape(out, tuple(1 if i == ax else d for i, d in enumerate(shape))) if keepdims else out
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Index of the {name[3:]}imum along `axis` (of the flattened array by default)."
    return fn


argmax = _arg(red.argmax, "argmax")
argmin = _arg(red.argmin, "argmin")
