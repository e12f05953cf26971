"""NumPy's editing functions as pure functions: delete, insert, put, put_along_axis, place,
fill_diagonal, compress, extract, choose, resize, block and trim_zeros.

NumPy's versions decide where each element of the result comes from by index arithmetic whose
rules (negative and repeated indices, broadcast and cyclically repeated values, boolean masks,
the order of nested blocks) are intricate. fgrad does not re-derive those rules: it runs NumPy's
own function on *labels* (the flat position of every input element, `arange(size)` shaped like
the input, the values' labels following the array's) and gathers the result from the
concatenated inputs at the labels NumPy returns. So the values, shapes, errors and every edge
case are NumPy's, and the derivative routes each cotangent back to the element it came from
(summed where an element is used more than once). The positions must therefore be concrete:
index arguments (obj, ind, mask, condition) that are traced under jit or vmap raise
ConcretizationError, except put, put_along_axis and choose, whose traced index arrays take an
index-update path (JAX's semantics; see their docstrings), and place, a select from a running
count of the mask (its result's shape does not depend on the mask).

put, put_along_axis, place and fill_diagonal modify their argument in NumPy and return None;
fgrad's values are immutable, so, as JAX's with inplace=False, they return the modified copy,
and inplace=True raises.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import ConcretizationError, FgradIndexError, FgradTypeError, FgradValueError
from ..core.trace import Tracer
from ..ops import cumulative
from ..ops import elementwise as ew
from ..ops import shape as sh
from ._index import _wrap_mode, at_set, getitem, take, take_along_axis
from ._policy import NUMPY
from ._util import (
    as_value,
    broadcast_args,
    broadcast_to,
    cast,
    dtype_of,
    fresh,
    is_traced,
    normalize_axes,
    normalize_axis,
    reject_out,
    result_dtype,
    shape_of,
)


def concrete(x: Any, name: str, what: str) -> np.ndarray:
    """The concrete NumPy array behind `x` (also a tracer under grad/jvp); under jit and vmap
    a ConcretizationError that names `what` of `name`."""
    x = as_value(x, name)
    if isinstance(x, Tracer):
        x = x._concrete(f"{name}'s {what}")
    return np.asarray(x)


def _labels(v: Any, offset: int = 0) -> np.ndarray:
    """The flat position of every element of `v`, shaped like `v`, plus `offset`."""
    shape = shape_of(v)
    return np.arange(offset, offset + int(np.prod(shape, dtype=np.int64)), dtype=np.int64).reshape(shape)


def gather_labels(sources: list, labels: np.ndarray, dtype: np.dtype) -> Any:
    """The result whose element at each position is the element `labels` names there, labels
    counting the elements of `sources` (cast to `dtype`) flattened one after another."""
    labels = np.asarray(labels, dtype=np.int64)
    if labels.size == 0:
        return np.zeros(labels.shape, dtype)
    flats = [sh.reshape(cast(s, dtype), (int(np.prod(shape_of(s), dtype=np.int64)),)) for s in sources]
    flats = [f for f in flats if shape_of(f)[0]]
    flat = flats[0] if len(flats) == 1 else sh.concatenate(flats, 0)
    return take(flat, labels)


def _numpy_call(fn, name: str, *args: Any, **kwargs: Any) -> np.ndarray:
    """NumPy's `fn` on label arrays, its errors raised as fgrad's classes with NumPy's message."""
    try:
        return np.asarray(fn(*args, **kwargs))
    except IndexError as e:
        raise FgradIndexError(f"{name}: {e}") from None
    except TypeError as e:
        raise FgradTypeError(f"{name}: {e}") from None
    except (ValueError, OverflowError) as e:  # an index or size beyond int64
        raise FgradValueError(f"{name}: {e}") from None
    except RuntimeError as e:  # NumPy's 32-dimension limit of its index machinery
        raise FgradValueError(f"{name}: {e}") from None


def _index_object(obj: Any, name: str) -> Any:
    """A static index argument: slices, Python ints and sequences as they are, arrays concrete."""
    if isinstance(obj, slice) or isinstance(obj, (int, np.integer)) and not isinstance(obj, bool):
        return obj
    return concrete(obj, name, "indices")


def _no_inplace(inplace: bool, name: str) -> None:
    if inplace:
        raise FgradValueError(f"{name}: inplace=True is not supported: fgrad's arrays are immutable, so {name} "
                              f"returns the modified copy. Call it with inplace=False (the default) and use the "
                              f"result: a = {name}(a, ...)")


def delete(arr: Any, obj: Any, axis: int | None = None) -> Any:
    """`arr` without the sub-arrays at `obj` (an int, a slice, a sequence of ints or a boolean
    mask) along `axis` (the flattened array when None), NumPy's delete. `obj` must be
    concrete."""
    a = as_value(arr, "delete")
    if axis is None:
        a = sh.reshape(a, (int(np.prod(shape_of(a), dtype=np.int64)),))
        axis = 0
    keep = _numpy_call(np.delete, "delete", _labels(a), _index_object(obj, "delete"), axis=axis)
    return gather_labels([a], keep, dtype_of(a))


def insert(arr: Any, obj: Any, values: Any, axis: int | None = None) -> Any:
    """`arr` with `values` inserted before the indices `obj` along `axis` (the flattened array
    when None), NumPy's insert: values are cast to arr's dtype and broadcast as NumPy does.
    Differentiable in arr and values; `obj` must be concrete."""
    a = as_value(arr, "insert")
    v = as_value(values, "insert")
    if axis is None:
        a = sh.reshape(a, (int(np.prod(shape_of(a), dtype=np.int64)),))
        axis = 0
    la = _labels(a)
    out = _numpy_call(np.insert, "insert", la, _index_object(obj, "insert"), _labels(v, la.size), axis=axis)
    return gather_labels([a, v], out, dtype_of(a))


def _cycled(v: Any, n: int) -> Any:
    """The first n elements of v's flattened elements repeated cyclically (NumPy's put/place)."""
    return gather_labels([v], np.resize(_labels(v).ravel(), (n,)), dtype_of(v))


def _update_operands(a: Any, ind: Any, v: Any, inplace: bool, name: str) -> tuple:
    """(array, values, indices, the array's dtype, whether the indices are concrete) of an
    index update (put, put_along_axis)."""
    _no_inplace(inplace, name)
    x, vv, ind_v = as_value(a, name), as_value(v, name), as_value(ind, name)
    return x, vv, ind_v, dtype_of(x), not is_traced(ind_v) or _concrete_ok(ind_v)


def put(a: Any, ind: Any, v: Any, mode: str = "raise", *, inplace: bool = False) -> Any:
    """A copy of `a` whose flattened elements at `ind` are replaced by the values `v` (repeated
    cyclically when shorter), NumPy's put as a pure function (JAX's, with inplace=False).
    Repeated indices: the last value wins. `mode` 'raise' (negative indices count from the end),
    'wrap' or 'clip'. With concrete `ind` everything is NumPy's; with `ind` traced under jit
    or vmap the update goes through at_set: out-of-range indices cannot be checked there
    ('raise' behaves as at_set does) and repeated traced indices are averaged."""
    x, vv, ind_v, dt, static = _update_operands(a, ind, v, inplace, "put")
    if static:
        ind_c = concrete(ind_v, "put", "indices")
        if mode not in ("raise", "wrap", "clip"):
            raise FgradValueError(f"put: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
        la = _labels(x)
        out = la.copy()
        _numpy_call(np.put, "put", out, ind_c, _labels(vv, la.size), mode=mode)
        return gather_labels([x, vv], out, dt)
    n = int(np.prod(shape_of(x), dtype=np.int64))
    flat = sh.reshape(x, (n,))
    idx = sh.reshape(ind_v, (int(np.prod(shape_of(ind_v), dtype=np.int64)),))
    idx = _wrap_mode(idx, n, mode, "put")
    vals = _cycled(cast(vv, dt), shape_of(idx)[0])
    return sh.reshape(at_set(flat, idx, vals), shape_of(x))


def _concrete_ok(x: Any) -> bool:
    """Whether the traced `x` has a concrete value (grad and jvp keep them; jit and vmap not)."""
    try:
        x._concrete("an index array")
        return True
    except ConcretizationError:
        return False


def put_along_axis(arr: Any, indices: Any, values: Any, axis: int | None, *, inplace: bool = False,
                   mode: str | None = None) -> Any:
    """A copy of `arr` with `values` (broadcast against `indices`) written at `indices` along
    `axis` (the flattened array when None), NumPy's put_along_axis as a pure function (JAX's,
    with inplace=False). Concrete indices follow NumPy exactly (the last of repeated indices
    wins); traced ones go through at_set (repeated positions are averaged). `mode` is JAX's
    out-of-range handling for traced indices (None, 'clip' or 'wrap')."""
    x, vv, ind_v, dt, static = _update_operands(arr, indices, values, inplace, "put_along_axis")
    if static:
        ind_c = concrete(ind_v, "put_along_axis", "indices")
        if ind_c.dtype.kind not in "iu":
            raise FgradIndexError(f"put_along_axis: indices must be integers, got dtype {ind_c.dtype}")
        la = _labels(x)
        out = la.copy()
        _numpy_call(np.put_along_axis, "put_along_axis", out, ind_c, _labels(vv, la.size), axis)
        return gather_labels([x, vv], out, dt)
    shape = shape_of(x)
    if axis is None:
        x = sh.reshape(x, (int(np.prod(shape, dtype=np.int64)),))
        axis = 0
    xs, ishape = shape_of(x), shape_of(ind_v)
    if len(ishape) != len(xs):
        raise FgradValueError(f"put_along_axis: indices of shape {ishape} and arr of shape {xs} must have the same "
                              "number of dimensions")
    ax = normalize_axis(axis, len(xs), "put_along_axis")
    ind_v = _wrap_mode(ind_v, xs[ax], mode, "put_along_axis") if mode is not None else ind_v
    idx = tuple(ind_v if d == ax else np.arange(n).reshape([n if k == d else 1 for k in range(len(xs))])
                for d, n in enumerate(xs))
    out = at_set(x, idx, broadcast_to(cast(vv, dt), ishape))
    return sh.reshape(out, shape)


def place(arr: Any, mask: Any, vals: Any, *, inplace: bool = False) -> Any:
    """A copy of `arr` whose elements where `mask` is true are the values `vals` in order
    (repeated cyclically when fewer), NumPy's place as a pure function (JAX's, with
    inplace=False).

    The k-th true position of the mask takes vals[k % vals.size]: k is the running count of
    true entries, so the mask may be traced (jit, vmap), as JAX's. The derivative goes to the
    unmasked elements of `arr` and to each value, summed over the positions it fills.

    Args:
      arr: the array to fill.
      mask: an array of arr's size (any shape); nonzero entries mark the positions to fill.
      vals: the values, taken in row-major order; empty only when nothing is masked (with
        a traced mask, never empty, as JAX's).
      inplace: must be False (fgrad's arrays are immutable).

    Returns:
      An array of arr's shape and dtype.
    """
    _no_inplace(inplace, "place")
    x = as_value(arr, "place")
    vv = as_value(vals, "place")
    m = as_value(mask, "place")
    size = int(np.prod(shape_of(x), dtype=np.int64))
    if int(np.prod(shape_of(m), dtype=np.int64)) != size:
        raise FgradValueError(f"place: mask and data must be the same size (arr of shape {shape_of(x)} has {size} "
                              f"elements, mask of shape {shape_of(m)} has "
                              f"{int(np.prod(shape_of(m), dtype=np.int64))}); pass a mask of arr's size")
    flat = sh.reshape(m, (size,))
    hit = flat if dtype_of(flat) == np.bool_ else ew.ne(flat, ew.const(flat, 0))
    n = int(np.prod(shape_of(vv), dtype=np.int64))
    if n == 0:
        if is_traced(m) or np.any(concrete(hit, "place", "mask")):
            raise FgradValueError("place: Cannot insert from an empty array! (vals is empty but the mask selects "
                                  "elements; pass at least one value)")
        return fresh(x, arr)
    if size == 0:
        return fresh(x, arr)
    # the k-th selected position (k from 0) takes vals[k % n]; unselected positions keep arr's
    k = ew.sub(cumulative.cumsum(cast(hit, np.dtype(np.int64)), 0), np.ones((), np.int64))
    k = ew.mod(ew.maximum(k, np.zeros((), np.int64)), np.asarray(n, np.int64))
    picked = cast(take(sh.reshape(vv, (n,)), k), dtype_of(x))
    return sh.reshape(ew.select(hit, picked, sh.reshape(x, (size,))), shape_of(x))


def fill_diagonal(a: Any, val: Any, wrap: bool = False, *, inplace: bool = False) -> Any:
    """A copy of `a` (2-d, or n-d with equal dimensions) with its main diagonal set to `val`
    (a scalar, or values taken in order and repeated cyclically), NumPy's fill_diagonal as a
    pure function (JAX's, with inplace=False). `wrap`: for tall matrices, continue the
    diagonal after every N+1 rows, as NumPy does."""
    _no_inplace(inplace, "fill_diagonal")
    x = as_value(a, "fill_diagonal")
    vv = as_value(val, "fill_diagonal")
    la = _labels(x)
    out = la.copy()
    _numpy_call(np.fill_diagonal, "fill_diagonal", out, _labels(vv, la.size), wrap=wrap)
    return gather_labels([x, vv], out, dtype_of(x))


def compress(condition: Any, a: Any, axis: int | None = None, out: Any = None) -> Any:
    """The slices of `a` along `axis` (the flattened array when None) where the 1-d
    `condition` is true, NumPy's compress (a shorter condition leaves the rest out).
    `condition` must be concrete."""
    reject_out(out, "compress")
    x = as_value(a, "compress")
    c = concrete(condition, "compress", "condition")
    keep = _numpy_call(np.compress, "compress", c, _labels(x), axis=axis)
    return gather_labels([x], keep, dtype_of(x))


def extract(condition: Any, arr: Any) -> Any:
    """The elements of `arr` (flattened) where `condition` is nonzero, NumPy's extract.
    `condition` must be concrete."""
    x = as_value(arr, "extract")
    c = concrete(condition, "extract", "condition")
    keep = _numpy_call(np.extract, "extract", c, _labels(x))
    return gather_labels([x], keep, dtype_of(x))


def resize(a: Any, new_shape: Any) -> Any:
    """An array of `new_shape` filled with the elements of `a` (flattened) repeated
    cyclically, NumPy's resize (an empty `a` gives zeros)."""
    x = as_value(a, "resize")
    shape = new_shape if isinstance(new_shape, (tuple, list)) else (new_shape,)
    if not all(isinstance(n, (int, np.integer)) and not isinstance(n, bool) for n in shape):
        raise FgradTypeError(f"resize: new_shape must be an int or a sequence of ints, got {new_shape!r:.60}")
    if not int(np.prod(shape_of(x), dtype=np.int64)):
        shape = _numpy_call(np.resize, "resize", np.zeros(0), new_shape).shape
        return np.zeros(shape, dtype_of(x))
    out = _numpy_call(np.resize, "resize", _labels(x), new_shape)
    return gather_labels([x], out, dtype_of(x))


def choose(a: Any, choices: Any, out: Any = None, mode: str = "raise", *, policy=NUMPY) -> Any:
    """Element-wise, the entry of choices[a] (a, and every choice, broadcast together),
    NumPy's choose; `mode` 'raise', 'wrap' or 'clip' for indices outside [0, n). With
    concrete `a` the positions are NumPy's own; a traced `a` (jit, vmap) gathers from the
    stacked choices, where 'raise' cannot check and clips instead (as JAX). Differentiable
    in the choices."""
    reject_out(out, "choose")
    idx = as_value(a, "choose")
    if isinstance(choices, (list, tuple)):
        cs = [as_value(c, "choose") for c in choices]
    else:
        c = as_value(choices, "choose")
        cs = [getitem(c, i) for i in range(shape_of(c)[0])] if shape_of(c) else [c]
    if not cs:
        raise FgradValueError("choose: choices must be a non-empty sequence of arrays")
    dt = result_dtype(*cs, policy=policy)
    if not is_traced(idx) or _concrete_ok(idx):
        ic = concrete(idx, "choose", "index array")
        labels, offset = [], 0
        for c in cs:
            labels.append(_labels(c, offset))
            offset += labels[-1].size
        got = _numpy_call(np.choose, "choose", ic, labels, mode=mode)
        return gather_labels(cs, got, dt)
    if dtype_of(idx).kind not in "iu":
        raise FgradTypeError(f"choose: the index array must be integers, got dtype {dtype_of(idx)}")
    parts = broadcast_args("choose", idx, *[cast(c, dt) for c in cs], policy=policy)
    shape = next((shape_of(p) for p in parts if shape_of(p)), ())
    idx, *cs = [broadcast_to(p, shape) for p in parts]
    idx = _wrap_mode(idx, len(cs), "clip" if mode == "raise" else mode, "choose")
    stacked = sh.concatenate([sh.reshape(c, (1,) + shape) for c in cs], 0)
    return sh.reshape(take_along_axis(stacked, sh.reshape(idx, (1,) + shape), 0), shape)


def block(arrays: Any, *, policy=NUMPY) -> Any:
    """One array assembled from nested lists of blocks, NumPy's block (the innermost lists
    join along the last axis, the outer ones along earlier axes; blocks are promoted to a
    common dtype and given the depth's number of dimensions)."""
    leaves: list = []

    def labels_of(item: Any, depth: int) -> Any:
        if isinstance(item, tuple):
            raise FgradTypeError(f"block: arrays is a tuple at depth {depth}. Only lists can be used to arrange "
                                 "blocks, and np.block does not allow implicit conversion from tuple to ndarray.")
        if isinstance(item, list):
            return [labels_of(x, depth + 1) for x in item]
        v = as_value(item, "block")
        offset = sum(int(np.prod(shape_of(x), dtype=np.int64)) for x in leaves)
        leaves.append(v)
        return _labels(v, offset)

    structure = labels_of(arrays, 0)
    if not leaves:
        raise FgradValueError("block: Lists cannot be empty (got no blocks)")
    out = _numpy_call(np.block, "block", structure)
    # NumPy's block makes every block an array first: Python numbers are not weak here
    return gather_labels(leaves, out, result_dtype(*[np.asarray(v) if isinstance(v, (int, float, complex)) else v
                                                     for v in leaves], policy=policy))


def trim_zeros(filt: Any, trim: str = "fb", axis: Any = None) -> Any:
    """`filt` with its leading ('f') and/or trailing ('b') zeros removed along `axis` (every
    axis when None: the smallest box holding every nonzero entry), NumPy 2.2's trim_zeros;
    an all-zero input gives an empty result. Which entries are zero decides the shape, so
    `filt` must be concrete (grad and jvp keep it; under jit or vmap it raises)."""
    x = as_value(filt, "trim_zeros")
    value = concrete(x, "trim_zeros", "values")
    if not isinstance(trim, str):
        raise FgradTypeError(f"trim_zeros: `trim` must be a string of 'f' and/or 'b', got {type(trim).__name__}")
    trim = trim.lower()
    if trim not in {"fb", "bf", "f", "b"}:
        raise FgradValueError(f"trim_zeros: unexpected character(s) in `trim`: {trim!r}")
    nd = value.ndim
    axes = tuple(range(nd)) if axis is None else normalize_axes(axis, nd, "trim_zeros")
    if not axes:
        return x
    nz = np.argwhere(value)
    if nz.size == 0:
        start = stop = [0] * nd
    else:
        start = list(nz.min(axis=0)) if "f" in trim else [None] * nd
        stop = list(nz.max(axis=0) + 1) if "b" in trim else [None] * nd
    return getitem(x, tuple(slice(start[d], stop[d]) if d in axes else slice(None) for d in range(nd)))


__all__ = ["delete", "insert", "put", "put_along_axis", "place", "fill_diagonal", "compress", "extract",
           "resize", "choose", "block", "trim_zeros"]
