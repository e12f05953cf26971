"""Cumulative operations along an axis: cumsum (linear; its transpose is the cumulative sum
in the other direction)."""
from __future__ import annotations

from ..core.avals import ShapedArray
from ..core.errors import ShapeError
from ..core.primitive import Primitive
from ..core.rules import def_linear
from .shape import move_to_front

cumsum_p = Primitive("cumsum")


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
    return cumsum(move_to_front(vals[0], dims[0]), axis + 1, reverse), 0


cumsum_p.def_batch(_cumsum_batch)


def cumsum(x, axis: int, reverse: bool = False):
    """Inclusive cumulative sum along `axis` (from the end when `reverse`)."""
    return cumsum_p.bind(x, axis=int(axis), reverse=bool(reverse))
