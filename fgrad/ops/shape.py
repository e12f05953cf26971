"""Shape primitives, all linear: broadcast_in_dim, reshape, transpose, slice and pad (each
other's transposes), concatenate; and the axis moves that batching rules are written with
(move_to_front, move_axis, batch_front). This module is the bottom of fgrad.ops: the others,
and fgrad/ops/_batching.py, are built on it."""
from __future__ import annotations

import numpy as np

from ..core.avals import ShapedArray
from ..core.errors import ShapeError
from ..core.primitive import Primitive
from ..core.rules import def_linear, shape_of
from ..core.trace import aval_of

_slice = slice  # the builtin, before this module defines its own `slice`

broadcast_in_dim_p = Primitive("broadcast_in_dim", view=True)


def _broadcast_in_dim_impl(x, *, shape, broadcast_dimensions, xp):
    keep = [1] * len(shape)
    for src, dst in enumerate(broadcast_dimensions):
        keep[dst] = x.shape[src]
    return xp.broadcast_to(x.reshape(keep), shape)


def _broadcast_in_dim_aval(x, *, shape, broadcast_dimensions):
    if len(broadcast_dimensions) != x.ndim or any(
            x.shape[i] not in (1, shape[d]) for i, d in enumerate(broadcast_dimensions)):
        raise ShapeError(f"broadcast_in_dim: cannot broadcast shape {x.shape} to {shape} "
                         f"along dimensions {broadcast_dimensions}")
    return ShapedArray(shape, x.dtype)


def _broadcast_in_dim_transpose(ct, x_aval, *, shape, broadcast_dimensions):
    # reduce_sum and broadcast_in_dim are each other's transposes, and reduce.py is built on
    # this module, so reduce_sum is looked up when a transpose first runs (a real cycle).
    from .reduce import reduce_sum
    summed = tuple([d for d in range(len(shape)) if d not in broadcast_dimensions] + [
        d for i, d in enumerate(broadcast_dimensions) if x_aval.shape[i] == 1 and shape[d] != 1])
    if summed:
        ct = reduce_sum(ct, axes=tuple(sorted(summed)))
    return reshape(ct, x_aval.shape)


broadcast_in_dim_p.def_impl(_broadcast_in_dim_impl)
broadcast_in_dim_p.def_abstract_eval(_broadcast_in_dim_aval)
def_linear(broadcast_in_dim_p, _broadcast_in_dim_transpose)


broadcast_in_dim_p.def_batch(lambda n, vals, dims, *, shape, broadcast_dimensions: (
    broadcast_in_dim(move_to_front(vals[0], dims[0]), (n,) + tuple(shape),
                     (0,) + tuple(d + 1 for d in broadcast_dimensions)), 0))


def broadcast_in_dim(x, shape, broadcast_dimensions):
    """Broadcast `x` to `shape`; input axis i becomes output axis broadcast_dimensions[i]."""
    shape, broadcast_dimensions = tuple(shape), tuple(broadcast_dimensions)
    if aval_of(x).shape == shape and broadcast_dimensions == tuple(range(len(shape))):
        return x
    return broadcast_in_dim_p.bind(x, shape=shape, broadcast_dimensions=broadcast_dimensions)


reshape_p = Primitive("reshape", view=True)
reshape_p.def_impl(lambda x, *, new_sizes, xp: xp.reshape(x, new_sizes))


def _reshape_aval(x, *, new_sizes):
    if ShapedArray(new_sizes, x.dtype).size != x.size:
        raise ShapeError(f"reshape: cannot reshape an array of shape {x.shape} ({x.size} elements) "
                         f"into shape {new_sizes}")
    return ShapedArray(new_sizes, x.dtype)


reshape_p.def_abstract_eval(_reshape_aval)
def_linear(reshape_p, lambda ct, x_aval, *, new_sizes: reshape(ct, x_aval.shape))


reshape_p.def_batch(lambda n, vals, dims, *, new_sizes: (
    reshape(move_to_front(vals[0], dims[0]), (n,) + tuple(new_sizes)), 0))


def reshape(x, new_sizes):
    """`x` with the same elements (row-major order) in the shape `new_sizes`."""
    new_sizes = tuple([int(d) for d in new_sizes])
    if aval_of(x).shape == new_sizes:
        return x
    return reshape_p.bind(x, new_sizes=new_sizes)


transpose_p = Primitive("transpose", view=True)
transpose_p.def_impl(lambda x, *, permutation, xp: xp.transpose(x, permutation))
transpose_p.def_abstract_eval(
    lambda x, *, permutation: ShapedArray(tuple(x.shape[p] for p in permutation), x.dtype))


def _inverse_permutation(permutation):
    inv = [0] * len(permutation)
    for i, p in enumerate(permutation):
        inv[p] = i
    return tuple(inv)


def_linear(transpose_p, lambda ct, x_aval, *, permutation: transpose(ct, _inverse_permutation(permutation)))


transpose_p.def_batch(lambda n, vals, dims, *, permutation: (
    transpose(move_to_front(vals[0], dims[0]), (0,) + tuple(p + 1 for p in permutation)), 0))


def transpose(x, permutation):
    """Permute the axes of `x`: output axis i is input axis permutation[i]."""
    permutation = tuple([int(p) for p in permutation])
    if permutation == tuple(range(len(permutation))):
        return x
    return transpose_p.bind(x, permutation=permutation)


slice_p = Primitive("slice", view=True)


def _slice_aval(x, *, start_indices, limit_indices):
    if len(start_indices) != x.ndim or any(
            not 0 <= s <= e <= d for s, e, d in zip(start_indices, limit_indices, x.shape)):
        raise ShapeError(f"slice: start {start_indices} / limit {limit_indices} do not fit shape {x.shape}")
    return ShapedArray(tuple(e - s for s, e in zip(start_indices, limit_indices)), x.dtype)


slice_p.def_impl(lambda x, *, start_indices, limit_indices, xp:
                 x[tuple(_slice(s, e) for s, e in zip(start_indices, limit_indices))])
slice_p.def_abstract_eval(_slice_aval)
def_linear(slice_p, lambda ct, x_aval, *, start_indices, limit_indices: pad(
    ct, tuple((s, d - e) for s, e, d in zip(start_indices, limit_indices, x_aval.shape))))


slice_p.def_batch(lambda n, vals, dims, *, start_indices, limit_indices: (
    slice(move_to_front(vals[0], dims[0]), (0,) + tuple(start_indices), (n,) + tuple(limit_indices)), 0))


def slice(x, start_indices, limit_indices):
    """The contiguous block x[start:limit] along every axis."""
    return slice_p.bind(x, start_indices=tuple(map(int, start_indices)),
                        limit_indices=tuple(map(int, limit_indices)))


pad_p = Primitive("pad")
pad_p.def_impl(lambda x, *, widths, xp: xp.pad(x, widths))
pad_p.def_abstract_eval(lambda x, *, widths: ShapedArray(
    tuple(d + lo + hi for d, (lo, hi) in zip(x.shape, widths)), x.dtype))
def_linear(pad_p, lambda ct, x_aval, *, widths: slice(
    ct, tuple(lo for lo, _ in widths), tuple(lo + d for d, (lo, _) in zip(x_aval.shape, widths))))


pad_p.def_batch(lambda n, vals, dims, *, widths: (
    pad(move_to_front(vals[0], dims[0]), ((0, 0),) + tuple(widths)), 0))


def pad(x, widths):
    """Zero-pad `x` by (low, high) non-negative widths per axis."""
    widths = tuple((int(lo), int(hi)) for lo, hi in widths)
    if all(lo == 0 and hi == 0 for lo, hi in widths):
        return x
    return pad_p.bind(x, widths=widths)


concatenate_p = Primitive("concatenate")
concatenate_p.def_impl(lambda *xs, dimension, xp: xp.concatenate(xs, axis=dimension))


def _concatenate_aval(*xs, dimension):
    first = xs[0]
    for x in xs:
        if x.ndim != first.ndim or any(a != b for i, (a, b) in enumerate(zip(x.shape, first.shape))
                                       if i != dimension):
            raise ShapeError(f"concatenate: shapes {', '.join(str(y.shape) for y in xs)} differ "
                             f"outside dimension {dimension}")
    shape = list(first.shape)
    shape[dimension] = sum(x.shape[dimension] for x in xs)
    return ShapedArray(shape, first.dtype)


def _concatenate_jvp(primals, tangents, *, dimension):
    out = concatenate(primals, dimension)
    zero = np.zeros((), aval_of(out).dtype)  # elementwise.const is built on this module
    ts = [broadcast_in_dim(zero, aval_of(x).shape, ()) if t is None else t
          for x, t in zip(primals, tangents)]
    return out, concatenate(ts, dimension)


def _concatenate_vjp(needs, ct, out, *xs, dimension):
    res, start = [], 0
    full = aval_of(ct).shape
    for need, x in zip(needs, xs):
        size = aval_of(x).shape[dimension]
        if need:
            lo = [0] * len(full)
            hi = list(full)
            lo[dimension], hi[dimension] = start, start + size
            res.append(slice(ct, lo, hi))
        else:
            res.append(None)
        start += size
    return res


concatenate_p.def_abstract_eval(_concatenate_aval)
concatenate_p.def_jvp(_concatenate_jvp)
concatenate_p.def_vjp(_concatenate_vjp)
concatenate_p.def_saves(inputs=False, output=False)  # the operands lend their shapes


def _concatenate_batch(n, vals, dims, *, dimension):
    return concatenate(batch_front(n, vals, dims), dimension + 1), 0


concatenate_p.def_batch(_concatenate_batch)


def concatenate(xs, dimension: int):
    """Join arrays of equal shapes (but along `dimension`) along `dimension`."""
    xs = tuple(xs)
    if len(xs) == 1:
        return xs[0]
    return concatenate_p.bind(*xs, dimension=int(dimension))


# --- axis moves for batching rules ------------------------------------------------------------
# A batching rule gets each operand with its batch axis wherever the trace left it (None for an
# unbatched operand); these put it where the rule wants it. They are transposes and broadcasts,
# so the batching rules of this module's own primitives use them too.

def move_axis(x, src: int, dst: int):
    """`x` with axis `src` moved to position `dst` (the other axes keep their order)."""
    order = [i for i in range(len(shape_of(x))) if i != src]
    order.insert(dst, src)
    return transpose(x, tuple(order))


def move_to_front(x, axis: int):
    """`x` with axis `axis` moved to the front."""
    return x if axis == 0 else move_axis(x, axis, 0)


def batch_front(n: int, vals, dims):
    """Every operand with its batch axis first; unbatched ones (dim None) broadcast to the batch."""
    out = []
    for v, d in zip(vals, dims):
        if d is None:
            shape = shape_of(v)
            v = broadcast_in_dim(v, (n,) + shape, tuple(range(1, len(shape) + 1)))
        else:
            v = move_to_front(v, d)
        out.append(v)
    return out
