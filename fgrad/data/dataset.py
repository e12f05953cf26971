"""Dataset, TensorDataset and DataLoader."""
from __future__ import annotations

import math

import numpy as np

from ..core.trace import facade, is_tensor
from ..tensor.creation import default_generator


def _is_tensor(x) -> bool:
    return is_tensor(x)


def _value(x):
    """The array behind a Tensor (or the array itself)."""
    return x._value if _is_tensor(x) else x


def _wrap(array):
    """A Tensor holding `array` (no copy), once the facade is loaded; else the array."""
    wrap = getattr(facade, "wrap", None)
    return wrap(array) if wrap is not None else array


class Dataset:
    """A map-style dataset: subclasses define __getitem__(i) and __len__()."""

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__")

    def __len__(self) -> int:
        raise NotImplementedError(f"{type(self).__name__} must define __len__")


class TensorDataset(Dataset):
    """Samples are index slices of equally long tensors: dataset[i] == (t[i] for t in tensors)."""

    def __init__(self, *tensors) -> None:
        if not tensors:
            raise ValueError("TensorDataset needs at least one tensor")
        sizes = [int(np.shape(_value(t))[0]) if np.ndim(_value(t)) else None for t in tensors]
        if None in sizes:
            raise ValueError("TensorDataset: every tensor needs a first (sample) dimension; got a 0-d one")
        if len(set(sizes)) != 1:
            raise ValueError(f"TensorDataset: tensors have different first dimensions {sizes}; "
                             "all must hold the same number of samples")
        self.tensors = tuple(tensors)

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return int(np.shape(_value(self.tensors[0]))[0])

    def __repr__(self) -> str:
        shapes = ", ".join(str(tuple(np.shape(_value(t)))) for t in self.tensors)
        return f"TensorDataset({len(self)} samples: {shapes})"


def default_collate(samples):
    """Stack a list of samples into a batch: tuples/lists/dicts recursively, tensors,
    arrays and numbers into one tensor with a new leading axis."""
    first = samples[0]
    if isinstance(first, dict):
        return {k: default_collate([s[k] for s in samples]) for k in first}
    if isinstance(first, (tuple, list)):
        if any(len(s) != len(first) for s in samples):
            raise ValueError("default_collate: samples of one batch have different lengths")
        return type(first)(default_collate(list(col)) for col in zip(*samples)) \
            if not hasattr(first, "_fields") else type(first)(*(default_collate(list(c)) for c in zip(*samples)))
    if isinstance(first, (str, bytes)):
        return list(samples)
    if _is_tensor(first) or isinstance(first, (np.ndarray, np.generic)):
        return _wrap(np.stack([np.asarray(_value(s)) for s in samples]))
    if isinstance(first, bool):
        return _wrap(np.array(samples, dtype=bool))
    if isinstance(first, int):
        return _wrap(np.array(samples, dtype=np.int64))
    if isinstance(first, float):
        return _wrap(np.array(samples, dtype=np.float32))
    return list(samples)


class DataLoader:
    """Iterate over a dataset in batches.

    DataLoader(dataset, batch_size=1, shuffle=False, drop_last=False, collate_fn=None,
    generator=None). A TensorDataset is batched by fancy indexing its tensors (no
    per-sample Python work). `generator` (an fgrad.Generator, a numpy Generator or a
    seed) draws the shuffle order; by default a fresh order is drawn each epoch from
    fgrad's default generator, so fgrad.manual_seed makes runs repeatable."""

    def __init__(self, dataset, batch_size: int | None = 1, shuffle: bool = False,
                 drop_last: bool = False, collate_fn=None, generator=None, **kwargs) -> None:
        unsupported = {k: v for k, v in kwargs.items() if k not in ("num_workers", "pin_memory")}
        if unsupported:
            raise TypeError(f"DataLoader got unexpected arguments {sorted(unsupported)}")
        if batch_size is not None and (not isinstance(batch_size, (int, np.integer)) or batch_size <= 0):
            raise ValueError(f"DataLoader: batch_size should be a positive integer, got {batch_size!r}")
        self.dataset = dataset
        self.batch_size = None if batch_size is None else int(batch_size)
        self.shuffle = bool(shuffle)
        self.drop_last = bool(drop_last)
        self.collate_fn = collate_fn
        if generator is None or isinstance(generator, np.random.Generator):
            self.generator = generator
        elif hasattr(generator, "numpy") and isinstance(generator.numpy, np.random.Generator):
            self.generator = generator.numpy  # an fgrad.Generator
        else:
            self.generator = np.random.default_rng(generator)

    def __len__(self) -> int:
        n = len(self.dataset)
        if self.batch_size is None:
            return n
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)

    def _order(self):
        n = len(self.dataset)
        if not self.shuffle:
            return np.arange(n)
        rng = self.generator
        if rng is None:
            rng = _global_rng()
        return rng.permutation(n)

    def __iter__(self):
        order = self._order()
        if self.batch_size is None:
            for i in order:
                yield self.dataset[int(i)]
            return
        n, bs = len(order), self.batch_size
        stop = n - n % bs if self.drop_last else n
        fast = isinstance(self.dataset, TensorDataset) and self.collate_fn is None
        if fast:
            arrays = [_value(t) for t in self.dataset.tensors]
            arrays = [a if hasattr(a, "shape") else np.asarray(a) for a in arrays]
        for start in range(0, stop, bs):
            idx = order[start:start + bs]
            if fast:
                # batches are fresh arrays (as PyTorch's collate makes them): changing one in
                # place never changes the dataset
                if not self.shuffle:
                    s = slice(start, start + len(idx))
                    yield tuple(_wrap(a[s].copy()) for a in arrays)
                else:
                    yield tuple(_wrap(a[idx if type(a) is np.ndarray else _on_device(idx, a)])
                                for a in arrays)
            else:
                samples = [self.dataset[int(i)] for i in idx]
                yield (self.collate_fn or default_collate)(samples)

    def __repr__(self) -> str:
        return (f"DataLoader({self.dataset!r}, batch_size={self.batch_size}, shuffle={self.shuffle}, "
                f"drop_last={self.drop_last})")


def _global_rng() -> np.random.Generator:
    """fgrad's default generator (seeded by fgrad.manual_seed)."""
    return default_generator.numpy


def _on_device(index, like):
    """An index array on the device of `like` (CuPy arrays want CuPy indices)."""
    # optional dependency (GPU arrays): imported only when a CuPy array is seen
    import cupy
    return cupy.asarray(index)
