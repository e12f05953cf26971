"""torch.median() and torch.nanmedian() of all elements, against PyTorch: the derivative is
shared evenly by every element equal to the median (every NaN when it is NaN), as PyTorch's
evenly-distributing backward, not sent to one of them; values unchanged, also with
infinities, signed zeros and NaNs, and through a create_graph gradient."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad.torch as ft

torch = pytest.importorskip("torch")

CASES = {
    "ties": [1.0, 2.0, 2.0, 0.0, 2.0, 3.0],
    "all_equal": [4.0] * 5,
    "nan": [1.0, np.nan, 2.0, np.nan, 2.0],
    "all_nan": [np.nan] * 4,
    "inf_ties": [np.inf, 0.0, np.inf, np.inf, 1.0],
    "zeros": [0.0, 0.0, 1.0, -1.0],
    "single": [7.0],
}


def _run(lib, name: str, x: np.ndarray):
    a = lib.tensor(x, requires_grad=True)
    y = getattr(lib, name)(a)
    (g,) = lib.autograd.grad(y * 3, [a], create_graph=True)
    return y.grad_fn.name(), y.detach().numpy(), g.detach().numpy()


@pytest.mark.parametrize("name", ["median", "nanmedian"])
@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gradient_is_shared_by_the_ties_as_pytorchs(name: str, case: str, dtype) -> None:
    x = np.asarray(CASES[case], dtype)
    got, want = _run(ft, name, x), _run(torch, name, x)
    assert got[0] == want[0]
    np.testing.assert_array_equal(got[1], want[1])
    assert got[1].dtype == want[1].dtype and got[2].dtype == want[2].dtype
    # (the last bit may differ: fgrad's division rule multiplies the cotangent by 1 / count)
    np.testing.assert_allclose(got[2], want[2], rtol=1e-6 if dtype == np.float32 else 1e-15)
