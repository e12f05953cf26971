"""The notebooks in notebooks/ are committed with the outputs a fresh run gives.

Executing them takes tens of seconds, so those tests are marked slow (CI runs them); the default run
checks what can be checked without a kernel: every code cell that prints or draws carries its
outputs, none is an error, and nothing volatile (addresses, timings, nbclient's timestamps) was
committed. tools/run_notebooks.py refreshes the outputs and owns the comparison.
"""
import base64
import copy
import importlib.util
import re
import shutil
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbclient")

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("run_notebooks", ROOT / "tools" / "run_notebooks.py")
run_notebooks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(run_notebooks)

NOTEBOOKS = run_notebooks.notebook_paths()
REFRESH = "refresh with: python tools/run_notebooks.py"


def _code_cells(path):
    return [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]


def test_notebooks_exist():
    assert [p.name for p in NOTEBOOKS] == ["01_autograd_basics.ipynb", "02_higher_order.ipynb",
                                           "03_training.ipynb"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_committed_outputs_are_clean(path):
    cells = _code_cells(path)
    # a cell whose last line is an expression, or that prints or shows a figure, has output
    speaking = [c for c in cells if re.search(r"print\(|plt\.show\(\)|fgrad\.viz\.draw\(|^\w+$",
                                              c.source, re.M)]
    silent = [c.source.splitlines()[0] for c in speaking if not c.outputs]
    assert not silent, f"{path.name}: cells committed without outputs ({REFRESH}): {silent}"
    errors = [o["ename"] for c in cells for o in c.outputs if o["output_type"] == "error"]
    assert not errors, f"{path.name}: committed error outputs {errors}"
    texts = [o["text"] if o["output_type"] == "stream" else o["data"].get("text/plain", "")
             for c in cells for o in c.outputs]
    volatile = [t for t in texts if run_notebooks.normalise(t) != t]
    assert not volatile, f"{path.name}: outputs hold memory addresses or IPython cell files: {volatile}"
    timings = [t for t in texts if re.search(r"\d ?(s|ms|µs|sec|seconds)\b|elapsed", t)]
    assert not timings, f"{path.name}: outputs print timings, which change on every run: {timings}"
    assert not any("execution" in c.metadata for c in cells), \
        f"{path.name}: nbclient's per-cell timestamps were committed ({REFRESH})"


def test_compare_sees_stale_outputs():
    # The slow comparison below fails only if `compare` notices a difference: a changed text,
    # a figure of another pixel size, a graph with another number of nodes, a missing output.
    nb = nbformat.read(ROOT / "notebooks" / "02_higher_order.ipynb", as_version=4)
    assert run_notebooks.compare(nb, copy.deepcopy(nb)) == []

    def changed(edit):
        other = copy.deepcopy(nb)
        edit([c for c in other.cells if c.cell_type == "code"])
        return run_notebooks.compare(nb, other)

    def text(cells):
        stream = next(o for c in cells for o in c.outputs if o["output_type"] == "stream")
        stream["text"] = stream["text"].replace("True", "False", 1)

    def widen(pixels):
        def edit(cells):
            shown = next(o for c in cells for o in c.outputs if "image/png" in o.get("data", {}))
            raw = bytearray(base64.b64decode(shown["data"]["image/png"]))
            width = int.from_bytes(raw[16:20], "big")  # the IHDR chunk's width
            raw[16:20] = (width + pixels).to_bytes(4, "big")
            shown["data"]["image/png"] = base64.b64encode(bytes(raw)).decode()
        return edit

    png = widen(100)

    def svg(cells):
        drawn = next(o for c in cells for o in c.outputs if "image/svg+xml" in o.get("data", {}))
        drawn["data"]["image/svg+xml"] = drawn["data"]["image/svg+xml"].replace('class="node"', 'class="x"', 1)

    def dropped(cells):
        next(c for c in cells if c.outputs).outputs.pop()

    for edit in (text, png, svg, dropped):
        assert len(changed(edit)) == 1, edit.__name__
    # what changes on every run, or with the font rendering, does not count as a difference
    assert changed(widen(2)) == []

    def split(cells):  # one print's text sent in two messages, as a loaded kernel may
        cell = next(c for c in cells if any(o["output_type"] == "stream" for o in c.outputs))
        k = next(i for i, o in enumerate(cell.outputs) if o["output_type"] == "stream")
        whole = cell.outputs[k]
        cut = len(whole["text"]) // 2
        cell.outputs[k:k + 1] = [nbformat.v4.new_output("stream", name=whole["name"], text=whole["text"][:cut]),
                                 nbformat.v4.new_output("stream", name=whole["name"], text=whole["text"][cut:])]
    assert changed(split) == []
    assert run_notebooks.normalise("<PowBackward0 object at 0x7f339cf33140> at "
                                   "/tmp/ipykernel_7654/1083937210.py:2") == \
        run_notebooks.normalise("<PowBackward0 object at 0x7f22bf697060> at "
                                "/tmp/ipykernel_81/998.py:2")


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_outputs_are_fresh(path):
    pytest.importorskip("ipykernel")
    if shutil.which("dot") is None:
        # fgrad.viz then shows a text in place of each graph, so the outputs cannot match
        pytest.skip("Graphviz's `dot` is not installed (apt-get install graphviz)")
    fresh = run_notebooks.execute(path)  # raises CellExecutionError, naming the cell, on a failure
    problems = run_notebooks.compare(nbformat.read(path, as_version=4), fresh)
    assert not problems, (f"{path.name}: committed outputs differ from a fresh run ({REFRESH} "
                          f"{path.stem}):\n" + "\n".join(problems))
