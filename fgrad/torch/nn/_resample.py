"""Resampling of fgrad.torch.nn.functional: interpolate (and the deprecated upsample* names),
grid_sample and affine_grid.

interpolate is separable: each spatial axis is resampled in turn by a gather of a few taps
per output position and their weights (fgrad.torch.nn._spatial.resample_axis), with the taps and
weights PyTorch's CPU kernels use (UpSample.h): the same source indices (nearest in float32
arithmetic, as PyTorch), the same linear weights and A = -0.75 cubic convolution with
clamped borders. 'area' is adaptive average pooling.

grid_sample is written with fgrad ops on the grid: unnormalise, apply the padding mode
(clip or reflect, with PyTorch's derivative conventions at the borders), gather the corner
values and weight them, so gradients flow to the input (a scatter-add) and to the grid (the
weights), to any order.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from ... import numpy as fnp
from ...core.errors import FgradNotImplementedError, FgradRuntimeError, FgradValueError
from ...extend.lax import ARRAY, getitem
from ...extend.lax import reshape, transpose
from ...extend.numpy import fresh
from ._spatial import adaptive_avg_axis, resample_axis
from .._tensor.tensor import Tensor
from ._util import arr, dtype, float_input, shape, torch_call, torch_op

__all__ = ["interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "grid_sample",
           "affine_grid"]

_MODE_DIMS = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}


# --- source positions and weights (PyTorch's UpSample.h) ---------------------------------------

def _scale(n_in: int, n_out: int, align_corners: bool, scale_factor) -> float:
    """area_pixel_compute_scale: the step in input coordinates per output pixel."""
    if align_corners:
        return (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    if scale_factor is not None and scale_factor > 0:
        return 1.0 / scale_factor
    return n_in / n_out


def _source(scale: float, n_out: int, align_corners: bool, cubic: bool, dt) -> np.ndarray:
    """area_pixel_compute_source_index, in the input's precision (PyTorch's opmath for
    float32 and float64)."""
    o = np.arange(n_out, dtype=dt)
    sc = dt.type(scale)
    if align_corners:
        return sc * o
    src = sc * (o + dt.type(0.5)) - dt.type(0.5)
    return src if cubic else np.maximum(src, dt.type(0))


def _nearest_taps(n_in: int, n_out: int, scale_factor, exact: bool) -> np.ndarray:
    # PyTorch computes the nearest source index in float32 whatever the dtype
    scale = np.float32(1.0 / scale_factor if scale_factor is not None and scale_factor > 0
                       else np.float32(n_in) / np.float32(n_out))
    o = np.arange(n_out)
    if exact:
        src = np.floor(((o + 0.5) * np.float64(scale)).astype(np.float32))
    else:
        src = np.floor(o.astype(np.float32) * scale)
    return np.minimum(src.astype(np.int64), n_in - 1)[:, None]


def _linear_taps(n_in: int, n_out: int, align_corners: bool, scale_factor, dt):
    if n_in == n_out:  # PyTorch copies when the size does not change, whatever the scale
        return np.arange(n_in)[:, None], None
    src = _source(_scale(n_in, n_out, align_corners, scale_factor), n_out, align_corners, False, dt)
    i0 = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    lam1 = np.clip(src - i0, 0, 1).astype(np.float64)
    i1 = i0 + (i0 < n_in - 1)
    return np.stack([i0, i1], 1), np.stack([1.0 - lam1, lam1], 1)


def _cubic_coefficients(t: np.ndarray) -> np.ndarray:
    A = -0.75

    def near(x):   # |x| <= 1
        return ((A + 2) * x - (A + 3)) * x * x + 1

    def far(x):    # 1 < |x| < 2
        return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A
    return np.stack([far(t + 1.0), near(t), near(1.0 - t), far(2.0 - t)], 1)


def _cubic_taps(n_in: int, n_out: int, align_corners: bool, scale_factor, dt):
    src = _source(_scale(n_in, n_out, align_corners, scale_factor), n_out, align_corners, True, dt)
    i0 = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    t = np.clip(src - i0, 0, 1).astype(np.float64)
    idx = np.clip(i0[:, None] + np.arange(-1, 3), 0, n_in - 1)
    return idx, _cubic_coefficients(t)


# --- interpolate --------------------------------------------------------------------------------

def _sizes(name: str, in_sizes: tuple, size, scale_factor, recompute_scale_factor):
    n = len(in_sizes)
    if size is not None and scale_factor is not None:
        raise FgradValueError("only one of size or scale_factor should be defined")
    if size is not None:
        out = tuple(size) if isinstance(size, (tuple, list)) else (size,) * n
        if len(out) != n:
            raise FgradValueError(f"Input and output must have the same number of spatial dimensions, but "
                             f"got input with spatial dimensions of {list(in_sizes)} and output size of "
                             f"{list(out)}. Please provide input tensor in (N, C, d1, d2, ...,dK) format "
                             "and output size in (o1, o2, ...,oK) format.")
        if recompute_scale_factor:
            raise FgradValueError("recompute_scale_factor is not meaningful with an explicit size.")
        out = tuple(int(o) for o in out)
        if min(out) <= 0:
            raise FgradValueError(f"{name}: output size must be positive, got {out}")
        return out, (None,) * n
    if scale_factor is None:
        raise FgradValueError("either size or scale_factor should be defined")
    scales = tuple(scale_factor) if isinstance(scale_factor, (tuple, list)) else (scale_factor,) * n
    if len(scales) != n:
        raise FgradValueError(f"Input and scale_factor must have the same number of spatial dimensions, but "
                         f"got input with spatial dimensions of {list(in_sizes)} and scale_factor of "
                         f"shape {list(scales)}. Please provide input tensor in (N, C, d1, d2, ...,dK) "
                         "format and scale_factor in (s1, s2, ...,sK) format.")
    scales = tuple(float(s) for s in scales)
    out = tuple(int(math.floor(float(n_in) * s)) for n_in, s in zip(in_sizes, scales))
    if min(out) <= 0:
        raise FgradValueError(f"{name}: input sizes {list(in_sizes)} with scale_factor {list(scales)} give "
                         f"an empty output {list(out)}")
    # recompute_scale_factor: the coordinates use in/out, as if `size` had been given
    return out, ((None,) * n if recompute_scale_factor else scales)


_UPSAMPLE_NODES = {"nearest": "UpsampleNearest", "nearest-exact": "UpsampleNearestExact", "linear": "UpsampleLinear",
                   "bilinear": "UpsampleBilinear", "bicubic": "UpsampleBicubic", "trilinear": "UpsampleTrilinear",
                   "area": "AdaptiveAvgPool"}


def interpolate(input, size=None, scale_factor=None, mode: str = "nearest", align_corners=None,
                recompute_scale_factor=None, antialias: bool = False):
    """See _interpolate; on Tensors one torch op named as PyTorch's node (UpsampleBilinear2DBackward0,
    AdaptiveAvgPool2DBackward0 for 'area', ...)."""
    if not isinstance(input, Tensor):
        return _interpolate(input, size, scale_factor, mode, align_corners, recompute_scale_factor, antialias)
    name = f"{_UPSAMPLE_NODES.get(mode, 'Upsample')}{max(len(input.shape) - 2, 1)}DBackward0"
    return torch_call(name, _interpolate, (input, size, scale_factor, mode, align_corners, recompute_scale_factor,
                                           antialias))


def _interpolate(input, size=None, scale_factor=None, mode: str = "nearest", align_corners=None,
                 recompute_scale_factor=None, antialias: bool = False):
    """Resample input [N, C, *spatial] (1 to 3 spatial axes) to `size` or by `scale_factor`:
    mode 'nearest', 'nearest-exact', 'linear' (3-D), 'bilinear' / 'bicubic' (4-D),
    'trilinear' (5-D) or 'area' (adaptive averaging). align_corners (linear modes) maps the
    corner pixels' centres onto each other instead of the corners' edges."""
    x = arr(input, "interpolate")
    s = shape(x)
    nd = len(s)
    if nd not in (3, 4, 5):
        raise FgradNotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {nd}D) "
                                  f"for the modes: nearest | linear | bilinear | bicubic | trilinear | "
                                  f"area | nearest-exact (got {mode})")
    known = ("nearest", "nearest-exact", "area") + tuple(_MODE_DIMS)
    if mode not in known:
        raise FgradNotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {nd}D) "
                                  f"for the modes: nearest | linear | bilinear | bicubic | trilinear | "
                                  f"area | nearest-exact (got {mode})")
    if mode in ("nearest", "nearest-exact", "area"):
        if align_corners is not None:
            raise FgradValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    else:
        if _MODE_DIMS[mode] != nd - 2:
            raise FgradNotImplementedError(f"Got {nd}D input, but {mode} mode needs "
                                      f"{_MODE_DIMS[mode] + 2}D input")
        align_corners = bool(align_corners)
    if antialias:
        raise FgradNotImplementedError("interpolate: antialias=True is not supported by fgrad; blur the "
                                  "input (e.g. avg_pool2d) before downsampling instead")
    if mode not in ("nearest", "nearest-exact"):  # nearest only copies: any dtype
        float_input("interpolate", x)
    out, scales = _sizes("interpolate", s[2:], size, scale_factor, recompute_scale_factor)
    dt = dtype(x)
    for k, (n_in, n_out, sf) in enumerate(zip(s[2:], out, scales)):
        axis = 2 + k
        if mode == "area":
            x = adaptive_avg_axis(x, axis, n_out)
        elif mode in ("nearest", "nearest-exact"):
            if n_out != n_in or sf not in (None, 1.0):
                x = resample_axis(x, axis, _nearest_taps(n_in, n_out, sf, mode == "nearest-exact"))
        elif mode == "bicubic":
            x = resample_axis(x, axis, *_cubic_taps(n_in, n_out, align_corners, sf, dt))
        else:
            idx, wts = _linear_taps(n_in, n_out, align_corners, sf, dt)
            if wts is not None:
                x = resample_axis(x, axis, idx, wts)
    return fresh(x, input)  # (the same size: a new tensor all the same, as PyTorch's)


def upsample(input, size=None, scale_factor=None, mode: str = "nearest", align_corners=None):
    """Deprecated alias of interpolate (PyTorch warns the same)."""
    warnings.warn("nn.functional.upsample is deprecated. Use nn.functional.interpolate instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated: interpolate(mode='nearest')."""
    warnings.warn("nn.functional.upsample_nearest is deprecated. Use nn.functional.interpolate "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated: interpolate(mode='bilinear', align_corners=True)."""
    warnings.warn("nn.functional.upsample_bilinear is deprecated. Use nn.functional.interpolate "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# --- grid_sample / affine_grid ------------------------------------------------------------------

def _align_corners_default(align_corners):
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to align_corners=False "
                      "since 1.3.0. Please specify align_corners=True if the old behavior is desired. "
                      "See the documentation of grid_sample for details.", stacklevel=3)
        return False
    return bool(align_corners)


def _clip(c, limit: float):
    """min(limit, max(c, 0)) with PyTorch's derivative: 0 at and beyond either bound."""
    zero = fnp.zeros_like(c)
    return fnp.where(fnp.less_equal(c, 0), zero,
                     fnp.where(fnp.greater_equal(c, limit), fnp.add(zero, limit), c))


def _reflect(c, twice_low: float, twice_high: float):
    """Reflect c into [twice_low / 2, twice_high / 2] (PyTorch's reflect_coordinates, with
    its derivative: +1 at the reflection points)."""
    if twice_low == twice_high:
        return fnp.zeros_like(c)
    lo, span = twice_low / 2, (twice_high - twice_low) / 2
    c = fnp.subtract(c, lo)
    c = fnp.where(fnp.less(c, 0), fnp.negative(c), c)
    extra = fnp.fmod(c, span)
    flips = fnp.floor(fnp.divide(c, span))
    even = fnp.equal(fnp.fmod(flips, 2.0), 0.0)
    return fnp.where(even, fnp.add(extra, lo), fnp.add(fnp.subtract(span, extra), lo))


def _source_coordinate(c, size: int, padding_mode: str, align_corners: bool):
    """Grid coordinates in [-1, 1] -> pixel coordinates, with the padding mode applied."""
    if align_corners:
        c = fnp.multiply(fnp.add(c, 1.0), (size - 1) / 2)
    else:
        c = fnp.divide(fnp.subtract(fnp.multiply(fnp.add(c, 1.0), size), 1.0), 2.0)
    if padding_mode == "border":
        c = _clip(c, size - 1)
    elif padding_mode == "reflection":
        c = _reflect(c, 0.0, 2.0 * (size - 1)) if align_corners else _reflect(c, -1.0, 2.0 * size - 1)
        c = _clip(c, size - 1)
    return c


def _gather_corner(xt, n_idx, iy, ix, H: int, W: int):
    """xt [N, H, W, C] read at integer positions (iy, ix) [N, Ho, Wo] (clamped into the image)
    and a 0/1 mask of the positions that were inside: ([N, Ho, Wo, C], [N, Ho, Wo])."""
    inside = fnp.logical_and(fnp.logical_and(fnp.greater_equal(iy, 0), fnp.less(iy, H)),
                             fnp.logical_and(fnp.greater_equal(ix, 0), fnp.less(ix, W)))
    iy = fnp.clip(iy, 0, H - 1)
    ix = fnp.clip(ix, 0, W - 1)
    return getitem(xt, (n_idx, iy, ix), (ARRAY, ARRAY, ARRAY)), inside


@torch_op("GridSampler2DBackward0")
def grid_sample(input, grid, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners=None):
    """Sample input [N, C, H, W] at the points of grid [N, Ho, Wo, 2] ((x, y) in [-1, 1],
    -1 the left/top edge): mode 'bilinear' or 'nearest' (half-way points round to even);
    padding_mode 'zeros', 'border' or 'reflection' for points outside. -> [N, C, Ho, Wo]."""
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise FgradValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or "
                         f"'bicubic', but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise FgradValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', "
                         f"or 'reflection', but got: '{padding_mode}'")
    if mode == "bicubic":
        raise FgradNotImplementedError("grid_sample: mode='bicubic' is not supported by fgrad; use "
                                  "'bilinear' or 'nearest'")
    align_corners = _align_corners_default(align_corners)
    x, grid = arr(input, "grid_sample"), arr(grid, "grid_sample")
    xs, gs = shape(x), shape(grid)
    if len(xs) != 4:
        raise FgradNotImplementedError(f"grid_sample: only 4-D inputs [N, C, H, W] are supported by fgrad, "
                                  f"got input of shape {list(xs)}")
    if len(gs) != 4 or gs[3] != 2 or gs[0] != xs[0]:
        raise FgradRuntimeError(f"grid_sampler(): expected grid to have size 2 in last dimension and the "
                           f"same batch size as input, but got input with sizes {list(xs)} and grid "
                           f"with sizes {list(gs)}")
    if dtype(x) != dtype(grid):
        raise FgradRuntimeError(f"grid_sampler(): expected input and grid to have the same dtype, but input "
                           f"has {dtype(x)} and grid has {dtype(grid)}")
    float_input("grid_sample", x)
    N, C, H, W = xs
    gx = _source_coordinate(grid[..., 0], W, padding_mode, align_corners)
    gy = _source_coordinate(grid[..., 1], H, padding_mode, align_corners)
    xt = transpose(x, (0, 2, 3, 1))                                     # [N, H, W, C]
    n_idx = np.arange(N).reshape(N, 1, 1)
    if mode == "nearest":
        iy = fnp.astype(fnp.round(gy), np.int64)
        ix = fnp.astype(fnp.round(gx), np.int64)
        v, inside = _gather_corner(xt, n_idx, iy, ix, H, W)
        out = fnp.multiply(v, fnp.expand_dims(fnp.astype(inside, dtype(x)), -1))
    else:
        x0, y0 = fnp.floor(gx), fnp.floor(gy)
        ix0, iy0 = fnp.astype(x0, np.int64), fnp.astype(y0, np.int64)
        fx, fy = fnp.subtract(gx, x0), fnp.subtract(gy, y0)             # in [0, 1)
        wx = (fnp.subtract(1.0, fx), fx)
        wy = (fnp.subtract(1.0, fy), fy)
        out = None
        for dy in (0, 1):
            for dx in (0, 1):
                v, inside = _gather_corner(xt, n_idx, fnp.add(iy0, dy), fnp.add(ix0, dx), H, W)
                w = fnp.multiply(fnp.multiply(wy[dy], wx[dx]), fnp.astype(inside, dtype(x)))
                term = fnp.multiply(v, fnp.expand_dims(w, -1))
                out = term if out is None else fnp.add(out, term)
    return transpose(out, (0, 3, 1, 2))


def _base_coordinates(n: int, align_corners: bool, dt) -> np.ndarray:
    if n <= 1:
        return np.zeros(max(n, 1), dt)
    c = np.linspace(-1.0, 1.0, n)
    return (c if align_corners else c * (n - 1) / n).astype(dt)


@torch_op("AffineGridGeneratorBackward0")
def affine_grid(theta, size, align_corners=None):
    """The sampling grid of the affine maps theta [N, 2, 3] (or [N, 3, 4] for 5-D sizes) over
    an output of `size` (N, C, H, W) (or (N, C, D, H, W)): [N, H, W, 2] (x, y) points in
    [-1, 1] for grid_sample."""
    align_corners = _align_corners_default(align_corners)
    theta = arr(theta, "affine_grid")
    float_input("affine_grid", theta)
    size = tuple(int(v) for v in size)
    ts = shape(theta)
    if len(size) == 4:
        if len(ts) != 3 or ts[1:] != (2, 3):
            raise FgradValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. "
                             f"Got {ts}.")
        spatial = size[2:]
    elif len(size) == 5:
        if len(ts) != 3 or ts[1:] != (3, 4):
            raise FgradValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. "
                             f"Got {ts}.")
        spatial = size[2:]
    else:
        raise FgradNotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine "
                                  f"transforms, respectively. Got size {size}.")
    if min(size) <= 0:
        raise FgradValueError(f"Expected non-zero, positive output size. Got {size}")
    if ts[0] != size[0]:
        raise FgradValueError(f"Expected theta to have {size[0]} affine matrices (size[0]), got {ts[0]}")
    dt = dtype(theta)
    axes = [_base_coordinates(n, align_corners, dt) for n in spatial]   # [D,] H, W
    # base points (x, y[, z], 1): x runs along the last axis
    mesh = np.meshgrid(*axes, indexing="ij")
    base = np.stack(list(mesh[::-1]) + [np.ones_like(mesh[0])], -1).reshape(1, -1, len(spatial) + 1)
    grid = fnp.matmul(base, fnp.swapaxes(theta, 1, 2))                 # [N, prod(spatial), k]
    return reshape(grid, (size[0],) + tuple(spatial) + (len(spatial),))
