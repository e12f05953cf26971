"""fgrad.random: JAX's `jax.random` API with JAX's streams (the threefry2x32 PRNG with
`jax_threefry_partitionable=True`, JAX's default), written on fgrad.numpy and fgrad.lax so that
every function traces under jit, vmap and grad: keys are values, not state.

Dtypes: `dtype=None` is fgrad's default float, float64 (JAX's default with x64 enabled), and
int64 / uint64 for the integer samplers and `bits` (likewise JAX's x64 defaults). Compare with
jax under `jax.config.update("jax_enable_x64", True)`.

Bit equality with jax.random: keys, split, fold_in, bits, randint, uniform, bernoulli,
permutation, shuffle and choice (uniform) are bit-identical. Samplers that apply transcendental
functions (erf_inv, log, log1p, tan, pow, sqrt of products, ...) agree to a few ulps: XLA's CPU
approximations and NumPy/SciPy's differ in the last bits (the measured bound is in
tests/random/test_samplers.py); discrete results computed from them (categorical, poisson) agree except
where a value lands within those ulps of a decision boundary.
"""
from ._continuous import (cauchy, double_sided_maxwell, exponential, gumbel, laplace, logistic,  # noqa: F401
                          lognormal, maxwell, multivariate_normal, normal, orthogonal, pareto,
                          rayleigh, triangular, truncated_normal, uniform, wald, weibull_min)
from ._discrete import (bernoulli, categorical, choice, geometric, permutation, poisson,  # noqa: F401
                        rademacher, randint, shuffle)
from ._gamma import ball, beta, chisquare, dirichlet, f, gamma, generalized_normal, loggamma, t  # noqa: F401
from ._keys import PRNGKey, bits, clone, fold_in, key, key_data, key_impl, split, wrap_key_data  # noqa: F401
from ._prng import KeyArray  # noqa: F401

__all__ = sorted(n for n in dir() if not n.startswith("_"))
