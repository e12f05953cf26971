"""JAX's documentation pages, run on fgrad through an alias package (issue 25).

The code cells of fifteen pages of JAX's docs, extracted at a pinned release by extract.py
into cells/<page>.json, run in order, one namespace per page, with ``import jax`` loading
fgrad (alias.py). Each cell is one test:

- a cell where JAX raises must raise under fgrad too, an exception of the same built-in class;
- any other cell must run, and what it prints must hold the numbers and words JAX printed
  (compare.py), against the docs' stored output or the pinned JAX's own output, with its
  defaults or with jax_enable_x64 (fgrad's default). Timing cells (%timeit) run their
  statement once and their output is not compared.

Cells outside fgrad's scope are skipped (SKIP); cells whose output differs on purpose are
run but not compared (DIFFERENT, each listed in docs/jax-differences.md); cells that fail
today are strict xfails (XFAIL), so a fix shows up as an XPASS failure and the entry goes.
"""
from __future__ import annotations

import json
import os
import re
import sys
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from .alias import jax_alias
from .compare import same_output
from .extract import PAGES, PIN
from .notebook import run_cells

pytestmark = pytest.mark.slow

CELLS = Path(__file__).parent / "cells"

# Reasons a cell is outside fgrad's scope.
SHARDING = "devices/sharding: fgrad runs on the host, with no device placement"
INTERNALS = "JAX internals (jax._src, jax.core, jax.extend)"
TIMING = "timing only: what it prints is a measurement"
PLOT = "matplotlib display"
RICH = "the rich package, not installed here"

# (page, cell index) -> why the cell is not run. A skipped cell runs as empty, so its
# definitions are missing for later cells; none of these defines anything later cells use.
SKIP: dict[tuple[str, int], str] = {
    ("quickstart", 10): SHARDING,
    ("quickstart", 11): SHARDING,
    ("gradient_checkpointing", 23): INTERNALS + "; " + SHARDING,
}

# Deliberate differences, worded as in docs/jax-differences.md (test_table_is_valid checks
# that each reason's text before the colon appears there).
JAXPR = "make_jaxpr prints fgrad's IR: its primitives and constant folding are not JAX's"
JIT_CACHE = "jit's trace cache belongs to the jitted function: jit(f) made anew traces again"
REPRS = ("reprs of fgrad's own types: class names, key arrays and treedefs print in fgrad's "
         "form (the numbers they hold are compared)")
CUSTOM_VJP_JVP = ("custom_vjp under forward mode: fgrad refuses before running the rule, "
                  "so nothing the rule prints appears")
RESIDUALS = ("saved residuals follow fgrad's VJP rules: print_saved_residuals lists what "
             "fgrad's rules keep, which is not what JAX's linearization keeps (sin keeps its "
             "input, JAX cos of it; x ** 2 its input, JAX 2 * x; every argument is kept)")
CHECKPOINT_CACHE = ("checkpoint traces its function at every call: JAX reuses its trace of the "
                    "same function, made before a global it calls was redefined")
LIST_ARG = ("fgrad.numpy's functions take Python lists: jnp.sum([1, 2, 3]) is 6, where JAX "
            "refuses a list argument (TypeError)")
MUTABLE = ("fgrad.numpy's eager arrays can be written in place: they are NumPy arrays, so "
           "x[i] = v and x += v change x, where JAX's arrays are immutable (TypeError)")

# (page, cell index) -> the deliberate difference: the cell runs, must not raise, and its
# output is not compared (REPRS: only its numbers are).
DIFFERENT: dict[tuple[str, int], str] = {
    ("jit_compilation", 1): JAXPR,
    ("jit_compilation", 2): JAXPR,
    ("key_concepts", 4): JAXPR,
    ("custom_derivatives", 9): JAXPR,
    ("sharp_bits", 32): JAXPR,
    ("sharp_bits", 1): JIT_CACHE,
    ("sharp_bits", 2): JIT_CACHE,
    ("quickstart", 4): REPRS,
    ("quickstart", 27): REPRS,
    ("key_concepts", 5): REPRS,
    ("key_concepts", 6): REPRS,
    ("key_concepts", 7): REPRS,
    ("pytrees", 7): REPRS,
    ("custom_derivatives", 60): CUSTOM_VJP_JVP,
    ("quickstart", 7): MUTABLE,   # x[0] = 10 runs
    ("quickstart", 8): MUTABLE,   # so x prints with the 10
    ("sharp_bits", 8): MUTABLE,
    ("sharp_bits", 9): MUTABLE,   # jax_array += 10 changes jax_array_new's array too
    ("sharp_bits", 30): LIST_ARG,
    **{("gradient_checkpointing", i): RESIDUALS for i in (0, 17, 20, 24, 25, 27, 28)},
    **{("autodiff_remat", i): RESIDUALS for i in (1, 18, 21, 23, 24, 26, 27)},
    # loss, checkpointed again after predict (which it calls) was redefined with names
    ("gradient_checkpointing", 21): CHECKPOINT_CACHE,
    ("autodiff_remat", 22): CHECKPOINT_CACHE,
}

# (page, cell index) -> why the cell fails under fgrad today (strict: a fix makes it XPASS).
# Empty: every in-scope cell runs as JAX's or is a listed difference.
XFAIL: dict[tuple[str, int], str] = {}


# (page, cell index) -> a package the cell imports that fgrad's test extras do not list
# (matplotlib is listed); without it that cell's test is skipped, and so are the tests of later
# cells that call a function it defines (print_fwd_bwd).
NEEDS: dict[tuple[str, int], str] = {
    ("gradient_checkpointing", 4): "rich",
    ("autodiff_remat", 5): "rich",
}


def _load(page: str) -> list[dict]:
    doc = json.loads((CELLS / f"{page}.json").read_text())
    assert doc["pin"] == PIN, f"{page}.json was extracted at {doc['pin']}, not {PIN}"
    return doc["cells"]


@lru_cache(maxsize=None)
def _run_page(page: str) -> tuple[dict, ...]:
    """Run a page's cells once (skipped ones left out) under the alias; cached per session."""
    cells = _load(page)
    os.environ.setdefault("MPLBACKEND", "Agg")
    sources = ["" if (page, i) in SKIP else c["source"] for i, c in enumerate(cells)]
    # cells seed NumPy's global generator and open figures: both are put back afterwards
    state = np.random.get_state()
    try:
        with jax_alias():
            return tuple(run_cells(sources))
    finally:
        np.random.set_state(state)
        if "matplotlib.pyplot" in sys.modules:
            sys.modules["matplotlib.pyplot"].close("all")


def _text(out: dict) -> str:
    return (out.get("stdout") or "") + ("" if out.get("shown") is None else out["shown"])


def check_cell(page: str, index: int) -> None:
    """Assert that cell ``index`` of ``page`` behaved under fgrad as under JAX.

    Args:
        page: a key of PAGES.
        index: the cell's position among the page's code cells.
    Returns:
        None; raises AssertionError describing the difference.
    """
    cell = _load(page)[index]
    got = _run_page(page)[index]
    jax_out = cell["jax_output"]
    where = f"{page}[{index}]:\n{cell['source']}\n"
    reason = DIFFERENT.get((page, index))
    if jax_out["error"] and reason in (None, REPRS):
        assert got["error"] is not None, (
            f"{where}JAX raises {jax_out['message']!r}; fgrad raised nothing and printed "
            f"{_text(got)!r}")
        assert jax_out["error"] in got["error_bases"], (
            f"{where}JAX raises {jax_out['error']} ({jax_out['message']!r}); fgrad raised "
            f"{got['message']!r}")
        return
    # (a DIFFERENT cell where JAX raises is one fgrad runs on purpose)
    assert got["error"] is None, f"{where}fgrad raised {got['message']}"
    if got["timed"] or reason not in (None, REPRS):
        return
    refs = [cell["jax_output"], cell["jax_x64_output"]]
    if "docs_output" in cell:
        refs.append(cell["docs_output"])
    assert any(same_output(_text(got), _text(r), compare_words=reason is None) for r in refs), (
        f"{where}fgrad printed:\n{_text(got)}\nJAX (x64) printed:\n"
        f"{_text(cell['jax_x64_output'])}")


def _params():
    for page in PAGES:
        for i in range(len(_load(page))):
            marks = []
            if (page, i) in SKIP:
                marks.append(pytest.mark.skip(reason=SKIP[(page, i)]))
            elif (page, i) in XFAIL:
                marks.append(pytest.mark.xfail(strict=True, reason=XFAIL[(page, i)]))
            yield pytest.param(page, i, marks=marks, id=f"{page}[{i}]")


def _needs(page: str, index: int) -> list[str]:
    """The packages of NEEDS that cell `index` of `page` needs: its own, and those of earlier
    cells defining a function it calls."""
    cells = _load(page)
    out = []
    for (p, j), package in NEEDS.items():
        if p != page or j > index:
            continue
        defined = re.findall(r"^def (\w+)", cells[j]["source"], re.M)
        if j == index or any(re.search(rf"\b{name}\(", cells[index]["source"]) for name in defined):
            out.append(package)
    return out


@pytest.mark.parametrize("page,index", list(_params()))
def test_cell(page: str, index: int) -> None:
    for package in _needs(page, index):
        pytest.importorskip(package)
    check_cell(page, index)


def test_table_is_valid():
    """Every table entry names an existing cell, no cell is in two tables, and every
    DIFFERENT reason is worded in docs/jax-differences.md."""
    sizes = {page: len(_load(page)) for page in PAGES}
    keys = [set(SKIP), set(DIFFERENT), set(XFAIL)]
    for table in keys:
        for page, i in table:
            assert page in sizes and 0 <= i < sizes[page], (page, i)
    assert not (keys[0] & keys[1] or keys[0] & keys[2] or keys[1] & keys[2])
    doc = (Path(__file__).parents[2] / "docs" / "jax-differences.md").read_text()
    for reason in set(DIFFERENT.values()):
        assert reason.split(":")[0] in doc, f"{reason!r} is not in docs/jax-differences.md"
