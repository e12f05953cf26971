"""Datasets (PyTorch's torch.utils.data.dataset): Dataset, IterableDataset, TensorDataset,
StackDataset, ConcatDataset, ChainDataset, Subset and random_split."""
from __future__ import annotations

import bisect
import itertools
import math
import warnings
from collections.abc import Iterable, Iterator, Sequence
from typing import Generic, TypeVar

import numpy as np

from ....core.errors import (
    DataAssertionError,
    FgradNotImplementedError,
    FgradTypeError,
    FgradValueError,
)
from . import _random
from ..._tensor.tensor import Tensor, wrap

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset", "ChainDataset",
           "Subset", "random_split"]

T_co = TypeVar("T_co", covariant=True)


def _value(x):
    """The array behind a Tensor (or the array itself)."""
    return x._value if isinstance(x, Tensor) else x


def _wrap(array):
    """A Tensor holding `array` (no copy)."""
    return wrap(array)


def _as_sequence(items, what: str):
    """`items` itself when it is a Sequence (kept by reference, as PyTorch keeps it), else its
    elements in a list: a generator is read once, here, not once per use."""
    if isinstance(items, (Sequence, np.ndarray)) or isinstance(items, Tensor):
        return items
    if isinstance(items, Iterable):
        return list(items)
    raise FgradTypeError(f"{what} must be a sequence or an iterable, got {type(items).__name__}")


class Dataset(Generic[T_co]):
    """A map-style dataset: subclasses define `__getitem__(index)` and usually `__len__()`
    (samplers and the DataLoader's defaults need it); `__getitems__(indices)` may fetch a
    whole batch at once. `a + b` concatenates two datasets."""

    def __getitem__(self, index) -> T_co:
        raise FgradNotImplementedError(f"{type(self).__name__} must define __getitem__ (Subclasses of Dataset "
                                  "should implement __getitem__.)")

    def __add__(self, other: Dataset[T_co]) -> ConcatDataset[T_co]:
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co], Iterable[T_co]):
    """A stream of samples: subclasses define `__iter__()`. With `num_workers > 0` every worker
    iterates its own copy, so split the work with `get_worker_info()` (in `__iter__` or a
    `worker_init_fn`), or each sample comes once per worker. `a + b` chains two streams."""

    def __iter__(self) -> Iterator[T_co]:
        raise FgradNotImplementedError(f"{type(self).__name__} must define __iter__")

    def __add__(self, other: Dataset[T_co]) -> ChainDataset:
        return ChainDataset([self, other])


class TensorDataset(Dataset[tuple]):
    """Samples are index slices of equally long tensors: dataset[i] == tuple(t[i] for t in tensors)."""

    def __init__(self, *tensors) -> None:
        if not tensors:
            raise FgradValueError("TensorDataset needs at least one tensor")
        sizes = [int(np.shape(_value(t))[0]) if np.ndim(_value(t)) else None for t in tensors]
        if None in sizes:
            raise FgradValueError("TensorDataset: every tensor needs a first (sample) dimension; got a 0-d one")
        if len(set(sizes)) != 1:
            raise DataAssertionError(f"Size mismatch between tensors: TensorDataset's tensors have different "
                                     f"first dimensions {sizes}; all must hold the same number of samples")
        self.tensors = tuple(tensors)

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return int(np.shape(_value(self.tensors[0]))[0])

    def __repr__(self) -> str:
        shapes = ", ".join(str(tuple(np.shape(_value(t)))) for t in self.tensors)
        return f"TensorDataset({len(self)} samples: {shapes})"


class StackDataset(Dataset):
    """Equally long datasets side by side: StackDataset(a, b)[i] == (a[i], b[i]) and
    StackDataset(x=a, y=b)[i] == {"x": a[i], "y": b[i]}."""

    def __init__(self, *args: Dataset, **kwargs: Dataset) -> None:
        if args and kwargs:
            raise FgradValueError("StackDataset takes datasets either positionally (samples are tuples) or by "
                             "keyword (samples are dicts), not both")
        if not args and not kwargs:
            raise FgradValueError("At least one dataset should be passed to StackDataset")
        parts = list(args) if args else list(kwargs.values())
        lengths = [len(d) for d in parts]
        if len(set(lengths)) != 1:
            raise FgradValueError(f"Size mismatch between datasets: StackDataset got lengths {lengths}")
        self._length = lengths[0]
        self.datasets = tuple(args) if args else dict(kwargs)

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __getitems__(self, indices: list) -> list:
        parts = self.datasets.items() if isinstance(self.datasets, dict) else enumerate(self.datasets)
        columns = {}
        for key, d in parts:
            if callable(getattr(d, "__getitems__", None)):
                items = d.__getitems__(indices)
                if len(items) != len(indices):
                    raise FgradValueError(f"Nested dataset's output size mismatch. Expected {len(indices)}, "
                                     f"got {len(items)}")
            else:
                items = [d[i] for i in indices]
            columns[key] = items
        if isinstance(self.datasets, dict):
            return [{k: columns[k][j] for k in columns} for j in range(len(indices))]
        return [tuple(columns[k][j] for k in columns) for j in range(len(indices))]

    def __len__(self) -> int:
        return self._length


class ConcatDataset(Dataset[T_co]):
    """Map-style datasets one after another (`datasets` may be any iterable; it is read once)."""

    @staticmethod
    def cumsum(sequence: Iterable) -> list[int]:
        """The running totals of the lengths of `sequence`'s datasets."""
        out, total = [], 0
        for d in sequence:
            total += len(d)
            out.append(total)
        return out

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise DataAssertionError("datasets should not be an empty iterable: ConcatDataset needs at "
                                     "least one dataset")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise DataAssertionError("ConcatDataset does not support IterableDataset; chain streams "
                                         "with ChainDataset (or `a + b`)")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise FgradValueError(f"absolute value of index should not exceed dataset length: index {idx} "
                                 f"for a ConcatDataset of length {len(self)}")
            idx = len(self) + idx
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][idx - start]


class ChainDataset(IterableDataset):
    """IterableDatasets one after another (`datasets` may be any iterable; it is read once, so
    every epoch sees every stream)."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = list(datasets)

    def _check(self, d) -> None:
        if not isinstance(d, IterableDataset):
            raise DataAssertionError(f"ChainDataset only supports IterableDataset, got {type(d).__name__}; "
                                     "concatenate map-style datasets with ConcatDataset")

    def __iter__(self):
        for d in self.datasets:
            self._check(d)
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            self._check(d)
            total += len(d)
        return total


class Subset(Dataset[T_co]):
    """The samples of `dataset` at `indices` (a sequence is kept by reference; another iterable
    is read once into a list)."""

    def __init__(self, dataset: Dataset[T_co], indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = _as_sequence(indices, "Subset indices")
        if type(self).__getitem__ is not Subset.__getitem__ and type(self).__getitems__ is Subset.__getitems__:
            raise FgradNotImplementedError(
                f"{type(self).__name__} overrides __getitem__ but not __getitems__, which the DataLoader "
                "calls instead; add\n\ndef __getitems__(self, indices):\n"
                "    return [self.__getitem__(idx) for idx in indices]")

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list[int]) -> list:
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(dataset: Dataset, lengths: Iterable[int | float], generator=None) -> list[Subset]:
    """Split `dataset` into non-overlapping random Subsets of the given `lengths`, or of the
    given fractions (summing to 1: floor(f * len(dataset)) each, the remainder handed out one
    by one from the first split on). The permutation is PyTorch's randperm: with
    `generator=torch.Generator().manual_seed(s)` the splits equal PyTorch's for that seed."""
    lengths = list(lengths)  # read a generator once: it is summed, checked and sliced
    n = len(dataset)
    total = sum(lengths)
    if math.isclose(total, 1) and total <= 1:
        sizes = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise FgradValueError(f"Fraction at index {i} is not between 0 and 1 (got {frac}); fractions "
                                 "must lie in [0, 1] and sum to 1")
            sizes.append(math.floor(n * frac))
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
        lengths = sizes
        for i, length in enumerate(lengths):
            if length == 0:
                warnings.warn(f"Length of split at index {i} is 0. This might result in an empty dataset.",
                              UserWarning, stacklevel=2)
    if sum(lengths) != n:
        raise FgradValueError(f"Sum of input lengths does not equal the length of the input dataset! "
                         f"(lengths {lengths} sum to {sum(lengths)}, the dataset has {n} samples; give "
                         "lengths summing to it or fractions summing to 1)")
    for i, length in enumerate(lengths):
        if not isinstance(length, (int, np.integer)) or length < 0:
            raise FgradValueError(f"random_split: length at index {i} must be a non-negative int, got {length!r}")
    indices = _random.stream(generator).randperm(n)
    return [Subset(dataset, indices[end - length:end])
            for end, length in zip(itertools.accumulate(lengths), lengths)]
