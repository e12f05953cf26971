"""Fetching one batch (or one sample) from a dataset: shared by the DataLoader's main-process
and worker-process loading, as PyTorch's torch.utils.data._utils.fetch."""
from __future__ import annotations

import numpy as np

from ...._tensor.tensor import Tensor
from ..dataset import Subset, TensorDataset, _value, _wrap
from .collate import default_collate


class _DatasetKind:
    """Map-style (indexed) or iterable-style (streamed) dataset, and the fetcher for each."""
    Map = 0
    Iterable = 1

    @staticmethod
    def create_fetcher(kind: int, dataset, auto_collation: bool, collate_fn, drop_last: bool):
        if kind == _DatasetKind.Map:
            return _MapDatasetFetcher(dataset, auto_collation, collate_fn, drop_last)
        return _IterableDatasetFetcher(dataset, auto_collation, collate_fn, drop_last)


class _BaseDatasetFetcher:
    def __init__(self, dataset, auto_collation: bool, collate_fn, drop_last: bool) -> None:
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last

    def fetch(self, possibly_batched_index):
        raise NotImplementedError


class _IterableDatasetFetcher(_BaseDatasetFetcher):
    """Pulls the next sample, or the next batch_size samples, from one iterator over the dataset."""

    def __init__(self, dataset, auto_collation: bool, collate_fn, drop_last: bool) -> None:
        super().__init__(dataset, auto_collation, collate_fn, drop_last)
        self.dataset_iter = iter(dataset)
        self.ended = False

    def fetch(self, possibly_batched_index):
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in possibly_batched_index:
                try:
                    data.append(next(self.dataset_iter))
                except StopIteration:
                    self.ended = True
                    break
            if not data or (self.drop_last and len(data) < len(possibly_batched_index)):
                raise StopIteration
        else:
            data = next(self.dataset_iter)
        return self.collate_fn(data)


class _MapDatasetFetcher(_BaseDatasetFetcher):
    """dataset[i] for each index of a batch (or dataset.__getitems__(batch)), then collate_fn."""

    def fetch(self, possibly_batched_index):
        if self.auto_collation:
            if self.collate_fn is default_collate:
                batch = _tensor_dataset_batch(self.dataset, possibly_batched_index)
                if batch is not None:
                    return batch
            if callable(getattr(self.dataset, "__getitems__", None)):
                data = self.dataset.__getitems__(possibly_batched_index)
            else:
                data = [self.dataset[idx] for idx in possibly_batched_index]
        else:
            data = self.dataset[possibly_batched_index]
        return self.collate_fn(data)


def _tensor_dataset_batch(dataset, indices):
    """default_collate([dataset[i] for i in indices]) in one fancy-indexing step per tensor, for a
    TensorDataset (or a Subset of one, as random_split makes), whose samples are rows of its
    tensors; None for any other dataset (or indices that are not plain ints), which takes the
    per-sample path. The values, dtypes and the list type of the batch are the same."""
    indices = list(indices)
    while type(dataset) is Subset:
        outer = dataset.indices
        if not isinstance(outer, (list, tuple, range, np.ndarray)):
            return None
        try:
            indices = [outer[i] for i in indices]
        except TypeError:  # not plain integer indices: let the per-sample path report it
            return None
        dataset = dataset.dataset
    if type(dataset) is not TensorDataset:
        return None
    index = np.asarray(indices)
    if index.ndim != 1 or index.dtype.kind not in "iu":
        return None
    arrays = []
    for t in dataset.tensors:
        if isinstance(t, Tensor) and t.requires_grad:
            return None  # the batch must carry a graph: the per-sample path stacks through autograd
        a = _value(t)
        if not hasattr(a, "shape"):
            return None
        arrays.append(a)
    # indexing copies, so a batch never aliases the dataset (as PyTorch's stacked batch does not)
    return [_wrap(a[index if isinstance(a, np.ndarray) else _on_device(index, a)]) for a in arrays]


def _on_device(index, like):
    """An index array on the device of `like` (CuPy arrays want CuPy indices)."""
    # optional dependency (GPU arrays): imported only when a CuPy array is seen
    import cupy
    return cupy.asarray(index)
