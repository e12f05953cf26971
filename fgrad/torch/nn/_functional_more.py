"""More of torch.nn.functional: the in-place activations (relu_, elu_, ...), the
`*_with_indices` pooling spellings, the margin losses over classes (multi_margin_loss,
multilabel_margin_loss), gumbel_softmax, triplet_margin_with_distance_loss and channel_shuffle.
The nn.functional names of torch's top-level functions that fgrad.torch defines above this
package (pdist, conv_tbc, conv_transpose3d, ...) are set by fgrad/torch/_functional_aliases.py."""
from __future__ import annotations

from typing import Callable

import numpy as np

from ... import numpy as fnp
from ...core.errors import FgradRuntimeError, FgradTypeError, FgradValueError
from .._tensor._ops_breadth import channel_shuffle as _channel_shuffle
from .._tensor.tensor import Tensor, check_inplace, commit_inplace
from . import _activations as A
from . import _pool_functional as P
from ._util import arr, concrete_or_none, dtype, reduce_loss, reduction_mode, shape, torch_op

__all__ = ["relu_", "elu_", "leaky_relu_", "hardtanh_", "celu_", "selu_", "rrelu_", "threshold_",
           "max_pool1d_with_indices", "max_pool2d_with_indices",
           "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
           "multi_margin_loss", "multilabel_margin_loss", "gumbel_softmax",
           "triplet_margin_with_distance_loss", "channel_shuffle"]


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
    from . import functional
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
    from .._tensor import creation
    if not isinstance(logits, Tensor):
        raise FgradTypeError(f"gumbel_softmax: logits must be a Tensor, got {type(logits).__name__}")
    if eps != 1e-10:
        import warnings
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
    from .._tensor import _ops as O
    from ._losses import _reduced, pairwise_distance
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
