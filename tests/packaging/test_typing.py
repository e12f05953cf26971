"""Static typing: the generated stubs match the runtime modules, and a type checker sees the
installed package as typed (py.typed) with the names users call. CI runs pyright on examples/
and tests/packaging/typing_scripts/ (.ci/run); these tests keep the stubs honest."""
from __future__ import annotations

import importlib.util
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPTS = pathlib.Path(__file__).resolve().parent / "typing_scripts"


def _generator():
    spec = importlib.util.spec_from_file_location("gen_type_stubs", ROOT / "tools" / "gen_type_stubs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generated_stubs_are_current():
    gen = _generator()
    stale = [str(path.relative_to(ROOT)) for path, text in gen.stubs().items()
             if not path.exists() or path.read_text() != text]
    assert not stale, f"stale type stubs {stale}: run python tools/gen_type_stubs.py and commit them"


def test_stubs_declare_the_table_names_users_call():
    # The names a checker could not see before the stubs: a creation function, a table op,
    # a Tensor method from _methods.py's table.
    tensor_names = (ROOT / "fgrad/torch/_tensor/_tensor_names.pyi").read_text()
    methods = (ROOT / "fgrad/torch/_tensor/_tensor_methods.pyi").read_text()
    assert "\ndef ones(" in tensor_names and "\ndef matmul(" in tensor_names
    assert "    def sum(self" in methods and "    def view(self" in methods
    assert "    def backward(" not in methods  # TensorBase's own, annotated at its definition


def test_the_check_finds_a_stale_stub(tmp_path, monkeypatch):
    gen = _generator()
    path, text = next(iter(gen.stubs().items()))
    fake = tmp_path / path.name
    fake.write_text(text + "extra: int\n")
    monkeypatch.setattr(gen, "stubs", lambda: {fake: text})
    assert gen.main(["--check"]) == 1
    assert fake.read_text() == text + "extra: int\n"  # --check writes nothing
    assert gen.main([]) == 0 and fake.read_text() == text
    assert gen.main(["--check"]) == 0


def test_tensor_methods_match_the_runtime_class():
    import fgrad.torch as torch
    from fgrad.torch._tensor.tensor import TensorBase

    methods = (ROOT / "fgrad/torch/_tensor/_tensor_methods.pyi").read_text()
    for name in ("sum", "view", "relu", "argmax", "__add__", "__mul__", "__getitem__"):
        assert hasattr(torch.Tensor, name) and name not in vars(TensorBase)
        assert f"def {name}(self" in methods, name


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("mypy") is None,
                    reason="mypy is not installed (pip install -e .[typing])")
def test_mypy_sees_the_package_as_typed(tmp_path):
    # Without py.typed mypy reports `import-untyped` for every fgrad import; without the
    # re-export stub of fgrad.numpy, `jnp.sin` is "Module has no attribute".
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache"), "--follow-imports=silent",
         *[str(path) for path in sorted(SCRIPTS.glob("*.py"))]],
        capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert "import-untyped" not in result.stdout, result.stdout
    assert result.returncode == 0, result.stdout + result.stderr
