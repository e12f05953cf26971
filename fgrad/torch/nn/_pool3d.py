"""3-D pooling for torch.nn.functional beyond max_pool3d's values: max_pool3d_with_indices,
avg_pool3d, lp_pool3d, adaptive_max_pool3d (with indices) and max_unpool3d, with PyTorch's
output sizes, divisors, index layout (d * H * W + h * W + w of the unpadded input) and
errors. Each window's taps are strided slices of the padded input stacked on a last axis,
so the derivative of a maximum goes to the window's first maximal element (through
take_along_axis at the arg-max), as PyTorch's, and every function differentiates to any order."""
from __future__ import annotations

import itertools

import numpy as np

from ... import numpy as fnp
from ...core.errors import FgradRuntimeError
from ._pool_functional import _max_unpool, lp_pool, _output_size, _unpool_size, _window_indices
from ._spatial import batched, ntuple, unbatched
from ._util import arr, dtype, on_tensors, shape, torch_op

__all__ = ["max_pool3d", "max_pool3d_with_indices", "avg_pool3d", "lp_pool3d", "adaptive_max_pool3d",
           "adaptive_max_pool3d_with_indices", "max_unpool3d"]


def _geometry(name: str, sizes: tuple, k: tuple, st: tuple, pd: tuple, dl: tuple, ceil_mode: bool):
    """(output sizes, right paddings) of a pooling: PyTorch's pooling_output_shape, whose
    ceil_mode drops a last window that would start in the right padding."""
    if any(p > kk // 2 for p, kk in zip(pd, k)):
        raise FgradRuntimeError(f"{name}: pad should be at most half of effective kernel size, but got "
                                f"pad={pd}, kernel_size={k}")
    outs, right = [], []
    for L, kk, s, p, d in zip(sizes, k, st, pd, dl):
        span = d * (kk - 1) + 1
        num = L + 2 * p - span
        o = (-(-num // s) if ceil_mode else num // s) + 1
        if ceil_mode and (o - 1) * s >= L + p:
            o -= 1
        if o <= 0:
            raise FgradRuntimeError(f"{name}: the output size is too small: input sizes {list(sizes)} with "
                                    f"kernel_size={k}, stride={st}, padding={pd}, dilation={dl}")
        outs.append(o)
        right.append(max(0, (o - 1) * s + span - (L + p)))
    return tuple(outs), tuple(right)


def _taps(x, k, st, pd, dl, outs, right, fill):
    """[N, C, Do, Ho, Wo, K]: every window's taps of a batched x, in (a, b, c) order."""
    widths = [(0, 0), (0, 0)] + [(p, r) for p, r in zip(pd, right)]
    v = fnp.pad(x, widths, constant_values=fill)
    taps = []
    for a, b, c in itertools.product(*[range(kk) for kk in k]):
        starts = (a * dl[0], b * dl[1], c * dl[2])
        idx = (slice(None), slice(None)) + tuple(slice(s0, s0 + (o - 1) * s + 1, s)
                                                 for s0, o, s in zip(starts, outs, st))
        taps.append(v[idx])
    return fnp.stack(taps, axis=-1)


def _params3(name: str, kernel_size, stride, padding, dilation=1):
    k = ntuple(kernel_size, 3, f"{name}: kernel_size")
    st = k if stride is None or (isinstance(stride, (list, tuple)) and not stride) else \
        ntuple(stride, 3, f"{name}: stride")
    return k, st, ntuple(padding, 3, f"{name}: padding"), ntuple(dilation, 3, f"{name}: dilation")


def _at_argmax(win, pos):
    """(values, positions) of each window's first maximum; win [..., K], pos [..., K] (int64)."""
    j = fnp.expand_dims(fnp.argmax(win, axis=-1), -1)
    y = fnp.squeeze(fnp.take_along_axis(win, j, axis=-1), -1)
    idx = fnp.squeeze(fnp.take_along_axis(np.broadcast_to(pos, shape(win)), j, axis=-1), -1)
    return y, idx


@torch_op("MaxPool3DWithIndicesBackward0")
def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode: bool = False, return_indices: bool = False):
    """(values, indices) of 3-D max pooling of (N, C, D, H, W) or (C, D, H, W) input.

    Args:
        input: a float Tensor (or array).
        kernel_size, stride, padding, dilation: an int or three (stride None: the kernel).
        ceil_mode: keep a last partial window that starts inside the input or left padding.
        return_indices: ignored (PyTorch's spelling always returns them).

    Returns:
        (values, int64 indices d * H * W + h * W + w into each (D, H, W) volume).

    Raises:
        RuntimeError: a 3-D or 6-D input, padding over half the kernel, an empty output."""
    x = arr(input, "max_pool3d")
    if len(shape(x)) not in (4, 5):
        raise FgradRuntimeError(f"max_pool3d: Expected 4D or 5D tensor for input, but got {len(shape(x))}D "
                                f"(shape {list(shape(x))})")
    x, squeeze = batched("max_pool3d", x, 3)
    k, st, pd, dl = _params3("max_pool3d", kernel_size, stride, padding, dilation)
    D, H, W = shape(x)[2:]
    outs, right = _geometry("max_pool3d", (D, H, W), k, st, pd, dl, ceil_mode)
    win = _taps(x, k, st, pd, dl, outs, right, -np.inf)
    # the input position of every tap of every window
    grids = [np.arange(o)[:, None] * s - p + np.arange(kk)[None, :] * d
             for o, s, p, kk, d in zip(outs, st, pd, k, dl)]                     # [o, k] per axis
    pos = (grids[0][:, None, None, :, None, None] * (H * W) + grids[1][None, :, None, None, :, None] * W
           + grids[2][None, None, :, None, None, :]).reshape(outs + (-1,)).astype(np.int64)
    y, idx = _at_argmax(win, pos)
    return unbatched(y, squeeze), unbatched(idx, squeeze)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """3-D max pooling of (N, C, D, H, W) or (C, D, H, W) input; the derivative goes to each
    window's first maximum.

    Args:
        input: a float Tensor (or array).
        kernel_size, stride, padding, dilation: an int or three (stride None: the kernel).
        ceil_mode: keep a last partial window that starts inside the input or left padding.
        return_indices: also return the int64 flat indices d * H * W + h * W + w.

    Returns:
        The pooled Tensor, or (values, indices)."""
    out = max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return out if return_indices else out[0]


@torch_op("AvgPool3DBackward0")
def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None):
    """The mean over each window of (N, C, D, H, W) or (C, D, H, W) input, PyTorch's divisor:
    divisor_override, else the window's size clipped to the padded input (count_include_pad)
    or to the input itself.

    Args:
        input: a float Tensor (or array).
        kernel_size, stride, padding: an int or three (stride None: the kernel).
        ceil_mode: keep a last partial window.
        count_include_pad: count the zero padding in the divisor.
        divisor_override: a fixed divisor (non-zero).

    Returns:
        The pooled Tensor.

    Raises:
        RuntimeError: a wrong input rank, padding over half the kernel, divisor_override 0."""
    x = arr(input, "avg_pool3d")
    if len(shape(x)) not in (4, 5):
        raise FgradRuntimeError(f"avg_pool3d: Expected 4D or 5D tensor for input, but got {len(shape(x))}D")
    if divisor_override is not None and divisor_override == 0:
        raise FgradRuntimeError("avg_pool3d: divisor must be not zero")
    x, squeeze = batched("avg_pool3d", x, 3)
    k, st, pd, _ = _params3("avg_pool3d", kernel_size, stride, padding)
    sizes = shape(x)[2:]
    outs, right = _geometry("avg_pool3d", sizes, k, st, pd, (1, 1, 1), ceil_mode)
    total = fnp.sum(_taps(x, k, st, pd, (1, 1, 1), outs, right, 0.0), axis=-1)
    if divisor_override is not None:
        div = np.full(outs, float(divisor_override))
    else:
        counts = []
        for L, kk, s, p, o in zip(sizes, k, st, pd, outs):
            start = np.arange(o) * s - p
            end = np.minimum(start + kk, L + p)
            counts.append(end - start if count_include_pad else np.minimum(end, L) - np.maximum(start, 0))
        div = (counts[0][:, None, None] * counts[1][None, :, None] * counts[2][None, None, :]).astype(np.float64)
    y = fnp.divide(total, div.astype(dtype(x)))
    return unbatched(y, squeeze)


@on_tensors
def lp_pool3d(input, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False):
    """(sum over each window of x**p)**(1/p) on (N, C, D, H, W) or (C, D, H, W) input, as
    PyTorch computes it (through avg_pool3d of x**p).

    Args:
        input: a float Tensor (or array).
        norm_type: p.
        kernel_size, stride: an int or three (stride None: the kernel).
        ceil_mode: keep a last partial window.

    Returns:
        The pooled Tensor."""
    k = ntuple(kernel_size, 3, "lp_pool3d: kernel_size")
    return lp_pool(input, norm_type, kernel_size, stride, ceil_mode, k[0] * k[1] * k[2], avg_pool3d, max_pool3d)


def _adaptive_max3d(input, output_size):
    x = arr(input, "adaptive_max_pool3d")
    if len(shape(x)) not in (4, 5):
        raise FgradRuntimeError(f"adaptive_max_pool3d(): Expected 4D or 5D tensor, but got {list(shape(x))}")
    x, squeeze = batched("adaptive_max_pool3d", x, 3)
    D, H, W = shape(x)[2:]
    out = _output_size("adaptive_max_pool3d", output_size, (D, H, W))
    R = [_window_indices(n, o) for n, o in zip((D, H, W), out)]                # [o, K] per axis
    K = [r.shape[1] for r in R]
    win = x[:, :, R[0][:, :, None, None, None, None], R[1][None, None, :, :, None, None],
            R[2][None, None, None, None, :, :]]                                 # [N, C, o0, K0, o1, K1, o2, K2]
    win = fnp.reshape(fnp.transpose(win, (0, 1, 2, 4, 6, 3, 5, 7)), tuple(shape(x)[:2]) + out + (-1,))
    pos = (R[0][:, None, None, :, None, None] * (H * W) + R[1][None, :, None, None, :, None] * W
           + R[2][None, None, :, None, None, :]).reshape(out + (K[0] * K[1] * K[2],)).astype(np.int64)
    y, idx = _at_argmax(win, pos)
    return unbatched(y, squeeze), unbatched(idx, squeeze)


@torch_op("AdaptiveMaxPool3DBackward0")
def adaptive_max_pool3d_with_indices(input, output_size, return_indices: bool = False):
    """(values, indices) of adaptive 3-D max pooling (see adaptive_max_pool3d).

    Args:
        input: (N, C, D, H, W) or (C, D, H, W).
        output_size: an int or three (None keeps that size).
        return_indices: ignored (always returned).

    Returns:
        (values, int64 indices d * H * W + h * W + w)."""
    return _adaptive_max3d(input, output_size)


@torch_op("AdaptiveMaxPool3DBackward0")
def adaptive_max_pool3d(input, output_size, return_indices: bool = False):
    """Max pooling of (N, C, D, H, W) or (C, D, H, W) input into output_size adaptive windows
    (output index o covers [floor(o L / O), ceil((o + 1) L / O)) on each axis); the
    derivative goes to each window's first maximum.

    Args:
        input: a float Tensor (or array).
        output_size: an int or three (None keeps that size).
        return_indices: also return the int64 flat indices.

    Returns:
        The pooled Tensor, or (values, indices)."""
    y, idx = _adaptive_max3d(input, output_size)
    return (y, idx) if return_indices else y


@torch_op("MaxUnpool3DBackward0", consts=("indices",))
def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool3d: each value of (N, C, D, H, W) or (C, D, H, W) input
    placed at its flat index (from max_pool3d(return_indices=True)) of a zero volume of size
    (D - 1) * stride - 2 * padding + kernel_size per axis (or output_size).

    Args:
        input: the pooled values.
        indices: their int64 flat indices.
        kernel_size, stride, padding: the pooling's (stride None: the kernel).
        output_size: the volume's size (D, H, W), optionally with N and C in front.

    Returns:
        The unpooled Tensor.

    Raises:
        RuntimeError: indices of another shape or out of range."""
    x, squeeze = batched("max_unpool3d", arr(input, "max_unpool3d"), 3)
    ind, _ = batched("max_unpool3d", indices, 3)
    k, st, pd, _ = _params3("max_unpool3d", kernel_size, stride, padding)
    out = _unpool_size("max_unpool3d", shape(x)[2:], k, st, pd, output_size)
    return unbatched(_max_unpool("max_unpool3d", x, ind, out), squeeze)
