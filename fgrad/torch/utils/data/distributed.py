"""DistributedSampler (PyTorch's torch.utils.data.distributed)."""
from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sized

import numpy as np

from ....core.errors import FgradRuntimeError, FgradTypeError, FgradValueError
from ..._tensor._random import TorchMT19937
from .sampler import Sampler

__all__ = ["DistributedSampler"]

# Set by fgrad.distributed.init() (a higher layer, which this module may not import): gives
# (world_size, rank) of the initialised process group, for a sampler built without them.
_process_group: Callable[[], tuple[int, int]] | None = None


class DistributedSampler(Sampler[int]):
    """The share of `dataset` that replica `rank` of `num_replicas` loads: every
    `num_replicas`-th index of one (shuffled) order, padded by repeating its start so that all
    replicas get `ceil(len / num_replicas)` indices, or cut to a multiple of `num_replicas`
    with `drop_last=True`.

    The shuffle is PyTorch's: randperm from `torch.Generator().manual_seed(seed + epoch)`, so
    each rank's indices equal PyTorch's for the same seed, epoch and sizes. Call
    `set_epoch(epoch)` before each epoch for a new order. `num_replicas` and `rank` default to
    the world size and rank of `fgrad.distributed` once its init() has run; otherwise they must
    be given."""

    def __init__(self, dataset: Sized, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False) -> None:
        if (num_replicas is None or rank is None) and _process_group is not None:
            world, this_rank = _process_group()
            num_replicas = world if num_replicas is None else num_replicas
            rank = this_rank if rank is None else rank
        if num_replicas is None or rank is None:
            missing = " and ".join(n for n, v in (("num_replicas", num_replicas), ("rank", rank)) if v is None)
            raise FgradRuntimeError(f"DistributedSampler: pass {missing} explicitly (e.g. num_replicas=world_size, "
                               "rank=this process's rank), or call fgrad.distributed.init() first to take "
                               "them from the MPI job")
        for name, value in (("num_replicas", num_replicas), ("rank", rank)):
            if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
                raise FgradTypeError(f"DistributedSampler: {name} must be an int, got {value!r}")
        if num_replicas <= 0:
            raise FgradValueError(f"DistributedSampler: num_replicas must be positive, got {num_replicas}")
        if rank >= num_replicas or rank < 0:
            raise FgradValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = int(num_replicas)
        self.rank = int(rank)
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % self.num_replicas != 0:
            self.num_samples = math.ceil((n - self.num_replicas) / self.num_replicas)
        else:
            self.num_samples = math.ceil(n / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)
        if self.shuffle:
            indices = TorchMT19937(self.seed + self.epoch).randperm(n)
        else:
            indices = list(range(n))
        if not self.drop_last:
            padding = self.total_size - len(indices)
            if padding <= len(indices):
                indices += indices[:padding]
            elif indices:
                indices += (indices * math.ceil(padding / len(indices)))[:padding]
        else:
            indices = indices[:self.total_size]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Use the order of `epoch` (the seed becomes seed + epoch) from the next iteration on."""
        self.epoch = epoch
