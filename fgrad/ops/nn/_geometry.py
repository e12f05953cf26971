"""Helpers shared by the nn primitive modules: argument normalisation (_pair), window views
and padding of NCHW images, pooling geometry, the checked bind of the public functions and
the batching rule that folds a vmapped axis into the image batch axis N."""
from __future__ import annotations

import numpy as np

from ...core.avals import ShapedArray
from ...core.errors import FgradValueError, ShapeError
from ...core.rules import shape_of
from ...core.trace import aval_of
from .._batching import loop_batch
from ..shape import batch_front, reshape


def _pair(v, name: str) -> tuple:
    if isinstance(v, (int, np.integer)):
        return (int(v), int(v))
    v = tuple(int(a) for a in v)
    if len(v) == 1:
        return v * 2
    if len(v) != 2:
        raise FgradValueError(f"{name} must be an int or a pair of ints, got {v}")
    return v


def _windows(xp, x, out_hw, window, strides, dilation):
    """View [N, C, Ho, Wo, kh, kw] of the windows of the 4-d array x (no copy)."""
    N, C = x.shape[:2]
    sN, sC, sH, sW = x.strides
    (Ho, Wo), (kh, kw), (sh, sw), (dh, dw) = out_hw, window, strides, dilation
    return xp.lib.stride_tricks.as_strided(
        x, (N, C, Ho, Wo, kh, kw), (sN, sC, sH * sh, sW * sw, sH * dh, sW * dw), writeable=False)


def _pad(xp, x, padding, fill=0):
    """x with (lo, hi) padding (non-negative) on its two spatial axes, filled with `fill`."""
    (plo, phi), (qlo, qhi) = padding
    if plo == phi == qlo == qhi == 0:
        return x
    N, C, H, W = x.shape
    out = (xp.zeros if fill == 0 else lambda shape, dtype: xp.full(shape, fill, dtype))(
        (N, C, H + plo + phi, W + qlo + qhi), x.dtype)
    out[:, :, plo:plo + H, qlo:qlo + W] = x
    return out


def _dilated(n, d):
    return 0 if n == 0 else (n - 1) * d + 1


def _checked_bind(prim, args, params):
    """bind after the shape/dtype rule: eager evaluation runs only impls, and the rules'
    messages (naming both shapes) beat a failure deep inside a kernel."""
    prim.abstract_eval(*[aval_of(a) for a in args], **params)
    return prim.bind(*args, **params)


# --- batching: image ops fold the vmapped axis into the batch axis N; anything else
# (per-example kernels, per-example weight gradients) falls back to vmap's loop.

def _fold_batch(prim, n_fold):
    """Rule for a primitive whose first `n_fold` operands are [N, ...] images: with the
    vmapped axis moved to the front, [B, N, ...] is reshaped to [B*N, ...] and back."""

    def rule(n, vals, dims, **params):
        if any(d is not None for d in dims[n_fold:]):
            return loop_batch(prim, n, vals, dims, **params)
        lead = batch_front(n, vals[:n_fold], dims[:n_fold])
        folded = [reshape(v, (shape_of(v)[0] * shape_of(v)[1],) + tuple(shape_of(v)[2:])) for v in lead]
        out = prim.bind(*folded, *vals[n_fold:], **params)
        s = shape_of(out)
        return reshape(out, (n, s[0] // n) + tuple(s[1:])), 0
    return rule


# --- pooling geometry -------------------------------------------------------------------------

def _pool_params(kernel_size, stride, padding, dilation=1, ceil_mode=False):
    k = _pair(kernel_size, "kernel_size")
    s = k if stride is None or (not isinstance(stride, (int, np.integer)) and len(stride) == 0) \
        else _pair(stride, "stride")
    p = _pair(padding, "padding")
    d = _pair(dilation, "dilation")
    for kk, pp, dd in zip(k, p, d):
        if kk <= 0 or dd <= 0:
            raise FgradValueError(f"pooling: kernel_size {k} and dilation {d} must be positive")
        if pp < 0 or 2 * pp > kk:
            raise FgradValueError(f"pooling: padding {p} should be at most half of the kernel size {k}")
    if min(s) <= 0:
        raise FgradValueError(f"pooling: stride {s} must be positive")
    return dict(window=k, strides=s, padding=p, dilation=d, ceil_mode=bool(ceil_mode))


def _pool_out(n, k, s, p, d, ceil_mode):
    span = n + 2 * p - _dilated(k, d)
    if span < 0:
        return 0
    if ceil_mode:
        out = -(-span // s) + 1
        if (out - 1) * s >= n + p:  # the last window must start inside the input or left pad
            out -= 1
        return out
    return span // s + 1


def _pool_hw(shape, window, strides, padding, dilation, ceil_mode):
    return tuple(_pool_out(n, k, s, p, d, ceil_mode)
                 for n, k, s, p, d in zip(shape[-2:], window, strides, padding, dilation))


def _pool_aval(name):
    def rule(x, *rest, window, strides, padding, dilation, ceil_mode, **_):
        if x.ndim != 4:
            raise ShapeError(f"{name}: expected input [N, C, H, W], got shape {x.shape}")
        hw = _pool_hw(x.shape, window, strides, padding, dilation, ceil_mode)
        if min(hw) <= 0:
            raise ShapeError(f"{name}: input shape {x.shape} (padding {padding}) is smaller than "
                             f"the window {window} (dilation {dilation})")
        return ShapedArray(x.shape[:2] + hw, x.dtype)
    return rule


def _pool_pads(shape, hw, window, strides, padding, dilation):
    return [(p, max((o - 1) * s + _dilated(k, d) - n - p, 0))
            for n, o, k, s, p, d in zip(shape[2:], hw, window, strides, padding, dilation)]


def _pool_padded_hw(shape, hw, window, strides, padding, dilation):
    return tuple(n + lo + hi for n, (lo, hi) in
                 zip(shape[2:], _pool_pads(shape, hw, window, strides, padding, dilation)))


def _padded_for_pool(xp, x, hw, window, strides, padding, dilation, fill):
    """x padded on the two spatial axes so that every window lies inside it."""
    return _pad(xp, x, _pool_pads(x.shape, hw, window, strides, padding, dilation), fill)


def _offset_views(a, hw, window, strides, dilation):
    """For each window offset (i, j), in row-major order: the strided view of `a`
    holding that element of every window, shape [N, C, Ho, Wo]."""
    (Ho, Wo), (kh, kw), (sh, sw), (dh, dw) = hw, window, strides, dilation
    for i in range(kh):
        for j in range(kw):
            yield a[:, :, i * dh:i * dh + (Ho - 1) * sh + 1:sh, j * dw:j * dw + (Wo - 1) * sw + 1:sw]


def _crop_like(xp, gpad, x_shape, padding):
    (ph, pw), (H, W) = padding, x_shape[2:]
    g = gpad[:, :, ph:ph + H, pw:pw + W]
    return g if g.flags.c_contiguous else xp.ascontiguousarray(g)
