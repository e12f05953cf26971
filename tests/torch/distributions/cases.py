"""Distributions built the same way in torch and fgrad.torch (`lib` is either module), with a
value inside each one's support, for the tests of this folder."""
from __future__ import annotations

import numpy as np

P = [0.3, 1.7]
Q = [2.0, 0.6]
U = [0.2, 0.7]
L = [[1.2, 0.0], [0.4, 0.8]]
COV = (np.array(L) @ np.array(L).T).tolist()
CORR_CHOL = np.linalg.cholesky(np.array([[1, 0.3, 0.1], [0.3, 1, 0.2], [0.1, 0.2, 1]])).tolist()


def t(lib, x, requires_grad=False):
    """A float32 tensor of lib (a leaf when requires_grad)."""
    return lib.tensor(np.asarray(x, dtype=np.float32), requires_grad=requires_grad)


_MADE: list = []


def _p(lib, x, g):
    leaf = t(lib, x, g)
    if g:
        _MADE.append(leaf)
    return leaf


def build(name: str, lib, requires_grad: bool = False):
    """CASES[name]'s distribution for lib and its parameter leaves (when requires_grad)."""
    _MADE.clear()
    dist = CASES[name][0](lib, requires_grad)
    leaves = list(_MADE)
    _MADE.clear()
    return dist, leaves


# name -> (make(lib, requires_grad) -> distribution, a value in its support)
CASES = {
    "Normal": (lambda l, g=False: l.distributions.Normal(_p(l, P, g), _p(l, Q, g)), [0.1, 0.5]),
    "Uniform": (lambda l, g=False: l.distributions.Uniform(_p(l, P, g), _p(l, [2.5, 2.3], g)), [0.4, 2.0]),
    "Exponential": (lambda l, g=False: l.distributions.Exponential(_p(l, Q, g)), [0.4, 2.0]),
    "Laplace": (lambda l, g=False: l.distributions.Laplace(_p(l, P, g), _p(l, Q, g)), [0.4, 2.0]),
    "Cauchy": (lambda l, g=False: l.distributions.Cauchy(_p(l, P, g), _p(l, Q, g)), [0.4, 2.0]),
    "Gumbel": (lambda l, g=False: l.distributions.Gumbel(_p(l, P, g), _p(l, Q, g)), [0.4, 2.0]),
    "HalfNormal": (lambda l, g=False: l.distributions.HalfNormal(_p(l, Q, g)), [0.4, 2.0]),
    "HalfCauchy": (lambda l, g=False: l.distributions.HalfCauchy(_p(l, Q, g)), [0.4, 2.0]),
    "LogNormal": (lambda l, g=False: l.distributions.LogNormal(_p(l, P, g), _p(l, Q, g)), [0.4, 2.0]),
    "Pareto": (lambda l, g=False: l.distributions.Pareto(_p(l, Q, g), _p(l, [2.3, 3.7], g)), [2.4, 3.0]),
    "Weibull": (lambda l, g=False: l.distributions.Weibull(_p(l, Q, g), _p(l, [1.3, 2.7], g)), [0.4, 2.0]),
    "Kumaraswamy": (lambda l, g=False: l.distributions.Kumaraswamy(_p(l, [3.0, 1.6], g), _p(l, [1.3, 2.7], g)), U),
    "Gamma": (lambda l, g=False: l.distributions.Gamma(_p(l, [3.0, 1.6], g), _p(l, [1.3, 2.7], g)), [0.4, 2.0]),
    "Chi2": (lambda l, g=False: l.distributions.Chi2(_p(l, [4.0, 2.6], g)), [0.4, 2.0]),
    "StudentT": (lambda l, g=False: l.distributions.StudentT(_p(l, [4.0, 2.6], g), _p(l, P, g), _p(l, Q, g)),
                 [0.4, 2.0]),
    "Beta": (lambda l, g=False: l.distributions.Beta(_p(l, [3.0, 1.6], g), _p(l, [1.3, 2.7], g)), U),
    "InverseGamma": (lambda l, g=False: l.distributions.InverseGamma(_p(l, [5.0, 3.6], g), _p(l, [1.3, 2.7], g)),
                     [0.4, 2.0]),
    "FisherSnedecor": (lambda l, g=False: l.distributions.FisherSnedecor(_p(l, [7.0, 5.6], g), _p(l, [6.3, 5.7], g)),
                       [0.4, 2.0]),
    "VonMises": (lambda l, g=False: l.distributions.VonMises(_p(l, P, g), _p(l, Q, g)), [0.4, 2.0]),
    "ContinuousBernoulli": (lambda l, g=False: l.distributions.ContinuousBernoulli(_p(l, [0.3, 0.8], g)), U),
    "ContinuousBernoulli(logits)": (lambda l, g=False: l.distributions.ContinuousBernoulli(
        logits=_p(l, [-0.6, 0.0001], g)), U),
    "GeneralizedPareto": (lambda l, g=False: l.distributions.GeneralizedPareto(_p(l, P, g), _p(l, Q, g),
                                                                               _p(l, [0.2, -0.1], g)), [0.4, 2.0]),
    "Bernoulli": (lambda l, g=False: l.distributions.Bernoulli(_p(l, [0.3, 0.8], g)), [0.0, 1.0]),
    "Bernoulli(logits)": (lambda l, g=False: l.distributions.Bernoulli(logits=_p(l, [0.3, -1.8], g)), [0.0, 1.0]),
    "Geometric": (lambda l, g=False: l.distributions.Geometric(_p(l, [0.3, 0.8], g)), [0.0, 3.0]),
    "Binomial": (lambda l, g=False: l.distributions.Binomial(10, _p(l, [0.3, 0.8], g)), [2.0, 7.0]),
    "Binomial(logits)": (lambda l, g=False: l.distributions.Binomial(t(l, [10.0, 6.0]), logits=_p(l, [0.3, -0.8], g)),
                         [2.0, 6.0]),
    "NegativeBinomial": (lambda l, g=False: l.distributions.NegativeBinomial(_p(l, [3.0, 1.6], g),
                                                                             _p(l, [0.3, 0.8], g)), [2.0, 7.0]),
    "Poisson": (lambda l, g=False: l.distributions.Poisson(_p(l, [3.0, 1.6], g)), [2.0, 7.0]),
    "Categorical": (lambda l, g=False: l.distributions.Categorical(_p(l, [[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]], g)),
                    [2.0, 0.0]),
    "OneHotCategorical": (lambda l, g=False: l.distributions.OneHotCategorical(
        logits=_p(l, [[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]], g)), [[0.0, 0, 1], [1, 0, 0]]),
    "Multinomial": (lambda l, g=False: l.distributions.Multinomial(5, _p(l, [[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]], g)),
                    [[1.0, 1, 3], [4, 0, 1]]),
    "Dirichlet": (lambda l, g=False: l.distributions.Dirichlet(_p(l, [[1.2, 0.3, 2.5], [0.6, 3.1, 0.3]], g)),
                  [[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]]),
    "MultivariateNormal": (lambda l, g=False: l.distributions.MultivariateNormal(_p(l, P, g),
                                                                                 scale_tril=_p(l, L, g)), [0.4, 2.0]),
    "MultivariateNormal(cov)": (lambda l, g=False: l.distributions.MultivariateNormal(
        _p(l, P, g), covariance_matrix=_p(l, COV, g)), [0.4, 2.0]),
    "LowRankMultivariateNormal": (lambda l, g=False: l.distributions.LowRankMultivariateNormal(
        _p(l, P, g), _p(l, [[0.5, 0.1], [0.2, 0.7]], g), _p(l, Q, g)), [0.4, 2.0]),
    "Wishart": (lambda l, g=False: l.distributions.Wishart(_p(l, 4.0, g), covariance_matrix=_p(l, COV, g)),
                (np.array(COV) * 2).tolist()),
    "LKJCholesky": (lambda l, g=False: l.distributions.LKJCholesky(3, _p(l, 1.5, g)), CORR_CHOL),
    "LogisticNormal": (lambda l, g=False: l.distributions.LogisticNormal(_p(l, P, g), _p(l, Q, g)), [0.2, 0.3, 0.5]),
    "RelaxedBernoulli": (lambda l, g=False: l.distributions.RelaxedBernoulli(t(l, 0.7), _p(l, [0.3, 0.8], g)), U),
    "RelaxedOneHotCategorical": (lambda l, g=False: l.distributions.RelaxedOneHotCategorical(
        t(l, 0.7), _p(l, [0.2, 0.3, 0.5], g)), [0.2, 0.3, 0.5]),
    "Independent": (lambda l, g=False: l.distributions.Independent(l.distributions.Normal(_p(l, P, g), _p(l, Q, g)),
                                                                   1), [0.1, 0.5]),
    "MixtureSameFamily": (lambda l, g=False: l.distributions.MixtureSameFamily(
        l.distributions.Categorical(_p(l, [0.3, 0.7], g)), l.distributions.Normal(_p(l, P, g), _p(l, Q, g))),
        [0.1, 0.5]),
    "TransformedDistribution": (lambda l, g=False: l.distributions.TransformedDistribution(
        l.distributions.Normal(_p(l, P, g), _p(l, Q, g)),
        [l.distributions.transforms.TanhTransform(), l.distributions.transforms.AffineTransform(1.0, 2.0)]),
        [0.4, 2.0]),
}

# Distributions sampled as torch's (transforms of its streams, its rejection kernels): samples
# equal torch's
SEEDED_EQUAL = ["Gamma", "Chi2", "StudentT", "Beta", "InverseGamma", "FisherSnedecor", "Dirichlet", "Poisson",
                "Binomial", "Binomial(logits)", "NegativeBinomial", "VonMises", "LKJCholesky", "Normal", "Uniform",
                "Exponential", "Laplace", "Cauchy", "Gumbel", "HalfNormal", "HalfCauchy", "LogNormal", "Pareto",
                "Weibull", "Kumaraswamy", "ContinuousBernoulli", "GeneralizedPareto", "Bernoulli", "Geometric",
                "Categorical", "OneHotCategorical", "Multinomial", "MultivariateNormal", "LowRankMultivariateNormal",
                "LogisticNormal", "RelaxedBernoulli", "RelaxedOneHotCategorical", "Independent",
                "TransformedDistribution"]
# Their rsample is differentiable and equal: d(rsample)/d(params) for a fixed seed equals torch's
RSAMPLE_EQUAL = ["Gamma", "Chi2", "StudentT", "Beta", "InverseGamma", "FisherSnedecor", "Dirichlet", "Normal",
                 "Uniform", "Exponential", "Laplace", "Cauchy", "Gumbel", "HalfNormal", "HalfCauchy", "LogNormal",
                 "Pareto", "Weibull", "Kumaraswamy", "ContinuousBernoulli", "GeneralizedPareto",
                 "MultivariateNormal", "LowRankMultivariateNormal", "LogisticNormal", "RelaxedBernoulli",
                 "RelaxedOneHotCategorical", "Independent", "TransformedDistribution"]
