"""docs/torch-coverage.md is what `python tools/torch_coverage.py` generates (issue 26): every
public name of PyTorch's namespaces in scope, with whether fgrad.torch has it. Adding or removing
a name in fgrad.torch makes the committed page stale, and this test says how to regenerate it."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="the page lists real PyTorch's names")

TOOL = Path(__file__).resolve().parents[2] / "tools" / "torch_coverage.py"


def _tool():
    spec = importlib.util.spec_from_file_location("torch_coverage", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


coverage = _tool()
pytestmark = pytest.mark.skipif(
    not torch.__version__.startswith(coverage.TORCH_VERSION + "."),
    reason=f"the committed page lists torch {coverage.TORCH_VERSION}'s names, "
           f"this is torch {torch.__version__}")


@pytest.fixture(scope="module")
def table():
    return coverage.rows()


def _statuses(page: str) -> dict[str, str]:
    """name -> status from a page's per-namespace tables."""
    rows = (line.split(" | ") for line in page.splitlines() if line.startswith("| `torch."))
    return {cells[0].strip("| `"): cells[1].rstrip(" |") for cells in rows if len(cells) == 2}


def test_committed_page_is_current(table):
    committed, current = coverage.DOC.read_text(), coverage.render(table)
    if committed != current:
        old, new = _statuses(committed), _statuses(current)
        changes = [f"{name}: {old.get(name, '(not listed)')} -> {new.get(name, '(not listed)')}"
                   for name in sorted(set(old) | set(new)) if old.get(name) != new.get(name)]
        pytest.fail("docs/torch-coverage.md is stale: run python tools/torch_coverage.py\n"
                    + "\n".join(changes[:30]) + ("\n..." if len(changes) > 30 else ""))


def test_rules_are_consistent(table):
    # Every row has one of the three statuses, each name appears once per namespace, and no
    # out-of-scope rule picks a name fgrad.torch is asked to have (the tutorials' names).
    statuses = {r.status for r in table}
    assert statuses <= {"present", "missing"} | {f"out of scope ({rule.reason})"
                                                 for rule in coverage.OUT_OF_SCOPE}
    keys = [(r.namespace, r.name) for r in table]
    assert len(keys) == len(set(keys))
    for namespace, name in [("torch", "tensor"), ("Tensor", "storage_offset"), ("Tensor", "add_"),
                            ("torch.nn", "LazyLinear"), ("torch.autograd.graph", "Node"),
                            ("torch.linalg", "qr"), ("Tensor", "int"), ("torch", "set_grad_enabled"),
                            ("torch.fft", "hfft2")]:
        assert coverage.out_of_scope_reason(namespace, name) is None, (namespace, name)
    for namespace, name in [("Tensor", "q_scale"), ("torch", "quantize_per_tensor"),
                            ("Tensor", "to_sparse_csr"), ("Tensor", "is_nested"),
                            ("torch", "cudnn_convolution"), ("Tensor", "untyped_storage"),
                            ("torch", "ScriptModule"), ("Tensor", "is_xpu")]:
        assert coverage.out_of_scope_reason(namespace, name) is not None, (namespace, name)
    # The names chosen include the ones torch's `__all__` leaves out but torch defines.
    names = {(r.namespace, r.name) for r in table}
    assert {("torch", "set_grad_enabled"), ("torch.fft", "hfft2"), ("torch", "channels_last"),
            ("Tensor", "add_")} <= names
    assert not {("torch.nn.functional", "Tensor"), ("torch.nn.init", "Callable"),
                ("torch.nn.utils", "parametrize")} & names
