"""Separable resampling primitives: resample and resample_transpose.

resample(x; axis, taps) computes y[..., o, ...] = sum_t w[o, t] * x[..., i[o, t], ...] along
one axis, for fixed taps (indices i and weights w of shape [out, T]): interpolation
(nearest, linear, cubic) and adaptive averaging are this with different taps, one axis at a
time. It is linear in x; its transpose, resample_transpose, adds each output's cotangent,
weighted, back at its taps. The two are each other's transposes, so every derivative of
either is again one of the two.

Why primitives rather than a gather and its scatter-add: the taps are known in advance, so
the transpose can split each tap's outputs into a few groups without repeated indices (an
input index appears about upsampling-factor times) and add each group with one vectorised
fancy-indexed add, instead of NumPy's unbuffered, element-by-element add.at.
"""
from __future__ import annotations

import numpy as np

from ...core.avals import ShapedArray
from ...core.errors import FgradValueError, ShapeError
from ...core.primitive import Primitive
from ...core.rules import def_linear, shape_of
from ..shape import move_to_front

__all__ = ["Taps", "resample", "resample_transpose", "resample_p", "resample_transpose_p"]


class Taps:
    """Hashable fixed taps of a resampling along one axis: idx [out, T] (int64, in
    [0, n_in)) and wts [out, T] (float64), or wts None for a plain gather with T == 1."""

    __slots__ = ("idx", "wts", "n_in", "_key")

    def __init__(self, idx, wts, n_in: int) -> None:
        idx = np.ascontiguousarray(idx, np.int64)
        if idx.ndim != 2 or (wts is not None and np.shape(wts) != idx.shape):
            raise FgradValueError(f"Taps: idx must be [out, T] and wts None or of idx's shape, got "
                             f"{idx.shape} and {None if wts is None else np.shape(wts)}")
        if idx.size and (idx.min() < 0 or idx.max() >= n_in):
            raise FgradValueError(f"Taps: indices must lie in [0, {n_in}), got [{idx.min()}, {idx.max()}]")
        if wts is None and idx.shape[1] != 1:
            raise FgradValueError("Taps: without weights there must be one tap per output")
        self.idx = idx
        self.wts = None if wts is None else np.ascontiguousarray(wts, np.float64)
        self.n_in = int(n_in)
        self._key = (self.n_in, idx.shape, idx.tobytes(), None if wts is None else self.wts.tobytes())

    @property
    def n_out(self) -> int:
        return self.idx.shape[0]

    def __eq__(self, other) -> bool:
        return isinstance(other, Taps) and self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)

    def __repr__(self) -> str:
        kind = "gather" if self.wts is None else f"{self.idx.shape[1]} taps"
        return f"Taps({self.n_in}->{self.n_out}, {kind})"


resample_p = Primitive("resample")
resample_transpose_p = Primitive("resample_transpose")


def _weights(taps: Taps, t: int, dtype, ndim_after: int, xp):
    w = taps.wts[:, t].astype(dtype).reshape((taps.n_out,) + (1,) * ndim_after)
    return w if xp is np else xp.asarray(w)


def _resample_impl(x, *, axis, taps, xp):
    idx = taps.idx if xp is np else xp.asarray(taps.idx)
    if taps.wts is None:
        return xp.take(x, idx[:, 0], axis=axis)
    after = x.ndim - axis - 1
    out = None
    for t in range(taps.idx.shape[1]):
        term = xp.take(x, idx[:, t], axis=axis)
        term *= _weights(taps, t, x.dtype, after, xp)
        if out is None:
            out = term
        else:
            out += term
    return out


def _add_at_rows(xp, out, axis, i, contrib):
    """out[..., i[o], ...] += contrib[..., o, ...] along `axis`, repeated indices summed.
    The rows split into passes with no repeated index (pass k holds each index's k-th
    occurrence), each one fancy-indexed add: as many passes as the largest repeat count
    (about the upsampling factor), each a plain vectorised copy-add."""
    if i.size == 0:
        return
    order = np.argsort(i, kind="stable")
    si = i[order]
    first = np.concatenate(([True], si[1:] != si[:-1]))
    run_start = np.flatnonzero(first)
    occurrence = np.empty_like(order)
    occurrence[order] = np.arange(si.size) - run_start[np.cumsum(first) - 1]
    pre = (slice(None),) * axis
    for k in range(int(occurrence.max()) + 1):
        rows = np.flatnonzero(occurrence == k)
        dst, src = i[rows], rows
        if xp is not np:
            dst, src = xp.asarray(dst), xp.asarray(src)
        out[pre + (dst,)] += contrib[pre + (src,)]


def _resample_transpose_impl(ct, *, axis, taps, n_in, xp):
    shape = ct.shape[:axis] + (n_in,) + ct.shape[axis + 1:]
    out = xp.zeros(shape, ct.dtype)
    after = ct.ndim - axis - 1
    for t in range(taps.idx.shape[1]):
        contrib = ct if taps.wts is None else ct * _weights(taps, t, ct.dtype, after, xp)
        _add_at_rows(xp, out, axis, taps.idx[:, t], contrib)
    return out


def _check(name, x, axis, taps, size_on_axis):
    if not 0 <= axis < x.ndim:
        raise ShapeError(f"{name}: axis {axis} is out of range for shape {x.shape}")
    if x.shape[axis] != size_on_axis:
        raise ShapeError(f"{name}: shape {x.shape} has {x.shape[axis]} elements along axis {axis}, "
                         f"but the taps {taps} expect {size_on_axis}")


def _resample_aval(x, *, axis, taps):
    _check("resample", x, axis, taps, taps.n_in)
    return ShapedArray(x.shape[:axis] + (taps.n_out,) + x.shape[axis + 1:], x.dtype)


def _resample_transpose_aval(ct, *, axis, taps, n_in):
    _check("resample_transpose", ct, axis, taps, taps.n_out)
    return ShapedArray(ct.shape[:axis] + (n_in,) + ct.shape[axis + 1:], ct.dtype)


resample_p.def_impl(_resample_impl)
resample_p.def_abstract_eval(_resample_aval)
def_linear(resample_p, lambda ct, x_aval, *, axis, taps: resample_transpose_p.bind(
    ct, axis=axis, taps=taps, n_in=x_aval.shape[axis]))
resample_p.def_batch(lambda n, vals, dims, *, axis, taps: (
    resample_p.bind(move_to_front(vals[0], dims[0]), axis=axis + 1, taps=taps), 0))

resample_transpose_p.def_impl(_resample_transpose_impl)
resample_transpose_p.def_abstract_eval(_resample_transpose_aval)
def_linear(resample_transpose_p, lambda ct, c_aval, *, axis, taps, n_in: resample_p.bind(
    ct, axis=axis, taps=taps))
resample_transpose_p.def_batch(lambda n, vals, dims, *, axis, taps, n_in: (
    resample_transpose_p.bind(move_to_front(vals[0], dims[0]), axis=axis + 1, taps=taps, n_in=n_in), 0))


def resample(x, axis: int, idx, wts=None):
    """y[..., o, ...] = sum_t wts[o, t] * x[..., idx[o, t], ...] along `axis` (wts None:
    idx is [out, 1] and y a plain gather). idx and wts are fixed (NumPy) arrays."""
    shape = shape_of(x)
    axis = int(axis) % len(shape)
    return resample_p.bind(x, axis=axis, taps=Taps(idx, wts, shape[axis]))


def resample_transpose(ct, axis: int, idx, wts, n_in: int):
    """The transpose of resample: each ct[..., o, ...] added, weighted by wts[o, t], at
    idx[o, t] of an axis of size n_in."""
    axis = int(axis) % len(shape_of(ct))
    return resample_transpose_p.bind(ct, axis=axis, taps=Taps(idx, wts, n_in), n_in=int(n_in))
