"""all_reduce and broadcast over pytrees: every leaf of every rank's tree takes part, leaves of
one dtype travel together in one buffer (one MPI call per dtype, not per leaf), and the ranks
first check, with one small reduction, that their trees agree -- so a rank passing a
different tree gets an error that names the leaf, not garbage or an MPI crash."""
from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from ..core.errors import FgradTypeError, FgradValueError
from ..core.trace import Tracer
from ..torch._tensor import Tensor
from ..torch._tensor._device import is_cupy
from ..torch._tensor.creation import as_tensor
from ..tree_util import keystr, tree_flatten_with_path, tree_unflatten
from . import _comm
from ._comm import DistributedError

__all__ = ["all_reduce", "broadcast"]

OPS = ("mean", "sum", "max", "min")


# --- leaves to host arrays and back ----------------------------------------------------------------

def _host(leaf: Any, path: str, what: str) -> tuple[np.ndarray, Any]:
    """(a host NumPy array with the leaf's values, how to rebuild a leaf of the same kind)."""
    if isinstance(leaf, Tensor):
        if isinstance(leaf._value, Tracer):
            raise FgradTypeError(_traced(what, path))
        dev = leaf.device
        return np.asarray(leaf.detach().numpy(force=True)), lambda a, dev=dev: as_tensor(a, device=dev)
    if isinstance(leaf, Tracer):
        raise FgradTypeError(_traced(what, path))
    if isinstance(leaf, np.ndarray):
        return leaf, lambda a: a
    if isinstance(leaf, np.generic):
        return np.asarray(leaf), lambda a: a[()]
    if isinstance(leaf, (bool, int, float, complex)):
        return np.asarray(leaf), lambda a: a.item()
    if is_cupy(leaf):
        return leaf.get(), lambda a, like=leaf: _to_cupy(a, like)
    raise FgradTypeError(f"fgrad.distributed.{what}: leaf {path or '(the root)'} is a {type(leaf).__name__}; "
                    "only arrays, Tensors and numbers can be communicated (pass the numeric part of the tree)")


def _to_cupy(a: np.ndarray, like):
    import cupy  # optional dependency (GPU arrays): reached only when a CuPy leaf was given
    with cupy.cuda.Device(like.device.id):
        return cupy.asarray(a)


def _traced(what: str, path: str) -> str:
    return (f"fgrad.distributed.{what}: leaf {path or '(the root)'} is a traced value (inside jit, grad or "
            "vmap). Collectives need concrete arrays: call them outside the transformed function -- "
            "fgrad.distributed.data_parallel(step) reduces what a jitted step returns")


def _flatten(tree: Any, what: str) -> tuple[list[np.ndarray], list, Any, list[str]]:
    pairs, treedef = tree_flatten_with_path(tree)
    paths = [keystr(p) for p, _ in pairs]
    arrays, rebuilds = [], []
    for path, (_, leaf) in zip(paths, pairs):
        a, rebuild = _host(leaf, path, what)
        if a.dtype.kind not in "biufc":
            raise FgradTypeError(f"fgrad.distributed.{what}: leaf {path or '(the root)'} has dtype {a.dtype}; "
                            "only boolean and numeric arrays can be communicated")
        arrays.append(a)
        rebuilds.append(rebuild)
    return arrays, rebuilds, treedef, paths


# --- the ranks agree on the tree ------------------------------------------------------------------

def _describe(arrays: list[np.ndarray], paths: list[str], treedef, extra: str) -> list:
    """[the call, the tree structure, (leaf path, dtype[shape]) per leaf]: what must agree."""
    return [extra, str(treedef)] + [(p or "(the root)", f"{a.dtype}{list(a.shape)}") for p, a in zip(paths, arrays)]


def check_same_everywhere(description: list, what: str, timeout: float | None) -> None:
    """Raise DistributedError on every rank (not just some) unless every rank passed the same
    description; the error names the first entry that differs and the ranks involved."""
    size = _comm._GROUP.size
    if size == 1:
        return
    # 62 bits: -h below cannot overflow. max(h) and max(-h) equal h and -h on a rank only if
    # every rank has the same h, so all ranks reach the same verdict from one reduction.
    h = int.from_bytes(hashlib.blake2b(repr(description).encode(), digest_size=8).digest(), "little")
    h &= (1 << 62) - 1
    buf = np.array([h, -h], np.int64)
    comm = _comm._require(what)
    _comm.wait([comm.Iallreduce(_comm._GROUP.mpi.IN_PLACE, buf, _comm._GROUP.mpi.MAX)], what, timeout)
    if buf[0] == h and buf[1] == -h:
        return
    everyone = _comm.allgather_object(description, what, timeout)
    raise DistributedError(f"fgrad.distributed.{what}: the ranks did not pass the same thing: "
                           + _first_difference(everyone) + ". Every rank must call it with a tree of the "
                           "same structure, shapes and dtypes (and the same op / root).")


def _first_difference(everyone: list[list]) -> str:
    ref = everyone[0]
    for r, desc in enumerate(everyone[1:], start=1):
        if desc == ref:
            continue
        if desc[0] != ref[0]:
            return f"rank 0 called it with {ref[0]}, rank {r} with {desc[0]}"
        if len(desc) != len(ref):
            return (f"rank 0's tree has {len(ref) - 2} leaves ({ref[1]}), rank {r}'s has {len(desc) - 2} "
                    f"({desc[1]})")
        for a, b in zip(ref[2:], desc[2:]):
            if a[0] != b[0]:
                return f"where rank 0's tree has leaf {a[0]}, rank {r}'s has {b[0]}"
            if a != b:
                return f"leaf {a[0]} is {a[1]} on rank 0 but {b[1]} on rank {r}"
        return f"the tree structure is {ref[1]} on rank 0 but {desc[1]} on rank {r}"
    return "(no difference found)"


# --- all_reduce -----------------------------------------------------------------------------------

def _transport(dtype: np.dtype, op: str) -> np.dtype:
    """The dtype a leaf travels in: MPI has no float16 or boolean sum, so those widen."""
    if dtype.kind == "b":
        return np.dtype(np.int64) if op in ("sum", "mean") else np.dtype(np.uint8)
    if dtype == np.float16:
        return np.dtype(np.float32)
    return dtype


def _result_dtype(dtype: np.dtype, op: str) -> np.dtype:
    if op == "mean" and dtype.kind in "biu":
        return np.dtype(np.float64)  # as np.mean: the mean of integers is a float64
    if op == "sum" and dtype.kind == "b":
        return np.dtype(np.int64)    # as np.sum: a count
    return dtype


def all_reduce(tree: Any, op: str = "mean", *, timeout: float | None = None) -> Any:
    """Reduce every leaf of `tree` elementwise across all ranks and return the result, a tree
    of the same structure, on every rank.

    `op` is "mean" (the default: averaging gradients), "sum", "max" or "min". Leaves may be
    NumPy arrays, NumPy or Python numbers and fgrad Tensors (returned as new Tensors without
    history: communication is not differentiated); leaves of one dtype travel in one MPI
    call. Every rank must pass a tree of the same structure, shapes and dtypes (checked:
    a mismatch raises DistributedError naming the leaf on every rank). Floating leaves keep
    their dtype; "mean" of integer or boolean leaves gives float64 and "sum" of booleans
    int64, as NumPy's mean and sum; "max"/"min" of booleans are any/all. Complex leaves take
    "sum" and "mean" only.

    The values must be concrete: call it outside jit/grad (see data_parallel). A rank that
    does not take part within `timeout` seconds (default: init's) makes the others raise
    DistributedTimeoutError."""
    if op not in OPS:
        raise FgradValueError(f"fgrad.distributed.all_reduce: op must be one of {', '.join(map(repr, OPS))}, got {op!r}")
    comm = _comm._require("all_reduce()")
    arrays, rebuilds, treedef, paths = _flatten(tree, "all_reduce()")
    for a, p in zip(arrays, paths):
        if a.dtype.kind == "c" and op in ("max", "min"):
            raise FgradTypeError(f"fgrad.distributed.all_reduce: op={op!r} is not defined for complex leaf "
                            f"{p or '(the root)'} ({a.dtype}); use 'sum' or 'mean'")
    check_same_everywhere(_describe(arrays, paths, treedef, f"all_reduce(op={op!r})"), "all_reduce()", timeout)
    MPI = _comm._GROUP.mpi
    mpi_op = {"mean": MPI.SUM, "sum": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN}[op]
    # one contiguous buffer per transport dtype, leaves in tree order inside it
    groups: dict[np.dtype, list[int]] = {}
    for i, a in enumerate(arrays):
        groups.setdefault(_transport(a.dtype, op), []).append(i)
    buffers, requests = [], []
    for dt, idx in groups.items():
        buf = np.concatenate([arrays[i].reshape(-1).astype(dt, copy=False) for i in idx])
        buffers.append(buf)
        requests.append(comm.Iallreduce(MPI.IN_PLACE, buf, mpi_op))
    _comm.wait(requests, f"all_reduce(op={op!r})", timeout)
    out: list = [None] * len(arrays)
    n = _comm._GROUP.size
    for buf, idx in zip(buffers, groups.values()):
        offset = 0
        for i in idx:
            a = arrays[i]
            part = buf[offset:offset + a.size].reshape(a.shape)
            offset += a.size
            rdt = _result_dtype(a.dtype, op)
            if op == "mean":
                part = (part / n).astype(rdt, copy=False)
            elif a.dtype.kind == "b" and op in ("max", "min"):
                part = part.astype(bool)
            else:
                part = part.astype(rdt)  # a copy: the leaf must not keep the whole buffer alive
            out[i] = rebuilds[i](part)
    return tree_unflatten(treedef, out)


# --- broadcast ------------------------------------------------------------------------------------

def broadcast(tree: Any, root: int = 0, *, timeout: float | None = None) -> Any:
    """Rank `root`'s values of `tree`, on every rank (a new tree; the inputs are not written).

    Every rank passes a tree of the same structure, shapes and dtypes (the other ranks'
    leaves only say what arrives; checked, with an error naming the leaf), typically its own
    freshly initialised parameters: `params = broadcast(params)` makes all ranks start from
    rank 0's. Leaves are arrays, numbers or Tensors, as for all_reduce; the bytes are copied
    exactly, whatever the dtype."""
    comm = _comm._require("broadcast()")
    size = _comm._GROUP.size
    if isinstance(root, bool) or not isinstance(root, (int, np.integer)) or not 0 <= root < size:
        raise FgradValueError(f"fgrad.distributed.broadcast: root must be a rank in [0, {size - 1}], got {root!r}")
    arrays, rebuilds, treedef, paths = _flatten(tree, "broadcast()")
    check_same_everywhere(_describe(arrays, paths, treedef, f"broadcast(root={int(root)})"), "broadcast()",
                          timeout)
    # the bits travel as bytes: one call for the whole tree, any dtype (float16, bool) included
    flat = [np.ascontiguousarray(a).reshape(-1).view(np.uint8) for a in arrays]
    buf = np.concatenate(flat) if flat else np.empty(0, np.uint8)
    _comm.wait([comm.Ibcast(buf, root=int(root))], f"broadcast(root={int(root)})", timeout)
    out, offset = [], 0
    for a, rebuild in zip(arrays, rebuilds):
        nbytes = a.size * a.dtype.itemsize
        out.append(rebuild(buf[offset:offset + nbytes].copy().view(a.dtype).reshape(a.shape)))
        offset += nbytes
    return tree_unflatten(treedef, out)

