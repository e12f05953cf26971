"""pytorch/examples' fx scripts, unchanged, under real torch and under fgrad.torch (installed as
`torch` by fgrad.torch._alias): the printed outputs must be equal. Exported from a clone of
pytorch/examples at the pinned commit (tests/pytorch_scripts/sources.py); skipped without one."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ...pytorch_scripts.sources import export_example

pytestmark = pytest.mark.slow

RUNNER = r"""
import runpy, sys
if sys.argv[1] == "fgrad":
    from fgrad.torch import _alias
    _alias.install()
import torch
torch.manual_seed(0)
sys.argv = sys.argv[2:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""

# the outputs equal line for line
EQUAL = ["custom_tracer", "inline_function", "primitive_library", "proxy_based_graph_creation", "replace_op",
         "subgraph_rewriter_basic_use", "wrap_output_dynamically"]
_ADDRESS = re.compile(r"0x[0-9a-f]+")
_ROOT = Path(__file__).resolve().parents[3]


def _run(lib: str, script: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(_ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-c", RUNNER, lib, script.name], cwd=script.parent, env=env,
                          capture_output=True, text=True, timeout=300)


def _lines(text: str) -> list[str]:
    return [_ADDRESS.sub("0x?", line) for line in text.splitlines()]


@pytest.fixture(scope="module")
def fx_folder(tmp_path_factory):
    pytest.importorskip("torch")
    return export_example("fx", tmp_path_factory.mktemp("examples"))


@pytest.mark.parametrize("name", EQUAL)
def test_fx_example_prints_what_torch_prints(name, fx_folder):
    if name == "custom_tracer":  # torch.fx's print_tabular needs tabulate
        pytest.importorskip("tabulate")
    ref, got = _run("torch", fx_folder / f"{name}.py"), _run("fgrad", fx_folder / f"{name}.py")
    assert ref.returncode == 0, ref.stderr[-2000:]
    assert got.returncode == 0, got.stderr[-2000:]
    assert _lines(got.stdout) == _lines(ref.stdout)


def test_invert_example_graphs_equal_and_values_close(fx_folder):
    # invert prints exp(tan(arctan(log(x)))) for x = 1..5 in float32. torch's arctan (SLEEF's
    # vectorised atanf, within 1 ulp) rounds arctan(log 4) = 0.945886381... down to 0.94588637,
    # NumPy's (fgrad's) to the nearest float, 0.94588643; tan and exp carry that ulp to 4.000001,
    # so the printout shows four decimals where torch's, all integers, shows "4.". With
    # NumPy's arctan in torch's chain torch prints the same. Every other line is equal.
    ref, got = _run("torch", fx_folder / "invert.py"), _run("fgrad", fx_folder / "invert.py")
    assert ref.returncode == 0 and got.returncode == 0, got.stderr[-2000:]
    r, g = _lines(ref.stdout), _lines(got.stdout)
    assert len(r) == len(g)
    for a, b in zip(g, r):
        if a != b:
            nums = [[float(v) for v in re.findall(r"-?\d+\.\d*", s)] for s in (a, b)]
            assert a.startswith("tensor(") and len(nums[0]) == len(nums[1])
            assert all(abs(x - y) <= 1e-4 * max(1.0, abs(y)) for x, y in zip(*nums))


# aten ops that torch's CPU kernels of other ops call: torch's relu kernel is a clamp_min, so its
# profile shows an aten::clamp_min row inside aten::relu; fgrad's relu is one primitive, timed
# as one op
_KERNEL_CALLS = {"aten::clamp_min"}


def _profiler_tables(text: str) -> list[dict]:
    """The profiler tables a script printed: header cells and (name, # of calls) rows."""
    tables, lines = [], text.splitlines()
    for i, line in enumerate(lines):
        if line.strip().startswith("Name") and "Self CPU %" in line:
            rows, j = [], i + 2
            while not lines[j].startswith("---"):
                cells = lines[j].split()
                rows.append((cells[0], int(cells[-1]), cells[3]))
                j += 1
            tables.append({"header": line.split(), "rows": rows, "total": lines[j + 1].split(":")[0]})
    return tables


def test_profiling_tracer_example_prints_torchs_tables(fx_folder):
    # The script times a record_function block three ways (eager, plain symbolic_trace, a Tracer
    # that records torch.ops.profiler enter/exit calls); each table must have torch's rows in
    # torch's order and counts (the timings differ run to run), less the rows of ops torch's
    # kernels call inside others.
    ref, got = _run("torch", fx_folder / "profiling_tracer.py"), _run("fgrad", fx_folder / "profiling_tracer.py")
    assert ref.returncode == 0, ref.stderr[-2000:]
    assert got.returncode == 0, got.stderr[-2000:]
    r, g = _profiler_tables(ref.stdout), _profiler_tables(got.stdout)
    assert len(r) == len(g) == 3
    for a, b in zip(g, r):
        assert a["header"] == b["header"] and a["total"] == b["total"] == "Self CPU time total"
        assert [row[:2] for row in a["rows"]] == [row[:2] for row in b["rows"] if row[0] not in _KERNEL_CALLS]
        assert a["rows"][0][2] == b["rows"][0][2] == "100.00%"  # the first row encloses the rest
    assert [row[0] for row in g[2]["rows"]] == ["foo", "aten::empty", "aten::relu"]


# module_tracer.py traces torchvision's resnet18, and torchvision is not installed here (fgrad
# has no torchvision of its own): its ModulePathTracer runs instead on a ResNet-shaped model
# written here (blocks with a downsample branch, a residual add, a pooled head).
_RESNET_SHAPED = """
class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1, self.bn1 = torch.nn.Conv2d(4, 4, 3, padding=1), torch.nn.BatchNorm2d(4)
        self.relu = torch.nn.ReLU()
        self.downsample = torch.nn.Sequential(torch.nn.Conv2d(4, 4, 1), torch.nn.BatchNorm2d(4))

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        return self.relu(out + self.downsample(x))


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layer1 = torch.nn.Sequential(Block(), Block())
        self.avgpool, self.fc = torch.nn.AdaptiveAvgPool2d(1), torch.nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(torch.flatten(self.avgpool(self.layer1(x)), 1))


tracer = ModulePathTracer()
traced = tracer.trace(Net())
for node in traced.nodes:
    print('Node', node, 'is from module', tracer.node_to_originating_module.get(node))
"""


def test_module_tracer_example_without_torchvision(fx_folder):
    source = (fx_folder / "module_tracer.py").read_text()
    head, sep, _ = source.partition("# Testing: let's see how this works on a torchvision ResNet18 model")
    assert sep and "import torchvision" in source
    script = fx_folder / "module_tracer_resnet_shaped.py"
    script.write_text(head + _RESNET_SHAPED)
    ref, got = _run("torch", script), _run("fgrad", script)
    assert ref.returncode == 0, ref.stderr[-2000:]
    assert got.returncode == 0, got.stderr[-2000:]
    assert _lines(got.stdout) == _lines(ref.stdout) and "Node add_1 is from module layer1.1" in got.stdout

