"""Key construction and manipulation: key, PRNGKey, key_data, wrap_key_data, split,
fold_in, bits, clone, key_impl."""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import numpy as fnp
from ..core.errors import FgradTypeError, FgradValueError
from ..core.trace import Tracer
from ._prng import KeyArray, canonical_shape, fold_in_data, key_parts, random_bits, rewrap, seed_data, split_data

_IMPL = "threefry2x32"


def _check_impl(name: str, impl: Any, dtype: Any = None) -> None:
    if impl is not None and dtype is not None:
        raise FgradValueError(f"Cannot specify both `impl` and `dtype` arguments to fgrad.random.{name}")
    spec = impl if impl is not None else dtype
    if spec not in (None, _IMPL, "key<fry>"):
        raise FgradValueError(f"fgrad.random.{name}: unrecognized PRNG implementation {spec!r}; "
                              f"fgrad implements only {_IMPL!r} (JAX's default)")


def key(seed: Any, *, impl: Any = None, dtype: Any = None) -> KeyArray:
    """A typed PRNG key (JAX's `jax.random.key`) from an integer seed (the seed's 64 bits
    are the key's two uint32 words, high first)."""
    _check_impl("key", impl, dtype)
    if isinstance(seed, KeyArray):
        raise FgradTypeError("key accepts a scalar seed, but was given a PRNG key")
    return KeyArray(seed_data(seed))


def PRNGKey(seed: Any, *, impl: Any = None) -> Any:
    """A raw PRNG key: a uint32 array of shape (2,) (JAX's `jax.random.PRNGKey`)."""
    _check_impl("PRNGKey", impl)
    if isinstance(seed, KeyArray):
        raise FgradTypeError("PRNGKey accepts a scalar seed, but was given a PRNG key")
    return seed_data(seed)


def key_data(keys: Any) -> Any:
    """The uint32 data under a typed key array (shape keys.shape + (2,)); a raw key is
    returned as it is."""
    data, _ = key_parts("key_data", keys, allow_batched=True)
    return data


def wrap_key_data(key_bits_array: Any, *, impl: Any = None, dtype: Any = None) -> KeyArray:
    """A typed key array over uint32 data of shape (..., 2) (the inverse of key_data)."""
    _check_impl("wrap_key_data", impl, dtype)
    if isinstance(key_bits_array, KeyArray):
        raise FgradTypeError("wrap_key_data: the argument is already a typed key array; pass "
                             "key_data(keys) to rewrap it")
    data, _ = key_parts("wrap_key_data", key_bits_array, allow_batched=True)
    return KeyArray(data)


def key_impl(keys: Any) -> str:
    """The name of the keys' PRNG implementation ("threefry2x32", the only one)."""
    key_parts("key_impl", keys, allow_batched=True)
    return _IMPL


def split(key: Any, num: int | tuple = 2) -> Any:
    """`num` new keys (an int, or a shape) from one key; typed in, typed out."""
    data, typed = key_parts("split", key)
    shape = canonical_shape("split", num)
    return rewrap(split_data(data, shape), typed)


def fold_in(key: Any, data: Any) -> Any:
    """A new key from `key` and an integer (its value modulo 2**32, as in JAX)."""
    kdata, typed = key_parts("fold_in", key)
    if np.ndim(data) if not isinstance(data, Tracer) else data.ndim:
        raise FgradTypeError(f"fold_in accepts a scalar, but was given an array of shape "
                             f"{np.shape(data)} != (). Use fgrad.vmap for batching.")
    if isinstance(data, (int, np.integer)) and not isinstance(data, (bool, np.bool_)):
        value = np.asarray(int(data) % 2 ** 32, np.uint32)
    else:
        arr = data if isinstance(data, Tracer) else fnp.asarray(data)
        if arr.dtype.kind not in "iu":
            raise FgradTypeError(f"fold_in: data must be an integer, got dtype {arr.dtype}")
        value = arr.astype(np.uint32)
    return rewrap(fold_in_data(kdata, value), typed)


def bits(key: Any, shape: Any = (), dtype: Any = None) -> Any:
    """Uniform random bits: an unsigned integer array of `shape` (uint8, uint16, uint32 or
    uint64; None is uint64, JAX's default unsigned type with x64 enabled)."""
    data, _ = key_parts("bits", key)
    dtype = np.dtype(np.uint64 if dtype is None else dtype)
    if dtype.kind != "u":
        raise FgradValueError(f"dtype argument to `bits` must be an unsigned int dtype, got {dtype}")
    return random_bits(data, dtype.itemsize * 8, canonical_shape("bits", shape))


def clone(key: Any) -> Any:
    """The same key (JAX's clone exists for its key-reuse checker; keys here are values)."""
    key_parts("clone", key, allow_batched=True)
    return key
