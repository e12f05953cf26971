"""Spatial helpers of fgrad.torch.nn.functional and the functions built only from them: argument
normalisation shared by the convolution, pooling and resampling families (ntuple, the
batched/unbatched input rule), separable resampling along one axis (resample_axis,
adaptive_avg_axis), F.pad, pixel_shuffle/pixel_unshuffle, and the channel-wise dropouts
(dropout1d/2d/3d, alpha_dropout, feature_alpha_dropout).

Everything is a composition of linear fgrad ops (slice, concatenate, rev, broadcast,
reshape, transpose, resample, multiplication by a mask), so every derivative order works
and each transpose is again a cheap copy: reflect/replicate/circular padding never
scatters."""
from __future__ import annotations

import math
import warnings
from typing import Sequence

import numpy as np

from ... import numpy as fnp
from ...core.errors import (
    FgradNotImplementedError,
    FgradRuntimeError,
    FgradTypeError,
    FgradValueError,
)
from ...core.trace import Tracer
from ...extend import lax as xlax
from ...extend import nn as nnops
from ...extend.lax import broadcast_in_dim, concatenate, reshape, rev, slice, transpose
from .._tensor import _random
from .._tensor.creation import _gen
from ...extend.numpy import fresh
from .._tensor._meta import SHAPES_ONLY, MetaArray
from .._tensor.tensor import Tensor
from ._util import arr, dtype, shape, torch_call, torch_op, val
from .._tensor.tensor import wrap as _wrap

__all__ = ["pad", "pixel_shuffle", "pixel_unshuffle", "dropout1d", "dropout2d", "dropout3d",
           "alpha_dropout", "feature_alpha_dropout"]


# --- argument normalisation ------------------------------------------------------------------

def ntuple(v, n: int, name: str) -> tuple:
    """An int (repeated n times) or a sequence of n ints (one int in a sequence is repeated)."""
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return (int(v),) * n
    try:
        t = tuple(int(a) for a in v)
    except TypeError:
        raise FgradTypeError(f"{name} must be an int or a tuple of {n} ints, got {v!r}") from None
    if len(t) == 1:
        return t * n
    if len(t) != n:
        raise FgradValueError(f"{name} must be an int or a tuple of {n} ints, got {v!r}")
    return t


def batched(name: str, x, n_spatial: int):
    """x with a batch axis: (x, False) for a batched input [N, C, *spatial], (x[None], True)
    for an unbatched one [C, *spatial]; anything else is PyTorch's RuntimeError."""
    s = check_rank(name, x, n_spatial)
    if len(s) == n_spatial + 2:
        return x, False
    # (a Tensor: PyTorch's unsqueeze(0), UnsqueezeBackward0)
    return (x.unsqueeze(0) if isinstance(x, Tensor) else reshape(x, (1,) + s)), True


def check_rank(name: str, x, n_spatial: int) -> tuple:
    """x's shape, when x is [N, C, *spatial] or [C, *spatial] (else PyTorch's RuntimeError)."""
    s = shape(x)
    if len(s) in (n_spatial + 1, n_spatial + 2):
        return s
    raise FgradRuntimeError(f"Expected {n_spatial + 1}D (unbatched) or {n_spatial + 2}D (batched) input to "
                       f"{name}, but got input of size: {list(s)}")


def unbatched(y, squeeze: bool):
    """The inverse of `batched` on a result (a Tensor: PyTorch's squeeze(0), SqueezeBackward1)."""
    if not squeeze:
        return y
    return y.squeeze(0) if isinstance(y, Tensor) else reshape(y, shape(y)[1:])


# --- padding ------------------------------------------------------------------------------------

def _slice_axis(x, axis: int, start: int, stop: int):
    s = shape(x)
    if start == 0 and stop == s[axis]:
        return x
    lo, hi = [0] * len(s), list(s)
    lo[axis], hi[axis] = start, stop
    return slice(x, lo, hi)


def _repeat_axis(x, axis: int, n: int):
    """x (size 1 along axis) repeated n times along it."""
    s = shape(x)
    return broadcast_in_dim(reshape(x, s[:axis] + s[axis + 1:]), s[:axis] + (n,) + s[axis + 1:],
                            tuple(i for i in range(len(s)) if i != axis))


def _pad_axis(x, axis: int, lo: int, hi: int, mode: str):
    """x padded by lo/hi >= 0 along `axis` by reflection, replication or wrapping."""
    n = shape(x)[axis]
    if mode == "reflect":
        before = rev(_slice_axis(x, axis, 1, lo + 1), (axis,)) if lo else None
        after = rev(_slice_axis(x, axis, n - 1 - hi, n - 1), (axis,)) if hi else None
    elif mode == "replicate":
        before = _repeat_axis(_slice_axis(x, axis, 0, 1), axis, lo) if lo else None
        after = _repeat_axis(_slice_axis(x, axis, n - 1, n), axis, hi) if hi else None
    else:  # circular
        before = _slice_axis(x, axis, n - lo, n) if lo else None
        after = _slice_axis(x, axis, 0, hi) if hi else None
    pieces = [p for p in (before, x, after) if p is not None]
    return pieces[0] if len(pieces) == 1 else concatenate(pieces, axis)


_MODES = ("constant", "reflect", "replicate", "circular")


def pad(input, pad: Sequence[int], mode: str = "constant", value: float | None = None):
    """PyTorch's F.pad (see _pad); on Tensors one torch op, named as PyTorch's node
    (ConstantPadNdBackward0, ReflectionPad2DBackward0, ...), but for 'circular', which is
    PyTorch's composition of copies into slices (_pad_circular)."""
    x = arr(input, "pad")
    if not isinstance(x, Tensor):
        return _pad(x, pad, mode, value)
    pad = tuple(int(p) for p in pad)
    if mode == "circular":
        widths = _pad_widths(shape(x), pad, mode, value)
        _circular_check(shape(x), widths)
        return _pad_circular(x, pad)
    n = len(pad) // 2
    name = ("ConstantPadNdBackward0" if mode == "constant"
            else f"{'Reflection' if mode == 'reflect' else 'Replication'}Pad{n}DBackward0")
    return torch_call(name, _pad, (x, pad, mode, value))


def _pad_circular(x: Tensor, pad: tuple) -> Tensor:
    """Circular padding of a Tensor as PyTorch composes it (ATen's _pad_circular), so its graph
    is PyTorch's chain of CopySlices: the (cropped) input copied into the middle of a new
    tensor, then, for each padded dimension from the last, the wrapped-around edges copied
    from the tensor's own slices.

    Args:
        x: the input, its arguments checked by the caller.
        pad: (left, right) of the last dimension, then of the one before, ...; negative entries crop.

    Returns:
        The padded Tensor.
    """
    s = tuple(x.shape)
    dims = [(len(s) - 1 - i, pad[2 * i], pad[2 * i + 1]) for i in range(len(pad) // 2)]
    out_shape = list(s)
    for d, lo, hi in dims:
        out_shape[d] = s[d] + lo + hi
    out = x.new_empty(out_shape)
    # (narrow, not indexing: PyTorch's slices are nodes also where they take a whole dimension)
    out_slice, in_slice = out, x
    for d, lo, hi in dims:
        out_slice = out_slice.narrow(d, max(lo, 0), out_shape[d] - max(lo, 0) - max(hi, 0))
        in_slice = in_slice.narrow(d, max(-lo, 0), s[d] - max(-lo, 0) - max(-hi, 0))
    out_slice.copy_(in_slice)
    for d, lo, hi in dims:
        if lo > 0:
            out.narrow(d, 0, lo).copy_(out.narrow(d, out_shape[d] - lo - max(hi, 0), lo))
        if hi > 0:
            out.narrow(d, out_shape[d] - hi, hi).copy_(out.narrow(d, max(lo, 0), hi))
    return out


def _circular_check(s: tuple, widths: list) -> None:
    """Circular padding wraps around once at most: each width within the cropped dimension."""
    for axis, (lo, hi) in enumerate(widths):
        n = s[axis] - max(-lo, 0) - max(-hi, 0)
        if lo > n or hi > n:
            raise FgradRuntimeError(f"Padding value causes wrapping around more than once: padding ({lo}, {hi}) "
                                    f"of dimension {axis} of size {n} (after cropping); pad at most the size")


def _pad_widths(s: tuple, pad: tuple, mode: str, value: float | None) -> list:
    """F.pad's arguments checked against an input of shape `s`: the signed (before, after)
    widths of each dimension."""
    if len(pad) % 2:
        raise FgradRuntimeError("Padding length must be divisible by 2")
    npad = len(pad) // 2
    if npad > len(s):
        raise FgradRuntimeError(f"Padding length should be less than or equal to two times the input "
                           f"dimension but got padding length {len(pad)} and input of dimension {len(s)}")
    if mode not in _MODES:
        raise FgradNotImplementedError(f"Unrecognised padding mode {mode}")
    if mode != "constant":
        if value is not None:
            raise FgradRuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
        if npad not in (1, 2, 3) or len(s) not in (npad + 1, npad + 2):
            raise FgradNotImplementedError(
                f"Padding size {len(pad)} is not supported for {len(s)}D input tensor.\n"
                "Supported combinations for non-constant padding:\n"
                "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
                "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
                "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    widths = [(0, 0)] * len(s)
    for k in range(npad):
        axis = len(s) - 1 - k
        lo, hi = pad[2 * k], pad[2 * k + 1]
        n = s[axis]
        if n + lo + hi < 0 or (n + min(lo, 0) + min(hi, 0) < 0):
            raise FgradRuntimeError(f"The input size {n}, plus negative padding {lo} and {hi} resulted in a "
                               f"negative output size, which is invalid. Check dimension {axis} of "
                               f"your input (shape {s}).")
        if mode == "reflect" and (lo >= n or hi >= n):
            raise FgradRuntimeError(f"Argument #4: Padding size should be less than the corresponding input "
                               f"dimension, but got: padding ({lo}, {hi}) at dimension {axis} of input "
                               f"{list(s)}")
        if mode == "replicate" and n == 0 and (lo > 0 or hi > 0):
            raise FgradRuntimeError(f"replicate padding needs a non-empty dimension {axis} to copy from, "
                               f"got input of shape {list(s)}")
        widths[axis] = (lo, hi)
    return widths


def _pad(input, pad: Sequence[int], mode: str = "constant", value: float | None = None):
    """PyTorch's F.pad: `pad` = (left, right) of the last dimension, then of the one before,
    and so on. 'constant' fills with `value` (0 by default) and pads any number of
    dimensions; 'reflect' (mirror without repeating the edge), 'replicate' (repeat the edge)
    and 'circular' (wrap around) pad the last 1, 2 or 3 dimensions of an input with one or
    two more (unbatched or batched). Negative entries crop."""
    x = arr(input, "pad")
    widths = _pad_widths(shape(x), tuple(int(p) for p in pad), mode, value)
    if mode == "circular":
        _circular_check(shape(x), widths)
    # Negative widths crop. PyTorch's reflection mirrors about the edges of the uncropped
    # input (pad, then crop); circular padding wraps the cropped one (crop, then pad); for
    # the other modes the order does not matter.
    crop = [(max(-lo, 0), max(-hi, 0)) for lo, hi in widths]
    widths = [(max(lo, 0), max(hi, 0)) for lo, hi in widths]
    if mode != "reflect":
        x = _crop(x, crop)
    if mode == "constant":
        if any(lo or hi for lo, hi in widths):
            x = fnp.pad(x, widths, constant_values=0 if value is None else value)
    else:
        for axis, (lo, hi) in enumerate(widths):
            if lo or hi:
                x = _pad_axis(x, axis, lo, hi, mode)
    # PyTorch's F.pad makes a new tensor, also when it pads nothing or only crops
    return fresh(_crop(x, crop) if mode == "reflect" else x, input)


def _crop(x, crop):
    if not any(lo or hi for lo, hi in crop):
        return x
    s = shape(x)
    return slice(x, [lo for lo, _ in crop], [d - hi for d, (_, hi) in zip(s, crop)])


# --- pixel shuffle --------------------------------------------------------------------------------

@torch_op("PixelShuffleBackward0")
def pixel_shuffle(input, upscale_factor: int):
    """[*, C*r*r, H, W] -> [*, C, H*r, W*r]: each group of r*r channels becomes an r x r
    block of pixels (sub-pixel convolution)."""
    x = arr(input, "pixel_shuffle")
    s, r = shape(x), int(upscale_factor)
    if len(s) < 3:
        raise FgradRuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input "
                           f"with {len(s)} dimension(s)")
    if r <= 0:
        raise FgradRuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    *lead, C, H, W = s
    if C % (r * r):
        raise FgradRuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by "
                           f"the square of upscale_factor, but input.size(-3)={C} is not divisible by "
                           f"{r * r}")
    b = len(lead)
    x = reshape(x, tuple(lead) + (C // (r * r), r, r, H, W))
    x = transpose(x, tuple(range(b)) + (b, b + 3, b + 1, b + 4, b + 2))
    return reshape(x, tuple(lead) + (C // (r * r), H * r, W * r))


@torch_op("PixelUnshuffleBackward0")
def pixel_unshuffle(input, downscale_factor: int):
    """The inverse of pixel_shuffle: [*, C, H*r, W*r] -> [*, C*r*r, H, W]."""
    x = arr(input, "pixel_unshuffle")
    s, r = shape(x), int(downscale_factor)
    if len(s) < 3:
        raise FgradRuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input "
                           f"with {len(s)} dimension(s)")
    if r <= 0:
        raise FgradRuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    *lead, C, H, W = s
    if H % r or W % r:
        raise FgradRuntimeError(f"pixel_unshuffle expects height and width to be divisible by "
                           f"downscale_factor, but input.size(-2)={H} and input.size(-1)={W} are not "
                           f"divisible by {r}")
    b = len(lead)
    x = reshape(x, tuple(lead) + (C, H // r, r, W // r, r))
    x = transpose(x, tuple(range(b)) + (b, b + 2, b + 4, b + 1, b + 3))
    return reshape(x, tuple(lead) + (C * r * r, H // r, W // r))


# --- channel-wise and alpha dropout ---------------------------------------------------------------

_ALPHA = 1.7580993408473766  # -SELU's scale * alpha: the value SELU saturates to


def _check_p(p: float) -> None:
    if not 0.0 <= p <= 1.0:
        raise FgradValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _on_device_of(x, mask):
    v = val(x)
    if type(v) is MetaArray:  # (the mask is a meta value too: _keep_mask drew nothing)
        return mask
    if not isinstance(v, (np.ndarray, np.generic, Tracer)):  # another device: move the mask there
        # optional dependency (GPU arrays): imported only when a CuPy array is seen
        import cupy
        mask = cupy.asarray(mask)
    return mask


class _Draws:
    """The dropout masks one torch op drew, replayed when its function runs again (the
    pullback of create_graph reruns it: it must see the same masks)."""

    __slots__ = ("masks", "next")

    def __init__(self) -> None:
        self.masks, self.next = [], None


_replay: list = [None]  # the _Draws of the torch op running now (None: draw afresh)


def fixed_draws(fn):
    """`fn` whose dropout masks are drawn on its first run and replayed on every later one."""
    draws = _Draws()

    def run(*args, **kwargs):
        prev, _replay[0] = _replay[0], draws
        if draws.next is not None:  # a rerun: the first run's masks again
            draws.next = 0
        try:
            out = fn(*args, **kwargs)
        finally:
            _replay[0] = prev
        draws.next = 0
        return out
    return run


def _keep_mask(x, p: float, feature: bool):
    """A boolean keep-mask (probability 1 - p), torch's `noise.bernoulli_(1 - p)` on the default
    generator: one per element, or one per (example, channel) for feature dropout (shape
    [N, C, 1, ...], broadcast over the spatial axes)."""
    draws = _replay[0]
    if draws is not None and draws.next is not None:
        draws.next += 1
        return draws.masks[draws.next - 1]
    s = shape(x)
    mshape = (s[:2] + (1,) * (len(s) - 2)) if feature else s
    if type(val(x)) is MetaArray:  # no values, nothing drawn (the generator does not advance, as PyTorch's)
        return MetaArray(mshape, np.bool_)
    if SHAPES_ONLY[0]:  # a meta op traced for its shapes (attention's dropout inside it): nothing drawn either
        return np.broadcast_to(np.ones((), np.bool_), mshape)
    # torch's noise is empty_like(input) (feature dropout: a new contiguous [N, C, 1, ...]): a
    # transposed input gets its draws in memory order
    order = None if feature else _random.memory_order(val(x))
    mask = _random.place(_gen().engine.bernoulli_(math.prod(mshape), 1.0 - p), mshape, order)
    if draws is not None:
        draws.masks.append(mask)
    return mask


def _dropout(x, p: float, training: bool, feature: bool, alpha: bool):
    """The dropouts; on Tensors PyTorch's (CPU) graph: MulBackward0 over the input and the
    mask (alpha dropout: AddBackward0 over that and the shift), the mask drawn first."""
    x = arr(x, "dropout")
    if not training or p == 0.0 or math.prod(shape(x)) == 0:
        return x
    if p == 1.0:
        return torch_call("MulBackward0", _zeroed, (x,))
    dt = dtype(x)
    keep = _keep_mask(x, p, feature)
    if not alpha:
        # torch: noise.div_(1 - p), the divisor rounded to the input's dtype first
        mask = _on_device_of(x, keep.astype(dt) / dt.type(1.0 - p))
        # a Tensor mask: PyTorch's MulBackward0 has an (empty) edge for it
        return torch_call("MulBackward0", _masked, (x, _wrap(mask) if isinstance(x, Tensor) else mask))
    # PyTorch's alpha dropout: dropped units go to SELU's saturation value -alpha', then an
    # affine map a * (.) + b restores zero mean and unit variance
    a = 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
    scale = keep.astype(dt) * dt.type(a)
    shift = ((keep.astype(dt) - dt.type(1.0)) * dt.type(_ALPHA * a) + dt.type(_ALPHA * a * p)).astype(dt)
    scale, shift = _on_device_of(x, scale), _on_device_of(x, shift)
    if isinstance(x, Tensor):  # PyTorch's graph: AddBackward0 over MulBackward0 (x * scale) + shift
        return x * _wrap(scale) + _wrap(shift)
    return _affine(x, scale, shift)


def _zeroed(x):
    return xlax.mul(x, xlax.const(x, 0.0))


def _masked(x, m):
    return fnp.multiply(x, m)


def _affine(x, scale, shift):
    return fnp.add(fnp.multiply(x, scale), shift)


def _with_batch(name: str, x, batched_ndim: int):
    s = shape(x)
    if len(s) not in (batched_ndim - 1, batched_ndim):
        raise FgradRuntimeError(f"{name}: Expected {batched_ndim - 1}D or {batched_ndim}D input, but received "
                           f"a {len(s)}D input. Note that {name} exists to provide channel-wise dropout "
                           f"on inputs with {batched_ndim - 2} spatial dimension(s), a channel "
                           f"dimension, and an optional batch dimension (i.e. {batched_ndim - 1}D or "
                           f"{batched_ndim}D inputs).")
    return batched(name, x, batched_ndim - 2)


def dropout1d(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero whole channels of [N, C, L] (or [C, L]) with probability p, scaling the rest by
    1/(1-p) (in training; the identity otherwise)."""
    _check_p(p)
    x, squeeze = _with_batch("dropout1d", arr(input, "dropout1d"), 3)
    return unbatched(_dropout(x, p, training, feature=True, alpha=False), squeeze)


def dropout2d(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero whole channels of [N, C, H, W] with probability p, scaling the rest by 1/(1-p).
    As PyTorch, a 3-D input is taken as [N, C, L] (with its warning), and any other rank
    warns and drops along its first two axes."""
    _check_p(p)
    x = arr(input, "dropout2d")
    nd = len(shape(x))
    if nd not in (3, 4):
        warnings.warn(f"dropout2d: Received a {nd}-D input to dropout2d, which is deprecated and will "
                      "result in an error in a future release. To retain the behavior and silence "
                      "this warning, please use dropout instead. Note that dropout2d exists to "
                      "provide channel-wise dropout on inputs with 2 spatial dimensions, a channel "
                      "dimension, and an optional batch dimension (i.e. 3D or 4D inputs).",
                      stacklevel=2)
    if nd == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
                      "dropout behavior is desired - input is interpreted as shape (N, C, L), where C "
                      "is the channel dim. This behavior will change in a future release to interpret "
                      "the input as one without a batch dimension, i.e. shape (C, H, W). To maintain "
                      "the 1D channel-wise dropout behavior, please switch to using dropout1d "
                      "instead.", stacklevel=2)
    return _dropout(x, p, training, feature=True, alpha=False)


def dropout3d(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero whole channels of [N, C, D, H, W] (or [C, D, H, W]) with probability p, scaling
    the rest by 1/(1-p)."""
    _check_p(p)
    x = arr(input, "dropout3d")
    nd = len(shape(x))
    if nd not in (4, 5):
        warnings.warn(f"dropout3d: Received a {nd}-D input to dropout3d, which is deprecated and will "
                      "result in an error in a future release. To retain the behavior and silence "
                      "this warning, please use dropout instead. Note that dropout3d exists to "
                      "provide channel-wise dropout on inputs with 3 spatial dimensions, a channel "
                      "dimension, and an optional batch dimension (i.e. 4D or 5D inputs).",
                      stacklevel=2)
        return _dropout(x, p, training, feature=True, alpha=False)
    x, squeeze = batched("dropout3d", x, 3)
    return unbatched(_dropout(x, p, training, feature=True, alpha=False), squeeze)


def alpha_dropout(input, p: float = 0.5, training: bool = False, inplace: bool = False):
    """Dropout for SELU networks: dropped elements take SELU's negative saturation value and
    an affine correction keeps mean 0 and variance 1 (in training; the identity otherwise)."""
    _check_p(p)
    return _dropout(input, p, training, feature=False, alpha=True)


def feature_alpha_dropout(input, p: float = 0.5, training: bool = False, inplace: bool = False):
    """alpha_dropout of whole channels (axes 0 and 1 pick the mask; the rest share it)."""
    _check_p(p)
    return _dropout(input, p, training, feature=True, alpha=True)


# --- separable resampling -------------------------------------------------------------------------

def resample_axis(x, axis: int, idx: np.ndarray, wts: np.ndarray | None = None):
    """y[..., o, ...] = sum_t wts[o, t] * x[..., idx[o, t], ...] along `axis` (idx and wts of
    shape [out, T]; wts None: T == 1 and weight 1, a plain gather): the resample primitive,
    whose transpose adds repeated taps in a few vectorised passes instead of scattering
    element by element. Interpolation, area and adaptive averaging are this with different
    taps."""
    return nnops.resample(x, axis, idx, wts)


def adaptive_windows(n: int, out: int) -> tuple[np.ndarray, np.ndarray]:
    """PyTorch's adaptive pooling windows along an axis of size n: window o covers
    [floor(o n / out), ceil((o + 1) n / out)). Returns (start, length) arrays."""
    o = np.arange(out)
    start = (o * n) // out
    end = -((-(o + 1) * n) // out)
    return start, end - start


def adaptive_avg_axis(x, axis: int, out: int):
    """Adaptive average pooling along one axis (a mean over a reshape when the windows tile
    the axis, else weighted taps)."""
    n = shape(x)[axis]
    if out == n:
        return x
    s = shape(x)
    if n % out == 0:
        return fnp.mean(reshape(x, s[:axis] + (out, n // out) + s[axis + 1:]), axis=axis + 1)
    start, length = adaptive_windows(n, out)
    T = int(length.max())
    t = np.arange(T)
    idx = np.where(t < length[:, None], start[:, None] + t, start[:, None])
    wts = np.where(t < length[:, None], 1.0 / length[:, None], 0.0)
    return resample_axis(x, axis, idx, wts)
