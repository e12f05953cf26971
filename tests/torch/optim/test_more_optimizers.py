"""Rprop, ASGD and Adafactor against PyTorch 2.13: the parameters after 10 steps on a small MLP,
the state (its keys, their order and values), repr and defaults, a state_dict round trip
that continues the run, and PyTorch's errors for bad options."""
import numpy as np
import pytest

import fgrad
import fgrad.torch.nn as nn

STEPS = 10


def _problem(dtype):
    rng = np.random.default_rng(0)
    init = [rng.standard_normal((6, 4)).astype(dtype) * 0.5, rng.standard_normal(6).astype(dtype) * 0.1,
            rng.standard_normal((3, 6)).astype(dtype) * 0.5]
    xs = [rng.standard_normal((8, 4)).astype(dtype) for _ in range(STEPS)]
    ys = [rng.integers(0, 3, 8) for _ in range(STEPS)]
    return init, xs, ys


def _train(lib, make_opt, dtype=np.float32, steps=STEPS, start=0, params=None, opt=None):
    init, xs, ys = _problem(dtype)
    if params is None:
        params = [lib.nn.Parameter(lib.tensor(a.copy())) for a in init]
        opt = make_opt(params)
    F = lib.nn.functional
    for i in range(start, start + steps):
        opt.zero_grad()
        h = lib.tanh(F.linear(lib.tensor(xs[i]), params[0], params[1]))
        F.cross_entropy(F.linear(h, params[2]), lib.tensor(ys[i])).backward()
        opt.step()
    return params, opt


CONFIGS = [
    ("Rprop", dict()),
    pytest.param("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.02)), marks=pytest.mark.slow),
    pytest.param("Rprop", dict(lr=0.01, maximize=True, foreach=False), marks=pytest.mark.slow),
    ("ASGD", dict()),
    pytest.param("ASGD", dict(lr=0.1, lambd=0.01, alpha=0.5, t0=5, weight_decay=0.1), marks=pytest.mark.slow),
    pytest.param("ASGD", dict(lr=0.05, t0=0, maximize=True), marks=pytest.mark.slow),
    ("Adafactor", dict()),
    pytest.param("Adafactor", dict(lr=0.05, beta2_decay=-0.5, eps=(1e-6, 1e-2), d=1.5, weight_decay=0.1),
                 marks=pytest.mark.slow),
    pytest.param("Adafactor", dict(lr=0.02, maximize=True), marks=pytest.mark.slow),
]
def _values(c):
    return c.values if hasattr(c, "values") else c


IDS = [f"{n}-{sorted(kw.items())}" for n, kw in map(_values, CONFIGS)]
ROUND_TRIP = [_values(c) for c in CONFIGS[1::3]]


@pytest.mark.parametrize("dtype", [np.float32, pytest.param(np.float64, marks=pytest.mark.slow)])
@pytest.mark.parametrize("name,kw", CONFIGS, ids=IDS)
def test_twenty_steps_match_pytorch(name, kw, dtype):
    torch = pytest.importorskip("torch")
    got, opt = _train(fgrad.torch, lambda ps: getattr(fgrad.torch.optim, name)(ps, **kw), dtype)
    want, topt = _train(torch, lambda ps: getattr(torch.optim, name)(ps, **kw), dtype)
    init, _, _ = _problem(dtype)
    tol = 2e-5 if dtype == np.float32 else 1e-12
    for g, w, p0 in zip(got, want, init):
        g, w = g.detach().numpy(), w.detach().numpy()
        assert g.dtype == dtype
        assert not np.allclose(w, p0, rtol=1e-3, atol=1e-4)  # the run moved the parameters
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)
    tsd, sd = topt.state_dict(), opt.state_dict()
    assert list(sd["state"]) == list(tsd["state"])
    for i, tstate in tsd["state"].items():
        assert list(sd["state"][i]) == list(tstate)  # PyTorch's keys in PyTorch's order
        for key, tval in tstate.items():
            val = sd["state"][i][key]
            if key in ("step", "eta", "mu"):  # PyTorch keeps these as float32 scalars
                assert val.dtype == fgrad.torch.float32 and val.shape == ()
            np.testing.assert_allclose(np.asarray(val.numpy(), np.float64),
                                       tval.numpy().astype(np.float64), rtol=5 * tol, atol=tol,
                                       err_msg=key)
    assert sd["param_groups"] == tsd["param_groups"]
    assert repr(opt) == repr(topt)


@pytest.mark.parametrize("name,kw", ROUND_TRIP, ids=IDS[1::3])
def test_state_dict_round_trip_continues_the_run(name, kw, tmp_path):
    full, _ = _train(fgrad.torch, lambda ps: getattr(fgrad.torch.optim, name)(ps, **kw))
    params, opt = _train(fgrad.torch, lambda ps: getattr(fgrad.torch.optim, name)(ps, **kw),
                         steps=STEPS // 2)
    fgrad.torch.save(opt.state_dict(), tmp_path / "opt.pt")
    params2 = [nn.Parameter(p.detach().clone()) for p in params]
    opt2 = getattr(fgrad.torch.optim, name)(params2, **{**kw, "lr": 123.0})
    opt2.load_state_dict(fgrad.torch.load(tmp_path / "opt.pt"))
    _train(fgrad.torch, None, steps=STEPS - STEPS // 2, start=STEPS // 2, params=params2, opt=opt2)
    for a, b in zip(full, params2):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


@pytest.mark.parametrize("name", ["Rprop", "ASGD", "Adafactor"])
def test_defaults_match_pytorch(name):
    torch = pytest.importorskip("torch")
    opt = getattr(fgrad.torch.optim, name)([nn.Parameter(fgrad.torch.zeros(2))])
    topt = getattr(torch.optim, name)([torch.nn.Parameter(torch.zeros(2))])
    assert opt.defaults == topt.defaults
    assert repr(opt) == repr(topt)


BAD = [
    ("Rprop", dict(lr=-1.0), "Invalid learning rate: -1.0"),
    ("Rprop", dict(etas=(1.2, 0.5)), "Invalid eta values: 1.2, 0.5"),
    ("ASGD", dict(lr=-0.1), "Invalid learning rate: -0.1"),
    ("ASGD", dict(weight_decay=-1), "Invalid weight_decay value: -1"),
    ("Adafactor", dict(beta2_decay=0.5), "beta2_decay should be <= 0 but is: 0.5"),
    ("Adafactor", dict(eps=(-1.0, 1e-3)), "epsilon1 should be >= 0 but is: -1.0"),
    ("Adafactor", dict(d=0.5), "Clipping threshold d should be >= 1 but is: 0.5"),
]


@pytest.mark.parametrize("name,kw,msg", BAD, ids=[f"{n}-{m[:20]}" for n, _, m in BAD])
def test_bad_options_raise_as_pytorch(name, kw, msg):
    torch = pytest.importorskip("torch")
    with pytest.raises(ValueError, match=msg):
        getattr(fgrad.torch.optim, name)([nn.Parameter(fgrad.torch.zeros(2))], **kw)
    with pytest.raises(ValueError, match=msg):
        getattr(torch.optim, name)([torch.nn.Parameter(torch.zeros(2))], **kw)


def test_adafactor_refuses_complex_parameters():
    p = nn.Parameter(fgrad.torch.zeros(2, dtype=fgrad.torch.complex64))
    p.grad = fgrad.torch.ones(2, dtype=fgrad.torch.complex64)
    with pytest.raises(RuntimeError, match="Adafactor does not support complex parameters"):
        fgrad.torch.optim.Adafactor([p]).step()
