"""PyTorch's CPU random algorithms for data sampling.

A PyTorch CPU generator is a 32-bit Mersenne Twister (MT19937) seeded with the low 32 bits of
`manual_seed(seed)`; randperm, randint, `random_()`, multinomial and exponential_ turn its
draws into values with fixed integer/float transforms. Reproducing them here makes a seeded
`fgrad.torch.Generator` give PyTorch's shuffles, splits and samples, draw for draw:

- `generator=None` (PyTorch: the global generator) draws a 63-bit seed from fgrad's default
  generator (NumPy's PCG64, seeded by `fgrad.torch.manual_seed`) and samples from a fresh stream on it,
  as PyTorch's RandomSampler does. Runs repeat under `fgrad.torch.manual_seed`; the values differ from
  PyTorch's, whose global generator also feeds weight initialisation, dropout, ...
- an explicit `fgrad.torch.Generator` gets its own MT19937 stream, seeded by the generator's
  `manual_seed` and advanced by every sampler, split or DataLoader epoch drawing from it, as a
  `torch.Generator` is. The stream is separate from the PCG64 stream that `fgrad.torch.rand(...,
  generator=g)` draws from, and restarts when `g.manual_seed` is called (not on `g.set_state`).
"""
from __future__ import annotations

import weakref

import numpy as np

from ....core.errors import FgradRuntimeError, FgradTypeError
from ..._tensor.creation import Generator, default_generator

_MASK32 = 0xFFFFFFFF
_MASK53 = np.uint64((1 << 53) - 1)
_TWO63 = 1 << 63
# randperm's "small n" path (n < UINT32_MAX / 20) draws 32-bit values; larger n uses 64-bit ones
_RANDPERM_SMALL = _MASK32 // 20


class TorchMT19937:
    """The draws of `torch.Generator().manual_seed(seed)` on the CPU, with PyTorch's transforms."""

    __slots__ = ("_bits",)

    def __init__(self, seed: int) -> None:
        # mt19937::init_with_uint32 (as NumPy's legacy seeding): the low 32 bits of the seed
        key = np.empty(624, np.uint32)
        x = int(seed) & _MASK32
        key[0] = x
        for i in range(1, 624):
            x = (1812433253 * (x ^ (x >> 30)) + i) & _MASK32
            key[i] = x
        self._bits = np.random.MT19937()
        self._bits.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": 624}}

    def random32(self, n: int) -> np.ndarray:
        """`n` draws of generator->random() (uint32 values, as uint64)."""
        return self._bits.random_raw(int(n))

    def random64(self, n: int) -> np.ndarray:
        """`n` draws of generator->random64(): two 32-bit draws, the first the high half."""
        raw = self._bits.random_raw(2 * int(n))
        return (raw[0::2] << np.uint64(32)) | raw[1::2]

    def seed63(self) -> int:
        """`torch.empty((), dtype=torch.int64).random_(generator=g).item()`: a seed in [0, 2**63)."""
        return int(self.random64(1)[0]) % _TWO63

    def uniform(self, n: int) -> np.ndarray:
        """`n` float64 draws in [0, 1) of uniform_real_distribution<double> (53 random bits)."""
        return (self.random64(n) & _MASK53).astype(np.float64) * (1.0 / (1 << 53))

    def randperm(self, n: int) -> list[int]:
        """`torch.randperm(n, generator=g).tolist()`."""
        n = int(n)
        if n < 0:
            raise FgradRuntimeError(f"n must be non-negative, got {n}")
        if n < _RANDPERM_SMALL:
            # Fisher-Yates from the front: swap r[i] with r[i + random() % (n - i)]
            perm = list(range(n))
            if n > 1:
                offsets = (self.random32(n - 1) % np.arange(n, 1, -1, dtype=np.uint64)).tolist()
                for i, z in enumerate(offsets):
                    j = i + z
                    perm[i], perm[j] = perm[j], perm[i]
            return perm
        # the "inside-out" variant PyTorch uses for huge n (64-bit draws keep it unbiased)
        perm = [0] * n
        draws = self.random64(n)
        for i in range(n):
            z = int(draws[i]) % (i + 1)
            perm[i] = perm[z]
            perm[z] = i
        return perm

    def randint(self, high: int, size: int) -> list[int]:
        """`torch.randint(high=high, size=(size,), dtype=torch.int64, generator=g).tolist()`."""
        high = int(high)
        if high <= 0:
            raise FgradRuntimeError(f"random_ expects 'from' to be less than 'to', but got from=0 >= to={high}")
        draws = self.random64(size) if high >= 1 << 32 else self.random32(size)
        return (draws % np.uint64(high)).astype(np.int64).tolist()

    def multinomial(self, weights: np.ndarray, num_samples: int, replacement: bool) -> list[int]:
        """`torch.multinomial(weights, num_samples, replacement, generator=g).tolist()` for a 1-d
        float64 `weights`: PyTorch's checks and both of its CPU algorithms."""
        w = np.asarray(weights, dtype=np.float64)
        if w.size and w.min() < 0:
            raise FgradRuntimeError("invalid multinomial distribution (encountering probability entry < 0)")
        if not np.all(np.isfinite(w)):
            raise FgradRuntimeError("invalid multinomial distribution (encountering probability entry = "
                               "infinity or NaN)")
        if not replacement and num_samples > w.size:
            raise FgradRuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
        # a sequential float64 running sum, as PyTorch's kernel accumulates it
        cum = np.cumsum(w)
        if w.size == 0 or cum[-1] <= 0:
            raise FgradRuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        if replacement and num_samples > 1:
            # inverse-CDF sampling: the first bucket whose normalised cumulative weight >= u
            cum = cum / cum[-1]
            cum[-1] = 1.0
            return np.searchsorted(cum, self.uniform(num_samples), side="left").tolist()
        # PyTorch's fast path (no replacement, or one sample): the top num_samples of w / q
        # with q ~ Exp(1) drawn for every category, q = -log1p(-u). Ties (zero weights drawn
        # when num_samples exceeds the non-zero ones) are broken by index here; PyTorch's topk
        # leaves their order unspecified.
        q = -np.log1p(-self.uniform(w.size))
        ratio = w / q
        return np.argsort(-ratio, kind="stable")[:num_samples].tolist()


# The MT19937 stream of each explicit fgrad.torch.Generator, with the PCG64 state object it was made
# for: `Generator.manual_seed` replaces that object, which restarts the stream from the new seed.
_STREAMS: "weakref.WeakKeyDictionary[Generator, tuple[object, TorchMT19937]]" = weakref.WeakKeyDictionary()


def as_generator(generator, what: str = "generator"):
    """Check a user's `generator` argument: None, an fgrad.torch.Generator, a NumPy Generator, or an
    int seed (fgrad's older API; it becomes `torch.Generator().manual_seed(seed)`)."""
    if generator is None or isinstance(generator, (Generator, np.random.Generator)):
        return generator
    if isinstance(generator, (int, np.integer)) and not isinstance(generator, bool):
        return Generator().manual_seed(int(generator))
    raise FgradTypeError(f"{what} must be an fgrad.torch.Generator (torch.Generator under `import fgrad.torch as torch`) "
                    f"or None, got {type(generator).__name__}; make one with "
                    "torch.Generator().manual_seed(seed)")


def stream(generator) -> TorchMT19937:
    """The PyTorch-algorithm stream a sampler draws from for `generator` (see the module doc)."""
    generator = as_generator(generator)
    if generator is None or generator is default_generator:
        return TorchMT19937(int(default_generator.numpy.integers(0, _TWO63)))
    if isinstance(generator, np.random.Generator):
        return TorchMT19937(int(generator.integers(0, _TWO63)))
    pcg = generator.numpy
    entry = _STREAMS.get(generator)
    if entry is None or entry[0] is not pcg:
        entry = (pcg, TorchMT19937(generator.initial_seed()))
        _STREAMS[generator] = entry
    return entry[1]


def draw_seed(generator) -> int:
    """A 63-bit seed from `generator`, as `torch.empty((), dtype=torch.int64).random_(generator=g)`
    draws one (the DataLoader's per-epoch worker base seed)."""
    generator = as_generator(generator)
    if generator is None or generator is default_generator:
        return int(default_generator.numpy.integers(0, _TWO63))
    return stream(generator).seed63()
