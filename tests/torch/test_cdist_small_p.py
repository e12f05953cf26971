"""torch.cdist below p = 1, against PyTorch on rows with equal coordinates: where a difference
is zero |d|^(p-1) is infinite, and PyTorch's derivative gives such a component (and a zero
distance) 0, not NaN; p = 0 counts nonzero differences, a CdistBackward0 node with
derivative 0."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad.torch as ft

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
X1 = RNG.integers(-1, 2, (2, 5, 3)).astype(np.float64)   # small integers: many zero differences
X2 = RNG.integers(-1, 2, (2, 4, 3)).astype(np.float64)
X2[0, 0] = X1[0, 0]                                       # a zero distance


def _run(lib, p: float, dtype):
    a = lib.tensor(X1.astype(dtype), requires_grad=True)
    b = lib.tensor(X2.astype(dtype), requires_grad=True)
    d = lib.cdist(a, b, p=p)
    weights = lib.tensor(np.arange(d.numel(), dtype=dtype).reshape(tuple(d.shape)))
    (d * weights).sum().backward()
    return d.grad_fn.name(), [t.detach().numpy() for t in (d, a.grad, b.grad)]


@pytest.mark.parametrize("p", [0.0, 0.3, 0.5, 0.99])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_matches_pytorch_at_zero_differences(p: float, dtype) -> None:
    (got_name, got), (want_name, want) = _run(ft, p, dtype), _run(torch, p, dtype)
    assert got_name == want_name == "CdistBackward0"
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and np.isfinite(g).all()
        np.testing.assert_allclose(g, w, rtol=1e-4 if dtype == np.float32 else 1e-12, atol=1e-6)
