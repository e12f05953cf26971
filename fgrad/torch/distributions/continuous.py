"""The univariate continuous distributions of torch.distributions, with PyTorch's parameters,
constraints and expressions (so values and gradients are PyTorch's).

Samplers that are a transform of rand/randn/exponential_/cauchy_ (Normal, Uniform,
Exponential, Laplace, Cauchy, Gumbel, LogNormal, HalfNormal, HalfCauchy, Pareto, Weibull,
Kumaraswamy, ContinuousBernoulli, GeneralizedPareto) use PyTorch's formula on fgrad.torch's
streams, so with `manual_seed` their samples equal PyTorch's (to the last bits of the float32
log/exp/pow some of them take). Gamma and the distributions drawn through it (Chi2, StudentT,
InverseGamma, FisherSnedecor, Beta, Dirichlet) use PyTorch's Gamma kernel on the same draws
(fgrad.torch.distributions._samplers): equal samples too; VonMises runs PyTorch's rejection loop
on rand. Their reparameterised gradients are PyTorch's implicit ones for the drawn sample (Gamma's, and
Dirichlet's and Beta's through each coordinate's Beta marginal).
"""
from __future__ import annotations

import math
from numbers import Number, Real

from ...core.errors import FgradValueError
from .. import _tensor as T
from .. import special
from ..nn import functional as F
from .._tensor import creation
from .._tensor.tensor import Tensor
from . import constraints
from ._samplers import sample_dirichlet, standard_gamma
from .distribution import Distribution
from .structure import ExponentialFamily, TransformedDistribution
from .transforms import AbsTransform, AffineTransform, ExpTransform, PowerTransform
from .utils import (LOG_2PI, _standard_normal, broadcast_all, clamp_probs, euler_constant, finfo_of,
                    lazy_property, logits_to_probs, probs_to_logits)

__all__ = ["Normal", "Uniform", "Exponential", "Laplace", "Cauchy", "Gumbel", "HalfNormal", "HalfCauchy",
           "LogNormal", "Pareto", "Weibull", "Kumaraswamy", "Gamma", "Chi2", "StudentT", "Beta",
           "InverseGamma", "FisherSnedecor", "VonMises", "ContinuousBernoulli", "GeneralizedPareto", "Dirichlet"]

lgamma = special.gammaln
digamma = special.digamma


def _scalar_batch(*args) -> bool:
    return all(isinstance(a, Number) for a in args)


def _like(x: Tensor, value) -> Tensor:
    return creation.full(tuple(x.shape), value, dtype=x.dtype, device=x.device)


def _as(value, like: Tensor) -> Tensor:
    if isinstance(value, Tensor):
        return value
    return creation.tensor(value, dtype=like.dtype, device=like.device)


class Normal(ExponentialFamily):
    """N(loc, scale**2), elementwise over the broadcast batch shape.

    Args:
        loc: mean. scale: standard deviation (> 0).
        validate_args: check parameters and values.
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, loc, scale, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        batch_shape = () if _scalar_batch(loc, scale) else self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Normal, batch_shape, _instance, ("loc", "scale"))

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def sample(self, sample_shape=()):
        with T.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        eps = _standard_normal(self._extended_shape(sample_shape), self.loc.dtype, self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale ** 2
        log_scale = math.log(self.scale) if isinstance(self.scale, Real) else self.scale.log()
        return -((value - self.loc) ** 2) / (2 * var) - log_scale - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = T.sub(value, self.loc) if isinstance(value, Tensor) else _as(value, self.loc) - self.loc
        return T.mul(T.add(T.erf(T.mul(T.div(z, self.scale), 1 / math.sqrt(2))), 1.0), 0.5)

    def icdf(self, value):
        value = _as(value, self.loc)
        return self.loc + self.scale * special.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        return T.add(T.log(self.scale), 0.5 + 0.5 * LOG_2PI)

    @property
    def _natural_params(self):
        return (self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal())

    def _log_normalizer(self, x, y):
        return -0.25 * x.pow(2) / y + 0.5 * T.log(-math.pi / y)


class Uniform(Distribution):
    """Uniform on [low, high).

    Args:
        low, high: the interval (low < high).
        validate_args: check parameters and values.
    """

    arg_constraints = {"low": constraints.dependent(is_discrete=False, event_dim=0),
                       "high": constraints.dependent(is_discrete=False, event_dim=0)}
    has_rsample = True

    def __init__(self, low, high, validate_args: bool | None = None) -> None:
        self.low, self.high = broadcast_all(low, high)
        batch_shape = () if _scalar_batch(low, high) else self.low.size()
        super().__init__(batch_shape, validate_args=validate_args)
        if self._validate_args and not bool(T.lt(self.low, self.high).all()):
            raise FgradValueError("Uniform is not defined when low>= high")

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Uniform, batch_shape, _instance, ("low", "high"))

    @property
    def mean(self):
        return T.div(T.add(self.high, self.low), 2)

    @property
    def mode(self):
        return math.nan * self.high

    @property
    def stddev(self):
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self):
        return T.div(T.pow(T.sub(self.high, self.low), 2), 12.0)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.interval(self.low, self.high)

    def rsample(self, sample_shape=()):
        u = creation.rand(tuple(self._extended_shape(sample_shape)), dtype=self.low.dtype, device=self.low.device)
        return T.add(self.low, T.mul(u, T.sub(self.high, self.low)))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = _as(value, self.low)
        lb = T.le(self.low, value).to(self.low.dtype)
        ub = T.gt(self.high, value).to(self.low.dtype)
        return T.sub(T.log(T.mul(lb, ub)), T.log(T.sub(self.high, self.low)))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        r = T.div(T.sub(_as(value, self.low), self.low), T.sub(self.high, self.low))
        return T.clamp(r, 0.0, 1.0)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return T.log(T.sub(self.high, self.low))


class Exponential(ExponentialFamily):
    """Exponential(rate): density rate * exp(-rate x) on x >= 0.

    Args:
        rate: > 0.
        validate_args: check parameters and values.
    """

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, rate, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        batch_shape = () if isinstance(rate, Number) else self.rate.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Exponential, batch_shape, _instance, ("rate",))

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return T.zeros_like(self.rate)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        return creation.empty(shape, dtype=self.rate.dtype, device=self.rate.device).exponential_() / self.rate

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - T.exp(-self.rate * value)

    def icdf(self, value):
        return -T.log1p(-value) / self.rate

    def entropy(self):
        return 1.0 - T.log(self.rate)

    @property
    def _natural_params(self):
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -T.log(-x)


class Laplace(Distribution):
    """Laplace(loc, scale): density exp(-|x - loc| / scale) / (2 scale).

    Args:
        loc: location. scale: > 0.
        validate_args: check parameters and values.
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        batch_shape = () if _scalar_batch(loc, scale) else self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Laplace, batch_shape, _instance, ("loc", "scale"))

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return (2 ** 0.5) * self.scale

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        eps = finfo_of(self.loc).eps
        u = creation.empty(shape, dtype=self.loc.dtype, device=self.loc.device).uniform_(eps - 1, 1)
        return self.loc - self.scale * u.sign() * T.log1p(-u.abs())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -T.log(2 * self.scale) - T.abs(value - self.loc) / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * T.expm1(-(value - self.loc).abs() / self.scale)

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * T.log1p(-2 * term.abs())

    def entropy(self):
        return 1 + T.log(2 * self.scale)


class Cauchy(Distribution):
    """Cauchy(loc, scale) (no mean or variance: nan and inf).

    Args:
        loc: median. scale: half width at half maximum (> 0).
        validate_args: check parameters and values.
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        batch_shape = () if _scalar_batch(loc, scale) else self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Cauchy, batch_shape, _instance, ("loc", "scale"))

    @property
    def mean(self):
        return creation.full(tuple(self._extended_shape()), math.nan, dtype=self.loc.dtype, device=self.loc.device)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return creation.full(tuple(self._extended_shape()), math.inf, dtype=self.loc.dtype, device=self.loc.device)

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        eps = creation.empty(shape, dtype=self.loc.dtype, device=self.loc.device).cauchy_()
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -math.log(math.pi) - self.scale.log() - (((value - self.loc) / self.scale) ** 2).log1p()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return T.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return T.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()


class Gumbel(TransformedDistribution):
    """Gumbel(loc, scale): the maximum-value distribution, as uniform noise pushed through
    -log(-log(u)) (PyTorch's construction, so samples are PyTorch's).

    Args:
        loc: location. scale: > 0.
        validate_args: check parameters and values.
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    def __init__(self, loc, scale, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        finfo = finfo_of(self.loc)
        base_dist = Uniform(T.full_like(self.loc, finfo.tiny), T.full_like(self.loc, 1 - finfo.eps),
                            validate_args=validate_args)
        transforms = [ExpTransform().inv, AffineTransform(loc=0, scale=-T.ones_like(self.scale)),
                      ExpTransform().inv, AffineTransform(loc=loc, scale=-self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Gumbel, _instance)
        new.loc = self.loc.expand(tuple(batch_shape))
        new.scale = self.scale.expand(tuple(batch_shape))
        return TransformedDistribution.expand(self, batch_shape, _instance=new)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (self.loc - value) / self.scale
        return (z - z.exp()) - self.scale.log()

    @property
    def mean(self):
        return self.loc + self.scale * euler_constant

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def entropy(self):
        return self.scale.log() + (1 + euler_constant)


class HalfNormal(TransformedDistribution):
    """|X| for X ~ Normal(0, scale).

    Args:
        scale: > 0.
        validate_args: check parameters and values.
    """

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args: bool | None = None) -> None:
        base_dist = Normal(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(HalfNormal, _instance)
        return TransformedDistribution.expand(self, batch_shape, _instance=new)

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def mode(self):
        return T.zeros_like(self.scale)

    @property
    def variance(self):
        return self.scale.pow(2) * (1 - 2 / math.pi)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return T.where(value >= 0, log_prob, -math.inf)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)


class HalfCauchy(TransformedDistribution):
    """|X| for X ~ Cauchy(0, scale).

    Args:
        scale: > 0.
        validate_args: check parameters and values.
    """

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args: bool | None = None) -> None:
        base_dist = Cauchy(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(HalfCauchy, _instance)
        return TransformedDistribution.expand(self, batch_shape, _instance=new)

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mean(self):
        return creation.full(tuple(self._extended_shape()), math.inf, dtype=self.scale.dtype,
                             device=self.scale.device)

    @property
    def mode(self):
        return T.zeros_like(self.scale)

    @property
    def variance(self):
        return self.base_dist.variance

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = _as(value, self.base_dist.scale)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return T.where(value >= 0, log_prob, -math.inf)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)


class LogNormal(TransformedDistribution):
    """exp(X) for X ~ Normal(loc, scale).

    Args:
        loc, scale: of the underlying Normal.
        validate_args: check parameters and values.
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc, scale, validate_args: bool | None = None) -> None:
        base_dist = Normal(loc, scale, validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogNormal, _instance)
        return TransformedDistribution.expand(self, batch_shape, _instance=new)

    @property
    def loc(self):
        return self.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mean(self):
        return (self.loc + self.scale.pow(2) / 2).exp()

    @property
    def mode(self):
        return (self.loc - self.scale.square()).exp()

    @property
    def variance(self):
        scale2 = self.scale.pow(2)
        return scale2.expm1() * (2 * self.loc + scale2).exp()

    def entropy(self):
        return self.base_dist.entropy() + self.loc


class Pareto(TransformedDistribution):
    """Pareto Type 1: scale * exp(E) for E ~ Exponential(alpha).

    Args:
        scale: the minimum (> 0). alpha: the tail index (> 0).
        validate_args: check parameters and values.
    """

    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}

    def __init__(self, scale, alpha, validate_args: bool | None = None) -> None:
        self.scale, self.alpha = broadcast_all(scale, alpha)
        base_dist = Exponential(self.alpha, validate_args=validate_args)
        transforms = [ExpTransform(), AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Pareto, _instance)
        new.scale = self.scale.expand(tuple(batch_shape))
        new.alpha = self.alpha.expand(tuple(batch_shape))
        return TransformedDistribution.expand(self, batch_shape, _instance=new)

    @property
    def mean(self):
        a = self.alpha.clamp(min=1)
        return a * self.scale / (a - 1)

    @property
    def mode(self):
        return self.scale

    @property
    def variance(self):
        a = self.alpha.clamp(min=2)
        return self.scale.pow(2) * a / ((a - 1).pow(2) * (a - 2))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.greater_than_eq(self.scale)

    def entropy(self):
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())


class Weibull(TransformedDistribution):
    """Weibull(scale, concentration): scale * E**(1/concentration) for E ~ Exponential(1).

    Args:
        scale, concentration: > 0.
        validate_args: check parameters and values.
    """

    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale, concentration, validate_args: bool | None = None) -> None:
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base_dist = Exponential(T.ones_like(self.scale), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration_reciprocal),
                      AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Weibull, _instance)
        new.scale = self.scale.expand(tuple(batch_shape))
        new.concentration = self.concentration.expand(tuple(batch_shape))
        new.concentration_reciprocal = new.concentration.reciprocal()
        base_dist = self.base_dist.expand(tuple(batch_shape))
        transforms = [PowerTransform(exponent=new.concentration_reciprocal),
                      AffineTransform(loc=0, scale=new.scale)]
        TransformedDistribution.__init__(new, base_dist, transforms, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.scale * T.exp(lgamma(1 + self.concentration_reciprocal))

    @property
    def mode(self):
        return self.scale * ((self.concentration - 1) / self.concentration) ** self.concentration.reciprocal()

    @property
    def variance(self):
        return self.scale.pow(2) * (T.exp(lgamma(1 + 2 * self.concentration_reciprocal))
                                    - T.exp(2 * lgamma(1 + self.concentration_reciprocal)))

    def entropy(self):
        return (euler_constant * (1 - self.concentration_reciprocal)
                + T.log(self.scale * self.concentration_reciprocal) + 1)


def _moments(a, b, n):
    """n-th moment of Kumaraswamy(a, b): b B(1 + n/a, b)."""
    arg1 = 1 + n / a
    log_value = lgamma(arg1) + lgamma(b) - lgamma(arg1 + b)
    return b * T.exp(log_value)


class Kumaraswamy(TransformedDistribution):
    """Kumaraswamy(concentration1, concentration0) on (0, 1): (1 - (1 - U)**(1/c0))**(1/c1)
    for U uniform.

    Args:
        concentration1, concentration0: > 0 (a and b).
        validate_args: check parameters and values.
    """

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args: bool | None = None) -> None:
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base_dist = Uniform(T.full_like(self.concentration0, 0), T.full_like(self.concentration0, 1),
                            validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration0.reciprocal()),
                      AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(tuple(batch_shape))
        new.concentration0 = self.concentration0.expand(tuple(batch_shape))
        return TransformedDistribution.expand(self, batch_shape, _instance=new)

    @property
    def mean(self):
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        log_mode = (self.concentration0.reciprocal() * (-self.concentration0).log1p()
                    - (-self.concentration0 * self.concentration1).log1p())
        undefined = (self.concentration0 < 1) | (self.concentration1 < 1)
        return T.where(undefined, math.nan, log_mode).exp()

    @property
    def variance(self):
        return _moments(self.concentration1, self.concentration0, 2) - T.pow(self.mean, 2)

    def entropy(self):
        t1 = 1 - self.concentration1.reciprocal()
        t0 = 1 - self.concentration0.reciprocal()
        H0 = digamma(self.concentration0 + 1) + euler_constant
        return t0 + t1 * H0 - T.log(self.concentration1) - T.log(self.concentration0)


class Gamma(ExponentialFamily):
    """Gamma(concentration, rate): density rate**c x**(c-1) exp(-rate x) / Γ(c).

    rsample draws with PyTorch's Gamma kernel (the same values for the same seed); its
    gradient in concentration is the implicit reparameterisation gradient, PyTorch's
    for the same sample.

    Args:
        concentration, rate: > 0.
        validate_args: check parameters and values.
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args: bool | None = None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        batch_shape = () if _scalar_batch(concentration, rate) else self.concentration.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Gamma, batch_shape, _instance, ("concentration", "rate"))

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        value = standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        return T.clamp(value, min=finfo_of(value).tiny) if bool((value.detach() == 0).any()) else value

    def log_prob(self, value):
        value = _as(value, self.rate)
        if self._validate_args:
            self._validate_sample(value)
        return (special.xlogy(self.concentration, self.rate) + special.xlogy(self.concentration - 1, value)
                - self.rate * value - lgamma(self.concentration))

    def entropy(self):
        return (self.concentration - T.log(self.rate) + lgamma(self.concentration)
                + (1.0 - self.concentration) * digamma(self.concentration))

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return lgamma(x + 1) + (x + 1) * T.log(-y.reciprocal())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return special.gammainc(self.concentration, self.rate * value)


class Chi2(Gamma):
    """Chi-squared with df degrees of freedom: Gamma(df / 2, 1 / 2).

    Args:
        df: > 0.
        validate_args: check parameters and values.
    """

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args: bool | None = None) -> None:
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Chi2, _instance)
        return Gamma.expand(self, batch_shape, new)

    @property
    def df(self):
        return self.concentration * 2


class StudentT(Distribution):
    """Student's t with df degrees of freedom, location loc and scale scale (draws a normal,
    then through Chi2, as PyTorch).

    Args:
        df: > 0. loc: real. scale: > 0.
        validate_args: check parameters and values.
    """

    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args: bool | None = None) -> None:
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(StudentT, batch_shape, _instance, ("df", "loc", "scale"))
        new._chi2 = self._chi2.expand(tuple(batch_shape))
        return new

    @property
    def mean(self):
        return T.where(self.df <= 1, math.nan, self.loc)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        safe = T.where(self.df > 2, self.df, 3.0)
        m = self.scale.pow(2) * safe / (safe - 2)
        m = T.where((self.df <= 2) & (self.df > 1), math.inf, m)
        return T.where(self.df <= 1, math.nan, m)

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        X = _standard_normal(shape, self.df.dtype, self.df.device)
        Z = self._chi2.rsample(sample_shape)
        Y = X * T.rsqrt(Z / self.df)
        return self.loc + self.scale * Y

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        Z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
             + lgamma(0.5 * self.df) - lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * T.log1p(y ** 2.0 / self.df) - Z

    def entropy(self):
        lbeta = lgamma(0.5 * self.df) + math.lgamma(0.5) - lgamma(0.5 * (self.df + 1))
        return (self.scale.log() + 0.5 * (self.df + 1) * (digamma(0.5 * (self.df + 1)) - digamma(0.5 * self.df))
                + 0.5 * self.df.log() + lbeta)


class Beta(ExponentialFamily):
    """Beta(concentration1, concentration0) on (0, 1) (as PyTorch, the first coordinate of a
    Dirichlet(c1, c0)).

    Args:
        concentration1, concentration0: > 0 (alpha and beta).
        validate_args: check parameters and values.
    """

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args: bool | None = None) -> None:
        if isinstance(concentration1, Real) and isinstance(concentration0, Real):
            c1c0 = creation.tensor([float(concentration1), float(concentration0)])
        else:
            concentration1, concentration0 = broadcast_all(concentration1, concentration0)
            c1c0 = T.stack([concentration1, concentration0], -1)
        self._dirichlet = Dirichlet(c1c0, validate_args=validate_args)
        super().__init__(self._dirichlet._batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Beta, _instance)
        new._dirichlet = self._dirichlet.expand(tuple(batch_shape))
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()):
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value):
        value = _as(value, self.concentration1)
        if self._validate_args:
            self._validate_sample(value)
        heads_tails = T.stack([value, 1.0 - value], -1)
        return self._dirichlet.log_prob(heads_tails)

    def entropy(self):
        return self._dirichlet.entropy()

    @property
    def concentration1(self):
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self):
        return self._dirichlet.concentration[..., 1]

    @property
    def _natural_params(self):
        return (self.concentration1, self.concentration0)

    def _log_normalizer(self, x, y):
        return lgamma(x) + lgamma(y) - lgamma(x + y)


class InverseGamma(TransformedDistribution):
    """1 / X for X ~ Gamma(concentration, rate).

    Args:
        concentration, rate: > 0.
        validate_args: check parameters and values.
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration, rate, validate_args: bool | None = None) -> None:
        base_dist = Gamma(concentration, rate, validate_args=validate_args)
        neg_one = -T.ones_like(base_dist.rate)
        super().__init__(base_dist, PowerTransform(neg_one), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(InverseGamma, _instance)
        return TransformedDistribution.expand(self, batch_shape, _instance=new)

    @property
    def concentration(self):
        return self.base_dist.concentration

    @property
    def rate(self):
        return self.base_dist.rate

    @property
    def mean(self):
        result = self.rate / (self.concentration - 1)
        return T.where(self.concentration > 1, result, math.inf)

    @property
    def mode(self):
        return self.rate / (self.concentration + 1)

    @property
    def variance(self):
        result = self.rate.square() / ((self.concentration - 1).square() * (self.concentration - 2))
        return T.where(self.concentration > 2, result, math.inf)

    def entropy(self):
        return (self.concentration + self.rate.log() + lgamma(self.concentration)
                - (1 + self.concentration) * digamma(self.concentration))


class FisherSnedecor(Distribution):
    """F(df1, df2): the ratio of two scaled chi-squared draws (two Gamma draws, as
    PyTorch).

    Args:
        df1, df2: > 0.
        validate_args: check parameters and values.
    """

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args: bool | None = None) -> None:
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        batch_shape = () if _scalar_batch(df1, df2) else self.df1.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(FisherSnedecor, batch_shape, _instance, ("df1", "df2"))
        new._gamma1 = self._gamma1.expand(tuple(batch_shape))
        new._gamma2 = self._gamma2.expand(tuple(batch_shape))
        return new

    @property
    def mean(self):
        df2 = T.where(self.df2 <= 2, math.nan, self.df2)
        return df2 / (df2 - 2)

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1
        mode = T.where(mode <= 0, math.nan, mode)
        return mode * self.df2 / (self.df2 + 2)

    @property
    def variance(self):
        df2 = T.where(self.df2 <= 4, math.nan, self.df2)
        return 2 * df2.pow(2) * (self.df1 + df2 - 2) / (self.df1 * (df2 - 2).pow(2) * (df2 - 4))

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        X1 = self._gamma1.rsample(sample_shape).reshape(shape)
        X2 = self._gamma2.rsample(sample_shape).reshape(shape)
        tiny = finfo_of(X2).tiny
        X2 = T.clamp(X2, min=tiny)
        return T.clamp(X1 / X2, min=tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        ct1 = self.df1 * 0.5
        ct2 = self.df2 * 0.5
        ct3 = self.df1 / self.df2
        t1 = lgamma(ct1 + ct2) - lgamma(ct1) - lgamma(ct2)
        t2 = ct1 * ct3.log() + (ct1 - 1) * T.log(value)
        t3 = (ct1 + ct2) * T.log1p(ct3 * value)
        return t1 + t2 - t3


def _log_modified_bessel_fn(x, order: int = 0):
    """log I_order(x) for order 0 or 1 (x > 0), through the exponentially scaled i0e/i1e."""
    scaled = special.i0e(x) if order == 0 else special.i1e(x)
    return scaled.log() + x


class VonMises(Distribution):
    """The von Mises (circular normal) distribution on [-pi, pi). Sampling is PyTorch's Best &
    Fisher rejection loop on rand (the same draws; values to the last bits of the float64
    cos/acos); no rsample, as PyTorch.

    Args:
        loc: the mean angle. concentration: > 0.
        validate_args: check parameters and values.
    """

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args: bool | None = None) -> None:
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(VonMises, batch_shape, _instance, ("loc", "concentration"))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.concentration * T.cos(value - self.loc)
        return log_prob - math.log(2 * math.pi) - _log_modified_bessel_fn(self.concentration, order=0)

    @lazy_property
    def _loc(self):
        return self.loc.to(T.float64)

    @lazy_property
    def _concentration(self):
        return self.concentration.to(T.float64)

    @lazy_property
    def _proposal_r(self):
        kappa = self._concentration
        tau = 1 + (1 + 4 * kappa ** 2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        proposal_r = (1 + rho ** 2) / (2 * rho)
        # second-order Taylor expansion around 0 for small kappa
        return T.where(kappa < 1e-5, 1 / kappa + kappa, proposal_r)

    def sample(self, sample_shape=()):
        """Best & Fisher's rejection method in float64, as PyTorch's: rounds of three uniform
        draws (rand) for every element until each is accepted."""
        shape = tuple(self._extended_shape(sample_shape))
        with T.no_grad():
            r, kappa = self._proposal_r, self._concentration
            x = creation.zeros(shape, dtype=T.float64)
            done = creation.zeros(shape, dtype=T.bool)
            while not bool(done.all()):
                u1, u2, u3 = creation.rand((3,) + shape, dtype=T.float64).unbind()
                z = T.cos(math.pi * u1)
                f = (1 + r * z) / (r + z)
                c = kappa * (r - f)
                accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
                if bool(accept.any()):
                    x = T.where(accept, (u3 - 0.5).sign() * f.acos(), x)
                    done = done | accept
            return ((x + math.pi + self._loc) % (2 * math.pi) - math.pi).to(self.loc.dtype)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        return 1 - (_log_modified_bessel_fn(self.concentration, order=1)
                    - _log_modified_bessel_fn(self.concentration, order=0)).exp()


class ContinuousBernoulli(ExponentialFamily):
    """The continuous Bernoulli on [0, 1] (Loaiza-Ganem & Cunningham 2019), by probs or logits;
    near probs = 0.5 (inside `lims`) its normaliser uses a Taylor expansion, as PyTorch's.

    Args:
        probs: in (0, 1). logits: real. (exactly one of them)
        lims: the unstable region around 0.5.
        validate_args: check parameters and values.
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args: bool | None = None) -> None:
        if (probs is None) == (logits is None):
            raise FgradValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, Number)
            (self.probs,) = broadcast_all(probs)
            if validate_args is not None and not bool(self.arg_constraints["probs"].check(self.probs).all()):
                raise FgradValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
        else:
            is_scalar = isinstance(logits, Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        batch_shape = () if is_scalar else self._param.size()
        self._lims = lims
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(ContinuousBernoulli, batch_shape, _instance, ("probs", "logits"),
                                  keep=("_lims",))
        new._param = new.__dict__.get("probs") if "probs" in self.__dict__ else new.__dict__.get("logits")
        return new

    def _outside_unstable_region(self):
        return T.le(self.probs, self._lims[0]) | T.gt(self.probs, self._lims[1])

    def _cut_probs(self):
        return T.where(self._outside_unstable_region(), self.probs, self._lims[0] * T.ones_like(self.probs))

    def _cont_bern_log_norm(self):
        """The log normalising constant, as a function of the natural parameter."""
        cut_probs = self._cut_probs()
        cut_probs_below_half = T.where(T.le(cut_probs, 0.5), cut_probs, T.zeros_like(cut_probs))
        cut_probs_above_half = T.where(T.ge(cut_probs, 0.5), cut_probs, T.ones_like(cut_probs))
        log_norm = (T.log(T.abs(T.log1p(-cut_probs) - T.log(cut_probs)))
                    - T.where(T.le(cut_probs, 0.5), T.log1p(-2.0 * cut_probs_below_half),
                              T.log(2.0 * cut_probs_above_half - 1.0)))
        x = T.pow(self.probs - 0.5, 2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return T.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        cut_probs = self._cut_probs()
        mus = cut_probs / (2.0 * cut_probs - 1.0) + 1.0 / (T.log1p(-cut_probs) - T.log(cut_probs))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * T.pow(x, 2)) * x
        return T.where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self):
        return T.sqrt(self.variance)

    @property
    def variance(self):
        cut_probs = self._cut_probs()
        vars = (cut_probs * (cut_probs - 1.0) / T.pow(1.0 - 2.0 * cut_probs, 2)
                + 1.0 / T.pow(T.log1p(-cut_probs) - T.log(cut_probs), 2))
        x = T.pow(self.probs - 0.5, 2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return T.where(self._outside_unstable_region(), vars, taylor)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self):
        return self._param.size()

    def sample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        u = creation.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        with T.no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        u = creation.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value, reduction="none") + self._cont_bern_log_norm()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        cut_probs = self._cut_probs()
        cdfs = ((T.pow(cut_probs, value) * T.pow(1.0 - cut_probs, 1.0 - value) + cut_probs - 1.0)
                / (2.0 * cut_probs - 1.0))
        unbounded_cdfs = T.where(self._outside_unstable_region(), cdfs, value)
        return T.where(T.le(value, 0.0), T.zeros_like(value),
                       T.where(T.ge(value, 1.0), T.ones_like(value), unbounded_cdfs))

    def icdf(self, value):
        cut_probs = self._cut_probs()
        return T.where(self._outside_unstable_region(),
                       (T.log1p(-cut_probs + value * (2.0 * cut_probs - 1.0)) - T.log1p(-cut_probs))
                       / (T.log(cut_probs) - T.log1p(-cut_probs)),
                       value)

    def entropy(self):
        log_probs0 = T.log1p(-self.probs)
        log_probs1 = T.log(self.probs)
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        """The log normalising constant as a function of the natural parameter (the logits)."""
        out_unst_reg = T.le(x, self._lims[0] - 0.5) | T.gt(x, self._lims[1] - 0.5)
        cut_nat_params = T.where(out_unst_reg, x, (self._lims[0] - 0.5) * T.ones_like(x))
        log_norm = T.log(T.abs(T.expm1(cut_nat_params))) - T.log(T.abs(cut_nat_params))
        taylor = 0.5 * x + T.pow(x, 2) / 24.0 - T.pow(x, 4) / 2880.0
        return T.where(out_unst_reg, log_norm, taylor)


class GeneralizedPareto(Distribution):
    """The generalized Pareto distribution (loc, scale, concentration), sampled through its
    icdf of uniform noise (PyTorch's formula).

    Args:
        loc: real. scale: > 0. concentration: real.
        validate_args: check parameters and values.
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args: bool | None = None) -> None:
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        batch_shape = () if _scalar_batch(loc, scale, concentration) else self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(GeneralizedPareto, batch_shape, _instance, ("loc", "scale", "concentration"))

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        u = creation.rand(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.icdf(u)

    def _z(self, x):
        return (x - self.loc) / self.scale

    def _safe_conc(self):
        eq_zero = T.isclose(self.concentration, T.zeros_like(self.concentration))
        return eq_zero, T.where(eq_zero, T.ones_like(self.concentration), self.concentration)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._safe_conc()
        y = 1 / safe_conc + T.ones_like(z)
        where_nonzero = T.where(y == 0, y, y * T.log1p(safe_conc * z))
        return -self.scale.log() - T.where(eq_zero, z, where_nonzero)

    def log_survival_function(self, value):
        """log(1 - cdf(value))."""
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._safe_conc()
        where_nonzero = -T.log1p(safe_conc * z) / safe_conc
        return T.where(eq_zero, -z, where_nonzero)

    def log_cdf(self, value):
        """log cdf(value)."""
        return T.log1p(-T.exp(self.log_survival_function(value)))

    def cdf(self, value):
        return T.exp(self.log_cdf(value))

    def icdf(self, value):
        eq_zero, safe_conc = self._safe_conc()
        logu = T.log1p(-value)
        where_nonzero = self.loc + self.scale / safe_conc * T.expm1(-safe_conc * logu)
        where_zero = self.loc - self.scale * logu
        return T.where(eq_zero, where_zero, where_nonzero)

    @property
    def mean(self):
        valid = self.concentration < 1
        safe_conc = T.where(valid, self.concentration, 0.5)
        return T.where(valid, self.loc + self.scale / (1 - safe_conc), math.nan)

    @property
    def variance(self):
        valid = self.concentration < 0.5
        safe_conc = T.where(valid, self.concentration, 0.25)
        return T.where(valid, self.scale ** 2 / ((1 - safe_conc) ** 2 * (1 - 2 * safe_conc)), math.nan)

    def entropy(self):
        ans = T.log(self.scale) + self.concentration + 1
        return T.broadcast_to(ans, tuple(self._batch_shape))

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        lower = self.loc
        upper = T.where(self.concentration < 0, lower - self.scale / self.concentration, math.inf)
        return constraints.interval(lower, upper)


class Dirichlet(ExponentialFamily):
    """Dirichlet(concentration) on the simplex (event shape (K,)).

    Args:
        concentration: positive, at least 1-d.
        validate_args: check parameters and values.
    """

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args: bool | None = None) -> None:
        if not isinstance(concentration, Tensor) or concentration.dim() < 1:
            raise FgradValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        shape = tuple(concentration.shape)
        super().__init__(shape[:-1], shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Dirichlet, batch_shape, _instance, ("concentration",))

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        return sample_dirichlet(self.concentration.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (special.xlogy(self.concentration - 1.0, value).sum(-1) + lgamma(self.concentration.sum(-1))
                - lgamma(self.concentration).sum(-1))

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        concentrationm1 = (self.concentration - 1).clamp(min=0.0)
        mode = concentrationm1 / concentrationm1.sum(-1, True)
        # all concentrations below 1: the mode is the vertex of the largest one
        mask = (self.concentration < 1).all(dim=-1, keepdim=True)
        k = concentrationm1.shape[-1]
        vertex = F.one_hot(mode.argmax(dim=-1), k).to(mode.dtype)
        return T.where(mask, vertex, mode)

    @property
    def variance(self):
        con0 = self.concentration.sum(-1, True)
        return self.concentration * (con0 - self.concentration) / (con0.pow(2) * (con0 + 1))

    def entropy(self):
        k = self.concentration.size(-1)
        a0 = self.concentration.sum(-1)
        return (lgamma(self.concentration).sum(-1) - lgamma(a0) - (k - a0) * digamma(a0)
                - ((self.concentration - 1.0) * digamma(self.concentration)).sum(-1))

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return lgamma(x).sum(-1) - lgamma(x.sum(-1))
