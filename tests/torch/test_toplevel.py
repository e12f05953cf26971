"""torch's constants, newaxis and typename on fgrad.torch, against PyTorch."""
from __future__ import annotations

import math

import numpy as np
import pytest

import fgrad.torch as ftorch

torch = pytest.importorskip("torch")


def test_constants():
    for name in ("e", "pi", "inf"):
        assert getattr(ftorch, name) == getattr(torch, name) and type(getattr(ftorch, name)) is float
    assert math.isnan(ftorch.nan) and ftorch.newaxis is torch.newaxis is None
    a = np.arange(6.0).reshape(2, 3)
    assert ftorch.tensor(a)[:, ftorch.newaxis].shape == torch.tensor(a)[:, torch.newaxis].shape


@pytest.mark.parametrize("make", [
    lambda L: L.ones(1), lambda L: L.ones(1, dtype=L.int64), lambda L: L.ones(1, dtype=L.float64),
    lambda L: L.ones(1, dtype=L.bool), lambda L: L.ones(1, requires_grad=True),
    lambda L: 1, lambda L: "s", lambda L: None, lambda L: int, lambda L: math.sqrt,
])
def test_typename(make):
    assert ftorch.typename(make(ftorch)) == torch.typename(make(torch))


def test_typename_of_classes_names_their_module():
    assert ftorch.typename(ftorch.nn.Linear) == f"{ftorch.nn.Linear.__module__}.Linear"
    assert ftorch.typename(ftorch.nn.Linear(1, 1)) == f"{ftorch.nn.Linear.__module__}.Linear"
