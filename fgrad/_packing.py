"""Several arrays as one: how a primitive with several output leaves fits fgrad's
one-output primitives.

The leaves travel as one flat vector in `packed_dtype` (floats in their promoted dtype;
integers and booleans exactly, in float64 or complex128, 64-bit integers as two 32-bit
halves), which the caller slices apart again with `unpack_leaves`. One leaf is not packed:
it is the output itself. custom_vjp/custom_jvp/checkpoint (fgrad.custom) and the control
flow primitives (fgrad.lax) share this layout; `pack_leaves`/`unpack_leaves` are written with
fgrad ops, so they are traceable, and `pack_arrays` builds the same layout from plain arrays
for impls.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from . import numpy as fnp
from .core.avals import ShapedArray
from .core.trace import aval_of
from .ops.elementwise import convert_element_type
from .ops.shape import concatenate, reshape
from .ops.shape import slice as slice_array

_2_32 = 2 ** 32


def packed_dtype(avals: Sequence[ShapedArray]) -> np.dtype:
    """Float leaves in their promoted dtype; integer/bool leaves need float64 (or complex128),
    which holds bools and 32-bit integers exactly and 64-bit ones as two 32-bit halves."""
    floats = [a.dtype for a in avals if a.dtype.kind in "fc"]
    if len(floats) < len(avals):
        floats.append(np.dtype(np.float64))
    return np.result_type(*floats)


def _is_wide(a: ShapedArray) -> bool:
    return a.dtype.kind in "iu" and a.dtype.itemsize == 8


def packed_size(avals: Sequence[ShapedArray]) -> int:
    """The length of the packed vector (64-bit integer leaves take two slots per element)."""
    return sum(a.size * (2 if _is_wide(a) else 1) for a in avals)


def packed_aval(avals: Sequence[ShapedArray]) -> ShapedArray:
    """The aval of the packed value: the leaf's own for one leaf, else a flat vector."""
    if len(avals) == 1:
        return ShapedArray(avals[0].shape, avals[0].dtype)
    return ShapedArray((packed_size(avals),), packed_dtype(avals))


def pack_leaves(leaves: Sequence, avals: Sequence[ShapedArray], zero_ints: bool = False):
    """Several leaves as one flat vector of `packed_dtype`. With `zero_ints` the integer leaves'
    slots are zeros (their tangent: integers have no derivative)."""
    dtype = packed_dtype(avals)

    def flat(x, a):
        x = reshape(x, (a.size,))
        return x if a.dtype == dtype else convert_element_type(x, dtype)
    pieces = []
    for x, a in zip(leaves, avals):
        wide = _is_wide(a)
        if a.dtype.kind in "fc":
            pieces.append(flat(x, a))
        elif zero_ints:
            pieces.append(np.zeros((a.size * (2 if wide else 1),), dtype))
        elif wide:  # exact as (x // 2**32, x % 2**32), each below 2**32 in magnitude
            hi = fnp.floor_divide(x, _2_32)
            pieces += [flat(hi, a), flat(fnp.subtract(x, fnp.multiply(hi, _2_32)), a)]
        else:
            pieces.append(flat(x, a))
    return concatenate(pieces, 0)


def pack(leaves: Sequence, avals: Sequence[ShapedArray], zero_ints: bool = False):
    """The one value standing for `leaves`: the leaf itself when there is one, else
    `pack_leaves`."""
    if len(avals) == 1:
        return leaves[0]
    return pack_leaves(leaves, avals, zero_ints)


def unpack_leaves(packed, avals: Sequence[ShapedArray]) -> list:
    """The leaves of a value packed by `pack` (an output or its cotangent)."""
    if len(avals) == 1:
        return [packed]
    leaves, start = [], 0

    def take(a):
        nonlocal start
        piece = reshape(slice_array(packed, (start,), (start + a.size,)), a.shape)
        start += a.size
        return piece if aval_of(piece).dtype == a.dtype else convert_element_type(piece, a.dtype)
    for a in avals:
        if _is_wide(a):
            hi, lo = take(a), take(a)
            leaves.append(fnp.add(fnp.multiply(hi, _2_32), lo))
        else:
            leaves.append(take(a))
    return leaves


def pack_arrays(leaves: Sequence, avals: Sequence[ShapedArray], xp=np):
    """`pack` on plain arrays of namespace `xp`, without tracing: what an impl returns."""
    if len(avals) == 1:
        return xp.asarray(leaves[0])
    dtype = packed_dtype(avals)
    pieces = []
    for x, a in zip(leaves, avals):
        x = xp.reshape(xp.asarray(x), (a.size,))
        if _is_wide(a):
            hi = x // _2_32
            pieces += [hi.astype(dtype), (x - hi * _2_32).astype(dtype)]
        else:
            pieces.append(x.astype(dtype, copy=False))
    return xp.concatenate(pieces) if pieces else xp.zeros((0,), dtype)


def unpack_arrays(packed, avals: Sequence[ShapedArray]) -> list:
    """`unpack_leaves` on a plain array, without tracing."""
    if len(avals) == 1:
        return [packed]
    leaves, start = [], 0
    for a in avals:
        if _is_wide(a):
            hi = packed[start:start + a.size]
            lo = packed[start + a.size:start + 2 * a.size]
            start += 2 * a.size
            leaves.append((hi.astype(a.dtype) * _2_32 + lo.astype(a.dtype)).reshape(a.shape))
        else:
            leaves.append(packed[start:start + a.size].reshape(a.shape).astype(a.dtype, copy=False))
            start += a.size
    return leaves
