"""NumPy's functional programming helpers: apply_along_axis, apply_over_axes and piecewise.

They call the user's functions on fgrad values, so whatever those functions compute with
fgrad.numpy differentiates under every transform. apply_along_axis calls the function once
per 1-d slice (NumPy's loop; under jit it is unrolled into the trace, under vmap the slices
are batched). piecewise calls each function on the selected elements, as NumPy does, when
the conditions are concrete (eagerly, and under grad and jvp); under jit or vmap the
conditions are traced, so, as jax.numpy's piecewise, each function is applied to the whole
array and the results are chosen element-wise (the same values for element-wise functions).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..core.errors import ConcretizationError, FgradValueError, ShapeError
from ..ops import elementwise as ew
from ..ops import shape as sh
from ._index import at_set, getitem
from ._shape import expand_dims, moveaxis, stack
from ._util import as_value, broadcast_to, cast, dtype_of, is_array, is_traced, normalize_axis, shape_of


def apply_along_axis(func1d: Callable, axis: int, arr: Any, *args: Any, **kwargs: Any) -> Any:
    """func1d applied to every 1-d slice of `arr` along `axis`, NumPy's apply_along_axis: the
    results (all of one shape) replace that axis, in the dtype of the first."""
    a = as_value(arr, "apply_along_axis")
    nd = len(shape_of(a))
    ax = normalize_axis(axis, nd, "apply_along_axis")
    moved = moveaxis(a, ax, -1)
    batch = shape_of(moved)[:-1]
    if 0 in batch:
        raise FgradValueError(f"apply_along_axis: Cannot apply_along_axis when any iteration dimensions are 0 "
                              f"(shape {shape_of(a)}, axis {ax})")
    results = []
    for index in np.ndindex(*batch):
        res = as_value(func1d(getitem(moved, index), *args, **kwargs), "apply_along_axis's func1d result")
        if results and shape_of(res) != shape_of(results[0]):
            raise ShapeError(f"apply_along_axis: func1d returned shape {shape_of(res)} for slice {index}, but "
                             f"{shape_of(results[0])} for the first slice; every call must return one shape")
        results.append(cast(res, dtype_of(results[0])) if results else res)
    rshape = shape_of(results[0])
    out = sh.reshape(stack(results), batch + rshape)
    # NumPy's layout: the result's axes stand where `axis` was
    nb, nr = len(batch), len(rshape)
    perm = tuple(range(ax)) + tuple(range(nb, nb + nr)) + tuple(range(ax, nb))
    return sh.transpose(out, perm) if perm != tuple(range(nb + nr)) else out


def apply_over_axes(func: Callable, a: Any, axes: Any) -> Any:
    """func(a, axis) applied for each axis in `axes` in turn, each result (with the reduced
    axis put back as length 1 when func drops it) the input of the next: NumPy's
    apply_over_axes."""
    val = as_value(a, "apply_over_axes")
    n = len(shape_of(val))
    for axis in np.atleast_1d(np.asarray(axes)).tolist():
        axis = int(axis)
        if axis < 0:
            axis += n
        res = as_value(func(val, axis), "apply_over_axes's func result")
        if len(shape_of(res)) != len(shape_of(val)):
            res = expand_dims(res, axis)
            if len(shape_of(res)) != len(shape_of(val)):
                raise FgradValueError(f"apply_over_axes: function is not returning an array of the correct shape "
                                      f"(got {shape_of(res)} from an input of shape {shape_of(val)})")
        val = res
    return val


def _conditions(condlist: Any, x: Any) -> list:
    """piecewise's conditions as a list, read as NumPy reads them: a scalar or one array
    (of x's rank) is one condition, a list of arrays (or an array of one more dimension) is
    one per function."""
    xnd = len(shape_of(x))
    if isinstance(condlist, (list, tuple)):
        if xnd and condlist and not all(isinstance(c, (list, tuple)) or is_array(c) for c in condlist):
            return [as_value(list(condlist), "piecewise's condition")]
        return [as_value(c, "piecewise's condition") for c in condlist]
    c = as_value(condlist, "piecewise's condition")
    cnd = len(shape_of(c))
    if cnd == 0 or (xnd and cnd == xnd):
        return [c]
    return [getitem(c, i) for i in range(shape_of(c)[0])]


def _concrete_mask(c: Any) -> np.ndarray | None:
    """The concrete boolean mask behind `c`, or None when `c` is traced without a value."""
    if not is_traced(c):
        return np.asarray(c).astype(bool)
    try:
        return np.asarray(c._concrete("piecewise's condition")).astype(bool)
    except ConcretizationError:
        return None


def piecewise(x: Any, condlist: Any, funclist: list, *args: Any, **kw: Any) -> Any:
    """NumPy's piecewise: where condlist[i] holds, funclist[i](x) (a function, called with
    `args` and `kw`, or a constant); one extra function is the default where no condition
    holds; elsewhere 0. A later condition overrides an earlier one, and the result has x's
    dtype. With concrete conditions each function gets only its elements (NumPy); with
    traced ones (jit, vmap) it gets all of x and the results are selected (jax.numpy)."""
    x = as_value(x, "piecewise")
    shape, dt = shape_of(x), dtype_of(x)
    conds = _conditions(condlist, x)
    n, n2 = len(conds), len(funclist)
    conds = [broadcast_to(ew.ne(c, ew.const(c, 0)) if dtype_of(c).kind != "b" else c, shape) for c in conds]
    if n == n2 - 1:   # the "otherwise" condition
        none = conds[0] if conds else None
        for c in conds[1:]:
            none = ew.logical_or(none, c)
        conds.append(ew.logical_not(none) if none is not None else np.ones(shape, bool))
    elif n != n2:
        raise FgradValueError(f"piecewise: with {n} condition(s), either {n} or {n + 1} functions are expected, "
                              f"got {n2}")
    masks = [_concrete_mask(c) for c in conds]
    y = np.zeros(shape, dt)
    if all(m is not None for m in masks):
        for mask, func in zip(masks, funclist):
            if not mask.any():
                continue
            if not callable(func):
                y = at_set(y, mask, func)
                continue
            vals = getitem(x, mask)
            y = at_set(y, mask, cast(as_value(func(vals, *args, **kw), "piecewise's function result"), dt))
        return y
    for cond, func in zip(conds, funclist):
        val = func(x, *args, **kw) if callable(func) else func
        val = broadcast_to(cast(as_value(val, "piecewise's function result"), dt), shape)
        y = ew.select(cond, val, broadcast_to(y, shape))
    return y


__all__ = ["apply_along_axis", "apply_over_axes", "piecewise"]
