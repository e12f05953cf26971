"""The process group: one MPI communicator (a duplicate of MPI_COMM_WORLD), this process's
rank and the world size, and the deadline-bounded wait every collective goes through.

Every collective here is started non-blocking (MPI_Iallreduce, MPI_Ibcast, MPI_Ibarrier, ...)
and completed by `wait`, which polls the requests until a deadline. A rank that died, hangs,
or calls a different collective therefore makes the others raise `DistributedTimeoutError`
after `timeout` seconds instead of blocking forever. A collective that timed out cannot be
cancelled (MPI has no way to), so the communicator is marked broken: later collectives fail
at once, and at interpreter exit the process calls MPI_Abort, which ends every rank of the
job -- including one that hangs -- rather than let MPI_Finalize wait for it.
"""
from __future__ import annotations

import atexit
import os
import pickle
import sys
import time
from typing import Any

import numpy as np

from ..core.errors import DistributedError, DistributedTimeoutError, FgradValueError
from ..torch.utils.data import distributed as _data_distributed

__all__ = ["DistributedError", "DistributedTimeoutError", "init", "is_initialized", "rank", "world_size",
           "barrier", "get_timeout"]

DEFAULT_TIMEOUT = 60.0

_INSTALL_HINT = ("install it with the project's extra: pip install 'fgrad[distributed]' (mpi4py and MPICH "
                 "from PyPI), then launch the script with mpirun -n 2 python script.py")


class _Group:
    """The one process group of this process (fgrad has no sub-groups)."""

    def __init__(self) -> None:
        self.mpi: Any = None      # the mpi4py.MPI module, once init() imported it
        self.comm: Any = None     # our duplicate of COMM_WORLD
        self.rank = 0
        self.size = 1
        self.timeout = DEFAULT_TIMEOUT
        self.broken: str | None = None  # why the communicator is unusable, after a timeout


_GROUP = _Group()


def _import_mpi():
    try:
        # optional dependency (the `distributed` extra): only fgrad.distributed.init() needs MPI
        from mpi4py import MPI
    except (ImportError, RuntimeError) as e:  # RuntimeError: mpi4py found no MPI library to load
        raise ImportError(f"fgrad.distributed needs mpi4py and an MPI library ({e}): {_INSTALL_HINT}") from e
    return MPI


def _check_timeout(timeout: float | None) -> float:
    if timeout is None:
        return _GROUP.timeout
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise FgradValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    return float(timeout)


def init(timeout: float = DEFAULT_TIMEOUT) -> None:
    """Join the MPI job this process was launched in (`mpirun -n N python script.py`).

    Initialises MPI through mpi4py, duplicates MPI_COMM_WORLD for fgrad's own traffic and
    waits (at most `timeout` seconds) until every rank has called init(). A process started
    without mpirun is a job of one rank. `timeout` (seconds, default 60) bounds every later
    collective too: a rank that does not join one within it makes the others raise
    DistributedTimeoutError. Calling init() again only sets a new timeout.

    Once initialised, `fgrad.torch.utils.data.DistributedSampler()` takes `num_replicas` and `rank` from
    this group when they are not given."""
    timeout = _check_timeout(timeout)
    if _GROUP.comm is not None:
        _GROUP.timeout = timeout
        return
    MPI = _import_mpi()
    world = MPI.COMM_WORLD
    _GROUP.mpi = MPI
    _GROUP.rank, _GROUP.size = world.Get_rank(), world.Get_size()
    _GROUP.timeout = timeout
    # Registered before the first collective, so that a timeout in init() itself still ends
    # in MPI_Abort at exit rather than in an MPI_Finalize that waits for the missing rank.
    atexit.register(_abort_if_broken)
    # Every rank must be here before the (blocking, untimed) MPI_Comm_dup below.
    _wait([world.Ibarrier()], "init() (waiting for every rank to call fgrad.distributed.init())", timeout)
    # A duplicate keeps fgrad's collectives apart from any the program runs on COMM_WORLD.
    _GROUP.comm = world.Dup()
    _publish_group()


def _publish_group() -> None:
    # fgrad.torch.utils.data sits below this package in the layers and may not import it, so the sampler
    # learns of the group through a hook on its own module.
    _data_distributed._process_group = lambda: (_GROUP.size, _GROUP.rank)


def is_initialized() -> bool:
    """Whether init() has run in this process."""
    return _GROUP.comm is not None


def _require_init(what: str) -> None:
    if _GROUP.comm is None:
        raise DistributedError(f"fgrad.distributed.{what}: the process group is not initialised; call "
                               "fgrad.distributed.init() first (and launch with mpirun -n N)")


def _require(what: str):
    """The communicator, for a collective: initialised and not broken."""
    _require_init(what)
    if _GROUP.broken is not None:
        raise DistributedError(f"fgrad.distributed.{what}: the communicator is unusable after an earlier "
                               f"failure ({_GROUP.broken}); the MPI job is aborted when this process exits")
    return _GROUP.comm


def rank() -> int:
    """This process's rank, 0 .. world_size() - 1."""
    _require_init("rank()")
    return _GROUP.rank


def world_size() -> int:
    """The number of processes in the job."""
    _require_init("world_size()")
    return _GROUP.size


def get_timeout() -> float:
    """The timeout (seconds) collectives use when not given one."""
    return _GROUP.timeout


def barrier(timeout: float | None = None) -> None:
    """Wait until every rank has called barrier() (at most `timeout` seconds, default init's)."""
    comm = _require("barrier()")
    _wait([comm.Ibarrier()], "barrier()", _check_timeout(timeout))


# --- waiting with a deadline -----------------------------------------------------------------------

# Polling. For the first _SPIN_SECONDS the wait only yields the CPU between checks: MPI moves
# a large reduction forward in pieces, each needing both ranks inside an MPI call, so a rank
# asleep would stall its peer too (and a collective on shared memory completes in
# microseconds to milliseconds). After that -- a peer that is slow, or gone -- the pause grows
# to _MAX_PAUSE, leaving the cores to the ranks that still compute.
_SPIN_SECONDS = 0.05
_MAX_PAUSE = 1e-3


def progress(requests: list) -> bool:
    """Whether every request has completed. Also drives MPI's progress engine: MPICH moves a
    non-blocking collective forward only inside MPI calls, so DistributedDataParallel calls
    this between buckets to keep the reductions already started going."""
    return bool(_GROUP.mpi.Request.Testall(requests))


def _wait(requests: list, what: str, timeout: float) -> None:
    """Complete `requests` or raise DistributedTimeoutError after `timeout` seconds."""
    MPI = _GROUP.mpi
    try:
        if MPI.Request.Testall(requests):
            return
        now = time.monotonic()
        deadline, spin_until, pause = now + timeout, now + _SPIN_SECONDS, 2e-5
        while not MPI.Request.Testall(requests):
            now = time.monotonic()
            if now > deadline:
                _timed_out(what, timeout)
            if now < spin_until:
                os.sched_yield()
            else:
                time.sleep(pause)
                pause = min(pause * 2, _MAX_PAUSE)
    except MPI.Exception as e:
        # mpi4py turns MPI errors into exceptions (MPI_ERRORS_RETURN): a peer's failure the MPI
        # library noticed (rather than a silence the deadline catches)
        reason = f"{what} failed on rank {_GROUP.rank}: {e.Get_error_string()}"
        mark_broken(reason)
        raise DistributedError(f"fgrad.distributed: {reason}. Another rank has probably died; look at its "
                               "output. The MPI job is aborted when this process exits.") from e


def wait(requests: list, what: str, timeout: float | None = None) -> None:
    """Complete the non-blocking requests of collective `what` within `timeout` seconds
    (default: init's), or mark the communicator broken and raise DistributedTimeoutError."""
    _wait(requests, what, _check_timeout(timeout))


def _timed_out(what: str, timeout: float) -> None:
    reason = f"{what} timed out on rank {_GROUP.rank} after {timeout:g} s"
    _GROUP.broken = reason
    raise DistributedTimeoutError(
        f"fgrad.distributed: {what} did not complete on rank {_GROUP.rank} of {_GROUP.size} within "
        f"{timeout:g} s. Another rank has died, hangs, or is not calling the same collectives in the same "
        "order (every rank must make the same calls: all_reduce, broadcast, barrier, backward() of a "
        "DistributedDataParallel model). Look at the other ranks' output for their error. This "
        "communicator is now unusable, and this process aborts the MPI job (MPI_Abort) when it exits so "
        "that no rank is left hanging. If a step legitimately takes longer, raise the limit with "
        "fgrad.distributed.init(timeout=SECONDS).")


def mark_broken(reason: str) -> None:
    """Declare the communicator unusable (a collective was left half-done): later collectives
    fail at once and the job is aborted at exit."""
    if _GROUP.broken is None:
        _GROUP.broken = reason


def _abort_if_broken() -> None:
    # An atexit handler: it runs before mpi4py's MPI_Finalize, which would otherwise wait for
    # the rank that never completed the collective.
    if _GROUP.broken is None or _GROUP.mpi is None:
        return
    sys.stderr.write(f"fgrad.distributed: rank {_GROUP.rank} aborts the MPI job: {_GROUP.broken}\n")
    sys.stderr.flush()
    sys.stdout.flush()
    _GROUP.mpi.COMM_WORLD.Abort(1)


# --- gathering Python objects (start-up checks and error reports) -----------------------------------

def allgather_object(obj: Any, what: str, timeout: float | None = None) -> list:
    """Every rank's `obj` (picklable), in rank order, with the timeout of `wait`."""
    comm = _require(what)
    MPI = _GROUP.mpi
    timeout = _check_timeout(timeout)
    data = np.frombuffer(pickle.dumps(obj), np.uint8)
    sizes = np.zeros(_GROUP.size, np.int64)
    _wait([comm.Iallgather(np.array([data.size], np.int64), sizes)], what, timeout)
    out = np.empty(int(sizes.sum()), np.uint8)
    displs = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    _wait([comm.Iallgatherv(data, [out, sizes.tolist(), displs.tolist(), MPI.BYTE])], what, timeout)
    return [pickle.loads(out[d:d + s].tobytes()) for d, s in zip(displs, sizes)]
