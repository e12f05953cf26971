"""fgrad.torch's trapezoid family with a number where the sample points go: PyTorch's overloads
(y, x: Tensor) and (y, *, dx: Number) refuse a non-Tensor x and x together with dx
(TypeError); dx= agrees with torch 2.13."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad.torch as ftorch

Y = np.array([1.0, 2.0, 4.0, 7.0])


@pytest.mark.parametrize("name", ["trapezoid", "trapz", "cumulative_trapezoid"])
def test_torch_overloads_refuse_what_pytorch_refuses(name):
    torch = pytest.importorskip("torch")
    calls = [lambda T, y: getattr(T, name)(y, 2.0), lambda T, y: getattr(T, name)(y, x=2),
             lambda T, y: getattr(T, name)(y, [0.0, 1.0, 2.0, 3.0]),
             lambda T, y: getattr(T, name)(y, T.arange(4.0), dx=2.0)]
    for call in calls:
        with pytest.raises(TypeError):
            call(torch, torch.tensor(Y))
        with pytest.raises(TypeError, match=f"{name}\\(\\) received an invalid combination"):
            call(ftorch, ftorch.tensor(Y))
    want = getattr(torch, name)(torch.tensor(Y), dx=2.0).numpy()
    np.testing.assert_array_equal(getattr(ftorch, name)(ftorch.tensor(Y), dx=2.0).numpy(), want)
