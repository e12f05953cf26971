"""A backward pass recorded with create_graph=True stays a graph when a rule's result is a 0-d
value: a torch op's result is always a Tensor, never a NumPy scalar (np.float64 is a Python
float subclass, and a cotangent that became one cut the graph: the second derivative of
(2 ** x) * 0.1 came out 0, found by tests/oracle/test_facade_vs_torch_ops.py)."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad.torch as ftorch

torch = pytest.importorskip("torch")

_SCALAR_FACTORS = {
    "rpow_scaled": lambda L, x: (2.0 ** (x * 0.5)) * 0.1,
    "sum_plus_scaled": lambda L, x: x.sum() + (2.0 ** x).sum() * 0.1,
    "div_by_number": lambda L, x: x.exp() / 3.0,
    "scaled_twice": lambda L, x: (x.sin() * 0.5) * 0.25,
}


@pytest.mark.parametrize("name", _SCALAR_FACTORS)
@pytest.mark.parametrize("shape", [(), (3,)])
def test_create_graph_survives_number_factors(name, shape):
    got = {}
    for L in (torch, ftorch):
        x = L.tensor(np.full(shape, 0.41), requires_grad=True)
        (g,) = L.autograd.grad(_SCALAR_FACTORS[name](L, x).sum(), x, create_graph=True)
        assert g.requires_grad
        (h,) = L.autograd.grad(g.sum(), x)
        got[L] = h.numpy()
    np.testing.assert_allclose(got[ftorch], got[torch], rtol=1e-12)


def test_a_boundary_op_that_computes_a_numpy_scalar_gives_a_tensor():
    # what a rule under create_graph returns for a number-scaled 0-d cotangent
    from fgrad.torch._tensor._boundary import call
    x = ftorch.tensor(0.5)
    out = call(None, lambda v: np.float64(2.0) * np.float64(v), (x,))
    assert isinstance(out, ftorch.Tensor) and out.item() == 1.0
    pair = call(None, lambda v: (np.float64(v), None), (x,))
    assert isinstance(pair[0], ftorch.Tensor) and pair[1] is None
