"""torch.nn.AdaptiveLogSoftmaxWithLoss (Grave et al.'s adaptive softmax: a head over the
frequent classes plus one entry per tail cluster, each cluster a low-rank projection), and
LinearCrossEntropyLoss (over functional.linear_cross_entropy). Written with fgrad.torch ops in
PyTorch's order, so a seed gives PyTorch's parameters and the graphs are PyTorch's."""
from __future__ import annotations

import itertools
import math
from collections import namedtuple
from collections.abc import Sequence

from .. import _tensor as T
from ...core.errors import FgradRuntimeError, FgradValueError
from . import functional as F
from .layers import Linear, _WeightedLoss
from ._functional_more import LinearCrossEntropyOptions, linear_cross_entropy
from .module import Module, ModuleList, Sequential

__all__ = ["AdaptiveLogSoftmaxWithLoss", "LinearCrossEntropyLoss", "LinearCrossEntropyOptions"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """The adaptive softmax: classes below cutoffs[0] are scored by the head directly; each
    later range [cutoffs[i], cutoffs[i+1]) by the head's entry for cluster i plus a softmax
    over a projection of size in_features // div_value^(i+1).

    Args:
        in_features: the input's features.
        n_classes: the number of classes.
        cutoffs: increasing cluster boundaries in [1, n_classes - 1].
        div_value: the projections' size divisor.
        head_bias: whether the head has a bias.
        device, dtype: as Linear's.

    Raises:
        ValueError: empty or invalid cutoffs."""

    def __init__(self, in_features: int, n_classes: int, cutoffs: Sequence[int], div_value: float = 4.0,
                 head_bias: bool = False, device=None, dtype=None) -> None:
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise FgradValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise FgradValueError("cutoffs should be a sequence of unique, positive integers sorted in an "
                                  "increasing order, where each value is between 1 and n_classes-1")
        self.in_features, self.n_classes = in_features, n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value, self.head_bias = div_value, head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, device=device, dtype=dtype)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hsz = int(in_features // (div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hsz, bias=False, device=device, dtype=dtype),
                                        Linear(hsz, osz, bias=False, device=device, dtype=dtype)))

    def reset_parameters(self) -> None:
        self.head.reset_parameters()
        for i2h, h2o in self.tail:
            i2h.reset_parameters()
            h2o.reset_parameters()

    def forward(self, input_, target_):
        """(output, loss): each target's log-probability and the mean negative of them.

        Args:
            input_: (N, in_features) or (in_features,).
            target_: (N,) or () class indices.

        Returns:
            A named tuple (output, loss).

        Raises:
            RuntimeError: mismatched shapes, or a target outside [0, n_classes - 1]."""
        targ_dim = target_.dim()
        if targ_dim == 1:
            if input_.size(0) != target_.size(0):
                raise FgradRuntimeError("Input and target should have the same size in the batch dimension.")
            if input_.dim() != 2:
                raise FgradRuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with size "
                                        f"{input_.size()}")
        elif targ_dim == 0:
            if input_.dim() != 1:
                raise FgradRuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with size "
                                        f"{input_.size()}")
        else:
            raise FgradRuntimeError("0D or 1D target tensor expected, multi-target not supported")
        is_batched = targ_dim > 0
        input = input_ if is_batched else input_.unsqueeze(0)
        target = target_ if is_batched else target_.unsqueeze(0)
        used_rows = 0
        batch_size = target.size(0)
        output = input.new_zeros(batch_size)
        gather_inds = target.new_empty(batch_size)
        cutoff_values = [0] + self.cutoffs
        for i in range(len(cutoff_values) - 1):
            low, high = cutoff_values[i], cutoff_values[i + 1]
            mask = (target >= low) & (target < high)
            rows = mask.nonzero().reshape(-1)
            if rows.numel() == 0:
                continue
            if i == 0:
                gather_inds = gather_inds.index_copy(0, rows, target[mask])
            else:
                relative = target[mask] - low
                cluster_output = self.tail[i - 1](input.index_select(0, rows))
                gather_inds = gather_inds.index_fill(0, rows, self.shortlist_size + i - 1)
                local = F.log_softmax(cluster_output, dim=1).gather(1, relative.unsqueeze(1))
                output = output.index_copy(0, rows, local.squeeze(1))
            used_rows += rows.numel()
        if used_rows != batch_size:
            raise FgradRuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                                    f"[{target.min().item()}, {target.max().item()}] were found. ")
        head_logprob = F.log_softmax(self.head(input), dim=1)
        output = output + head_logprob.gather(1, gather_inds.unsqueeze(1)).squeeze(1)
        loss = (-output).mean()
        if not is_batched:
            output = output.squeeze(0)
        return _ASMoutput(output, loss)

    def _get_full_log_prob(self, input, head_output):
        head_logprob = F.log_softmax(head_output, dim=1)
        pieces = [head_logprob[:, :self.shortlist_size]]
        for i, _ in enumerate(itertools.pairwise(self.cutoffs)):
            cluster_logprob = F.log_softmax(self.tail[i](input), dim=1)
            pieces.append(cluster_logprob + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return T.cat(pieces, 1)

    def log_prob(self, input):
        """Every class's log-probability.

        Args:
            input: (N, in_features).

        Returns:
            (N, n_classes)."""
        return self._get_full_log_prob(input, self.head(input))

    def predict(self, input):
        """The most likely class of each row (the full distribution is computed only for rows
        whose head arg-max is a cluster).

        Args:
            input: (N, in_features).

        Returns:
            (N,) int64 classes."""
        head_output = self.head(input)
        output = T.argmax(head_output, dim=1)
        not_in_shortlist = output >= self.shortlist_size
        if not bool(not_in_shortlist.any()):
            return output
        if bool(not_in_shortlist.all()):
            return T.argmax(self._get_full_log_prob(input, head_output), dim=1)
        rows = not_in_shortlist.nonzero().reshape(-1)
        full = self._get_full_log_prob(input[not_in_shortlist], head_output[not_in_shortlist])
        return output.index_copy(0, rows, T.argmax(full, dim=1))


class LinearCrossEntropyLoss(_WeightedLoss):
    """A Linear of in_features -> num_classes * prod(out_features) followed by cross-entropy
    (functional.linear_cross_entropy), holding the Linear as `linear`.

    Args:
        in_features: the input's features.
        num_classes: the number of classes.
        out_features: extra output dimensions (a K-dimensional loss).
        bias: whether the Linear has a bias.
        device, dtype: as Linear's.
        reduction, weight, ignore_index, label_smoothing, options: as linear_cross_entropy's.

    Raises:
        RuntimeError: a weight not of shape (num_classes,), or label_smoothing outside [0, 1]."""

    def __init__(self, in_features: int, num_classes: int, *, out_features: tuple = (), bias: bool = False,
                 device=None, dtype=None, reduction: str = "mean", weight=None, ignore_index: int | None = None,
                 label_smoothing: float = 0.0, options: LinearCrossEntropyOptions | None = None) -> None:
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise FgradRuntimeError(f"expected weight shape to be {(num_classes,)}, got {tuple(weight.shape)}")
        if label_smoothing < 0 or label_smoothing > 1.0:
            raise FgradRuntimeError(f"expected label_smoothing to be in range [0, 1], got {label_smoothing}")
        super().__init__(weight=weight, size_average=None, reduce=None, reduction=reduction)
        self.num_classes, self.out_features = num_classes, out_features
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing
        self.linear = Linear(in_features, math.prod(out_features, start=num_classes), bias=bias, device=device,
                             dtype=dtype)
        self.options = options

    def forward(self, input, target):
        lw = self.linear.weight.reshape((self.num_classes, *self.out_features, self.linear.in_features))
        lb = (self.linear.bias.reshape((self.num_classes, *self.out_features))
              if self.linear.bias is not None else None)
        return linear_cross_entropy(input, lw, target, linear_bias=lb, weight=self.weight, reduction=self.reduction,
                                    ignore_index=self.ignore_index, label_smoothing=self.label_smoothing,
                                    options=self.options)

    def extra_repr(self) -> str:
        return (f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
                f"out_features={self.out_features}, bias={self.linear.bias is not None}, "
                f"reduction={self.reduction}, ignore_index={self.ignore_index}, "
                f"label_smoothing={self.label_smoothing}, options={self.options}")
