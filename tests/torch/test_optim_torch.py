"""Every fgrad optimiser against PyTorch's: the same parameters after 20 steps on a small MLP
(float32, so agreement to ~1e-6 is what the arithmetic allows: PyTorch's kernels fuse
multiply-adds and its sqrt is not correctly rounded), the same repr and state_dict layout,
and a state_dict round trip that continues the same run. LBFGS is compared iterate by
iterate on the Rosenbrock function, with and without its strong-Wolfe line search."""
import numpy as np
import pytest

import fgrad
import fgrad.torch.nn as nn
import fgrad.torch.nn.functional as F

STEPS = 20


def _problem(seed=0, dtype=np.float32):
    rng = np.random.default_rng(seed)
    init = [rng.standard_normal((6, 4)).astype(dtype) * 0.5, rng.standard_normal(6).astype(dtype) * 0.1,
            rng.standard_normal((3, 6)).astype(dtype) * 0.5]
    xs = [rng.standard_normal((8, 4)).astype(dtype) for _ in range(STEPS)]
    ys = [rng.integers(0, 3, 8) for _ in range(STEPS)]
    return init, xs, ys


def _loss(lib, params, x, y):
    h = lib.tanh(lib.nn.functional.linear(lib.tensor(x), params[0], params[1]))
    return lib.nn.functional.cross_entropy(lib.nn.functional.linear(h, params[2]), lib.tensor(y))


def _train(lib, make_opt, steps=STEPS, start=0, params=None, opt=None):
    init, xs, ys = _problem()
    if params is None:
        params = [lib.nn.Parameter(lib.tensor(a.copy())) for a in init]
        opt = make_opt(params)
    for i in range(start, start + steps):
        opt.zero_grad()
        _loss(lib, params, xs[i], ys[i]).backward()
        opt.step()
    return params, opt


def _arrays(params):
    return [p.detach().numpy().copy() for p in params]


CONFIGS = [
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("SGD", dict(lr=0.1, momentum=0.5, dampening=0.2, maximize=True)),
    ("Adam", dict(lr=0.01, decoupled_weight_decay=True, weight_decay=0.1)),
    ("Adam", dict(lr=0.01, amsgrad=True, maximize=True, foreach=False, capturable=False,
                  differentiable=False, fused=None)),
    ("AdamW", dict(lr=0.01, maximize=True)),
    ("RMSprop", dict()),
    ("RMSprop", dict(lr=0.005, alpha=0.9, eps=1e-6, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.001, momentum=0.9)),
    ("RMSprop", dict(lr=0.005, centered=True)),
    ("RMSprop", dict(lr=0.005, centered=True, momentum=0.8, weight_decay=0.05)),
    ("RMSprop", dict(lr=0.005, maximize=True, foreach=False)),
    ("Adagrad", dict()),
    ("Adagrad", dict(lr=0.1, lr_decay=0.05, weight_decay=0.1)),
    ("Adagrad", dict(lr=0.1, initial_accumulator_value=0.5, eps=1e-6)),
    ("Adagrad", dict(lr=0.1, maximize=True, foreach=False)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-5, weight_decay=0.1)),
    ("Adadelta", dict(maximize=True)),
    ("Adamax", dict()),
    ("Adamax", dict(lr=0.01, betas=(0.8, 0.99), weight_decay=0.1)),
    ("Adamax", dict(lr=0.01, maximize=True)),
    ("NAdam", dict()),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, momentum_decay=0.01)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("NAdam", dict(lr=0.01, maximize=True)),
    ("RAdam", dict()),
    ("RAdam", dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.01, maximize=True)),
]
IDS = [f"{n}-{'-'.join(f'{k}={v}' for k, v in sorted(kw.items()))}" for n, kw in CONFIGS]


@pytest.mark.parametrize("name,kw", CONFIGS, ids=IDS)
def test_twenty_steps_match_pytorch(name, kw):
    torch = pytest.importorskip("torch")
    got, opt = _train(fgrad.torch, lambda ps: getattr(fgrad.torch.optim, name)(ps, **kw))
    want, topt = _train(torch, lambda ps: getattr(torch.optim, name)(ps, **kw))
    init, _, _ = _problem()
    for g, w, p0 in zip(_arrays(got), _arrays(want), init):
        assert g.dtype == np.float32
        assert not np.allclose(w, p0, rtol=1e-3, atol=1e-4)  # the run moved the parameters
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)
    # the state has PyTorch's entries, with PyTorch's values
    tsd, sd = topt.state_dict(), opt.state_dict()
    assert sorted(sd["state"]) == sorted(tsd["state"])
    for i, tstate in tsd["state"].items():
        assert sorted(sd["state"][i]) == sorted(tstate)
        for key, tval in tstate.items():
            np.testing.assert_allclose(np.asarray(sd["state"][i][key].numpy(), np.float64),
                                       tval.numpy().astype(np.float64), rtol=1e-5, atol=1e-6,
                                       err_msg=key)
    assert repr(opt) == repr(topt)


@pytest.mark.parametrize("name,kw", CONFIGS, ids=IDS)
def test_state_dict_round_trip_continues_the_run(name, kw, tmp_path):
    full, _ = _train(fgrad.torch, lambda ps: getattr(fgrad.torch.optim, name)(ps, **kw))
    params, opt = _train(fgrad.torch, lambda ps: getattr(fgrad.torch.optim, name)(ps, **kw), steps=STEPS // 2)
    fgrad.torch.save(opt.state_dict(), tmp_path / "opt.pt")
    params2 = [nn.Parameter(p.detach().clone()) for p in params]
    opt2 = getattr(fgrad.torch.optim, name)(params2, **{**kw, "lr": 123.0})
    opt2.load_state_dict(fgrad.torch.load(tmp_path / "opt.pt"))
    assert opt2.param_groups[0]["lr"] == opt.param_groups[0]["lr"]
    _train(fgrad.torch, None, steps=STEPS - STEPS // 2, start=STEPS // 2, params=params2, opt=opt2)
    for a, b in zip(_arrays(full), _arrays(params2)):
        np.testing.assert_array_equal(a, b)


def test_pytorch_state_dict_loads_and_continues_as_pytorch():
    torch = pytest.importorskip("torch")
    kw = dict(lr=0.005, centered=True, momentum=0.8)
    tparams, topt = _train(torch, lambda ps: torch.optim.RMSprop(ps, **kw), steps=10)
    tsd = topt.state_dict()
    sd = {"state": {i: {k: fgrad.torch.tensor(v.numpy()) for k, v in st.items()} for i, st in tsd["state"].items()},
          "param_groups": tsd["param_groups"]}
    params = [nn.Parameter(fgrad.torch.tensor(p.detach().numpy().copy())) for p in tparams]
    opt = fgrad.torch.optim.RMSprop(params, **kw)
    opt.load_state_dict(sd)
    _train(fgrad.torch, None, steps=10, start=10, params=params, opt=opt)
    _train(torch, None, steps=10, start=10, params=tparams, opt=topt)
    for g, w in zip(_arrays(params), _arrays(tparams)):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)


REPRS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, foreach=True)),
    ("Adam", dict()),
    ("Adam", dict(betas=[0.8, 0.9], fused=True)),
    ("AdamW", dict(weight_decay=0.5)),
    ("RMSprop", dict(centered=True, capturable=True)),
    ("Adagrad", dict(lr_decay=0.1)),
    ("Adadelta", dict()),
    ("Adamax", dict(differentiable=True)),
    ("NAdam", dict(decoupled_weight_decay=True)),
    ("RAdam", dict()),
    ("LBFGS", dict(line_search_fn="strong_wolfe", history_size=5)),
]


@pytest.mark.parametrize("name,kw", REPRS, ids=[f"{n}{sorted(k.items())}" for n, k in REPRS])
def test_repr_and_defaults_match_pytorch(name, kw):
    torch = pytest.importorskip("torch")
    opt = getattr(fgrad.torch.optim, name)([nn.Parameter(fgrad.torch.zeros(2))], **kw)
    topt = getattr(torch.optim, name)([torch.nn.Parameter(torch.zeros(2))], **kw)
    assert repr(opt) == repr(topt)
    assert opt.defaults == topt.defaults


def test_repr_format_without_pytorch():
    a, b = nn.Parameter(fgrad.torch.zeros(1)), nn.Parameter(fgrad.torch.zeros(1))
    opt = fgrad.torch.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1)
    assert repr(opt) == (
        "SGD (\nParameter Group 0\n    dampening: 0\n    differentiable: False\n    foreach: None\n"
        "    fused: None\n    lr: 0.1\n    maximize: False\n    momentum: 0\n    nesterov: False\n"
        "    weight_decay: 0\n\nParameter Group 1\n    dampening: 0\n    differentiable: False\n"
        "    foreach: None\n    fused: None\n    lr: 0.5\n    maximize: False\n    momentum: 0\n"
        "    nesterov: False\n    weight_decay: 0\n)")


def test_maximize_ascends():
    """maximize=True is gradient ascent: on f(p) = -(p - 3)^2 every optimiser moves p towards 3."""
    for name, kw in [("SGD", dict(lr=0.1)), ("Adam", dict(lr=0.1)), ("RMSprop", dict(lr=0.1)),
                     ("Adagrad", dict(lr=0.5)), ("Adadelta", dict(lr=10.0)), ("Adamax", dict(lr=0.1)),
                     ("NAdam", dict(lr=0.1)), ("RAdam", dict(lr=0.1)), ("AdamW", dict(lr=0.1))]:
        p = nn.Parameter(fgrad.torch.tensor([0.0]))
        opt = getattr(fgrad.torch.optim, name)([p], maximize=True, **kw)
        for _ in range(30):
            opt.zero_grad()
            (-(p - 3.0) ** 2).sum().backward()
            opt.step()
        assert 0.3 < float(p.detach()[0]) < 6.0, name


def test_flags_are_checked_as_pytorch():
    p = [nn.Parameter(fgrad.torch.zeros(1))]
    with pytest.raises(RuntimeError, match="`fused` and `foreach` cannot be `True` together"):
        fgrad.torch.optim.Adam(p, fused=True, foreach=True)
    with pytest.raises(RuntimeError, match="`fused` does not support `differentiable`"):
        fgrad.torch.optim.SGD(p, fused=True, differentiable=True)
    with pytest.raises(TypeError):
        fgrad.torch.optim.SGD(p, capturable=True)  # not a SGD argument in PyTorch either
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1: 1.0"):
        fgrad.torch.optim.NAdam(p, betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="Invalid rho value: 1.5"):
        fgrad.torch.optim.Adadelta(p, rho=1.5)
    with pytest.raises(ValueError, match="Invalid alpha value: -1"):
        fgrad.torch.optim.RMSprop(p, alpha=-1)
    with pytest.raises(ValueError, match="Invalid lr_decay value: -0.1"):
        fgrad.torch.optim.Adagrad(p, lr_decay=-0.1)
    with pytest.raises(ValueError, match="per-parameter options"):
        fgrad.torch.optim.LBFGS([{"params": p}, {"params": [nn.Parameter(fgrad.torch.zeros(1))]}])
    with pytest.raises(RuntimeError, match="only 'strong_wolfe'"):
        fgrad.torch.optim.LBFGS(p, line_search_fn="backtracking")


def test_adagrad_state_exists_before_the_first_step():
    p = nn.Parameter(fgrad.torch.zeros(3))
    opt = fgrad.torch.optim.Adagrad([p], initial_accumulator_value=0.25)
    st = opt.state_dict()["state"][0]
    assert float(st["step"]) == 0.0
    np.testing.assert_array_equal(st["sum"].numpy(), [0.25] * 3)


# ---- LBFGS ----

def _rosenbrock(x):
    return (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2


def _rosenbrock_grad(x):
    return np.array([-2 * (1 - x[0]) - 400 * x[0] * (x[1] - x[0] ** 2), 200 * (x[1] - x[0] ** 2)])


def _lbfgs_iterates(lib, dtype, outer=6, start=(-1.5, 2.0), analytic=False, **kw):
    """LBFGS on Rosenbrock; with analytic=True the closure sets the gradient from NumPy, so
    both libraries see the very same numbers and only the optimisers' arithmetic differs."""
    x = lib.nn.Parameter(lib.tensor(np.array(start, dtype)))
    opt = lib.optim.LBFGS([x], **kw)
    evals = []

    def closure():
        opt.zero_grad()
        if analytic:
            v = x.detach().numpy().astype(np.float64)
            loss = lib.tensor(np.array(_rosenbrock(v), dtype))
            x.grad = lib.tensor(_rosenbrock_grad(v).astype(dtype))
        else:
            loss = _rosenbrock(x)
            loss.backward()
        evals.append(float(loss.detach()))
        return loss
    out = []
    for _ in range(outer):
        loss = opt.step(closure)
        st = opt.state[x]
        out.append((x.detach().numpy().copy(), float(loss.detach()), st["func_evals"], st["n_iter"]))
    return out, evals, opt


LBFGS_CONFIGS = [
    dict(lr=1, max_iter=5),
    dict(lr=0.5, max_iter=7, history_size=3),
    dict(line_search_fn="strong_wolfe", max_iter=5),
    dict(line_search_fn="strong_wolfe", max_iter=20, history_size=4, tolerance_change=1e-12),
]
LBFGS_IDS = [str(sorted(k.items())) for k in LBFGS_CONFIGS]


@pytest.mark.parametrize("analytic", [True, False], ids=["same-gradients", "own-autograd"])
@pytest.mark.parametrize("kw", LBFGS_CONFIGS, ids=LBFGS_IDS)
def test_lbfgs_rosenbrock_iterates_match_pytorch_float64(kw, analytic):
    """Six steps (30 to 60 evaluations). The first ten evaluations agree to rounding; after
    that PyTorch's fused multiply-adds and summation order make last-bit differences, which
    the narrow Rosenbrock valley amplifies to ~1e-6 in the loss by the end of the run; the
    evaluation counts and the iterates stay the same."""
    torch = pytest.importorskip("torch")
    got, got_evals, _ = _lbfgs_iterates(fgrad.torch, np.float64, analytic=analytic, **kw)
    want, want_evals, _ = _lbfgs_iterates(torch, np.float64, analytic=analytic, **kw)
    assert len(got_evals) == len(want_evals)
    np.testing.assert_allclose(got_evals[:10], want_evals[:10], rtol=1e-13)
    np.testing.assert_allclose(got_evals, want_evals, rtol=1e-5)
    for (gx, gl, gf, gn), (wx, wl, wf, wn) in zip(got, want):
        assert gx.dtype == np.float64
        np.testing.assert_allclose(gx, wx, rtol=1e-6, atol=1e-7)
        assert (gf, gn) == (wf, wn)
        assert gl == pytest.approx(wl, rel=1e-5)
    assert np.abs(got[-1][0] - np.array([-1.5, 2.0])).max() > 0.1  # the run went somewhere


@pytest.mark.parametrize("kw", LBFGS_CONFIGS[:3], ids=LBFGS_IDS[:3])
def test_lbfgs_rosenbrock_first_step_matches_pytorch_float32(kw):
    """float32 rounding differences grow on Rosenbrock after ~10 evaluations, so one step of
    at most 7 iterations is compared."""
    torch = pytest.importorskip("torch")
    got, got_evals, _ = _lbfgs_iterates(fgrad.torch, np.float32, outer=1, analytic=True, **kw)
    want, want_evals, _ = _lbfgs_iterates(torch, np.float32, outer=1, analytic=True, **kw)
    assert got[0][0].dtype == np.float32
    np.testing.assert_allclose(got_evals, want_evals, rtol=1e-5)
    np.testing.assert_allclose(got[0][0], want[0][0], rtol=1e-5)
    assert got[0][2:] == want[0][2:]


def test_lbfgs_strong_wolfe_solves_rosenbrock():
    out, _, _ = _lbfgs_iterates(fgrad.torch, np.float64, outer=10, line_search_fn="strong_wolfe")
    np.testing.assert_allclose(out[-1][0], [1.0, 1.0], atol=1e-4)
    assert out[-1][1] < 1e-9


def test_lbfgs_mlp_matches_pytorch():
    torch = pytest.importorskip("torch")

    def run(lib):
        init, xs, ys = _problem(dtype=np.float64)
        params = [lib.nn.Parameter(lib.tensor(a.copy())) for a in init]
        opt = lib.optim.LBFGS(params, lr=0.5, max_iter=4, history_size=3, line_search_fn="strong_wolfe")
        for i in range(3):
            def closure():
                opt.zero_grad()
                loss = _loss(lib, params, xs[i], ys[i])
                loss.backward()
                return loss
            opt.step(closure)
        return _arrays(params)
    init, _, _ = _problem(dtype=np.float64)
    for g, w, p0 in zip(run(fgrad.torch), run(torch), init):
        assert g.dtype == np.float64 and not np.allclose(w, p0, rtol=1e-3)
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12)


def test_lbfgs_state_dict_round_trip(tmp_path):
    kw = dict(line_search_fn="strong_wolfe", max_iter=3, history_size=4)
    full, _, _ = _lbfgs_iterates(fgrad.torch, np.float64, outer=4, **kw)
    first, _, opt = _lbfgs_iterates(fgrad.torch, np.float64, outer=2, **kw)
    fgrad.torch.save(opt.state_dict(), tmp_path / "lbfgs.pt")
    x = nn.Parameter(fgrad.torch.tensor(first[-1][0].copy()))
    opt2 = fgrad.torch.optim.LBFGS([x], **kw)
    opt2.load_state_dict(fgrad.torch.load(tmp_path / "lbfgs.pt"))

    def closure():
        opt2.zero_grad()
        loss = _rosenbrock(x)
        loss.backward()
        return loss
    for i in range(2):
        opt2.step(closure)
        np.testing.assert_array_equal(x.detach().numpy(), full[2 + i][0])
    assert opt2.state[x]["n_iter"] == full[-1][3]


def test_named_parameters_as_pytorch():
    """PyTorch 2.x takes model.named_parameters(): the names go to group["param_names"]."""
    torch = pytest.importorskip("torch")
    m, tm = nn.Linear(3, 2), torch.nn.Linear(3, 2)
    opt = fgrad.torch.optim.AdamW(m.named_parameters(), lr=0.1)
    topt = torch.optim.AdamW(tm.named_parameters(), lr=0.1)
    assert opt.param_groups[0]["param_names"] == ["weight", "bias"]
    assert [id(p) for p in opt.param_groups[0]["params"]] == [id(m.weight), id(m.bias)]
    assert repr(opt) == repr(topt)
    sd = opt.state_dict()
    assert sd["param_groups"][0]["param_names"] == topt.state_dict()["param_groups"][0]["param_names"]
    with pytest.raises(ValueError, match="without names"):
        opt.add_param_group({"params": [nn.Parameter(fgrad.torch.zeros(1))]})
    with pytest.raises(ValueError, match="Some param names are missing"):
        fgrad.torch.optim.SGD([("w", nn.Parameter(fgrad.torch.zeros(1))), nn.Parameter(fgrad.torch.zeros(1))])
