"""Convolution layers with PyTorch's names, attributes, parameter shapes and default
initialisation: Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, and the
sliding-block layers Unfold and Fold."""
from __future__ import annotations

import math

from .. import _tensor as T  # the facade namespace: T.empty, ...
from ...core.errors import FgradValueError
from . import init
from ._conv_functional import (
    conv1d,
    conv2d,
    conv3d,
    conv_transpose1d,
    conv_transpose2d,
    fold,
    unfold,
)
from ._spatial import ntuple, pad
from .module import Module
from .parameter import Parameter

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "Unfold", "Fold"]

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class _ConvNd(Module):
    """The shared constructor: checks, attributes and PyTorch's initialisation (weights
    kaiming_uniform(a=sqrt(5)), i.e. U(-1/sqrt(fan_in), 1/sqrt(fan_in)), and the bias with
    the same bound)."""

    _n: int = 2
    _transposed: bool = False

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 output_padding=0, device=None, dtype=None) -> None:
        super().__init__()
        n = self._n
        if groups <= 0:
            raise FgradValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise FgradValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise FgradValueError("out_channels must be divisible by groups")
        if padding_mode not in _PADDING_MODES:
            raise FgradValueError(f"padding_mode must be one of {list(_PADDING_MODES)}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels, self.out_channels = int(in_channels), int(out_channels)
        self.kernel_size = ntuple(kernel_size, n, "kernel_size")
        self.stride = ntuple(stride, n, "stride")
        self.dilation = ntuple(dilation, n, "dilation")
        if isinstance(padding, str):
            if padding not in ("valid", "same"):
                raise FgradValueError(f"Invalid padding string {padding!r}, should be one of "
                                 "['valid', 'same']")
            if padding == "same" and any(s != 1 for s in self.stride):
                raise FgradValueError("padding='same' is not supported for strided convolutions")
            self.padding = padding
        else:
            self.padding = ntuple(padding, n, "padding")
        self.output_padding = ntuple(output_padding, n, "output_padding")
        self.groups, self.padding_mode, self.transposed = int(groups), padding_mode, self._transposed
        # the (left, right) pad of each spatial dim, last dim first (F.pad's order), for
        # padding modes other than zeros
        # (a list for string paddings and a tuple otherwise, as PyTorch's attribute)
        if self.padding == "valid":
            self._reversed_padding_repeated_twice = [0, 0] * n
        elif self.padding == "same":
            pairs = [(d * (k - 1) // 2, d * (k - 1) - d * (k - 1) // 2)
                     for d, k in zip(self.dilation, self.kernel_size)]
            self._reversed_padding_repeated_twice = [v for lo, hi in reversed(pairs) for v in (lo, hi)]
        else:
            self._reversed_padding_repeated_twice = tuple(v for p in reversed(self.padding) for v in (p, p))
        if self._transposed:
            shape = (self.in_channels, self.out_channels // self.groups) + self.kernel_size
        else:
            shape = (self.out_channels, self.in_channels // self.groups) + self.kernel_size
        self.weight = Parameter(T.empty(*shape, dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(T.empty(self.out_channels, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        n = self._n
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * n:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * n:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * n:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s

    def _conv_forward(self, fn, input, weight, bias):
        if self.padding_mode != "zeros":
            return fn(pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode),
                      weight, bias, self.stride, 0, self.dilation, self.groups)
        return fn(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)


class _Conv(_ConvNd):
    """Conv1d/2d/3d: PyTorch's constructor (no output_padding) and forward, through the
    class's functional `_conv` (conv1d, conv2d or conv3d)."""

    _conv = staticmethod(conv2d)

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device=None, dtype=None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups,
                         bias, padding_mode, device=device, dtype=dtype)

    def forward(self, input):
        return self._conv_forward(self._conv, input, self.weight, self.bias)


class Conv1d(_Conv):
    """1-D convolution over [N, C, L] (or [C, L]); weight [out_channels, in_channels/groups, k]."""

    _n, _conv = 1, staticmethod(conv1d)


class Conv2d(_Conv):
    """2-D convolution over [N, C, H, W] (or [C, H, W]); weight
    [out_channels, in_channels/groups, kH, kW]."""

    _n, _conv = 2, staticmethod(conv2d)


class Conv3d(_Conv):
    """3-D convolution over [N, C, D, H, W] (or [C, D, H, W]); weight
    [out_channels, in_channels/groups, kD, kH, kW]."""

    _n, _conv = 3, staticmethod(conv3d)


class _ConvTransposeNd(_ConvNd):
    """ConvTranspose1d/2d: forward through the class's functional `_conv` (conv_transpose1d or
    conv_transpose2d), with output_padding from forward's output_size."""

    _transposed = True
    _conv = staticmethod(conv_transpose2d)

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 output_padding=0, groups: int = 1, bias: bool = True, dilation=1,
                 padding_mode: str = "zeros", device=None, dtype=None) -> None:
        if padding_mode != "zeros":
            raise FgradValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        if isinstance(padding, str):
            raise FgradValueError(f"{type(self).__name__}: padding must be an int or a tuple of ints, got "
                             f"{padding!r}")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups,
                         bias, padding_mode, output_padding, device=device, dtype=dtype)

    def _output_padding(self, input, output_size) -> tuple:
        """PyTorch's rule: output_padding from a requested output_size (the sizes it can reach
        lie between the minimum and minimum + stride - 1)."""
        if output_size is None:
            return self.output_padding
        n = self._n
        out = tuple(int(v) for v in output_size)[-n:]
        if len(out) != n:
            raise FgradValueError(f"ConvTranspose{n}D: for {len(tuple(input.shape))}D input, output_size must "
                             f"have {n} or {n + 2} elements (got {len(tuple(output_size))})")
        in_sizes = tuple(input.shape)[-n:]
        result = []
        for o, i, s, p, d, k in zip(out, in_sizes, self.stride, self.padding, self.dilation,
                                    self.kernel_size):
            lo = (i - 1) * s - 2 * p + d * (k - 1) + 1
            if not lo <= o < lo + s:
                raise FgradValueError(f"requested an output size of {out}, but valid sizes range from "
                                 f"{lo} to {lo + s - 1} (for an input of {in_sizes})")
            result.append(o - lo)
        return tuple(result)

    def forward(self, input, output_size=None):
        op = self._output_padding(input, output_size)
        return self._conv(input, self.weight, self.bias, self.stride, self.padding, op, self.groups,
                          self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """Transposed 1-D convolution over [N, C_in, L] (or [C_in, L]); weight
    [in_channels, out_channels/groups, k]. forward(input, output_size) picks the
    output_padding that gives output_size."""

    _n, _conv = 1, staticmethod(conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    """Transposed 2-D convolution over [N, C_in, H, W] (or [C_in, H, W]); weight
    [in_channels, out_channels/groups, kH, kW]. forward(input, output_size) picks the
    output_padding that gives output_size."""

    _n, _conv = 2, staticmethod(conv_transpose2d)


class Unfold(Module):
    """Sliding blocks of [N, C, H, W] as columns [N, C*kH*kW, L] (F.unfold)."""

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, padding, stride

    def forward(self, input):
        return unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, "
                f"stride={self.stride}")


class Fold(Module):
    """Columns [N, C*kH*kW, L] summed back into [N, C, *output_size] (F.fold)."""

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input):
        return fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                    self.stride)

    def extra_repr(self) -> str:
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
                f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}")
