"""docs/derivative-conventions.md is true: every row's derivatives, computed with PyTorch,
fgrad.torch, fgrad and JAX, equal the values the table states (so a convention is declared
where it is chosen, and the table cannot go stale)."""
from __future__ import annotations

import math
import pathlib

import numpy as np
import pytest

import fgrad
import fgrad.numpy as fnp
import fgrad.nn as fnn
import fgrad.scipy.special as fss
import fgrad.torch as ftorch

torch = pytest.importorskip("torch")
jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
import jax.scipy.special as jss  # noqa: E402

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "derivative-conventions.md"


def _rows():
    rows = []
    for line in DOC.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 8 or not cells[2].startswith("`"):
            continue
        name, x, torch_expr, torch_d, fn_expr, fgrad_d, jax_d, _ = cells
        rows.append(pytest.param(float(x), torch_expr.strip("`"), float(torch_d), fn_expr.strip("`"),
                                 float(fgrad_d), float(jax_d), id=name))
    return rows


def _same(got, want) -> bool:
    return (math.isnan(got) and math.isnan(want)) or got == want


def _torch_grad(lib, expr, x):
    t = lib.tensor(x, dtype=lib.float64, requires_grad=True)
    y = eval(expr, {"L": lib, "x": t})  # noqa: S307  (the table's own expressions)
    (g,) = lib.autograd.grad(y, t)
    return float(g)


ROWS = _rows()


def test_the_table_has_rows():
    assert len(ROWS) >= 10


@pytest.mark.parametrize("x, torch_expr, torch_d, fn_expr, fgrad_d, jax_d", ROWS)
def test_each_door_keeps_its_convention(x, torch_expr, torch_d, fn_expr, fgrad_d, jax_d):
    assert _same(_torch_grad(torch, torch_expr, x), torch_d), "PyTorch itself differs from the table"
    assert _same(_torch_grad(ftorch, torch_expr, x), torch_d), "fgrad.torch differs from PyTorch"
    # (JAX in float32: every value in the table is exact in it)
    got = float(jax.grad(lambda v: eval(fn_expr, {"N": jnp, "NN": jax.nn, "S": jss, "G": jax.grad, "x": v}))(  # noqa: S307
        jnp.float32(x)))
    assert _same(got, jax_d), "JAX itself differs from the table"
    got = float(fgrad.grad(lambda v: eval(fn_expr, {"N": fnp, "NN": fnn, "S": fss, "G": fgrad.grad, "x": v}))(  # noqa: S307
        np.float64(x)))
    assert _same(got, fgrad_d), "fgrad differs from the table"
