"""Re-execute the notebooks in notebooks/ and refresh, or check, their committed outputs.

    python tools/run_notebooks.py                 # execute every notebook, write fresh outputs
    python tools/run_notebooks.py --check         # execute, compare with the committed outputs
    python tools/run_notebooks.py 02_higher_order # only the notebooks named (stem or file name)

The committed .ipynb files are the source: edit a notebook in Jupyter (or by hand), then run
this tool so that the committed outputs are the ones a fresh run gives. tests/packaging/
test_notebooks.py runs the same comparison in CI, so stale outputs fail there.

Outputs must come out the same on every run (seeded randomness, no timings, no memory
addresses). `normalise` removes what cannot be avoided (addresses in reprs, IPython's
per-process cell file names); `compare` then wants text outputs equal, and images present
with the same pixel size within 3% (PNG) or the same numbers of nodes and edges (Graphviz SVG), since
their bytes change with the versions of matplotlib, FreeType and Graphviz.
"""
from __future__ import annotations

import argparse
import base64
import os
import re
import struct
import sys
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK_DIR = ROOT / "notebooks"
TIMEOUT_S = 300  # per cell; 03_training's training loop is the longest
PNG_SLACK = 0.03  # relative difference in a figure's width or height that still matches

# What differs between two runs of the same code and is not the notebook's content.
_VOLATILE = [
    (re.compile(r"\bat 0x[0-9a-fA-F]+"), "at 0x?"),                   # default object reprs
    (re.compile(r"[^\s:]*ipykernel_\d+[/\\]\d+\.py"), "<ipython cell>"),  # IPython's cell files
]


def notebook_paths(names: list[str] | None = None) -> list[Path]:
    """The notebooks to run.

    Args:
        names: notebook stems or file names (``"02_higher_order"`` or
            ``"02_higher_order.ipynb"``); None or empty for every notebook in notebooks/.

    Returns:
        The paths, sorted by name.

    Raises:
        FileNotFoundError: a name matches no notebook in notebooks/.
    """
    every = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
    if not names:
        return every
    by_stem = {p.stem: p for p in every}
    chosen = []
    for name in names:
        stem = name[:-len(".ipynb")] if name.endswith(".ipynb") else name
        if stem not in by_stem:
            raise FileNotFoundError(f"no notebook {name!r} in {NOTEBOOK_DIR}; "
                                    f"there are: {', '.join(sorted(by_stem))}")
        chosen.append(by_stem[stem])
    return chosen


def execute(path: Path) -> Any:
    """Run a notebook from a clean kernel, as a reader would run it top to bottom.

    The kernel starts in notebooks/ with the repository first on its PYTHONPATH, so it imports
    the checkout's fgrad whether or not that is the installed one.

    Args:
        path: the .ipynb file; it is read, never written.

    Returns:
        The executed notebook (an ``nbformat.NotebookNode``) with fresh outputs.

    Raises:
        nbclient.exceptions.CellExecutionError: a cell raised; the message shows the cell.
    """
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
            cell.metadata.pop("execution", None)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    # record_timing=False: nbclient would otherwise stamp every cell with wall-clock times.
    client = NotebookClient(nb, timeout=TIMEOUT_S, kernel_name="python3", record_timing=False,
                            resources={"metadata": {"path": str(NOTEBOOK_DIR)}})
    client.execute(env=env)
    return nb


def normalise(text: str) -> str:
    """Replace the parts of an output text that change from run to run.

    Args:
        text: a stream's text or a ``text/plain`` representation.

    Returns:
        The text with memory addresses and IPython's cell file names replaced by fixed
        placeholders.
    """
    for pattern, replacement in _VOLATILE:
        text = pattern.sub(replacement, text)
    return text


def _png_size(data: str) -> tuple[int, int]:
    raw = base64.b64decode(data)
    if raw[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("image/png output is not a PNG file")
    return struct.unpack(">II", raw[16:24])  # the IHDR chunk's width and height


def _svg_counts(svg: str) -> tuple[int, int]:
    return svg.count('class="node"'), svg.count('class="edge"')


def summarise(output: Any) -> Any:
    """What of one cell output must stay the same between runs.

    Args:
        output: one entry of a code cell's ``outputs``.

    Returns:
        A comparable value: a stream's name and normalised text; for rich outputs each MIME
        type with its normalised text, PNG pixel size or SVG node and edge counts; for an
        error its name and value.
    """
    kind = output["output_type"]
    if kind == "stream":
        return (kind, output["name"], normalise(output["text"]))
    if kind == "error":
        return (kind, output["ename"], normalise(output["evalue"]))
    data = {}
    for mime, value in sorted(output["data"].items()):
        if mime == "image/png":
            data[mime] = ("pixels", _png_size(value))
        elif mime == "image/svg+xml":
            data[mime] = ("nodes, edges", _svg_counts(value if isinstance(value, str) else "".join(value)))
        elif mime.startswith("text/"):
            data[mime] = normalise(value if isinstance(value, str) else "".join(value))
        else:
            data[mime] = "present"
    return (kind, data)


def _same(before: Any, after: Any) -> bool:
    # Jupyter's inline backend crops figures to their drawn extent, so a figure's pixel size
    # moves by a few pixels with the font rendering of another matplotlib or FreeType.
    if isinstance(before, tuple) and before[:1] == ("pixels",) and after[:1] == ("pixels",):
        return all(abs(b - a) <= PNG_SLACK * max(b, 1) for b, a in zip(before[1], after[1]))
    if isinstance(before, (tuple, list)) and isinstance(after, (tuple, list)):
        return len(before) == len(after) and all(map(_same, before, after))
    if isinstance(before, dict) and isinstance(after, dict):
        return before.keys() == after.keys() and all(_same(before[k], after[k]) for k in before)
    return before == after


def _joined(outputs: list) -> list:
    """A cell's outputs with each run of consecutive streams of one name joined into one: the
    kernel may send one print's text in several messages (when the machine is loaded), which
    a notebook shows as the same text."""
    joined: list = []
    for o in outputs:
        last = joined[-1] if joined else None
        if o["output_type"] == "stream" and last is not None and last["output_type"] == "stream" \
                and last["name"] == o["name"]:
            joined[-1] = {**last, "text": last["text"] + o["text"]}
        else:
            joined.append(o)
    return joined


def compare(committed: Any, fresh: Any) -> list[str]:
    """The differences between a committed notebook's outputs and a fresh run's.

    Args:
        committed: the notebook as committed.
        fresh: the same notebook executed by `execute`.

    Returns:
        One line per code cell whose outputs differ (empty when they all agree), naming the
        cell by its index and first source line, with the committed and the fresh summary.
    """
    problems = []
    old_cells = [c for c in committed.cells if c.cell_type == "code"]
    new_cells = [c for c in fresh.cells if c.cell_type == "code"]
    if [c.source for c in old_cells] != [c.source for c in new_cells]:
        return ["the code cells differ between the committed and the executed notebook"]
    for index, (old, new) in enumerate(zip(old_cells, new_cells)):
        before = [summarise(o) for o in _joined(old.outputs)]
        after = [summarise(o) for o in _joined(new.outputs)]
        if not _same(before, after):
            first_line = old.source.splitlines()[0] if old.source else ""
            problems.append(f"code cell {index} ({first_line!r}):\n    committed: {before}\n"
                            f"    fresh:     {after}")
    return problems


def main(argv: list[str] | None = None) -> int:
    """Command line: execute the notebooks and write (default) or check (--check) outputs.

    Args:
        argv: the arguments (default: ``sys.argv[1:]``).

    Returns:
        The exit status: 0, or 1 when --check found outputs that differ.
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="compare fresh outputs with the committed ones; write nothing")
    parser.add_argument("names", nargs="*", help="notebook stems or file names (default: all)")
    args = parser.parse_args(argv)
    status = 0
    for path in notebook_paths(args.names):
        fresh = execute(path)
        if args.check:
            problems = compare(nbformat.read(path, as_version=4), fresh)
            if problems:
                status = 1
                print(f"{path.name}: committed outputs are stale "
                      f"(refresh with: python tools/run_notebooks.py {path.stem})")
                for line in problems:
                    print("  " + line)
            else:
                print(f"{path.name}: outputs match")
        else:
            nbformat.validate(fresh)
            nbformat.write(fresh, path)
            print(f"wrote {path.relative_to(ROOT)}")
    return status


if __name__ == "__main__":
    sys.exit(main())
