"""The DataLoader's worker processes, as PyTorch's torch.utils.data._utils.worker: the loop a
worker runs, get_worker_info(), and the seeding of each worker's random number generators."""
from __future__ import annotations

import os
import pickle
import queue
import random
import sys
import traceback
from dataclasses import dataclass

import numpy as np

from .....core.errors import FgradRuntimeError
from ...._tensor.creation import manual_seed
from . import MP_STATUS_CHECK_INTERVAL
from .fetch import _DatasetKind

__all__ = ["WorkerInfo", "get_worker_info"]


@dataclass(frozen=True)
class WorkerInfo:
    """What get_worker_info() tells code running in a DataLoader worker process: its `id`
    (0 .. num_workers - 1), `num_workers`, the `seed` its `random`, `fgrad` and (derived from it)
    NumPy global generators were seeded with, and `dataset`, this process's copy of the dataset."""

    id: int
    num_workers: int
    seed: int
    dataset: object


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """In a DataLoader worker process: a WorkerInfo (id, num_workers, seed, dataset); in the main
    process: None. Use it in an IterableDataset's `__iter__` or a `worker_init_fn` to give each
    worker its own share of the data."""
    return _worker_info


@dataclass(frozen=True)
class _IterableDatasetStopIteration:
    """A worker's IterableDataset copy is exhausted."""
    worker_id: int


@dataclass(frozen=True)
class _ResumeIteration:
    """Start a new epoch (persistent workers): rebuild the fetcher, i.e. iter(dataset) again."""
    seed: int | None = None


class _KeyErrorMessage(str):
    """KeyError shows repr(message); this keeps the multi-line traceback readable."""

    def __repr__(self) -> str:
        return self


class ExceptionWrapper:
    """An exception raised in a worker, carried to the main process and raised there again, of
    the same type, with the worker's traceback in its message."""

    def __init__(self, exc_info=None, where: str = "in background") -> None:
        exc_info = exc_info or sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where
        try:
            pickle.dumps(self.exc_type)
        except Exception:
            # a class defined inside a function cannot cross processes: keep its name in the text
            self.exc_msg = f"{self.exc_type.__qualname__}: {self.exc_msg}"
            self.exc_type = RuntimeError

    def reraise(self):
        """Raise the worker's exception in this process."""
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = _KeyErrorMessage(msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            # an exception type whose constructor wants other arguments
            raise FgradRuntimeError(msg) from None
        try:
            raise exception
        finally:
            # no cycle exception -> traceback -> this frame -> exception: the DataLoader iterator
            # in the traceback is then freed (and its workers stopped) as soon as the error is
            exception = None


def _generate_state(base_seed: int, worker_id: int) -> list[int]:
    """The 4 x 32-bit NumPy global seed of worker `worker_id`: PyTorch's hash (NumPy's
    SeedSequence algorithm) of (worker_id, base_seed), so workers' NumPy streams differ and match
    PyTorch's for the same base seed."""
    init_a, mult_a, init_b, mult_b = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
    mix_mult_l, mix_mult_r, xshift, mask32 = 0xCA01F9DD, 0x4973F715, 16, 0xFFFFFFFF
    entropy = [worker_id, base_seed & mask32, base_seed >> 32, 0]
    hash_const_a = init_a

    def hash_(value: int) -> int:
        nonlocal hash_const_a
        value = (value ^ hash_const_a) & mask32
        hash_const_a = (hash_const_a * mult_a) & mask32
        value = (value * hash_const_a) & mask32
        return (value ^ (value >> xshift)) & mask32

    def mix(x: int, y: int) -> int:
        result = ((mix_mult_l * x) & mask32) - ((mix_mult_r * y) & mask32)
        result &= mask32
        return (result ^ (result >> xshift)) & mask32

    pool = [hash_(e) for e in entropy]
    for i_src in range(4):
        for i_dst in range(4):
            if i_src != i_dst:
                pool[i_dst] = mix(pool[i_dst], hash_(pool[i_src]))
    hash_const_b = init_b
    state = []
    for value in pool:
        value = (value ^ hash_const_b) & mask32
        hash_const_b = (hash_const_b * mult_b) & mask32
        value = (value * hash_const_b) & mask32
        state.append((value ^ (value >> xshift)) & mask32)
    return state


def _pickled(idx, data, worker_id: int) -> bytes:
    """(idx, data) serialised here, in the worker: a Queue pickles in a background thread, where
    an unpicklable batch would be lost and leave the main process waiting for it."""
    try:
        return pickle.dumps((idx, data), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:
        wrapper = ExceptionWrapper(where=f"in DataLoader worker process {worker_id} (sending a batch "
                                         "back to the main process: it must be picklable)")
        return pickle.dumps((idx, wrapper), protocol=pickle.HIGHEST_PROTOCOL)


def _worker_loop(dataset_kind, dataset, index_queue, data_queue, done_event, auto_collation: bool,
                 collate_fn, drop_last: bool, base_seed: int, init_fn, worker_id: int, num_workers: int,
                 persistent_workers: bool) -> None:
    """A worker process: seed, run worker_init_fn, then answer (task index, batch indices)
    messages with (task index, batch) until told to stop (None) or the parent dies."""
    global _worker_info
    try:
        seed = base_seed + worker_id
        random.seed(seed)
        manual_seed(seed)
        np.random.seed(_generate_state(base_seed, worker_id))
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
        init_exception = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = _DatasetKind.create_fetcher(dataset_kind, dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            init_exception = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
        iteration_end = False
        parent = os.getppid()
        while os.getppid() == parent:  # a worker whose DataLoader process died stops too
            try:
                r = index_queue.get(timeout=MP_STATUS_CHECK_INTERVAL)
            except queue.Empty:
                if done_event.is_set():
                    break  # shut down, though the None that says so was lost (see _shutdown_workers)
                continue
            if isinstance(r, _ResumeIteration):
                data_queue.put(pickle.dumps((r, None)))
                iteration_end = False
                fetcher = _DatasetKind.create_fetcher(dataset_kind, dataset, auto_collation, collate_fn,
                                                      drop_last)
                continue
            if r is None:
                break  # shut down
            if done_event.is_set() or iteration_end:
                continue  # draining: the main process no longer wants batches
            idx, index = r
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                try:
                    data = fetcher.fetch(index)
                except Exception as e:
                    if isinstance(e, StopIteration) and dataset_kind == _DatasetKind.Iterable:
                        data = _IterableDatasetStopIteration(worker_id)
                        # later tasks get no answer: the main process stops sending to this worker
                        iteration_end = True
                    else:
                        data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
            data_queue.put(_pickled(idx, data, worker_id))
            del data, idx, index, r  # free the batch before waiting for the next task
    except KeyboardInterrupt:
        pass  # the main process handles Ctrl-C and shuts the workers down
    if done_event.is_set():
        data_queue.cancel_join_thread()
        data_queue.close()
