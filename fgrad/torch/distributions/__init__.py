"""`torch.distributions` under fgrad: Normal, Uniform, MultivariateNormal, Bernoulli and
Categorical with PyTorch's parameters and methods (sample, rsample, log_prob, entropy,
mean, variance, cdf where closed-form). Samples come from fgrad's default generator
(`fgrad.torch.manual_seed`), so values differ from PyTorch's for the same seed; log_prob,
entropy and their gradients agree."""
from .continuous import MultivariateNormal, Normal, Uniform
from .discrete import Bernoulli, Categorical
from .distribution import Distribution

__all__ = ["Distribution", "Normal", "Uniform", "MultivariateNormal", "Bernoulli", "Categorical"]
