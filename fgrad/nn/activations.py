"""jax.nn's elementwise activations, on fgrad.numpy, fgrad.scipy.special and fgrad's relu
primitive.

Each is JAX's formula, so values, derivatives of every order, jit and vmap follow from the
functions underneath. JAX's derivative conventions at kinks are kept: relu'(0) = 0 (fgrad's
relu primitive), relu6'(0) = relu6'(6) = 0 and log1mexp' = 1/expm1 (custom_jvp, as JAX's),
where plain `maximum` would give 0.5 at a tie; the rest take at a kink what JAX's
`where`/`clip` composition takes (e.g. elu'(0) = alpha, leaky_relu'(0) = 1, hard_tanh'(±1) = 1).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import FgradValueError
from .. import numpy as jnp
from ..custom import custom_jvp
from ..ops import nn as ops_nn
from ..scipy import special


def _inexact(x: Any) -> Any:
    """`x` as an array of a floating dtype (integers and bools promote to float64, fgrad's
    default float, as in JAX with x64)."""
    x = jnp.asarray(x)
    return x if np.issubdtype(x.dtype, np.inexact) else x.astype(np.float64)


def identity(x: Any) -> Any:
    """Identity activation: `x` unchanged (as an array)."""
    return jnp.asarray(x)


def relu(x: Any) -> Any:
    """Rectified linear unit, max(x, 0), with JAX's derivative convention relu'(0) = 0 (fgrad's
    relu primitive, which the PyTorch door shares: both ecosystems take 0 there, and both zero
    a NaN cotangent at an inactive unit)."""
    return ops_nn.relu(jnp.asarray(x))


@custom_jvp
def relu6(x: Any) -> Any:
    """min(max(x, 0), 6), with JAX's derivative convention relu6'(0) = relu6'(6) = 0."""
    return jnp.minimum(jnp.maximum(x, 0), 6.)


relu6.defjvps(lambda g, ans, x: jnp.where((x > 0) & (x < 6), g, jnp.zeros_like(g)))


def squareplus(x: Any, b: Any = 4) -> Any:
    """Squareplus, (x + sqrt(x² + b)) / 2 (https://arxiv.org/abs/2112.11687)."""
    x = _inexact(x)
    return (x + jnp.sqrt(jnp.square(x) + b)) / 2


def softplus(x: Any) -> Any:
    """Softplus, log(1 + exp(x)), as logaddexp(x, 0)."""
    return jnp.logaddexp(x, 0)


def sparse_plus(x: Any) -> Any:
    """Sparse plus: 0 for x <= -1, (x + 1)² / 4 on (-1, 1), x for x >= 1."""
    x = _inexact(x)
    return jnp.where(x <= -1.0, 0.0, jnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


def soft_sign(x: Any) -> Any:
    """Soft sign, x / (|x| + 1)."""
    x = _inexact(x)
    return x / (jnp.abs(x) + 1)


def sigmoid(x: Any) -> Any:
    """Logistic sigmoid, 1 / (1 + exp(-x))."""
    return special.expit(_inexact(x))


def sparse_sigmoid(x: Any) -> Any:
    """Sparse sigmoid, clip((x + 1) / 2, 0, 1): the derivative of `sparse_plus`."""
    return 0.5 * jnp.clip(_inexact(x) + 1.0, 0.0, 2.0)


def silu(x: Any) -> Any:
    """SiLU (swish), x * sigmoid(x)."""
    x = _inexact(x)
    return x * sigmoid(x)


swish = silu


def mish(x: Any) -> Any:
    """Mish, x * tanh(softplus(x)) (https://arxiv.org/abs/1908.08681)."""
    x = _inexact(x)
    return x * jnp.tanh(softplus(x))


def log_sigmoid(x: Any) -> Any:
    """log(sigmoid(x)), as -softplus(-x)."""
    return -softplus(-_inexact(x))


def elu(x: Any, alpha: Any = 1.0) -> Any:
    """Exponential linear unit: x for x > 0, alpha * (exp(x) - 1) otherwise."""
    x = _inexact(x)
    # the inner where keeps expm1 of large positive x (inf) out of the unused branch's derivative
    return jnp.where(x > 0, x, alpha * jnp.expm1(jnp.where(x > 0, 0., x)))


def leaky_relu(x: Any, negative_slope: Any = 1e-2) -> Any:
    """Leaky ReLU: x for x >= 0, negative_slope * x otherwise."""
    x = _inexact(x)
    return jnp.where(x >= 0, x, negative_slope * x)


def hard_tanh(x: Any) -> Any:
    """Hard tanh: x clipped to [-1, 1] (derivative 1 at ±1, as JAX's); integers stay integers."""
    x = jnp.asarray(x)
    return jnp.where(x > 1, 1, jnp.where(x < -1, -1, x))


def celu(x: Any, alpha: Any = 1.0) -> Any:
    """Continuously differentiable ELU: max(x, 0) + alpha * expm1(min(x, 0) / alpha)."""
    x = _inexact(x)
    return jnp.maximum(x, 0.0) + alpha * jnp.expm1(jnp.minimum(x, 0.0) / alpha)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(x: Any) -> Any:
    """Scaled ELU (https://arxiv.org/abs/1706.02515): scale * elu(x, alpha), JAX's constants."""
    return _SELU_SCALE * elu(x, _SELU_ALPHA)


def gelu(x: Any, approximate: bool = True) -> Any:
    """Gaussian error linear unit: x/2 * erfc(-x/√2), or its tanh approximation (the default,
    as in JAX)."""
    x = _inexact(x)
    if approximate:
        sqrt_2_over_pi = np.sqrt(2 / np.pi).astype(x.dtype)
        cdf = 0.5 * (1.0 + jnp.tanh(sqrt_2_over_pi * (x + 0.044715 * (x ** 3))))
        return x * cdf
    sqrt_half = np.sqrt(0.5).astype(x.dtype)
    return (0.5 * x * special.erfc(-x * sqrt_half)).astype(x.dtype)


def glu(x: Any, axis: int = -1) -> Any:
    """Gated linear unit: the first half of `x` along `axis` times sigmoid of the second half."""
    x = jnp.asarray(x)
    size = x.shape[axis]
    if size % 2:
        raise FgradValueError(f"glu: the size of axis {axis} of x (shape {x.shape}) is {size}; it must be "
                         f"even, since x is split in two halves along it")
    x1, x2 = jnp.split(x, 2, axis)
    return x1 * sigmoid(x2)


def hard_sigmoid(x: Any) -> Any:
    """Hard sigmoid, relu6(x + 3) / 6."""
    return relu6(_inexact(x) + 3.) / 6.


def hard_silu(x: Any) -> Any:
    """Hard SiLU (hard swish), x * hard_sigmoid(x)."""
    x = _inexact(x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def tanh(x: Any) -> Any:
    """Hyperbolic tangent (jax.nn re-exports jax.numpy.tanh)."""
    return jnp.tanh(x)


@custom_jvp
def log1mexp(x: Any) -> Any:
    """log(1 - exp(-x)) for x >= 0, by Mächler's two branches (log(-expm1(-x)) below log 2,
    log1p(-exp(-x)) above), with JAX's derivative 1 / expm1(x)."""
    x = _inexact(x)
    c = jnp.log(2.0)
    return jnp.where(x < c, jnp.log(-jnp.expm1(-x)), jnp.log1p(-jnp.exp(-x)))


log1mexp.defjvps(lambda g, ans, x: g / jnp.expm1(x))
