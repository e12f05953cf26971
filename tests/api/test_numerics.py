"""Numerical robustness: the functions that users feed logits and scores stay finite,
with finite gradients, for inputs up to 1e4 in magnitude (SPEC, issue 5)."""
import numpy as onp
import pytest

import fgrad
import fgrad.torch.nn.functional as F
import fgrad.numpy as np
from fgrad.scipy.special import expit, log_softmax, logsumexp

BIG = onp.array([[1e4, -1e4, 0.0, 3.0], [-1e4, -1e4 + 1.0, 5e3, -5e3]])

FUNCTIONS = {
    "logsumexp": lambda x: np.sum(logsumexp(x, axis=1)),
    "log_softmax": lambda x: np.sum(log_softmax(x, axis=1) * onp.array([1.0, 2.0, 3.0, 4.0])),
    "cross_entropy": lambda x: F.cross_entropy(x, onp.array([1, 3])),
    "cross_entropy_smoothing": lambda x: F.cross_entropy(x, onp.array([0, 2]), label_smoothing=0.1),
    "sigmoid": lambda x: np.sum(expit(x) * onp.arange(4.0)),
    "nn_sigmoid": lambda x: np.sum(F.sigmoid(x) * onp.arange(4.0)),
    "softplus": lambda x: np.sum(F.softplus(x) * onp.arange(4.0)),
    "norm": lambda x: np.linalg.norm(x),
    "norm_rows": lambda x: np.sum(np.linalg.norm(x, axis=1)),
}


@pytest.mark.parametrize("name", FUNCTIONS)
@pytest.mark.parametrize("dtype", [onp.float32, onp.float64])
def test_finite_values_and_gradients_at_large_magnitudes(name, dtype):
    f = FUNCTIONS[name]
    x = BIG.astype(dtype)
    value = f(x)
    g = fgrad.grad(f)(x)
    assert onp.all(onp.isfinite(value)), (name, value)
    assert onp.all(onp.isfinite(g)), (name, g)
    assert g.dtype == dtype
    hv = fgrad.jvp(fgrad.grad(f), (x,), (onp.ones_like(x),))[1]
    assert onp.all(onp.isfinite(hv)), (name, hv)


# the same functions written with fgrad.torch's ops (the facade computes through its own door)
TORCH_FUNCTIONS = {
    "cross_entropy": lambda t, x: F.cross_entropy(x, t.tensor([1, 3])),
    "softplus": lambda t, x: (F.softplus(x) * t.arange(4.0)).sum(),
    "nn_sigmoid": lambda t, x: (F.sigmoid(x) * t.arange(4.0)).sum(),
    "log_softmax": lambda t, x: (F.log_softmax(x, 1) * t.tensor([1.0, 2.0, 3.0, 4.0])).sum(),
}


@pytest.mark.parametrize("name", TORCH_FUNCTIONS)
def test_facade_is_finite_too(name):
    x = fgrad.torch.tensor(BIG.astype(onp.float32), requires_grad=True)
    TORCH_FUNCTIONS[name](fgrad.torch, x).backward()
    assert onp.all(onp.isfinite(x.grad.numpy()))


def test_known_values_at_extremes():
    onp.testing.assert_allclose(logsumexp(onp.array([1e4, 1e4])), 1e4 + onp.log(2.0))
    onp.testing.assert_allclose(fgrad.grad(lambda x: F.softplus(x))(1e4), 1.0)
    onp.testing.assert_allclose(fgrad.grad(lambda x: F.softplus(x))(-1e4), 0.0)
    onp.testing.assert_allclose(fgrad.grad(lambda x: expit(x))(0.0), 0.25)
    assert fgrad.grad(lambda x: np.linalg.norm(x))(onp.zeros(3)).tolist() == [0.0, 0.0, 0.0]


def test_nan_is_propagated_not_masked():
    x = BIG.copy()
    x[0, 2] = onp.nan
    for name in ("logsumexp", "cross_entropy", "softplus", "norm"):
        assert onp.isnan(FUNCTIONS[name](x)), name
