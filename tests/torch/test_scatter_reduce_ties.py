"""torch.scatter_reduce's amax/amin at ties, against PyTorch: the derivative is split evenly
between the tied operands (fgrad.numpy.at_max/at_min's rule, JAX's), and without
include_self PyTorch also counts input's own element among the ties though it gets no share
(fgrad.torch reproduces that). Values, dtypes and both gradients on data full of ties."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad.torch as ft

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(1)
X = RNG.integers(0, 3, (4, 5)).astype(np.float64)
IDX = RNG.integers(0, 4, (6, 5))
SRC = RNG.integers(0, 3, (6, 5)).astype(np.float64)
W = RNG.normal(size=(4, 5))


def _run(lib, reduce: str, include_self: bool, dtype):
    x = lib.tensor(X.astype(dtype), requires_grad=True)
    s = lib.tensor(SRC.astype(dtype), requires_grad=True)
    y = lib.scatter_reduce(x, 0, lib.tensor(IDX), s, reduce, include_self=include_self)
    (y * lib.tensor(W.astype(dtype))).sum().backward()
    return [np.asarray(t.detach().numpy()) for t in (y, x.grad, s.grad)]


@pytest.mark.parametrize("reduce", ["amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_tie_gradients_match_pytorch(reduce: str, include_self: bool, dtype) -> None:
    got, want = _run(ft, reduce, include_self, dtype), _run(torch, reduce, include_self, dtype)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-6 if dtype == np.float32 else 1e-14)
