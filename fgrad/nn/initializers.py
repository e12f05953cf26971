"""jax.nn.initializers: factories of `init(key, shape, dtype=None) -> array`, drawing from
fgrad.random (JAX's streams), so an initializer gives jax's values for the same key.

`dtype=None` is float64 (fgrad's default float, JAX's with x64 enabled). Against jax (x64,
the same key): zeros, ones, constant, uniform and the uniform variance-scaling initializers
(glorot/lecun/he_uniform) are bit for bit; the normal and truncated-normal ones and
orthogonal/delta_orthogonal agree to a few ulps of the largest entry (the erf_inv of
fgrad.random's normal sampler, and LAPACK's QR against XLA's; tests/nn/test_nn_jax.py bounds it). Complex dtypes are
accepted where JAX accepts them (variance_scaling's uniform disk and truncated modulus), drawn
from the real samplers exactly as JAX does.
"""
from __future__ import annotations

import math
from typing import Any, Protocol, Sequence, runtime_checkable

import numpy as np

from ..core.errors import FgradValueError
from .. import numpy as jnp
from .. import random


@runtime_checkable
class Initializer(Protocol):
    """What the factories below return: `init(key, shape, dtype=None) -> array`."""

    def __call__(self, key: Any, shape: Sequence[int], dtype: Any = None) -> Any:
        ...


def _dtype(dtype: Any) -> np.dtype:
    return np.dtype(np.float64 if dtype is None else dtype)


def _shape(shape: Any) -> tuple:
    return (int(shape),) if np.ndim(shape) == 0 else tuple(int(d) for d in shape)


def zeros(key: Any, shape: Sequence[int], dtype: Any = None) -> Any:
    """An initializer: an array of zeros (the key is unused)."""
    return jnp.zeros(_shape(shape), _dtype(dtype))


def ones(key: Any, shape: Sequence[int], dtype: Any = None) -> Any:
    """An initializer: an array of ones (the key is unused)."""
    return jnp.ones(_shape(shape), _dtype(dtype))


def constant(value: Any, dtype: Any = None) -> Initializer:
    """An initializer factory: arrays full of `value`."""
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Any:
        return jnp.full(_shape(shape), value, dtype=_dtype(dtype))
    return init


def uniform(scale: Any = 1e-2, dtype: Any = None) -> Initializer:
    """An initializer factory: uniform samples in [0, scale)."""
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Any:
        dtype = _dtype(dtype)
        return random.uniform(key, _shape(shape), dtype) * jnp.asarray(scale, dtype)
    return init


def normal(stddev: Any = 1e-2, dtype: Any = None) -> Initializer:
    """An initializer factory: normal samples of mean 0 and standard deviation `stddev`."""
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Any:
        dtype = _dtype(dtype)
        return random.normal(key, _shape(shape), dtype) * jnp.asarray(stddev, dtype)
    return init


def truncated_normal(stddev: Any = 1e-2, dtype: Any = None, lower: Any = -2.0,
                     upper: Any = 2.0) -> Initializer:
    """An initializer factory: standard normal samples truncated to (lower, upper), times
    `stddev` (no correction for the truncation's smaller variance, as in JAX)."""
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Any:
        dtype = _dtype(dtype)
        return random.truncated_normal(key, lower, upper, _shape(shape), dtype) * jnp.asarray(stddev, dtype)
    return init


def _axis_size(shape: tuple, axis: int | Sequence[int]) -> int:
    return shape[axis] if isinstance(axis, int) else math.prod(shape[i] for i in axis)


def _compute_fans(shape: tuple, in_axis: int | Sequence[int] = -2, out_axis: int | Sequence[int] = -1,
                  batch_axis: int | Sequence[int] = ()) -> tuple[float, float]:
    """(fan_in, fan_out) of a dense or convolution kernel: the in/out axes' sizes, each times
    the receptive field (the product of the axes that are neither in, out nor batch)."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise FgradValueError(f"Can't compute input and output sizes of a {len(shape)}-dimensional weights "
                         f"tensor (shape {shape}) with default in_axis. Must be at least 2D or specify "
                         f"in_axis explicitly.")
    in_size, out_size = _axis_size(shape, in_axis), _axis_size(shape, out_axis)
    receptive_field_size = math.prod(shape) / in_size / out_size / _axis_size(shape, batch_axis)
    return in_size * receptive_field_size, out_size * receptive_field_size


def _complex_dtypes(dtype: np.dtype) -> tuple[np.dtype, np.dtype]:
    real = np.dtype(np.array(0, dtype).real.dtype)
    return real, np.result_type(real, np.complex64)


def _complex_uniform(key: Any, shape: tuple, dtype: np.dtype) -> Any:
    """Uniform on the disk with mean 0 and variance 1 (JAX's draw: modulus, then angle)."""
    key_r, key_theta = random.split(key)
    real, cdtype = _complex_dtypes(dtype)
    r = jnp.sqrt(2 * random.uniform(key_r, shape, real)).astype(cdtype)
    theta = 2 * np.pi * random.uniform(key_theta, shape, real).astype(cdtype)
    return r * jnp.exp(1j * theta)


def _complex_truncated_normal(key: Any, upper: float, shape: tuple, dtype: np.dtype) -> Any:
    """Complex normal of variance 1 before its modulus is truncated to `upper` (JAX's draw)."""
    key_r, key_theta = random.split(key)
    real, cdtype = _complex_dtypes(dtype)
    t = (1 - jnp.exp(jnp.asarray(-(upper ** 2), cdtype))) * random.uniform(key_r, shape, real).astype(cdtype)
    r = jnp.sqrt(-jnp.log(1 - t))
    theta = 2 * np.pi * random.uniform(key_theta, shape, real).astype(cdtype)
    return r * jnp.exp(1j * theta)


_MODES = ("fan_in", "fan_out", "fan_avg", "fan_geo_avg")
_DISTRIBUTIONS = ("truncated_normal", "normal", "uniform")


def variance_scaling(scale: Any, mode: str, distribution: str, in_axis: int | Sequence[int] = -2,
                     out_axis: int | Sequence[int] = -1, batch_axis: int | Sequence[int] = (),
                     dtype: Any = None) -> Initializer:
    """An initializer factory whose samples have variance scale / n, n chosen by `mode`
    (fan_in, fan_out, their mean fan_avg, or geometric mean fan_geo_avg) from
    `_compute_fans`, drawn from a truncated normal (truncated at 2, rescaled to the variance),
    a normal, or a uniform interval (a uniform disk for complex dtypes)."""
    if mode not in _MODES:
        raise FgradValueError(f"invalid mode for variance scaling initializer: {mode!r}; expected one of {_MODES}")
    if distribution not in _DISTRIBUTIONS:
        raise FgradValueError(f"invalid distribution for variance scaling initializer: {distribution!r}; "
                         f"expected one of {_DISTRIBUTIONS}")

    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Any:
        shape, dtype = _shape(shape), _dtype(dtype)
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        denominator = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2,
                       "fan_geo_avg": (fan_in * fan_out) ** 0.5}[mode]
        variance = jnp.asarray(scale / denominator, dtype=dtype)
        floating = np.issubdtype(dtype, np.floating)
        if distribution == "truncated_normal":
            if floating:
                # the standard deviation of a standard normal truncated to (-2, 2)
                stddev = jnp.sqrt(variance) / jnp.asarray(.87962566103423978, dtype)
                return random.truncated_normal(key, -2, 2, shape, dtype) * stddev
            # that of a complex standard normal whose modulus is truncated to 2
            stddev = jnp.sqrt(variance) / jnp.asarray(.95311164380491208, dtype)
            return _complex_truncated_normal(key, 2, shape, dtype) * stddev
        if distribution == "normal":
            return random.normal(key, shape, dtype) * jnp.sqrt(variance)
        if floating:
            return random.uniform(key, shape, dtype, -1) * jnp.sqrt(3 * variance)
        return _complex_uniform(key, shape, dtype) * jnp.sqrt(variance)
    return init


def _variance_scaling_factory(scale: float, mode: str, distribution: str, name: str, doc: str):
    def factory(in_axis: int | Sequence[int] = -2, out_axis: int | Sequence[int] = -1,
                batch_axis: int | Sequence[int] = (), dtype: Any = None) -> Initializer:
        return variance_scaling(scale, mode, distribution, in_axis=in_axis, out_axis=out_axis,
                                batch_axis=batch_axis, dtype=dtype)
    factory.__name__ = factory.__qualname__ = name
    factory.__doc__ = (f"{doc}: variance_scaling(scale={scale}, mode={mode!r}, "
                       f"distribution={distribution!r}).")
    return factory


glorot_uniform = xavier_uniform = _variance_scaling_factory(
    1.0, "fan_avg", "uniform", "glorot_uniform", "Glorot (Xavier) uniform initializer factory")
glorot_normal = xavier_normal = _variance_scaling_factory(
    1.0, "fan_avg", "truncated_normal", "glorot_normal", "Glorot (Xavier) normal initializer factory")
lecun_uniform = _variance_scaling_factory(
    1.0, "fan_in", "uniform", "lecun_uniform", "LeCun uniform initializer factory")
lecun_normal = _variance_scaling_factory(
    1.0, "fan_in", "truncated_normal", "lecun_normal", "LeCun normal initializer factory")
he_uniform = kaiming_uniform = _variance_scaling_factory(
    2.0, "fan_in", "uniform", "he_uniform", "He (Kaiming) uniform initializer factory")
he_normal = kaiming_normal = _variance_scaling_factory(
    2.0, "fan_in", "truncated_normal", "he_normal", "He (Kaiming) normal initializer factory")


def orthogonal(scale: Any = 1.0, column_axis: int = -1, dtype: Any = None) -> Initializer:
    """An initializer factory: a uniformly random orthogonal matrix (semi-orthogonal when not
    square), reshaped so that `column_axis` holds the columns, times `scale`."""
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Any:
        shape, dtype = _shape(shape), _dtype(dtype)
        if len(shape) < 2:
            raise FgradValueError(f"orthogonal initializer requires at least a 2D shape, got {shape}")
        if any(dim == 0 for dim in shape):
            return jnp.zeros(shape, dtype=dtype)
        n_rows, n_cols = math.prod(shape) // shape[column_axis], shape[column_axis]
        q = random.orthogonal(key, n_rows, (), dtype, n_cols)
        q = jnp.reshape(q, tuple(np.delete(shape, column_axis)) + (shape[column_axis],))
        return jnp.asarray(scale, dtype) * jnp.moveaxis(q, -1, column_axis)
    return init


def delta_orthogonal(scale: Any = 1.0, column_axis: int = -1, dtype: Any = None) -> Initializer:
    """An initializer factory for 3D/4D/5D convolution kernels: zeros except an orthogonal
    (in, out) matrix at the spatial centre (https://arxiv.org/abs/1806.05393)."""
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Any:
        shape, dtype = _shape(shape), _dtype(dtype)
        if len(shape) not in (3, 4, 5):
            raise FgradValueError(f"Delta orthogonal initializer requires a 3D, 4D or 5D shape, got {shape}")
        if shape[-1] < shape[-2]:
            raise FgradValueError(f"`fan_in` must be less or equal than `fan_out`: shape {shape} has "
                             f"fan_in {shape[-2]} > fan_out {shape[-1]}")
        ortho_matrix = orthogonal(scale=scale, column_axis=column_axis, dtype=dtype)(key, shape[-2:])
        centre = tuple((k - 1) // 2 for k in shape[:-2])
        return jnp.zeros(shape, dtype=dtype).at[centre].set(ortho_matrix)
    return init
