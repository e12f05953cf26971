"""F.cross_entropy, F.log_softmax and F.nll_loss on float32 [N, C] logits (the row kernels
and the nll gathered at the targets) against real PyTorch: values and gradients for every
reduction, class weights, ignore_index, label smoothing, masked (-inf) classes and a class
axis that is not the last."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad.torch as ft

torch = pytest.importorskip("torch")


def _both(fn, x, *args, **kwargs):
    """fn's value and its input's gradient (of the sum, weighted) in fgrad and in PyTorch."""
    out = []
    for lib in (ft, torch):
        xt = lib.tensor(x, requires_grad=True)
        conv = [lib.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
        kw = {k: lib.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
        y = getattr(lib.nn.functional, fn)(xt, *conv, **kw)
        w = lib.tensor(np.linspace(0.5, 1.5, y.numel(), dtype=np.float32).reshape(tuple(y.shape)))
        (y * w).sum().backward()
        out.append((y.detach().numpy(), xt.grad.numpy()))
    return out


def _close(pair, rtol=2e-5, atol=2e-6):
    (fy, fg), (ty, tg) = pair
    assert fy.dtype == ty.dtype == np.float32 and fg.shape == tg.shape
    np.testing.assert_allclose(fy, ty, rtol=rtol, atol=atol)
    np.testing.assert_allclose(fg, tg, rtol=rtol, atol=atol)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_cross_entropy_matches_pytorch(reduction, weighted, smoothing):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((40, 37)) * 3).astype(np.float32)
    target = rng.integers(0, 37, 40)
    target[::7] = 5  # ignored below
    weight = (rng.random(37) + 0.5).astype(np.float32) if weighted else None
    _close(_both("cross_entropy", x, target, weight=weight, ignore_index=5, reduction=reduction,
                 label_smoothing=smoothing))


def test_masked_classes_and_log_softmax_nll_pair():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((30, 20)).astype(np.float32)
    x[:, 3] = -np.inf  # a masked class: the loss and the other gradients stay finite
    target = rng.integers(4, 20, 30)
    pair = _both("cross_entropy", x, target)
    assert np.isfinite(pair[0][0]).all()
    _close(pair)
    _close(_both("log_softmax", x, dim=1))
    lp = np.log(np.full((6, 4), 0.25, np.float32))
    _close(_both("nll_loss", lp, np.array([0, 3, 1, -100, 2, 2]), reduction="sum"))


def test_log_softmax_over_a_leading_axis_and_large_rows():
    rng = np.random.default_rng(2)
    _close(_both("log_softmax", rng.standard_normal((7, 33, 5)).astype(np.float32), dim=1))
    x = (rng.standard_normal((64, 1000)) * 4).astype(np.float32)
    _close(_both("cross_entropy", x, rng.integers(0, 1000, 64)))


@pytest.mark.parametrize("shape,target", [((4, 3), [0, 5, 1, 1]), ((4, 3), [0, -1, 1, 1]),
                                          ((2, 3, 5), [[0, 1, 2, 3, 1], [0, 0, 0, 0, 0]])])
def test_out_of_bounds_targets_raise_on_every_call(shape, target):
    # (the op's computation is taped on first sight of a shape: later calls too must check)
    x = ft.tensor(np.zeros(shape, np.float32), requires_grad=True)
    for _ in range(2):
        ft.nn.functional.cross_entropy(x, ft.tensor(np.zeros(np.shape(target), np.int64)))
        with pytest.raises(IndexError, match="Target .* is out of bounds"):
            ft.nn.functional.cross_entropy(x, ft.tensor(target))
