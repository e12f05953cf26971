"""`torch.distributions` under fgrad: every distribution of PyTorch 2.13 with its parameters,
constraints, `sample`/`rsample`/`log_prob`/`cdf`/`icdf`/`entropy`/moments, the transforms and
constraint registries, and `kl_divergence` with PyTorch's registered pairs. They are written on
fgrad.torch ops, so gradients flow through rsample, log_prob and the rest.

Sampling follows PyTorch's on fgrad.torch's streams (which are PyTorch's), so with `manual_seed`
the samples are PyTorch's: the transforms of rand/randn/exponential_/cauchy_/bernoulli/
multinomial run PyTorch's formulas (bit for bit where the formula is arithmetic on the draws;
where it takes a float32 log/exp/pow, to the last bits in which fgrad's results of those
functions may differ from PyTorch's vectorised ones), and the rejection samplers (Gamma and what
draws through it: Chi2, Beta, Dirichlet, StudentT, FisherSnedecor, NegativeBinomial; Poisson,
Binomial) are PyTorch's kernels run element by element on the same draws (bit for bit; Python
loops, a few microseconds a draw). Wishart draws once where PyTorch 2.13 redraws (see its
docstring).

PyTorch's module paths (`torch.distributions.normal`, `...constraints`, `...transforms`,
`...kl`, `...utils`) import too."""
import sys as _sys
import types as _types

from . import constraints, transforms, utils  # noqa: F401
from .constraint_registry import biject_to, transform_to
from .continuous import (Beta, Cauchy, Chi2, ContinuousBernoulli, Dirichlet, Exponential, FisherSnedecor, Gamma,
                         GeneralizedPareto, Gumbel, HalfCauchy, HalfNormal, InverseGamma, Kumaraswamy, Laplace,
                         LogNormal, Normal, Pareto, StudentT, Uniform, VonMises, Weibull)
from .discrete import (Bernoulli, Binomial, Categorical, Geometric, Multinomial, NegativeBinomial,
                       OneHotCategorical, OneHotCategoricalStraightThrough, Poisson)
from .distribution import Distribution
from .kl import kl_divergence, register_kl
from .multivariate import (LKJCholesky, LogisticNormal, LowRankMultivariateNormal, MultivariateNormal,
                           Wishart)
from .relaxed import (ExpRelaxedCategorical, LogitRelaxedBernoulli, MixtureSameFamily, RelaxedBernoulli,  # noqa: F401
                      RelaxedOneHotCategorical)
from .structure import ExponentialFamily, Independent, TransformedDistribution
from .transforms import (AbsTransform, AffineTransform, CatTransform, ComposeTransform, CorrCholeskyTransform,
                         CumulativeDistributionTransform, ExpTransform, IndependentTransform, LowerCholeskyTransform,
                         PositiveDefiniteTransform, PowerTransform, ReshapeTransform, SigmoidTransform,
                         SoftmaxTransform, SoftplusTransform, StackTransform, StickBreakingTransform, TanhTransform,
                         Transform, identity_transform)

__all__ = [
    "Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "ContinuousBernoulli", "Dirichlet",
    "Distribution", "Exponential", "ExponentialFamily", "FisherSnedecor", "Gamma", "GeneralizedPareto",
    "Geometric", "Gumbel", "HalfCauchy", "HalfNormal", "Independent", "InverseGamma", "Kumaraswamy",
    "LKJCholesky", "Laplace", "LogNormal", "LogisticNormal", "LowRankMultivariateNormal", "MixtureSameFamily",
    "Multinomial", "MultivariateNormal", "NegativeBinomial", "Normal", "OneHotCategorical",
    "OneHotCategoricalStraightThrough", "Pareto", "RelaxedBernoulli", "RelaxedOneHotCategorical", "StudentT",
    "Poisson", "Uniform", "VonMises", "Weibull", "Wishart", "TransformedDistribution", "biject_to",
    "kl_divergence", "register_kl", "transform_to", "AbsTransform", "AffineTransform", "CatTransform",
    "ComposeTransform", "CorrCholeskyTransform", "CumulativeDistributionTransform", "ExpTransform",
    "IndependentTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform", "PowerTransform",
    "ReshapeTransform", "SigmoidTransform", "SoftplusTransform", "TanhTransform", "SoftmaxTransform",
    "StackTransform", "StickBreakingTransform", "Transform", "identity_transform",
]

# PyTorch's per-distribution modules (torch.distributions.normal.Normal, ...): small modules
# holding the same classes, so `from torch.distributions.normal import Normal` ports unchanged
_MODULES = {
    "bernoulli": ["Bernoulli"], "beta": ["Beta"], "binomial": ["Binomial"], "categorical": ["Categorical"],
    "cauchy": ["Cauchy"], "chi2": ["Chi2"], "continuous_bernoulli": ["ContinuousBernoulli"],
    "dirichlet": ["Dirichlet"], "exp_family": ["ExponentialFamily"], "exponential": ["Exponential"],
    "fishersnedecor": ["FisherSnedecor"], "gamma": ["Gamma"], "generalized_pareto": ["GeneralizedPareto"],
    "geometric": ["Geometric"], "gumbel": ["Gumbel"], "half_cauchy": ["HalfCauchy"], "half_normal": ["HalfNormal"],
    "independent": ["Independent"], "inverse_gamma": ["InverseGamma"], "kumaraswamy": ["Kumaraswamy"],
    "laplace": ["Laplace"], "lkj_cholesky": ["LKJCholesky"], "log_normal": ["LogNormal"],
    "logistic_normal": ["LogisticNormal"], "lowrank_multivariate_normal": ["LowRankMultivariateNormal"],
    "mixture_same_family": ["MixtureSameFamily"], "multinomial": ["Multinomial"],
    "multivariate_normal": ["MultivariateNormal"], "negative_binomial": ["NegativeBinomial"], "normal": ["Normal"],
    "one_hot_categorical": ["OneHotCategorical", "OneHotCategoricalStraightThrough"], "pareto": ["Pareto"],
    "poisson": ["Poisson"], "relaxed_bernoulli": ["RelaxedBernoulli", "LogitRelaxedBernoulli"],
    "relaxed_categorical": ["RelaxedOneHotCategorical", "ExpRelaxedCategorical"], "studentT": ["StudentT"],
    "transformed_distribution": ["TransformedDistribution"], "uniform": ["Uniform"], "von_mises": ["VonMises"],
    "weibull": ["Weibull"], "wishart": ["Wishart"],
}
for _mod, _names in _MODULES.items():
    _m = _types.ModuleType(f"{__name__}.{_mod}", f"torch.distributions.{_mod}: {', '.join(_names)}")
    _m.__all__ = list(_names)
    for _n in _names:
        setattr(_m, _n, globals()[_n])
    _sys.modules.setdefault(_m.__name__, _m)
    globals()[_mod] = _m
del _mod, _names, _m, _n
