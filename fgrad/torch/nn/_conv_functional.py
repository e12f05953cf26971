"""Convolutions of fgrad.torch.nn.functional: conv1d/2d/3d, conv_transpose1d/2d, unfold and fold.

All of them run on the 2-D convolution primitives (fgrad.ops.nn.conv: im2col + GEMM, or an
FFT, grouped convolutions batched over the groups) and the unfold/fold primitives:
  * conv1d is conv2d of height 1;
  * conv3d stacks the kd depth slices each output plane reads as extra input channels of
    one conv2d over the folded [N * Do] planes (the weight's depth taps become channels), so
    it is one GEMM too;
  * conv_transpose2d is conv2d_input_grad, the adjoint of conv2d in its input (PyTorch's
    definition), with output_padding choosing the output size.
"""
from __future__ import annotations

import numpy as np

from ... import numpy as fnp
from ...core.errors import FgradRuntimeError, FgradValueError
from ... import lax
from ...extend import nn as nnops
from ...extend.lax import Slice, getitem
from ...extend.lax import concatenate, reshape, transpose
from ...extend.lax import pad as zero_pad
from ...core.trace import aval_of
from ...extend.nn import conv_padding as _conv_padding
from .._tensor.tensor import Tensor, _tensor_bind
from ._spatial import batched, ntuple, unbatched
from ._util import arr, same_dtype, shape, torch_op

# PyTorch's ConvolutionBackward0 lists (input, weight, bias), a missing bias as (None, 0)
_CONV_OPERANDS = ("input", "weight", "bias")

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "unfold", "fold"]


def _prepare(name: str, input, weight, bias, n_spatial: int):
    input, weight = arr(input, name), arr(weight, name)
    bias = None if bias is None else arr(bias, name)
    same_dtype(name, input, weight, bias)
    ws = shape(weight)
    if len(ws) != n_spatial + 2:
        raise FgradRuntimeError(f"{name}: expected a {n_spatial + 2}-D weight [out_channels, in_channels / "
                           f"groups, {', '.join('k' + a for a in 'DHW'[3 - n_spatial:])}], got weight "
                           f"of shape {ws}")
    if bias is not None and shape(bias) != (ws[0],):
        raise FgradRuntimeError(f"{name}: Given weight of size {list(ws)}, expected bias to be 1-dimensional "
                           f"with {ws[0]} elements, but got bias of size {list(shape(bias))} instead")
    x, squeeze = batched(name, input, n_spatial)
    return x, weight, bias, squeeze


def _groups(name: str, groups) -> int:
    if isinstance(groups, bool) or not isinstance(groups, (int, np.integer)) or groups < 1:
        raise FgradRuntimeError(f"{name}: non-positive groups is not supported (groups must be a positive "
                           f"int, got {groups!r})")
    return int(groups)


def _padding_pairs(name: str, padding, kernel: tuple, dilation: tuple, stride: tuple) -> tuple:
    """PyTorch's padding argument as (lo, hi) pairs per spatial axis: an int, a tuple,
    'valid' (none) or 'same' (the output keeps the input's size; an odd total puts the
    extra element on the high side, as PyTorch)."""
    n = len(kernel)
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * n
        if padding == "same":
            if any(s != 1 for s in stride):
                raise FgradRuntimeError("padding='same' is not supported for strided convolutions")
            return tuple((d * (k - 1) // 2, d * (k - 1) - d * (k - 1) // 2)
                         for k, d in zip(kernel, dilation))
        raise FgradRuntimeError(f"Invalid padding string: {padding!r} (use 'valid', 'same', an int or a "
                           "tuple of ints)")
    p = ntuple(padding, n, f"{name}: padding")
    if min(p) < 0:
        raise FgradRuntimeError(f"{name}: negative padding is not supported, got padding={p}")
    return tuple((v, v) for v in p)


def _positive(name: str, what: str, v: tuple) -> tuple:
    if min(v) <= 0:
        raise FgradRuntimeError(f"{name}: non-positive {what} is not supported, got {what}={v}")
    return v


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups: int = 1):
    """2-D cross-correlation: input [N, C, H, W] (or [C, H, W]), weight [O, C/groups, kH, kW],
    bias [O]. padding: int, pair, 'valid' or 'same'; groups splits the channels into
    independent groups (groups == C: depthwise). On Tensors the conv2d primitive's node is
    PyTorch's ConvolutionBackward0 over (input, weight, bias), a missing bias its None edge."""
    x, w, b, squeeze = _prepare("conv2d", input, weight, bias, 2)
    stride = _positive("conv2d", "stride", ntuple(stride, 2, "conv2d: stride"))
    dilation = _positive("conv2d", "dilation", ntuple(dilation, 2, "conv2d: dilation"))
    pads = _padding_pairs("conv2d", padding, shape(w)[2:], dilation, stride)
    if isinstance(x, Tensor) or isinstance(w, Tensor) or isinstance(b, Tensor):
        params = dict(stride=stride, padding=_conv_padding(pads, shape(w)[2:], dilation), dilation=dilation,
                      groups=_groups("conv2d", groups))
        args = (x, w, b)
        lax.conv2d_p.abstract_eval(*[aval_of(a._value if isinstance(a, Tensor) else a) for a in args[:2]],
                                     *([] if b is None else [aval_of(b._value if isinstance(b, Tensor) else b)]),
                                     **params)
        return unbatched(_tensor_bind(lax.conv2d_p, args, params), squeeze)
    y = nnops.conv2d(x, w, stride, pads, dilation, bias=b, groups=_groups("conv2d", groups))
    return unbatched(y, squeeze)


@torch_op("ConvolutionBackward0", operands=_CONV_OPERANDS)
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups: int = 1):
    """1-D cross-correlation: input [N, C, L] (or [C, L]), weight [O, C/groups, kL], bias [O]
    (conv2d of height 1)."""
    x, w, b, squeeze = _prepare("conv1d", input, weight, bias, 1)
    stride = _positive("conv1d", "stride", ntuple(stride, 1, "conv1d: stride"))
    dilation = _positive("conv1d", "dilation", ntuple(dilation, 1, "conv1d: dilation"))
    ws = shape(w)
    pads = _padding_pairs("conv1d", padding, ws[2:], dilation, stride)
    N, C, L = shape(x)
    y = nnops.conv2d(reshape(x, (N, C, 1, L)), reshape(w, ws[:2] + (1, ws[2])), (1,) + stride,
                     ((0, 0),) + pads, (1,) + dilation, bias=b, groups=_groups("conv1d", groups))
    return unbatched(reshape(y, shape(y)[:2] + (shape(y)[3],)), squeeze)


@torch_op("ConvolutionBackward0", operands=_CONV_OPERANDS)
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups: int = 1):
    """3-D cross-correlation: input [N, C, D, H, W] (or [C, D, H, W]), weight
    [O, C/groups, kD, kH, kW], bias [O]."""
    x, w, b, squeeze = _prepare("conv3d", input, weight, bias, 3)
    stride = _positive("conv3d", "stride", ntuple(stride, 3, "conv3d: stride"))
    dilation = _positive("conv3d", "dilation", ntuple(dilation, 3, "conv3d: dilation"))
    ws = shape(w)
    O, Cg, kd = ws[:3]
    pads = _padding_pairs("conv3d", padding, ws[2:], dilation, stride)
    G = _groups("conv3d", groups)
    N, C, D, H, W = shape(x)
    if C != Cg * G:
        raise FgradRuntimeError(f"conv3d: Given groups={G}, weight of size {list(ws)}, expected input"
                           f"{list(shape(x))} to have {Cg * G} channels, but got {C} channels instead")
    x = zero_pad(x, ((0, 0), (0, 0), pads[0], (0, 0), (0, 0)))
    Dp = D + pads[0][0] + pads[0][1]
    Do = (Dp - dilation[0] * (kd - 1) - 1) // stride[0] + 1
    if Do <= 0:
        raise FgradRuntimeError(f"conv3d: input shape {tuple(shape(input))} (padding {pads[0]} in depth) is "
                           f"smaller than the kernel of weight shape {ws} (dilation {dilation}): the "
                           f"output depth would be {Do}")
    # depth tap i of output plane o reads input plane o * stride + i * dilation: gather each
    # tap's planes (a strided slice), stack them beside the channels, group-major
    full = Slice(None, None, 1)
    taps = [getitem(x, (), (full, full, Slice(i * dilation[0], i * dilation[0] + (Do - 1) * stride[0] + 1,
                                                 stride[0])))
            for i in range(kd)]                                   # each [N, C, Do, H, W]
    stacked = concatenate([reshape(t, (N, 1, G, Cg, Do, H, W)) for t in taps], 1)  # [N, kd, G, Cg, ...]
    planes = reshape(transpose(stacked, (0, 4, 2, 1, 3, 5, 6)), (N * Do, G * kd * Cg, H, W))
    w2 = reshape(transpose(w, (0, 2, 1, 3, 4)), (O, kd * Cg) + tuple(ws[3:]))
    y = nnops.conv2d(planes, w2, stride[1:], pads[1:], dilation[1:], bias=b, groups=G)
    Ho, Wo = shape(y)[2:]
    y = transpose(reshape(y, (N, Do, O, Ho, Wo)), (0, 2, 1, 3, 4))
    return unbatched(y, squeeze)


def _transposed(name: str, input, weight, bias, stride, padding, output_padding, groups, dilation,
                n_spatial: int):
    input, weight = arr(input, name), arr(weight, name)
    bias = None if bias is None else arr(bias, name)
    same_dtype(name, input, weight, bias)
    ws = shape(weight)
    if len(ws) != n_spatial + 2:
        raise FgradRuntimeError(f"{name}: expected a {n_spatial + 2}-D weight [in_channels, out_channels / "
                           f"groups, {', '.join('k' + a for a in 'HW'[2 - n_spatial:])}], got weight of "
                           f"shape {ws}")
    x, squeeze = batched(name, input, n_spatial)
    G = _groups(name, groups)
    stride = _positive(name, "stride", ntuple(stride, n_spatial, f"{name}: stride"))
    dilation = _positive(name, "dilation", ntuple(dilation, n_spatial, f"{name}: dilation"))
    if isinstance(padding, str):
        raise FgradValueError(f"{name}: padding must be an int or a tuple of ints (strings are for "
                         f"convolutions, not transposed ones), got {padding!r}")
    pad = ntuple(padding, n_spatial, f"{name}: padding")
    opad = ntuple(output_padding, n_spatial, f"{name}: output_padding")
    if min(pad) < 0 or min(opad) < 0:
        raise FgradRuntimeError(f"{name}: negative padding is not supported, got padding={pad}, "
                           f"output_padding={opad}")
    if any(op >= s and op >= d for op, s, d in zip(opad, stride, dilation)):
        raise FgradRuntimeError(f"{name}: output padding must be smaller than either stride or dilation, but "
                           f"got output_padding={opad}, stride={stride}, dilation={dilation}")
    xs = shape(x)
    if xs[1] != ws[0]:
        raise FgradRuntimeError(f"{name}: Given transposed=1, weight of size {list(ws)}, expected input"
                           f"{list(xs)} to have {ws[0]} channels, but got {xs[1]} channels instead")
    if ws[0] % G:
        raise FgradRuntimeError(f"{name}: Given groups={G}, expected weight to be divisible by {G} at "
                           f"dimension 0, but got weight of size {list(ws)} instead")
    if bias is not None and shape(bias) != (ws[1] * G,):
        raise FgradRuntimeError(f"{name}: Given weight of size {list(ws)} and groups={G}, expected bias to "
                           f"be 1-dimensional with {ws[1] * G} elements, but got bias of size "
                           f"{list(shape(bias))} instead")
    out = tuple((n - 1) * s - 2 * p + d * (k - 1) + op + 1
                for n, s, p, d, k, op in zip(xs[2:], stride, pad, dilation, ws[2:], opad))
    if min(out) <= 0:
        raise FgradRuntimeError(f"{name}: input shape {xs} and weight shape {ws} (stride {stride}, padding "
                           f"{pad}, dilation {dilation}) give a non-positive output size {out}")
    return x, weight, bias, squeeze, G, stride, dilation, pad, out


def _conv_transpose(x, w, b, G, stride, dilation, pad, out):
    """conv_transpose2d on a batched x [N, C_in, H, W]: the adjoint of the conv2d that maps
    [N, C_out, *out] to x's shape. When output_padding adds rows that no window of that
    conv2d reaches, the conv2d's output is larger than x; x is zero-extended to it."""
    xs = shape(x)
    fwd = tuple((n + 2 * p - d * (k - 1) - 1) // s + 1
                for n, p, d, k, s in zip(out, pad, dilation, shape(w)[2:], stride))
    if fwd != tuple(xs[2:]):
        x = zero_pad(x, ((0, 0), (0, 0)) + tuple((0, f - n) for f, n in zip(fwd, xs[2:])))
    y = nnops.conv2d_input_grad(x, w, out, stride, tuple((p, p) for p in pad), dilation, groups=G)
    if b is not None:
        y = fnp.add(y, reshape(b, (1, shape(b)[0], 1, 1)))
    return y


@torch_op("ConvolutionBackward0", operands=_CONV_OPERANDS)
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups: int = 1, dilation=1):
    """The transposed 2-D convolution ("deconvolution"), the adjoint of conv2d in its input:
    input [N, C_in, H, W] (or [C_in, H, W]), weight [C_in, C_out/groups, kH, kW], bias
    [C_out]; the output has size (H - 1) * stride - 2 * padding + dilation * (kH - 1) +
    output_padding + 1 (likewise in W)."""
    x, w, b, squeeze, G, stride, dilation, pad, out = _transposed(
        "conv_transpose2d", input, weight, bias, stride, padding, output_padding, groups, dilation, 2)
    return unbatched(_conv_transpose(x, w, b, G, stride, dilation, pad, out), squeeze)


@torch_op("ConvolutionBackward0", operands=_CONV_OPERANDS)
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups: int = 1, dilation=1):
    """The transposed 1-D convolution: input [N, C_in, L] (or [C_in, L]), weight
    [C_in, C_out/groups, kL], bias [C_out] (conv_transpose2d of height 1)."""
    x, w, b, squeeze, G, stride, dilation, pad, out = _transposed(
        "conv_transpose1d", input, weight, bias, stride, padding, output_padding, groups, dilation, 1)
    N, C, L = shape(x)
    ws = shape(w)
    y = _conv_transpose(reshape(x, (N, C, 1, L)), reshape(w, ws[:2] + (1, ws[2])), b, G,
                        (1,) + stride, (1,) + dilation, (0,) + pad, (1,) + out)
    return unbatched(reshape(y, shape(y)[:2] + (shape(y)[3],)), squeeze)


@torch_op("Im2ColBackward0")
def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """The sliding blocks of input [N, C, H, W] (or [C, H, W]) as columns [N, C*kH*kW, L]
    (im2col; row c*kH*kW + i*kW + j is tap (i, j) of channel c)."""
    x = arr(input, "unfold")
    s = shape(x)
    if len(s) not in (3, 4):
        raise FgradRuntimeError(f"Input Error: Only 3D or 4D input Tensors are supported (got {len(s)}D)")
    x, squeeze = batched("unfold", x, 2)
    return unbatched(nnops.unfold(x, kernel_size, dilation, padding, stride), squeeze)


@torch_op("Col2ImBackward0")
def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """The adjoint of unfold (col2im): columns [N, C*kH*kW, L] (or [C*kH*kW, L]) summed into
    [N, C, *output_size]; overlapping blocks add up."""
    x = arr(input, "fold")
    s = shape(x)
    if len(s) not in (2, 3):
        raise FgradRuntimeError(f"Input Error: Only unbatched (2D) or batched (3D) input Tensors are "
                           f"supported (got {len(s)}D)")
    squeeze = len(s) == 2
    if squeeze:
        x = reshape(x, (1,) + s)
    return unbatched(nnops.fold(x, output_size, kernel_size, dilation, padding, stride), squeeze)
