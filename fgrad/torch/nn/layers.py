"""Layers with PyTorch's names, parameter shapes and default initialisation."""
from __future__ import annotations

import math

from .. import _tensor as T  # the facade namespace: T(data), T.zeros, T.float32, ...
from ...core.errors import FgradValueError
from .._tensor.grad_mode import no_grad
from . import functional as F
from . import init
from .conv import Conv2d  # noqa: F401  (defined with the other convolutions; public here too)
from .module import Module
from .parameter import Parameter
from .pooling import AvgPool2d, MaxPool2d  # noqa: F401  (likewise, with the other poolings)

__all__ = ["Identity", "Linear", "Conv2d", "MaxPool2d", "AvgPool2d", "ReLU", "LeakyReLU", "Tanh",
           "Sigmoid", "Softmax", "LogSoftmax", "Dropout", "BatchNorm1d", "BatchNorm2d", "Flatten", "Unflatten",
           "CrossEntropyLoss", "NLLLoss", "MSELoss", "L1Loss"]


def _empty(shape, dtype=None, device=None):
    return T.empty(*shape, dtype=dtype, device=device)


class Identity(Module):
    """PyTorch's torch.nn.Identity: returns its input unchanged (constructor arguments are accepted and ignored)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """y = x W^T + b with W [out_features, in_features]; W ~ kaiming_uniform(a=sqrt(5))
    (i.e. U(-1/sqrt(in), 1/sqrt(in))), b ~ U(-1/sqrt(in), 1/sqrt(in))."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__()
        self.in_features = int(in_features)
        self.out_features = int(out_features)
        self.weight = Parameter(_empty((self.out_features, self.in_features), dtype, device))
        if bias:
            self.bias = Parameter(_empty((self.out_features,), dtype, device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.in_features
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class ReLU(Module):
    """PyTorch's torch.nn.ReLU: the module form of `fgrad.torch.nn.functional.relu`, with PyTorch's
    constructor arguments, defaults and parameters."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class LeakyReLU(Module):
    """PyTorch's torch.nn.LeakyReLU: the module form of `fgrad.torch.nn.functional.leaky_relu`, with PyTorch's
    constructor arguments, defaults and parameters."""

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}"


class Tanh(Module):
    """PyTorch's torch.nn.Tanh: the module form of `fgrad.torch.nn.functional.tanh`, with PyTorch's
    constructor arguments, defaults and parameters."""

    def forward(self, input):
        return F.tanh(input)


class Sigmoid(Module):
    """PyTorch's torch.nn.Sigmoid: the module form of `fgrad.torch.nn.functional.sigmoid`, with PyTorch's
    constructor arguments, defaults and parameters."""

    def forward(self, input):
        return F.sigmoid(input)


class Softmax(Module):
    """PyTorch's torch.nn.Softmax: the module form of `fgrad.torch.nn.functional.softmax`, with PyTorch's
    constructor arguments, defaults and parameters."""

    def __init__(self, dim=None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmax(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    """PyTorch's torch.nn.LogSoftmax: the module form of `fgrad.torch.nn.functional.log_softmax`, with PyTorch's
    constructor arguments, defaults and parameters."""

    def forward(self, input):
        return F.log_softmax(input, self.dim)


class Dropout(Module):
    """Zeroes elements with probability p in training mode (scaling the rest by 1/(1-p));
    the identity in eval mode."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise FgradValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return F.dropout(input, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class _BatchNorm(Module):
    _expected_dims: tuple = ()

    def __init__(self, num_features: int, eps: float = 1e-5, momentum=0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None, *, bias: bool = True) -> None:
        super().__init__()
        self.num_features, self.eps, self.momentum = int(num_features), eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = Parameter(T.ones(self.num_features, dtype=dtype, device=device))
        else:
            self.register_parameter("weight", None)
        if affine and bias:
            self.bias = Parameter(T.zeros(self.num_features, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", T.zeros(self.num_features, dtype=dtype, device=device))
            self.register_buffer("running_var", T.ones(self.num_features, dtype=dtype, device=device))
            self.register_buffer("num_batches_tracked", T(0, dtype=T.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            init.zeros_(self.running_mean)
            init.ones_(self.running_var)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        ndim = len(tuple(input.shape))
        if ndim not in self._expected_dims:
            raise FgradValueError(f"expected {' or '.join(f'{d}D' for d in self._expected_dims)} input "
                             f"(got {ndim}D input)")
        momentum = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            with no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:  # cumulative moving average
                momentum = 1.0 / float(self.num_batches_tracked.item())
        use_batch_stats = self.training or not self.track_running_stats
        return F.batch_norm(input,
                            self.running_mean if not self.training or self.track_running_stats else None,
                            self.running_var if not self.training or self.track_running_stats else None,
                            self.weight, self.bias, use_batch_stats, momentum, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of [N, C] or [N, C, L] inputs."""
    _expected_dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of [N, C, H, W] inputs."""
    _expected_dims = (4,)


class Flatten(Module):
    """PyTorch's torch.nn.Flatten: the module form of `fgrad.torch.flatten(input, start_dim, end_dim)`, with PyTorch's defaults (start_dim=1, end_dim=-1)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):
        return F.flatten(input, self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Split dimension `dim` into `unflattened_size` (the inverse of Flatten)."""

    def __init__(self, dim: int | str, unflattened_size) -> None:
        super().__init__()
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, input):
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


# --- losses ---------------------------------------------------------------------------------------

class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__()
        self.reduction = F._reduction(size_average, reduce, reduction)


class _WeightedLoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class CrossEntropyLoss(_WeightedLoss):
    """log_softmax over the class axis then negative log-likelihood (PyTorch's semantics:
    ignore_index, class weights, label_smoothing, probability targets)."""

    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean", label_smoothing: float = 0.0) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(input, target, self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class NLLLoss(_WeightedLoss):
    """PyTorch's torch.nn.NLLLoss: the module form of `fgrad.torch.nn.functional.nll_loss`, with PyTorch's
    constructor arguments, defaults and parameters."""

    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        return F.nll_loss(input, target, self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class MSELoss(_Loss):
    """PyTorch's torch.nn.MSELoss: the module form of `fgrad.torch.nn.functional.mse_loss`, with PyTorch's
    constructor arguments, defaults and parameters."""

    def forward(self, input, target):
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    """PyTorch's torch.nn.L1Loss: the module form of `fgrad.torch.nn.functional.l1_loss`, with PyTorch's
    constructor arguments, defaults and parameters."""

    def forward(self, input, target):
        return F.l1_loss(input, target, reduction=self.reduction)
