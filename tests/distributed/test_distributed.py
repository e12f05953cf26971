"""fgrad.distributed: data parallelism over MPI.

The checks that need several processes run under `mpirun -n 2` and `-n 3` on this machine
(MPICH's shared memory, no network), launched from here in a subprocess with a time limit:
the collectives, DistributedDataParallel and data_parallel (tests/distributed/mpi_checks.py,
run by pytest on every rank), a rank that dies or hangs (mpi_dead_rank.py) and the digits
example trained on two processes against one. They are skipped when mpi4py or mpirun is
missing (`pip install -e '.[distributed]'` brings both). The argument checks and the error
when MPI is missing run in this process, without MPI.
"""
from __future__ import annotations

import importlib.util
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import fgrad.torch.utils.data.distributed as data_distributed
import fgrad.distributed as dist
import fgrad.torch.nn as nn
from fgrad.torch.utils.data import DistributedSampler
from fgrad.distributed import _comm

ROOT = pathlib.Path(__file__).resolve().parents[2]
HERE = pathlib.Path(__file__).resolve().parent


def _mpirun() -> str | None:
    # the launcher installed beside this Python (the extra's MPICH) first: it matches the MPI
    # library mpi4py loads; then one on PATH
    for candidate in (pathlib.Path(sys.executable).parent / "mpirun", shutil.which("mpirun"),
                      shutil.which("mpiexec")):
        if candidate and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


MPIRUN = _mpirun()
needs_mpi = pytest.mark.skipif(importlib.util.find_spec("mpi4py") is None or MPIRUN is None,
                               reason="mpi4py or mpirun missing: pip install -e '.[distributed]'")


def _launch(n: int, args: list[str], timeout: float, extra: tuple[str, ...] = ()) -> tuple[int, str, float]:
    """Run `mpirun -n N python ARGS` from the repository root; (exit code, output, seconds).
    On timeout the whole process group goes, so no rank outlives the test."""
    env = dict(os.environ, FGRAD_TEST_WORLD=str(n), PYTHONUNBUFFERED="1", OMP_NUM_THREADS="1",
               OPENBLAS_NUM_THREADS="1")  # n ranks on 2 cores: one BLAS thread each
    cmd = [MPIRUN, *extra, "-n", str(n), sys.executable, *args]
    start = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        pytest.fail(f"{' '.join(cmd)} did not finish within {timeout} s:\n{out[-6000:]}")
    return proc.returncode, out, time.monotonic() - start


def _is_hydra() -> bool:
    out = subprocess.run([MPIRUN, "--version"], capture_output=True, text=True, timeout=30).stdout
    return "HYDRA" in out.upper()


# --- under mpirun ----------------------------------------------------------------------------------

@needs_mpi
@pytest.mark.parametrize("n", [2, 3])
def test_checks_pass_on_every_rank(n):
    rc, out, _ = _launch(n, ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-x",
                             str(HERE / "mpi_checks.py")], timeout=150)
    # one summary per rank; ranks share the terminal, so two can land on one line
    summaries = re.findall(r"\d+ (?:passed|failed)[^\n]*? in [\d.]+s", out)
    assert rc == 0 and len(summaries) == n, out[-8000:]
    assert not any("failed" in s or "error" in s for s in summaries), out[-8000:]


@needs_mpi
@pytest.mark.parametrize("mode", ["exit", "hang"])
def test_a_rank_that_dies_or_hangs_makes_the_others_raise_within_the_timeout(mode, tmp_path):
    """Rank 1 of 3 crashes (os._exit) or hangs before an all_reduce: ranks 0 and 2 raise
    DistributedTimeoutError after the 2 s timeout, with the explanation, and the job ends
    (their MPI_Abort at exit ends the hung rank too) instead of hanging."""
    extra: tuple[str, ...] = ()
    if mode == "exit":
        if not _is_hydra():
            pytest.skip("needs MPICH's mpirun -disable-auto-cleanup (otherwise mpirun itself kills the job)")
        # By default mpirun ends the whole job as soon as one rank dies, which leaves no hang to
        # detect; keeping the survivors running is the case the timeout exists for.
        extra = ("-disable-auto-cleanup",)
    rc, out, seconds = _launch(3, [str(HERE / "mpi_dead_rank.py"), mode, str(tmp_path)], timeout=90, extra=extra)
    assert rc != 0, out[-4000:]
    assert seconds < 45, f"took {seconds:.0f} s\n{out[-4000:]}"
    assert not (tmp_path / "rank1.txt").exists()
    for r in (0, 2):
        report = (tmp_path / f"rank{r}.txt").read_text()
        assert report.startswith("DistributedTimeoutError after 2."), report
        assert f"did not complete on rank {r} of 3 within 2 s" in report and "died, hangs" in report, report
        assert "init(timeout=" in report  # says how to raise the limit
        after = (tmp_path / f"rank{r}.after.txt").read_text()
        assert "communicator is unusable" in after, after
    # the first survivor to exit announces the abort (to mpirun's output, which the abort may
    # cut short, and to its own copy of stderr, which it cannot)
    said = [(tmp_path / f"rank{r}.stderr.txt").read_text() for r in (0, 2)]
    assert any("aborts the MPI job" in t for t in said), (said, out[-4000:])


@needs_mpi
def test_train_digits_on_two_processes_ends_with_one_process_weights(tmp_path):
    """mpirun -n 2 python examples/train_digits.py --distributed: each process takes half of
    every global batch of 32, and the weights after an epoch are those of one process
    training on the whole global batches."""
    example = str(ROOT / "examples" / "train_digits.py")
    common = ["--distributed", "--epochs", "1", "--no-progress"]
    rc1, out1, _ = _launch(1, [example, *common, "--save-weights", str(tmp_path / "one.npz"),
                               "--out", str(tmp_path / "one.png")], timeout=150)
    rc2, out2, _ = _launch(2, [example, *common, "--save-weights", str(tmp_path / "two.npz"),
                               "--out", str(tmp_path / "two.png")], timeout=150)
    assert rc1 == 0, out1[-4000:]
    assert rc2 == 0, out2[-4000:]
    assert "data parallel over 2 processes, 16 samples each per global batch of 32" in out2
    assert out2.count("final test accuracy") == 1  # only rank 0 speaks
    one, two = np.load(tmp_path / "one.npz"), np.load(tmp_path / "two.npz")
    assert sorted(one) == sorted(two) and len(one) == 8
    for k in one:
        # float rounding apart: sums over 16 + 16 samples instead of 32 (measured: ~1e-8; a
        # max-pool or ReLU near tie flipped by a last-bit difference shows as ~1e-5)
        np.testing.assert_allclose(two[k], one[k], rtol=0, atol=1e-4, err_msg=k)
        assert not np.allclose(one[k], 0)


# --- in this process, without MPI -----------------------------------------------------------------

def test_without_init_every_entry_point_says_to_call_init(monkeypatch):
    monkeypatch.setattr(_comm._GROUP, "comm", None)
    for call in (dist.rank, dist.world_size, dist.barrier, lambda: dist.all_reduce(np.ones(2)),
                 lambda: dist.broadcast(np.ones(2)), lambda: dist.DistributedDataParallel(nn.Linear(2, 2)),
                 lambda: dist.data_parallel(lambda p: (p, p))(1.0)):
        with pytest.raises(dist.DistributedError, match=r"not initialised; call fgrad.distributed.init\(\) first"):
            call()
    assert not dist.is_initialized()


def test_init_without_mpi4py_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(_comm._GROUP, "comm", None)
    monkeypatch.setitem(sys.modules, "mpi4py", None)  # import mpi4py now raises ImportError
    with pytest.raises(ImportError, match=r"pip install 'fgrad\[distributed\]'.*mpirun -n 2"):
        dist.init()
    assert not dist.is_initialized()


def test_arguments_are_checked_before_any_communication(monkeypatch):
    with pytest.raises(ValueError, match="timeout must be a positive number"):
        dist.init(timeout=0)
    with pytest.raises(ValueError, match="op must be one of"):
        dist.data_parallel(op="avg")
    with pytest.raises(TypeError, match="wraps a callable"):
        dist.data_parallel(3)


def test_distributed_sampler_reads_the_group_once_initialised(monkeypatch):
    monkeypatch.setattr(data_distributed, "_process_group", lambda: (4, 3))
    s = DistributedSampler(range(10), shuffle=False)
    assert (s.num_replicas, s.rank) == (4, 3) and list(s) == [3, 7, 1]
    assert list(DistributedSampler(range(10), rank=1, shuffle=False)) == [1, 5, 9]  # only the missing one
    monkeypatch.setattr(data_distributed, "_process_group", None)
    with pytest.raises(RuntimeError, match=r"pass num_replicas and rank explicitly.*fgrad.distributed.init"):
        DistributedSampler(range(10))
