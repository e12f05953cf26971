"""`import torch` as fgrad.torch: fgrad.install_as_torch() and `python -m fgrad.run script.py`
(fgrad/torch/_alias.py, fgrad/run.py). Each case runs in a fresh interpreter: the alias
changes what `torch` means process-wide, and the real PyTorch may be imported here."""
from __future__ import annotations

import pathlib
import subprocess
import sys
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _python(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=240,
                          cwd=cwd or ROOT, env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})


SCRIPT = """
import sys
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import optim
from torch.utils.data import DataLoader, TensorDataset
import fgrad.torch
assert torch is fgrad.torch and nn is fgrad.torch.nn and F is fgrad.torch.nn.functional
assert isinstance(torch.zeros(2), fgrad.torch.Tensor)
assert torch.__spec__.name == "fgrad.torch"  # the module keeps its own spec
torch.manual_seed(0)
model = nn.Linear(3, 2)
opt = optim.SGD(model.parameters(), lr=0.1)
data = DataLoader(TensorDataset(torch.randn(8, 3), torch.zeros(8, 2)), batch_size=4)
for x, y in data:
    opt.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    opt.step()
import helper_module  # the script's own directory is on sys.path, as for `python script.py`
print("ran", __name__, sys.argv[1:], type(loss.grad_fn).__name__, helper_module.VALUE)
"""


def test_run_script_resolves_every_torch_import_to_fgrad_torch(tmp_path):
    (tmp_path / "train.py").write_text(textwrap.dedent(SCRIPT))
    (tmp_path / "helper_module.py").write_text("VALUE = 7\n")
    r = _python("-m", "fgrad.run", str(tmp_path / "train.py"), "--epochs", "1")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["ran", "__main__", "['--epochs',", "'1']", "MseLossBackward0", "7"]


def test_submodules_of_a_module_parent_import(tmp_path):
    # torch.autograd is a package in PyTorch, a module with registered submodules in fgrad.torch
    script = tmp_path / "fwd.py"
    script.write_text(textwrap.dedent("""
        import torch.autograd.forward_ad as fwAD
        from torch.autograd.graph import saved_tensors_hooks
        import fgrad.torch
        assert fwAD is fgrad.torch.autograd.forward_ad
        assert saved_tensors_hooks is fgrad.torch.autograd.graph.saved_tensors_hooks
        print("ok")
    """))
    r = _python("-m", "fgrad.run", str(script))
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["ok"]


@pytest.mark.slow  # (four more interpreters)
def test_run_module_and_usage_and_failing_script(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "main.py").write_text("import sys, torch\nprint(torch.__name__, sys.argv[1:], __name__)\n")
    (tmp_path / "fails.py").write_text("import torch\nraise ValueError('from the script')\n")
    code = textwrap.dedent(f"""
        import subprocess, sys
        def run(*a):
            return subprocess.run([sys.executable, "-m", "fgrad.run", *a], capture_output=True, text=True,
                                  cwd={str(tmp_path)!r})
        r = run("-m", "pkg.main", "x")
        print(r.returncode, r.stdout.strip())
        r = run()
        print(r.returncode, "usage:" in r.stderr)
        r = run({str(tmp_path / "fails.py")!r})
        print(r.returncode, "ValueError: from the script" in r.stderr)
        r = run("no_such_script.py")
        print(r.returncode, "can't open file" in r.stderr)
    """)
    r = _python("-c", code)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["0 fgrad.torch ['x'] __main__", "2 True", "1 True", "1 True"]


def test_install_as_torch_in_process_then_missing_submodule_and_uninstall():
    code = textwrap.dedent("""
        import sys, fgrad
        fgrad.install_as_torch()
        fgrad.install_as_torch()  # a second call changes nothing
        import torch, torch.nn.functional as F
        print(torch.__name__, F.__name__)
        try:
            import torch.no_such_submodule
        except ModuleNotFoundError as e:
            print(e.name, "fgrad.torch has no 'fgrad.torch.no_such_submodule'" in str(e))
        from fgrad.torch import _alias
        _alias.uninstall()
        print([n for n in sys.modules if n == "torch" or n.startswith("torch.")])
    """)
    r = _python("-c", code)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["fgrad.torch fgrad.torch.nn.functional", "torch.no_such_submodule True", "[]"]


@pytest.mark.slow  # (imports the real PyTorch)
def test_install_refuses_when_the_real_torch_is_imported():
    pytest.importorskip("torch")
    r = _python("-c", "import torch, fgrad\nfgrad.install_as_torch()")
    assert r.returncode == 1
    assert "RuntimeError: fgrad.install_as_torch(): the real PyTorch is already imported" in r.stderr
    assert "before anything imports torch" in r.stderr
