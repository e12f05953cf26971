"""The threefry2x32 counter-based PRNG (JAX's default implementation, its
`jax_threefry_partitionable=True` streams) written with fgrad.numpy's uint32 operations, so
that keys are values that jit, vmap and grad trace like any other array.

Raw keys (`PRNGKey`) are uint32 arrays of shape (..., 2); typed keys (`key`) are `KeyArray`s,
a pytree holding the same uint32 data whose own shape omits the trailing 2. Every sampler
works on the raw data with an optional batch shape in front, which is how gamma's
per-element rejection loop runs all elements at once.
"""
from __future__ import annotations

import math
import operator
from typing import Any, Sequence

import numpy as np

from .. import numpy as fnp
from ..core.errors import FgradTypeError, FgradValueError
from ..core.trace import Tracer
from ..tree_util import register_pytree_node

_U32 = np.dtype(np.uint32)
_U64 = np.dtype(np.uint64)
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = np.uint32(0x1BD11BDA)


class KeyArray:
    """A typed PRNG key array (JAX's `key<fry>` dtype): `shape` is the key array's shape;
    `key_data(k)` is the uint32 array of shape `shape + (2,)` under it. Index, iterate and
    unpack it like an array of keys (`k1, k2 = fgrad.random.split(k)`)."""

    __slots__ = ("_data",)
    dtype = "key<fry>"

    def __init__(self, data: Any):
        self._data = data

    @property
    def shape(self) -> tuple:
        return tuple(fnp.shape(self._data))[:-1]

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def __len__(self) -> int:
        if not self.shape:
            raise FgradTypeError("len() of a single PRNG key (shape ()): only key arrays made by "
                                 "split(key, n) have a length")
        return self.shape[0]

    def __getitem__(self, idx: Any) -> "KeyArray":
        if not self.shape:
            raise FgradTypeError("a single PRNG key (shape ()) cannot be indexed; split it first: "
                                 "k1, k2 = fgrad.random.split(key)")
        idx = idx if isinstance(idx, tuple) else (idx,)
        if any(i is Ellipsis for i in idx):
            raise FgradTypeError("PRNG key arrays are indexed without `...`: index the key axes "
                                 f"explicitly (shape {self.shape})")
        return KeyArray(self._data[idx + (slice(None),)])

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def reshape(self, *shape: Any) -> "KeyArray":
        shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        return KeyArray(fnp.reshape(self._data, tuple(shape) + (2,)))

    def __repr__(self) -> str:
        return f"KeyArray(shape={self.shape}, dtype=key<fry>) overlaying:\n{self._data!r}"


register_pytree_node(KeyArray, lambda k: ((k._data,), None), lambda _, c: KeyArray(*c))


def _is_uint32(x: Any) -> bool:
    return fnp.asarray(x).dtype == _U32 if not isinstance(x, Tracer) else x.dtype == _U32


def key_parts(name: str, key: Any, *, allow_batched: bool = False) -> tuple[Any, bool]:
    """The uint32 data (shape (..., 2)) of a typed or raw key, and whether it was typed.
    Checks what JAX checks, naming the function, the key's shape and dtype and the fix."""
    if isinstance(key, KeyArray):
        data, typed = key._data, True
    else:
        if isinstance(key, (int, float, bool)) or key is None:
            raise FgradTypeError(f"{name}: expected a PRNG key, got {key!r}; make one with "
                                 f"fgrad.random.key({key!r}) or fgrad.random.PRNGKey(seed)")
        try:
            data = key if isinstance(key, Tracer) else fnp.asarray(key)
        except Exception as e:  # an object no array can be made of
            raise FgradTypeError(f"{name}: unexpected PRNG key type {type(key).__name__}; make "
                                 "keys with fgrad.random.key(seed)") from e
        shape, dtype = tuple(data.shape), data.dtype
        if dtype != _U32 or not shape or shape[-1] != 2:
            raise FgradTypeError(f"{name}: a raw PRNG key is a uint32 array of shape (2,) (or (..., 2) "
                                 f"for key arrays), got dtype {dtype} and shape {shape}; make keys "
                                 "with fgrad.random.PRNGKey(seed) or fgrad.random.key(seed)")
        typed = False
    if not allow_batched and len(data.shape) > 1:
        shape = tuple(data.shape)[:-1]
        raise FgradValueError(f"{name} accepts a single key, but was given a key array of shape "
                              f"{shape} != (). Use fgrad.vmap for batching (or index one key)")
    return data, typed


def rewrap(data: Any, typed: bool) -> Any:
    return KeyArray(data) if typed else data


# -- threefry2x32 --

def _u32(v: int) -> np.ndarray:
    return np.asarray(v, _U32)


def _rotl(x, r: int):
    # uint32 multiplication wraps, so x * 2**r is x << r and x // 2**(32 - r) is x >> (32 - r)
    return fnp.bitwise_or(fnp.multiply(x, _u32(1 << r)), fnp.floor_divide(x, _u32(1 << (32 - r))))


def threefry2x32(k1, k2, x1, x2) -> tuple[Any, Any]:
    """The Threefry-2x32 block cipher with 20 rounds (Salmon et al. 2011) on broadcastable
    uint32 arrays: key words k1, k2, counter words x1, x2."""
    ks = (k1, k2, fnp.bitwise_xor(fnp.bitwise_xor(k1, k2), _PARITY))
    x = [fnp.add(x1, ks[0]), fnp.add(x2, ks[1])]
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            x[0] = fnp.add(x[0], x[1])
            x[1] = fnp.bitwise_xor(x[0], _rotl(x[1], r))
        x[0] = fnp.add(x[0], ks[(i + 1) % 3])
        x[1] = fnp.add(fnp.add(x[1], ks[(i + 2) % 3]), _u32(i + 1))
    return x[0], x[1]


def _key_words(data, shape: tuple):
    """k1, k2 of a key array of batch shape B, shaped B + (1,) * len(shape) to broadcast
    against counters of `shape`."""
    batch = tuple(data.shape)[:-1]
    pad = batch + (1,) * len(shape)
    return fnp.reshape(data[..., 0], pad), fnp.reshape(data[..., 1], pad)


def _iota_2x32(shape: tuple) -> tuple[np.ndarray, np.ndarray]:
    # the row-major index of each element as a uint64, split into high and low words
    idx = np.arange(math.prod(shape), dtype=_U64).reshape(shape)
    return (idx >> np.uint64(32)).astype(_U32), (idx & np.uint64(0xFFFFFFFF)).astype(_U32)


def _hash_iota(data, shape: tuple):
    k1, k2 = _key_words(data, shape)
    c1, c2 = _iota_2x32(shape)
    return threefry2x32(k1, k2, c1, c2)


def split_data(data, shape: tuple):
    """Keys of shape B + shape + (2,) from keys of batch shape B (JAX's fold-like split)."""
    b1, b2 = _hash_iota(data, shape)
    return fnp.stack([b1, b2], axis=-1)


def random_bits(data, bit_width: int, shape: tuple):
    """Uniform random bits of batch shape B + shape from keys of batch shape B."""
    b1, b2 = _hash_iota(data, shape)
    if bit_width == 64:
        hi = fnp.asarray(b1).astype(_U64) if not isinstance(b1, Tracer) else b1.astype(_U64)
        return fnp.bitwise_or(fnp.multiply(hi, np.asarray(1 << 32, _U64)), b2.astype(_U64))
    bits = fnp.bitwise_xor(b1, b2)
    if bit_width == 32:
        return bits
    return bits.astype(np.dtype(f"uint{bit_width}"))


def fold_in_data(data, value):
    """A key from `data` and a uint32 `value`: threefry of the counter (0, value)."""
    k1, k2 = data[..., 0], data[..., 1]
    y1, y2 = threefry2x32(k1, k2, _u32(0), value)
    return fnp.stack([y1, y2], axis=-1)


def seed_data(seed: Any):
    """A key's uint32 data from an integer seed: the seed as 64 bits, high word first."""
    if isinstance(seed, (bool, np.bool_)) or (not isinstance(seed, (int, np.integer, Tracer))
                                              and fnp.asarray(seed).dtype.kind not in "iu"):
        raise FgradTypeError(f"PRNG key seed must be an integer, got {seed!r}")
    if isinstance(seed, int):
        if not -2 ** 63 <= seed < 2 ** 64:
            raise FgradValueError(f"PRNG key seed {seed} does not fit in 64 bits: use a seed in "
                                  "[-2**63, 2**64)")
        seed = np.asarray(seed, _U64 if seed >= 2 ** 63 else np.int64)
    s = seed if isinstance(seed, Tracer) else fnp.asarray(seed)
    if s.shape != ():
        raise FgradTypeError(f"a PRNG key seed must be a scalar, got an array of shape {tuple(s.shape)}; "
                             "use fgrad.vmap(fgrad.random.key) for several keys")
    wide = s.astype(_U64) if s.dtype.itemsize == 8 else s.astype(np.int64).astype(_U64)
    if s.dtype.itemsize < 8 and s.dtype.kind == "i":
        # a 32-bit seed's high word is 0 (JAX shifts the 32-bit value right by 32)
        wide = fnp.bitwise_and(wide, np.asarray(0xFFFFFFFF, _U64))
    hi = fnp.floor_divide(wide, np.asarray(1 << 32, _U64)).astype(_U32)
    lo = fnp.bitwise_and(wide, np.asarray(0xFFFFFFFF, _U64)).astype(_U32)
    return fnp.stack([hi, lo])


def canonical_shape(name: str, shape: Any) -> tuple:
    """A shape argument as a tuple of ints (an int is a 1-d shape)."""
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        out = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise FgradTypeError(f"{name}: shape must be a sequence of integers, got {shape!r}") from None
    if any(d < 0 for d in out):
        raise FgradValueError(f"{name}: shape {out} has a negative dimension")
    return out


def as_shape(x: Sequence[int]) -> tuple:
    return tuple(int(d) for d in x)
