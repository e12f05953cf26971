"""Checks that run on every rank of an MPI job: tests/distributed/test_distributed.py launches
`mpirun -n N python -m pytest tests/distributed/mpi_checks.py` (the file name keeps pytest's
own collection away from it: outside mpirun it would be a job of one rank).

Every rank runs the same tests in the same order, so their collectives meet. Expected
values are computed locally from what each rank is known to hold (a function of the rank),
and single-process references are computed by every rank on the whole global batch."""
from __future__ import annotations

import os

import numpy as np
import pytest

import fgrad
import fgrad.distributed as dist
import fgrad.torch.nn as nn
import fgrad.torch.nn.functional as F
import fgrad.numpy as fnp
from fgrad.torch.utils.data import DistributedSampler
from fgrad.tree_util import tree_map

TIMEOUT = 20.0  # a desynchronised test fails after this instead of hanging the job


@pytest.fixture(scope="module", autouse=True)
def group():
    dist.init(timeout=TIMEOUT)
    yield
    dist.barrier()


def R() -> int:
    return dist.rank()


def N() -> int:
    return dist.world_size()


def test_rank_and_world_size_are_the_jobs():
    assert N() == int(os.environ["FGRAD_TEST_WORLD"])
    assert 0 <= R() < N() and dist.is_initialized()
    ranks = dist.all_reduce(np.eye(N(), dtype=np.int64)[R()], "sum")
    np.testing.assert_array_equal(ranks, np.ones(N()))  # every rank has a different rank


def _tree(r: int) -> dict:
    """A mixed tree whose values are a known function of the rank."""
    return {"f32": np.arange(6, dtype=np.float32).reshape(2, 3) * (r + 1) - r,
            "f64": np.float64(0.5 * r),
            "i32": np.array([r, -r, 3], np.int32),
            "f16": np.array([r, 1], np.float16),
            "py": [float(r), 7 * r],
            "flag": np.array([r == 0, True]),
            "t": fgrad.torch.tensor([[1.0 * r, 2.0]])}


def _expected(op: str) -> dict:
    trees = [_tree(r) for r in range(N())]
    out = {}
    for key in trees[0]:
        if key == "py":
            continue
        vals = np.stack([np.asarray(t[key].numpy() if key == "t" else t[key]) for t in trees])
        out[key] = {"mean": vals.mean(0), "sum": vals.sum(0), "max": vals.max(0), "min": vals.min(0)}[op]
    return out


@pytest.mark.parametrize("op", ["mean", "sum", "max", "min"])
def test_all_reduce_of_a_mixed_tree(op):
    got = dist.all_reduce(_tree(R()), op)
    want = _expected(op)
    for key in ("f32", "f64", "i32", "f16", "flag"):
        np.testing.assert_allclose(np.asarray(got[key], dtype=np.float64), np.asarray(want[key], np.float64),
                                   rtol=1e-3 if key == "f16" else 1e-6, err_msg=key)
    np.testing.assert_allclose(got["t"].numpy(), want["t"], rtol=1e-6)
    # dtypes: floats keep theirs; mean of integers is float64 as np.mean; max/min of bools are any/all
    assert got["f32"].dtype == np.float32 and got["f16"].dtype == np.float16
    assert isinstance(got["f64"], np.float64)
    assert got["i32"].dtype == (np.float64 if op == "mean" else np.int32)
    assert got["flag"].dtype == {"mean": np.float64, "sum": np.int64}.get(op, bool)
    assert isinstance(got["t"], fgrad.torch.Tensor) and got["t"].dtype == fgrad.torch.float32
    py = [[float(r), 7 * r] for r in range(N())]
    reduce = {"mean": np.mean, "sum": np.sum, "max": np.max, "min": np.min}[op]
    assert got["py"][0] == pytest.approx(reduce([p[0] for p in py]))
    assert got["py"][1] == pytest.approx(reduce([p[1] for p in py]))
    assert type(got["py"][0]) is float and type(got["py"][1]) is (float if op == "mean" else int)


def test_all_reduce_leaves_its_input_alone_and_takes_tensors_with_grad():
    x = np.full(4, float(R()))
    w = fgrad.torch.tensor([1.0 + R()], requires_grad=True)
    out = dist.all_reduce({"x": x, "w": w}, "sum")
    np.testing.assert_array_equal(x, np.full(4, float(R())))
    assert out["w"].item() == sum(1.0 + r for r in range(N())) and not out["w"].requires_grad


def test_all_reduce_complex_sum_and_refuses_complex_max():
    z = np.array([1 + 1j * R()], np.complex64)
    out = dist.all_reduce(z, "sum")
    assert out.dtype == np.complex64 and out[0] == N() + 1j * sum(range(N()))
    with pytest.raises(TypeError, match="not defined for complex"):
        dist.all_reduce(z, "max")


def test_all_reduce_names_the_leaf_that_differs_on_every_rank():
    if N() == 1:
        pytest.skip("needs two ranks to differ")
    tree = {"a": np.zeros(3), "b": np.zeros((2, 2 + (R() == N() - 1)), np.float32)}
    with pytest.raises(dist.DistributedError, match=r"leaf \['b'\] is float32\[2, 2\] on rank 0 but "
                                                    rf"float32\[2, 3\] on rank {N() - 1}"):
        dist.all_reduce(tree)
    with pytest.raises(dist.DistributedError, match="rank 0 called it with all_reduce"):
        dist.all_reduce(np.zeros(2), "sum" if R() == 0 else "max")
    with pytest.raises(ValueError, match="op must be one of"):
        dist.all_reduce(np.zeros(2), "prod")
    with pytest.raises(TypeError, match=r"leaf \['s'\] is a str"):
        dist.all_reduce({"s": "text"})
    dist.barrier()


@pytest.mark.parametrize("root_from_end", [False, True])
def test_broadcast_copies_roots_bits_of_every_dtype(root_from_end):
    root = N() - 1 if root_from_end else 0
    mine = {"h": np.array([0.1, R()], np.float16), "b": np.array([R() == root, False]),
            "i": np.array([R(), -7], np.int8), "t": fgrad.torch.tensor([float(R())]), "n": 3 + R()}
    before = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in mine.items()}
    got = dist.broadcast(mine, root=root)
    np.testing.assert_array_equal(got["h"], np.array([0.1, root], np.float16))
    np.testing.assert_array_equal(got["b"], [True, False])
    np.testing.assert_array_equal(got["i"], np.array([root, -7], np.int8))
    assert got["t"].item() == float(root) and got["n"] == 3 + root
    assert got["h"].dtype == np.float16 and got["i"].dtype == np.int8
    np.testing.assert_array_equal(mine["h"], before["h"])  # inputs are not written
    with pytest.raises(ValueError, match="root must be a rank"):
        dist.broadcast(mine, root=N())


def test_distributed_sampler_takes_the_group_and_covers_the_data_without_overlap():
    n = 23
    for drop_last in (False, True):
        s = DistributedSampler(range(n), shuffle=True, seed=3, drop_last=drop_last)
        assert (s.num_replicas, s.rank) == (N(), R())
        s.set_epoch(1)
        counts = np.bincount(np.fromiter(iter(s), np.int64), minlength=n)
        total = dist.all_reduce(counts, "sum")
        if drop_last:  # a partition of n - n % N indices: none twice
            assert total.max() <= 1 and total.sum() == n - n % N()
        else:          # every index, the padding (the order's start) once more
            assert total.min() >= 1 and total.sum() == -(-n // N()) * N()
            assert (total == 2).sum() == total.sum() - n
    explicit = DistributedSampler(range(n), num_replicas=1, rank=0, shuffle=False)
    assert list(explicit) == list(range(n))


# --- DistributedDataParallel ---------------------------------------------------------------------

def _mlp(seed: int) -> nn.Module:
    fgrad.torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(12, 32), nn.Tanh(), nn.Linear(32, 16), nn.ReLU(), nn.Linear(16, 4))


def _batches(steps: int, global_batch: int):
    rng = np.random.default_rng(42)
    return [(rng.standard_normal((global_batch, 12)).astype(np.float32), rng.integers(0, 4, global_batch))
            for _ in range(steps)]


def _shard(a: np.ndarray) -> np.ndarray:
    per = len(a) // N()
    return a[R() * per:(R() + 1) * per]


def _train(net, batches, shard: bool):
    opt = fgrad.torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    for x, y in batches:
        if shard:
            x, y = _shard(x), _shard(y)
        opt.zero_grad()
        F.cross_entropy(net(fgrad.torch.tensor(x)), fgrad.torch.tensor(y)).backward()
        opt.step()


def test_ddp_starts_from_rank_0s_weights_and_trains_like_one_process():
    batches = _batches(4, 6 * N())
    reference = _mlp(seed=0)
    _train(reference, batches, shard=False)           # one process, the whole global batch
    net = _mlp(seed=R())                              # a different initialisation on each rank...
    ddp = dist.DistributedDataParallel(net, bucket_cap_mb=0.0003)
    first = _mlp(seed=0)
    for p, q in zip(net.parameters(), first.parameters()):  # ...replaced by rank 0's
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
    assert len(ddp.bucket_sizes) >= 3 and sum(ddp.bucket_sizes) == 6
    _train(ddp, batches, shard=True)
    for (name, p), q in zip(net.named_parameters(), reference.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-5, atol=1e-6, err_msg=name)
    assert list(ddp.state_dict())[0].startswith("module.")


def test_ddp_reduces_buckets_while_backward_runs():
    """The first bucket (the last layer's gradients) is started before the walk reaches the
    first layer: its request exists when the first layer's ready hook runs."""
    net = _mlp(seed=0)
    ddp = dist.DistributedDataParallel(net, bucket_cap_mb=0.0003)
    reducer = ddp._reducer
    seen = []
    i = reducer.params.index(net[0].weight)
    original = reducer._ready

    def spy(j, ct):
        if j == i:
            seen.append(reducer.buckets[0].request is not None)
        return original(j, ct)
    reducer._ready = spy
    x, y = _batches(1, 4 * N())[0]
    F.cross_entropy(ddp(fgrad.torch.tensor(_shard(x))), fgrad.torch.tensor(_shard(y))).backward()
    assert seen == [True]
    assert all(p.grad is not None for p in net.parameters())


def test_ddp_parameters_unused_on_some_ranks_and_on_all():
    class Branchy(nn.Module):
        def __init__(self):
            super().__init__()
            self.shared = nn.Linear(3, 2)
            self.rank0_only = nn.Linear(3, 2)
            self.never = nn.Linear(3, 2)

        def forward(self, x, use_branch):
            out = self.shared(x)
            return out + self.rank0_only(x) if use_branch else out

    fgrad.torch.manual_seed(0)
    net = Branchy()
    ddp = dist.DistributedDataParallel(net)
    x = fgrad.torch.tensor(np.full((2, 3), 1.0 + R(), np.float32))
    ddp(x, R() == 0).sum().backward()
    # d(sum)/d(bias) = batch size 2 where used, 0 where not: the mean over ranks
    np.testing.assert_allclose(net.shared.bias.grad.numpy(), [2.0, 2.0])
    np.testing.assert_allclose(net.rank0_only.bias.grad.numpy(), [2.0 / N()] * 2)
    assert net.never.weight.grad is None and net.never.bias.grad is None


def test_ddp_no_sync_accumulates_locally_then_averages_the_sum():
    batches = _batches(2, 4 * N())
    reference = _mlp(seed=0)
    for x, y in batches:
        F.cross_entropy(reference(fgrad.torch.tensor(x)), fgrad.torch.tensor(y)).backward()
    net = _mlp(seed=0)
    ddp = dist.DistributedDataParallel(net, bucket_cap_mb=0.0003)
    (x0, y0), (x1, y1) = batches
    with ddp.no_sync():
        F.cross_entropy(ddp(fgrad.torch.tensor(_shard(x0))), fgrad.torch.tensor(_shard(y0))).backward()
    local = net[0].weight.grad.numpy().copy()
    F.cross_entropy(ddp(fgrad.torch.tensor(_shard(x1))), fgrad.torch.tensor(_shard(y1))).backward()
    for (name, p), q in zip(net.named_parameters(), reference.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-5, atol=1e-6, err_msg=name)
    if N() > 1:  # inside no_sync nothing was averaged
        assert not np.allclose(local, reference[0].weight.grad.numpy() / 2, atol=1e-6)


def test_ddp_broadcasts_buffers_and_rejects_mismatched_models():
    fgrad.torch.manual_seed(R())
    net = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    with fgrad.torch.no_grad():
        net[1].running_mean.fill_(float(R()))
    dist.DistributedDataParallel(net)
    np.testing.assert_array_equal(net[1].running_mean.numpy(), np.zeros(4))

    if N() == 1:
        return  # the rest needs two ranks to differ
    last = N() - 1
    bad = nn.Sequential(nn.Linear(4, 3 + (R() == last)), nn.Linear(3 + (R() == last), 2))
    with pytest.raises(dist.DistributedError, match=rf"parameter '0.weight' has shape \(3, 4\) on rank 0 but "
                                                    rf"\(4, 4\) on rank {last}"):
        dist.DistributedDataParallel(bad)
    extra = nn.Sequential(*[nn.Linear(2, 2) for _ in range(2 + (R() == last))])
    with pytest.raises(dist.DistributedError, match=rf"parameter '2.weight' exists only on rank {last}"):
        dist.DistributedDataParallel(extra)


# --- data_parallel ---------------------------------------------------------------------------------

def _params(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    return {"w1": (rng.standard_normal((12, 16)) * 0.3).astype(np.float32), "b1": np.zeros(16, np.float32),
            "w2": (rng.standard_normal((16, 4)) * 0.3).astype(np.float32), "b2": np.zeros(4, np.float32)}


def _loss(p, x, y):
    h = fnp.tanh(x @ p["w1"] + p["b1"])
    logits = h @ p["w2"] + p["b2"]
    logp = logits - fnp.log(fnp.sum(fnp.exp(logits), axis=1, keepdims=True))
    return -fnp.mean(fnp.sum(logp * y, axis=1))


@pytest.mark.parametrize("jit", [True, False])
def test_data_parallel_step_trains_like_one_process(jit):
    step = fgrad.value_and_grad(_loss)
    if jit:
        step = fgrad.jit(step)
    parallel = dist.data_parallel(step)
    batches = [(x, np.eye(4, dtype=np.float32)[y]) for x, y in _batches(3, 4 * N())]
    reference = _params(0)
    for x, y in batches:
        value_ref, g = step(reference, x, y)
        reference = tree_map(lambda p, g: p - 0.5 * g, reference, g)
    params = dist.broadcast(_params(R()))
    for x, y in batches:
        value, g = parallel(params, _shard(x), _shard(y))
        params = tree_map(lambda p, g: p - 0.5 * g, params, g)
    for k in params:
        np.testing.assert_allclose(params[k], reference[k], rtol=1e-5, atol=1e-6, err_msg=k)
    # the value is the mean of the shards' losses: the global batch's mean loss (of the last step's inputs)
    np.testing.assert_allclose(value, _loss(tree_map(lambda p, g: p + 0.5 * g, params, g), *batches[-1]),
                               rtol=1e-5)
    assert value_ref is not None


def test_data_parallel_with_aux_and_local_values():
    def loss_aux(p, x):
        loss = fnp.sum(p * x)
        return loss, {"rank_loss": loss}
    step = dist.data_parallel(reduce_value=False)(fgrad.value_and_grad(loss_aux, has_aux=True))
    x = np.full(3, float(R() + 1), np.float32)
    (loss, aux), g = step(np.ones(3, np.float32), x)
    assert float(loss) == pytest.approx(3.0 * (R() + 1))                 # this rank's own value
    np.testing.assert_allclose(g, np.full(3, np.mean(np.arange(1, N() + 1))))  # averaged gradient
    both = dist.data_parallel(fgrad.value_and_grad(loss_aux, has_aux=True))
    (loss, aux), g = both(np.ones(3, np.float32), x)
    assert float(aux["rank_loss"]) == pytest.approx(3.0 * np.mean(np.arange(1, N() + 1)))
    with pytest.raises(TypeError, match=r"must return \(value, grads\)"):
        dist.data_parallel(lambda p: p)(1.0)
    with pytest.raises(TypeError, match="traced value"):
        fgrad.jit(lambda p: dist.all_reduce(p))(np.ones(2))
