"""Discrete samplers and reorderings: randint, bernoulli, rademacher, categorical, choice,
permutation, shuffle, poisson, geometric, binomial (JAX's algorithms and key use)."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import numpy as fnp
from ..core.errors import FgradTypeError, FgradValueError
from ..lax import while_loop
from ..ops.special_gamma import lgamma
from ._common import as_dtype, check_shape, float_dtype, int_dtype, param_shape, shape_of
from ._continuous import gumbel_data, rademacher_data, uniform_data
from ._prng import canonical_shape, key_parts, random_bits, split_data


def _int_param(x: Any):
    arr = x if hasattr(x, "dtype") else fnp.asarray(x)
    return arr if arr.dtype.kind in "iu" else arr.astype(np.int64)


def _clip_to(val, dtype: np.dtype):
    lo = max(np.iinfo(dtype).min, np.iinfo(val.dtype).min)
    hi = min(np.iinfo(dtype).max, np.iinfo(val.dtype).max)
    return fnp.clip(val, np.asarray(lo, val.dtype), np.asarray(hi, val.dtype)).astype(dtype)


def randint(key: Any, shape: Any, minval: Any, maxval: Any, dtype: Any = None) -> Any:
    """Integers uniform in [minval, maxval) (int64 by default), from two streams of bits
    reduced modulo the span (JAX's method, so its slight bias for huge spans too)."""
    data, _ = key_parts("randint", key)
    out_dtype = int_dtype("randint", dtype)
    shape = canonical_shape("randint", shape)
    check_shape("randint", shape, shape_of(minval), shape_of(maxval))
    dtype = out_dtype if out_dtype.itemsize >= 4 else np.dtype(np.int32)
    minval, maxval = _int_param(minval), _int_param(maxval)
    if out_dtype.itemsize < 4:
        info = np.iinfo(out_dtype)
        minval = fnp.clip(minval.astype(np.int32), info.min, info.max)
        maxval = fnp.clip(maxval.astype(np.int32), info.min, info.max + 1)
    maxval_out_of_range = maxval > _clip_to(fnp.asarray(np.iinfo(dtype).max, dtype), maxval.dtype)
    minval, maxval = _clip_to(minval, dtype), _clip_to(maxval, dtype)
    nbits = dtype.itemsize * 8
    keys = split_data(data, (2,))
    higher, lower = random_bits(keys[0], nbits, shape), random_bits(keys[1], nbits, shape)
    udt = higher.dtype
    span = (maxval - minval).astype(udt)
    span = fnp.where(maxval <= minval, np.asarray(1, udt), span)
    span = fnp.where(maxval_out_of_range & (maxval > minval), span + np.asarray(1, udt), span)
    multiplier = fnp.remainder(np.asarray(2 ** (nbits // 2), udt), span)
    multiplier = fnp.remainder(multiplier * multiplier, span)
    offset = fnp.remainder(higher, span) * multiplier + fnp.remainder(lower, span)
    offset = fnp.remainder(offset, span)
    return (minval + offset.astype(dtype)).astype(out_dtype)


def _p_dtype(name: str, p: Any) -> np.dtype:
    dt = p.dtype if hasattr(p, "dtype") else (np.dtype(np.float64) if isinstance(p, float) else fnp.asarray(p).dtype)
    if dt.kind != "f":
        raise FgradTypeError(f"{name} probability `p` must have a floating dtype, got {dt}")
    return float_dtype(name, dt)


def bernoulli(key: Any, p: Any = 0.5, shape: Any = None, mode: str = "low") -> Any:
    """Booleans that are True with probability p (mode "high": more resolution for tiny p)."""
    if mode not in ("high", "low"):
        raise FgradValueError(f"bernoulli: got mode={mode!r}, expected 'high' or 'low'")
    data, _ = key_parts("bernoulli", key)
    dtype = _p_dtype("bernoulli", p)
    shape = param_shape("bernoulli", shape, p)
    p = as_dtype(p, dtype)
    if mode == "high":
        both = uniform_data(data, (2,) + shape, dtype)
        u1, u2 = both[0], both[1] * np.asarray(2.0 ** -np.finfo(dtype).nmant, dtype)
        return u2 < p - u1
    return uniform_data(data, shape, dtype) < p


def rademacher(key: Any, shape: Any = (), dtype: Any = None) -> Any:
    """-1 or +1 with equal probability (int64 by default)."""
    data, _ = key_parts("rademacher", key)
    dtype = np.dtype(np.int64 if dtype is None else dtype)
    return rademacher_data(data, canonical_shape("rademacher", shape), dtype)


def categorical(key: Any, logits: Any, axis: int = -1, shape: Any = None, replace: bool = True,
                mode: str | None = None) -> Any:
    """Indices drawn from the categorical distribution of `logits` along `axis` (Gumbel-max;
    without replacement, the top-k of perturbed logits)."""
    data, _ = key_parts("categorical", key)
    logits = fnp.asarray(logits) if not hasattr(logits, "dtype") else logits
    nd = logits.ndim
    if not -nd <= axis < nd:
        raise FgradValueError(f"categorical: axis {axis} is out of bounds for logits of shape {tuple(logits.shape)}")
    batch_shape = tuple(np.delete(np.array(logits.shape, dtype=np.int64), axis).tolist())
    shape = batch_shape if shape is None else canonical_shape("categorical", shape)
    check_shape("categorical", shape, batch_shape)
    prefix = shape[:len(shape) - len(batch_shape)]
    dtype = float_dtype("categorical", logits.dtype if logits.dtype.kind == "f" else None)
    mode = "low" if mode is None else mode
    if replace:
        ax = axis - nd if axis >= 0 else axis
        lshape = list(shape[len(shape) - len(batch_shape):])
        lshape.insert(ax % nd, logits.shape[ax])
        g = gumbel_data(data, (*prefix, *lshape), dtype, mode)
        return fnp.argmax(g + fnp.reshape(logits, (1,) * len(prefix) + tuple(logits.shape)), axis=ax)
    k = math.prod(prefix)
    if k > logits.shape[axis]:
        raise FgradValueError(f"Number of samples without replacement ({k}) cannot exceed number of "
                              f"categories ({logits.shape[axis]}).")
    perturbed = fnp.moveaxis(logits + gumbel_data(data, tuple(logits.shape), dtype, mode), axis, -1)
    idx = fnp.argsort(-perturbed, axis=-1, stable=True)[..., :k]
    return fnp.reshape(fnp.moveaxis(idx, -1, 0), shape)


def _shuffle(data, x, axis: int):
    size = math.prod(x.shape)
    rounds = int(np.ceil(3 * np.log(max(1, size)) / np.log(np.iinfo(np.uint32).max)))
    for _ in range(rounds):
        two = split_data(data, (2,))
        data, sub = two[0], two[1]
        sort_keys = random_bits(sub, 32, tuple(x.shape))
        order = fnp.argsort(sort_keys, axis=axis, stable=True)
        x = fnp.take_along_axis(x, order, axis=axis)
    return x


def permutation(key: Any, x: Any, axis: int = 0, independent: bool = False) -> Any:
    """A random permutation of range(x) (an int) or of x along `axis` (independent: each
    slice along the other axes permuted on its own)."""
    data, _ = key_parts("permutation", key)
    if isinstance(x, (int, np.integer)) or (hasattr(x, "ndim") and x.ndim == 0):
        if not np.issubdtype(np.asarray(x).dtype, np.integer):
            raise FgradTypeError("permutation: x must be an integer or at least 1-dimensional")
        return _shuffle(data, fnp.arange(int(x)), 0)
    x = x if hasattr(x, "ndim") else fnp.asarray(x)
    if not -x.ndim <= axis < x.ndim:
        raise FgradValueError(f"permutation: axis {axis} is out of bounds for x of shape {tuple(x.shape)}")
    axis %= x.ndim
    if independent or x.ndim == 1:
        return _shuffle(data, x, axis)
    ind = _shuffle(data, fnp.arange(x.shape[axis]), 0)
    return fnp.take(x, ind, axis=axis)


def shuffle(key: Any, x: Any, axis: int = 0) -> Any:
    """x shuffled along `axis`, each slice on its own (JAX's deprecated shuffle, which is
    permutation(key, x, axis, independent=True))."""
    data, _ = key_parts("shuffle", key)
    x = x if hasattr(x, "ndim") else fnp.asarray(x)
    return _shuffle(data, x, axis % max(x.ndim, 1))


def choice(key: Any, a: Any, shape: Any = (), replace: bool = True, p: Any = None, axis: int = 0,
           mode: str | None = None) -> Any:
    """Samples from a (an int n means range(n)) along `axis`, with or without replacement,
    uniform or with probabilities p."""
    data, typed = key_parts("choice", key)
    if not isinstance(shape, (tuple, list)):
        raise FgradTypeError(f"choice: shape must be a sequence, got {shape!r}")
    shape = canonical_shape("choice", shape)
    arr = a if hasattr(a, "ndim") else fnp.asarray(a)
    if arr.ndim == 0:
        n_inputs = int(a)
    else:
        axis %= arr.ndim
        n_inputs = arr.shape[axis]
    n_draws = math.prod(shape)
    if n_draws == 0:
        return fnp.zeros(shape, arr.dtype)
    if n_inputs <= 0:
        raise FgradValueError("choice: a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise FgradValueError(f"Cannot take a larger sample (size {n_draws}) than population "
                              f"(size {n_inputs}) when 'replace=False'")
    if p is None:
        if replace:
            ind = randint(data, shape, 0, n_inputs)
            result = ind if arr.ndim == 0 else fnp.take(arr, ind, axis=axis)
        else:
            perm = permutation(data, n_inputs if arr.ndim == 0 else arr, axis)
            result = fnp.take(perm, fnp.arange(n_draws), axis=0 if arr.ndim == 0 else axis)
    else:
        p_arr = p if hasattr(p, "dtype") else fnp.asarray(p)
        if p_arr.dtype.kind != "f":
            p_arr = p_arr.astype(np.float64)
        if tuple(p_arr.shape) != (n_inputs,):
            raise FgradValueError(f"p must be None or a 1D vector with the same size as a.shape[axis]. "
                                  f"p has shape {tuple(p_arr.shape)} and a.shape[axis] is {n_inputs}.")
        if replace:
            cum = fnp.cumsum(p_arr)
            r = cum[-1] * (1 - uniform_data(data, shape, p_arr.dtype))
            ind = fnp.searchsorted(cum, r).astype(np.int64)
        else:
            g = gumbel_data(data, (n_inputs,), p_arr.dtype, mode or "low") + fnp.log(p_arr)
            ind = fnp.argsort(-g, stable=True)[:n_draws].astype(np.int64)
        result = ind if arr.ndim == 0 else fnp.take(arr, ind, axis=axis)
    out_shape = shape if arr.ndim == 0 else tuple(arr.shape[:axis]) + shape + tuple(arr.shape[axis + 1:])
    return fnp.reshape(result, out_shape)


def _poisson_knuth(data, lam, shape, dtype, max_iters):
    def body(c):
        i, k, rng, log_prod = c
        two = split_data(rng, (2,))
        k = fnp.where(log_prod > -lam, k + 1, k)
        u = uniform_data(two[1], shape, np.dtype(np.float32))
        return (i + 1, k, two[0], log_prod + fnp.log(u))

    def cond(c):
        return fnp.any(c[3] > -lam) & (c[0] < max_iters)
    init = (fnp.asarray(0), fnp.zeros(shape, dtype), data, fnp.zeros(shape, np.float32))
    return (while_loop(cond, body, init)[1] - 1).astype(dtype)


def _poisson_rejection(data, lam, shape, dtype, max_iters):
    f32 = lambda v: np.asarray(v, np.float32)  # noqa: E731
    log_lam = fnp.log(lam)
    b = f32(0.931) + f32(2.53) * fnp.sqrt(lam)
    a = f32(-0.059) + f32(0.02483) * b
    inv_alpha = f32(1.1239) + f32(1.1328) / (b - f32(3.4))
    v_r = f32(0.9277) - f32(3.6224) / (b - f32(2))

    def body(c):
        i, k_out, accepted, key = c
        three = split_data(key, (3,))
        u = uniform_data(three[1], shape, lam.dtype) - f32(0.5)
        v = uniform_data(three[2], shape, lam.dtype)
        us = f32(0.5) - fnp.abs(u)
        k = fnp.floor((f32(2) * a / us + b) * u + lam + f32(0.43))
        s = fnp.log(v * inv_alpha / (a / (us * us) + b))
        t = -lam + k * log_lam - lgamma(k + f32(1))
        accept1 = (us >= f32(0.07)) & (v <= v_r)
        reject = (k < 0) | ((us < f32(0.013)) & (v > us))
        accept = accept1 | (~reject & (s <= t))
        return (i + 1, fnp.where(accept, k, k_out), accepted | accept, three[0])

    def cond(c):
        return fnp.any(~c[2]) & (c[0] < max_iters)
    init = (fnp.asarray(0), fnp.full(shape, -1, np.float32), fnp.zeros(shape, bool), data)
    return while_loop(cond, body, init)[1].astype(dtype)


def poisson(key: Any, lam: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Poisson(lam) samples (int64 by default): Knuth's method for lam < 10, Hormann's
    transformed rejection otherwise, both in float32 as in JAX."""
    data, _ = key_parts("poisson", key)
    dtype = int_dtype("poisson", dtype)
    shape = canonical_shape("poisson", shape) if shape is not None else shape_of(lam)
    lam = fnp.broadcast_to(as_dtype(lam, np.dtype(np.float32)), shape)
    use_knuth = (lam != lam) | (lam < 10)
    lam_knuth = fnp.where(use_knuth, lam, np.float32(0))
    lam_rej = fnp.where(use_knuth, np.float32(1e5), lam)
    max_iters = np.iinfo(dtype).max
    result = fnp.where(use_knuth, _poisson_knuth(data, lam_knuth, shape, dtype, max_iters),
                       _poisson_rejection(data, lam_rej, shape, dtype, max_iters))
    return fnp.where(lam == 0, np.asarray(0, dtype), result)


def geometric(key: Any, p: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Geometric(p) samples on {1, 2, ...} (int64 by default): floor(log u / log1p(-p)) + 1."""
    data, _ = key_parts("geometric", key)
    dtype = int_dtype("geometric", dtype)
    shape = param_shape("geometric", shape, p)
    p = p if hasattr(p, "dtype") and p.dtype.kind == "f" else as_dtype(p, np.dtype(np.float64))
    u = uniform_data(data, shape, p.dtype)
    u = fnp.where(u == 0, np.asarray(1, p.dtype), u)
    g = fnp.floor(fnp.log(u) / fnp.broadcast_to(fnp.log1p(-p), shape)) + 1
    return g.astype(dtype)
