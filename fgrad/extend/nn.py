"""The neural-network primitives' functions, in PyTorch's layouts (images NCHW, convolution
kernels OIHW), and the argument helpers that turn PyTorch-style arguments into their params.

Functions (each binds its primitive, fgrad.lax's `<name>_p`; every derivative of any order is
again one of them): conv2d, conv2d_input_grad, conv2d_weight_grad, max_pool2d,
max_pool2d_indices, avg_pool2d, unfold, fold, resample, relu, softplus, linear,
log_softmax, softmax, nll_loss, cross_entropy.

Helpers:
  pool_params(kernel_size, stride, padding, dilation=1, ceil_mode=False) -> dict: a pooling
    window's params (window, strides, padding, dilation, ceil_mode) from PyTorch's
    arguments (ints or pairs; stride None or () means the kernel size), or a ValueError
    naming the bad one.
  conv_padding(padding, kernel_hw, dilation) -> ((lo, hi), (lo, hi)): a convolution's
    padding per spatial axis from "valid", "same", an int, a pair, or (lo, hi) pairs.
  nll(logp, target, weight, ignore_index, reduction, label_smoothing, name): the negative
    log-likelihood of log-probabilities [N, C, ...] or [C] at class indices or class
    probabilities (nll_loss and cross_entropy with label smoothing), errors naming `name`.
  check_targets(target, C, ignore_index): IndexError for a concrete class index outside
    0..C-1 that is not ignore_index (traced targets pass).

Module:
  onednn: the optional oneDNN binding (fgrad.ops.nn.onednn); rnn_scan's loops use its cached
    matmul primitives for the per-step GEMMs.
"""
from __future__ import annotations

from ..ops.nn import onednn  # noqa: F401  (fgrad.torch.nn's recurrent GEMMs)
from ..ops.nn import (avg_pool2d, conv2d, conv2d_input_grad, conv2d_weight_grad, cross_entropy, fold, linear,
                      log_softmax, max_pool2d, max_pool2d_indices, nll_loss, relu, resample, softmax, softplus,
                      unfold)
from ..ops.nn._geometry import _pool_params as pool_params
from ..ops.nn.conv import _conv_padding as conv_padding
from ..ops.nn.dense import _nll as nll, check_targets

__all__ = ["conv2d", "conv2d_input_grad", "conv2d_weight_grad", "max_pool2d", "max_pool2d_indices",
           "avg_pool2d", "unfold", "fold", "resample", "relu", "softplus", "linear", "log_softmax", "softmax",
           "nll_loss", "cross_entropy", "pool_params", "conv_padding", "nll", "check_targets"]
