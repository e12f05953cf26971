"""Loss modules beyond CrossEntropyLoss, NLLLoss, MSELoss and L1Loss (fgrad/torch/nn/layers.py),
plus CosineSimilarity and PairwiseDistance: thin Modules over fgrad.torch.nn.functional."""
from __future__ import annotations

from . import functional as F
from .layers import _Loss, _WeightedLoss
from .module import Module


class BCELoss(_WeightedLoss):
    """PyTorch's torch.nn.BCELoss: the module form of `fgrad.torch.nn.functional.binary_cross_entropy`, with PyTorch's
    constructor arguments, defaults and parameters."""

    def forward(self, input, target):
        return F.binary_cross_entropy(input, target, self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_WeightedLoss):
    """PyTorch's torch.nn.BCEWithLogitsLoss: the module form of `fgrad.torch.nn.functional.binary_cross_entropy_with_logits`, with PyTorch's
    constructor arguments, defaults and parameters."""

    def __init__(self, weight=None, size_average=None, reduce=None, reduction: str = "mean", pos_weight=None) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(input, target, self.weight, pos_weight=self.pos_weight,
                                                  reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """PyTorch's torch.nn.SmoothL1Loss: the module form of `fgrad.torch.nn.functional.smooth_l1_loss`, with PyTorch's
    constructor arguments, defaults and parameters."""

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean", beta: float = 1.0) -> None:
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input, target):
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """PyTorch's torch.nn.HuberLoss: the module form of `fgrad.torch.nn.functional.huber_loss`, with PyTorch's
    constructor arguments, defaults and parameters."""

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input, target):
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class KLDivLoss(_Loss):
    """PyTorch's torch.nn.KLDivLoss: the module form of `fgrad.torch.nn.functional.kl_div`, with PyTorch's
    constructor arguments, defaults and parameters."""

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean", log_target: bool = False) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input, target):
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class _MarginLoss(_Loss):
    def __init__(self, margin: float = 0.0, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin


class CosineEmbeddingLoss(_MarginLoss):
    """PyTorch's torch.nn.CosineEmbeddingLoss: the module form of `fgrad.torch.nn.functional.cosine_embedding_loss`, with PyTorch's
    constructor arguments, defaults and parameters."""

    def forward(self, input1, input2, target):
        return F.cosine_embedding_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class MarginRankingLoss(_MarginLoss):
    """PyTorch's torch.nn.MarginRankingLoss: the module form of `fgrad.torch.nn.functional.margin_ranking_loss`, with PyTorch's
    constructor arguments, defaults and parameters."""

    def forward(self, input1, input2, target):
        return F.margin_ranking_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class HingeEmbeddingLoss(_MarginLoss):
    """PyTorch's torch.nn.HingeEmbeddingLoss: the module form of `fgrad.torch.nn.functional.hinge_embedding_loss`, with PyTorch's
    constructor arguments, defaults and parameters."""

    def __init__(self, margin: float = 1.0, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(margin, size_average, reduce, reduction)

    def forward(self, input, target):
        return F.hinge_embedding_loss(input, target, margin=self.margin, reduction=self.reduction)


class TripletMarginLoss(_Loss):
    """PyTorch's torch.nn.TripletMarginLoss: the module form of `fgrad.torch.nn.functional.triplet_margin_loss`, with PyTorch's
    constructor arguments, defaults and parameters."""

    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6, swap: bool = False,
                 size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=self.p, eps=self.eps,
                                     swap=self.swap, reduction=self.reduction)


class SoftMarginLoss(_Loss):
    """PyTorch's torch.nn.SoftMarginLoss: the module form of `fgrad.torch.nn.functional.soft_margin_loss`, with PyTorch's
    constructor arguments, defaults and parameters."""

    def forward(self, input, target):
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """PyTorch's torch.nn.MultiLabelSoftMarginLoss: the module form of `fgrad.torch.nn.functional.multilabel_soft_margin_loss`, with PyTorch's
    constructor arguments, defaults and parameters."""

    def forward(self, input, target):
        return F.multilabel_soft_margin_loss(input, target, weight=self.weight, reduction=self.reduction)


class PoissonNLLLoss(_Loss):
    """PyTorch's torch.nn.PoissonNLLLoss: the module form of `fgrad.torch.nn.functional.poisson_nll_loss`, with PyTorch's
    constructor arguments, defaults and parameters."""

    def __init__(self, log_input: bool = True, full: bool = False, size_average=None, eps: float = 1e-8,
                 reduce=None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input, target):
        return F.poisson_nll_loss(log_input, target, log_input=self.log_input, full=self.full, eps=self.eps,
                                  reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    """PyTorch's torch.nn.GaussianNLLLoss: the module form of `fgrad.torch.nn.functional.gaussian_nll_loss`, with PyTorch's
    constructor arguments, defaults and parameters."""

    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean") -> None:
        super().__init__(reduction=reduction)
        self.full, self.eps = full, eps

    def forward(self, input, target, var):
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps, reduction=self.reduction)


class CosineSimilarity(Module):
    """PyTorch's torch.nn.CosineSimilarity: the module form of `fgrad.torch.nn.functional.cosine_similarity`, with PyTorch's
    constructor arguments, defaults and parameters."""

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """PyTorch's torch.nn.PairwiseDistance: the module form of `fgrad.torch.nn.functional.pairwise_distance`, with PyTorch's
    constructor arguments, defaults and parameters."""

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


__all__ = ["BCELoss", "BCEWithLogitsLoss", "SmoothL1Loss", "HuberLoss", "KLDivLoss", "CosineEmbeddingLoss",
           "MarginRankingLoss", "HingeEmbeddingLoss", "TripletMarginLoss", "SoftMarginLoss",
           "MultiLabelSoftMarginLoss", "PoissonNLLLoss", "GaussianNLLLoss", "CosineSimilarity", "PairwiseDistance"]
