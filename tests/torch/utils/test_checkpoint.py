"""torch.utils.checkpoint on fgrad.torch (fgrad/torch/utils/checkpoint.py) against real
PyTorch: gradients through checkpointed functions and Sequentials, the recomputation under the
forward pass's RNG state (dropout), context_fn's two contexts, CheckpointFunction and
DefaultDeviceType."""
from __future__ import annotations

import contextlib

import numpy as np
import pytest

import fgrad.torch as ftorch

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(1)
X = RNG.standard_normal((5, 4))
W1 = RNG.standard_normal((6, 4)) / 2
W2 = RNG.standard_normal((3, 6)) / 2


def _model(L):
    model = L.nn.Sequential(L.nn.Linear(4, 6), L.nn.Tanh(), L.nn.Linear(6, 3), L.nn.Sigmoid()).double()
    with L.no_grad():
        model[0].weight.copy_(L.tensor(W1))
        model[2].weight.copy_(L.tensor(W2))
        model[0].bias.fill_(0.1)
        model[2].bias.fill_(-0.2)
    return model


def _grads(L, how):
    model = _model(L)
    x = L.tensor(X, requires_grad=True)
    cp = L.utils.checkpoint
    if how == "function":
        out = cp.checkpoint(lambda a: model(a) * a.sum(), x, use_reentrant=True)
    elif how == "non_reentrant":
        out = cp.checkpoint(model, x, use_reentrant=False)
    elif how == "sequential":
        out = cp.checkpoint_sequential(model, 2, x, use_reentrant=True)
    else:  # the reentrant Function itself
        out = cp.CheckpointFunction.apply(model, True, x)
    (out ** 2).sum().backward()
    return [out.detach().numpy(), x.grad.numpy()] + [p.grad.numpy() for p in model.parameters()]


@pytest.mark.parametrize("how", ["function", "non_reentrant", "sequential", "CheckpointFunction"])
def test_values_and_gradients_match_torch(how):
    for ours, theirs in zip(_grads(ftorch, how), _grads(torch, how)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14)


def _dropout_grads(checkpointed: bool, preserve: bool = True):
    ftorch.manual_seed(3)
    x = ftorch.tensor(X, requires_grad=True)

    def f(a):
        return ftorch.nn.functional.dropout(a.sin(), p=0.5, training=True) * a
    if checkpointed:
        out = ftorch.utils.checkpoint.checkpoint(f, x, use_reentrant=True, preserve_rng_state=preserve)
    else:
        out = f(x)
    out.sum().backward()
    return out.detach().numpy(), x.grad.numpy()


def test_recomputation_draws_the_forward_passs_dropout_mask():
    plain = _dropout_grads(False)
    for a, b in zip(_dropout_grads(True), plain):
        np.testing.assert_array_equal(a, b)
    # without preserving the state the recomputation draws a new mask: the gradient is not
    # the forward pass's
    assert not np.array_equal(_dropout_grads(True, preserve=False)[1], plain[1])


def test_context_fn_contexts_around_forward_and_recomputation():
    log = []

    @contextlib.contextmanager
    def tag(name):
        log.append(f"enter {name}")
        yield
        log.append(f"exit {name}")
    msgs = {}
    for L in (torch, ftorch):
        log.clear()
        x = L.tensor(X, requires_grad=True)
        out = L.utils.checkpoint.checkpoint(lambda a: log.append("run") or a.exp(), x, use_reentrant=False,
                                            context_fn=lambda: (tag("forward"), tag("recompute")))
        out.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), np.exp(X), rtol=1e-12)
        # (torch stops its non-reentrant recomputation early, by an exception that leaves the
        # recompute context without running the code after its yield: compare up to there)
        msgs[L] = log[:5]
        assert log[:5] == ["enter forward", "run", "exit forward", "enter recompute", "run"]
        with pytest.raises(ValueError) as info:
            L.utils.checkpoint.checkpoint(lambda a: a, x, use_reentrant=True, context_fn=lambda: (tag("a"), tag("b")))
        msgs[L].append(str(info.value).splitlines()[0])  # (fgrad adds the user's line)
    assert msgs[ftorch] == msgs[torch]


def test_default_device_type():
    for L in (torch, ftorch):
        ddt = L.utils.checkpoint.DefaultDeviceType
        before = ddt.get_device_type()
        assert before == ("cuda" if L.cuda.is_available() else "cpu")
        ddt.set_device_type("meta")
        assert ddt.get_device_type() == "meta"
        ddt.set_device_type(before)


def _side_effects(L, cp, enable):
    calls = []

    def f(x):
        calls.append("a")
        y = x.sin()
        calls.append("b")
        z = y.exp()
        calls.append("c")
        return z * 2.0
    x = L.ones(3, requires_grad=True)
    with cp.set_checkpoint_early_stop(enable):
        out = cp.checkpoint(f, x, use_reentrant=False)
    out.sum().backward()
    return calls, x.grad.numpy()


def test_set_checkpoint_early_stop():
    import torch.utils.checkpoint as tcp
    from fgrad.torch.utils import checkpoint as fcp
    # without early stop both recompute the whole function
    (fc, fg), (tc, tg) = _side_effects(ftorch, fcp, False), _side_effects(torch, tcp, False)
    assert fc == tc == ["a", "b", "c", "a", "b", "c"]
    np.testing.assert_allclose(fg, tg, rtol=1e-6)
    # with it PyTorch stops after exp (the last saved tensor); fgrad runs to the end
    (fc, fg), (tc, tg) = _side_effects(ftorch, fcp, True), _side_effects(torch, tcp, True)
    assert tc == ["a", "b", "c", "a", "b"] and fc == ["a", "b", "c", "a", "b", "c"]
    np.testing.assert_allclose(fg, tg, rtol=1e-6)
