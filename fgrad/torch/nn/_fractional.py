"""Fractional max pooling (Graham, 2014) as PyTorch computes it: per (sample, channel) plane,
random samples u in [0, 1) (drawn with torch.rand from the default generator, or given as
_random_samples) place the pooling windows at

    start[i] = int((i + u) * alpha) - int(u * alpha),  alpha = (in - k) / (out - 1),
    start[out - 1] = in - k

in the input's floating dtype (float32 arithmetic for float32 input, as ATen's kernel), and
each output is its window's first maximum (or a NaN in it). Index layout: h * W + w (2-D),
t * H * W + h * W + w (3-D). Written as a gather of the windows, so it differentiates to any
order."""
from __future__ import annotations

import numpy as np

from ... import numpy as fnp
from ...core.errors import FgradRuntimeError, FgradValueError
from .._tensor import creation
from .._tensor.tensor import Tensor
from ._spatial import batched, ntuple, unbatched
from ._util import arr, concrete_or_none, dtype, shape, torch_op

__all__ = ["fractional_max_pool2d", "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
           "fractional_max_pool3d_with_indices"]


def _starts(u: np.ndarray, n_in: int, n_out: int, k: int) -> np.ndarray:
    """[planes, n_out] window starts of one axis, from samples u [planes] (in u's dtype)."""
    f = u.dtype.type
    starts = np.empty(u.shape + (n_out,), np.int64)
    if n_out > 1:
        alpha = f(n_in - k) / f(n_out - 1)
        i = np.arange(n_out - 1, dtype=u.dtype)
        starts[..., :-1] = ((i[None, :] + u[:, None]) * alpha).astype(np.int64) - \
            (u[:, None] * alpha).astype(np.int64)
    starts[..., n_out - 1] = n_in - k
    return starts


def _fractional(name: str, input, kernel_size, output_size, output_ratio, samples, n: int):
    """(values, indices) of n-D fractional max pooling of a batched or unbatched input."""
    x = arr(input, name)
    if len(shape(x)) not in (n + 1, n + 2):
        raise FgradRuntimeError(f"{name}: Expected {n + 1}D or {n + 2}D tensor, but got {list(shape(x))}")
    x, squeeze = batched(name, x, n)
    N, C = shape(x)[:2]
    sizes = shape(x)[2:]
    k = ntuple(kernel_size, n, f"{name}: kernel_size")
    if output_size is None:
        ratio = tuple(output_ratio) if isinstance(output_ratio, (list, tuple)) else (output_ratio,) * n
        if len(ratio) != n or not all(0 < r < 1 for r in ratio):
            raise FgradValueError(f"{name}: output_ratio must be a number or {n} numbers in (0, 1), got "
                                  f"{output_ratio!r}")
        out = tuple(int(s * r) for s, r in zip(sizes, ratio))
    else:
        out = ntuple(output_size, n, f"{name}: output_size")
    for s, o, kk in zip(sizes, out, k):
        if o + kk - 1 > s:
            raise FgradRuntimeError(f"{name}: out(): pool size {kk} too large relative to input size {s} for "
                                    f"output size {o} (needs output_size + kernel_size - 1 <= input size)")
    u = np.asarray(concrete_or_none(samples))
    if u.shape != (N, C, n):
        raise FgradRuntimeError(f"{name}: expected _random_samples of shape {[N, C, n]}, got {list(u.shape)}")
    u = u.reshape(N * C, n).astype(np.dtype(dtype(x)), copy=False)
    # ATen reads the samples as (W, H) in 2-D and (T, H, W) in 3-D
    order = (1, 0) if n == 2 else (0, 1, 2)
    starts = [_starts(u[:, order[a]], sizes[a], out[a], k[a]) for a in range(n)]   # [P, out_a] each
    P = N * C
    K = int(np.prod(k))
    # every tap's input position per plane: [P, *out, K]
    pos_axes = []
    for a in range(n):
        p = starts[a][:, :, None] + np.arange(k[a])[None, None, :]                    # [P, out_a, k_a]
        shp = [P] + [1] * n + [1] * n
        shp[1 + a] = out[a]
        shp[1 + n + a] = k[a]
        pos_axes.append(p.reshape(shp))
    strides = [int(np.prod(sizes[a + 1:])) for a in range(n)]
    flat = sum(pa * st for pa, st in zip(pos_axes, strides))
    flat = np.broadcast_to(flat, (P,) + out + k).reshape((P,) + out + (K,)).astype(np.int64)
    xs = fnp.reshape(x, (P, int(np.prod(sizes))))
    win = fnp.take_along_axis(xs, flat.reshape(P, -1), axis=1)
    win = fnp.reshape(win, (P,) + out + (K,))
    # the first maximum, or the first NaN (ATen's `val > max || isnan(val)`)
    nan = fnp.isnan(win)
    score = fnp.where(nan, np.inf, win)
    j = fnp.expand_dims(fnp.argmax(score, axis=-1), -1)
    y = fnp.squeeze(fnp.take_along_axis(win, j, axis=-1), -1)
    idx = fnp.squeeze(fnp.take_along_axis(flat, j, axis=-1), -1)
    y = fnp.reshape(y, (N, C) + out)
    idx = fnp.reshape(idx, (N, C) + out)
    return unbatched(y, squeeze), unbatched(idx, squeeze)


def _samples(name: str, input, n: int, _random_samples):
    if _random_samples is not None:
        return _random_samples
    s = shape(input)
    n_batch = 1 if len(s) == n + 1 else s[0]
    return creation.rand(n_batch, s[-(n + 1)], n, dtype=input.dtype if isinstance(input, Tensor) else None)


def _check_sizes(name: str, output_size, output_ratio) -> None:
    if output_size is None and output_ratio is None:
        raise FgradValueError(f"{name} requires specifying either an output_size or an output_ratio")


@torch_op("FractionalMaxPool2DBackward0", consts=("samples",))
def _fmp2d(input, kernel_size, output_size, output_ratio, samples):
    return _fractional("fractional_max_pool2d", input, kernel_size, output_size, output_ratio, samples, 2)


@torch_op("FractionalMaxPool3DBackward0", consts=("samples",))
def _fmp3d(input, kernel_size, output_size, output_ratio, samples):
    return _fractional("fractional_max_pool3d", input, kernel_size, output_size, output_ratio, samples, 3)


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices: bool = False, _random_samples=None):
    """(values, indices) of 2-D fractional max pooling of (N, C, H, W) or (C, H, W) input.

    Args:
        input: a float Tensor.
        kernel_size: the window (an int or two).
        output_size: the output's (H, W) (or an int), or None with output_ratio.
        output_ratio: the output's size as a fraction of the input's (in (0, 1)).
        return_indices: ignored (always returned).
        _random_samples: (N, C, 2) samples in [0, 1); drawn with torch.rand when None.

    Returns:
        (values, int64 indices h * W + w).

    Raises:
        ValueError: neither output_size nor output_ratio.
        RuntimeError: a window that does not fit, or samples of the wrong shape."""
    _check_sizes("fractional_max_pool2d", output_size, output_ratio)
    return _fmp2d(input, kernel_size, output_size, output_ratio, _samples("fractional_max_pool2d", input, 2,
                                                                           _random_samples))


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices: bool = False, _random_samples=None):
    """2-D fractional max pooling (see fractional_max_pool2d_with_indices).

    Args:
        input, kernel_size, output_size, output_ratio, _random_samples: as there.
        return_indices: also return the indices.

    Returns:
        The pooled Tensor, or (values, indices)."""
    out = fractional_max_pool2d_with_indices(input, kernel_size, output_size, output_ratio, True, _random_samples)
    return out if return_indices else out[0]


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices: bool = False, _random_samples=None):
    """(values, indices) of 3-D fractional max pooling of (N, C, T, H, W) or (C, T, H, W) input.

    Args:
        input: a float Tensor.
        kernel_size: the window (an int or three).
        output_size: the output's (T, H, W) (or an int), or None with output_ratio.
        output_ratio: the output's size as a fraction of the input's.
        return_indices: ignored (always returned).
        _random_samples: (N, C, 3) samples in [0, 1); drawn with torch.rand when None.

    Returns:
        (values, int64 indices t * H * W + h * W + w).

    Raises:
        ValueError: neither output_size nor output_ratio.
        RuntimeError: a window that does not fit, or samples of the wrong shape."""
    _check_sizes("fractional_max_pool3d", output_size, output_ratio)
    return _fmp3d(input, kernel_size, output_size, output_ratio, _samples("fractional_max_pool3d", input, 3,
                                                                           _random_samples))


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices: bool = False, _random_samples=None):
    """3-D fractional max pooling (see fractional_max_pool3d_with_indices).

    Args:
        input, kernel_size, output_size, output_ratio, _random_samples: as there.
        return_indices: also return the indices.

    Returns:
        The pooled Tensor, or (values, indices)."""
    out = fractional_max_pool3d_with_indices(input, kernel_size, output_size, output_ratio, True, _random_samples)
    return out if return_indices else out[0]
