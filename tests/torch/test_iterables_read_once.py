"""Functions that take a user's iterable of parameters read it once: scripts pass
model.parameters(), a generator, and a second pass over it finds nothing (clip_grad_norm_
once returned the norm without clipping). Each case runs with a list and with a generator
and must give the same result."""
from __future__ import annotations

import numpy as onp
import pytest

import fgrad
import fgrad.torch.nn as nn
import fgrad.torch.optim as optim
import fgrad.torch.utils.data as data
from fgrad.torch.nn import utils


def _model_with_grads():
    fgrad.torch.manual_seed(0)
    m = nn.Linear(4, 3)
    x = fgrad.torch.tensor(onp.random.RandomState(0).randn(5, 4).astype(onp.float32))
    (m(x) ** 2).sum().mul(50.0).backward()
    return m


def _state(m):
    return [p.detach().numpy().copy() for p in m.parameters()] + \
        [p.grad.numpy().copy() for p in m.parameters()]


CASES = {
    "clip_grad_norm_": lambda ps: utils.clip_grad_norm_(ps, 0.5),
    "clip_grad_norm_inf": lambda ps: utils.clip_grad_norm_(ps, 0.5, norm_type=float("inf")),
    "clip_grad_value_": lambda ps: utils.clip_grad_value_(ps, 0.01),
    "parameters_to_vector": lambda ps: utils.parameters_to_vector(ps),
    "vector_to_parameters": lambda ps: utils.vector_to_parameters(fgrad.torch.zeros(15), ps),
    "SGD": lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9).step(),
    "Adam": lambda ps: optim.Adam(ps, lr=0.1).step(),
    "AdamW": lambda ps: optim.AdamW(ps, lr=0.1).step(),
    "RMSprop": lambda ps: optim.RMSprop(ps, lr=0.1, momentum=0.9, centered=True).step(),
    "Adagrad": lambda ps: optim.Adagrad(ps, lr=0.1).step(),
    "Adadelta": lambda ps: optim.Adadelta(ps).step(),
    "Adamax": lambda ps: optim.Adamax(ps).step(),
    "NAdam": lambda ps: optim.NAdam(ps).step(),
    "RAdam": lambda ps: optim.RAdam(ps).step(),
    "LBFGS": lambda ps: _lbfgs_step(ps),
    "param groups": lambda ps: optim.Adam(iter([{"params": ps, "lr": 0.1}])).step(),
}


def _lbfgs_step(ps):
    opt = optim.LBFGS(ps, max_iter=3, line_search_fn="strong_wolfe")
    params = opt.param_groups[0]["params"]

    def closure():
        opt.zero_grad()
        loss = sum(((p - 1.0) ** 2).sum() for p in params)
        loss.backward()
        return loss
    opt.step(closure)


@pytest.mark.parametrize("name", sorted(CASES))
def test_parameter_iterable_is_read_once(name):
    m_list, m_gen = _model_with_grads(), _model_with_grads()
    r_list = CASES[name](list(m_list.parameters()))
    r_gen = CASES[name](m_gen.parameters())
    for a, b in zip(_state(m_list), _state(m_gen)):
        onp.testing.assert_array_equal(a, b)
    if r_list is not None:
        onp.testing.assert_array_equal(onp.asarray(r_list.detach().numpy()), onp.asarray(r_gen.detach().numpy()))


def test_clip_grad_norm_clips_a_generator():
    m = _model_with_grads()
    before = utils.clip_grad_norm_(m.parameters(), 1.0)
    assert float(before) > 1.0
    after = onp.sqrt(sum(float((p.grad.numpy().astype(onp.float64) ** 2).sum()) for p in m.parameters()))
    assert after == pytest.approx(1.0, rel=1e-5)


# --- fgrad.torch.utils.data: every argument PyTorch documents as an iterable, or that a script may pass
# as a generator, gives the same result as the same items in a list (one epoch for samplers) ---

def _canon(x):
    if isinstance(x, fgrad.torch.Tensor):
        return ("tensor", str(x.dtype), x.tolist())
    if isinstance(x, dict):
        return {k: _canon(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [type(x).__name__] + [_canon(v) for v in x]
    return x


class _Stream(data.IterableDataset):
    def __init__(self, items):
        self.items = items

    def __iter__(self):
        return iter(self.items)

    def __len__(self):
        return len(self.items)


def _seeded():
    return fgrad.torch.Generator().manual_seed(0)


DATA_CASES = {
    "random_split lengths": ([3, 7], lambda it: [s.indices for s in data.random_split(range(10), it, _seeded())]),
    "random_split fractions": ([0.25, 0.75],
                               lambda it: [s.indices for s in data.random_split(range(10), it, _seeded())]),
    "ConcatDataset": ([range(3), range(10, 12)], lambda it: (lambda d: [len(d)] + [d[i] for i in range(len(d))])(
        data.ConcatDataset(it))),
    "ChainDataset, two epochs": ([_Stream([1, 2]), _Stream([3])],
                                 lambda it: (lambda d: [list(d), list(d), len(d)])(data.ChainDataset(it))),
    "Subset indices": ([4, 0, 2], lambda it: (lambda s: [len(s)] + [s[i] for i in range(len(s))])(
        data.Subset(range(10, 20), it))),
    "SubsetRandomSampler": ([5, 7, 9], lambda it: (lambda s: [len(s), list(s), list(s)])(
        data.SubsetRandomSampler(it, generator=_seeded()))),
    "WeightedRandomSampler": ([0.5, 2.0, 1.0], lambda it: (lambda s: [list(s), list(s)])(
        data.WeightedRandomSampler(it, 6, generator=_seeded()))),
    "default_collate": ([(1, 0.5), (2, 1.5)], lambda it: _canon(data.default_collate(it))),
    "BatchSampler (one epoch)": (range(7), lambda it: list(data.BatchSampler(it, 3, drop_last=False))),
    "DataLoader sampler (one epoch)": ([3, 1, 2], lambda it: _canon(list(data.DataLoader(range(10, 20), sampler=it,
                                                                                        batch_size=2)))),
    "DataLoader batch_sampler (one epoch)": ([[0, 1], [5]], lambda it: _canon(list(
        data.DataLoader(range(10, 20), batch_sampler=it)))),
}


@pytest.mark.parametrize("name", sorted(DATA_CASES))
def test_data_iterable_arguments_are_read_once(name):
    items, run = DATA_CASES[name]
    from_list = run(list(items))
    from_generator = run(x for x in list(items))
    assert from_list == from_generator
    assert from_list and from_list != [] and any(from_list)


# --- fgrad.torch.optim.lr_scheduler: milestones and scheduler lists may be generators ---

def _lr_sequence(make):
    opt = optim.SGD([nn.Parameter(fgrad.torch.zeros(1))], lr=1.0)
    sched = make(opt)
    out = []
    for _ in range(30):
        opt.step()
        sched.step()
        out.append(sched.get_last_lr())
    return out


SCHEDULER_CASES = {
    "MultiStepLR milestones": ([3, 8, 8, 20], lambda opt, it: optim.lr_scheduler.MultiStepLR(opt, it, 0.5)),
    "SequentialLR milestones": ([5, 12], lambda opt, it: optim.lr_scheduler.SequentialLR(
        opt, [optim.lr_scheduler.ConstantLR(opt, 0.5), optim.lr_scheduler.ExponentialLR(opt, 0.9),
              optim.lr_scheduler.StepLR(opt, 4)], it)),
    "SequentialLR schedulers": (None, lambda opt, make_list: optim.lr_scheduler.SequentialLR(
        opt, make_list([optim.lr_scheduler.ConstantLR(opt, 0.5), optim.lr_scheduler.ExponentialLR(opt, 0.9)]),
        [7])),
    "ChainedScheduler schedulers": (None, lambda opt, make_list: optim.lr_scheduler.ChainedScheduler(
        make_list([optim.lr_scheduler.ConstantLR(opt, 0.5, total_iters=9),
                   optim.lr_scheduler.ExponentialLR(opt, 0.9)]))),
}


@pytest.mark.parametrize("name", sorted(SCHEDULER_CASES))
def test_scheduler_iterable_arguments_are_read_once(name):
    items, build = SCHEDULER_CASES[name]
    if items is None:  # the scheduler list itself, made inside the builder
        from_list = _lr_sequence(lambda opt: build(opt, list))
        from_generator = _lr_sequence(lambda opt: build(opt, lambda xs: (x for x in xs)))
    else:
        from_list = _lr_sequence(lambda opt: build(opt, list(items)))
        from_generator = _lr_sequence(lambda opt: build(opt, (x for x in items)))
    assert from_list == from_generator
    assert len({lr[0] for lr in from_list}) > 3  # the schedule changed the rate
