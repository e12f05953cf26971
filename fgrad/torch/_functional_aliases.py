"""nn.functional's names for torch's top-level functions that fgrad.torch defines above the nn
package (fgrad/torch/_breadth.py): pdist, conv_tbc, native_channel_shuffle, conv_transpose3d and
ctc_loss (with nn.functional's reduction='mean'). The package imports this module after _breadth, and it sets
them on fgrad.torch.nn.functional, so nn itself imports nothing above its layer."""
from __future__ import annotations

from typing import Any

from . import _breadth as B
from ._tensor.tensor import Tensor
from .nn import functional as _F

__all__ = ["pdist", "conv_tbc", "native_channel_shuffle", "conv_transpose3d", "ctc_loss"]


def pdist(input: Tensor, p: float = 2.0) -> Tensor:
    """torch.pdist: the p-norm distances between the rows of an (N, M) input, the upper
    triangle of cdist(input, input) row by row.

    Args:
        input: (N, M).
        p: the norm's order (>= 0).

    Returns:
        (N (N - 1) / 2,) distances."""
    return B.pdist(input, p)


def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:
    """torch.conv_tbc: 1-D convolution of time-batch-channel input.

    Args:
        input: (T, N, C_in).
        weight: (K, C_in, C_out).
        bias: (C_out,).
        pad: zero padding at both ends of T.

    Returns:
        (T + 2 pad - K + 1, N, C_out)."""
    return B.conv_tbc(input, weight, bias, pad)


def native_channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """torch.native_channel_shuffle (channel_shuffle).

    Args:
        input: a Tensor with channels in dim 1.
        groups: the number of groups.

    Returns:
        A Tensor of input's shape."""
    return B.native_channel_shuffle(input, groups)


def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
                     padding: Any = 0, output_padding: Any = 0, groups: int = 1,
                     dilation: Any = 1) -> Tensor:
    """torch.conv_transpose3d: the transposed 3-D convolution.

    Args:
        input: (N, C_in, D, H, W) or unbatched.
        weight: (C_in, C_out / groups, kD, kH, kW).
        bias: optional (C_out,).
        stride, padding, output_padding, groups, dilation: as PyTorch's.

    Returns:
        The output Tensor."""
    return B.conv_transpose3d(input, weight, bias, stride, padding, output_padding, groups,
                              dilation)


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any,
             blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """The connectionist temporal classification loss (torch.ctc_loss with nn.functional's
    default reduction, 'mean': each loss divided by its target length, then averaged).

    Args:
        log_probs: (T, N, C) or (T, C) log-probabilities.
        targets: (N, S) padded label rows, or the labels concatenated (1-D).
        input_lengths: (N,) frames per sample.
        target_lengths: (N,) labels per sample.
        blank: the blank label.
        reduction: 'none', 'mean' or 'sum'.
        zero_infinity: infinite losses and their gradients become 0.

    Returns:
        The loss."""
    return B.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, reduction,
                      zero_infinity)


for _name in __all__:
    setattr(_F, _name, globals()[_name])
    _F.__all__.append(_name)
