"""fgrad.torch.optim: each optimiser follows PyTorch's update formulas step for step."""
import numpy as np
import pytest

import fgrad
import fgrad.torch.nn as nn
import fgrad.torch.nn.functional as F


def _problem(seed=0):
    rng = np.random.default_rng(seed)
    w1 = rng.standard_normal((5, 4)).astype(np.float32)
    b1 = rng.standard_normal(5).astype(np.float32)
    w2 = rng.standard_normal((3, 5)).astype(np.float32)
    xs = [rng.standard_normal((8, 4)).astype(np.float32) for _ in range(5)]
    ys = [rng.integers(0, 3, 8) for _ in range(5)]
    return [w1, b1, w2], xs, ys


def _fgrad_run(make_opt, steps=5, closure=False):
    init, xs, ys = _problem()
    params = [nn.Parameter(fgrad.torch.tensor(a.copy())) for a in init]
    opt = make_opt(params)
    for x, y in zip(xs[:steps], ys[:steps]):
        def loss_fn():
            opt.zero_grad()
            h = F.relu(F.linear(fgrad.torch.tensor(x), params[0], params[1]))
            loss = F.cross_entropy(F.linear(h, params[2]), fgrad.torch.tensor(y))
            loss.backward()
            return loss
        if closure:
            opt.step(loss_fn)
        else:
            loss_fn()
            opt.step()
    return [p.detach().numpy() for p in params], opt


def _torch_run(torch, make_opt, steps=5):
    init, xs, ys = _problem()
    params = [torch.nn.Parameter(torch.tensor(a.copy())) for a in init]
    opt = make_opt(params)
    for x, y in zip(xs[:steps], ys[:steps]):
        opt.zero_grad()
        h = torch.relu(torch.nn.functional.linear(torch.tensor(x), params[0], params[1]))
        loss = torch.nn.functional.cross_entropy(torch.nn.functional.linear(h, params[2]),
                                                 torch.tensor(y))
        loss.backward()
        opt.step()
    return [p.detach().numpy() for p in params]


CONFIGS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.5, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1)),
    ("Adam", dict(lr=0.01, amsgrad=True)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.02, weight_decay=0.2, amsgrad=True)),
]


@pytest.mark.parametrize("name,kw", CONFIGS, ids=[f"{n}{sorted(k.items())}" for n, k in CONFIGS])
def test_five_steps_match_pytorch(name, kw):
    torch = pytest.importorskip("torch")
    got, _ = _fgrad_run(lambda ps: getattr(fgrad.torch.optim, name)(ps, **kw))
    want = _torch_run(torch, lambda ps: getattr(torch.optim, name)(ps, **kw))
    for g, w in zip(got, want):
        assert g.dtype == np.float32
        np.testing.assert_allclose(g, w, atol=1e-6, rtol=1e-6)


def test_sgd_plain_formula_without_torch():
    init, xs, ys = _problem()
    got, _ = _fgrad_run(lambda ps: fgrad.torch.optim.SGD(ps, lr=0.5), steps=1)
    # one step by hand: p - lr * grad, with the gradient from fgrad.grad
    def loss(w1, b1, w2):
        h = F.relu(F.linear(xs[0], w1, b1))
        return F.cross_entropy(F.linear(h, w2), ys[0])
    grads = fgrad.grad(loss, argnums=(0, 1, 2))(*init)
    for g, p0, d in zip(got, init, grads):
        np.testing.assert_allclose(g, p0 - 0.5 * d, rtol=1e-5, atol=1e-6)


def test_momentum_buffer_and_state_dict_roundtrip(tmp_path):
    _, opt = _fgrad_run(lambda ps: fgrad.torch.optim.SGD(ps, lr=0.1, momentum=0.9), steps=3)
    sd = opt.state_dict()
    assert set(sd) == {"state", "param_groups"}
    assert sorted(sd["state"]) == [0, 1, 2]
    assert "momentum_buffer" in sd["state"][0]
    assert sd["param_groups"][0]["params"] == [0, 1, 2]
    assert sd["param_groups"][0]["momentum"] == 0.9
    fgrad.torch.save(sd, tmp_path / "opt.pt")
    loaded = fgrad.torch.load(tmp_path / "opt.pt")
    params = [nn.Parameter(fgrad.torch.zeros(*t.shape)) for t in (fgrad.torch.zeros(5, 4), fgrad.torch.zeros(5), fgrad.torch.zeros(3, 5))]
    opt2 = fgrad.torch.optim.SGD(params, lr=1.0)
    opt2.load_state_dict(loaded)
    assert opt2.param_groups[0]["lr"] == 0.1
    for i, p in enumerate(params):
        np.testing.assert_array_equal(opt2.state[p]["momentum_buffer"].numpy(),
                                      sd["state"][i]["momentum_buffer"].numpy())


def test_resume_adam_from_state_dict_continues_identically():
    full, _ = _fgrad_run(lambda ps: fgrad.torch.optim.Adam(ps, lr=0.01), steps=5)
    init, xs, ys = _problem()
    params = [nn.Parameter(fgrad.torch.tensor(a.copy())) for a in init]
    opt = fgrad.torch.optim.Adam(params, lr=0.01)

    def step(i, opt, params):
        opt.zero_grad()
        h = F.relu(F.linear(fgrad.torch.tensor(xs[i]), params[0], params[1]))
        F.cross_entropy(F.linear(h, params[2]), fgrad.torch.tensor(ys[i])).backward()
        opt.step()
    for i in range(3):
        step(i, opt, params)
    sd = opt.state_dict()
    params2 = [nn.Parameter(p.detach().clone()) for p in params]
    opt2 = fgrad.torch.optim.Adam(params2, lr=0.01)
    opt2.load_state_dict(sd)
    for i in range(3, 5):
        step(i, opt2, params2)
    for a, b in zip(full, params2):
        np.testing.assert_allclose(a, b.detach().numpy(), rtol=1e-6, atol=1e-7)


def test_closure_and_param_groups():
    a = nn.Parameter(fgrad.torch.tensor([1.0, 2.0]))
    b = nn.Parameter(fgrad.torch.tensor([3.0]))
    opt = fgrad.torch.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]

    def closure():
        opt.zero_grad()
        loss = (a * a).sum() + (b * b).sum()
        loss.backward()
        return loss
    loss = opt.step(closure)
    assert float(loss) == pytest.approx(14.0)
    np.testing.assert_allclose(a.detach().numpy(), [1.0 - 0.1 * 2.0, 2.0 - 0.1 * 4.0], rtol=1e-6)
    np.testing.assert_allclose(b.detach().numpy(), [3.0 - 0.5 * 6.0], rtol=1e-6)
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [a]})


def test_zero_grad_sets_none_by_default_and_zeros_on_request():
    p = nn.Parameter(fgrad.torch.tensor([1.0, 2.0]))
    opt = fgrad.torch.optim.SGD([p], lr=0.1)
    (p * 3).sum().backward()
    opt.zero_grad(set_to_none=False)
    np.testing.assert_array_equal(p.grad.numpy(), [0.0, 0.0])
    opt.zero_grad()
    assert p.grad is None


def test_parameters_without_grad_are_skipped_and_step_bumps_version():
    a = nn.Parameter(fgrad.torch.tensor([1.0]))
    b = nn.Parameter(fgrad.torch.tensor([1.0]))
    opt = fgrad.torch.optim.Adam([a, b], lr=0.1)
    y = (a * a).sum()
    y.backward(retain_graph=True)
    opt.step()
    assert b.detach().numpy()[0] == 1.0 and a.detach().numpy()[0] != 1.0
    assert b not in opt.state or not opt.state[b]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()  # `a` was updated in place after the graph saved it


def test_invalid_hyperparameters():
    p = [nn.Parameter(fgrad.torch.tensor([1.0]))]
    with pytest.raises(ValueError):
        fgrad.torch.optim.SGD(p, lr=-1)
    with pytest.raises(ValueError, match="Nesterov"):
        fgrad.torch.optim.SGD(p, lr=0.1, nesterov=True)
    with pytest.raises(ValueError):
        fgrad.torch.optim.Adam(p, betas=(1.0, 0.9))
    with pytest.raises(ValueError, match="empty"):
        fgrad.torch.optim.Adam([])
    # PyTorch 2.x gives SGD a default lr of 1e-3 (it used to be required)
    assert fgrad.torch.optim.SGD(p).param_groups[0]["lr"] == 1e-3
