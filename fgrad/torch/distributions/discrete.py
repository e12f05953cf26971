"""Bernoulli and Categorical, parameterised by probs or logits (as PyTorch: the other is
derived, log_prob and entropy are computed from logits for stability)."""
from __future__ import annotations

import numpy as np

from ...core.errors import FgradValueError
from .._tensor import _ops as ops
from .._tensor import creation
from .._tensor.tensor import Tensor
from ..nn import functional as F
from .distribution import Distribution, as_param


def _clamp_probs(p: Tensor) -> Tensor:
    """p clamped into [eps, 1 - eps] (PyTorch's clamp_probs, before taking logs)."""
    eps = float(np.finfo(np.dtype(str(p.dtype).split(".")[-1])).eps)
    return ops.clamp(p, eps, 1 - eps)


def _probs_or_logits(probs, logits):
    if (probs is None) == (logits is None):
        raise FgradValueError("Either `probs` or `logits` must be specified, but not both.")
    return (as_param(probs), None) if probs is not None else (None, as_param(logits))


class Bernoulli(Distribution):
    """1 with probability probs (= sigmoid(logits)), else 0."""

    arg_constraints = {"probs": "unit_interval", "logits": "real"}

    def __init__(self, probs=None, logits=None, validate_args: bool | None = None) -> None:
        p, lg = _probs_or_logits(probs, logits)
        if p is not None and validate_args is not False and bool(ops.any(ops.logical_or(ops.lt(p, 0), ops.gt(p, 1)))):
            raise FgradValueError("Expected parameter probs to satisfy the constraint Interval(lower_bound=0.0, "
                             "upper_bound=1.0), but found invalid values")
        self._p, self._lg = p, lg
        super().__init__(tuple((p if p is not None else lg).shape), (), validate_args)

    @property
    def probs(self) -> Tensor:
        return self._p if self._p is not None else ops.sigmoid(self._lg)

    @property
    def logits(self) -> Tensor:
        if self._lg is not None:
            return self._lg
        p = _clamp_probs(self._p)
        return ops.sub(ops.log(p), ops.log1p(ops.neg(p)))

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def variance(self) -> Tensor:
        p = self.probs
        return ops.mul(p, ops.sub(1.0, p))

    def sample(self, sample_shape=()) -> Tensor:
        # torch.bernoulli of the probabilities expanded to the sample's shape
        return creation.bernoulli(ops.expand(self.probs.detach(), self._extended_shape(sample_shape)))

    def log_prob(self, value) -> Tensor:
        value = as_param(value, self.logits)
        self._check_value(value, "boolean")
        lg = self.logits
        if tuple(lg.shape) != tuple(value.shape):  # (PyTorch's broadcast_all)
            shape = ops.broadcast_shapes(tuple(lg.shape), tuple(value.shape))
            lg, value = ops.expand(lg, shape), ops.expand(value, shape)
        return ops.neg(F.binary_cross_entropy_with_logits(lg, value, reduction="none"))

    def entropy(self) -> Tensor:
        # -(p log p + (1-p) log(1-p)), the BCE of the logits with the probabilities: finite at
        # p = 0 and 1
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")


class Categorical(Distribution):
    """One of K categories (the last dim of probs/logits), with probs ∝ probs or softmax(logits)."""

    arg_constraints = {"probs": "simplex", "logits": "real_vector"}

    def __init__(self, probs=None, logits=None, validate_args: bool | None = None) -> None:
        p, lg = _probs_or_logits(probs, logits)
        # PyTorch keeps the normalised parameter it was given and derives the other from it
        self._p = self._lg = None
        if p is not None:
            if p.dim() < 1:
                raise FgradValueError("`probs` parameter must be at least one-dimensional.")
            self._p = ops.div(p, ops.sum(p, -1, keepdim=True))
        else:
            if lg.dim() < 1:
                raise FgradValueError("`logits` parameter must be at least one-dimensional.")
            self._lg = ops.sub(lg, ops.logsumexp(lg, -1, keepdim=True))
        shape = (self._p if self._p is not None else self._lg).shape
        self._num_events = shape[-1]
        super().__init__(tuple(shape[:-1]), (), validate_args)

    @property
    def logits(self) -> Tensor:
        return self._lg if self._lg is not None else ops.log(_clamp_probs(self._p))

    @property
    def probs(self) -> Tensor:
        return self._p if self._p is not None else ops.softmax(self._lg, -1)

    @property
    def param_shape(self):
        return (self._p if self._p is not None else self._lg).shape

    def sample(self, sample_shape=()) -> Tensor:
        # torch's: one multinomial (with replacement) per row of the probabilities, as columns
        n = int(np.prod(sample_shape))  # sample_shape.numel()
        rows = ops.reshape(self.probs.detach(), (-1, self._num_events))
        samples = ops.transpose(rows.multinomial(n, True), 0, 1)
        return ops.reshape(samples, self._extended_shape(sample_shape))

    def log_prob(self, value) -> Tensor:
        value = value if isinstance(value, Tensor) else creation.tensor(value)
        self._check_value(value, "nonnegative_integer")
        v = ops.unsqueeze(value.long(), -1)
        logits = self.logits
        shape = ops.broadcast_shapes(tuple(v.shape), tuple(logits.shape[:-1]) + (1,))
        full = shape[:-1] + (self._num_events,)
        # (PyTorch's broadcast_tensors: a tensor that has the shape already is itself)
        lg = logits if tuple(logits.shape) == tuple(full) else ops.expand(logits, full)
        v = v if tuple(v.shape) == tuple(shape) else ops.expand(v, shape)
        return ops.squeeze(ops.gather(lg, -1, v), -1)

    def entropy(self) -> Tensor:
        logits = self.logits
        lg = ops.clamp(logits, min=float(np.finfo(np.dtype(str(logits.dtype).split(".")[-1])).min))
        return ops.neg(ops.sum(ops.mul(lg, self.probs), -1))

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = creation.arange(self._num_events)
        values = ops.reshape(values, (-1,) + (1,) * len(self._batch_shape))
        return ops.expand(values, (self._num_events,) + self._batch_shape) if expand else values


__all__ = ["Bernoulli", "Categorical"]
