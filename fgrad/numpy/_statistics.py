"""Order statistics: quantile, median and their NaN-ignoring forms, NumPy's semantics.

Each sorts along the reduced axes (the argsort primitive) and gathers the order statistics
around the quantile's position, so the gradient goes to the elements the result is made of
(split by the interpolation weights), under every transform. With concrete `q` the positions
are static; the NaN-ignoring forms count the non-NaN entries of each slice, so their
positions are computed (and gathered) as arrays, which also stages under jit and vmap.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import FgradValueError
from ..ops import elementwise as ew
from ..ops import reduce as red
from ..ops import shape as sh
from ._index import take_along_axis
from ._policy import NUMPY
from ._sorting import sort
from ._util import (
    as_value,
    broadcast_to,
    cast,
    dtype_of,
    is_traced,
    normalize_axes,
    reject_out,
    result_dtype,
    shape_of,
)

_METHODS = ("linear", "lower", "higher", "midpoint", "nearest")


def _gathered_last(a, axes):
    """`a` with `axes` merged into one last axis (the others keep their order)."""
    shape = shape_of(a)
    rest = [d for d in range(len(shape)) if d not in axes]
    a = sh.transpose(a, tuple(rest + list(axes)))
    n = int(np.prod([shape[d] for d in axes], dtype=np.int64))
    return sh.reshape(a, tuple(shape[d] for d in rest) + (n,)), n


def _result_dtype(a, q, method: str, policy):
    """NumPy's: the float dtype of a and q for interpolating methods; a's own dtype for
    lower/higher/nearest (which pick an element)."""
    if method in ("lower", "higher", "nearest"):
        return dtype_of(a)
    return policy.float_dtype(result_dtype(a, q, policy=policy))


def _quantile(a, q, axis, method, keepdims, name: str, ignore_nan: bool, policy):
    a = as_value(a, name)
    if method not in _METHODS:
        raise FgradValueError(f"{name}: method={method!r} is not supported; use one of {_METHODS}")
    qv = q if isinstance(q, float) else as_value(q, f"{name}'s q")
    if not is_traced(qv):
        qa = np.asarray(qv, np.float64)
        if qa.size and not (np.all(qa >= 0) and np.all(qa <= 1)):
            raise FgradValueError(f"{name}: Quantiles must be in the range [0, 1] (got {qa.ravel()[:6]})")
    dt = _result_dtype(a, qv, method, policy)
    shape = shape_of(a)
    axes = normalize_axes(axis, len(shape), name, policy=policy)
    x, n = _gathered_last(a, axes)
    if n == 0:
        raise FgradValueError(f"{name}: cannot take a quantile of an empty slice (axes {axes} of shape {shape})")
    batch = shape_of(x)[:-1]
    q_shape = shape_of(qv)
    k = int(np.prod(q_shape, dtype=np.int64))
    x = sort(x, axis=-1, policy=policy)  # NaNs last
    full = batch + (k,)
    i64, f64 = np.dtype(np.int64), np.dtype(np.float64)
    qf = sh.reshape(cast(qv, f64), (1,) * len(batch) + (k,))
    if ignore_nan and dtype_of(a).kind in "fc":
        valid = red.reduce_sum(cast(ew.logical_not(ew.isnan(x)), i64), (len(batch),))
        last = sh.reshape(ew.sub(valid, np.asarray(1, i64)), batch + (1,))
    else:
        last = np.full((1,) * len(full), n - 1, i64)
    # the virtual index of each quantile in each slice, and the order statistics around it
    pos = broadcast_to(ew.mul(broadcast_to(qf, full), broadcast_to(cast(last, f64), full)), full)
    top = broadcast_to(ew.maximum(last, np.zeros((), i64)), full)
    lo = ew.round(pos) if method == "nearest" else ew.floor(pos)  # NumPy rounds half to even
    lo_i = ew.minimum(ew.maximum(cast(lo, i64), np.zeros((), i64)), top)
    v_lo = take_along_axis(x, lo_i, -1)
    if method in ("lower", "nearest"):
        out = v_lo
    else:
        hi_i = ew.minimum(cast(ew.ceil(pos), i64), top)
        v_hi = take_along_axis(x, ew.maximum(hi_i, lo_i), -1)
        if method == "higher":
            out = v_hi
        else:
            g = cast(ew.sub(pos, lo), dt) if method == "linear" else np.full(full, 0.5, dt)
            # the difference in the data's dtype, as NumPy's lerp takes it
            step = cast(ew.sub(v_hi, v_lo), dt)
            v_lo, v_hi = cast(v_lo, dt), cast(v_hi, dt)
            # NumPy's (and PyTorch's) lerp: from the nearer end, exact at g = 0 and g = 1
            out = ew.select(ew.ge(g, ew.const(g, 0.5)),
                            ew.sub(v_hi, ew.mul(step, ew.sub(ew.const(g, 1.0), g))),
                            ew.add(v_lo, ew.mul(step, g)))
    out = cast(out, dt)
    if not ignore_nan and dtype_of(a).kind in "fc":  # a NaN anywhere in a slice makes its quantile NaN
        has_nan = red.reduce_max(cast(ew.isnan(x), i64), (len(batch),))
        has_nan = broadcast_to(sh.reshape(ew.gt(has_nan, np.zeros((), i64)), batch + (1,)), full)
        out = ew.select(has_nan, ew.const(out, np.nan), out)
    # batch + (k,) -> q's shape + batch (+ the reduced axes kept as 1)
    out = sh.reshape(out, batch + q_shape)
    nb = len(batch)
    out = sh.transpose(out, tuple(range(nb, nb + len(q_shape))) + tuple(range(nb)))
    if keepdims:
        out = sh.reshape(out, q_shape + tuple(1 if d in axes else s for d, s in enumerate(shape)))
    return out


def quantile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
             method: str = "linear", keepdims: bool = False, *, interpolation: Any = None,
             policy=NUMPY) -> Any:
    """The q-th quantiles (q in [0, 1], a number or an array) of `a` over `axis` (all axes by
    default), NumPy's semantics for the methods 'linear' (the default), 'lower', 'higher',
    'midpoint' and 'nearest'; a slice holding NaN gives NaN. The result has q's shape in
    front of the reduced shape."""
    reject_out(out, "quantile")
    return _quantile(a, q, axis, interpolation or method, keepdims, "quantile", False, policy)


def nanquantile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
                method: str = "linear", keepdims: bool = False, *, interpolation: Any = None,
                policy=NUMPY) -> Any:
    """quantile ignoring NaNs (an all-NaN slice gives NaN)."""
    reject_out(out, "nanquantile")
    return _quantile(a, q, axis, interpolation or method, keepdims, "nanquantile", True, policy)


def median(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False, keepdims: bool = False,
           *, policy=NUMPY) -> Any:
    """The median over `axis` (the mean of the two middle elements for an even count, NumPy's
    definition; integers give float64); a slice holding NaN gives NaN."""
    reject_out(out, "median")
    return _quantile(a, 0.5, axis, "linear", keepdims, "median", False, policy)


def nanmedian(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False, keepdims: bool = False,
              *, policy=NUMPY) -> Any:
    """median ignoring NaNs (an all-NaN slice gives NaN)."""
    reject_out(out, "nanmedian")
    return _quantile(a, 0.5, axis, "linear", keepdims, "nanmedian", True, policy)


__all__ = ["median", "nanmedian", "nanquantile", "quantile"]
