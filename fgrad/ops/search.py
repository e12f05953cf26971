"""searchsorted: where values would be inserted into sorted rows to keep them sorted.

`searchsorted_p(sorted_seq, values, side=...)` takes a sorted 1-D `sorted_seq` and `values`
of any shape, or rows `sorted_seq` of shape (*B, n) and `values` of shape (*B, m) with the
same leading dimensions (PyTorch's batched form). The result is int64, of `values`' shape.
It is piecewise constant in both operands, so it is nondifferentiable (zero derivative),
and the histogram, digitize and bucketize functions above it inherit that.
"""
from __future__ import annotations

import numpy as np

from ..core.avals import ShapedArray
from ..core.errors import FgradTypeError, FgradValueError, ShapeError
from ..core.primitive import Primitive
from ..core.rules import def_nondiff, shape_of
from .shape import batch_front, reshape

searchsorted_p = Primitive("searchsorted")


def _searchsorted_impl(sorted_seq, values, *, side, xp):
    if sorted_seq.ndim == 1:
        return xp.searchsorted(sorted_seq, values, side=side).astype(np.int64)
    rows = sorted_seq.reshape(-1, sorted_seq.shape[-1])
    vals = values.reshape(rows.shape[0], -1)
    out = xp.empty(vals.shape, np.int64)
    for i in range(rows.shape[0]):  # one sorted row per leading index (NumPy has no batched form)
        out[i] = xp.searchsorted(rows[i], vals[i], side=side)
    return out.reshape(values.shape)


def _searchsorted_aval(sorted_seq, values, *, side):
    if side not in ("left", "right"):
        raise FgradValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    if sorted_seq.dtype != values.dtype:
        raise FgradTypeError(f"searchsorted: the sorted sequence ({sorted_seq.dtype}) and the values "
                        f"({values.dtype}) must have one dtype; fgrad.numpy.searchsorted promotes them")
    if sorted_seq.ndim == 0:
        raise ShapeError("searchsorted: the sorted sequence must have at least one dimension, got a 0-d array")
    if sorted_seq.ndim > 1 and sorted_seq.shape[:-1] != values.shape[:-1]:
        raise ShapeError(f"searchsorted: sorted rows of shape {sorted_seq.shape} need values of shape "
                         f"{sorted_seq.shape[:-1]} + (m,), got {values.shape}")
    return ShapedArray(values.shape, np.dtype(np.int64))


searchsorted_p.def_impl(_searchsorted_impl)
searchsorted_p.def_abstract_eval(_searchsorted_aval)
def_nondiff(searchsorted_p)


def _searchsorted_batch(n, vals, dims, *, side):
    """Batch-first operands are rows of the batched form, one per example (and leading index)."""
    s, v = batch_front(n, vals, dims)
    v_shape = shape_of(v)
    if len(shape_of(s)) == 2:  # each example had one 1-D sequence: its values become one row
        flat = reshape(v, (n, int(np.prod(v_shape[1:], dtype=np.int64))))
        return reshape(searchsorted_p.bind(s, flat, side=side), v_shape), 0
    return searchsorted_p.bind(s, v, side=side), 0


searchsorted_p.def_batch(_searchsorted_batch)


def searchsorted(sorted_seq, values, side: str = "left"):
    """int64 insertion points of `values` into `sorted_seq` (see the module docstring for
    the shapes): side 'left' gives the first suitable position, 'right' the last."""
    return searchsorted_p.bind(sorted_seq, values, side=side)
