"""The loss fast paths of fgrad.ops.nn.dense against the general code they skip: the one-hot
target weights of nll_loss / cross_entropy without class weights or label smoothing, and
log_softmax's fused backward (log_softmax_grad) against its composite formula, bit for bit,
with every derivative order still right."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad
import fgrad.numpy as fnp
from fgrad.ops.nn import dense as D


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(700, 1000), (6, 5, 3, 2), (1, 4)])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("ignored", [0.0, 0.3, 1.0])
def test_one_hot_weights_match_the_general_path(dtype, shape, reduction, ignored):
    rng = np.random.default_rng(0)
    dt = np.dtype(dtype)
    target = rng.integers(0, shape[1], (shape[0],) + shape[2:])
    target[rng.random(target.shape) < ignored] = -100
    fast = D._target_weights_np(shape, dt, target, None, -100, reduction, 0.0)
    # class weights of one take the general path (W * 1 and a sum of ones are exact)
    general = D._target_weights_np(shape, dt, target, np.ones(shape[1], dt), -100, reduction, 0.0)
    assert fast.dtype == general.dtype
    np.testing.assert_array_equal(fast, general)  # NaN where all are ignored ("mean": 0 / 0)
    np.testing.assert_array_equal(np.signbit(fast), np.signbit(general))
