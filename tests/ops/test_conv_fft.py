"""The FFT convolutions use circular transforms shorter than the full linear support
n + k - 1 where the padding allows it (fgrad.ops.nn.conv._fft_shape): what wraps around must
land only on samples that are cropped away. Checked against im2col + GEMM for the forward
pass and both gradients, over kernel sizes, image sizes and every (lo, hi) padding pair."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from fgrad.ops.nn import conv as C


def _all_three(monkeypatch, algorithm, x, w, b, g, padding):
    monkeypatch.setattr(C, "conv_algorithm", algorithm)
    C._memo.clear()
    pr = dict(stride=(1, 1), padding=padding, dilation=(1, 1), groups=1)
    return (C._conv_impl(x, w, b, xp=np, **pr),
            C._input_grad_impl(g, w, x_hw=x.shape[2:], xp=np, **pr),
            C._weight_grad_impl(x, g, k_hw=w.shape[2:], xp=np, **pr))


@pytest.mark.parametrize("k_hw, x_hw", [((3, 3), (4, 5)), ((5, 2), (7, 3)), ((4, 1), (2, 6))])
def test_short_circular_transforms_match_gemm_for_every_padding(monkeypatch, k_hw, x_hw):
    rng = np.random.default_rng(sum(k_hw) * 10 + sum(x_hw))
    (kh, kw), (H, W) = k_hw, x_hw
    for plo, phi, qlo, qhi in itertools.product(range(kh), range(kh), range(kw), range(kw)):
        padding = ((plo, phi), (qlo, qhi))
        hw = C._conv_out_hw(x_hw, k_hw, (1, 1), padding, (1, 1))
        if min(hw) <= 0:
            continue
        x = rng.standard_normal((2, 3, H, W))
        w = rng.standard_normal((4, 3, kh, kw))
        b = rng.standard_normal(4)
        g = rng.standard_normal((2, 4) + hw)
        want = _all_three(monkeypatch, "gemm", x, w, b, g, padding)
        got = _all_three(monkeypatch, "fft", x, w, b, g, padding)
        for name, a, e in zip(("forward", "input gradient", "weight gradient"), got, want):
            assert a.shape == e.shape, (name, padding)
            np.testing.assert_allclose(a, e, rtol=1e-11, atol=1e-11, err_msg=f"{name}, padding {padding}")


def test_fft_size_is_below_the_linear_support_for_same_padding():
    # a 5x5 'same' convolution of 14x14 images (W3's second layer): 16 points, not 18
    assert C._fft_shape((14, 14), (5, 5), ((2, 2), (2, 2))) == (16, 16)
    # without padding the period only has to hold the image
    assert C._fft_shape((16, 16), (3, 3), ((0, 0), (0, 0))) == (16, 16)
    # the largest padding the FFT path takes (k - 1 on one side) needs the full support
    n, k = 14, 5
    assert C._fft_shape((n, n), (k, k), ((k - 1, 0), (0, k - 1)))[0] >= n + k - 1
