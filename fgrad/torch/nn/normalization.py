"""Normalisation layers beyond BatchNorm: LayerNorm, RMSNorm, GroupNorm, InstanceNorm1d/2d/3d
and LocalResponseNorm, with PyTorch's parameter names, shapes and initialisation."""
from __future__ import annotations

import numpy as np

from .. import _tensor as T  # the facade namespace: T.ones, T.zeros, ...
from ...core.errors import FgradValueError
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter


def _shape(normalized_shape) -> tuple:
    if isinstance(normalized_shape, (int, np.integer)):
        return (int(normalized_shape),)
    return tuple(int(d) for d in normalized_shape)


def _affine_params(m: Module, n: int, affine: bool, bias: bool, dtype, device) -> None:
    """weight (ones) and bias (zeros) of n channels, or None where not affine / no bias."""
    if affine:
        m.weight = Parameter(T.ones(n, dtype=dtype, device=device))
    else:
        m.register_parameter("weight", None)
    if affine and bias:
        m.bias = Parameter(T.zeros(n, dtype=dtype, device=device))
    else:
        m.register_parameter("bias", None)


class LayerNorm(Module):
    """Normalise over the trailing `normalized_shape` dims; weight ones, bias zeros."""

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True, bias: bool = True,
                 device=None, dtype=None) -> None:
        super().__init__()
        self.normalized_shape = _shape(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(T.ones(*self.normalized_shape, dtype=dtype, device=device))
            if bias:
                self.bias = Parameter(T.zeros(*self.normalized_shape, dtype=dtype, device=device))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


class RMSNorm(Module):
    """PyTorch's torch.nn.RMSNorm: the module form of `fgrad.torch.nn.functional.rms_norm`, with PyTorch's
    constructor arguments, defaults and parameters."""

    def __init__(self, normalized_shape, eps: float | None = None, elementwise_affine: bool = True,
                 device=None, dtype=None) -> None:
        super().__init__()
        self.normalized_shape = _shape(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(T.ones(*self.normalized_shape, dtype=dtype, device=device))
        else:
            self.register_parameter("weight", None)

    def forward(self, input):
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class GroupNorm(Module):
    """PyTorch's torch.nn.GroupNorm: the module form of `fgrad.torch.nn.functional.group_norm`, with PyTorch's
    constructor arguments, defaults and parameters."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True,
                 device=None, dtype=None, *, bias: bool = True) -> None:
        super().__init__()
        if num_channels % num_groups:
            raise FgradValueError("num_channels must be divisible by num_groups")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        _affine_params(self, num_channels, affine, bias, dtype, device)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class _InstanceNorm(Module):
    _spatial = 1

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1, affine: bool = False,
                 track_running_stats: bool = False, device=None, dtype=None, *, bias: bool = True) -> None:
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        _affine_params(self, num_features, affine, bias, dtype, device)
        if track_running_stats:
            self.register_buffer("running_mean", T.zeros(num_features, dtype=dtype, device=device))
            self.register_buffer("running_var", T.ones(num_features, dtype=dtype, device=device))
            self.register_buffer("num_batches_tracked", T(0, dtype=T.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def forward(self, input):
        nd = input.dim()
        if nd not in (self._spatial + 1, self._spatial + 2):
            raise FgradValueError(f"expected {self._spatial + 1}D or {self._spatial + 2}D input (got {nd}D input)")
        unbatched = nd == self._spatial + 1
        x = input.unsqueeze(0) if unbatched else input
        use_input_stats = self.training or not self.track_running_stats
        y = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias, use_input_stats,
                            self.momentum if self.momentum is not None else 0.1, self.eps)
        return y.squeeze(0) if unbatched else y

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class InstanceNorm1d(_InstanceNorm):
    """PyTorch's torch.nn.InstanceNorm1d: the module form of `fgrad.torch.nn.functional.instance_norm`, with PyTorch's
    constructor arguments, defaults and parameters."""

    _spatial = 1


class InstanceNorm2d(_InstanceNorm):
    """PyTorch's torch.nn.InstanceNorm2d: the module form of `fgrad.torch.nn.functional.instance_norm`, with PyTorch's
    constructor arguments, defaults and parameters."""

    _spatial = 2


class InstanceNorm3d(_InstanceNorm):
    """PyTorch's torch.nn.InstanceNorm3d: the module form of `fgrad.torch.nn.functional.instance_norm`, with PyTorch's
    constructor arguments, defaults and parameters."""

    _spatial = 3


class LocalResponseNorm(Module):
    """PyTorch's torch.nn.LocalResponseNorm: the module form of `fgrad.torch.nn.functional.local_response_norm`, with PyTorch's
    constructor arguments, defaults and parameters."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


__all__ = ["LayerNorm", "RMSNorm", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d",
           "LocalResponseNorm"]
