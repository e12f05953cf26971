"""docs/numpy-coverage.md is what `python tests/numpy/coverage_table.py` generates, and what it shows
holds: fgrad differentiates every function HIPS autograd does (the complex-valued ones, the FFTs
and linalg.eig, included since issue 12), and every function fgrad has differentiates on its
sample in both modes (so a wrong sample cannot hide a function)."""
from __future__ import annotations

import pytest

pytest.importorskip("autograd", reason="the table's HIPS autograd column needs autograd (the oracle extra)")
pytest.importorskip("jax", reason="the table's JAX column needs jax (the oracle extra)")

from tests.numpy.coverage_table import DOC, autograd_gap, fgrad_failures, render, rows  # noqa: E402


@pytest.fixture(scope="module")
def table():
    return rows()


def test_committed_table_is_current(table):
    assert DOC.read_text() == render(table), (
        "docs/numpy-coverage.md is stale: regenerate it with `python tests/numpy/coverage_table.py`")


def test_fgrad_covers_autograd(table):
    gap = autograd_gap(table)
    assert not gap, f"HIPS autograd differentiates these and fgrad does not: {sorted(gap)}"


def test_every_fgrad_function_differentiates_on_its_sample(table):
    failing = set(fgrad_failures(table))
    assert not failing, (f"fgrad has these but jvp or vjp failed on the sample (fix the function or its "
                         f"sample in tests/numpy/coverage_table.py): {sorted(failing)}")
