"""fgrad.distributed: data-parallel training over MPI (through mpi4py).

Launch N copies of a script with `mpirun -n N python script.py`; each calls `init()` and
trains on its shard of every global batch:

- functional side: `all_reduce(tree, op)` and `broadcast(tree, root)` on pytrees of arrays,
  numbers and Tensors, and `data_parallel(step)`, which averages what a (jitted)
  `value_and_grad` step returns across ranks (JAX's pmap/psum idiom);
- facade: `DistributedDataParallel(module)`, whose backward() averages the gradients in
  buckets that are reduced while backward still runs;
- `rank()`, `world_size()`, `is_initialized()`, `barrier()`; and once init() has run,
  `fgrad.torch.utils.data.DistributedSampler` takes the rank and world size from here.

Every collective waits at most `timeout` seconds (init's, default 60) for the other ranks:
a rank that died or hangs makes the others raise `DistributedTimeoutError` (and abort the
MPI job at exit) instead of blocking forever.

MPI comes from the `distributed` extra: `pip install 'fgrad[distributed]'` brings mpi4py
and MPICH (its `mpirun`) from PyPI. Nothing here imports mpi4py until init() runs.
"""
from ._comm import (DEFAULT_TIMEOUT, DistributedError, DistributedTimeoutError, barrier, get_timeout, init,
                    is_initialized, rank, world_size)
from .collectives import all_reduce, broadcast
from .ddp import DistributedDataParallel
from .functional import data_parallel

__all__ = ["init", "is_initialized", "rank", "world_size", "barrier", "get_timeout", "all_reduce", "broadcast",
           "DistributedDataParallel", "data_parallel", "DistributedError", "DistributedTimeoutError",
           "DEFAULT_TIMEOUT"]
