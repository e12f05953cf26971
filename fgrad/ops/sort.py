"""Sorting: argsort, the one sorting primitive. Sorted values are `take_along_axis` of the
input by its argsort, so their derivative is the gather's (each value's cotangent goes back
to the element it came from) and no sort primitive needs rules of its own."""
from __future__ import annotations

import numpy as np

from ..core.avals import ShapedArray
from ..core.primitive import Primitive
from ..core.rules import def_nondiff
from .shape import move_to_front

argsort_p = Primitive("argsort")


def _argsort_impl(x, *, axis: int, descending: bool, xp):
    if not descending:
        return xp.argsort(x, axis=axis, kind="stable").astype(np.int64)
    # A stable sort of a decreasing function of x: equal elements keep their original order
    # (PyTorch's stable descending sort). ~x is decreasing without overflow for booleans and
    # integers (-x wraps at the smallest one). NaN stays NaN, so it would come last; but NaN
    # is the largest value to PyTorch's and jax.numpy's sorts, first when descending: a second
    # stable pass moves the NaNs, in their order, to the front.
    order = xp.argsort(~x if x.dtype.kind in "biu" else -x, axis=axis, kind="stable")
    if x.dtype.kind == "f":
        not_nan = ~xp.isnan(xp.take_along_axis(x, order, axis=axis))
        order = xp.take_along_axis(order, xp.argsort(not_nan, axis=axis, kind="stable"), axis=axis)
    return order.astype(np.int64)


argsort_p.def_impl(_argsort_impl)
argsort_p.def_abstract_eval(lambda x, *, axis, descending: ShapedArray(x.shape, np.dtype(np.int64)))
def_nondiff(argsort_p)


def _argsort_batch(n, vals, dims, *, axis, descending):
    return argsort_p.bind(move_to_front(vals[0], dims[0]), axis=axis + 1, descending=descending), 0


argsort_p.def_batch(_argsort_batch)


def argsort(x, axis: int, descending: bool = False):
    """int64 indices that sort `x` along `axis` (a non-negative axis), stably: equal elements
    keep their order, also when `descending`. NaN is the largest value: last ascending, first
    descending (PyTorch's and jax.numpy's order)."""
    return argsort_p.bind(x, axis=axis, descending=descending)
