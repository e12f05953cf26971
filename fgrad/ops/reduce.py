"""Reductions over axes: sum (linear), max/min (ties share the cotangent), prod (exact where
entries are zero), argmax/argmin."""
from __future__ import annotations

import math

import numpy as np

from ..core.avals import ShapedArray
from ..core.primitive import Primitive
from ..core.rules import def_linear, def_nondiff, shape_of
from .elementwise import const, convert_element_type, div, eq, mul
from .shape import (
    _inverse_permutation,
    broadcast_in_dim,
    concatenate,
    move_to_front,
    reshape,
    slice,
    transpose,
)


def _reduced_aval(x, *, axes, dtype=None):
    return ShapedArray(tuple(d for i, d in enumerate(x.shape) if i not in axes), dtype or x.dtype)


def _batch_axes(prim):
    """Reductions under vmap: batch axis first, reduced axes shifted past it."""
    def rule(n, vals, dims, *, axes):
        (x,), (d,) = vals, dims
        return prim.bind(move_to_front(x, d), axes=tuple(a + 1 for a in axes)), 0
    prim.def_batch(rule)


def _kept(ndim, axes):
    return tuple(i for i in range(ndim) if i not in axes)


def expand_back(v, shape, axes):
    """Broadcast a reduced value back over the reduced axes of `shape`."""
    return broadcast_in_dim(v, shape, _kept(len(shape), axes))


def _def_reduction_deriv(prim, partials):
    """JVP and VJP of a reduction from `partials(x, out, axes)`, the array shaped like x of
    d out / d x (each element's derivative into its group's result)."""

    def jvp(primals, tangents, *, axes):
        (x,), (t,) = primals, tangents
        out = prim.bind(x, axes=axes)
        return out, reduce_sum(mul(t, partials(x, out, axes)), axes)

    def vjp(needs, ct, out, x, *, axes):
        return [mul(expand_back(ct, shape_of(x), axes), partials(x, out, axes))]

    prim.def_jvp(jvp)
    prim.def_vjp(vjp)


reduce_sum_p = Primitive("reduce_sum")
# dtype=x.dtype: NumPy would widen small integers, but the primitive keeps its input's
# dtype (as abstract_eval says); fgrad.numpy.sum does NumPy's widening before binding.
reduce_sum_p.def_impl(lambda x, *, axes, xp: xp.sum(x, axis=axes, dtype=x.dtype))
reduce_sum_p.def_abstract_eval(_reduced_aval)
def_linear(reduce_sum_p, lambda ct, x_aval, *, axes: expand_back(ct, x_aval.shape, axes))
_batch_axes(reduce_sum_p)


def reduce_sum(x, axes):
    """Sum over `axes` (removed), in x's dtype."""
    if not axes:
        return x
    return reduce_sum_p.bind(x, axes=tuple(sorted(axes)))


def _reduce_extreme(name, np_name):
    p = Primitive(name)
    p.def_impl(lambda x, *, axes, xp: getattr(xp, np_name)(x, axis=axes))
    p.def_abstract_eval(_reduced_aval)

    def location(x, out, axes):
        """1 / (number of ties) at each element equal to its group's extreme, else 0."""
        shape = x.shape
        hits = convert_element_type(eq(x, expand_back(out, shape, axes)), out.dtype)
        return div(hits, expand_back(reduce_sum(hits, axes), shape, axes))

    _def_reduction_deriv(p, location)
    _batch_axes(p)
    return p


reduce_max_p = _reduce_extreme("reduce_max", "max")
reduce_min_p = _reduce_extreme("reduce_min", "min")


def reduce_max(x, axes):
    """Maximum over `axes` (removed); ties share the derivative evenly."""
    return reduce_max_p.bind(x, axes=tuple(sorted(axes))) if axes else x


def reduce_min(x, axes):
    """Minimum over `axes` (removed); ties share the derivative evenly."""
    return reduce_min_p.bind(x, axes=tuple(sorted(axes))) if axes else x


# --- reduce_prod --------------------------------------------------------------------------

reduce_prod_p = Primitive("reduce_prod")
reduce_prod_p.def_impl(lambda x, *, axes, xp: xp.prod(x, axis=axes, dtype=x.dtype))
reduce_prod_p.def_abstract_eval(_reduced_aval)


def reduce_prod(x, axes):
    """Product over `axes` (removed), in x's dtype; its derivatives are exact where entries are 0."""
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
    m, n = shape_of(y)
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


def _prod_of_others(x, out, axes):
    """Array shaped like x: each element's cotangent factor d prod / d x_i, i.e. the
    product of the other elements of its reduction group (reduced axes moved last)."""
    shape = shape_of(x)
    kept = _kept(len(shape), axes)
    perm = kept + tuple(axes)
    moved = transpose(x, perm)
    e = _exclusive_products(reshape(moved, (math.prod(shape[i] for i in kept),
                                            math.prod(shape[i] for i in axes))))
    return transpose(reshape(e, shape_of(moved)), _inverse_permutation(perm))


_def_reduction_deriv(reduce_prod_p, _prod_of_others)
_batch_axes(reduce_prod_p)


def _arg_extreme(name, np_name):
    p = Primitive(name)
    p.def_impl(lambda x, *, axis, xp: getattr(xp, np_name)(x, axis=axis))
    p.def_abstract_eval(lambda x, *, axis: _reduced_aval(x, axes=(axis,), dtype=np.dtype(np.int64)))
    def_nondiff(p)

    def batch(n, vals, dims, *, axis):
        return p.bind(move_to_front(vals[0], dims[0]), axis=axis + 1), 0
    p.def_batch(batch)
    return p


argmax_p = _arg_extreme("argmax", "argmax")
argmin_p = _arg_extreme("argmin", "argmin")


def argmax(x, axis: int):
    """Index (int64) of the first maximum along `axis`."""
    return argmax_p.bind(x, axis=axis)


def argmin(x, axis: int):
    """Index (int64) of the first minimum along `axis`."""
    return argmin_p.bind(x, axis=axis)
