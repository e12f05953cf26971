"""torch.utils.data under `import fgrad.torch as torch`: the import paths, and differential tests against
PyTorch (batches, collate, samplers, random_split, DistributedSampler, seeded shuffles, error
types), plus real worker processes (order, seeding, worker_init_fn, IterableDataset sharding,
errors, crashes, timeouts)."""
from __future__ import annotations

import collections
import multiprocessing
import os
import random
import signal
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest

import fgrad
import fgrad.torch.utils.data as F

Point = collections.namedtuple("Point", ["x", "y"])

# fork starts a worker in milliseconds and needs nothing picklable; where it is missing the
# platform's default is used (every dataset and function below is defined at module level).
CTX = "fork" if "fork" in multiprocessing.get_all_start_methods() else None


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


@pytest.fixture
def deadline():
    """A worker test that hangs fails after 30 s instead of stalling the suite."""
    if not hasattr(signal, "SIGALRM"):
        yield
        return

    def fail(signum, frame):
        raise TimeoutError("DataLoader worker test hung for 30 s")

    old = signal.signal(signal.SIGALRM, fail)
    signal.alarm(30)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def canon(x):
    """A batch as plain data: container types, namedtuple names, tensor dtypes, shapes, values."""
    if type(x).__name__ == "Tensor":  # fgrad.torch.Tensor or torch.Tensor
        return ("tensor", str(x.dtype).split(".")[-1], tuple(x.shape), x.tolist())
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return ("namedtuple", type(x).__name__, x._fields, [canon(v) for v in x])
    if isinstance(x, dict):
        return ("dict", type(x).__name__, {k: canon(v) for k, v in x.items()})
    if isinstance(x, list):
        return ("list", [canon(v) for v in x])
    if isinstance(x, tuple):
        return ("tuple", [canon(v) for v in x])
    return (type(x).__name__, x)


# --- datasets (module level: picklable for any start method) -----------------------------------------------

class Mixed:
    """Samples of every kind default_collate handles, none of them a tensor (so both libraries
    can load the same object)."""

    def __len__(self):
        return 7

    def __getitem__(self, i):
        return {"f": float(i) / 4, "i": i, "b": i % 2 == 0, "s": f"s{i}", "by": bytes([65 + i]),
                "a32": np.full((2,), i, np.float32), "a64": np.arange(3.0) * i, "a16": np.array([i, -i], np.int16),
                "nf": np.float32(i) / 2, "ni": np.int64(i), "nb": np.bool_(i > 2), "p": Point(i, float(i)),
                "t": (i, [float(i), i]), "nested": [{"k": i, "v": np.ones((1, 2), np.float64) * i}]}


class TensorSamples:
    """(x: float32 [3], y: int64 scalar, z: float64 [2, 1]) tensors of `lib` (fgrad or torch)."""

    def __init__(self, lib, n=10):
        self.lib, self.n = lib, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        lib = self.lib
        return (lib.arange(3, dtype=lib.float32) + i, lib.tensor(i), lib.ones(2, 1, dtype=lib.float64) * i)


class Tagged(F.Dataset):
    """Sample i is (i, the id of the worker that loaded it, the tag its worker_init_fn set)."""

    def __init__(self, n=23):
        self.n, self.tag = n, -1

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        info = F.get_worker_info()
        return i, (-1 if info is None else info.id), self.tag


class Stream(F.IterableDataset):
    """range(start, end), each worker taking its contiguous share (PyTorch's docs example)."""

    def __init__(self, start, end):
        self.start, self.end = start, end

    def __iter__(self):
        info = F.get_worker_info()
        if info is None:
            return iter(range(self.start, self.end))
        per = -(-(self.end - self.start) // info.num_workers)
        lo = self.start + info.id * per
        return iter(range(lo, min(lo + per, self.end)))


class Failing(F.Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        if i == 4:
            raise KeyError(f"no sample {i}")
        return i


class Crashing(F.Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        if F.get_worker_info() is not None and i == 3:
            os._exit(3)  # the worker process dies without a Python exception
        return i


class Slow(F.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        if F.get_worker_info() is not None:
            time.sleep(0.3)
        return i


class Seeds:
    """Draws from the worker's global generators: NumPy, random, fgrad."""

    def __init__(self, get_worker_info):
        self.get_worker_info = get_worker_info

    def __len__(self):
        return 8

    def __getitem__(self, i):
        info = self.get_worker_info()
        return (i, int(np.random.randint(1 << 30)), random.random(), info.seed, info.id,
                float(fgrad.torch.rand(()).item()))


def tag_worker(worker_id):
    info = F.get_worker_info()
    assert info is not None and info.id == worker_id
    info.dataset.tag = 100 + worker_id


# --- import paths ---------------------------------------------------------------------------------------------

def test_torch_utils_data_import_paths():
    import fgrad.torch as torch_like
    import fgrad.torch.utils.data as via_package
    from fgrad.torch.utils.data import DataLoader
    from fgrad.torch.utils.data._utils.collate import default_collate
    from fgrad.torch.utils.data.dataloader import DataLoader as DL2
    from fgrad.torch.utils.data.sampler import SubsetRandomSampler

    assert torch_like.utils.data is fgrad.torch.utils.data is via_package
    assert DataLoader is DL2 is fgrad.torch.utils.data.DataLoader
    assert SubsetRandomSampler is fgrad.torch.utils.data.SubsetRandomSampler
    assert default_collate is fgrad.torch.utils.data.default_collate
    for name in ("Dataset", "TensorDataset", "IterableDataset", "Subset", "ConcatDataset", "ChainDataset",
                 "StackDataset", "random_split", "Sampler", "SequentialSampler", "RandomSampler",
                 "SubsetRandomSampler", "WeightedRandomSampler", "BatchSampler", "DistributedSampler",
                 "default_collate", "default_convert", "get_worker_info", "DataLoader"):
        assert callable(getattr(torch_like.utils.data, name)), name


def test_import_fgrad_utils_data_first_in_a_fresh_interpreter():
    code = ("import fgrad.torch.utils.data.sampler as s, fgrad.torch.utils.data.sampler as t, sys; "
            "from fgrad.torch.utils.data import DataLoader; import fgrad.torch as torch; "
            "assert s is t and torch.utils.data.DataLoader is DataLoader; "
            "assert not [m for m in sys.modules if m.startswith('fgrad.torch.utils.data') and "
            "sys.modules[m] is not sys.modules['fgrad.torch.utils.data' + m[len('fgrad.torch.utils.data'):]]]; "
            "print(list(DataLoader(range(5), batch_size=2))[-1].tolist())")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip() == "[4]"


# --- batches and collate, against PyTorch ---------------------------------------------------------------------

@pytest.mark.parametrize("kwargs", [dict(batch_size=3), dict(batch_size=1), dict(batch_size=3, drop_last=True),
                                    dict(batch_size=None), dict(batch_size=7)])
def test_mixed_samples_batch_as_in_torch(torch, kwargs):
    import torch.utils.data as T
    ours = [canon(b) for b in F.DataLoader(Mixed(), **kwargs)]
    theirs = [canon(b) for b in T.DataLoader(Mixed(), **kwargs)]
    assert ours == theirs
    assert len(F.DataLoader(Mixed(), **kwargs)) == len(T.DataLoader(Mixed(), **kwargs))


def test_python_floats_collate_to_float64_like_torch(torch):
    import torch.utils.data as T
    for batch in ([0.5, 1.25], [1, 2], [True, False], [1.0, 2], [1, 2.5], [True, 2]):
        assert canon(F.default_collate(batch)) == canon(T.default_collate(batch)), batch
    assert F.default_collate([0.1, 0.2]).dtype == fgrad.torch.float64
    assert F.default_collate([0.1, 0.2]).tolist() == [0.1, 0.2]  # no trip through float32


@pytest.mark.parametrize("batch_size", [1, 4])
@pytest.mark.parametrize("shuffle_free", ["tensor_dataset", "tensor_samples", "subset"])
def test_tensor_batches_as_in_torch(torch, batch_size, shuffle_free):
    import torch.utils.data as T

    def loader(M, lib):
        if shuffle_free == "tensor_dataset":
            ds = M.TensorDataset(lib.arange(20, dtype=lib.float32).reshape(10, 2), lib.arange(10),
                                 lib.arange(10, dtype=lib.float64) * 0.5)
        elif shuffle_free == "tensor_samples":
            ds = TensorSamples(lib)
        else:
            ds = M.Subset(M.TensorDataset(lib.arange(10) * 3), [9, 2, 4, 4, 0, -1])
        return M.DataLoader(ds, batch_size=batch_size)

    ours = [canon(b) for b in loader(F, fgrad.torch)]
    theirs = [canon(b) for b in loader(T, torch)]
    assert ours == theirs and ours


def test_nested_collate_and_convert_as_in_torch(torch):
    import torch.utils.data as T
    samples = [Mixed()[i] for i in range(4)]
    assert canon(F.default_collate(samples)) == canon(T.default_collate(samples))
    for s in samples[:2]:
        assert canon(F.default_convert(s)) == canon(T.default_convert(s))
    ordered = [collections.OrderedDict(a=i, b=(float(i),)) for i in range(3)]
    out = F.default_collate(ordered)
    assert type(out) is collections.OrderedDict and canon(out) == canon(T.default_collate(ordered))
    x = [fgrad.torch.ones(2, dtype=fgrad.torch.int64), fgrad.torch.zeros(2, dtype=fgrad.torch.float32)]
    assert canon(F.default_collate(x)) == canon(T.default_collate([torch.ones(2, dtype=torch.int64),
                                                                   torch.zeros(2)]))


def test_collated_batch_owns_its_memory_and_keeps_the_graph():
    x = fgrad.torch.arange(6, dtype=fgrad.torch.float32).reshape(3, 2)
    ds = F.TensorDataset(x)
    (batch,) = next(iter(F.DataLoader(ds, batch_size=3)))
    batch[0, 0] = 100.0
    assert x[0, 0].item() == 0.0  # a batch is a copy
    w = fgrad.torch.ones(2, requires_grad=True)
    out = F.default_collate([w * 2, w * 3])
    out.sum().backward()
    assert w.grad.tolist() == [5.0, 5.0]


def test_error_types_match_torch(torch):
    import torch.utils.data as T

    def both(make):
        errors = []
        for M, lib in ((T, torch), (F, fgrad.torch)):
            try:
                make(M, lib)
            except Exception as e:  # noqa: BLE001 (comparing what each library raises)
                errors.append(e)
            else:
                errors.append(None)
        return errors

    cases = {
        "shuffle+sampler": lambda M, lib: M.DataLoader(range(4), shuffle=True, sampler=[0, 1]),
        "batch_sampler+batch_size": lambda M, lib: M.DataLoader(range(4), batch_size=2, batch_sampler=[[0]]),
        "batch_size None+drop_last": lambda M, lib: M.DataLoader(range(4), batch_size=None, drop_last=True),
        "negative workers": lambda M, lib: M.DataLoader(range(4), num_workers=-1),
        "persistent without workers": lambda M, lib: M.DataLoader(range(4), persistent_workers=True),
        "prefetch without workers": lambda M, lib: M.DataLoader(range(4), prefetch_factor=2),
        "iterable+shuffle": lambda M, lib: M.DataLoader(
            type("S", (M.IterableDataset,), {"__iter__": lambda self: iter(range(3))})(), shuffle=True),
        "batch_size 0": lambda M, lib: M.DataLoader(range(4), batch_size=0),
        "set attribute": lambda M, lib: setattr(M.DataLoader(range(4)), "batch_size", 2),
        "timeout without workers": lambda M, lib: list(M.DataLoader(range(3), timeout=1)),
        "BatchSampler drop_last": lambda M, lib: M.BatchSampler(range(3), 2, drop_last=1),
        "RandomSampler replacement": lambda M, lib: M.RandomSampler(range(3), replacement=1),
        "RandomSampler num_samples": lambda M, lib: M.RandomSampler(range(3), num_samples=0),
        "Weighted num_samples": lambda M, lib: M.WeightedRandomSampler([1.0, 2.0], 0),
        "Weighted 2-d": lambda M, lib: M.WeightedRandomSampler([[1.0, 2.0]], 2),
        "Weighted negative": lambda M, lib: list(M.WeightedRandomSampler([1.0, -2.0], 2)),
        "Weighted too many": lambda M, lib: list(M.WeightedRandomSampler([1.0, 2.0], 3, replacement=False)),
        "TensorDataset sizes": lambda M, lib: M.TensorDataset(lib.zeros(3), lib.zeros(4)),
        "ConcatDataset empty": lambda M, lib: M.ConcatDataset([]),
        "random_split sum": lambda M, lib: M.random_split(range(10), [3, 3]),
        "random_split fraction": lambda M, lib: M.random_split(range(10), [1.5, -0.5]),
        "collate None": lambda M, lib: M.default_collate([None, None]),
        "collate ragged tensors": lambda M, lib: M.default_collate([lib.zeros(2), lib.zeros(3)]),
        "collate ragged tuples": lambda M, lib: M.default_collate([(1, 2), (1,)]),
        "collate str arrays": lambda M, lib: M.default_collate([np.array(["a"]), np.array(["b"])]),
        "DistributedSampler rank": lambda M, lib: M.DistributedSampler(range(4), num_replicas=2, rank=2),
    }
    for name, make in cases.items():
        theirs, ours = both(make)
        assert theirs is not None and ours is not None, name
        assert isinstance(ours, type(theirs)), f"{name}: torch {type(theirs).__name__}, fgrad {type(ours).__name__}"


# --- samplers, splits and shuffles with a seeded generator, against PyTorch ----------------------------------

def test_seeded_samplers_draw_torchs_indices(torch):
    import torch.utils.data as T

    def draws(M, lib):
        g = lib.Generator().manual_seed(5)
        w = [0.1, 0.9, 0.4, 0.7, 3.0, 0.6, 0.0, 2.5]
        return [list(M.RandomSampler(range(10), generator=g)),
                list(M.RandomSampler(range(10), replacement=True, num_samples=70, generator=g)),
                list(M.RandomSampler(range(10), num_samples=25, generator=g)),
                list(M.SubsetRandomSampler([5, 7, 9, 11, 13], generator=g)),
                list(M.WeightedRandomSampler(w, 40, replacement=True, generator=g)),
                list(M.WeightedRandomSampler(w, 6, replacement=False, generator=g)),
                list(M.WeightedRandomSampler(w, 1, generator=g)),
                list(M.RandomSampler(range(300), generator=g)),
                list(M.WeightedRandomSampler(np.linspace(0.5, 2, 200), 50, replacement=False, generator=g))]

    assert draws(F, fgrad.torch) == draws(T, torch)


def test_sampler_lengths_as_in_torch(torch):
    import torch.utils.data as T

    def lengths(M):
        return [len(M.SequentialSampler(range(7))), len(M.RandomSampler(range(7))),
                len(M.RandomSampler(range(7), replacement=True, num_samples=3)), len(M.SubsetRandomSampler([1, 2])),
                len(M.WeightedRandomSampler([1.0, 1.0], 5)), len(M.BatchSampler(range(7), 3, False)),
                len(M.BatchSampler(range(7), 3, True)), len(M.DataLoader(range(7), batch_size=3)),
                len(M.DataLoader(range(7), batch_size=3, drop_last=True)), len(M.DataLoader(range(7), batch_size=None))]

    assert lengths(F) == lengths(T)
    assert list(F.BatchSampler(F.SequentialSampler(range(10)), 3, False)) == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    assert list(F.BatchSampler(F.SequentialSampler(range(10)), 3, True)) == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]


@pytest.mark.parametrize("lengths", [[3, 7], [0.3, 0.3, 0.4], [0.5, 0.5], [1 / 3] * 3, [10, 0]])
def test_random_split_as_in_torch(torch, lengths):
    import torch.utils.data as T
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a zero-length split warns in both
        ours = F.random_split(range(10), lengths, generator=fgrad.torch.Generator().manual_seed(42))
        theirs = T.random_split(range(10), lengths, generator=torch.Generator().manual_seed(42))
    assert [list(s.indices) for s in ours] == [list(s.indices) for s in theirs]
    assert sorted(i for s in ours for i in s.indices) == list(range(10))  # disjoint, complete
    assert [len(s) for s in ours] == [len(s) for s in theirs]
    assert [s[0] for s in ours if len(s)] == [s.indices[0] for s in ours if len(s)]


def test_random_split_without_generator_is_seeded_by_manual_seed():
    fgrad.torch.manual_seed(3)
    a = [s.indices for s in F.random_split(range(50), [0.5, 0.5])]
    fgrad.torch.manual_seed(3)
    b = [s.indices for s in F.random_split(range(50), [0.5, 0.5])]
    assert a == b and sorted(a[0] + a[1]) == list(range(50)) and len(a[0]) == 25
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        F.random_split(range(3), [1.0, 0.0])


@pytest.mark.parametrize("n,replicas,drop_last,shuffle,seed,epoch",
                         [(11, 3, False, True, 7, 2), (11, 3, True, True, 0, 0), (10, 4, False, False, 0, 0),
                          (2, 5, False, True, 1, 3), (100, 8, True, True, 123, 9)])
def test_distributed_sampler_as_in_torch(torch, n, replicas, drop_last, shuffle, seed, epoch):
    import torch.utils.data as T
    per_rank = []
    for M in (F, T):
        ranks = []
        for r in range(replicas):
            s = M.DistributedSampler(range(n), num_replicas=replicas, rank=r, shuffle=shuffle, seed=seed,
                                     drop_last=drop_last)
            s.set_epoch(epoch)
            ranks.append((len(s), list(s)))
        per_rank.append(ranks)
    assert per_rank[0] == per_rank[1]
    ours = [idx for _, idx in per_rank[0]]
    if drop_last:  # a partition of part of the data
        flat = [i for r in ours for i in r]
        assert len(flat) == len(set(flat)) == n - n % replicas
    else:  # every index, padded so every rank gets the same count
        assert set(i for r in ours for i in r) == set(range(n)) and len({len(r) for r in ours}) == 1


def test_distributed_sampler_needs_replicas_and_rank():
    with pytest.raises(RuntimeError, match="pass num_replicas and rank explicitly"):
        F.DistributedSampler(range(4))


def test_seeded_shuffle_matches_torch_across_epochs_loaders_and_workers(torch, deadline):
    import torch.utils.data as T

    def epochs(M, lib):
        g = lib.Generator().manual_seed(0)
        ds = M.TensorDataset(lib.arange(23))
        out = []
        for workers, persistent in ((0, False), (2, True), (2, False)):
            dl = M.DataLoader(ds, batch_size=5, shuffle=True, generator=g, num_workers=workers,
                              persistent_workers=persistent,
                              multiprocessing_context=CTX if workers else None)
            out += [[b[0].tolist() for b in dl] for _ in range(2)]
        return out

    ours = epochs(F, fgrad.torch)
    assert ours == epochs(T, torch)
    assert ours[0] != ours[1] and sorted(sum(ours[0], [])) == list(range(23))


def test_worker_seeds_match_torch(torch, deadline):
    import torch.utils.data as T

    def batches(M, lib):
        dl = M.DataLoader(Seeds(M.get_worker_info), batch_size=2, num_workers=2,
                          generator=lib.Generator().manual_seed(3), multiprocessing_context=CTX)
        return [[c.tolist() for c in b] for b in dl]

    ours, theirs = batches(F, fgrad.torch), batches(T, torch)
    # NumPy's and Python's global generators, the worker seeds and ids are PyTorch's; fgrad's own
    # generator (PCG64) is seeded with the same number but draws other values
    assert [b[:5] for b in ours] == [b[:5] for b in theirs]
    assert ours[0][3] == [ours[0][3][0]] * 2 and ours[1][3][0] == ours[0][3][0] + 1


def test_unseeded_shuffle_follows_fgrad_manual_seed():
    ds = F.TensorDataset(fgrad.torch.arange(40))
    fgrad.torch.manual_seed(11)
    a = [b[0].tolist() for b in F.DataLoader(ds, batch_size=8, shuffle=True)]
    fgrad.torch.manual_seed(11)
    b = [b[0].tolist() for b in F.DataLoader(ds, batch_size=8, shuffle=True)]
    assert a == b and sorted(sum(a, [])) == list(range(40)) and sum(a, []) != list(range(40))


def test_generator_argument_is_checked():
    with pytest.raises(TypeError, match="fgrad.torch.Generator"):
        F.DataLoader(range(3), shuffle=True, generator="seed")
    g = fgrad.torch.Generator().manual_seed(1)
    first = list(F.RandomSampler(range(9), generator=g))
    g.manual_seed(1)  # reseeding restarts the sampling stream, as for a torch.Generator
    assert list(F.RandomSampler(range(9), generator=g)) == first


# --- worker processes -------------------------------------------------------------------------------------------

def _rows(loader):
    return [[c.tolist() for c in batch] for batch in loader]


@pytest.mark.parametrize("batch_size", [4, None])
def test_two_workers_give_the_same_batches_in_order(deadline, batch_size):
    single = list(F.DataLoader(Tagged(), batch_size=batch_size))
    multi = list(F.DataLoader(Tagged(), batch_size=batch_size, num_workers=2, multiprocessing_context=CTX))
    if batch_size is None:
        assert [s[0] for s in multi] == [s[0] for s in single] == list(range(23))
        assert {s[1] for s in multi} == {0, 1}
        return
    assert [b[0].tolist() for b in multi] == [b[0].tolist() for b in single]
    assert [b[1].tolist() for b in single] == [[-1] * len(b[0]) for b in single]
    # batch k comes from worker k % 2
    assert [b[1].tolist() for b in multi] == [[k % 2] * len(b[0]) for k, b in enumerate(multi)]


def test_out_of_order_and_spawned_workers(deadline):
    ds = F.TensorDataset(fgrad.torch.arange(10))
    unordered = [b[0].tolist() for b in F.DataLoader(ds, batch_size=3, num_workers=2, in_order=False,
                                                     multiprocessing_context=CTX)]
    assert sorted(map(tuple, unordered)) == [(0, 1, 2), (3, 4, 5), (6, 7, 8), (9,)]
    # spawn: a fresh interpreter per worker, so the dataset, the collate function and the worker
    # loop must all cross by pickling (the default start method on macOS and Windows)
    spawned = [b[0].tolist() for b in F.DataLoader(ds, batch_size=4, num_workers=1, multiprocessing_context="spawn")]
    assert spawned == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]


def test_worker_init_fn_runs_in_each_worker_on_its_dataset_copy(deadline):
    ds = Tagged(12)
    dl = F.DataLoader(ds, batch_size=3, num_workers=2, worker_init_fn=tag_worker, multiprocessing_context=CTX)
    rows = _rows(dl)
    assert [r[2] for r in rows] == [[100] * 3, [101] * 3, [100] * 3, [101] * 3]
    assert ds.tag == -1  # the main process's dataset is untouched
    assert F.get_worker_info() is None


def test_iterable_dataset_sharded_by_worker_info(deadline):
    assert [b.tolist() for b in F.DataLoader(Stream(3, 7))] == [[3], [4], [5], [6]]
    got = [b.tolist() for b in F.DataLoader(Stream(3, 7), num_workers=2, multiprocessing_context=CTX)]
    assert got == [[3], [5], [4], [6]]  # PyTorch's documented order: workers take turns
    got = [b.tolist() for b in F.DataLoader(Stream(0, 10), batch_size=3, num_workers=2, multiprocessing_context=CTX)]
    assert sorted(sum(got, [])) == list(range(10))


def test_persistent_workers_serve_several_epochs(deadline):
    dl = F.DataLoader(Tagged(10), batch_size=4, num_workers=2, persistent_workers=True, prefetch_factor=1,
                      multiprocessing_context=CTX)
    first = _rows(dl)
    it = dl._iterator
    assert _rows(dl) == first and dl._iterator is it
    assert [r[0] for r in first] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    it._shutdown_workers()
    assert not any(w.is_alive() for w in it._workers)


def test_worker_exception_is_raised_with_its_type_and_traceback(deadline):
    with pytest.raises(KeyError, match="in DataLoader worker process 0"):
        list(F.DataLoader(Failing(), batch_size=2, num_workers=2, multiprocessing_context=CTX))
    with pytest.raises(KeyError) as info:
        list(F.DataLoader(Failing(), batch_size=2))
    assert "no sample 4" in str(info.value)


def test_dead_worker_and_timeout_raise_instead_of_hanging(deadline):
    with pytest.raises(RuntimeError, match="exited unexpectedly"):
        list(F.DataLoader(Crashing(), batch_size=2, num_workers=2, multiprocessing_context=CTX))
    with pytest.raises(RuntimeError, match="timed out after 0.2 seconds"):
        list(F.DataLoader(Slow(), num_workers=1, timeout=0.2, multiprocessing_context=CTX))


def test_breaking_out_of_an_epoch_stops_the_workers(deadline):
    it = iter(F.DataLoader(Tagged(40), batch_size=2, num_workers=2, multiprocessing_context=CTX))
    next(it)
    workers = list(it._workers)
    del it
    for w in workers:
        w.join(timeout=5)
    assert not any(w.is_alive() for w in workers)


# --- the remaining DataLoader options ---------------------------------------------------------------------------

def test_sampler_and_batch_sampler_arguments():
    ds = F.TensorDataset(fgrad.torch.arange(10) * 10)
    assert [b[0].tolist() for b in F.DataLoader(ds, batch_size=2, sampler=[9, 0, 5])] == [[90, 0], [50]]
    assert [b[0].tolist() for b in F.DataLoader(ds, batch_sampler=[[1, 2, 3], [7]])] == [[10, 20, 30], [70]]
    dl = F.DataLoader(ds, batch_size=None, sampler=F.SequentialSampler(range(3)))
    assert [x[0].tolist() for x in dl] == [0, 10, 20] and len(dl) == 3
    assert [x.tolist() for x in F.DataLoader(range(4), batch_size=3, collate_fn=lambda b: fgrad.torch.tensor(b) * 2)] \
        == [[0, 2, 4], [6]]


def test_pin_memory_is_accepted_and_changes_nothing():
    ds = F.TensorDataset(fgrad.torch.arange(6, dtype=fgrad.torch.float32))
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        pinned = [b[0].tolist() for b in F.DataLoader(ds, batch_size=4, pin_memory=True)]
    assert pinned == [[0.0, 1.0, 2.0, 3.0], [4.0, 5.0]]


def test_stack_concat_chain_and_subset_datasets():
    a, b = F.TensorDataset(fgrad.torch.arange(3)), F.TensorDataset(fgrad.torch.arange(10, 12))
    cat = a + b
    assert isinstance(cat, F.ConcatDataset) and len(cat) == 5 and cat[3][0].item() == 10 and cat[-1][0].item() == 11
    stack = F.StackDataset(x=a, y=F.Subset(b, [1, 0, 1]))
    assert [(s["x"][0].item(), s["y"][0].item()) for s in (stack[i] for i in range(3))] == [(0, 11), (1, 10), (2, 11)]
    batch = next(iter(F.DataLoader(stack, batch_size=3)))
    assert batch["x"][0].tolist() == [0, 1, 2] and batch["y"][0].tolist() == [11, 10, 11]
    chain = Stream(0, 2) + Stream(5, 7)
    assert isinstance(chain, F.ChainDataset) and list(chain) == [0, 1, 5, 6]
