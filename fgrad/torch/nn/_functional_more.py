"""More of torch.nn.functional: the in-place activations (relu_, elu_, ...), the
`*_with_indices` pooling spellings, the margin losses over classes (multi_margin_loss,
multilabel_margin_loss), gumbel_softmax, triplet_margin_with_distance_loss, channel_shuffle and
linear_cross_entropy (with its LinearCrossEntropyOptions).
The nn.functional names of torch's top-level functions that fgrad.torch defines above this
package (pdist, conv_tbc, conv_transpose3d, ...) are set by fgrad/torch/_functional_aliases.py."""
from __future__ import annotations

import dataclasses
import math
import warnings
from typing import Callable

import numpy as np

from ... import numpy as fnp
from ...core.errors import FgradRuntimeError, FgradTypeError, FgradValueError
from .. import _tensor as T
from .._tensor._ops_breadth import channel_shuffle as _channel_shuffle
from .._tensor import _ops as O
from .._tensor import creation
from .._tensor.tensor import Tensor, check_inplace, commit_inplace
from . import _activations as A
from . import _pool_functional as P
from ._losses import _reduced, pairwise_distance
from ._util import arr, concrete_or_none, dtype, reduce_loss, reduction_mode, shape, torch_op

__all__ = ["relu_", "elu_", "leaky_relu_", "hardtanh_", "celu_", "selu_", "rrelu_", "threshold_",
           "max_pool1d_with_indices", "max_pool2d_with_indices",
           "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
           "multi_margin_loss", "multilabel_margin_loss", "gumbel_softmax",
           "triplet_margin_with_distance_loss", "channel_shuffle", "linear_cross_entropy",
           "assert_int_or_pair"]


# --- in-place activations ----------------------------------------------------------------------

def _inplace(name: str, fn: Callable) -> Callable:
    def op(input, *args, **kwargs):
        if not isinstance(input, Tensor):
            raise FgradTypeError(f"{name}(): argument 'input' must be a Tensor, not "
                                 f"{type(input).__name__} (the in-place form writes into it)")
        check_inplace(input)
        return commit_inplace(input, fn(input, *args, **kwargs))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"torch.nn.functional.{name}: {name[:-1]} written into `input`.\n\nArgs:\n"
                  f"    input: a Tensor (not a leaf that requires grad, under grad mode).\n"
                  f"    *args, **kwargs: {name[:-1]}'s other arguments.\n\nReturns:\n    input, "
                  "holding the result.\n\nRaises:\n    TypeError: input is not a Tensor.\n"
                  "    RuntimeError: input is a leaf that requires grad, under grad mode.")
    return op


def _relu(input):
    from . import functional  # (functional imports this module at its end)
    return functional.relu(input)


def _leaky_relu(input, negative_slope: float = 0.01):
    from . import functional  # (functional imports this module at its end)
    return functional.leaky_relu(input, negative_slope)


relu_ = _inplace("relu_", _relu)
elu_ = _inplace("elu_", A.elu)
leaky_relu_ = _inplace("leaky_relu_", _leaky_relu)
hardtanh_ = _inplace("hardtanh_", A.hardtanh)
celu_ = _inplace("celu_", A.celu)
selu_ = _inplace("selu_", A.selu)
rrelu_ = _inplace("rrelu_", A.rrelu)
threshold_ = _inplace("threshold_", A.threshold)


# --- pooling with indices ----------------------------------------------------------------------

def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode: bool = False, return_indices: bool = False):
    """max_pool1d's (values, indices): PyTorch's spelling of max_pool1d(..., return_indices=True)
    (its return_indices argument is ignored, as PyTorch's).

    Args:
        input: (N, C, L) or (C, L).
        kernel_size, stride, padding, dilation, ceil_mode: as max_pool1d's.

    Returns:
        (values, int64 indices along L)."""
    return P.max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode: bool = False, return_indices: bool = False):
    """max_pool2d's (values, indices), as max_pool1d_with_indices.

    Args:
        input: (N, C, H, W) or (C, H, W).
        kernel_size, stride, padding, dilation, ceil_mode: as max_pool2d's.

    Returns:
        (values, int64 flat indices h * W + w)."""
    return P.max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices: bool = False):
    """adaptive_max_pool1d's (values, indices).

    Args:
        input: (N, C, L) or (C, L).
        output_size: the output length.

    Returns:
        (values, int64 indices)."""
    return P.adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices: bool = False):
    """adaptive_max_pool2d's (values, indices).

    Args:
        input: (N, C, H, W) or (C, H, W).
        output_size: an int or (H_out, W_out) (None keeps that size).

    Returns:
        (values, int64 flat indices)."""
    return P.adaptive_max_pool2d(input, output_size, True)


# --- margin losses over classes ----------------------------------------------------------------

def _class_rows(name: str, input, target):
    """(batched input shape, target as a concrete int64 row per sample, squeeze flag)."""
    s = shape(input)
    if len(s) not in (1, 2) or (len(s) == 2 and s[1] == 0):
        raise FgradRuntimeError(f"{name}: expected a non-empty 1-D or 2-D input (classes last), got "
                                f"shape {list(s)}")
    t = concrete_or_none(target)
    if t is None:
        raise FgradValueError(f"{name}: the target must be concrete (it picks the classes), not traced")
    t = np.asarray(t)
    if t.dtype.kind not in "iu":
        raise FgradRuntimeError(f"{name}: expected an integer (class index) target, got dtype {t.dtype}")
    return s, t


@torch_op("MultiMarginLossBackward0", consts=("target", "weight"))
def multi_margin_loss(input, target, p: int = 1, margin: float = 1.0, weight=None,
                      size_average=None, reduce=None, reduction: str = "mean"):
    """The multi-class hinge loss: for each sample, the sum over classes j != y of
    w[y] * max(0, margin - x[y] + x[j])^p, divided by the number of classes.

    Args:
        input: (N, C) or (C,) scores.
        target: (N,) or () class indices.
        p: 1 or 2.
        margin: the margin.
        weight: optional (C,) class weights (the target class's weight scales its terms).
        size_average, reduce: PyTorch's deprecated reduction flags.
        reduction: 'none', 'mean' or 'sum'.

    Returns:
        The loss (per sample for 'none').

    Raises:
        ValueError: p other than 1 or 2.
        RuntimeError: a target shape that does not match, or a class index out of range."""
    if p not in (1, 2):
        raise FgradValueError(f"only p == 1 and p == 2 supported, got p={p}")
    reduction = reduction_mode(size_average, reduce, reduction)
    x = arr(input, "multi_margin_loss")
    s, t = _class_rows("multi_margin_loss", x, target)
    n, c = (1, s[0]) if len(s) == 1 else s
    if t.size != n or (len(s) == 2 and t.ndim != 1):
        raise FgradRuntimeError(f"multi_margin_loss: inconsistent target size: {list(t.shape)} for "
                                f"input of size: {list(s)}")
    t = t.reshape(n)
    if t.size and (t.min() < 0 or t.max() >= c):
        raise FgradRuntimeError(f"multi_margin_loss: target out of range: classes are 0..{c - 1}, "
                                f"got {t.min()}..{t.max()}")
    x2 = fnp.reshape(x, (n, c))
    rows = np.arange(n)
    xy = fnp.reshape(x2[rows, t], (n, 1))
    z = fnp.add(fnp.subtract(margin, xy), x2)
    h = fnp.maximum(z, 0.0)
    if p == 2:
        h = fnp.multiply(h, h)
    if weight is not None:
        h = fnp.multiply(h, fnp.reshape(fnp.asarray(weight)[t], (n, 1)))
    keep = np.ones((n, c), bool)
    keep[rows, t] = False
    loss = fnp.divide(fnp.sum(fnp.where(keep, h, fnp.zeros((), dtype(x))), axis=1), c)
    loss = fnp.astype(loss, dtype(x))
    if len(s) == 1:
        loss = fnp.reshape(loss, ())
    return reduce_loss("multi_margin_loss", loss, reduction)


@torch_op("MultilabelMarginLossBackward0", consts=("target",))
def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction: str = "mean"):
    """The multi-label hinge loss: for each sample, with Y its target classes (the leading
    entries of its target row, up to the first -1), the sum over j in Y and i not in Y of
    max(0, 1 - (x[j] - x[i])), divided by the number of classes.

    Args:
        input: (N, C) or (C,) scores.
        target: int64 of input's shape: class indices, then -1 padding.
        size_average, reduce: PyTorch's deprecated reduction flags.
        reduction: 'none', 'mean' or 'sum'.

    Returns:
        The loss (per sample for 'none').

    Raises:
        RuntimeError: a target whose shape differs from input's, or a class index out of range."""
    reduction = reduction_mode(size_average, reduce, reduction)
    x = arr(input, "multilabel_margin_loss")
    s, t = _class_rows("multilabel_margin_loss", x, target)
    if tuple(t.shape) != tuple(s):
        raise FgradRuntimeError(f"multilabel_margin_loss: inconsistent target size: {list(t.shape)} for "
                                f"input of size: {list(s)}")
    n, c = (1, s[0]) if len(s) == 1 else s
    t = t.reshape(n, c)
    is_target = np.zeros((n, c), bool)   # i in Y
    pairs = np.zeros((n, c, c), bool)    # [sample, j in Y (repeats counted), i]
    counts = np.zeros((n, c), np.int64)  # how often class j is listed before the first -1
    for k in range(n):
        for j in t[k]:
            if j < 0:
                break
            if j >= c:
                raise FgradRuntimeError(f"multilabel_margin_loss: target out of range: classes are "
                                        f"0..{c - 1}, got {j}")
            is_target[k, j] = True
            counts[k, j] += 1
    pairs = (counts[:, :, None] > 0) & ~is_target[:, None, :]
    x2 = fnp.reshape(x, (n, c))
    # z[k, j, i] = 1 - (x[k, j] - x[k, i])
    z = fnp.subtract(1.0, fnp.subtract(fnp.reshape(x2, (n, c, 1)), fnp.reshape(x2, (n, 1, c))))
    h = fnp.where(pairs, fnp.maximum(z, 0.0), fnp.zeros((), dtype(x)))
    h = fnp.multiply(h, counts[:, :, None].astype(dtype(x)))
    loss = fnp.astype(fnp.divide(fnp.sum(h, axis=(1, 2)), c), dtype(x))
    if len(s) == 1:
        loss = fnp.reshape(loss, ())
    return reduce_loss("multilabel_margin_loss", loss, reduction)


# --- compositions of torch ops -----------------------------------------------------------------

def gumbel_softmax(logits: Tensor, tau: float = 1.0, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    """A sample of the Gumbel-softmax distribution: softmax((logits + g) / tau) with g standard
    Gumbel noise, drawn as PyTorch draws it (-log of exponential_()), so the same seed gives
    PyTorch's sample. With hard=True, the one-hot of its argmax in the forward pass and the
    soft sample's gradient (the straight-through estimator).

    Args:
        logits: unnormalized log-probabilities (a float Tensor).
        tau: the temperature (> 0).
        hard: return one-hot samples.
        eps: unused (PyTorch's deprecated argument).
        dim: the class dimension.

    Returns:
        A Tensor of logits' shape."""
    if not isinstance(logits, Tensor):
        raise FgradTypeError(f"gumbel_softmax: logits must be a Tensor, got {type(logits).__name__}")
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = -creation.empty_like(logits).exponential_().log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = creation.zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function: Callable | None = None,
                                      margin: float = 1.0, swap: bool = False,
                                      reduction: str = "mean") -> Tensor:
    """max(d(a, p) - d(a, n) + margin, 0) with a distance function of your choice
    (pairwise_distance by default); swap uses min(d(a, n), d(p, n)) as the negative distance.

    Args:
        anchor, positive, negative: Tensors of the same number of dimensions.
        distance_function: (x, y) -> distances, pairwise_distance when None.
        margin: the margin (> 0).
        swap: the distance swap of Balntas et al.
        reduction: 'none', 'mean' or 'sum'.

    Returns:
        The loss.

    Raises:
        ValueError: margin <= 0 or an unknown reduction.
        RuntimeError: inputs of different numbers of dimensions."""
    if margin <= 0:
        raise FgradValueError(f"triplet_margin_with_distance_loss: expected margin to be greater than 0, "
                              f"got {margin} instead")
    if reduction not in ("mean", "sum", "none"):
        raise FgradValueError(f"{reduction} is not a valid value for reduction")
    dims = (anchor.ndim, positive.ndim, negative.ndim)
    if len(set(dims)) != 1:
        raise FgradRuntimeError(f"The anchor, positive, and negative tensors are expected to have the same "
                                f"number of dimensions, but got: anchor {dims[0]}D, positive {dims[1]}D, "
                                f"and negative {dims[2]}D inputs")
    dist = distance_function if distance_function is not None else pairwise_distance
    dist_pos = dist(anchor, positive)
    dist_neg = dist(anchor, negative)
    if swap:
        dist_neg = O.minimum(dist_neg, dist(positive, negative))
    loss = O.clamp_min(margin + dist_pos - dist_neg, 0)
    return _reduced("triplet_margin_with_distance_loss", loss, reduction)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """torch.channel_shuffle: (N, g * k, ...) channels regrouped as (N, k * g, ...).

    Args:
        input: a Tensor with channels in dim 1.
        groups: the number of groups g (divides the channels).

    Returns:
        A Tensor of input's shape."""
    return _channel_shuffle(input, groups)


# --- linear + cross-entropy ----------------------------------------------------------------------

@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """PyTorch's options of linear_cross_entropy's chunked path (fgrad computes the logits
    whole, PyTorch's reference path, whichever options are given: the values agree up to
    rounding). The fields are validated as PyTorch's.

    Args:
        allow_retain_graph: allow retain_graph=True on backward.
        batch_chunk_size: rows per chunk (a positive int or None).
        chunking_method: "auto", None or "aspect_ratio[:k]".
        acc_policy: "auto", "accurate", "balanced" or "compact".
        acc_dtype: the accumulation dtype or None."""

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: object = None

    def __post_init__(self):
        if self.acc_policy not in {"auto", "accurate", "balanced", "compact"}:
            raise FgradValueError(f"invalid acc_policy: {self.acc_policy!r}")
        if self.chunking_method is not None and self.chunking_method != "auto":
            name, sep, factor = self.chunking_method.partition(":")
            if not sep:
                factor = "1"
            if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise FgradValueError(f"invalid chunking_method: {self.chunking_method!r}")
        if not (self.batch_chunk_size is None
                or (isinstance(self.batch_chunk_size, int) and self.batch_chunk_size > 0)):
            raise FgradValueError(f"batch_chunk_size must be positive int or None, got {self.batch_chunk_size!r}")
        if self.acc_dtype is not None and self.acc_dtype not in (T.float16, T.float32, T.float64) \
                and str(self.acc_dtype) != "torch.bfloat16":
            raise FgradValueError(f"acc_dtype must be one of {{None, torch.float16, torch.bfloat16, torch.float32, "
                                  f"torch.float64}}, got {self.acc_dtype!r}. Pass acc_dtype=None to let the op "
                                  "pick automatically.")


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None,
                         reduction: str = "mean", ignore_index: int | None = None,
                         label_smoothing: float = 0.0, options: LinearCrossEntropyOptions | None = None):
    """cross_entropy(linear(input, linear_weight, linear_bias), target): the logits of a
    (num_classes, *out_features, in_features) weight, then PyTorch's cross-entropy (class
    weights, ignore_index, label smoothing, probability targets).

    Args:
        input: (N, in_features) or (in_features,).
        linear_weight: (num_classes, *out_features, in_features).
        target: class indices of shape (N, *out_features), or probabilities of the logits' shape.
        linear_bias: optional (num_classes, *out_features).
        weight: optional (num_classes,) class weights.
        reduction: 'none', 'mean' or 'sum'.
        ignore_index: a target value that contributes nothing (not with probability targets).
        label_smoothing: in [0, 1].
        options: a LinearCrossEntropyOptions (accepted; fgrad computes the logits whole).

    Returns:
        The loss.

    Raises:
        RuntimeError: inconsistent shapes, or ignore_index with probability targets."""
    if input.dim() < 1 or input.dim() > 2:
        raise FgradRuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise FgradRuntimeError(f"expected linear_weight with dimensionality at least 2, got {linear_weight.dim()}")
    num_batches = tuple(input.shape[:-1])
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise FgradRuntimeError("expected equal input and linear_weight last dimensions (in_features), got "
                                f"{input.shape[-1]} and {linear_weight.shape[-1]}, respectively")
    num_classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise FgradRuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got "
                                f"{tuple(linear_bias.shape)}")
    if out_features and not num_batches:
        raise FgradRuntimeError(f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} "
                                f"requires batched input, (N, {in_features}), got unbatched input with shape "
                                f"{tuple(input.shape)}")
    logits_shape = (*num_batches, num_classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise FgradRuntimeError("ignore_index cannot be specified when target contains probabilities")
    ignore_index = ignore_index if ignore_index is not None else -100
    if options is not None and (out_features or reduction not in {"mean", "sum", "none"}
                                or label_smoothing != 0.0 or target.dtype != T.int64):
        warnings.warn("linear_cross_entropy: ``options`` ignored; chunked path needs reduction in "
                      "{'mean','sum','none'}, label_smoothing == 0, target.dtype == int64, out_features == (). Got "
                      f"reduction={reduction!r}, label_smoothing={label_smoothing}, target.dtype={target.dtype}, "
                      f"out_features={tuple(out_features)}, tracing=False, linear_bias.shape="
                      f"{tuple(linear_bias.shape) if linear_bias is not None else None}.", stacklevel=2)
    if out_features:
        linear_weight = linear_weight.reshape((math.prod(out_features, start=num_classes), in_features))
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(math.prod(out_features, start=num_classes))
    from . import functional as F  # (functional imports this module at its end)
    logits = F.linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return F.cross_entropy(logits, target, weight=weight, reduction=reduction, ignore_index=ignore_index,
                           label_smoothing=label_smoothing)


def assert_int_or_pair(arg, arg_name: str, message: str) -> None:
    """PyTorch's argument check: `arg` is an int or has two entries.

    Args:
        arg: the value checked.
        arg_name: its name, put into `message`.
        message: a format string with one {} for arg_name.

    Raises:
        AssertionError: message.format(arg_name), otherwise."""
    if not (isinstance(arg, int) or len(arg) == 2):
        raise AssertionError(message.format(arg_name))
