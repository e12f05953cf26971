"""Functions that take a user's iterable of parameters read it once: scripts pass
model.parameters(), a generator, and a second pass over it finds nothing (clip_grad_norm_
once returned the norm without clipping). Each case runs with a list and with a generator
and must give the same result."""
from __future__ import annotations

import numpy as onp
import pytest

import fgrad
import fgrad.nn as nn
import fgrad.optim as optim
from fgrad.nn import utils


def _model_with_grads():
    fgrad.manual_seed(0)
    m = nn.Linear(4, 3)
    x = fgrad.tensor(onp.random.RandomState(0).randn(5, 4).astype(onp.float32))
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
    "vector_to_parameters": lambda ps: utils.vector_to_parameters(fgrad.zeros(15), ps),
    "SGD": lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9).step(),
    "Adam": lambda ps: optim.Adam(ps, lr=0.1).step(),
    "AdamW": lambda ps: optim.AdamW(ps, lr=0.1).step(),
}


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
