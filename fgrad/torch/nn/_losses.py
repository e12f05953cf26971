"""Loss functions of fgrad.torch.nn.functional beyond cross_entropy, nll_loss, mse_loss and
l1_loss: PyTorch's formulas (including its clamps and conventions at the edges, e.g. BCE's
log clamped at -100 and KL's 0 * log 0 = 0), written with fgrad ops so that every loss
differentiates to any order. On Tensors each loss is one torch op (`torch_op`, one node):
named as PyTorch's node where PyTorch's loss is one too (BinaryCrossEntropyBackward0, ...),
else after the last op of PyTorch's composition (MeanBackward0 for reduction='mean', ...)."""
from __future__ import annotations

import functools
import inspect
import math
import warnings

import numpy as np

from ... import numpy as fnp
from ...api import stop_gradient
from ...core.errors import FgradRuntimeError, FgradValueError
from ...extend import nn as nnops
from ._activations import logsigmoid
from .._tensor._scalar_ops import add_scalar, scalar_sub, sub_scalar
from ._util import (
    aten_norm,
    arr,
    concrete_or_none,
    dtype,
    float_input,
    has_tensor,
    on_tensors,
    reduce_loss,
    reduction_mode,
    shape,
    torch_op,
)
from .._tensor._boundary import call
from .._tensor.creation import full, full_like, ones_like, zeros_like
from .._tensor.grad_mode import no_grad
from .._tensor._ops import minimum, where
from .._tensor._ops_math import xlogy


def loss_op(unreduced: str):
    """Decorator: the loss over plain values becomes one torch op on Tensors, named as the
    last op of PyTorch's composition: MeanBackward0 / SumBackward0 for those reductions,
    `unreduced` (the elementwise op's node) for reduction='none'."""
    def deco(fn):
        sig = inspect.signature(fn)

        @functools.wraps(fn)
        def op(*args, **kwargs):
            if not has_tensor(args, kwargs):
                return fn(*args, **kwargs)
            a = sig.bind(*args, **kwargs).arguments
            r = reduction_mode(a.get("size_average"), a.get("reduce"), a.get("reduction", "mean"))
            return call({"mean": "MeanBackward0", "sum": "SumBackward0", "batchmean": "DivBackward0"}.get(
                r, unreduced), fn, args, kwargs)
        return op
    return deco


def _same_shape(name: str, input, target) -> None:
    if shape(input) != shape(target):
        raise FgradValueError(f"Using a target size ({list(shape(target))}) that is different to the input size "
                         f"({list(shape(input))}) is deprecated. Please ensure they have the same size.")


def _check_reduction(reduction: str, extra=()) -> None:
    if reduction not in ("mean", "sum", "none") + tuple(extra):
        raise FgradValueError(f"{reduction} is not a valid value for reduction")


def _softplus(x):
    return nnops.softplus(x, 1.0, 20.0)


@torch_op("BinaryCrossEntropyBackward0", consts=("weight",))
def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction: str = "mean"):
    """-(t log p + (1 - t) log(1 - p)) with each log clamped at -100 (PyTorch's), input = p."""
    reduction = reduction_mode(size_average, reduce, reduction)
    _check_reduction(reduction)
    p, t = arr(input, "binary_cross_entropy"), arr(target, "binary_cross_entropy")
    _same_shape("binary_cross_entropy", p, t)
    log_p = fnp.maximum(fnp.log(p), -100.0)
    log_q = fnp.maximum(fnp.log1p(fnp.negative(p)), -100.0)
    loss = fnp.negative(fnp.add(fnp.multiply(t, log_p), fnp.multiply(fnp.subtract(1.0, t), log_q)))
    if weight is not None:
        loss = fnp.multiply(loss, weight)
    return reduce_loss("binary_cross_entropy", loss, reduction)


@torch_op("BinaryCrossEntropyWithLogitsBackward0", consts=("weight", "pos_weight"))
def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction: str = "mean", pos_weight=None):
    """BCE of sigmoid(input), computed from the logits without overflow; `pos_weight`
    multiplies the positive term (broadcast along the last, class dimension)."""
    reduction = reduction_mode(size_average, reduce, reduction)
    _check_reduction(reduction)
    x, t = arr(input, "binary_cross_entropy_with_logits"), arr(target, "binary_cross_entropy_with_logits")
    _same_shape("binary_cross_entropy_with_logits", x, t)
    float_input("binary_cross_entropy_with_logits", x)
    # log(1 + exp(-x)) = softplus(-x); loss = (1 - t) x + (1 + (pw - 1) t) softplus(-x)
    sp = _softplus(fnp.negative(x))
    if pos_weight is None:
        loss = fnp.add(fnp.multiply(fnp.subtract(1.0, t), x), sp)
    else:
        coef = fnp.add(fnp.multiply(fnp.subtract(pos_weight, 1.0), t), 1.0)
        loss = fnp.add(fnp.multiply(fnp.subtract(1.0, t), x), fnp.multiply(coef, sp))
    if weight is not None:
        loss = fnp.multiply(loss, weight)
    return reduce_loss("binary_cross_entropy_with_logits", loss, reduction)


def _pointwise(name, input, target, reduction):
    x, t = arr(input, name), arr(target, name)
    if shape(x) != shape(t):
        warnings.warn(f"Using a target size ({shape(t)}) that is different to the input size ({shape(x)}). This "
                      "will likely lead to incorrect results due to broadcasting. Please ensure they have the same "
                      "size.", UserWarning, stacklevel=3)
    return fnp.subtract(x, t)


@torch_op("SmoothL1LossBackward0")
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction: str = "mean", beta: float = 1.0):
    """0.5 d²/beta where |d| < beta, |d| - beta/2 elsewhere (plain L1 for beta = 0)."""
    reduction = reduction_mode(size_average, reduce, reduction)
    if beta < 0:
        raise FgradRuntimeError("smooth_l1_loss does not support negative values for beta.")
    d = _pointwise("smooth_l1_loss", input, target, reduction)
    ad = fnp.abs(d)
    if beta == 0:
        return reduce_loss("smooth_l1_loss", ad, reduction)
    loss = fnp.where(fnp.less(ad, beta), fnp.divide(fnp.multiply(fnp.square(d), 0.5), beta),
                     fnp.subtract(ad, 0.5 * beta))
    return reduce_loss("smooth_l1_loss", loss, reduction)


@torch_op("HuberLossBackward0")
def huber_loss(input, target, reduction: str = "mean", delta: float = 1.0, weight=None):
    """0.5 d² where |d| < delta, delta (|d| - delta/2) elsewhere."""
    if delta <= 0:
        raise FgradRuntimeError("huber_loss does not support non-positive values for delta.")
    d = _pointwise("huber_loss", input, target, reduction)
    ad = fnp.abs(d)
    loss = fnp.where(fnp.less(ad, delta), fnp.multiply(fnp.square(d), 0.5), fnp.multiply(fnp.subtract(ad, 0.5 * delta),
                                                                                          delta))
    if weight is not None:
        loss = fnp.multiply(loss, weight)
    return reduce_loss("huber_loss", loss, reduction)


@on_tensors
def kl_div(input, target, size_average=None, reduce=None, reduction: str = "mean", log_target: bool = False):
    """Pointwise t (log t - input), with input holding log-probabilities (0 where t = 0);
    'batchmean' divides the sum by the batch size (the KL divergence per example). As
    PyTorch's composition of torch ops (SubBackward0 over XlogyBackward0 and MulBackward0)."""
    reduction = reduction_mode(size_average, reduce, reduction)
    _check_reduction(reduction, ("batchmean",))
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = xlogy(target, target) - target * input
    if reduction == "batchmean":
        n = input.shape[0] if input.dim() else 1
        return loss.sum() / full((), n, dtype=loss.dtype)  # (a Tensor divisor: PyTorch's DivBackward0)
    if reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                      "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                      "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                      UserWarning, stacklevel=3)
    return _reduced("kl_div", loss, reduction)


@on_tensors
def cosine_similarity(x1, x2, dim: int = 1, eps: float = 1e-8):
    """(x1 / max(‖x1‖, eps)) · (x2 / max(‖x2‖, eps)) along dim, as PyTorch's composition: each
    norm is cloned and clamped in place outside the graph (the clamp changes the value, not
    the derivative), the pair broadcast first (SumBackward1 of MulBackward0 of two DivBackward0
    over the input and CloneBackward0 of LinalgVectorNormBackward0)."""
    if tuple(x1.shape) != tuple(x2.shape):
        both = tuple(np.broadcast_shapes(tuple(x1.shape), tuple(x2.shape)))
        x1, x2 = x1.expand(both), x2.expand(both)
    n1 = x1.norm(2, dim, keepdim=True).clone()
    n2 = x2.norm(2, dim, keepdim=True).clone()
    with no_grad():
        n1.clamp_min_(eps)
        n2.clamp_min_(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


@on_tensors
def pairwise_distance(x1, x2, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
    """‖x1 - x2 + eps‖_p along the last dimension of the broadcast pair, as PyTorch's
    composition (NormBackward1 of AddBackward1 of SubBackward0)."""
    nd = max(x1.dim(), x2.dim())
    return aten_norm(add_scalar(x1 - x2, eps), p, nd - 1 if nd else None, keepdim)


@on_tensors
def cosine_embedding_loss(input1, input2, target, margin: float = 0.0, size_average=None, reduce=None,
                          reduction: str = "mean"):
    """1 - cos(x1, x2) for target 1, max(0, cos - margin) for target -1, as PyTorch's composition
    (the squared norms get 1e-12; a WhereBackward0 per target sign, summed, then reduced)."""
    reduction = reduction_mode(size_average, reduce, reduction)
    d = target.dim()
    if d not in (0, 1):
        raise FgradRuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if (input1.dim(), input2.dim()) != (d + 1, d + 1):
        raise FgradRuntimeError(f"{d}D target tensor expects {d + 1}D input tensors, but found inputs with sizes "
                                f"{list(input1.shape)} and {list(input2.shape)}.")
    eps = 1e-12  # PyTorch's EPSILON in the squared norms
    prod_sum = (input1 * input2).sum(d)
    denom = (add_scalar((input1 * input1).sum(d), eps) * add_scalar((input2 * input2).sum(d), eps)).sqrt()
    cos = prod_sum / denom
    zeros = zeros_like(cos)
    pos = scalar_sub(1, cos)
    neg = sub_scalar(cos, margin).clamp_min(0)
    loss = where(target == 1, pos, zeros) + where(target == -1, neg, zeros)
    return _reduced("cosine_embedding_loss", loss, reduction)


@on_tensors
def margin_ranking_loss(input1, input2, target, margin: float = 0.0, size_average=None, reduce=None,
                        reduction: str = "mean"):
    """max(0, -y (x1 - x2) + margin), as PyTorch's composition of torch ops (ClampMinBackward0
    over AddBackward1 over MulBackward0 of -target and SubBackward0)."""
    reduction = reduction_mode(size_average, reduce, reduction)
    return _reduced("margin_ranking_loss", add_scalar(-target * (input1 - input2), margin).clamp_min(0), reduction)


@on_tensors
def triplet_margin_loss(anchor, positive, negative, margin: float = 1.0, p: float = 2, eps: float = 1e-6,
                        swap: bool = False, size_average=None, reduce=None, reduction: str = "mean"):
    """max(d(a, p) - d(a, n) + margin, 0), d the pairwise p-distance (swap: the closer of
    d(a, n) and d(p, n)); PyTorch's composition (ClampMinBackward0 of SubBackward0 of
    AddBackward1 of the distances, then the reduction)."""
    reduction = reduction_mode(size_average, reduce, reduction)
    dims = (anchor.dim(), positive.dim(), negative.dim())
    if len(set(dims)) != 1:
        raise FgradRuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number "
                                f"of dimensions, but got: anchor {dims[0]}D, positive {dims[1]}D, and negative "
                                f"{dims[2]}D inputs")
    d_ap = pairwise_distance(anchor, positive, p, eps)
    d_an = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_an = minimum(d_an, pairwise_distance(positive, negative, p, eps))
    return _reduced("triplet_margin_loss", (add_scalar(d_ap, margin) - d_an).clamp_min(0), reduction)


@on_tensors
def hinge_embedding_loss(input, target, margin: float = 1.0, size_average=None, reduce=None,
                         reduction: str = "mean"):
    """x where y = 1, max(0, margin - x) where y = -1 (PyTorch's formula, and its composition
    of torch ops: the sum of two WhereBackward0 nodes, one over a ClampMinBackward0)."""
    reduction = reduction_mode(size_average, reduce, reduction)
    zeros = zeros_like(input)
    margin_clamp = (full_like(input, margin) - input).clamp_min(0)
    loss = where(target != 1, margin_clamp, zeros) + where(target != -1, input, zeros)
    return _reduced("hinge_embedding_loss", loss, reduction)


def _reduced(name: str, loss, reduction: str):
    """reduce_loss on a Tensor: its mean or sum as torch ops (MeanBackward0, SumBackward0)."""
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise FgradValueError(f"{reduction} is not a valid value for reduction (in {name}: use 'mean', 'sum' or 'none')")


@torch_op("SoftMarginLossBackward0", consts=("target",))
def soft_margin_loss(input, target, size_average=None, reduce=None, reduction: str = "mean"):
    """log(1 + exp(-y x))."""
    reduction = reduction_mode(size_average, reduce, reduction)
    x, y = arr(input, "soft_margin_loss"), arr(target, "soft_margin_loss")
    return reduce_loss("soft_margin_loss", _softplus(fnp.negative(fnp.multiply(y, x))), reduction)


@on_tensors
def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction: str = "mean"):
    """The mean over classes of the binary cross-entropy of sigmoid(x) with targets y, as
    PyTorch's composition (DivBackward0 of SumBackward1 of NegBackward0 ..., then reduced)."""
    reduction = reduction_mode(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    return _reduced("multilabel_soft_margin_loss", loss.sum(dim=class_dim) / input.size(class_dim), reduction)


@on_tensors
def poisson_nll_loss(input, target, log_input: bool = True, full: bool = False, size_average=None,
                     eps: float = 1e-8, reduce=None, reduction: str = "mean"):
    """exp(x) - t x (log_input) or x - t log(x + eps); `full` adds Stirling's t log t - t +
    0.5 log(2πt) where t > 1. A composition of torch ops, PyTorch's (SubBackward0 over
    ExpBackward0 and MulBackward0 ...)."""
    reduction = reduction_mode(size_average, reduce, reduction)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        big = target > 1
        tt = where(big, target, ones_like(target))
        stirling = tt * tt.log() - tt + (tt * (2 * math.pi)).log() * 0.5
        loss = loss + where(big, stirling, zeros_like(stirling))
    return _reduced("poisson_nll_loss", loss, reduction)


@on_tensors
def gaussian_nll_loss(input, target, var, full: bool = False, eps: float = 1e-6, reduction: str = "mean"):
    """0.5 (log v + (x - t)² / v) (+ 0.5 log 2π when full), v = var clamped at eps, as PyTorch's
    composition: var is cloned and clamped in place outside the graph, so the clamp passes
    the gradient through unchanged. `var` may be a float, lack the last dimension of `input`,
    or differ from it in one dimension of size 1 (a variance shared along it)."""
    if isinstance(var, (int, float)):
        if var < 0:
            raise FgradValueError("var has negative entry/entries")
        var = var * ones_like(input)
    else:
        concrete = concrete_or_none(var)
        if concrete is not None and (np.asarray(concrete) < 0).any():
            raise FgradValueError("var has negative entry/entries")
    xs, vs = tuple(input.shape), tuple(var.shape)
    if vs != xs:
        if xs[:-1] == vs:
            var = var.unsqueeze(-1)
        elif not (len(xs) == len(vs) and sum(v for x, v in zip(xs, vs) if x != v) == 1):
            raise FgradValueError(f"var is of incorrect size: got {list(vs)} for an input of size {list(xs)}")
    _check_reduction(reduction)
    var = var.clone()
    with no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduced("gaussian_nll_loss", loss, reduction)

__all__ = ["binary_cross_entropy", "binary_cross_entropy_with_logits", "smooth_l1_loss", "huber_loss", "kl_div",
           "cosine_similarity", "pairwise_distance", "cosine_embedding_loss", "margin_ranking_loss",
           "triplet_margin_loss", "hinge_embedding_loss", "soft_margin_loss", "multilabel_soft_margin_loss",
           "poisson_nll_loss", "gaussian_nll_loss"]
