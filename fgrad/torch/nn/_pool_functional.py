"""Pooling of fgrad.torch.nn.functional: max/avg pooling in 1-D and 2-D (max with return_indices),
adaptive average (1-D to 3-D) and max (1-D, 2-D) pooling, power-average (LP) pooling, and
max unpooling.

The 1-D functions are the 2-D primitives (fgrad.ops.nn.pool) on inputs of height 1. Max
pooling routes each window's derivative to the window's first maximal element (PyTorch's
rule; ties are not split), and its indices are flat h * W + w positions, as PyTorch's.
Adaptive average pooling is a reshape-and-mean when the windows tile the input, else the
resample primitive with each (variable-sized) window's taps, one axis at a time; adaptive
max pooling is max_pool2d when the windows tile the input, else the first arg-max of each
gathered window.

On Tensors each is one torch op named as PyTorch's node (MaxPool2DWithIndicesBackward0,
AdaptiveAvgPool2DBackward0, ...; the 1-D ones as PyTorch's graph: the 2-D pooling of
x.unsqueeze(-2), squeezed back);
max_pool2d binds its primitive directly (the CNN training path's fast path).
"""
from __future__ import annotations

import numpy as np

from ... import numpy as fnp
from ...core.errors import FgradRuntimeError, FgradValueError
from ...core.trace import aval_of
from ... import lax
from ...extend import nn as nnops
from ...extend.lax import ARRAY, Slice, getitem, scatter_add
from ...extend.lax import reshape, transpose
from ._spatial import adaptive_avg_axis, adaptive_windows, batched, check_rank, ntuple, unbatched
from ...extend.numpy import fresh
from ...extend.nn import pool_params as _pool_params
from .._tensor._boundary import call
from .._tensor.tensor import Tensor, _tensor_bind
from ._util import arr, concrete_or_none, on_tensors, shape, torch_op, val
from .._tensor.tensor import wrap as _wrap

__all__ = ["max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d", "adaptive_avg_pool1d",
           "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d",
           "lp_pool1d", "lp_pool2d", "max_unpool1d", "max_unpool2d"]


_ALL = Slice(None, None, 1)


def _stride(stride, kernel: tuple, n: int, name: str) -> tuple:
    if stride is None or (not isinstance(stride, (int, np.integer)) and len(stride) == 0):
        return kernel
    return ntuple(stride, n, f"{name}: stride")


def _height1(x):
    N, C, L = shape(x)
    return reshape(x, (N, C, 1, L))


def _drop_height(y):
    s = shape(y)
    return reshape(y, s[:2] + (s[3],))


# --- max pooling ---------------------------------------------------------------------------------

def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """Max over windows of input [N, C, H, W] (or [C, H, W]); the derivative goes to the first
    maximal element of each window. With return_indices, also the flat index h * W + w
    (int64) of that element, as max_unpool2d takes it. On a 4-D Tensor the primitive's own
    node (PyTorch's MaxPool2DWithIndicesBackward0) is the fast path."""
    x = arr(input, "max_pool2d")
    if isinstance(x, Tensor):
        if len(x._value.shape) == 4:
            params = _pool_params(kernel_size, stride, padding, dilation, ceil_mode)
            lax.max_pool2d_p.abstract_eval(aval_of(x._value), **params)
            y = _tensor_bind(lax.max_pool2d_p, (x,), params)
            if not return_indices:
                return y
            return y, _wrap(nnops.max_pool2d_indices(x._value, kernel_size, stride, padding, dilation,
                                                           ceil_mode))
        return call("MaxPool2DWithIndicesBackward0", _max_pool2d,
                    (x, kernel_size, stride, padding, dilation, ceil_mode, return_indices))
    return _max_pool2d(x, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def _max_pool2d(x, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    x, squeeze = batched("max_pool2d", x, 2)
    y = unbatched(nnops.max_pool2d(x, kernel_size, stride, padding, dilation, ceil_mode), squeeze)
    if not return_indices:
        return y
    idx = nnops.max_pool2d_indices(x, kernel_size, stride, padding, dilation, ceil_mode)
    return y, unbatched(idx, squeeze)


def _squeezed(out, return_indices: bool):
    """The 2-D pooling of x.unsqueeze(-2) squeezed back (PyTorch's 1-D pooling graph)."""
    return tuple(o.squeeze(-2) for o in out) if return_indices else out.squeeze(-2)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """Max over windows of input [N, C, L] (or [C, L]); see max_pool2d. On Tensors PyTorch's
    graph: max_pool2d of x.unsqueeze(-2), squeezed back."""
    x = arr(input, "max_pool1d")
    check_rank("max_pool1d", x, 1)
    k = ntuple(kernel_size, 1, "max_pool1d: kernel_size")
    params = ((1,) + k, (1,) + _stride(stride, k, 1, "max_pool1d"),
              (0,) + ntuple(padding, 1, "max_pool1d: padding"),
              (1,) + ntuple(dilation, 1, "max_pool1d: dilation"), ceil_mode)
    if isinstance(x, Tensor):
        return _squeezed(max_pool2d(x.unsqueeze(-2), *params, return_indices=return_indices), return_indices)
    x, squeeze = batched("max_pool1d", x, 1)
    x4 = _height1(x)
    y = unbatched(_drop_height(nnops.max_pool2d(x4, *params)), squeeze)
    if not return_indices:
        return y
    # with height 1 the flat index h * W + w is the position along L
    return y, unbatched(_drop_height(nnops.max_pool2d_indices(x4, *params)), squeeze)


# --- average pooling -----------------------------------------------------------------------------

@torch_op("AvgPool2DBackward0")
def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override=None):
    """Mean over windows of input [N, C, H, W] (or [C, H, W]); linear. count_include_pad
    counts the zero padding in the divisor; divisor_override replaces the divisor."""
    x, squeeze = batched("avg_pool2d", arr(input, "avg_pool2d"), 2)
    y = nnops.avg_pool2d(x, kernel_size, stride, padding, ceil_mode, count_include_pad,
                         divisor_override)
    return unbatched(y, squeeze)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True):
    """Mean over windows of input [N, C, L] (or [C, L]); see avg_pool2d. On Tensors PyTorch's
    graph: avg_pool2d of x.unsqueeze(-2), squeezed back."""
    x = arr(input, "avg_pool1d")
    check_rank("avg_pool1d", x, 1)
    k = ntuple(kernel_size, 1, "avg_pool1d: kernel_size")
    params = ((1,) + k, (1,) + _stride(stride, k, 1, "avg_pool1d"), (0,) + ntuple(padding, 1, "avg_pool1d: padding"),
              ceil_mode, count_include_pad)
    if isinstance(x, Tensor):
        return avg_pool2d(x.unsqueeze(-2), *params).squeeze(-2)
    x, squeeze = batched("avg_pool1d", x, 1)
    return unbatched(_drop_height(nnops.avg_pool2d(_height1(x), *params)), squeeze)


# --- adaptive pooling ----------------------------------------------------------------------------

def _output_size(name: str, output_size, in_sizes: tuple) -> tuple:
    """PyTorch's output_size: an int, or a tuple whose None entries keep the input's size."""
    n = len(in_sizes)
    if output_size is None or isinstance(output_size, (int, np.integer)):
        out = (output_size,) * n
    else:
        out = tuple(output_size)
        if len(out) == 1:
            out = out * n
        if len(out) != n:
            raise FgradValueError(f"{name}: output_size must be an int or a tuple of {n}, got {output_size!r}")
    out = tuple(s if o is None else int(o) for o, s in zip(out, in_sizes))
    if min(out) < 0 or (min(out) == 0 and min(in_sizes) > 0):
        raise FgradRuntimeError(f"{name}: elements of output_size must be greater than or equal to 0 "
                           f"(and positive for a non-empty input), got {out}")
    return out


@torch_op("AdaptiveAvgPool2DBackward0")
def adaptive_avg_pool2d(input, output_size):
    """Average pooling of input [N, C, H, W] (or [C, H, W]) into output_size (Ho, Wo): output
    row o averages input rows [floor(o H / Ho), ceil((o + 1) H / Ho)), likewise in W."""
    x = arr(input, "adaptive_avg_pool2d")
    if len(shape(x)) not in (3, 4):
        raise FgradRuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {list(shape(x))}")
    Ho, Wo = _output_size("adaptive_avg_pool2d", output_size, shape(x)[-2:])
    nd = len(shape(x))
    # (windows of one entry: a new tensor all the same, as PyTorch's)
    return fresh(adaptive_avg_axis(adaptive_avg_axis(x, nd - 2, Ho), nd - 1, Wo), input)


@torch_op("AdaptiveAvgPool3DBackward0")
def adaptive_avg_pool3d(input, output_size):
    """Average pooling of input [N, C, D, H, W] (or [C, D, H, W]) into output_size
    (Do, Ho, Wo) with the adaptive windows of adaptive_avg_pool2d, one axis at a time."""
    x = arr(input, "adaptive_avg_pool3d")
    if len(shape(x)) not in (4, 5):
        raise FgradRuntimeError(f"adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got {list(shape(x))}")
    out = _output_size("adaptive_avg_pool3d", output_size, shape(x)[-3:])
    nd = len(shape(x))
    for k, o in enumerate(out):
        x = adaptive_avg_axis(x, nd - 3 + k, o)
    return fresh(x, input)


def adaptive_avg_pool1d(input, output_size):
    """Average pooling of input [N, C, L] (or [C, L]) into output_size windows (see
    adaptive_avg_pool2d). On Tensors PyTorch's graph: adaptive_avg_pool2d of x.unsqueeze(-2),
    squeezed back."""
    x = arr(input, "adaptive_avg_pool1d")
    if len(shape(x)) not in (2, 3):
        raise FgradRuntimeError(f"adaptive_avg_pool1d(): Expected 2D or 3D tensor, but got {list(shape(x))}")
    (Lo,) = _output_size("adaptive_avg_pool1d", output_size, shape(x)[-1:])
    if isinstance(x, Tensor):
        return adaptive_avg_pool2d(x.unsqueeze(-2), (1, Lo)).squeeze(-2)
    return fresh(adaptive_avg_axis(x, len(shape(x)) - 1, Lo), input)


def _window_indices(n: int, out: int) -> np.ndarray:
    """[out, T]: each adaptive window's positions, short windows padded by repeating their
    first position (after it, so a window's first maximum is still an original element)."""
    start, length = adaptive_windows(n, out)
    t = np.arange(int(length.max()))
    return np.where(t < length[:, None], start[:, None] + t, start[:, None])


def _adaptive_max(x, out_hw: tuple, return_indices: bool):
    """Adaptive max pooling of a batched x [N, C, H, W]: values and (or None) flat indices."""
    N, C, H, W = shape(x)
    Ho, Wo = out_hw
    if H % Ho == 0 and W % Wo == 0:  # the windows tile the input: plain max pooling
        k = (H // Ho, W // Wo)
        y = nnops.max_pool2d(x, k)
        return y, (nnops.max_pool2d_indices(x, k) if return_indices else None)
    R, Q = _window_indices(H, Ho), _window_indices(W, Wo)             # [Ho, Kh], [Wo, Kw]
    Kh, Kw = R.shape[1], Q.shape[1]
    win = getitem(x, (R,), (_ALL, _ALL, ARRAY))                        # [N, C, Ho, Kh, W]
    win = getitem(win, (Q,), (_ALL,) * 4 + (ARRAY,))                   # [N, C, Ho, Kh, Wo, Kw]
    win = reshape(transpose(win, (0, 1, 2, 4, 3, 5)), (N, C, Ho, Wo, Kh * Kw))
    k = fnp.expand_dims(fnp.argmax(win, axis=-1), -1)                 # each window's first maximum
    y = reshape(fnp.take_along_axis(win, k, axis=-1), (N, C, Ho, Wo))
    if not return_indices:
        return y, None
    # the flat position h * W + w of every window element, read at the arg-max
    pos = (R[:, None, :, None] * W + Q[None, :, None, :]).reshape(Ho, Wo, Kh * Kw)
    pos = np.broadcast_to(pos.astype(np.int64), (N, C, Ho, Wo, Kh * Kw))
    idx = reshape(fnp.take_along_axis(pos, k, axis=-1), (N, C, Ho, Wo))
    # the positions are a constant: the result follows the input's kind (a Tensor for a Tensor)
    return y, _wrap(idx) if isinstance(x, Tensor) and not isinstance(idx, Tensor) else idx


@torch_op("AdaptiveMaxPool2DBackward0")
def adaptive_max_pool2d(input, output_size, return_indices: bool = False):
    """Max pooling of input [N, C, H, W] (or [C, H, W]) into output_size (Ho, Wo) with the
    adaptive windows of adaptive_avg_pool2d; the derivative goes to each window's first
    maximum. With return_indices, also the flat indices h * W + w (int64)."""
    x = arr(input, "adaptive_max_pool2d")
    if len(shape(x)) not in (3, 4):
        raise FgradRuntimeError(f"adaptive_max_pool2d(): Expected 3D or 4D tensor, but got {list(shape(x))}")
    x, squeeze = batched("adaptive_max_pool2d", x, 2)
    out = _output_size("adaptive_max_pool2d", output_size, shape(x)[2:])
    y, idx = _adaptive_max(x, out, return_indices)
    y = unbatched(y, squeeze)
    return (y, unbatched(idx, squeeze)) if return_indices else y


def adaptive_max_pool1d(input, output_size, return_indices: bool = False):
    """Max pooling of input [N, C, L] (or [C, L]) into output_size adaptive windows (see
    adaptive_max_pool2d). On Tensors PyTorch's graph: adaptive_max_pool2d of x.unsqueeze(-2),
    squeezed back."""
    x = arr(input, "adaptive_max_pool1d")
    if len(shape(x)) not in (2, 3):
        raise FgradRuntimeError(f"adaptive_max_pool1d(): Expected 2D or 3D tensor, but got {list(shape(x))}")
    if isinstance(x, Tensor):
        (Lo,) = _output_size("adaptive_max_pool1d", output_size, shape(x)[-1:])
        return _squeezed(adaptive_max_pool2d(x.unsqueeze(-2), (1, Lo), return_indices), return_indices)
    x, squeeze = batched("adaptive_max_pool1d", x, 1)
    (Lo,) = _output_size("adaptive_max_pool1d", output_size, shape(x)[2:])
    y, idx = _adaptive_max(_height1(x), (1, Lo), return_indices)
    y = unbatched(_drop_height(y), squeeze)
    if not return_indices:
        return y
    return y, unbatched(_drop_height(idx), squeeze)


# --- power-average pooling -----------------------------------------------------------------------

def lp_pool(input, norm_type: float, kernel_size, stride, ceil_mode: bool, window: int, avg_pool, max_pool):
    """PyTorch's composition of lp_pool1d/2d/3d on Tensors: the window-sized sum of x**p as
    `avg_pool` times the window, sign(s) * relu(|s|) keeping a zero window's power at 0 (not
    NaN from a negative rounding error), then its 1/p-th power (PowBackward0 of MulBackward0
    of ...); p = ±inf is `max_pool` of |x| (of -|x|, negated)."""
    if norm_type == float("inf"):
        return max_pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -float("inf"):
        return -max_pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    out = avg_pool(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * out.abs().relu()).mul(window).pow(1.0 / norm_type)


@on_tensors
def lp_pool2d(input, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False):
    """(sum over each window of x**p)**(1/p) on input [N, C, H, W] (or [C, H, W]):
    p = inf is max pooling, p = 1 sum pooling."""
    kh, kw = ntuple(kernel_size, 2, "lp_pool2d: kernel_size")
    return lp_pool(input, norm_type, kernel_size, stride, ceil_mode, kh * kw, avg_pool2d, max_pool2d)


@on_tensors
def lp_pool1d(input, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False):
    """(sum over each window of x**p)**(1/p) on input [N, C, L] (or [C, L])."""
    (k,) = ntuple(kernel_size, 1, "lp_pool1d: kernel_size")
    return lp_pool(input, norm_type, kernel_size, stride, ceil_mode, k, avg_pool1d, max_pool1d)


# --- max unpooling -------------------------------------------------------------------------------

def _unpool_size(name: str, in_sizes: tuple, kernel: tuple, stride: tuple, padding: tuple,
                 output_size) -> tuple:
    default = tuple((n - 1) * s - 2 * p + k for n, s, p, k in zip(in_sizes, stride, padding, kernel))
    if output_size is None:
        return default
    out = tuple(int(v) for v in output_size)
    if len(out) == len(in_sizes) + 2:
        out = out[2:]
    elif len(out) == len(in_sizes) + 1:
        out = out[1:]
    if len(out) != len(in_sizes):
        raise FgradValueError(f"{name}: output_size must have {len(in_sizes)} or {len(in_sizes) + 2} "
                         f"elements, got {output_size!r}")
    for o, d, s in zip(out, default, stride):
        if not d - s < o < d + s:
            raise FgradValueError(f"{name}: invalid output_size {out} (dim sizes must be between "
                             f"{tuple(d - s + 1 for d, s in zip(default, stride))} and "
                             f"{tuple(d + s - 1 for d, s in zip(default, stride))})")
    return out


def _max_unpool(name: str, x, indices, out_hw: tuple):
    """A batched x [N, C, *in] scattered to flat positions `indices` of [N, C, *out_hw]."""
    s = shape(x)
    N, C = s[:2]
    L, Lout = int(np.prod(s[2:])), int(np.prod(out_hw))
    ind = val(indices)
    concrete = concrete_or_none(ind)
    if concrete is not None:
        c = np.asarray(concrete)
        if c.dtype.kind not in "iu":
            raise FgradRuntimeError(f"{name}: expected indices of an integer dtype (from max_pool with "
                               f"return_indices=True), got {c.dtype}")
        if c.size and (c.min() < 0 or c.max() >= Lout):
            bad = c.max() if c.max() >= Lout else c.min()
            raise FgradRuntimeError(f"{name}: Found an invalid max index: {int(bad)} (output volumes are of "
                               f"size {'x'.join(map(str, out_hw))})")
    if shape(ind) != tuple(s):
        raise FgradRuntimeError(f"{name}: Expected shape of indices to be same as that of the input tensor "
                           f"({list(s)}) but got indices tensor with shape: {list(shape(ind))}")
    flat_x = reshape(x, (N, C, L))
    flat_i = reshape(ind, (N, C, L))
    # positions written twice (overlapping windows) add up; PyTorch keeps one of the writes
    y = scatter_add(flat_x, (np.arange(N)[:, None, None], np.arange(C)[None, :, None], flat_i),
                    (ARRAY, ARRAY, ARRAY), (N, C, Lout))
    return reshape(y, (N, C) + tuple(out_hw))


@torch_op("MaxUnpool2DBackward0", consts=("indices",))
def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool2d: each value of input [N, C, H, W] (or [C, H, W])
    placed at its flat index h * W + w (from max_pool2d(return_indices=True)) of a zero
    image of size (H - 1) * stride - 2 * padding + kernel_size (or output_size)."""
    x, squeeze = batched("max_unpool2d", arr(input, "max_unpool2d"), 2)
    ind, _ = batched("max_unpool2d", indices, 2)
    k = ntuple(kernel_size, 2, "max_unpool2d: kernel_size")
    out = _unpool_size("max_unpool2d", shape(x)[2:], k, _stride(stride, k, 2, "max_unpool2d"),
                       ntuple(padding, 2, "max_unpool2d: padding"), output_size)
    return unbatched(_max_unpool("max_unpool2d", x, ind, out), squeeze)


@torch_op("SqueezeBackward1", consts=("indices",))
def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool1d on input [N, C, L] (or [C, L]); see max_unpool2d."""
    x, squeeze = batched("max_unpool1d", arr(input, "max_unpool1d"), 1)
    ind, _ = batched("max_unpool1d", indices, 1)
    k = ntuple(kernel_size, 1, "max_unpool1d: kernel_size")
    out = _unpool_size("max_unpool1d", shape(x)[2:], k, _stride(stride, k, 1, "max_unpool1d"),
                       ntuple(padding, 1, "max_unpool1d: padding"), output_size)
    return unbatched(_max_unpool("max_unpool1d", x, ind, out), squeeze)
