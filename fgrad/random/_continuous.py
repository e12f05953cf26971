"""Continuous samplers built on uniform bits (JAX's algorithms, step for step, so that the
streams agree): uniform, normal, truncated_normal, exponential, laplace, logistic, gumbel,
cauchy, pareto, rayleigh, wald, weibull_min, triangular, lognormal, maxwell,
double_sided_maxwell, multivariate_normal, orthogonal.

Bit equality: uniform's values are exact (bits to mantissa, then one multiply-add). The
others apply transcendental functions (log, log1p, erf_inv, tan, sqrt of products, ...),
which XLA evaluates with its own approximations on CPU and fgrad with NumPy/SciPy: they agree
to a few ulps (tests/random/test_samplers.py states the measured tolerance), not always bit for bit.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import numpy as fnp
from ..core.errors import FgradValueError
from ..ops.special_erf import erfinv as _erfinv
from ..ops.elementwise import erf as _erf
from ..ops.elementwise import stop_gradient
from ._common import as_dtype, check_shape, float_dtype, nextafter, param_shape, shape_of
from ._prng import canonical_shape, key_parts, random_bits, split_data


def _nmant(dtype: np.dtype) -> int:
    return np.finfo(dtype).nmant


def uniform_data(data, shape: tuple, dtype: np.dtype, minval: Any = 0.0, maxval: Any = 1.0):
    """Uniform floats in [minval, maxval) of batch shape B + shape from keys of batch shape B."""
    nbits, nmant = np.dtype(dtype).itemsize * 8, _nmant(dtype)
    bits = random_bits(data, nbits, shape)
    udt = bits.dtype
    # JAX ors the top nmant bits into 1.0's exponent and subtracts 1: the same value is the
    # mantissa integer times 2**-nmant, exactly
    mant = fnp.floor_divide(bits, np.asarray(1 << (nbits - nmant), udt))
    floats = fnp.multiply(mant.astype(dtype), np.asarray(2.0 ** -nmant, dtype))
    lo, hi = as_dtype(minval, dtype), as_dtype(maxval, dtype)
    return fnp.maximum(lo, fnp.add(fnp.multiply(floats, fnp.subtract(hi, lo)), lo))


def uniform(key: Any, shape: Any = (), dtype: Any = None, minval: Any = 0.0, maxval: Any = 1.0) -> Any:
    """Uniform samples in [minval, maxval) of `shape` and `dtype` (float64 by default)."""
    data, _ = key_parts("uniform", key)
    dtype = float_dtype("uniform", dtype)
    shape = canonical_shape("uniform", shape)
    check_shape("uniform", shape, shape_of(minval), shape_of(maxval))
    return uniform_data(data, shape, dtype, minval, maxval)


def normal_data(data, shape: tuple, dtype: np.dtype):
    lo = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype))
    u = uniform_data(data, shape, dtype, lo, np.array(1.0, dtype))
    return fnp.multiply(np.asarray(np.sqrt(2), dtype), _erfinv(u))


def normal(key: Any, shape: Any = (), dtype: Any = None) -> Any:
    """Standard normal samples: sqrt(2) * erf_inv(u) for u uniform in (-1, 1) (JAX's
    inverse-CDF method; complex dtypes are not supported)."""
    data, _ = key_parts("normal", key)
    return normal_data(data, canonical_shape("normal", shape), float_dtype("normal", dtype))


def truncated_normal(key: Any, lower: Any, upper: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Standard normal samples truncated to (lower, upper)."""
    data, _ = key_parts("truncated_normal", key)
    dtype = float_dtype("truncated_normal", dtype)
    shape = param_shape("truncated_normal", shape, lower, upper)
    sqrt2 = np.asarray(np.sqrt(2), dtype)
    lower, upper = as_dtype(lower, dtype), as_dtype(upper, dtype)
    a = _erf(fnp.divide(lower, sqrt2))
    b = _erf(fnp.divide(upper, sqrt2))
    u = uniform_data(data, shape, dtype, a, b)
    out = fnp.multiply(sqrt2, _erfinv(u))
    lo = nextafter(stop_gradient(lower), True)
    hi = nextafter(stop_gradient(upper), False)
    return fnp.clip(out, lo, hi)


def exponential_data(data, shape: tuple, dtype: np.dtype):
    return fnp.negative(fnp.log1p(fnp.negative(uniform_data(data, shape, dtype))))


def _simple(name: str, fn):
    def sampler(key: Any, shape: Any = (), dtype: Any = None) -> Any:
        data, _ = key_parts(name, key)
        return fn(data, canonical_shape(name, shape), float_dtype(name, dtype))
    sampler.__name__ = sampler.__qualname__ = name
    return sampler


def _laplace(data, shape, dtype):
    u = uniform_data(data, shape, dtype, -1.0 + np.finfo(dtype).epsneg, 1.0)
    return fnp.multiply(fnp.sign(u), fnp.log1p(fnp.negative(fnp.abs(u))))


def _logistic(data, shape, dtype):
    x = uniform_data(data, shape, dtype, np.finfo(dtype).tiny, 1.0)
    return fnp.subtract(fnp.log(x), fnp.log1p(fnp.negative(x)))


def _cauchy(data, shape, dtype):
    u = uniform_data(data, shape, dtype, np.finfo(dtype).eps, 1.0)
    return fnp.tan(fnp.multiply(np.asarray(np.pi, dtype), fnp.subtract(u, np.asarray(0.5, dtype))))


def gumbel_data(data, shape: tuple, dtype: np.dtype, mode: str):
    info = np.finfo(dtype)
    if mode == "low":
        u = uniform_data(data, shape, dtype, info.tiny, 1.0)
        return fnp.negative(fnp.log(fnp.negative(fnp.log(u))))
    both = uniform_data(data, (2,) + shape, dtype, 0.0, 1.0)
    high, low = both[0], both[1]
    x = fnp.where(high >= 0.5, high, high + 2.0 ** -info.nmant * low + info.tiny)
    return fnp.negative(fnp.log(fnp.negative(fnp.log1p(fnp.negative(x)))))


def gumbel(key: Any, shape: Any = (), dtype: Any = None, mode: str | None = None) -> Any:
    """Standard Gumbel samples; mode "low" (default) or "high" (more resolution near 0;
    "highest" is "high" here: JAX's float32 "highest" path needs bit counting fgrad lacks)."""
    data, _ = key_parts("gumbel", key)
    mode = "low" if mode is None else mode
    if mode not in ("highest", "high", "low"):
        raise FgradValueError(f"gumbel: mode must be 'low', 'high' or 'highest', got {mode!r}")
    return gumbel_data(data, canonical_shape("gumbel", shape), float_dtype("gumbel", dtype), mode)


laplace = _simple("laplace", _laplace)
laplace.__doc__ = "Standard Laplace samples."
logistic = _simple("logistic", _logistic)
logistic.__doc__ = "Standard logistic samples."
cauchy = _simple("cauchy", _cauchy)
cauchy.__doc__ = "Standard Cauchy samples."
exponential = _simple("exponential", exponential_data)
exponential.__doc__ = "Standard exponential samples: -log1p(-u)."


def pareto(key: Any, b: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Pareto samples with shape parameter b: exp(e / b), e standard exponential."""
    data, _ = key_parts("pareto", key)
    dtype = float_dtype("pareto", dtype)
    shape = param_shape("pareto", shape, b)
    return fnp.exp(fnp.divide(exponential_data(data, shape, dtype), as_dtype(b, dtype)))


def rayleigh(key: Any, scale: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Rayleigh samples: scale * sqrt(-2 log u)."""
    data, _ = key_parts("rayleigh", key)
    dtype = float_dtype("rayleigh", dtype)
    shape = param_shape("rayleigh", shape, scale)
    u = uniform_data(data, shape, dtype)
    scale = fnp.broadcast_to(as_dtype(scale, dtype), shape)
    return fnp.multiply(scale, fnp.sqrt(fnp.multiply(fnp.log(u), np.asarray(-2, dtype))))


def wald(key: Any, mean: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Wald (inverse Gaussian) samples with the given mean and unit scale."""
    data, _ = key_parts("wald", key)
    dtype = float_dtype("wald", dtype)
    shape = param_shape("wald", shape, mean)
    keys = split_data(data, (2,))
    mean = fnp.broadcast_to(as_dtype(mean, dtype), shape)
    v = normal_data(keys[0], shape, dtype)
    z = uniform_data(keys[1], shape, dtype)
    y = v * v
    y_sq = y * y
    mean_sq = mean * mean
    sqrt_term = fnp.sqrt(4 * mean * y + mean_sq * y_sq)
    x = mean + mean_sq * y / 2 - mean / 2 * sqrt_term
    return fnp.where(z <= mean / (mean + x), x, mean_sq / x)


def weibull_min(key: Any, scale: Any, concentration: Any, shape: Any = (), dtype: Any = None) -> Any:
    """Weibull samples: (-log1p(-u)) ** (1 / concentration) * scale."""
    data, _ = key_parts("weibull_min", key)
    dtype = float_dtype("weibull_min", dtype)
    u = uniform_data(data, canonical_shape("weibull_min", shape), dtype)
    return fnp.power(fnp.negative(fnp.log1p(fnp.negative(u))), 1.0 / as_dtype(concentration, dtype)) \
        * as_dtype(scale, dtype)


def triangular(key: Any, left: Any, mode: Any, right: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Triangular samples on [left, right] with the given mode."""
    data, _ = key_parts("triangular", key)
    dtype = float_dtype("triangular", dtype)
    shape = param_shape("triangular", shape, left, mode, right)
    left, right, mode = (fnp.broadcast_to(as_dtype(v, dtype), shape) for v in (left, right, mode))
    fc = (mode - left) / (right - left)
    u = uniform_data(data, shape, dtype)
    out1 = left + fnp.sqrt(u * (right - left) * (mode - left))
    out2 = right - fnp.sqrt((1 - u) * (right - left) * (right - mode))
    return fnp.where(u < fc, out1, out2)


def lognormal(key: Any, sigma: Any = np.float32(1), shape: Any = None, dtype: Any = None) -> Any:
    """Log-normal samples: exp(sigma * normal)."""
    data, _ = key_parts("lognormal", key)
    dtype = float_dtype("lognormal", dtype)
    shape = param_shape("lognormal", shape, sigma)
    return fnp.exp(normal_data(data, shape, dtype) * as_dtype(sigma, dtype))


def rademacher_data(data, shape: tuple, dtype: np.dtype):
    b = (uniform_data(data, shape, np.dtype(np.float64)) < 0.5).astype(dtype)
    return (2 * b - 1).astype(dtype)


def maxwell_data(data, shape: tuple, dtype: np.dtype):
    return fnp.linalg.norm(normal_data(data, shape + (3,), dtype), axis=-1)


def maxwell(key: Any, shape: Any = (), dtype: Any = None) -> Any:
    """Maxwell samples: the norm of 3 standard normals."""
    data, _ = key_parts("maxwell", key)
    return maxwell_data(data, canonical_shape("maxwell", shape), float_dtype("maxwell", dtype))


def double_sided_maxwell(key: Any, loc: Any, scale: Any, shape: Any = (), dtype: Any = None) -> Any:
    """Double-sided Maxwell samples: a random sign times a Maxwell sample, scaled and shifted
    (the result's shape is shape + the parameters' broadcast shape, as in JAX)."""
    data, _ = key_parts("double_sided_maxwell", key)
    dtype = float_dtype("double_sided_maxwell", dtype)
    params = np.broadcast_shapes(shape_of(loc), shape_of(scale))
    shape = canonical_shape("double_sided_maxwell", shape) or params
    shape = shape + params
    keys = split_data(data, (2,))
    m = maxwell_data(keys[0], shape, dtype)
    sign = rademacher_data(keys[1], shape, dtype)
    return sign * m * as_dtype(scale, dtype) + as_dtype(loc, dtype)


def multivariate_normal(key: Any, mean: Any, cov: Any, shape: Any = None, dtype: Any = None,
                        method: str = "cholesky") -> Any:
    """Multivariate normal samples mean + factor @ z, factor from cov by "cholesky" (default),
    "eigh" or "svd"."""
    data, _ = key_parts("multivariate_normal", key)
    if method not in ("svd", "eigh", "cholesky"):
        raise FgradValueError(f"multivariate_normal: method must be 'svd', 'eigh' or 'cholesky', got {method!r}")
    mean, cov = fnp.asarray(mean), fnp.asarray(cov)
    if mean.dtype.kind != "f" or cov.dtype.kind != "f":
        common = np.result_type(mean.dtype, cov.dtype, np.float64 if mean.dtype.kind in "biu" else mean.dtype)
        mean, cov = mean.astype(common), cov.astype(common)
    dtype = float_dtype("multivariate_normal", mean.dtype if dtype is None else dtype)
    if mean.ndim < 1:
        raise FgradValueError(f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == {mean.ndim}")
    if cov.ndim < 2:
        raise FgradValueError(f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == {cov.ndim}")
    n = mean.shape[-1]
    if tuple(cov.shape[-2:]) != (n, n):
        raise FgradValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, "
                              f"but got cov.shape == {tuple(cov.shape)}")
    if shape is None:
        shape = np.broadcast_shapes(tuple(mean.shape[:-1]), tuple(cov.shape[:-2]))
    else:
        shape = canonical_shape("multivariate_normal", shape)
        check_shape("multivariate_normal", shape, tuple(mean.shape[:-1]), tuple(cov.shape[:-2]))
    if method == "svd":
        u, s, _ = fnp.linalg.svd(cov)
        factor = u * fnp.sqrt(s[..., None, :])
    elif method == "eigh":
        w, v = fnp.linalg.eigh(cov)
        factor = v * fnp.sqrt(w[..., None, :])
    else:
        factor = fnp.linalg.cholesky(cov)
    z = normal_data(data, tuple(shape) + (n,), dtype)
    return mean + fnp.einsum("...ij,...j->...i", factor, z)


def orthogonal(key: Any, n: int, shape: Any = (), dtype: Any = None, m: int | None = None) -> Any:
    """Haar-random orthogonal (n x n) or semi-orthogonal (n x m) matrices: Q of the QR of a
    normal matrix with the signs of R's diagonal."""
    data, _ = key_parts("orthogonal", key)
    dtype = float_dtype("orthogonal", dtype)
    shape = canonical_shape("orthogonal", shape)
    n, m = int(n), int(n if m is None else m)
    z = normal_data(data, shape + (max(n, m), min(n, m)), dtype)
    q, r = fnp.linalg.qr(z)
    d = fnp.diagonal(r, axis1=-2, axis2=-1)
    x = q * fnp.expand_dims(fnp.sign(d), -2)
    return fnp.swapaxes(x, -1, -2) if n < m else x
