"""One rank fails, the others must not hang: run under mpirun by test_distributed.py.

    mpirun -n N python tests/distributed/mpi_dead_rank.py MODE OUTDIR

Rank 1 exits without a word (MODE=exit, os._exit: a crash) or hangs (MODE=hang) instead of
joining the all_reduce; every other rank writes, to OUTDIR/rankR.txt, the error its
all_reduce raised and how long it took, then exits -- which aborts the MPI job, the hung
rank included."""
from __future__ import annotations

import os
import pathlib
import sys
import time

import numpy as np

import fgrad.distributed as dist

TIMEOUT = 2.0


class _Tee:
    """stderr, copied line by line to a file: what a rank says just before MPI_Abort can be
    lost from mpirun's output (the abort tears the job down before its I/O forwarding has
    passed the line on), but not from the file, flushed before the abort."""

    def __init__(self, stream, path: pathlib.Path) -> None:
        self.stream, self.file = stream, open(path, "a")  # noqa: SIM115 (open until exit)

    def write(self, text: str) -> int:
        self.file.write(text)
        self.file.flush()
        return self.stream.write(text)

    def flush(self) -> None:
        self.file.flush()
        self.stream.flush()


def main() -> None:
    mode, outdir = sys.argv[1], pathlib.Path(sys.argv[2])
    dist.init(timeout=TIMEOUT)
    sys.stderr = _Tee(sys.stderr, outdir / f"rank{dist.rank()}.stderr.txt")
    dist.all_reduce(np.ones(3))  # all ranks are alive here
    if dist.rank() == 1:
        if mode == "exit":
            os._exit(3)
        time.sleep(600)  # hang: only the others' MPI_Abort ends this process
    start = time.monotonic()
    try:
        dist.all_reduce({"w": np.ones(1000, np.float32)})
        report = "no error"
    except dist.DistributedTimeoutError as e:
        report = f"{type(e).__name__} after {time.monotonic() - start:.2f} s: {e}"
    _write(outdir / f"rank{dist.rank()}.txt", report)
    try:
        dist.barrier()
    except dist.DistributedError as e:  # the communicator is unusable now, and says so
        _write(outdir / f"rank{dist.rank()}.after.txt", str(e))
    # The first survivor to exit aborts the job, so each waits (through the file system: the
    # communicator is gone) until every survivor has written both reports; a fixed sleep was
    # too short on a loaded machine, where a rank was killed between opening and writing.
    survivors = [r for r in range(dist.world_size()) if r != 1]
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not all(
            (outdir / f"rank{r}{kind}.txt").exists() for r in survivors for kind in ("", ".after")):
        time.sleep(0.05)


def _write(path: pathlib.Path, text: str) -> None:
    """Write `text` to `path` atomically: a reader sees the whole report or no file."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


if __name__ == "__main__":
    main()
