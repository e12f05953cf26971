"""torch.lerp's values bit for bit against PyTorch's CPU kernel (one fused multiply-add of
the formula chosen by |weight| < 0.5; half in float32), for tensor and number weights and
broadcasting, and its derivatives (those of the unfused formula, as PyTorch's) to order 2."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad.torch as ft

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
N = 4000
A = RNG.normal(size=N)
E = RNG.normal(size=N) * 10.0 ** RNG.uniform(-3, 3, N)
W = RNG.uniform(-1, 2, N)
W[:4], W[4:8], W[8:12] = 1.0, 0.5, -0.5   # the formula's switch and its end point
A[12:16], E[12:16] = -0.0, -0.0            # signed zeros keep their sign
E[16] = np.inf


def _same_bits(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    assert same.all() and (np.signbit(got) == np.signbit(want))[~np.isnan(want)].all(), \
        f"{(~same).sum()} of {same.size} values differ, first at {np.argmin(same)}"


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
@pytest.mark.filterwarnings("ignore:invalid value")
def test_values_are_pytorchs_bits(dtype) -> None:
    a, e, w = (x.astype(dtype) for x in (A, E, W))
    for weight in (w, 0.7, 0.2):
        got = ft.lerp(ft.tensor(a), ft.tensor(e), ft.tensor(weight) if isinstance(weight, np.ndarray) else weight)
        want = torch.lerp(torch.tensor(a), torch.tensor(e),
                          torch.tensor(weight) if isinstance(weight, np.ndarray) else weight)
        _same_bits(got.numpy(), want.numpy())
    got = ft.lerp(ft.tensor(a[:6]), ft.tensor(e[:1]), ft.tensor(w[:6, None]))  # broadcast
    _same_bits(got.numpy(), torch.lerp(torch.tensor(a[:6]), torch.tensor(e[:1]), torch.tensor(w[:6, None])).numpy())


@pytest.mark.parametrize("scalar", [False, True])
def test_derivatives_to_order_two_match_pytorch(scalar: bool) -> None:
    out = []
    for lib in (torch, ft):
        a, e = (lib.tensor(x[:12].reshape(3, 4), requires_grad=True) for x in (A, E))
        w = 0.7 if scalar else lib.tensor(W[:12].reshape(3, 4), requires_grad=True)
        inputs = [a, e] + ([] if scalar else [w])
        y = lib.lerp(a, e, w)
        first = lib.autograd.grad((y ** 3).sum(), inputs, create_graph=True)
        second = lib.autograd.grad(sum((g ** 2).sum() for g in first), inputs)
        out.append((y.grad_fn.name(), [t.detach().numpy() for t in (y, *first, *second)]))
    assert out[0][0] == out[1][0]
    for g, w in zip(out[1][1], out[0][1]):
        np.testing.assert_allclose(g, w, rtol=1e-12)
