"""Cumulative sums and products along axes: cumsum (linear) and reduce_prod."""
from __future__ import annotations

from ..core.avals import ShapedArray
from ..core.errors import ShapeError
from ..core.primitive import Primitive
from ..core.rules import def_linear
from ..core.trace import aval_of
from .elementwise import const, mul
from .reduce import _reduced_aval, expand_back, reduce_sum
from .shape import _inverse_permutation, broadcast_in_dim, concatenate, reshape, slice, transpose

# --- cumsum -------------------------------------------------------------------------------

cumsum_p = Primitive("cumsum", backward_name="CumsumBackward0")


def _cumsum_impl(x, *, axis, reverse, xp):
    if reverse:
        return xp.flip(xp.cumsum(xp.flip(x, axis), axis=axis, dtype=x.dtype), axis)
    return xp.cumsum(x, axis=axis, dtype=x.dtype)


def _cumsum_aval(x, *, axis, reverse):
    if not 0 <= axis < x.ndim:
        raise ShapeError(f"cumsum: axis {axis} out of range for shape {x.shape}")
    return ShapedArray(x.shape, x.dtype)


cumsum_p.def_impl(_cumsum_impl)
cumsum_p.def_abstract_eval(_cumsum_aval)
# out[i] = sum_{j<=i} x[j], so ct_x[j] = sum_{i>=j} ct[i]: the reversed cumulative sum.
def_linear(cumsum_p, lambda ct, x_aval, *, axis, reverse: cumsum(ct, axis, not reverse))


def _cumsum_batch(n, vals, dims, *, axis, reverse):
    from ..interpreters.batching import move_to_front
    return cumsum(move_to_front(vals[0], dims[0]), axis + 1, reverse), 0


cumsum_p.def_batch(_cumsum_batch)


def cumsum(x, axis: int, reverse: bool = False):
    """Inclusive cumulative sum along `axis` (from the end when `reverse`)."""
    return cumsum_p.bind(x, axis=int(axis), reverse=bool(reverse))


# --- reduce_prod --------------------------------------------------------------------------

reduce_prod_p = Primitive("reduce_prod", backward_name="ProdBackward1")
reduce_prod_p.def_impl(lambda x, *, axes, xp: xp.prod(x, axis=axes, dtype=x.dtype))
reduce_prod_p.def_abstract_eval(_reduced_aval)


def reduce_prod(x, axes):
    return reduce_prod_p.bind(x, axes=tuple(sorted(axes))) if axes else x


def _ones(like, shape):
    return broadcast_in_dim(const(like, 1.0), shape, ())


def _halves(p, m, half):
    """Even and odd columns of p (m, 2*half) as two (m, half) arrays."""
    p = reshape(p, (m, half, 2))
    even = reshape(slice(p, (0, 0, 0), (m, half, 1)), (m, half))
    odd = reshape(slice(p, (0, 0, 1), (m, half, 2)), (m, half))
    return even, odd


def _exclusive_products(y):
    """For y of shape (m, n): e[:, i] = prod_{j != i} y[:, j], with multiplications only
    (a pairwise tree: products up, then each node's exclusive product down), so zeros in y
    are handled exactly and every derivative of the result is again zero-safe. O(n) work."""
    m, n = aval_of(y).shape
    levels, p, size = [], y, n
    while size > 1:
        if size % 2:
            p = concatenate([p, _ones(y, (m, 1))], 1)
            size += 1
        levels.append((p, size))
        even, odd = _halves(p, m, size // 2)
        p, size = mul(even, odd), size // 2
    e = _ones(y, (m, 1))
    for p, size in reversed(levels):
        half = size // 2
        e = slice(e, (0, 0), (m, half))  # drop the padding column of the level above
        even, odd = _halves(p, m, half)
        e = concatenate([reshape(mul(e, odd), (m, half, 1)), reshape(mul(e, even), (m, half, 1))], 2)
        e = reshape(e, (m, size))
    return slice(e, (0, 0), (m, n))


def _prod_of_others(x, axes):
    """Array shaped like x: each element's cotangent factor d prod / d x_i, i.e. the
    product of the other elements of its reduction group (reduced axes moved last)."""
    shape = aval_of(x).shape
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    perm = kept + tuple(axes)
    m = n = 1
    for i in kept:
        m *= shape[i]
    for i in axes:
        n *= shape[i]
    moved = transpose(x, perm)
    e = _exclusive_products(reshape(moved, (m, n)))
    return transpose(reshape(e, aval_of(moved).shape), _inverse_permutation(perm))


def _reduce_prod_jvp(primals, tangents, *, axes):
    (x,), (t,) = primals, tangents
    return reduce_prod(x, axes), reduce_sum(mul(t, _prod_of_others(x, axes)), axes)


def _reduce_prod_vjp(needs, ct, out, x, *, axes):
    return [mul(expand_back(ct, aval_of(x).shape, axes), _prod_of_others(x, axes))]


def _reduce_prod_batch(n, vals, dims, *, axes):
    from ..interpreters.batching import move_to_front
    return reduce_prod(move_to_front(vals[0], dims[0]), tuple(a + 1 for a in axes)), 0


reduce_prod_p.def_jvp(_reduce_prod_jvp)
reduce_prod_p.def_vjp(_reduce_prod_vjp)
reduce_prod_p.def_batch(_reduce_prod_batch)
