"""The package's layering holds: `lint-imports` checks the contract in pyproject.toml (core -> tree_util ->
interpreters -> ops -> numpy -> _packing -> api -> custom/lax -> scipy -> tensor -> nn -> optim/data ->
serialization/func; a module imports only from layers below its own), and imports inside
functions are kept for the cases that need them, each saying why."""
from __future__ import annotations

import pathlib
import re
import shutil
import subprocess
import tomllib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

# Function-level imports may not cross a layer, except for optional or slow dependencies; one
# inside a package (`from .module import ...`) may break a cycle between the package's own
# modules. Each carries a comment, on its line or the one above, saying why.
_LAZY_OK = ("cupy", "cupyx", "numba", "llvmlite", "sklearn", "scipy", "matplotlib", "tqdm", "torch", "jax",
            "ctypes", "mpi4py", "graphviz", "ml_dtypes", "opt_einsum", "threadpoolctl")
# Module-level imports guarded by try/except for a NumPy version (a private module that may
# move), each with its fallback and a comment saying why.
_VERSION_GUARDED = ("numpy._core",)


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


def test_function_level_imports_are_only_for_optional_dependencies_and_say_why():
    bad = []
    for path in sorted((ROOT / "fgrad").rglob("*.py")):
        lines = path.read_text().splitlines()
        for i, line in enumerate(lines):
            m = re.match(r"^\s+(?:from\s+(\S+)\s+import|import\s+(\S+))", line)
            if not m or line.lstrip().startswith("#"):
                continue
            mod = (m.group(1) or m.group(2)).split(".")[0]
            why = "#" in line or (i > 0 and lines[i - 1].strip().startswith("#"))
            if (str(path.relative_to(ROOT)), line.strip()) in _CYCLES:
                continue
            same_package = bool(m.group(1)) and re.match(r"\.+([A-Za-z_]|$)", m.group(1)) is not None
            guarded = (m.group(1) or m.group(2)).startswith(_VERSION_GUARDED)
            if not why or not (mod in _LAZY_OK or same_package or guarded):
                bad.append(f"{path.relative_to(ROOT)}:{i + 1}: {line.strip()}")
    assert not bad, "imports inside functions (move them to the module's top; an optional dependency " \
                    "or a cycle inside the package needs a comment saying why):\n" + "\n".join(bad)


def test_facade_contract_lists_every_private_module_of_fgrad_numpy():
    """import-linter's wildcards replace whole names only, so the contract that keeps fgrad.torch
    off fgrad.numpy's private modules lists them; a new one must be added there."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    contract, = [c for c in config["tool"]["importlinter"]["contracts"]
                 if c["name"] == "fgrad.torch does not import fgrad.numpy's private modules"]
    private = {f"fgrad.numpy.{p.stem}" for p in (ROOT / "fgrad" / "numpy").glob("_*.py") if p.stem != "__init__"}
    private |= {f"fgrad.numpy.{p.name}" for p in (ROOT / "fgrad" / "numpy").glob("_*/") if p.is_dir()
                and p.name != "__pycache__"}
    assert set(contract["forbidden_modules"]) == private
