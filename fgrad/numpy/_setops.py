"""Counting and searching: unique, bincount, searchsorted, digitize and histogram.

searchsorted binds the searchsorted primitive (fgrad/ops/search.py) and digitize and
histogram are built on it, so they stage under jit and vmap. unique's result size depends on
the values, so it needs a concrete array (under jit/vmap it raises ConcretizationError, as
boolean masks do); its unique values are gathered from the input, so they carry the input's
derivative. bincount's length also depends on the values unless `length=` (JAX's argument)
fixes it; its weighted counts are a scatter-add, differentiable in the weights.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import FgradTypeError, FgradValueError, ShapeError
from ..core.trace import Tracer, xp_of
from ..ops import cumulative
from ..ops import elementwise as ew
from ..ops import index as ix
from ..ops import reduce as red
from ..ops import search
from ..ops import shape as sh
from ..ops.index import ARRAY
from ._creation import linspace
from ._index import getitem, take
from ._policy import NUMPY
from ._util import (
    as_value,
    aval_of,
    cast,
    dtype_of,
    int_arg,
    is_traced,
    normalize_axis,
    result_dtype,
    shape_of,
)


def _concrete(x, what: str) -> Any:
    """The concrete array behind `x` (an array, or a tracer of grad/jvp), where it lives;
    under jit/vmap a ConcretizationError saying that `what` needs the values."""
    v = x
    if isinstance(v, Tracer):
        v = v._concrete(what)
    return v


def concrete_array(x, what: str) -> np.ndarray:
    """The concrete values behind `x` (an array, or a tracer of grad/jvp) as a NumPy array,
    copied from the GPU for a CuPy array (the values decide a shape, which the host must
    know); under jit/vmap a ConcretizationError saying that `what` needs the values."""
    v = _concrete(x, what)
    return v.get() if type(v).__module__.startswith("cupy") else np.asarray(v)


# --- unique -----------------------------------------------------------------------------------

def unique(ar: Any, return_index: bool = False, return_inverse: bool = False, return_counts: bool = False,
           axis: Any = None, *, equal_nan: bool = True, size: int | None = None, fill_value: Any = None) -> Any:
    """The sorted unique elements of `ar` (of the flattened array, or the unique slices along
    `axis`), NumPy's signature and results: with return_index the first occurrences, with
    return_inverse the indices that rebuild `ar` (of `ar`'s shape for axis=None), with
    return_counts how often each occurs. Without `size` it needs the values (not under
    jit/vmap); the unique values are gathered from `ar`, so gradients reach the first
    occurrences.

    With `size` (JAX's argument; axis=None only) the results have exactly `size` entries: the
    first `size` unique values, padded with `fill_value` (default: the smallest value), their
    indices padded with the smallest value's, counts padded with 0. They come from a stable
    sort, a mask of where each run of equal values starts and fgrad.numpy.nonzero(size=), so
    this stages under jit and vmap; gradients reach the element each value is gathered from
    (the first occurrence).
    """
    if size is not None:
        return _unique_sized(ar, size, fill_value, return_index, return_inverse, return_counts, axis, equal_nan)
    if fill_value is not None:
        raise FgradValueError("unique: fill_value is only used with size=; pass size= as well (or drop fill_value)")
    a = as_value(ar, "unique")
    raw = _concrete(a, "unique (the number of unique values depends on the values)")
    v = concrete_array(raw, "unique")
    shape = shape_of(a)
    if axis is None:
        flat = v.reshape(-1)
        _, index, inverse, counts = np.unique(flat, return_index=True, return_inverse=True,
                                              return_counts=True, equal_nan=equal_nan)
        values = take(a, index.astype(np.int64))
        inverse = inverse.reshape(shape)
    else:
        ax = normalize_axis(axis, len(shape), "unique")
        _, index, inverse, counts = np.unique(v, return_index=True, return_inverse=True, return_counts=True,
                                              axis=ax, equal_nan=equal_nan)
        values = take(a, index.astype(np.int64), axis=ax)
        inverse = inverse.reshape(-1)
    xp = xp_of((raw,))  # the indices and counts on the device of `ar`, as its unique values are
    extra = [xp.asarray(r.astype(np.int64)) for r, want in ((index, return_index), (inverse, return_inverse),
                                                            (counts, return_counts)) if want]
    return (values, *extra) if extra else values


def _unique_sized(ar, size, fill_value, return_index: bool, return_inverse: bool, return_counts: bool, axis,
                  equal_nan: bool):
    """unique with a fixed result length (see unique), from staged primitives only."""
    from ._index import nonzero  # (imported on use: _index and _sorting import this module)
    from ._sorting import argsort  # (the same cycle)
    a = as_value(ar, "unique")
    if axis is not None:
        raise FgradValueError(f"unique: size= is supported with axis=None only (got axis={axis!r}); flatten first, "
                              "or drop size= (then the values must be concrete)")
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 0:
        raise FgradValueError(f"unique: size must be a non-negative int (the results' fixed length), got {size!r}")
    size = int(size)
    shape = shape_of(a)
    n = int(np.prod(shape, dtype=np.int64))
    if n == 0 and size and fill_value is None:
        raise FgradValueError("unique: for an empty array with size > 0, fill_value must be given (there is no "
                              "smallest value to pad with)")
    i64 = np.dtype(np.int64)
    dt = dtype_of(a)
    flat = sh.reshape(a, (n,))
    if n == 0:  # (JAX's results for an empty array)
        out = [sh.broadcast_in_dim(cast(np.asarray(fill_value), dt), (size,), ()) if size else flat]
        out += [np.zeros(0, i64) for want in (return_index, return_inverse) if want]
        out += [np.zeros(0, i64)] if return_counts else []
        return tuple(out) if len(out) > 1 else out[0]
    perm = argsort(flat, stable=True)
    aux = take(flat, perm)
    later, earlier = getitem(aux, slice(1, None)), getitem(aux, slice(None, -1))
    starts = ew.ne(later, earlier)
    if dt.kind in "fc" and equal_nan:  # NaNs are one value (sorted last)
        starts = ew.logical_and(starts, ew.logical_not(ew.logical_and(ew.isnan(later), ew.isnan(earlier))))
    mask = sh.concatenate([np.ones(1, bool), starts], 0)
    (first,) = nonzero(mask, size=size)
    values = take(aux, first)
    if fill_value is not None:
        found = red.reduce_sum(cast(mask, i64), (0,))
        values = ew.select(ew.lt(np.arange(size, dtype=np.int64), found),
                           values, sh.broadcast_in_dim(cast(np.asarray(fill_value), dt), (size,), ()))
    out = [values]
    if return_index:
        out.append(take(perm, first))
    if return_inverse:
        run = ew.sub(cumulative.cumsum(cast(mask, i64), 0), np.ones((), i64))
        out.append(sh.reshape(ix.scatter_add(run, [perm], (ARRAY,), (n,)), shape))
    if return_counts:
        (bounds,) = nonzero(mask, size=size + 1)
        ends = getitem(bounds, slice(1, None))
        ends = ew.select(ew.ne(ends, np.zeros((), i64)), ends, np.full((size,), n, i64))  # (padding: n)
        starts_at = sh.concatenate([getitem(bounds, slice(0, 1)), getitem(ends, slice(None, -1))], 0)
        out.append(ew.sub(ends, starts_at))
    return tuple(out) if len(out) > 1 else values


# --- bincount ---------------------------------------------------------------------------------

def bincount(x: Any, weights: Any = None, minlength: int = 0, *, length: Any = None) -> Any:
    """Counts of each value 0..n-1 in the non-negative integer vector `x` (weighted sums with
    `weights`, as float64, NumPy's dtype), n = max(x.max() + 1, minlength). With `length`
    (JAX's argument) n is fixed and `x` may be traced (values >= length are an error eagerly).
    Differentiable in `weights` (a scatter-add)."""
    x = as_value(x, "bincount")
    if len(shape_of(x)) != 1:
        raise FgradValueError(f"bincount: object too deep for desired array: x must be 1-D, got shape {shape_of(x)}")
    if dtype_of(x).kind not in "biu":
        raise FgradTypeError(f"bincount: cannot cast array data from dtype {dtype_of(x)} to int64: x must hold "
                        "non-negative integers (cast with x.astype(int) first)")
    minlength = int_arg(minlength, "bincount", "minlength")
    if minlength < 0:
        raise FgradValueError(f"bincount: minlength must not be negative, got {minlength}")
    if length is None or not is_traced(x):
        v = concrete_array(x, "bincount without length= (its length depends on the largest value)")
        if v.size and v.min() < 0:
            raise FgradValueError(f"bincount: 'list' argument must have no negative elements (smallest is {v.min()})")
        n = max(int(v.max()) + 1 if v.size else 0, minlength)
        if length is not None:
            length = int_arg(length, "bincount", "length")
            if n > max(length, minlength):
                raise FgradValueError(f"bincount: x holds {n - 1}, beyond length={length}; give a larger length")
            n = max(length, minlength)
    else:
        n = max(int_arg(length, "bincount", "length"), minlength)
    idx = cast(x, np.dtype(np.int64))
    if weights is None:
        updates = np.ones(shape_of(x), np.int64)
    else:
        updates = as_value(weights, "bincount's weights")
        if shape_of(updates) != shape_of(x):
            raise FgradValueError(f"bincount: the weights and list don't have the same length (weights of shape "
                             f"{shape_of(updates)}, x of shape {shape_of(x)})")
        updates = cast(updates, np.dtype(np.float64) if dtype_of(updates).kind != "c" else dtype_of(updates))
    return ix.scatter_add(updates, [idx], (ARRAY,), (n,))


# --- searchsorted, digitize, histogram ----------------------------------------------------------

def searchsorted(a: Any, v: Any, side: str = "left", sorter: Any = None, *, policy=NUMPY) -> Any:
    """Indices (int64) where the elements of `v` would be inserted into the sorted 1-D `a` to
    keep it sorted: the first such position for side='left', the last for 'right'. With
    `sorter` (an argsort of `a`), `a` need not be sorted itself. Not differentiable (the
    result is piecewise constant); stages under jit and vmap."""
    if side not in ("left", "right"):
        raise FgradValueError(f"searchsorted: side must be 'left' or 'right' (got {side!r})")
    a = as_value(a, "searchsorted")
    v = as_value(v, "searchsorted")
    if len(shape_of(a)) != 1:
        raise FgradValueError(f"searchsorted: a must be 1-D (a sorted sequence), got shape {shape_of(a)}")
    if sorter is not None:
        a = take(a, sorter)
    dt = result_dtype(a, v, policy=policy)
    return search.searchsorted(cast(a, dt), cast(v, dt), side)


def _monotonic(bins) -> int:
    """1 for increasing bins, -1 for decreasing (traced bins are taken as increasing)."""
    if is_traced(bins):
        return 1
    b = np.asarray(bins)
    d = np.diff(b)
    if np.all(d >= 0):
        return 1
    if np.all(d <= 0):
        return -1
    raise FgradValueError("digitize: bins must be monotonically increasing or decreasing")


def digitize(x: Any, bins: Any, right: bool = False) -> Any:
    """The index of the bin each element of `x` falls in (NumPy semantics: with increasing
    bins, bins[i-1] <= x < bins[i], or bins[i-1] < x <= bins[i] with `right`; decreasing bins
    count from the other end). Not differentiable; stages under jit and vmap (traced bins
    are taken to be increasing)."""
    x = as_value(x, "digitize")
    bins = as_value(bins, "digitize's bins")
    if len(shape_of(bins)) != 1:
        raise FgradValueError(f"digitize: bins must be 1-dimensional, got shape {shape_of(bins)}")
    side = "left" if right else "right"
    if _monotonic(bins) > 0:
        return searchsorted(bins, x, side)
    n = shape_of(bins)[0]
    return ew.sub(np.asarray(n, np.int64), searchsorted(sh.reshape(ix.rev(bins, (0,)), (n,)), x, side))


def histogram(a: Any, bins: int = 10, range: Any = None, density: Any = None, weights: Any = None) -> tuple:
    """(hist, bin_edges) of the flattened `a` over `bins` equal bins spanning `range` (the
    data's min and max by default): NumPy's semantics (the last bin includes its right
    edge; values outside `range` are not counted). `bins` must be an int (edges as an
    array are not supported). hist is int64, of the weights' dtype with `weights`
    (differentiable in them), or float64 with `density`; stages under jit and vmap."""
    a = as_value(a, "histogram")
    if isinstance(bins, (str, list, tuple)) or is_traced(bins) or np.ndim(bins) != 0:
        raise FgradTypeError(f"histogram: bins must be a number of bins (an int), got {bins!r:.60}; bin edges "
                        "as an array are not supported")
    bins = int_arg(bins, "histogram", "bins")
    if bins < 1:
        raise FgradValueError(f"histogram: `bins` must be positive, when an integer (got {bins})")
    flat = sh.reshape(a, (int(aval_of(a).size),))
    fdt = np.dtype(np.float64) if dtype_of(a).kind in "biu" else dtype_of(a)
    if range is None:
        if aval_of(flat).size == 0:
            lo, hi = np.asarray(0.0, fdt), np.asarray(1.0, fdt)
        else:
            lo, hi = cast(red.reduce_min(flat, (0,)), fdt), cast(red.reduce_max(flat, (0,)), fdt)
    else:
        lo, hi = (np.asarray(float(r), fdt) for r in range)
        if lo > hi:
            raise FgradValueError(f"histogram: max must be larger than min in range parameter (got range={range})")
    if not is_traced(lo) and not is_traced(hi) and lo == hi:  # NumPy widens an empty range by 0.5 each way
        lo, hi = lo - np.asarray(0.5, fdt), hi + np.asarray(0.5, fdt)
    edges = linspace(lo, hi, bins + 1)
    edges = cast(edges, fdt)
    xs = cast(flat, fdt)
    # the bin of x: the last edge <= x, with x == hi in the last bin; outside [lo, hi]: none
    idx = ew.sub(searchsorted(edges, xs, "right"), np.asarray(1, np.int64))
    idx = ew.minimum(idx, np.asarray(bins - 1, np.int64))
    inside = ew.logical_and(ew.ge(xs, cast(lo, fdt)), ew.le(xs, cast(hi, fdt)))
    idx = ew.select(inside, idx, np.zeros((), np.int64))
    if weights is None:
        w = cast(inside, np.dtype(np.int64))
    else:
        w = as_value(weights, "histogram's weights")
        if shape_of(w) != shape_of(a):
            raise ShapeError(f"histogram: weights should have the same shape as a (weights {shape_of(w)}, "
                             f"a {shape_of(a)})")
        w = sh.reshape(w, shape_of(flat))
        w = ew.select(inside, w, ew.const(w, 0))
    hist = ix.scatter_add(w, [idx], (ARRAY,), (bins,))  # weighted: of the weights' dtype, as NumPy
    if density:
        hist = cast(hist, np.dtype(np.float64))
        widths = ew.sub(getitem(edges, slice(1, None)), getitem(edges, slice(None, -1)))
        hist = ew.div(hist, ew.mul(cast(widths, np.dtype(np.float64)), red.reduce_sum(hist, (0,))))
    return hist, edges


__all__ = ["bincount", "digitize", "histogram", "searchsorted", "unique"]
