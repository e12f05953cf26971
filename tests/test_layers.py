"""The package's layering holds: `lint-imports` checks the contract in pyproject.toml (core ->
interpreters -> ops -> numpy -> scipy -> api -> custom -> tensor -> nn -> optim/data ->
serialization/func; a module imports only from layers below its own), and imports inside
functions are kept for the cases that need them, each saying why."""
from __future__ import annotations

import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent

# Function-level imports are allowed for optional or heavy dependencies only (and each still
# carries a comment on its own line or the one above saying why).
_LAZY_OK = ("cupy", "cupyx", "numba", "sklearn", "scipy", "matplotlib", "tqdm", "torch", "jax", "ctypes",
            "mpi4py", "graphviz")


# Two real cycles inside the ops layer, each explained where it stands: reduce_sum is the
# transpose of broadcast_in_dim (shape.py) and sums cotangents of 0-d operands (elementwise.py),
# while reduce.py's rules are written with both modules' ops.
_CYCLES = {("fgrad/ops/shape.py", "from .reduce import reduce_sum"),
           ("fgrad/ops/elementwise.py", "from .reduce import reduce_sum")}


def test_import_contract_is_kept():
    exe = shutil.which("lint-imports")
    if exe is None:
        pytest.skip("import-linter is not installed (it is in the test extra)")
    run = subprocess.run([exe, "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
