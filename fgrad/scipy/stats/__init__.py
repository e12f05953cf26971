"""fgrad.scipy.stats: probability distributions with SciPy's signatures, composed from
fgrad.numpy and fgrad.scipy.special, so they differentiate (to any order) in the point and in
every parameter that has a closed-form derivative; the CDFs built on betainc, gammainc and
stdtr have none in their shape parameters and raise DifferentiationError when asked for it.

As in JAX, a distribution is a module of functions (norm.logpdf(x, loc, scale)), not an object.
Results keep the inputs' float dtype (SciPy computes in float64)."""
from . import beta, chi2, dirichlet, gamma, multivariate_normal, norm, poisson, t  # noqa: F401

__all__ = ["beta", "chi2", "dirichlet", "gamma", "multivariate_normal", "norm", "poisson", "t"]
