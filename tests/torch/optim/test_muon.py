"""Muon against PyTorch 2.13: the bfloat16 Newton-Schulz iteration (bit for bit on several
shapes), 20 steps on a two-layer net (options: nesterov, weight decay, adjust_lr_fn), state,
repr, defaults and errors."""
import numpy as np
import pytest

import fgrad.torch as ft
from fgrad.torch.optim import muon as fmuon

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (5, 5), (16, 3)])
def test_newton_schulz_matches_torch_bitwise(shape):
    from torch.optim._muon import _zeropower_via_newtonschulz as tz
    g = np.random.default_rng(sum(shape)).standard_normal(shape).astype(np.float32)
    coef = (fmuon.DEFAULT_A, fmuon.DEFAULT_B, fmuon.DEFAULT_C)
    got = fmuon._zeropower_via_newtonschulz(g, coef, 5, 1e-7)
    want = tz(torch.tensor(g), coef, 5, 1e-7).float().numpy()
    np.testing.assert_array_equal(got, want)


def _train(lib, kw):
    r = np.random.default_rng(0)
    w0, w1 = r.standard_normal((6, 4)).astype(np.float32) * 0.5, r.standard_normal((3, 6)).astype(np.float32) * 0.5
    ps = [lib.nn.Parameter(lib.tensor(w0)), lib.nn.Parameter(lib.tensor(w1))]
    opt = lib.optim.Muon(ps, **kw)
    for _ in range(20):
        x, y = r.standard_normal((8, 4)).astype(np.float32), r.integers(0, 3, 8)
        opt.zero_grad()
        h = lib.tanh(lib.tensor(x) @ ps[0].T)
        lib.nn.functional.cross_entropy(h @ ps[1].T, lib.tensor(y)).backward()
        opt.step()
    return [p.detach().numpy() for p in ps], opt, (w0, w1)


def test_one_step_is_torchs_formula():
    """One step against PyTorch's formula written out with its Newton-Schulz iteration (without
    torch.optim.Muon, whose first call imports torch._dynamo: seconds of the default run)."""
    from torch.optim._muon import _zeropower_via_newtonschulz as tz
    r = np.random.default_rng(5)
    w, g = r.standard_normal((6, 4)).astype(np.float32), r.standard_normal((6, 4)).astype(np.float32)
    p = ft.nn.Parameter(ft.tensor(w))
    p.grad = ft.tensor(g)
    ft.optim.Muon([p], lr=0.02, weight_decay=0.1).step()
    buf = torch.zeros(6, 4).lerp_(torch.tensor(g), 1 - 0.95)
    upd = tz(torch.tensor(g).lerp(buf, 0.95), (fmuon.DEFAULT_A, fmuon.DEFAULT_B, fmuon.DEFAULT_C), 5, 1e-7)
    want = torch.tensor(w).mul_(1 - 0.02 * 0.1).add_(upd, alpha=-0.02 * (6 / 4) ** 0.5)
    np.testing.assert_allclose(p.detach().numpy(), want.numpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.slow
@pytest.mark.parametrize("kw", [dict(), dict(lr=0.02, nesterov=False, weight_decay=0.0),
                                dict(lr=0.01, adjust_lr_fn="match_rms_adamw", momentum=0.9)])
def test_twenty_steps_match_torch(kw):
    got, opt, init = _train(ft, kw)
    want, topt, _ = _train(torch, kw)
    for g, w, p0 in zip(got, want, init):
        assert not np.allclose(g, p0, atol=1e-3)
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
    sd, tsd = opt.state_dict(), topt.state_dict()
    assert [list(s) for s in sd["state"].values()] == [list(s) for s in tsd["state"].values()]
    for i, st in tsd["state"].items():
        np.testing.assert_allclose(sd["state"][i]["momentum_buffer"].numpy(), st["momentum_buffer"].numpy(),
                                   rtol=1e-5, atol=1e-6)
    assert repr(opt) == repr(topt)
    assert opt.defaults == topt.defaults


def test_errors():
    with pytest.raises(ValueError, match="Muon only supports 2D parameters"):
        ft.optim.Muon([ft.nn.Parameter(ft.zeros(3))])
    p = [ft.nn.Parameter(ft.zeros(2, 2))]
    with pytest.raises(ValueError, match="Adjust learning rate function foo is not supported"):
        ft.optim.Muon(p, adjust_lr_fn="foo")
    with pytest.raises(ValueError, match="momentum should be >= 0"):
        ft.optim.Muon(p, momentum=-1)
    with pytest.raises(ValueError, match="Number of steps must be less than 100"):
        fmuon._zeropower_via_newtonschulz(np.zeros((2, 2), np.float32), (1, 2, 3), 100, 1e-7)
