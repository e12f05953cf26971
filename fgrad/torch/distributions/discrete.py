"""The discrete distributions of torch.distributions: Bernoulli, Categorical, OneHotCategorical
(+StraightThrough), Binomial, Geometric, Multinomial, NegativeBinomial and Poisson, with
PyTorch's parameters (probs or logits: the one given is kept, the other derived lazily) and
expressions.

Bernoulli, Categorical, OneHotCategorical, Multinomial and Geometric sample as PyTorch
(bernoulli, multinomial, uniform_ on fgrad.torch's streams); Binomial, Poisson and
NegativeBinomial run PyTorch's rejection kernels on the same draws: equal values for the same
seed.
"""
from __future__ import annotations

import math
from numbers import Number

from ...core.errors import FgradNotImplementedError, FgradValueError
from .. import _tensor as T
from .. import special
from ..nn import functional as F
from .._tensor import creation
from .._tensor.tensor import Size, Tensor
from . import constraints
from ._samplers import sample_binomial, sample_poisson
from .continuous import Gamma
from .distribution import Distribution
from .structure import ExponentialFamily
from .utils import broadcast_all, finfo_of, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Bernoulli", "Categorical", "OneHotCategorical", "OneHotCategoricalStraightThrough", "Binomial",
           "Geometric", "Multinomial", "NegativeBinomial", "Poisson"]

lgamma = special.gammaln


def _one_of(probs, logits) -> None:
    if (probs is None) == (logits is None):
        raise FgradValueError("Either `probs` or `logits` must be specified, but not both.")


def _as(value, like: Tensor) -> Tensor:
    if isinstance(value, Tensor):
        return value
    return creation.tensor(value, dtype=like.dtype, device=like.device)


class Bernoulli(ExponentialFamily):
    """1 with probability probs (= sigmoid(logits)), else 0.

    Args:
        probs: in [0, 1]. logits: real. (exactly one of them)
        validate_args: check parameters and values.
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args: bool | None = None) -> None:
        _one_of(probs, logits)
        if probs is not None:
            is_scalar = isinstance(probs, Number)
            (self.probs,) = broadcast_all(probs)
        else:
            is_scalar = isinstance(logits, Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(() if is_scalar else self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(Bernoulli, batch_shape, _instance, ("probs", "logits"))
        new._param = new.__dict__["probs"] if "probs" in self.__dict__ else new.__dict__["logits"]
        return new

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return T.where(self.probs == 0.5, math.nan, mode)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    def sample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        with T.no_grad():
            return creation.bernoulli(self.probs.detach().expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = _as(value, self._param)
        logits, value = broadcast_all(self.logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand: bool = True):
        values = creation.arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand((2,) + tuple(self._batch_shape)) if expand else values

    @property
    def _natural_params(self):
        return (T.logit(self.probs),)

    def _log_normalizer(self, x):
        return T.log1p(T.exp(x))


class Categorical(Distribution):
    """One of K categories (the last dim of probs/logits): probs normalised to sum to 1, or
    logits normalised by logsumexp.

    Args:
        probs: nonnegative, at least 1-d. logits: at least 1-d. (exactly one of them)
        validate_args: check parameters and values.
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args: bool | None = None) -> None:
        _one_of(probs, logits)
        if probs is not None:
            if not isinstance(probs, Tensor) or probs.dim() < 1:
                raise FgradValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if not isinstance(logits, Tensor) or logits.dim() < 1:
                raise FgradValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.size()[-1]
        batch_shape = tuple(self._param.size()[:-1]) if self._param.dim() > 1 else ()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(Categorical, batch_shape, _instance, ("probs", "logits"), keep=("_num_events",))
        new._param = new.__dict__["probs"] if "probs" in self.__dict__ else new.__dict__["logits"]
        return new

    def _new(self, *args, **kwargs):
        return self._param.new_empty(*args, **kwargs)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits)

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    @property
    def mean(self):
        return creation.full(tuple(self._extended_shape()), math.nan, dtype=self.probs.dtype,
                             device=self.probs.device)

    @property
    def mode(self):
        return self.probs.argmax(dim=-1)

    @property
    def variance(self):
        return creation.full(tuple(self._extended_shape()), math.nan, dtype=self.probs.dtype,
                             device=self.probs.device)

    def sample(self, sample_shape=()):
        # one multinomial (with replacement) per row of the probabilities, transposed: PyTorch's
        shape = (sample_shape,) if isinstance(sample_shape, int) else tuple(sample_shape)
        n = math.prod(shape)
        with T.no_grad():
            rows = self.probs.detach().reshape(-1, self._num_events)
            samples = rows.multinomial(n, True).transpose(0, 1)
            return samples.reshape(tuple(self._extended_shape(shape)))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = value if isinstance(value, Tensor) else creation.tensor(value)
        v = value.long().unsqueeze(-1)
        logits = self.logits
        shape = tuple(T.broadcast_shapes(tuple(v.shape), tuple(logits.shape[:-1]) + (1,)))
        full = shape[:-1] + (self._num_events,)
        # (broadcast_tensors: a tensor that has the shape already is itself)
        lg = logits if tuple(logits.shape) == full else logits.expand(full)
        v = v if tuple(v.shape) == shape else v.expand(shape)
        return lg.gather(-1, v).squeeze(-1)

    def entropy(self):
        min_real = finfo_of(self.logits).min
        logits = T.clamp(self.logits, min=min_real)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True):
        values = creation.arange(self._num_events, device=self._param.device)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand((self._num_events,) + tuple(self._batch_shape)) if expand else values


class OneHotCategorical(Distribution):
    """Categorical draws as one-hot vectors (event shape (K,)).

    Args:
        probs, logits: as Categorical's.
        validate_args: check parameters and values.
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args: bool | None = None) -> None:
        self._categorical = Categorical(probs, logits)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(OneHotCategorical, _instance)
        new._categorical = self._categorical.expand(tuple(batch_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def _param(self):
        return self._categorical._param

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def mean(self):
        return self._categorical.probs

    @property
    def mode(self):
        probs = self._categorical.probs
        mode = probs.argmax(-1)
        return F.one_hot(mode, num_classes=probs.shape[-1]).to(probs.dtype)

    @property
    def variance(self):
        return self._categorical.probs * (1 - self._categorical.probs)

    @property
    def param_shape(self) -> Size:
        return self._categorical.param_shape

    def sample(self, sample_shape=()):
        probs = self._categorical.probs
        indices = self._categorical.sample(sample_shape)
        return F.one_hot(indices, self._categorical._num_events).to(probs.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        indices = value.max(-1)[1]
        return self._categorical.log_prob(indices)

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand: bool = True):
        n = self.event_shape[0]
        values = creation.eye(n, dtype=self._param.dtype, device=self._param.device)
        values = values.reshape((n,) + (1,) * len(self.batch_shape) + (n,))
        return values.expand((n,) + tuple(self.batch_shape) + (n,)) if expand else values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """OneHotCategorical whose rsample passes gradients straight through: the one-hot sample
    plus (probs - probs.detach()) (Bengio et al. 2013)."""

    has_rsample = True

    def rsample(self, sample_shape=()):
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())


def _clamp_by_zero(x):
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(Distribution):
    """Binomial(total_count, probs): successes in total_count trials (PyTorch's BTRS /
    inversion kernel: the same draws for the same seed).

    Args:
        total_count: nonnegative integers (default 1). probs: in [0, 1]. logits: real.
        validate_args: check parameters and values.
    """

    arg_constraints = {"total_count": constraints.nonnegative_integer, "probs": constraints.unit_interval,
                       "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args: bool | None = None) -> None:
        _one_of(probs, logits)
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.to(self.probs.dtype)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.to(self.logits.dtype)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(Binomial, batch_shape, _instance, ("total_count", "probs", "logits"))
        new._param = new.__dict__["probs"] if "probs" in self.__dict__ else new.__dict__["logits"]
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    def sample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        with T.no_grad():
            return sample_binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_factorial_n = lgamma(self.total_count + 1)
        log_factorial_k = lgamma(value + 1)
        log_factorial_nmk = lgamma(self.total_count - value + 1)
        normalize_term = (self.total_count * _clamp_by_zero(self.logits)
                          + self.total_count * T.log1p(T.exp(-T.abs(self.logits))) - log_factorial_n)
        return value * self.logits - log_factorial_k - log_factorial_nmk - normalize_term

    def entropy(self):
        total_count = int(self.total_count.max())
        if not self.total_count.min() == total_count:
            raise FgradNotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(T.exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand: bool = True):
        total_count = int(self.total_count.max())
        if not self.total_count.min() == total_count:
            raise FgradNotImplementedError("Inhomogeneous total count not supported by `enumerate_support`.")
        values = creation.arange(1 + total_count, dtype=self._param.dtype, device=self._param.device)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand((1 + total_count,) + tuple(self._batch_shape)) if expand else values


class Geometric(Distribution):
    """The number of failures before the first success, success probability probs.

    Args:
        probs: in (0, 1]. logits: real. (exactly one of them)
        validate_args: check parameters and values.
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args: bool | None = None) -> None:
        _one_of(probs, logits)
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        given = probs if probs is not None else logits
        batch_shape = () if isinstance(given, Number) else given.size()
        super().__init__(batch_shape, validate_args=validate_args)
        if self._validate_args and probs is not None:
            value = self.probs
            valid = value > 0
            if not bool(valid.all()):
                invalid_value = value.detach()[~valid]
                raise FgradValueError(f"Expected parameter probs ({type(value).__name__} of shape "
                                      f"{tuple(value.shape)}) of distribution {self!r} to be positive but found "
                                      f"invalid values:\n{invalid_value}")

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Geometric, batch_shape, _instance, ("probs", "logits"))

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return T.zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    def sample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        tiny = finfo_of(self.probs).tiny
        with T.no_grad():
            u = creation.empty(shape, dtype=self.probs.dtype, device=self.probs.device).uniform_(tiny, 1)
            return (u.log() / (-self.probs.detach()).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        # P(0 failures) is 1 when probs is 1 (0 * log(0) taken as 0)
        probs = T.where((probs == 1) & (value == 0), 0.0, probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none") / self.probs


class Multinomial(Distribution):
    """Counts of total_count draws from a Categorical (event shape (K,)).

    Args:
        total_count: an int (inhomogeneous counts are not supported, as PyTorch).
        probs, logits: as Categorical's.
        validate_args: check parameters and values.
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}

    def __init__(self, total_count: int = 1, probs=None, logits=None, validate_args: bool | None = None) -> None:
        if not isinstance(total_count, int):
            raise FgradNotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(tuple(batch_shape))
        new._binomial = Binomial(total_count=self.total_count, probs=new._categorical.probs, validate_args=False)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def param_shape(self) -> Size:
        return self._categorical.param_shape

    def sample(self, sample_shape=()):
        shape = (sample_shape,) if isinstance(sample_shape, int) else tuple(sample_shape)
        with T.no_grad():
            samples = self._categorical.sample((self.total_count,) + shape)
            # the draws' dim goes last, then each draw adds one to its category's count
            order = list(range(1, samples.dim())) + [0]
            samples = samples.permute(*order)
            counts = creation.zeros(tuple(self._extended_shape(shape)), dtype=samples.dtype)
            counts = counts.scatter_add(-1, samples, T.ones_like(samples))
            return counts.to(self.probs.dtype)

    def entropy(self):
        n = creation.tensor(float(self.total_count), dtype=self.probs.dtype)
        cat_entropy = self._categorical.entropy()
        term1 = n * cat_entropy - lgamma(n + 1)
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = T.exp(self._binomial.log_prob(support))
        weights = lgamma(support + 1)
        term2 = (binomial_probs * weights).sum(0).sum(-1)
        return term1 + term2

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_factorial_n = lgamma(value.sum(-1) + 1)
        log_factorial_xs = lgamma(value + 1).sum(-1)
        # a category of probability 0 contributes nothing when it was not drawn
        logits = T.where((value == 0) & (logits == -math.inf), 0.0, logits)
        log_powers = (logits * value).sum(-1)
        return log_factorial_n - log_factorial_xs + log_powers


class NegativeBinomial(Distribution):
    """Failures before total_count successes, success probability 1 - probs (a Gamma-Poisson
    mixture, sampled as PyTorch's).

    Args:
        total_count: > 0. probs: in [0, 1). logits: real. (probs or logits)
        validate_args: check parameters and values.
    """

    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0), "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args: bool | None = None) -> None:
        _one_of(probs, logits)
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.to(self.probs.dtype)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.to(self.logits.dtype)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(NegativeBinomial, batch_shape, _instance, ("total_count", "probs", "logits"))
        new._param = new.__dict__["probs"] if "probs" in self.__dict__ else new.__dict__["logits"]
        return new

    @property
    def mean(self):
        return self.total_count * T.exp(self.logits)

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / T.sigmoid(-self.logits)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    @lazy_property
    def _gamma(self):
        return Gamma(concentration=self.total_count, rate=T.exp(-self.logits), validate_args=False)

    def sample(self, sample_shape=()):
        with T.no_grad():
            rate = self._gamma.sample(sample_shape=sample_shape)
            return sample_poisson(rate)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_unnormalized_prob = self.total_count * F.logsigmoid(-self.logits) + value * F.logsigmoid(self.logits)
        log_normalization = -lgamma(self.total_count + value) + lgamma(1.0 + value) + lgamma(self.total_count)
        # zero successes and zero failures: probability 1
        log_normalization = log_normalization.masked_fill(self.total_count + value == 0.0, 0.0)
        return log_unnormalized_prob - log_normalization


class Poisson(ExponentialFamily):
    """Poisson(rate) counts (PyTorch's PTRS / multiplication kernel: the same draws for the same
    seed).

    Args:
        rate: >= 0.
        validate_args: check parameters and values.
    """

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        batch_shape = () if isinstance(rate, Number) else self.rate.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Poisson, batch_shape, _instance, ("rate",))

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        with T.no_grad():
            return sample_poisson(self.rate.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return value.xlogy(rate) - rate - lgamma(value + 1)

    @property
    def _natural_params(self):
        return (T.log(self.rate),)

    def _log_normalizer(self, x):
        return T.exp(x)
