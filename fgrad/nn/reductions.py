"""jax.nn's functions that reduce along an axis: softmax, log_softmax, logsumexp, logmeanexp,
standardize. Each takes `axis` (an int, a tuple, or None for all axes) and a boolean `where`
mask, as JAX's do.

softmax carries JAX's custom_jvp (`jax_softmax_custom_jvp`, JAX's default): the tangent is
y * (ẋ - Σ y ẋ), which stays finite where the max-shifted formula's own derivative would not
(e.g. with -inf entries), and differentiates again to any order.
"""
from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from ..core.errors import FgradValueError
from .. import numpy as jnp
from ..api import stop_gradient
from ..custom import custom_jvp
from ..ops import nn as ops_nn
from ..scipy import special


def _masked(x: Any, where: Any, fill: float) -> Any:
    return x if where is None else jnp.where(where, x, fill)


@partial(custom_jvp, nondiff_argnums=(1,))
def _softmax(x: Any, axis: Any, where: Any) -> Any:
    x_max = jnp.max(x, axis, where=where, initial=-np.inf, keepdims=True)
    unnormalized = jnp.exp(_masked(x, where, -np.inf) - x_max)
    result = unnormalized / jnp.sum(unnormalized, axis, where=where, keepdims=True)
    return _masked(result, where, 0)


@_softmax.defjvp
def _softmax_jvp(axis: Any, primals: tuple, tangents: tuple) -> tuple:
    (x, where), (x_dot, _) = primals, tangents
    y = _softmax(x, axis, where)
    return y, y * (x_dot - (y * x_dot).sum(axis, where=where, keepdims=True))


def softmax(x: Any, axis: Any = -1, where: Any = None) -> Any:
    """exp(x) / Σ exp(x) along `axis`; entries masked out by `where` are 0 (JAX's softmax, with
    its custom derivative)."""
    return _softmax(jnp.asarray(x), axis, where)


def log_softmax(x: Any, axis: Any = -1, where: Any = None) -> Any:
    """x - logsumexp(x) along `axis`, shifted by the (constant) max for stability; entries
    masked out by `where` are -inf."""
    x = jnp.asarray(x)
    if where is None and isinstance(axis, (int, np.integer)) and x.ndim and np.issubdtype(x.dtype, np.floating):
        # fgrad's log_softmax primitive: JAX's arithmetic and derivative in one node
        return ops_nn.log_softmax(x, int(axis))
    x_max = jnp.max(x, axis, where=where, initial=-np.inf, keepdims=True)
    shifted = _masked(x, where, -np.inf) - stop_gradient(x_max)
    shifted_logsumexp = jnp.log(jnp.sum(jnp.exp(shifted), axis, where=where, keepdims=True))
    return _masked(shifted - shifted_logsumexp, where, -np.inf)


def logsumexp(a: Any, axis: Any = None, b: Any = None, keepdims: bool = False,
              return_sign: bool = False, where: Any = None) -> Any:
    """log Σ b·exp(a) along `axis` (jax.nn.logsumexp is jax.scipy.special.logsumexp); `where`
    leaves masked-out entries out of the sum (an all-masked sum is -inf)."""
    a = jnp.asarray(a)
    if where is not None:
        a = jnp.where(where, a, -np.inf)
    return special.logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=return_sign)


def logmeanexp(x: Any, axis: Any = None, where: Any = None, keepdims: bool = False) -> Any:
    """log of the mean of exp(x) along `axis`: logsumexp(x) - log(count), the count taken over
    the entries `where` keeps."""
    x = jnp.asarray(x)
    lse = logsumexp(x, axis=axis, where=where, keepdims=keepdims)
    ones = jnp.ones(x.shape, dtype=lse.dtype)
    count = jnp.sum(ones, axis, keepdims=keepdims, where=where)
    return lse - jnp.log(count)


def standardize(x: Any, axis: Any = -1, mean: Any = None, variance: Any = None,
                epsilon: Any = 1e-5, where: Any = None, *, algorithm: str = "fast") -> Any:
    """(x - mean) / sqrt(variance + epsilon) along `axis`. Without a given variance,
    algorithm="fast" (JAX's default) takes mean(x²) - mean(x)², clipped at 0, and "stable" takes
    mean((x - mean)²)."""
    x = jnp.asarray(x)
    if mean is None:
        mean = jnp.mean(x, axis, keepdims=True, where=where)
    if variance is None:
        if algorithm == "stable":
            variance = jnp.mean(jnp.square(x - mean), axis, keepdims=True, where=where)
        elif algorithm == "fast":
            # may round below 0 (cancellation), which the rsqrt below must not see
            variance = jnp.clip(jnp.mean(jnp.square(x), axis, keepdims=True, where=where)
                                - jnp.square(mean), 0)
        else:
            raise FgradValueError(f"standardize: unknown algorithm {algorithm!r}; expected 'fast' or 'stable'")
    return (x - mean) * (1 / jnp.sqrt(variance + epsilon))
