"""torch.optim.swap_in_optimizer_params_and_state against PyTorch 2.13: a step inside the block
updates the swapped-in parameters and state (its step counters included) with the swapped-in
options, and the live optimizer comes back unchanged; PyTorch's errors."""
import numpy as np
import pytest

import fgrad.torch as ft

torch = pytest.importorskip("torch")


def _run(lib):
    lib.manual_seed(0)
    m = lib.nn.Linear(3, 2)
    opt = lib.optim.Adam(m.parameters(), lr=0.1)
    m(lib.ones(1, 3)).sum().backward()
    opt.step()
    live = opt.state_dict()
    sd = {"state": {k: {n: v.clone() for n, v in s.items()} for k, s in live["state"].items()},
          "param_groups": [dict(g, lr=0.5) for g in live["param_groups"]]}
    params = {n: p.detach().clone().requires_grad_(True) for n, p in m.named_parameters()}
    for p in params.values():
        p.grad = lib.ones_like(p)
    before = [p.detach().clone() for p in m.parameters()]
    live_state = [s["exp_avg"].clone() for s in opt.state.values()]
    with lib.optim.swap_in_optimizer_params_and_state(opt, params, sd):
        opt.step()
        inner_lr = opt.param_groups[0]["lr"]
    return dict(params=[p.detach().numpy() for p in params.values()],
                steps=[float(s["step"]) for s in sd["state"].values()],
                exp_avg=[s["exp_avg"].numpy() for s in sd["state"].values()],
                lrs=(inner_lr, opt.param_groups[0]["lr"]),
                live_params=all(np.array_equal(a.numpy(), b.detach().numpy()) for a, b in zip(before, m.parameters())),
                live_state=all(np.array_equal(a.numpy(), s["exp_avg"].numpy())
                               for a, s in zip(live_state, opt.state.values())),
                live_steps=[float(s["step"]) for s in opt.state.values()])


def test_swap_in_matches_torch():
    f, t = _run(ft), _run(torch)
    for key in ("params", "exp_avg"):
        for a, b in zip(f[key], t[key]):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    for key in ("steps", "lrs", "live_params", "live_state", "live_steps"):
        assert f[key] == t[key], key
    assert f["steps"] == [2.0, 2.0] and f["lrs"] == (0.5, 0.1) and f["live_params"] and f["live_state"]


def test_swap_in_errors():
    p = ft.nn.Parameter(ft.zeros(2))
    opt = ft.optim.SGD([p], lr=0.1, momentum=0.9)
    with pytest.raises(RuntimeError, match="requires initialized optimizer state"):
        with ft.optim.swap_in_optimizer_params_and_state(opt, {"p": p}, opt.state_dict()):
            pass
    p.grad = ft.ones(2)
    opt.step()
    sd = opt.state_dict()
    with pytest.raises(RuntimeError, match="different number of parameter groups"):
        with ft.optim.swap_in_optimizer_params_and_state(opt, {"p": p}, {"state": sd["state"], "param_groups": []}):
            pass
    bad = {"state": sd["state"], "param_groups": [{k: v for k, v in sd["param_groups"][0].items() if k != "lr"}]}
    with pytest.raises(RuntimeError, match="Keys only in live: \\['lr'\\]"):
        with ft.optim.swap_in_optimizer_params_and_state(opt, {"p": p}, bad):
            pass
    with pytest.raises(RuntimeError, match="got extra keys \\[7\\]"):
        with ft.optim.swap_in_optimizer_params_and_state(opt, {"p": p}, {"state": {**sd["state"], 7: {}},
                                                                         "param_groups": sd["param_groups"]}):
            pass
