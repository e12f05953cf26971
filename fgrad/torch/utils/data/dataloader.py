"""DataLoader (PyTorch's torch.utils.data.dataloader): batches from a dataset, loaded in this
process or in worker processes."""
from __future__ import annotations

import itertools
import math
import multiprocessing
import os
import pickle
import queue
import warnings
from collections.abc import Callable, Iterable
from typing import Any, Generic, TypeVar

import numpy as np

from ....core.errors import (
    FgradNotImplementedError,
    FgradRuntimeError,
    FgradTypeError,
    FgradValueError,
)
from ..._tensor import cuda
from . import _random, _utils
from ._utils import MP_STATUS_CHECK_INTERVAL
from ._utils.collate import default_collate, default_convert
from ._utils.fetch import _DatasetKind
from ._utils.worker import (
    ExceptionWrapper,
    _IterableDatasetStopIteration,
    _ResumeIteration,
    _worker_loop,
    get_worker_info,
)
from .dataset import DataAssertionError, Dataset, IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "get_worker_info", "default_collate", "default_convert"]

T_co = TypeVar("T_co", covariant=True)


class _InfiniteConstantSampler(Sampler):
    """The index stream of an IterableDataset: the dataset, not an index, says what comes next."""

    def __iter__(self):
        while True:
            yield None


def _cpu_count() -> int | None:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count()


class DataLoader(Generic[T_co]):
    """Iterate over `dataset` in batches: PyTorch's DataLoader.

    - dataset: map-style (`__getitem__`/`__len__`) or an IterableDataset.
    - batch_size (default 1), drop_last: batch the samples with `collate_fn` (default
      `default_collate`); batch_size=None yields single samples (through `default_convert`).
    - shuffle / sampler / batch_sampler: the order of indices (map-style datasets only):
      shuffle=True is a RandomSampler drawing from `generator`; a sampler yields indices, a
      batch_sampler lists of indices (then batch_size, shuffle, sampler, drop_last stay unset).
    - generator: an `fgrad.torch.Generator` (`torch.Generator` under `import fgrad.torch as torch`). With a
      seeded one the shuffle order is PyTorch's for the same seed, epoch after epoch (each
      epoch also draws the workers' base seed from it first, as PyTorch does). With None the
      order comes from the default generator: PyTorch's order under the same
      `fgrad.torch.manual_seed`. (An int seed or a NumPy Generator is accepted too.)
    - num_workers: load in that many worker processes (multiprocessing, the default start
      method or `multiprocessing_context`); each holds a copy of the dataset, is seeded with
      base_seed + worker_id (`random`, fgrad and, derived from it, NumPy's global generators),
      runs `worker_init_fn(worker_id)` and sees `get_worker_info()`. Batches come back in order
      (in_order=False: as they are ready). `prefetch_factor` batches per worker are requested
      ahead (default 2); `timeout` (seconds) bounds the wait for one; `persistent_workers` keeps
      the workers between epochs.
    - pin_memory, pin_memory_device: accepted for PyTorch scripts; fgrad copies batches to a GPU
      with `.to(device)`/`.cuda()` and does not page-lock host memory, so they change nothing
      (without a GPU a warning says so, as PyTorch's does).
    """

    __initialized = False

    def __init__(self, dataset: Dataset[T_co], batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler: Sampler | Iterable | None = None, batch_sampler: Sampler | Iterable | None = None,
                 num_workers: int = 0, collate_fn: Callable | None = None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0, worker_init_fn: Callable[[int], None] | None = None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor: int | None = None,
                 persistent_workers: bool = False, pin_memory_device: str = "", in_order: bool = True) -> None:
        if not isinstance(num_workers, (int, np.integer)) or isinstance(num_workers, bool) or num_workers < 0:
            raise FgradValueError(f"num_workers option should be a non-negative int, got {num_workers!r}; "
                             "use num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise FgradValueError(f"timeout option should be non-negative, got {timeout!r}")
        if num_workers == 0 and prefetch_factor is not None:
            raise FgradValueError("prefetch_factor option could only be specified in multiprocessing: let "
                             "num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise FgradValueError(f"prefetch_factor option should be non-negative, got {prefetch_factor!r}")
        if persistent_workers and num_workers == 0:
            raise FgradValueError("persistent_workers option needs num_workers > 0")

        self.dataset = dataset
        self.num_workers = int(num_workers)
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order
        generator = _random.as_generator(generator, "DataLoader generator")

        if isinstance(dataset, IterableDataset):
            self._dataset_kind = _DatasetKind.Iterable
            if shuffle not in (False, None):
                raise FgradValueError("DataLoader with IterableDataset: expected unspecified shuffle option, but got "
                                 f"shuffle={shuffle} (an IterableDataset decides its own order)")
            if sampler is not None:
                raise FgradValueError("DataLoader with IterableDataset: expected unspecified sampler option, but got "
                                 f"sampler={sampler}")
            if batch_sampler is not None:
                raise FgradValueError("DataLoader with IterableDataset: expected unspecified batch_sampler option, "
                                 f"but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
            self._dataset_kind = _DatasetKind.Map

        if sampler is not None and shuffle:
            raise FgradValueError("sampler option is mutually exclusive with shuffle: shuffle inside the sampler "
                             "(e.g. RandomSampler) and leave shuffle unset")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise FgradValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
                                 "and drop_last: the batch_sampler decides all of them")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise FgradValueError("batch_size=None option disables auto-batching and is mutually exclusive with "
                             "drop_last")

        if sampler is None:
            if self._dataset_kind == _DatasetKind.Iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self.__initialized = True
        self._IterableDataset_len_called = None
        self._iterator = None
        self.check_worker_number_rationality()

    @property
    def multiprocessing_context(self):
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context) -> None:
        if context is not None:
            if self.num_workers == 0:
                raise FgradValueError("multiprocessing_context can only be used with multi-process loading "
                                 f"(num_workers > 0), but got num_workers={self.num_workers}")
            if isinstance(context, str):
                methods = multiprocessing.get_all_start_methods()
                if context not in methods:
                    raise FgradValueError(f"multiprocessing_context option should specify a valid start method in "
                                     f"{methods!r}, but got multiprocessing_context={context!r}")
                context = multiprocessing.get_context(context)
            if not isinstance(context, multiprocessing.context.BaseContext):
                raise FgradTypeError("multiprocessing_context option should be a valid context object or a string "
                                f"specifying the start method, but got multiprocessing_context={context}")
        self.__multiprocessing_context = context

    def __setattr__(self, attr, val) -> None:
        if self.__initialized and attr in ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
                                           "persistent_workers"):
            raise FgradValueError(f"{attr} attribute should not be set after {type(self).__name__} is initialized; "
                             "make a new DataLoader instead")
        super().__setattr__(attr, val)

    def _get_iterator(self) -> _BaseDataLoaderIter:
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        self.check_worker_number_rationality()
        return _MultiProcessingDataLoaderIter(self)

    def __iter__(self) -> _BaseDataLoaderIter:
        # persistent workers: one iterator (and its processes) serves every epoch
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self) -> int:
        if self._dataset_kind == _DatasetKind.Iterable:
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                length = length // self.batch_size if self.drop_last else math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)

    def check_worker_number_rationality(self) -> None:
        """Warn when more workers are asked for than this process may use CPUs."""
        if not self.num_workers:
            return
        cpus = _cpu_count()
        if cpus is None or self.num_workers > cpus:
            suggestion = (f"Our suggested max number of worker in current system is {cpus}, which is smaller "
                          "than what this DataLoader is going to create." if cpus is not None else
                          "DataLoader is not able to compute a suggested max number of worker in current system.")
            warnings.warn(f"This DataLoader will create {self.num_workers} worker processes in total. {suggestion} "
                          "Please be aware that excessive worker creation might get DataLoader running slow or "
                          "even freeze, lower the worker number to avoid potential slowness/freeze if necessary.",
                          UserWarning, stacklevel=3)

    def __repr__(self) -> str:
        return (f"DataLoader({self.dataset!r}, batch_size={self.batch_size}, drop_last={self.drop_last}, "
                f"num_workers={self.num_workers})")


class _BaseDataLoaderIter:
    def __init__(self, loader: DataLoader) -> None:
        self._dataset = loader.dataset
        self._dataset_kind = loader._dataset_kind
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        if loader.pin_memory and not cuda.is_available():
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then device "
                          "pinned memory won't be used.", UserWarning, stacklevel=3)
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        # the index iterator first, then the base seed: PyTorch's order of draws from the generator
        # (samplers are lazy, so a shuffle draws its permutation at the first batch, after the seed)
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = _random.draw_seed(loader.generator)
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0

    def __iter__(self) -> _BaseDataLoaderIter:
        return self

    def _reset(self, loader: DataLoader, first_iter: bool = False) -> None:
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_index(self):
        return next(self._sampler_iter)  # may raise StopIteration

    def _next_data(self):
        raise NotImplementedError

    def __next__(self) -> Any:
        data = self._next_data()
        self._num_yielded += 1
        if (self._dataset_kind == _DatasetKind.Iterable and self._IterableDataset_len_called is not None
                and self._num_yielded > self._IterableDataset_len_called):
            msg = (f"Length of IterableDataset {self._dataset} was reported to be {self._IterableDataset_len_called} "
                   f"(when accessing len(dataloader)), but {self._num_yielded} samples have been fetched. ")
            if self._num_workers > 0:
                msg += ("For multiprocessing data-loading, this could be caused by not properly configuring the "
                        "IterableDataset replica at each worker (see get_worker_info()).")
            warnings.warn(msg, UserWarning, stacklevel=2)
        return data

    def __len__(self) -> int:
        return len(self._index_sampler)

    def __getstate__(self):
        raise FgradNotImplementedError(f"{type(self).__name__} cannot be pickled")


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        if self._timeout != 0:
            raise DataAssertionError(f"_SingleProcessDataLoaderIter requires timeout == 0: timeout={self._timeout} "
                                     "bounds the wait for worker processes; with num_workers=0 leave it at 0")
        self._dataset_fetcher = _DatasetKind.create_fetcher(self._dataset_kind, self._dataset, self._auto_collation,
                                                            self._collate_fn, self._drop_last)

    def _next_data(self):
        index = self._next_index()  # may raise StopIteration
        return self._dataset_fetcher.fetch(index)  # may raise StopIteration


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """Batches from `num_workers` processes. Task k (the k-th batch's indices) goes to worker
    k mod num_workers (skipping exhausted ones); up to prefetch_factor * num_workers tasks are
    outstanding; answers are held until their turn, so batches come in order."""

    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        if not self._prefetch_factor or self._prefetch_factor <= 0:
            raise FgradValueError(f"prefetch_factor must be positive with worker processes, got {self._prefetch_factor}")
        ctx = loader.multiprocessing_context or multiprocessing.get_context()
        self._shutdown = False
        self._workers = []
        self._workers_status = []
        self._index_queues = []
        self._worker_result_queue = ctx.Queue()
        self._workers_done_event = ctx.Event()
        try:
            for i in range(self._num_workers):
                index_queue = ctx.Queue()
                # a worker that exits must not wait for its unread tasks to be flushed
                index_queue.cancel_join_thread()
                w = ctx.Process(target=_worker_loop,
                                args=(self._dataset_kind, self._dataset, index_queue, self._worker_result_queue,
                                      self._workers_done_event, self._auto_collation, self._collate_fn,
                                      self._drop_last, self._base_seed, loader.worker_init_fn, i,
                                      self._num_workers, self._persistent_workers),
                                daemon=True)
                w.start()
                self._index_queues.append(index_queue)
                self._workers.append(w)
        except (TypeError, AttributeError, pickle.PicklingError) as e:
            self._workers_status = [True] * len(self._workers)
            self._shutdown_workers()
            raise type(e)(f"{e} (starting a DataLoader worker with the {ctx.get_start_method()!r} start method "
                          "pickles the dataset, collate_fn and worker_init_fn: define them at module level, "
                          "or use multiprocessing_context='fork' where available)") from e
        self._data_queue = self._worker_result_queue
        self._reset(loader, first_iter=True)

    def _reset(self, loader: DataLoader, first_iter: bool = False) -> None:
        super()._reset(loader, first_iter)
        self._send_idx = 0  # index of the next task to send
        self._rcvd_idx = 0  # index of the next task to return
        # task index -> (worker id,) while outstanding, (worker id, data) once answered early
        self._task_info = {}
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._workers_num_tasks = [0] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            # persistent workers: restart each worker's fetcher and wait for all to confirm, so that
            # no answer of the previous epoch is mistaken for one of this epoch
            for q in self._index_queues:
                q.put(_ResumeIteration())
            waiting = self._num_workers
            while waiting > 0:
                idx, _ = self._get_data()
                if isinstance(idx, _ResumeIteration):
                    waiting -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_get_data(self, timeout: float = MP_STATUS_CHECK_INTERVAL):
        try:
            raw = self._data_queue.get(timeout=timeout)
        except queue.Empty:
            failed = [w for i, w in enumerate(self._workers) if self._workers_status[i] and not w.is_alive()]
            if failed:
                for i, w in enumerate(self._workers):
                    if w in failed:
                        self._mark_worker_as_unavailable(i)
                pids = ", ".join(str(w.pid) for w in failed)
                raise FgradRuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly (exit code(s) "
                                   f"{', '.join(str(w.exitcode) for w in failed)}): a crash in the dataset, "
                                   "collate_fn or worker_init_fn code, or the process was killed "
                                   "(e.g. out of memory)") from None
            return False, None
        return True, pickle.loads(raw)

    def _get_data(self):
        if self._timeout > 0:
            ok, data = self._try_get_data(self._timeout)
            if ok:
                return data
            raise FgradRuntimeError(f"DataLoader timed out after {self._timeout} seconds (timeout={self._timeout}: "
                               "no batch arrived from the workers within it; raise timeout or make loading faster)")
        while True:
            ok, data = self._try_get_data()
            if ok:
                return data

    def _next_data(self):
        while True:
            # skip tasks of workers that ended (an IterableDataset copy ran out) and never answered
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info:
                    worker_id = info[0]
                    if len(info) == 2 or self._workers_status[worker_id]:
                        break
                    del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:
                worker_id, data = self._task_info.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if self._dataset_kind == _DatasetKind.Iterable and isinstance(data, _IterableDatasetStopIteration):
                if self._persistent_workers:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                if not self._in_order:
                    worker_id = self._task_info.pop(idx)[0]
                    return self._process_data(data, worker_id)
                self._task_info[idx] += (data,)  # early: hold it until its turn
            else:
                worker_id = self._task_info.pop(idx)[0]
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)

    def _try_put_index(self) -> None:
        max_tasks = self._prefetch_factor * self._num_workers
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):  # the next active worker, if any
            worker_queue_idx = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_queue_idx]:
                if self._in_order or self._workers_num_tasks[worker_queue_idx] < max_tasks // sum(self._workers_status):
                    break
        else:
            return
        self._index_queues[worker_queue_idx].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_queue_idx,)
        self._workers_num_tasks[worker_queue_idx] += 1
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _process_data(self, data, worker_idx: int):
        self._workers_num_tasks[worker_idx] -= 1
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    def _mark_worker_as_unavailable(self, worker_id: int, shutdown: bool = False) -> None:
        # None tells the worker to stop; it may already be gone, which is fine
        self._index_queues[worker_id].put(None)
        self._workers_status[worker_id] = False

    def _shutdown_workers(self) -> None:
        if _utils is None or _utils.python_exit_status or getattr(self, "_shutdown", True):
            return
        self._shutdown = True
        try:
            # Workers stop on the None each gets below, or, should it be lost, at their next wake-up
            # with the event set: when the garbage collector frees this iterator together with its
            # queues, the queues' feeder threads may be closed before this runs.
            self._workers_done_event.set()
            for worker_id in range(len(self._workers)):
                if self._persistent_workers or self._workers_status[worker_id]:
                    self._mark_worker_as_unavailable(worker_id, shutdown=True)
            for w in self._workers:
                w.join(timeout=MP_STATUS_CHECK_INTERVAL)
            for q in self._index_queues:
                q.cancel_join_thread()
                q.close()
            # answers still queued must not keep this process waiting for them at exit
            self._worker_result_queue.cancel_join_thread()
            self._worker_result_queue.close()
        finally:
            for w in self._workers:
                if w.is_alive():
                    w.terminate()
                    w.join(timeout=MP_STATUS_CHECK_INTERVAL)

    def __del__(self) -> None:
        self._shutdown_workers()
