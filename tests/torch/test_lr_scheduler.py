"""fgrad.torch.optim.lr_scheduler: every scheduler gives PyTorch's learning-rate sequence bit for
bit (the recursive formulas are evaluated in PyTorch's order, so the floats are equal, not
just close), and a scheduler saved with state_dict() and loaded into a fresh one continues
the same sequence."""
import math
import warnings

import pytest

import fgrad
import fgrad.torch.nn as nn
from fgrad.torch.optim import lr_scheduler as fls

STEPS = 100


def _optimizer(lib, kind="sgd"):
    """Two param groups with different rates, so per-group lists are exercised."""
    a, b = lib.nn.Parameter(lib.zeros(3)), lib.nn.Parameter(lib.zeros(2))
    groups = [{"params": [a]}, {"params": [b], "lr": 0.05}]
    if kind == "adam":
        return lib.optim.Adam(groups, lr=0.1)
    return lib.optim.SGD(groups, lr=0.1, momentum=0.9)


# name -> (optimizer kind, builder(lib, optimizer)); builders use only names both libraries have
SCHEDULERS = {
    "StepLR": ("sgd", lambda L, o: L.optim.lr_scheduler.StepLR(o, step_size=7, gamma=0.5)),
    "MultiStepLR": ("sgd", lambda L, o: L.optim.lr_scheduler.MultiStepLR(o, [10, 25, 25, 60], gamma=0.3)),
    "ExponentialLR": ("sgd", lambda L, o: L.optim.lr_scheduler.ExponentialLR(o, gamma=0.97)),
    "CosineAnnealingLR": ("sgd", lambda L, o: L.optim.lr_scheduler.CosineAnnealingLR(
        o, T_max=17, eta_min=1e-3)),
    "CosineAnnealingLR_eta0": ("sgd", lambda L, o: L.optim.lr_scheduler.CosineAnnealingLR(o, T_max=30)),
    "CosineAnnealingWarmRestarts": ("sgd", lambda L, o: L.optim.lr_scheduler.CosineAnnealingWarmRestarts(
        o, T_0=5, T_mult=2, eta_min=1e-4)),
    "CosineAnnealingWarmRestarts_mult1": ("sgd", lambda L, o:
                                          L.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=9)),
    "LambdaLR": ("sgd", lambda L, o: L.optim.lr_scheduler.LambdaLR(
        o, [lambda e: 0.95 ** e, lambda e: 1 / (1 + e)])),
    "MultiplicativeLR": ("sgd", lambda L, o: L.optim.lr_scheduler.MultiplicativeLR(
        o, lambda e: 0.99 if e % 3 else 0.9)),
    "LinearLR": ("sgd", lambda L, o: L.optim.lr_scheduler.LinearLR(
        o, start_factor=0.1, end_factor=0.9, total_iters=37)),
    "ConstantLR": ("sgd", lambda L, o: L.optim.lr_scheduler.ConstantLR(o, factor=0.3, total_iters=12)),
    "PolynomialLR": ("sgd", lambda L, o: L.optim.lr_scheduler.PolynomialLR(o, total_iters=80, power=2.5)),
    "OneCycleLR_cos_sgd": ("sgd", lambda L, o: L.optim.lr_scheduler.OneCycleLR(
        o, max_lr=[1.0, 0.4], total_steps=STEPS)),
    "OneCycleLR_linear_adam": ("adam", lambda L, o: L.optim.lr_scheduler.OneCycleLR(
        o, max_lr=0.3, epochs=10, steps_per_epoch=11, pct_start=0.25, anneal_strategy="linear")),
    "OneCycleLR_three_phase": ("adam", lambda L, o: L.optim.lr_scheduler.OneCycleLR(
        o, max_lr=0.3, total_steps=STEPS + 5, three_phase=True, div_factor=10.0, final_div_factor=100.0)),
    "OneCycleLR_no_momentum": ("sgd", lambda L, o: L.optim.lr_scheduler.OneCycleLR(
        o, max_lr=0.5, total_steps=STEPS, cycle_momentum=False)),
    "CyclicLR_triangular2": ("sgd", lambda L, o: L.optim.lr_scheduler.CyclicLR(
        o, base_lr=0.01, max_lr=[0.1, 0.2], step_size_up=8, step_size_down=5, mode="triangular2")),
    "CyclicLR_exp_range_adam": ("adam", lambda L, o: L.optim.lr_scheduler.CyclicLR(
        o, base_lr=0.01, max_lr=0.1, step_size_up=6, mode="exp_range", gamma=0.98)),
    "SequentialLR": ("sgd", lambda L, o: L.optim.lr_scheduler.SequentialLR(
        o, [L.optim.lr_scheduler.LinearLR(o, start_factor=0.2, total_iters=10),
            L.optim.lr_scheduler.CosineAnnealingLR(o, T_max=40, eta_min=1e-3),
            L.optim.lr_scheduler.ExponentialLR(o, gamma=0.9)], milestones=[10, 50])),
    "ChainedScheduler": ("sgd", lambda L, o: L.optim.lr_scheduler.ChainedScheduler(
        [L.optim.lr_scheduler.ConstantLR(o, factor=0.5, total_iters=20),
         L.optim.lr_scheduler.ExponentialLR(o, gamma=0.98),
         L.optim.lr_scheduler.StepLR(o, step_size=30, gamma=0.5)])),
}


def _snapshot(opt):
    """Each group's lr and momentum (SGD) or beta1 (Adam)."""
    return [(g["lr"], g["momentum"] if "momentum" in g else g["betas"][0]) for g in opt.param_groups]


def _run(lib, name, steps=STEPS):
    kind, build = SCHEDULERS[name]
    opt = _optimizer(lib, kind)
    sched = build(lib, opt)
    seq = [(list(sched.get_last_lr()), _snapshot(opt))]
    for _ in range(steps):
        opt.step()
        sched.step()
        seq.append((list(sched.get_last_lr()), _snapshot(opt)))
    return seq, opt, sched


def _assert_same(got, want):
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g == w, f"step {i}"


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_sequence_matches_pytorch(name):
    torch = pytest.importorskip("torch")
    got, opt, _ = _run(fgrad.torch, name)
    want, topt, _ = _run(torch, name)
    _assert_same(got, want)
    # the keys the scheduler put into the param groups (initial_lr, max_lr, ...) are PyTorch's
    assert [sorted(g) for g in opt.param_groups] == [sorted(g) for g in topt.param_groups]
    assert repr(opt).replace("fgrad", "torch") == repr(topt)


def _fresh_scheduler_resumed(name, opt_sd, sched_sd):
    """PyTorch's documented order: build the scheduler, then load the optimizer's and the
    scheduler's state (the constructor's own step would otherwise overwrite the loaded lr)."""
    kind, build = SCHEDULERS[name]
    opt = _optimizer(fgrad.torch, kind)
    sched = build(fgrad.torch, opt)
    opt.load_state_dict(opt_sd)
    sched.load_state_dict(sched_sd)
    return opt, sched


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_state_dict_round_trip_continues_the_sequence(name, tmp_path):
    full, _, _ = _run(fgrad.torch, name)
    split = 41
    _, opt, sched = _run(fgrad.torch, name, steps=split)
    # through fgrad.torch.save/load too: the state must be made of savable values
    fgrad.torch.save({"opt": opt.state_dict(), "sched": sched.state_dict()}, tmp_path / "ckpt.pt")
    ckpt = fgrad.torch.load(tmp_path / "ckpt.pt")
    opt2, sched2 = _fresh_scheduler_resumed(name, ckpt["opt"], ckpt["sched"])
    seq = []
    for _ in range(STEPS - split):
        opt2.step()
        sched2.step()
        seq.append((list(sched2.get_last_lr()), _snapshot(opt2)))
    _assert_same(seq, full[split + 1:])


def test_torch_state_dict_loads_into_fgrad_scheduler():
    torch = pytest.importorskip("torch")
    _, topt, tsched = _run(torch, "CosineAnnealingWarmRestarts", steps=23)
    full, _, _ = _run(fgrad.torch, "CosineAnnealingWarmRestarts")
    opt, sched = _fresh_scheduler_resumed("CosineAnnealingWarmRestarts",
                                          {"state": {}, "param_groups": [
                                              {k: v for k, v in g.items() if k != "params"} | {"params": [i]}
                                              for i, g in enumerate(topt.param_groups)]},
                                          tsched.state_dict())
    opt.step()
    sched.step()
    _assert_same([(list(sched.get_last_lr()), _snapshot(opt))], [full[24]])


def _plateau_run(lib, metrics, **kw):
    opt = _optimizer(lib)
    sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **kw)
    out = []
    for m in metrics:
        opt.step()
        sched.step(m)
        out.append((list(sched.get_last_lr()), sched.num_bad_epochs, sched.cooldown_counter, sched.best))
    return out, sched


_METRICS = [1.0, 0.9, 0.9, 0.95, 0.9, 0.91, 0.899995, 0.92, 0.93, 0.85, 0.85, 0.86, 0.87, 0.88,
            0.84, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.7, 0.7, 0.71, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7] * 3
PLATEAU = [
    dict(),
    dict(patience=2),
    dict(patience=1, factor=0.5, cooldown=3),
    dict(mode="max", patience=2, factor=0.3),
    dict(threshold_mode="abs", threshold=0.02, patience=1),
    dict(mode="max", threshold_mode="abs", threshold=0.01, patience=0, min_lr=[0.02, 0.01]),
    dict(patience=0, factor=0.5, min_lr=0.009, eps=1e-3),
]


@pytest.mark.parametrize("kw", PLATEAU, ids=[str(sorted(k.items())) for k in PLATEAU])
def test_reduce_on_plateau_matches_pytorch(kw):
    torch = pytest.importorskip("torch")
    got, _ = _plateau_run(fgrad.torch, _METRICS, **kw)
    want, _ = _plateau_run(torch, _METRICS, **kw)
    assert got == want


def test_reduce_on_plateau_by_hand_and_state_dict():
    # patience 2: the third epoch without improvement reduces; a tensor metric is accepted
    got, sched = _plateau_run(fgrad.torch, [1.0, 1.0, 1.0, fgrad.torch.tensor(1.0), 0.5, 0.5], patience=2, factor=0.5)
    assert [lr[0][0] for lr in got] == [0.1, 0.1, 0.1, 0.05, 0.05, 0.05]
    sd = sched.state_dict()
    assert sd["best"] == 0.5 and sd["num_bad_epochs"] == 1 and "optimizer" not in sd
    _, fresh = _plateau_run(fgrad.torch, [], patience=2, factor=0.5)
    fresh.load_state_dict(sd)
    assert fresh.best == 0.5 and fresh._is_better(0.4, fresh.best)
    with pytest.raises(ValueError, match="Factor should be < 1.0"):
        fgrad.torch.optim.lr_scheduler.ReduceLROnPlateau(_optimizer(fgrad.torch), factor=1.0)
    with pytest.raises(ValueError, match="mode avg is unknown"):
        fgrad.torch.optim.lr_scheduler.ReduceLROnPlateau(_optimizer(fgrad.torch), mode="avg")


def test_warm_restarts_fractional_epochs_match_pytorch():
    torch = pytest.importorskip("torch")

    def run(lib):
        opt = _optimizer(lib)
        sched = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=2, eta_min=0.001)
        out, iters = [], 7
        for epoch in range(15):
            for i in range(iters):
                opt.step()
                sched.step(epoch + i / iters)
                out.append((list(sched.get_last_lr()), sched.T_cur, sched.T_i, sched.last_epoch))
        return out
    got, want = run(fgrad.torch), run(torch)
    assert got == want


CLOSED_FORM = ["StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR", "LinearLR", "ConstantLR",
               "PolynomialLR"]


@pytest.mark.parametrize("name", CLOSED_FORM)
def test_step_with_epoch_uses_the_closed_form_as_pytorch(name):
    torch = pytest.importorskip("torch")

    def run(lib):
        kind, build = SCHEDULERS[name]
        opt = _optimizer(lib, kind)
        sched = build(lib, opt)
        out = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for epoch in [3, 4, 10, 11, 40, 39, 81, 90]:
                opt.step()
                sched.step(epoch)
                out.append(list(sched.get_last_lr()))
        return out
    assert run(fgrad.torch) == run(torch)


def test_closed_forms_without_pytorch():
    """The recursive rates equal the textbook closed forms (to rounding)."""
    seq, _, _ = _run(fgrad.torch, "CosineAnnealingLR")
    for t, (last, _) in enumerate(seq):
        want = 1e-3 + (0.1 - 1e-3) * (1 + math.cos(math.pi * t / 17)) / 2
        assert last[0] == pytest.approx(want, rel=1e-9)
    seq, _, _ = _run(fgrad.torch, "StepLR")
    assert [s[0][1] for s in seq[:16]] == pytest.approx([0.05] * 7 + [0.025] * 7 + [0.0125] * 2)
    seq, _, _ = _run(fgrad.torch, "OneCycleLR_cos_sgd")
    assert seq[0][0][0] == pytest.approx(1.0 / 25) and seq[0][1][0][1] == 0.95
    peak = max(range(len(seq)), key=lambda i: seq[i][0][0])
    assert peak == 29 and seq[peak][0][0] == pytest.approx(1.0) and seq[peak][1][0][1] == pytest.approx(0.85)
    assert seq[-2][0][0] == pytest.approx(1.0 / 25 / 1e4)
    seq, _, _ = _run(fgrad.torch, "CosineAnnealingWarmRestarts")
    # periods 5, 10, 20, ...: restarts at epochs 5 and 15
    assert seq[5][0][0] == pytest.approx(0.1) and seq[15][0][0] == pytest.approx(0.1)
    assert seq[14][0][0] < seq[13][0][0] < 0.01


def test_initial_lr_and_resume_with_last_epoch():
    opt = _optimizer(fgrad.torch)
    fls.StepLR(opt, step_size=2)
    assert [g["initial_lr"] for g in opt.param_groups] == [0.1, 0.05]
    fresh = _optimizer(fgrad.torch)
    with pytest.raises(KeyError, match="initial_lr"):
        fls.StepLR(fresh, step_size=2, last_epoch=3)
    for g in fresh.param_groups:
        g["initial_lr"] = g["lr"]
    s = fls.StepLR(fresh, step_size=2, last_epoch=3)
    assert s.last_epoch == 4 and s.base_lrs == [0.1, 0.05]


def test_warns_when_scheduler_steps_before_optimizer():
    opt = _optimizer(fgrad.torch)
    sched = fls.ExponentialLR(opt, gamma=0.5)
    order = r"Detected call of `lr_scheduler.step\(\)` before `optimizer.step\(\)`"
    with pytest.warns(UserWarning, match=order):
        sched.step()
    opt = _optimizer(fgrad.torch)
    sched = fls.ExponentialLR(opt, gamma=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt.step()
        sched.step()
        sched.step()
    assert sched.get_last_lr() == [0.025, 0.0125]
    with pytest.warns(UserWarning, match="get_last_lr"):
        sched.get_lr()


def test_optimizer_with_scheduler_still_pickles_and_copies():
    import copy
    opt = _optimizer(fgrad.torch)
    fls.StepLR(opt, step_size=2)
    opt.step()
    clone = copy.deepcopy(opt)
    assert "step" not in clone.__dict__ and clone.param_groups[0]["initial_lr"] == 0.1


def test_invalid_arguments_name_the_value():
    opt = _optimizer(fgrad.torch)
    with pytest.raises(TypeError, match="list is not an Optimizer"):
        fls.StepLR([], step_size=2)
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas, but got 1"):
        fls.LambdaLR(opt, [lambda e: 1.0])
    with pytest.raises(ValueError, match="T_0"):
        fls.CosineAnnealingWarmRestarts(opt, T_0=0)
    with pytest.raises(ValueError, match="start_factor=0"):
        fls.LinearLR(opt, start_factor=0)
    with pytest.raises(ValueError, match="total_steps OR"):
        fls.OneCycleLR(opt, max_lr=0.1)
    with pytest.raises(ValueError, match="max_lr must have the same length"):
        fls.OneCycleLR(opt, max_lr=[0.1], total_steps=5)
    one_opt = _optimizer(fgrad.torch)
    one = fls.OneCycleLR(one_opt, max_lr=0.1, total_steps=3)
    one_opt.step()
    for _ in range(3):  # epochs 1..3: total_steps counts the constructor's step 0 too
        one.step()
    with pytest.raises(ValueError, match="Tried to step 4 times"):
        one.step()
    with pytest.raises(ValueError, match="momentum or beta1"):
        fls.OneCycleLR(fgrad.torch.optim.Adagrad([nn.Parameter(fgrad.torch.zeros(1))]), max_lr=0.1, total_steps=5)
    other = _optimizer(fgrad.torch)
    with pytest.raises(ValueError, match="same optimizer"):
        fls.SequentialLR(opt, [fls.StepLR(opt, 2), fls.StepLR(other, 2)], milestones=[3])
    with pytest.raises(ValueError, match="one more than the number of milestone"):
        fls.SequentialLR(opt, [fls.StepLR(opt, 2)], milestones=[3])
    with pytest.raises(ValueError, match="ReduceLROnPlateau"):
        fls.ChainedScheduler([fls.ReduceLROnPlateau(opt)])


def test_lambda_state_dict_keeps_callable_objects_only():
    class Decay:
        def __init__(self, rate):
            self.rate = rate

        def __call__(self, epoch):
            return self.rate ** epoch
    opt = _optimizer(fgrad.torch)
    sched = fls.LambdaLR(opt, [Decay(0.5), lambda e: 1.0])
    sd = sched.state_dict()
    assert sd["lr_lambdas"] == [{"rate": 0.5}, None]
    other = fls.LambdaLR(_optimizer(fgrad.torch), [Decay(0.9), lambda e: 1.0])
    other.load_state_dict(sd)
    assert other.lr_lambdas[0].rate == 0.5
    assert sd["lr_lambdas"] == [{"rate": 0.5}, None]  # loading does not consume the dict
