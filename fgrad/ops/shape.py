"""Shape primitives: broadcast_in_dim, reshape, transpose (all linear)."""
from __future__ import annotations

from ..core.avals import ShapedArray
from ..core.errors import ShapeError
from ..core.primitive import Primitive
from ..core.rules import def_linear

_slice = slice  # the builtin, before this module defines its own `slice`

broadcast_in_dim_p = Primitive("broadcast_in_dim", backward_name="ExpandBackward0")


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
    from .reduce import reduce_sum
    summed = tuple(d for d in range(len(shape)) if d not in broadcast_dimensions) + tuple(
        d for i, d in enumerate(broadcast_dimensions) if x_aval.shape[i] == 1 and shape[d] != 1)
    if summed:
        ct = reduce_sum(ct, axes=tuple(sorted(summed)))
    return reshape(ct, x_aval.shape)


broadcast_in_dim_p.def_impl(_broadcast_in_dim_impl)
broadcast_in_dim_p.def_abstract_eval(_broadcast_in_dim_aval)
def_linear(broadcast_in_dim_p, _broadcast_in_dim_transpose)


def _batch_front(x, d):
    from ..interpreters.batching import move_to_front
    return move_to_front(x, d)


broadcast_in_dim_p.def_batch(lambda n, vals, dims, *, shape, broadcast_dimensions: (
    broadcast_in_dim(_batch_front(vals[0], dims[0]), (n,) + tuple(shape),
                     (0,) + tuple(d + 1 for d in broadcast_dimensions)), 0))


def broadcast_in_dim(x, shape, broadcast_dimensions):
    """Broadcast `x` to `shape`; input axis i becomes output axis broadcast_dimensions[i]."""
    from ..core.trace import aval_of
    shape, broadcast_dimensions = tuple(shape), tuple(broadcast_dimensions)
    if aval_of(x).shape == shape and broadcast_dimensions == tuple(range(len(shape))):
        return x
    return broadcast_in_dim_p.bind(x, shape=shape, broadcast_dimensions=broadcast_dimensions)


reshape_p = Primitive("reshape", backward_name="ViewBackward0")
reshape_p.def_impl(lambda x, *, new_sizes, xp: xp.reshape(x, new_sizes))


def _reshape_aval(x, *, new_sizes):
    if ShapedArray(new_sizes, x.dtype).size != x.size:
        raise ShapeError(f"reshape: cannot reshape an array of shape {x.shape} ({x.size} elements) "
                         f"into shape {new_sizes}")
    return ShapedArray(new_sizes, x.dtype)


reshape_p.def_abstract_eval(_reshape_aval)
def_linear(reshape_p, lambda ct, x_aval, *, new_sizes: reshape(ct, x_aval.shape))


reshape_p.def_batch(lambda n, vals, dims, *, new_sizes: (
    reshape(_batch_front(vals[0], dims[0]), (n,) + tuple(new_sizes)), 0))


def reshape(x, new_sizes):
    from ..core.trace import aval_of
    new_sizes = tuple(int(d) for d in new_sizes)
    if aval_of(x).shape == new_sizes:
        return x
    return reshape_p.bind(x, new_sizes=new_sizes)


transpose_p = Primitive("transpose", backward_name="PermuteBackward0")
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
    transpose(_batch_front(vals[0], dims[0]), (0,) + tuple(p + 1 for p in permutation)), 0))


def transpose(x, permutation):
    permutation = tuple(int(p) for p in permutation)
    if permutation == tuple(range(len(permutation))):
        return x
    return transpose_p.bind(x, permutation=permutation)


slice_p = Primitive("slice", backward_name="SliceBackward0")


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
    slice(_batch_front(vals[0], dims[0]), (0,) + tuple(start_indices), (n,) + tuple(limit_indices)), 0))


def slice(x, start_indices, limit_indices):
    """The contiguous block x[start:limit] along every axis."""
    return slice_p.bind(x, start_indices=tuple(map(int, start_indices)),
                        limit_indices=tuple(map(int, limit_indices)))


pad_p = Primitive("pad", backward_name="ConstantPadNdBackward0")
pad_p.def_impl(lambda x, *, widths, xp: xp.pad(x, widths))
pad_p.def_abstract_eval(lambda x, *, widths: ShapedArray(
    tuple(d + lo + hi for d, (lo, hi) in zip(x.shape, widths)), x.dtype))
def_linear(pad_p, lambda ct, x_aval, *, widths: slice(
    ct, tuple(lo for lo, _ in widths), tuple(lo + d for d, (lo, _) in zip(x_aval.shape, widths))))


pad_p.def_batch(lambda n, vals, dims, *, widths: (
    pad(_batch_front(vals[0], dims[0]), ((0, 0),) + tuple(widths)), 0))


def pad(x, widths):
    """Zero-pad `x` by (low, high) non-negative widths per axis."""
    widths = tuple((int(lo), int(hi)) for lo, hi in widths)
    if all(lo == 0 and hi == 0 for lo, hi in widths):
        return x
    return pad_p.bind(x, widths=widths)


concatenate_p = Primitive("concatenate", backward_name="CatBackward0")
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
    from ..core.trace import aval_of
    from .elementwise import const
    out = concatenate(primals, dimension)
    ts = [broadcast_in_dim(const(out, 0.0), aval_of(x).shape, ()) if t is None else t
          for x, t in zip(primals, tangents)]
    return out, concatenate(ts, dimension)


def _concatenate_vjp(needs, ct, out, *xs, dimension):
    from ..core.trace import aval_of
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


def _concatenate_batch(n, vals, dims, *, dimension):
    from ..interpreters.batching import batch_front
    return concatenate(batch_front(n, vals, dims), dimension + 1), 0


concatenate_p.def_batch(_concatenate_batch)


def concatenate(xs, dimension: int):
    xs = tuple(xs)
    if len(xs) == 1:
        return xs[0]
    return concatenate_p.bind(*xs, dimension=int(dimension))
