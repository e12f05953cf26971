"""tests/ mirrors fgrad's package tree: a test of fgrad.scipy.stats lives in tests/scipy/stats/,
one of the Tensor facade's in tests/torch/, so the tests of a module are found by its name.

This file and the package's __init__.py are the only Python files at tests/ root; every other
folder is either named for an fgrad package or module (tests/a/b/ for `fgrad.a.b`) and is a
Python package itself (tests import each other as `tests.a.b.module`), or is one of the few
folders in NOT_PACKAGES that hold data, oracles or cross-cutting suites. Test files are named
for what they test, never `*_more.py` / `*_extra.py`."""
from __future__ import annotations

import importlib
import pathlib

TESTS = pathlib.Path(__file__).resolve().parent
FGRAD = TESTS.parent / "fgrad"

# Folders of tests/ that name no fgrad package, each with why it exists.
NOT_PACKAGES = {
    "api": "fgrad's top-level modules (api.py's transforms, custom.py, tree_util.py, ...)",
    "packaging": "what the distribution ships: layers, namespaces, license, notebooks",
    "cases": "the primitive registry's case tables (read by tests/ops/test_primitives.py)",
    "corpus": "whole PyTorch scripts run under both libraries",
    "data": "stored oracle results",
    "jax_docs": "JAX's documentation examples run on fgrad",
    "pytorch_scripts": "PyTorch's tutorials and pytorch/examples' scripts run on fgrad",
    "oracle": "programs compared against JAX and PyTorch",
    "gpu": "the tests that need a GPU (bench/gpu_check.sh runs this folder)",
}

# The files allowed at tests/ root.
ROOT_FILES = {"__init__.py", "conftest.py", "test_layout.py"}


def _is_fgrad_module(module: str) -> bool:
    """Whether `module` (dotted, from "fgrad.") is a package or module of fgrad: a folder or
    file of the source tree, or a name only the import system knows (fgrad.torch.autograd is
    an alias that fgrad.torch puts in sys.modules)."""
    source = FGRAD.joinpath(*module.split(".")[1:])
    if source.is_dir() or source.with_suffix(".py").is_file():
        return True
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True


def _layout_problems(tests: pathlib.Path) -> list[str]:
    """Every way `tests` departs from the layout, one line each with the fix.

    Args:
        tests: the tests folder to inspect.

    Returns:
        Human-readable problems; empty when the layout holds.
    """
    problems = []
    for path in sorted(tests.glob("*.py")):
        if path.name not in ROOT_FILES:
            problems.append(f"tests/{path.name} sits at tests/ root: move it into the folder of the "
                            "fgrad package it tests (tests/<package>/...)")
    for path in sorted(tests.rglob("test_*.py")):
        if path.stem.endswith(("_more", "_extra")):
            problems.append(f"{path.relative_to(tests.parent)}: name the file for what it tests, or "
                            "merge it into its sibling (no *_more.py / *_extra.py)")
    for folder in sorted(p for p in tests.rglob("*") if p.is_dir()):
        rel = folder.relative_to(tests)
        if "__pycache__" in rel.parts or rel.parts[0] in NOT_PACKAGES or rel.parts[0].startswith("."):
            continue
        module = "fgrad." + ".".join(rel.parts)
        if not _is_fgrad_module(module):
            fix = "put its files under the folder of the package they test"
            if len(rel.parts) == 1:
                fix += f", or add '{rel.parts[0]}' with its reason to NOT_PACKAGES in tests/test_layout.py"
            problems.append(f"tests/{rel.as_posix()}/ names no fgrad package (there is no {module}): {fix}")
            continue
        if not (folder / "__init__.py").exists():
            problems.append(f"tests/{rel.as_posix()}/ has no __init__.py: add an empty one "
                            "(tests import each other as tests.<package>.<module>)")
    return problems


def test_tests_mirror_the_package_tree():
    problems = _layout_problems(TESTS)
    assert not problems, "\n".join(problems)


def test_every_exception_folder_exists():
    # A stale entry would let a misnamed folder through later.
    missing = sorted(name for name in NOT_PACKAGES if not (TESTS / name).is_dir())
    assert not missing, f"NOT_PACKAGES in tests/test_layout.py lists folders that are gone: {missing}"


def test_the_check_finds_each_kind_of_violation(tmp_path):
    tests = tmp_path / "tests"
    (tests / "numpy").mkdir(parents=True)
    (tests / "numpy" / "__init__.py").write_text("")
    (tests / "numpy" / "test_linalg.py").write_text("")
    assert _layout_problems(tests) == []
    (tests / "__init__.py").write_text("")
    (tests / "test_flat.py").write_text("")
    (tests / "numpy" / "test_linalg_more.py").write_text("")
    (tests / "numpy" / "test_fft_extra.py").write_text("")
    (tests / "nowhere").mkdir()
    (tests / "lax").mkdir()
    problems = "\n".join(_layout_problems(tests))
    assert "tests/test_flat.py sits at tests/ root" in problems
    assert "test_linalg_more.py: name the file" in problems
    assert "test_fft_extra.py: name the file" in problems
    assert "tests/nowhere/ names no fgrad package" in problems
    assert "tests/lax/ has no __init__.py" in problems
    assert len(problems.splitlines()) == 5
