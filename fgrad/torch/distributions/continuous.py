"""Normal, Uniform and MultivariateNormal, with PyTorch's parameters, reparameterised
samples (gradients flow through rsample) and closed-form log_prob, entropy and cdf."""
from __future__ import annotations

import math

from ...core.errors import FgradValueError
from .. import linalg
from .._tensor import _ops as ops
from .._tensor import creation
from .._tensor.tensor import Tensor
from ..special import erfinv
from .distribution import LOG_2PI, Distribution, as_param, broadcast_all


class Normal(Distribution):
    """N(loc, scale**2), elementwise over the broadcast batch shape."""

    has_rsample = True
    arg_constraints = {"loc": "real", "scale": "positive"}

    def __init__(self, loc, scale, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        if validate_args is not False and bool(ops.any(ops.le(self.scale, 0))):
            raise FgradValueError(f"Expected parameter scale ({type(scale).__name__} of shape {tuple(self.scale.shape)}) "
                             "to satisfy the constraint GreaterThan(lower_bound=0.0), but found invalid values")
        super().__init__(tuple(self.loc.shape), (), validate_args)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return ops.pow(self.scale, 2)

    @property
    def stddev(self) -> Tensor:
        return self.scale

    def rsample(self, sample_shape=()) -> Tensor:
        # torch's _standard_normal (empty(shape).normal_()) on the default generator
        eps = creation.randn(self._extended_shape(sample_shape), dtype=self.loc.dtype, device=self.loc.device)
        return ops.add(self.loc, ops.mul(eps, self.scale))

    def log_prob(self, value) -> Tensor:
        # PyTorch's expression, op for op
        value = as_param(value, self.loc)
        var = self.scale ** 2
        return -((value - self.loc) ** 2) / (2 * var) - self.scale.log() - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value) -> Tensor:
        z = ops.div(ops.sub(as_param(value, self.loc), self.loc), self.scale)
        return ops.mul(ops.add(ops.erf(ops.mul(z, 1 / math.sqrt(2))), 1.0), 0.5)

    def icdf(self, value) -> Tensor:
        # PyTorch's expression: loc + scale * erfinv(2 value - 1) * sqrt(2)
        value = as_param(value, self.loc)
        return self.loc + self.scale * erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self) -> Tensor:
        return ops.add(ops.log(self.scale), 0.5 + 0.5 * LOG_2PI)


class Uniform(Distribution):
    """Uniform on [low, high), elementwise."""

    has_rsample = True
    arg_constraints = {"low": "real", "high": "real"}

    def __init__(self, low, high, validate_args: bool | None = None) -> None:
        self.low, self.high = broadcast_all(low, high)
        if validate_args is not False and bool(ops.any(ops.ge(self.low, self.high))):
            raise FgradValueError("Expected parameter low to be less than high, but found low >= high")
        super().__init__(tuple(self.low.shape), (), validate_args)

    @property
    def mean(self) -> Tensor:
        return ops.div(ops.add(self.high, self.low), 2)

    @property
    def variance(self) -> Tensor:
        return ops.div(ops.pow(ops.sub(self.high, self.low), 2), 12.0)

    def rsample(self, sample_shape=()) -> Tensor:
        u = creation.rand(self._extended_shape(sample_shape), dtype=self.low.dtype, device=self.low.device)
        return ops.add(self.low, ops.mul(u, ops.sub(self.high, self.low)))

    def log_prob(self, value) -> Tensor:
        # PyTorch's expression: log(1) or log(0) of the support's indicator, minus log(high - low)
        value = as_param(value, self.low)
        lb = ops.le(self.low, value).to(self.low.dtype)
        ub = ops.gt(self.high, value).to(self.low.dtype)
        return ops.sub(ops.log(ops.mul(lb, ub)), ops.log(ops.sub(self.high, self.low)))

    def cdf(self, value) -> Tensor:
        r = ops.div(ops.sub(as_param(value, self.low), self.low), ops.sub(self.high, self.low))
        return ops.clamp(r, 0.0, 1.0)

    def entropy(self) -> Tensor:
        return ops.log(ops.sub(self.high, self.low))


class MultivariateNormal(Distribution):
    """N(loc, Σ) with Σ given as covariance_matrix, precision_matrix or scale_tril (its
    Cholesky factor L, Σ = L Lᵀ); batch dims broadcast."""

    has_rsample = True
    arg_constraints = {"loc": "real_vector"}

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args: bool | None = None) -> None:
        given = [m is not None for m in (covariance_matrix, precision_matrix, scale_tril)]
        if sum(given) != 1:
            raise FgradValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        loc = as_param(loc)
        if loc.dim() < 1:
            raise FgradValueError("loc must be at least one-dimensional.")
        # as PyTorch: the factor as given or computed (_unbroadcasted_scale_tril), and loc and
        # scale_tril expanded to the batch shape (views: ExpandBackward0)
        if scale_tril is not None:
            L = as_param(scale_tril, loc)
        elif covariance_matrix is not None:
            L = linalg.cholesky(as_param(covariance_matrix, loc))
        else:
            prec = as_param(precision_matrix, loc)
            L = linalg.cholesky(linalg.inv(prec))
        k = loc.shape[-1]
        if tuple(L.shape[-2:]) != (k, k):
            raise FgradValueError(f"The covariance factor must be {k} x {k} to match loc of shape {tuple(loc.shape)}, "
                             f"got shape {tuple(L.shape)}")
        batch = ops.broadcast_shapes(tuple(loc.shape[:-1]), tuple(L.shape[:-2]))
        self._unbroadcasted_scale_tril = L
        self.loc = ops.expand(loc, tuple(batch) + (k,))
        self.scale_tril = ops.expand(L, tuple(batch) + (k, k))
        super().__init__(batch, (k,), validate_args)

    @property
    def covariance_matrix(self) -> Tensor:
        L = self._unbroadcasted_scale_tril
        cov = ops.matmul(L, ops.transpose(L, -1, -2))
        return ops.expand(cov, self._batch_shape + self._event_shape + self._event_shape)

    @property
    def precision_matrix(self) -> Tensor:
        L = self._unbroadcasted_scale_tril
        prec = linalg.inv(ops.matmul(L, ops.transpose(L, -1, -2)))
        return ops.expand(prec, self._batch_shape + self._event_shape + self._event_shape)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        v = ops.sum(ops.pow(self._unbroadcasted_scale_tril, 2), -1)
        return ops.expand(v, self._batch_shape + self._event_shape)

    def rsample(self, sample_shape=()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = creation.randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return ops.add(self.loc, ops.squeeze(ops.matmul(self._unbroadcasted_scale_tril, ops.unsqueeze(eps, -1)), -1))

    def _half_log_det(self) -> Tensor:
        return ops.sum(ops.log(ops.diagonal(self._unbroadcasted_scale_tril, 0, -2, -1)), -1)

    def log_prob(self, value) -> Tensor:
        diff = ops.sub(as_param(value, self.loc), self.loc)
        L = self._unbroadcasted_scale_tril
        shape = ops.broadcast_shapes(tuple(diff.shape[:-1]), tuple(L.shape[:-2]))
        k = self._event_shape[0]
        # the lower triangle only, as a triangular solve reads it (no gradient to the zeros above)
        L = ops.expand(ops.tril(L), shape + (k, k))
        z = linalg.solve(L, ops.unsqueeze(ops.expand(diff, shape + (k,)), -1))
        maha = ops.sum(ops.pow(ops.squeeze(z, -1), 2), -1)
        return ops.sub(ops.mul(ops.add(maha, k * LOG_2PI), -0.5), self._half_log_det())

    def entropy(self) -> Tensor:
        k = self._event_shape[0]
        h = ops.add(self._half_log_det(), 0.5 * k * (1.0 + LOG_2PI))
        return ops.expand(h, self._batch_shape) if self._batch_shape else h


__all__ = ["Normal", "Uniform", "MultivariateNormal"]
