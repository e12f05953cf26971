"""Two summaries built on the reductions: the weighted average and the peak-to-peak range,
NumPy's semantics and signatures."""
from __future__ import annotations

from typing import Any

from ..core.errors import FgradTypeError, FgradValueError
from ..ops import elementwise as ew
from ..ops import shape as sh
from ._elementwise import subtract
from ._policy import NUMPY
from ._reductions import max, mean, min, sum
from ._util import (
    as_value,
    broadcast_to,
    cast,
    normalize_axes,
    reject_out,
    result_dtype,
    shape_of,
)


def average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False, *, keepdims: bool = False,
            policy=NUMPY) -> Any:
    """The mean of `a` over `axis`, weighted by `weights` (shaped like `a`, or 1-D along a
    single `axis`): sum(a * w) / sum(w); with `returned`, also sum(w) (broadcast like the
    result). Differentiable in `a` and in `weights`."""
    a = as_value(a, "average")
    shape = shape_of(a)
    if weights is None:
        avg = mean(a, axis=axis, keepdims=keepdims, policy=policy)
        if not returned:
            return avg
        axes = normalize_axes(axis, len(shape), "average", policy=policy)
        n = 1
        for i in axes:
            n *= shape[i]
        return avg, broadcast_to(ew.const(avg, float(n)), shape_of(avg))
    w = as_value(weights, "average's weights")
    dt = policy.float_dtype(result_dtype(a, w, policy=policy))
    a, w = cast(a, dt), cast(w, dt)
    if shape_of(w) != shape:
        if axis is None:
            raise FgradTypeError("average: Axis must be specified when shapes of a and weights differ.")
        if len(shape_of(w)) != 1:
            raise FgradTypeError("average: 1D weights expected when shapes of a and weights differ.")
        axes = normalize_axes(axis, len(shape), "average", policy=policy)
        if len(axes) != 1:
            raise FgradTypeError("average: 1D weights expected when shapes of a and weights differ; give one axis")
        if shape_of(w)[0] != shape[axes[0]]:
            raise FgradValueError("average: Length of weights not compatible with specified axis.")
        w = broadcast_to(sh.reshape(w, tuple(shape[i] if i == axes[0] else 1 for i in range(len(shape)))), shape)
    scl = sum(w, axis=axis, keepdims=keepdims, policy=policy)
    avg = ew.div(sum(ew.mul(a, w), axis=axis, keepdims=keepdims, policy=policy), scl)
    return (avg, scl) if returned else avg


def ptp(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, *, policy=NUMPY) -> Any:
    """Peak to peak: max - min over `axis` (all axes by default). Ties at either extreme share
    its derivative evenly."""
    reject_out(out, "ptp")
    a = as_value(a, "ptp")
    # subtract refuses booleans, as NumPy's ptp does
    return subtract(max(a, axis=axis, keepdims=keepdims, policy=policy),
                    min(a, axis=axis, keepdims=keepdims, policy=policy), policy=policy)


__all__ = ["average", "ptp"]
