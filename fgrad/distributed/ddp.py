"""DistributedDataParallel: the facade's data parallelism. Every rank holds the whole model,
runs it on its shard of the batch, and backward() leaves the average of all ranks' gradients
in each parameter's .grad, so the same optimizer step keeps the replicas identical.

How the gradients travel. fgrad's backward engine walks the graph from the loss to the
leaves; a parameter's gradient is final when the walk reaches the parameter's
AccumulateGrad node, which happens while the rest of the graph (the earlier layers) is
still being differentiated. A hook on that node (the "ready" hook) copies the gradient into
its bucket's flat buffer; when every parameter of a bucket is ready, the bucket's
MPI_Iallreduce starts, so its communication overlaps the remaining backward computation.
Buckets hold parameters in reverse registration order (roughly the order gradients
arrive) and are started strictly in bucket order, the same on every rank, as MPI requires.
MPICH moves a started reduction forward only inside MPI calls: each later ready hook polls
the buckets in flight, but a long stretch of backward computation with no hook in it (one
big layer) is not overlapped. MPICH's progress thread (MPIR_CVAR_ASYNC_PROGRESS=1 in the
environment) overlaps that too, at the cost of a core per process busy polling.

How the end of backward is known. fgrad runs a parameter's `register_hook` hooks after the
engine's walk, just before .grad is written: the first of DistributedDataParallel's own
leaf hooks to run therefore marks the end of backward. It starts the buckets not started
yet (a parameter that took no part in this backward contributes zeros), waits for all
reductions (bounded by the timeout), divides by the world size, and each leaf hook hands
its parameter's averaged gradient to the engine, which accumulates it into .grad.
"""
from __future__ import annotations

import contextlib
import weakref
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..core.errors import FgradTypeError, FgradValueError
from ..torch.nn import Module
from ..torch._tensor import Tensor, no_grad
from ..torch._tensor.creation import from_numpy

# Node hooks on a parameter's AccumulateGrad node are the only point where its gradient is
# known to be final while backward is still running (Tensor.register_hook on a leaf runs
# after the walk), so the reducer uses the engine's node-hook entry points.
from ..torch._tensor.tensor import _add_node_hook, grad_node
from . import _comm
from .collectives import broadcast

__all__ = ["DistributedDataParallel"]


def _signature(module: Module) -> list[tuple[str, str, tuple, str]]:
    out = [("parameter", n, tuple(p.shape), str(p.dtype)) for n, p in module.named_parameters()]
    out += [("buffer", n, tuple(b.shape), str(b.dtype)) for n, b in module.named_buffers()]
    return out


def _mismatch(everyone: list[list[tuple]]) -> str | None:
    """The first parameter or buffer some rank has differently from rank 0, in words."""
    ref = everyone[0]
    for r, sig in enumerate(everyone[1:], start=1):
        for a, b in zip(ref, sig):
            if a == b:
                continue
            if a[:2] != b[:2]:
                return f"where rank 0 has {a[0]} '{a[1]}', rank {r} has {b[0]} '{b[1]}'"
            what = "shape" if a[2] != b[2] else "dtype"
            va, vb = (a[2], b[2]) if what == "shape" else (a[3], b[3])
            return f"{a[0]} '{a[1]}' has {what} {va} on rank 0 but {vb} on rank {r}"
        if len(ref) != len(sig):
            longer, who = (ref, 0) if len(ref) > len(sig) else (sig, r)
            extra = longer[min(len(ref), len(sig))]
            return (f"rank 0 has {len(ref)} parameters and buffers, rank {r} has {len(sig)}: {extra[0]} "
                    f"'{extra[1]}' exists only on rank {who}")
    return None


class _Bucket:
    __slots__ = ("dtype", "params", "offsets", "buffer", "pending", "request")

    def __init__(self, dtype: np.dtype, params: list[int], sizes: list[int]) -> None:
        self.dtype = dtype
        self.params = params
        self.offsets = list(np.concatenate([[0], np.cumsum(sizes)]).astype(int))
        self.buffer = np.zeros(self.offsets[-1], dtype)
        self.pending = len(params)
        self.request = None


class DistributedDataParallel(Module):
    """Wrap `module` so that backward() averages gradients over all ranks of the MPI job.

    At construction every rank must hold the same architecture: the parameter and buffer
    names, shapes and dtypes are compared across ranks and the first difference raises
    DistributedError on every rank. Rank 0's parameter and buffer values are then copied to
    all ranks, so the replicas start identical whatever each rank's seed.

    Call it like `module` (the forward pass is module's); each rank feeds its own shard of
    the global batch. `loss.backward()` then leaves in every parameter's .grad the mean of
    the ranks' gradients -- the gradient of the global batch's mean loss when shards are of
    equal size. Communication runs in buckets of about `bucket_cap_mb` MB, each reduced
    non-blocking (MPI_Iallreduce) as soon as its gradients are ready, overlapping the rest of
    backward; the module docstring explains when backward is known to have ended. A
    parameter that some rank did not use in a backward contributes zeros there; one no rank
    used keeps its .grad.

    `broadcast_buffers=True` copies rank 0's buffers (e.g. BatchNorm's running statistics)
    to all ranks before each forward in training mode: that forward is then a collective,
    run it on every rank. `no_sync()` skips the reduction for gradient accumulation.
    Every reduction waits at most `timeout` seconds (default: init's) for the other ranks,
    then raises DistributedTimeoutError out of backward().

    Limitations: CPU (NumPy) parameters; no create_graph=True through the reduction; the
    wrapped parameters are those module has at construction (replace none afterwards); hooks
    registered on a parameter before wrapping see its local gradient and their replacement is
    not what is reduced, hooks registered after see the averaged one."""

    def __init__(self, module: Module, bucket_cap_mb: float = 25.0, broadcast_buffers: bool = True,
                 timeout: float | None = None) -> None:
        super().__init__()
        if not isinstance(module, Module):
            raise FgradTypeError(f"DistributedDataParallel wraps an fgrad.torch.nn.Module, got {type(module).__name__}")
        if not bucket_cap_mb > 0:
            raise FgradValueError(f"bucket_cap_mb must be positive, got {bucket_cap_mb!r}")
        _comm._require("DistributedDataParallel()")
        if any(t.device.type != "cpu" for t in module.parameters()):
            raise FgradTypeError("DistributedDataParallel supports CPU (NumPy) parameters only; move the model to "
                            "the CPU first (model.cpu())")
        self.module = module
        self.broadcast_buffers = bool(broadcast_buffers)
        self.timeout = None if timeout is None else _comm._check_timeout(timeout)
        everyone = _comm.allgather_object(_signature(module), "DistributedDataParallel() (comparing the models)",
                                          self.timeout)
        diff = _mismatch(everyone)
        if diff is not None:
            raise _comm.DistributedError(
                f"DistributedDataParallel: the ranks' models differ: {diff}. Every rank must build the same "
                "model (same layers, sizes and dtypes) before wrapping it.")
        self._sync_state(list(module.parameters()) + list(module.buffers()))
        self._reducer = _Reducer(self, bucket_cap_mb)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """module's forward, after syncing rank 0's buffers (training mode, broadcast_buffers)."""
        if self.broadcast_buffers and self.training:
            buffers = list(self.module.buffers())
            if buffers:
                self._sync_state(buffers)
        return self.module(*args, **kwargs)

    def _sync_state(self, tensors: list[Tensor]) -> None:
        """Overwrite `tensors` with rank 0's values, in place."""
        if not tensors:
            return
        values = broadcast([t.detach() for t in tensors], root=0, timeout=self.timeout)
        with no_grad():
            for t, v in zip(tensors, values):
                t.copy_(v)

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Inside, backward() accumulates local gradients without communicating; the first
        backward() after it averages the accumulated .grad (as PyTorch's no_sync)."""
        previous = self._reducer.sync
        self._reducer.sync = False
        try:
            yield
        finally:
            self._reducer.sync = previous

    @property
    def bucket_sizes(self) -> list[int]:
        """The number of parameters in each bucket, in the order buckets are reduced."""
        return [len(b.params) for b in self._reducer.buckets]


class _Reducer:
    """The per-backward state: which gradients are ready, which buckets are in flight."""

    def __init__(self, ddp: DistributedDataParallel, bucket_cap_mb: float) -> None:
        self.timeout = ddp.timeout
        self.size = _comm._GROUP.size
        self.sync = True
        self.params = [p for p in ddp.module.parameters() if p.requires_grad]
        values = [p.detach().numpy() for p in self.params]
        # buckets: reverse registration order, one dtype each, closed once past the cap
        cap = bucket_cap_mb * 2 ** 20
        self.buckets: list[_Bucket] = []
        self.where: list[tuple[int, int]] = [(0, 0)] * len(self.params)  # param -> (bucket, slot)
        current: list[int] = []
        for i in reversed(range(len(self.params))):
            if current and values[current[0]].dtype != values[i].dtype:
                self._close(current, values)
                current = []
            current.append(i)
            if sum(values[j].nbytes for j in current) >= cap:
                self._close(current, values)
                current = []
        if current:
            self._close(current, values)
        self.shapes = [v.shape for v in values]
        self.phase = "idle"         # idle -> reducing (first ready hook) -> done (first leaf hook)
        self.ready = np.zeros(len(self.params), bool)
        self.next_bucket = 0
        self.local = np.zeros(len(self.params), bool)    # .grad holds gradients of no_sync steps
        self.replace = np.zeros(len(self.params), bool)  # .grad is to be replaced, not added to
        self.used = np.zeros(len(self.params), np.uint8)
        self.used_request = None
        # The AccumulateGrad nodes are held here: the engine reaches a parameter through the
        # same node (and its hooks) in every backward only while someone keeps the node alive.
        # The hooks reach the reducer through a weak reference: once the wrapper is gone they
        # do nothing (and __del__ removes them), so the bare module trains locally again.
        self.nodes = []
        self.handles = []
        ref = weakref.ref(self)
        for i, p in enumerate(self.params):
            node = grad_node(p)
            self.nodes.append(node)
            self.handles.append(_add_node_hook(node, lambda ct, i=i: _call(ref, "_ready", i, ct)))
            self.handles.append(p.register_hook(lambda g, i=i: _call(ref, "_leaf", i)))

    def __del__(self) -> None:
        for handle in getattr(self, "handles", ()):
            handle.remove()

    def _close(self, idx: list[int], values: list[np.ndarray]) -> None:
        b = len(self.buckets)
        for slot, i in enumerate(idx):
            self.where[i] = (b, slot)
        self.buckets.append(_Bucket(values[idx[0]].dtype, list(idx), [values[i].size for i in idx]))

    def _slot(self, i: int) -> np.ndarray:
        b, s = self.where[i]
        bucket = self.buckets[b]
        return bucket.buffer[bucket.offsets[s]:bucket.offsets[s + 1]].reshape(self.shapes[i])

    # --- during the walk ---

    def _ready(self, i: int, ct: Any) -> None:
        """AccumulateGrad hook: parameter i's gradient of this backward is final."""
        if isinstance(ct, Tensor):
            raise _comm.DistributedError("DistributedDataParallel: backward(create_graph=True) is not supported "
                                         "through the gradient reduction (the average has no graph)")
        if not self.sync:
            self.local[i] = True
            return
        if self.phase == "reducing" and self.ready[i]:
            # a backward whose leaf hooks never ran (autograd.grad w.r.t. other inputs): finish
            # its reductions, whose results nobody asked for, before this one starts
            self._finish()
        if self.phase != "reducing":
            self._start_round()
        self.ready[i] = True
        self.used[i] = 1
        slot = self._slot(i)
        g = self.params[i].grad
        if self.local[i] and g is not None:
            # the first synced backward after no_sync() reduces everything accumulated since
            np.add(g.detach().numpy(), ct, out=slot)
            self.replace[i] = True
        else:
            slot[...] = ct
        b = self.where[i][0]
        self.buckets[b].pending -= 1
        if self.buckets[b].pending == 0:
            self._launch_ready()
        else:
            self._progress()
        return None

    def _start_round(self) -> None:
        self.phase = "reducing"
        self.ready[:] = False
        self.used[:] = 0
        self.replace[:] = False
        self.next_bucket = 0
        for bucket in self.buckets:
            bucket.pending = len(bucket.params)
            bucket.request = None

    def _launch_ready(self) -> None:
        comm = _comm._require("DistributedDataParallel backward()")
        MPI = _comm._GROUP.mpi
        while self.next_bucket < len(self.buckets) and self.buckets[self.next_bucket].pending == 0:
            bucket = self.buckets[self.next_bucket]
            bucket.request = comm.Iallreduce(MPI.IN_PLACE, bucket.buffer, MPI.SUM)
            self.next_bucket += 1

    def _progress(self) -> None:
        inflight = [b.request for b in self.buckets[:self.next_bucket] if b.request is not None]
        if inflight:
            _comm.progress(inflight)

    # --- after the walk ---

    def _leaf(self, i: int) -> Tensor | None:
        """Leaf hook: the walk is over. The first call completes the round."""
        if not self.sync:
            return None
        if self.phase == "reducing":
            self._finish()
            self.phase = "done"
            self._write_unused()
        if self.phase != "done" or not self.ready[i]:
            return None
        if self.replace[i]:
            self.params[i].grad = None  # holds the no_sync steps' sum, now part of the average
        self.local[i] = False
        return from_numpy(self._slot(i))

    def _finish(self) -> None:
        """Start the buckets not started (unused parameters give zeros), wait, average."""
        comm = _comm._require("DistributedDataParallel backward()")
        MPI = _comm._GROUP.mpi
        for bucket in self.buckets[self.next_bucket:]:
            for i in bucket.params:
                if self.ready[i]:
                    continue
                g = self.params[i].grad
                if self.local[i] and g is not None:  # unused now, but holds no_sync steps' gradients
                    self._slot(i)[...] = g.detach().numpy()
                    self.replace[i] = True
                    self.used[i] = 1
                else:
                    self._slot(i)[...] = 0
            bucket.pending = 0
        self._launch_ready()
        # which parameters any rank used: those no rank used keep their .grad untouched
        self.used_request = comm.Iallreduce(MPI.IN_PLACE, self.used, MPI.MAX)
        _comm.wait([b.request for b in self.buckets] + [self.used_request],
                   "DistributedDataParallel backward() (gradient all-reduce)", self.timeout)
        for bucket in self.buckets:
            bucket.buffer /= self.size

    def _write_unused(self) -> None:
        # parameters this rank did not use but another did: the engine has no gradient to
        # hand them, so the average is written here
        for i in np.flatnonzero((~self.ready) & (self.used > 0)):
            p = self.params[i]
            avg = self._slot(i).copy()
            if p.grad is None or self.replace[i]:
                p.grad = from_numpy(avg)
            else:
                with no_grad():
                    p.grad.add_(from_numpy(avg))
            self.local[i] = False


def _call(ref: "weakref.ref[_Reducer]", method: str, *args: Any) -> Any:
    reducer = ref()
    return None if reducer is None else getattr(reducer, method)(*args)
