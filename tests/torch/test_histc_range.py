"""torch.histc's range rule against PyTorch: whenever min equals max (not only both 0) the
data's own range is used, widened by 1 each way when that is empty too; a NaN in the data
then makes the range not finite, an error. Values and dtypes on random data besides."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad.torch as ft

torch = pytest.importorskip("torch")

X = np.array([0.0, 1.0, 2.0, 1.0, 3.0, 2.5])


def _histc(lib, x, *args):
    try:
        return lib.histc(lib.tensor(x), *args).numpy()
    except RuntimeError:
        return None


@pytest.mark.parametrize("args", [(3, 1, 1), (4, 0, 0), (3, -2, -2), (5, 0, 1), (4, 0.5, 2.0), (3, 2.5, 2.5)])
@pytest.mark.parametrize("data", ["plain", "constant", "nan", "empty"])
def test_range_rule_matches_pytorch(args, data: str) -> None:
    x = {"plain": X, "constant": np.full(4, 2.0), "nan": np.append(X, np.nan), "empty": np.zeros(0)}[data]
    for dtype in (np.float64, np.float32):
        got, want = _histc(ft, x.astype(dtype), *args), _histc(torch, x.astype(dtype), *args)
        if want is None:
            assert got is None, f"PyTorch raises RuntimeError, fgrad.torch gave {got}"
        else:
            assert got is not None
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)


def test_random_data_matches_pytorch() -> None:
    rng = np.random.default_rng(0)
    for _ in range(50):
        x = (rng.integers(0, 50, rng.integers(1, 30)) / rng.choice([1, 3, 7, 10])).astype(np.float32)
        for args in ((5, 0, 0), (7, 0, 1), (10, 0.1, 0.7), (3, 1, 1)):
            np.testing.assert_array_equal(_histc(ft, x, *args), _histc(torch, x, *args))
