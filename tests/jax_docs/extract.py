"""Extract the code cells of JAX's in-scope documentation pages into tests/jax_docs/cells/.

The pages are read from a git checkout of JAX at a pinned release (PIN); for pages that JAX
keeps as a Jupyter notebook as well as MyST markdown, the outputs the docs store are paired
with the cells. With ``--run-jax`` each page is also executed under the installed JAX (which
must be the pinned release) and what each cell printed is recorded, as ``jax_output`` (JAX's
defaults) and ``jax_x64_output`` (with jax_enable_x64, fgrad's default): most pages store no
outputs, and this gives the runner a reference for every cell.

Usage::

    python tests/jax_docs/extract.py /path/to/jax/checkout [--run-jax]

Args (command line):
    checkout: a git clone of github.com/jax-ml/jax holding the tag PIN.
    --run-jax: also run the cells under the installed jax and record their printed output.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

PIN = "jax-v0.10.2"
PIN_COMMIT = "990e6a0b84138346e6a38785412f36356e0e5dc3"

# page name -> path of the MyST source in JAX's repository (a notebook page has a paired
# .ipynb next to it that stores outputs).
PAGES = {
    "quickstart": "docs/notebooks/thinking_in_jax.md",
    "automatic_differentiation": "docs/automatic-differentiation.md",
    "higher_order": "docs/higher-order.md",
    "jvp_vjp": "docs/jacobian-vector-products.md",
    "complex_differentiation": "docs/complex-differentiation.md",
    "custom_derivatives": "docs/notebooks/Custom_derivative_rules_for_Python_code.md",
    "autodiff_cookbook": "docs/notebooks/autodiff_cookbook.md",
    "gradient_checkpointing": "docs/gradient-checkpointing.md",
    "autodiff_remat": "docs/notebooks/autodiff_remat.md",
    "automatic_vectorization": "docs/automatic-vectorization.md",
    "jit_compilation": "docs/jit-compilation.md",
    "control_flow": "docs/control-flow.md",
    "sharp_bits": "docs/notebooks/Common_Gotchas_in_JAX.md",
    "key_concepts": "docs/key-concepts.md",
    "pytrees": "docs/pytrees.md",
}

CELLS_DIR = Path(__file__).parent / "cells"

_FENCE = re.compile(r"^```\{code-cell\}")


def _git_show(checkout: Path, path: str) -> str | None:
    """The text of ``path`` at PIN in ``checkout``, or None where the file does not exist."""
    res = subprocess.run(["git", "-C", str(checkout), "show", f"{PIN}:{path}"],
                         capture_output=True, text=True)
    return res.stdout if res.returncode == 0 else None


def parse_myst(text: str) -> list[dict]:
    """Split a MyST notebook into its code cells.

    Args:
        text: the page's markdown.
    Returns:
        One dict per ``{code-cell}`` block: ``source`` (the code) and ``tags`` (its cell tags).
    """
    lines = text.splitlines()
    cells, i = [], 0
    while i < len(lines):
        if not _FENCE.match(lines[i]):
            i += 1
            continue
        i += 1
        meta: dict[str, str] = {}
        # Options are either ":key: value" lines or a "---" delimited YAML block.
        if i < len(lines) and lines[i].strip() == "---":
            i += 1
            while lines[i].strip() != "---":
                key, _, val = lines[i].partition(":")
                meta[key.strip()] = val.strip()
                i += 1
            i += 1
        while i < len(lines) and re.match(r"^:[\w-]+:", lines[i]):
            key, _, val = lines[i][1:].partition(":")
            meta[key.strip()] = val.strip()
            i += 1
        body = []
        while lines[i].rstrip() != "```":
            body.append(lines[i])
            i += 1
        i += 1
        tags = re.findall(r"[\w-]+", meta.get("tags", ""))
        cells.append({"source": "\n".join(body).strip("\n"), "tags": tags})
    return cells


def _notebook_outputs(text: str) -> list[dict]:
    """The stored outputs of each code cell of an .ipynb: printed text, shown value, error."""
    nb = json.loads(text)
    result = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        stdout, shown, error = "", None, None
        for out in cell.get("outputs", []):
            kind = out["output_type"]
            if kind == "stream" and out.get("name") == "stdout":
                stdout += "".join(out["text"])
            elif kind in ("execute_result", "display_data") and "text/plain" in out["data"]:
                shown = "".join(out["data"]["text/plain"])
            elif kind == "error":
                error = out["ename"]
        src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        result.append({"source": src, "stdout": stdout, "shown": shown, "error": error,
                       "has_output": bool(cell.get("outputs"))})
    return result


def extract(checkout: Path) -> dict[str, list[dict]]:
    """Read every in-scope page at PIN.

    Args:
        checkout: the JAX git checkout.
    Returns:
        page name -> list of cells (``source``, ``tags`` and, for notebook pages,
        ``docs_output`` with the stored ``stdout``/``shown``/``error``).
    """
    pages = {}
    for name, path in PAGES.items():
        text = _git_show(checkout, path)
        if text is None:
            raise FileNotFoundError(f"{path} is not in {checkout} at {PIN}")
        cells = parse_myst(text)
        nb_text = _git_show(checkout, path[:-3] + ".ipynb")
        if nb_text is not None:
            outputs = _notebook_outputs(nb_text)
            if len(outputs) != len(cells):
                raise ValueError(f"{path}: {len(cells)} MyST cells but {len(outputs)} in the .ipynb")
            for cell, out in zip(cells, outputs):
                if out["has_output"]:
                    cell["docs_output"] = {k: out[k] for k in ("stdout", "shown", "error")}
        pages[name] = cells
    return pages


def main(argv: list[str] | None = None) -> None:
    """Command line entry: write tests/jax_docs/cells/<page>.json."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkout", type=Path)
    ap.add_argument("--run-jax", action="store_true")
    args = ap.parse_args(argv)
    pages = extract(args.checkout)
    if args.run_jax:
        import jax
        sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
        from tests.jax_docs.notebook import run_cells
        if jax.__version__ != PIN.removeprefix("jax-v"):
            raise RuntimeError(f"--run-jax needs jax {PIN} installed, found {jax.__version__}")
        # fgrad computes in float64 by default, as JAX with jax_enable_x64: the x64 run is
        # the reference for values (random draws included), the default run for the rest.
        for key, x64 in (("jax_output", False), ("jax_x64_output", True)):
            jax.config.update("jax_enable_x64", x64)
            for name, cells in pages.items():
                for cell, res in zip(cells, run_cells([c["source"] for c in cells])):
                    cell[key] = res
    CELLS_DIR.mkdir(exist_ok=True)
    for name, cells in pages.items():
        doc = {"pin": PIN, "commit": PIN_COMMIT, "path": PAGES[name], "cells": cells}
        (CELLS_DIR / f"{name}.json").write_text(json.dumps(doc, indent=1) + "\n")
        print(f"{name}: {len(cells)} cells")


if __name__ == "__main__":
    main()
