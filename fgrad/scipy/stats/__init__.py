"""fgrad.scipy.stats: probability distributions with SciPy's signatures, composed from
fgrad.numpy and fgrad.scipy.special, so they differentiate (to any order) in the point and in
every parameter that has a closed-form derivative; the CDFs built on betainc, gammainc and
stdtr have none in their shape parameters and raise DifferentiationError when asked for it.
Discrete distributions differentiate in their parameters; their counts have derivative 0.

As in JAX, a distribution is a module of functions (norm.logpdf(x, loc, scale)), not an object.
Results keep the inputs' float dtype (SciPy computes in float64). Module-level statistics
(sem) sit beside the distributions."""
from . import (bernoulli, beta, betabinom, binom, cauchy, chi2, dirichlet, expon, gamma, gennorm,  # noqa: F401
               geom, gumbel_l, gumbel_r, laplace, logistic, multinomial, multivariate_normal, nbinom, norm,
               pareto, poisson, t, truncnorm, uniform, vonmises, wrapcauchy)
from ._summary import sem  # noqa: F401

DISTRIBUTIONS = ["bernoulli", "beta", "betabinom", "binom", "cauchy", "chi2", "dirichlet", "expon", "gamma",
                 "gennorm", "geom", "gumbel_l", "gumbel_r", "laplace", "logistic", "multinomial",
                 "multivariate_normal", "nbinom", "norm", "pareto", "poisson", "t", "truncnorm", "uniform",
                 "vonmises", "wrapcauchy"]
__all__ = [*DISTRIBUTIONS, "sem"]
