"""Samplers (PyTorch's torch.utils.data.sampler): the order in which a DataLoader visits a
map-style dataset. Random samplers use PyTorch's algorithms (see _random.py): with a seeded
`fgrad.torch.Generator` they yield PyTorch's indices for the same seed."""
from __future__ import annotations

import itertools
import warnings
from collections.abc import Iterable, Iterator, Sequence, Sized
from typing import Generic, TypeVar

import numpy as np

from ....core.errors import FgradNotImplementedError, FgradTypeError, FgradValueError
from ..._tensor.tensor import Tensor
from . import _random
from .dataset import _as_sequence, _value, _wrap

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler",
           "BatchSampler"]

T_co = TypeVar("T_co", covariant=True)


def _positive_int(value, name: str) -> int:
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value <= 0:
        raise FgradValueError(f"{name} should be a positive integer value, but got {name}={value!r}")
    return int(value)


class Sampler(Generic[T_co]):
    """Base class of samplers: subclasses define `__iter__` (indices, or lists of indices for a
    batch sampler) and usually `__len__`."""

    def __init__(self, data_source: Sized | None = None) -> None:
        # PyTorch dropped this argument; older scripts still call super().__init__(data_source)
        if data_source is not None:
            warnings.warn("Sampler's `data_source` argument is not used (PyTorch removed it); call "
                          "super().__init__() without it", UserWarning, stacklevel=2)

    def __iter__(self) -> Iterator[T_co]:
        raise FgradNotImplementedError(f"{type(self).__name__} must define __iter__")


class SequentialSampler(Sampler[int]):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler[int]):
    """A random permutation of the data source's indices (`num_samples` beyond its length take
    further permutations), or with `replacement=True` `num_samples` independent uniform draws.

    PyTorch's algorithm: each epoch draws a fresh permutation (randperm) or chunks of 32 draws
    (randint) from `generator`; with generator=None a fresh generator is seeded every epoch by
    a 63-bit draw from the default generator."""

    def __init__(self, data_source: Sized, replacement: bool = False, num_samples: int | None = None,
                 generator=None) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = _random.as_generator(generator)
        if not isinstance(replacement, bool):
            raise FgradTypeError(f"replacement should be a boolean value, but got replacement={replacement!r}")
        _positive_int(self.num_samples, "num_samples")

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        rng = _random.fresh_stream(self.generator)
        if self.replacement:
            for _ in range(self.num_samples // 32):
                yield from rng.randint(n, 32)
            yield from rng.randint(n, self.num_samples % 32)
        else:
            for _ in range(self.num_samples // n):
                yield from rng.randperm(n)
            yield from rng.randperm(n)[:self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given indices in random order (a new permutation each epoch). `indices` may be any
    iterable; one that is not a sequence is read once into a list."""

    def __init__(self, indices: Sequence[int], generator=None) -> None:
        self.indices = _as_sequence(indices, "SubsetRandomSampler indices")
        self.generator = _random.as_generator(generator)

    def __iter__(self) -> Iterator[int]:
        for i in _random.stream(self.generator).randperm(len(self.indices)):
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    """`num_samples` indices drawn from 0 .. len(weights) - 1 with probabilities proportional to
    `weights` (PyTorch's multinomial; with `replacement=False` each index at most once)."""

    def __init__(self, weights: Sequence[float], num_samples: int, replacement: bool = True,
                 generator=None) -> None:
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise FgradValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples!r}")
        if not isinstance(replacement, bool):
            raise FgradValueError(f"replacement should be a boolean value, but got replacement={replacement!r}")
        if isinstance(weights, np.ndarray) or isinstance(weights, Tensor):
            w = _value(weights)
            w = np.asarray(w.get() if hasattr(w, "get") else w, dtype=np.float64)  # .get(): a CuPy array
        else:
            w = np.asarray([_value(x) for x in weights], dtype=np.float64)  # read a generator once
        if w.ndim != 1:
            raise FgradValueError(f"weights should be a 1d sequence but given weights have shape {tuple(w.shape)}")
        self.weights = _wrap(w)  # PyTorch keeps the weights as a float64 tensor
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = _random.as_generator(generator)

    def __iter__(self) -> Iterator[int]:
        # read at each epoch: a script may change sampler.weights between epochs
        w = _value(self.weights)
        w = np.asarray(w.get() if hasattr(w, "get") else w, dtype=np.float64)
        yield from _random.stream(self.generator).multinomial(w, self.num_samples, self.replacement)

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler[list]):
    """Lists of `batch_size` indices from `sampler` (any iterable of indices, iterated once per
    epoch); the last, shorter list is dropped when `drop_last`."""

    def __init__(self, sampler: Sampler[int] | Iterable[int], batch_size: int, drop_last: bool) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise FgradValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size!r}")
        if not isinstance(drop_last, bool):
            raise FgradValueError(f"drop_last should be a boolean value, but got drop_last={drop_last!r}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list]:
        it = iter(self.sampler)
        if self.drop_last:
            yield from (list(batch) for batch in zip(*[it] * self.batch_size))
        else:
            batch = list(itertools.islice(it, self.batch_size))
            while batch:
                yield batch
                batch = list(itertools.islice(it, self.batch_size))

    def __len__(self) -> int:
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
