"""N-dimensional convolution: conv_full (SciPy's convolve in 'full' mode, of two real arrays of
one rank); fgrad.scipy.signal crops it to the 'valid' and 'same' modes.

Bilinear: the transpose in each operand is a cropped full convolution of the cotangent with
the other operand reversed, y = x * k gives x_bar = (ct * flip(k))[nk-1 : nk-1+nx] and
k_bar = (ct * flip(x))[nx-1 : nx-1+nk], so derivatives compose to any order.
"""
from __future__ import annotations

import numpy as np

from ..core.avals import ShapedArray
from ..core.errors import FgradTypeError, ShapeError
from ..core.primitive import Primitive
from ..core.rules import shape_of
from ..core.trace import aval_of
from ._batching import loop_batch
from .elementwise import def_bilinear
from .index import rev
from .shape import move_to_front, reshape, slice

conv_full_p = Primitive("conv_full")


def _conv_aval(x, k):
    if x.ndim != k.ndim:
        raise ShapeError(f"convolve: the arrays must have the same number of dimensions, got shapes {x.shape} "
                         f"and {k.shape}")
    if x.dtype != k.dtype or x.dtype.kind != "f":
        raise FgradTypeError(f"convolve: expected two float arrays of one dtype, got {x.dtype} and {k.dtype} "
                        "(fgrad.scipy.signal promotes before binding)")
    if any(d == 0 for d in x.shape + k.shape):
        raise ShapeError(f"convolve: empty arrays (shapes {x.shape} and {k.shape}) have no convolution")
    return ShapedArray(tuple(a + b - 1 for a, b in zip(x.shape, k.shape)), x.dtype)


def _conv_impl(x, k, *, xp):
    if xp is np:
        # SciPy loads slowly (~130 ms): imported on first use, not with fgrad
        from scipy.signal import convolve
    else:
        # optional dependency (GPU arrays): imported only when a CuPy array is seen
        from cupyx.scipy.signal import convolve
    return convolve(x, k, mode="full").astype(x.dtype, copy=False)


def conv_full(x, k):
    """The full n-dimensional convolution of x and k (equal ranks): shape nx + nk - 1 per axis."""
    _conv_aval(aval_of(x), aval_of(k))
    return conv_full_p.bind(x, k)


def _crop(y, start, size):
    return slice(y, tuple(start), tuple(s + n for s, n in zip(start, size)))


def _flip_all(x):
    return rev(x, tuple(range(len(shape_of(x)))))


def _transpose_other(ct, other, own_shape):
    """The cotangent of one operand: (ct * flip(other)) cropped to own_shape."""
    full = conv_full(ct, _flip_all(other))
    return _crop(full, [d - 1 for d in shape_of(other)], own_shape)


def _conv_batch(n, vals, dims):
    """vmap: with one operand batched, the other gets a leading axis of size 1 -- a full
    convolution along the batch axis with a length-1 kernel is the batch itself; with both
    batched, a loop over the examples."""
    (x, k), (dx, dk) = vals, dims
    if dx is not None and dk is not None:
        return loop_batch(conv_full_p, n, vals, dims)
    if dx is not None:
        return conv_full(move_to_front(x, dx), reshape(k, (1,) + shape_of(k))), 0
    return conv_full(reshape(x, (1,) + shape_of(x)), move_to_front(k, dk)), 0


conv_full_p.def_impl(_conv_impl)
conv_full_p.def_abstract_eval(_conv_aval)
def_bilinear(conv_full_p,
             lambda ct, x, k: _transpose_other(ct, k, shape_of(x)),
             lambda ct, x, k: _transpose_other(ct, x, shape_of(k)))
conv_full_p.def_batch(_conv_batch)

__all__ = ["conv_full", "conv_full_p"]
