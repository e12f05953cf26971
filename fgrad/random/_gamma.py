"""Gamma-family samplers: gamma, loggamma (Marsaglia-Tsang, one key and one rejection loop
per element, as JAX's random_gamma), and those built on them: beta, dirichlet, chisquare,
f, t, generalized_normal, ball.

JAX runs a while loop per element (vmapped); here one while loop runs all elements, each
lane updating only while it still rejects, so every lane consumes its own key stream
exactly as in JAX. Samples differentiate through the loop's final values (not JAX's
implicit reparameterization gradient with respect to `a`).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import numpy as fnp
from ..lax import while_loop
from ._common import as_dtype, float_dtype, param_shape, shape_of
from ..core.errors import FgradValueError
from ._continuous import exponential_data, normal_data, rademacher_data, uniform_data
from ._prng import canonical_shape, key_parts, split_data


def _gamma_lanes(keys, alpha, log_space: bool):
    """One gamma sample per lane: keys (N, 2), alpha (N,)."""
    dtype = alpha.dtype
    c = lambda v: np.asarray(v, dtype)  # noqa: E731
    zero, one = c(0), c(1)
    boost_mask = alpha >= one
    alpha_orig = alpha
    alpha = fnp.where(boost_mask, alpha, alpha + one)
    d = alpha - c(1.0 / 3.0)
    cc = c(1.0 / 3.0) / fnp.sqrt(d)
    halves = split_data(keys, (2,))
    key, subkey = halves[:, 0], halves[:, 1]

    def rejects(X, V, U):
        return (U >= one - c(0.0331) * (X * X)) & (fnp.log(U) >= X * c(0.5) + d * ((one - V) + fnp.log(V)))

    def body(state):
        k, X, V, U = state
        live = rejects(X, V, U)
        three = split_data(k, (3,))
        k_next, x_key, u_key = three[:, 0], three[:, 1], three[:, 2]

        def inner(s):
            k2, x, v = s
            need = v <= zero
            two = split_data(k2, (2,))
            x_new = normal_data(two[:, 1], (), dtype)
            v_new = one + x_new * cc
            return (fnp.where(need[:, None], two[:, 0], k2), fnp.where(need, x_new, x), fnp.where(need, v_new, v))

        _, x, v = while_loop(lambda s: fnp.any(s[2] <= zero), inner,
                             (x_key, fnp.zeros_like(alpha), fnp.full_like(alpha, -1)))
        U_new = uniform_data(u_key, (), dtype)
        return (fnp.where(live[:, None], k_next, k), fnp.where(live, x * x, X),
                fnp.where(live, v * v * v, V), fnp.where(live, U_new, U))

    init = (key, fnp.zeros_like(alpha), fnp.ones_like(alpha), fnp.full_like(alpha, 2))
    _, _, V, _ = while_loop(lambda s: fnp.any(rejects(*s[1:])), body, init)
    if log_space:
        log_samples = fnp.negative(exponential_data(subkey, (), dtype))
        log_boost = fnp.where(boost_mask | (log_samples == 0), zero, log_samples * (one / alpha_orig))
        return fnp.log(d) + fnp.log(V) + log_boost
    samples = one - uniform_data(subkey, (), dtype)
    boost = fnp.where(boost_mask, one, fnp.power(samples, one / alpha_orig))
    return d * V * boost


def gamma_data(data, a, shape: tuple, dtype: np.dtype, log_space: bool = False):
    a = fnp.broadcast_to(as_dtype(a, dtype), shape)
    n = math.prod(shape)
    if n == 0:
        return fnp.zeros(shape, dtype)
    keys = split_data(data, (n,))
    return fnp.reshape(_gamma_lanes(keys, fnp.reshape(a, (n,)), log_space), shape)


def gamma(key: Any, a: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Gamma(a, 1) samples (Marsaglia and Tsang's method, JAX's key use)."""
    data, _ = key_parts("gamma", key)
    dtype = float_dtype("gamma", dtype)
    return gamma_data(data, a, param_shape("gamma", shape, a), dtype)


def loggamma(key: Any, a: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Logarithms of Gamma(a, 1) samples, accurate for small a."""
    data, _ = key_parts("loggamma", key)
    dtype = float_dtype("loggamma", dtype)
    return gamma_data(data, a, param_shape("loggamma", shape, a), dtype, log_space=True)


def beta(key: Any, a: Any, b: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Beta(a, b) samples from two log-gamma samples."""
    data, _ = key_parts("beta", key)
    dtype = float_dtype("beta", dtype)
    shape = param_shape("beta", shape, a, b)
    keys = split_data(data, (2,))
    la = gamma_data(keys[0], a, shape, dtype, True)
    lb = gamma_data(keys[1], b, shape, dtype, True)
    log_max = fnp.maximum(la, lb)
    ga, gb = fnp.exp(la - log_max), fnp.exp(lb - log_max)
    return ga / (ga + gb)


def dirichlet(key: Any, alpha: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Dirichlet(alpha) samples over alpha's last axis (a softmax of log-gamma samples)."""
    data, _ = key_parts("dirichlet", key)
    dtype = float_dtype("dirichlet", dtype)
    ashape = shape_of(alpha)
    if len(ashape) < 1:
        raise FgradValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == {len(ashape)}")
    shape = param_shape("dirichlet", shape, np.empty(ashape[:-1])) if shape is not None else ashape[:-1]
    lg = gamma_data(data, alpha, tuple(shape) + ashape[-1:], dtype, True)
    # jax.nn.softmax: exp(x - max) / sum, the max held constant
    unnormalized = fnp.exp(lg - fnp.max(lg, axis=-1, keepdims=True))
    return unnormalized / fnp.sum(unnormalized, axis=-1, keepdims=True)


def chisquare_data(data, df, shape, dtype):
    half = as_dtype(df, dtype) / np.asarray(2, dtype)
    return fnp.exp(gamma_data(data, half, shape, dtype, True)) * np.asarray(2, dtype)


def chisquare(key: Any, df: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Chi-square samples with df degrees of freedom (2 * exp(loggamma(df / 2)))."""
    data, _ = key_parts("chisquare", key)
    dtype = float_dtype("chisquare", dtype)
    return chisquare_data(data, df, param_shape("chisquare", shape, df), dtype)


def f(key: Any, dfnum: Any, dfden: Any, shape: Any = None, dtype: Any = None) -> Any:
    """F-distribution samples: (chi2(dfnum) / dfnum) / (chi2(dfden) / dfden)."""
    data, _ = key_parts("f", key)
    dtype = float_dtype("f", dtype)
    shape = param_shape("f", shape, dfnum, dfden)
    dfden, dfnum = as_dtype(dfden, dtype), as_dtype(dfnum, dtype)
    keys = split_data(data, (2,))
    chi_n = chisquare_data(keys[1], dfnum, shape, dtype)
    chi_d = chisquare_data(keys[0], dfden, shape, dtype)
    return (chi_n / dfnum) / (chi_d / dfden)


def t(key: Any, df: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Student's t samples: normal * sqrt((df / 2) / gamma(df / 2))."""
    data, _ = key_parts("t", key)
    dtype = float_dtype("t", dtype)
    shape = param_shape("t", shape, df)
    df = as_dtype(df, dtype)
    keys = split_data(data, (2,))
    n = normal_data(keys[0], shape, dtype)
    half_df = df / np.asarray(2, dtype)
    g = gamma_data(keys[1], half_df, shape, dtype)
    return n * fnp.sqrt(half_df / g)


def generalized_normal_data(data, p, shape, dtype):
    keys = split_data(data, (2,))
    g = gamma_data(keys[0], 1 / p, shape, dtype)
    r = rademacher_data(keys[1], shape, dtype)
    return r * g ** (1 / p)


def generalized_normal(key: Any, p: float, shape: Any = (), dtype: Any = None) -> Any:
    """Generalized normal samples with shape parameter p (density ~ exp(-|x|**p))."""
    data, _ = key_parts("generalized_normal", key)
    dtype = float_dtype("generalized_normal", dtype)
    return generalized_normal_data(data, p, canonical_shape("generalized_normal", shape), dtype)


def ball(key: Any, d: int, p: float = 2, shape: Any = (), dtype: Any = None) -> Any:
    """Points uniform in the d-dimensional unit p-norm ball (shape + (d,))."""
    data, _ = key_parts("ball", key)
    dtype = float_dtype("ball", dtype)
    shape = canonical_shape("ball", shape)
    keys = split_data(data, (2,))
    g = generalized_normal_data(keys[0], p, shape + (int(d),), dtype)
    e = exponential_data(keys[1], shape, dtype)
    return g / (((fnp.abs(g) ** p).sum(-1) + e) ** (1 / p))[..., None]
