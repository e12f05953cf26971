"""More of torch.nn's modules, thin over fgrad.torch.nn.functional with PyTorch's constructor
arguments, parameters (initialised by the same init calls in the same order, so a seed gives
PyTorch's values), state_dict keys and repr: BatchNorm3d, MaxPool3d, ConvTranspose3d,
Softmax2d, Bilinear, ChannelShuffle, MultiMarginLoss, MultiLabelMarginLoss,
TripletMarginWithDistanceLoss, CTCLoss, NLLLoss2d and Container (deprecated), DataParallel
(on the CPU PyTorch's runs the module itself), and factory_kwargs."""
from __future__ import annotations

import math
import warnings
from typing import Any, Callable

import numpy as np

from .. import _tensor as T
from .._tensor.function import Function
from ...core.errors import FgradTypeError, FgradValueError
from . import functional as F
from . import init
from ._functional_more import channel_shuffle, multi_margin_loss, multilabel_margin_loss
from ._functional_more import triplet_margin_with_distance_loss
from .conv import _ConvTransposeNd
from .layers import NLLLoss, _BatchNorm, _Loss, _WeightedLoss
from .loss import PairwiseDistance
from .module import Module
from .parameter import Parameter
from ._spatial import ntuple
from .pooling import _AdaptiveMaxPool, _LPPool, _MaxPoolNd, _MaxUnpool, AvgPool2d

__all__ = ["CrossMapLRN2d", "FractionalMaxPool2d", "FractionalMaxPool3d", "SyncBatchNorm", "BatchNorm3d", "MaxPool3d", "AvgPool3d", "LPPool3d", "AdaptiveMaxPool3d", "MaxUnpool3d", "ConvTranspose3d", "Softmax2d", "Bilinear", "ChannelShuffle",
           "MultiMarginLoss", "MultiLabelMarginLoss", "TripletMarginWithDistanceLoss", "CTCLoss",
           "NLLLoss2d", "Container", "DataParallel", "factory_kwargs"]


class BatchNorm3d(_BatchNorm):
    """Batch normalisation of [N, C, D, H, W] inputs."""
    _expected_dims = (5,)


class _FractionalMaxPoolNd(Module):
    _n = 2

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices: bool = False,
                 _random_samples=None) -> None:
        super().__init__()
        n, name = self._n, type(self).__name__
        self.kernel_size = ntuple(kernel_size, n, "kernel_size")
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = ntuple(output_size, n, "output_size") if output_size is not None else None
        self.output_ratio = (None if output_ratio is None else tuple(output_ratio)
                             if isinstance(output_ratio, (list, tuple)) else (output_ratio,) * n)
        if output_size is None and output_ratio is None:
            raise FgradValueError(f"{name} requires specifying either an output size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise FgradValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise FgradValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        fn = F.fractional_max_pool2d if self._n == 2 else F.fractional_max_pool3d
        return fn(input, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
                  _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Fractional max pooling of [N, C, H, W] (functional.fractional_max_pool2d): windows placed
    by samples drawn from the default generator each call, or by the _random_samples buffer."""
    _n = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """Fractional max pooling of [N, C, T, H, W] (functional.fractional_max_pool3d)."""
    _n = 3


class SyncBatchNorm(_BatchNorm):
    """PyTorch's SyncBatchNorm in a single process (fgrad's case: no initialised process
    group): the statistics are the batch's own, as PyTorch falls back to batch_norm when there
    is nothing to synchronise. Takes input of any rank >= 2.

    Args:
        num_features, eps, momentum, affine, track_running_stats, device, dtype, bias: as
            BatchNorm's.
        process_group: kept as an attribute (PyTorch's)."""

    _expected_dims = tuple(range(2, 33))

    def __init__(self, num_features: int, eps: float = 1e-5, momentum=0.1, affine: bool = True,
                 track_running_stats: bool = True, process_group=None, device=None, dtype=None, *,
                 bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)
        self.process_group = process_group

    def forward(self, input):
        if input.dim() < 2:
            raise FgradValueError(f"expected at least 2D input (got {input.dim()}D input)")
        if input.size(1) == 0:
            raise FgradValueError("SyncBatchNorm number of input channels should be non-zero")
        return super().forward(input)

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group=None) -> Module:
        """`module` with every BatchNorm layer replaced by a SyncBatchNorm sharing its
        parameters and buffers (PyTorch's conversion).

        Args:
            module: a module (tree).
            process_group: the process group to record.

        Returns:
            The converted module (`module` itself when it is not a batch norm)."""
        out = module
        if isinstance(module, _BatchNorm):
            out = cls(module.num_features, module.eps, module.momentum, module.affine, module.track_running_stats,
                      process_group, bias=module.bias is not None)
            if module.affine:
                out.weight, out.bias = module.weight, module.bias
            out.running_mean, out.running_var = module.running_mean, module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out


class MaxPool3d(_MaxPoolNd):
    """Max over windows of [N, C, D, H, W] (or [C, D, H, W]); the derivative goes to each
    window's first maximum."""

    def forward(self, input):
        return F.max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            self.ceil_mode, self.return_indices)


class AvgPool3d(AvgPool2d):
    """Mean over windows of [N, C, D, H, W] (or [C, D, H, W])."""

    def forward(self, input):
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class LPPool3d(_LPPool):
    """(sum over each window of x**p)**(1/p) on [N, C, D, H, W]."""

    def forward(self, input):
        return F.lp_pool3d(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)


class AdaptiveMaxPool3d(_AdaptiveMaxPool):
    """Max pooling of [N, C, D, H, W] into output_size adaptive windows."""

    def forward(self, input):
        return F.adaptive_max_pool3d(input, self.output_size, self.return_indices)


class MaxUnpool3d(_MaxUnpool):
    """The partial inverse of MaxPool3d: values placed at their indices, zeros elsewhere."""

    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        super().__init__(kernel_size, stride, padding)
        # stored as triples, as PyTorch's MaxUnpool3d (its repr shows them)
        self.kernel_size = ntuple(kernel_size, 3, "kernel_size")
        self.stride = ntuple(stride if stride is not None else kernel_size, 3, "stride")
        self.padding = ntuple(padding, 3, "padding")

    def forward(self, input, indices, output_size=None):
        return F.max_unpool3d(input, indices, self.kernel_size, self.stride, self.padding, output_size)


def _conv_transpose3d(*args):
    return F.conv_transpose3d(*args)  # (set on functional when fgrad.torch has loaded)


class ConvTranspose3d(_ConvTransposeNd):
    """Transposed 3-D convolution over [N, C_in, D, H, W] (or unbatched); weight
    [in_channels, out_channels/groups, kD, kH, kW]. forward(input, output_size) picks the
    output_padding that gives output_size."""

    _n, _conv = 3, staticmethod(_conv_transpose3d)


class Softmax2d(Module):
    """Softmax over the channels of [N, C, H, W] or [C, H, W] input (dim -3)."""

    def forward(self, input):
        if input.dim() not in (3, 4):
            raise FgradValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead")
        return F.softmax(input, -3)


class Bilinear(Module):
    """y = x1^T A x2 + b, with weight A of shape (out_features, in1_features, in2_features),
    both parameters drawn from U(-1/sqrt(in1_features), 1/sqrt(in1_features)) as PyTorch does."""

    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True,
                 device=None, dtype=None) -> None:
        super().__init__()
        self.in1_features, self.in2_features, self.out_features = in1_features, in2_features, out_features
        self.weight = Parameter(T.empty((out_features, in1_features, in2_features), dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(T.empty(out_features, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class ChannelShuffle(Module):
    """Regroups the channels of (N, g * k, ...) input as (N, k * g, ...)."""

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"


class MultiMarginLoss(_WeightedLoss):
    """The multi-class hinge loss (functional.multi_margin_loss)."""

    def __init__(self, p: int = 1, margin: float = 1.0, weight=None, size_average=None, reduce=None,
                 reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        if p not in (1, 2):
            raise FgradValueError(f"only p == 1 and p == 2 supported, got p={p}")
        if weight is not None and weight.dim() != 1:
            raise FgradValueError(f"MultiMarginLoss: expected weight to be None or 1D tensor, got "
                                  f"{weight.dim()}D instead")
        self.p, self.margin = p, margin

    def forward(self, input, target):
        return multi_margin_loss(input, target, p=self.p, margin=self.margin, weight=self.weight,
                                 reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    """The multi-label hinge loss (functional.multilabel_margin_loss)."""

    def forward(self, input, target):
        return multilabel_margin_loss(input, target, reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """The triplet loss with a distance function of your choice
    (functional.triplet_margin_with_distance_loss)."""

    def __init__(self, *, distance_function: Callable | None = None, margin: float = 1.0,
                 swap: bool = False, reduction: str = "mean") -> None:
        super().__init__(size_average=None, reduce=None, reduction=reduction)
        if margin <= 0:
            raise FgradValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, "
                                  f"got {margin} instead")
        self.distance_function = distance_function if distance_function is not None else PairwiseDistance()
        self.margin, self.swap = margin, swap

    def forward(self, anchor, positive, negative):
        return triplet_margin_with_distance_loss(anchor, positive, negative,
                                                 distance_function=self.distance_function,
                                                 margin=self.margin, swap=self.swap, reduction=self.reduction)


class CTCLoss(_Loss):
    """The connectionist temporal classification loss (functional.ctc_loss)."""

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> None:
        super().__init__(reduction=reduction)
        self.blank, self.zero_infinity = blank, zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
                          self.zero_infinity)


class NLLLoss2d(NLLLoss):
    """PyTorch's deprecated NLLLoss2d: NLLLoss (which takes (N, C, H, W) input), with a warning."""

    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean") -> None:
        warnings.warn("NLLLoss2d has been deprecated. Please use NLLLoss instead as a drop-in replacement "
                      "and see https://pytorch.org/docs/main/nn.html#torch.nn.NLLLoss for more details.",
                      stacklevel=2)
        super().__init__(weight, size_average, ignore_index, reduce, reduction)


class Container(Module):
    """PyTorch's deprecated Container: a Module holding the keyword modules, with a warning."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__()
        warnings.warn("nn.Container is deprecated. All of it's functionality is now implemented in "
                      "nn.Module. Subclass that instead.", stacklevel=2)
        for key, value in kwargs.items():
            self.add_module(key, value)


class DataParallel(Module):
    """PyTorch's DataParallel where no accelerator is present (fgrad's case): it holds `module`
    (so the state_dict keys read module.<name>) and forward runs it on the inputs."""

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0) -> None:
        super().__init__()
        self.module = module
        self.device_ids: list = []

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


def factory_kwargs(kwargs: dict | None) -> dict:
    """The device/dtype/memory_format keywords of `kwargs`, merged with its 'factory_kwargs'
    dict (PyTorch's helper for module constructors).

    Args:
        kwargs: a dict with only those keys (or None).

    Returns:
        A new dict.

    Raises:
        TypeError: another key, or a key given both directly and in factory_kwargs."""
    if kwargs is None:
        return {}
    simple = {"device", "dtype", "memory_format"}
    expected = simple | {"factory_kwargs"}
    if not kwargs.keys() <= expected:
        raise FgradTypeError(f"unexpected kwargs {kwargs.keys() - expected}")
    r = dict(kwargs.get("factory_kwargs", {}))
    for k in simple:
        if k in kwargs:
            if k in r:
                raise FgradTypeError(f"{k} specified twice, in **kwargs and in factory_kwargs")
            r[k] = kwargs[k]
    return r


def _lrn_window_matrices(channels: int, size: int) -> tuple:
    """(M, B): the channel windows of PyTorch's legacy CrossMapLRN2d. M[c, j] = 1 where the
    forward's running sum for channel c holds x[j]^2 (built by replaying its recurrence, whose
    window at c = pre_pad still holds channel 0); B[c, j] = 1 where its hand-written backward
    sums channel j's ratio for channel c."""
    pre_pad = int((size - 1) / 2 + 1)
    m = np.zeros((channels, channels))
    m[0, :min(pre_pad, channels)] = 1
    for c in range(1, channels):
        m[c] = m[c - 1]
        if c < channels - pre_pad + 1:
            m[c, c + pre_pad - 1] += 1
        if c > pre_pad:
            m[c, c - pre_pad] -= 1
    inverse_pre_pad = int(size - (size - 1) / 2)
    c, j = np.arange(channels)[:, None], np.arange(channels)[None, :]
    b = ((j >= c - inverse_pre_pad) & (j <= c + size - 1 - inverse_pre_pad)).astype(np.float64)
    return m, b


class _CrossMapLRN2dFn(Function):
    """PyTorch's legacy cross-channel LRN (torch.nn._functions.CrossMapLRN2d): its forward's
    windows and its hand-written backward, so gradients are PyTorch's."""

    @staticmethod
    def forward(ctx, input, size, alpha, beta, k):
        if input.dim() != 4:
            raise FgradValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
        m, b = _lrn_window_matrices(input.size(1), size)
        x = input.detach()
        dt = x.dtype
        sq = x * x
        scale = T.einsum("cj,njhw->nchw", T(m, dtype=dt), sq) * (alpha / size) + k
        output = scale.pow(-beta) * x
        ctx.save_for_backward(input, output)
        ctx.scale, ctx.b, ctx.coef, ctx.beta = scale, T(b, dtype=dt), 2 * alpha * beta / size, beta
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, output = ctx.saved_tensors
        ratio = grad_output * output / ctx.scale
        accum = T.einsum("cj,njhw->nchw", ctx.b, ratio)
        grad_input = ctx.scale.pow(-ctx.beta) * grad_output - ctx.coef * input * accum
        return grad_input, None, None, None, None


_CrossMapLRN2dFn.__name__ = "CrossMapLRN2d"  # (its node: CrossMapLRN2dBackward, PyTorch's name)


class CrossMapLRN2d(Module):
    """PyTorch's legacy cross-channel local response normalisation of 4-D input:
    x / (k + alpha / size * sum of x^2 over neighbouring channels)^beta, with PyTorch's
    windows and backward (torch.nn._functions.CrossMapLRN2d).

    Args:
        size: the number of channels in a window.
        alpha, beta, k: the normalisation's constants."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return _CrossMapLRN2dFn.apply(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
