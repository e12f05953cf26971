"""Module.register_backward_hook, PyTorch's deprecated module hook, against torch 2.13: the hook
sits on the node that made the output, so for a one-op layer it sees the input's, weight's and
bias's gradients; it cannot be mixed with full backward hooks; its handle removes it."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import fgrad.torch as ftorch

torch = pytest.importorskip("torch")


def _record(lib):
    lib.manual_seed(0)
    conv = lib.nn.Conv2d(2, 3, 3)
    x = lib.randn(1, 2, 6, 6, requires_grad=True)
    seen = []

    def hook(module, grad_input, grad_output):
        seen.append((type(module).__name__, type(grad_input).__name__,
                     [None if g is None else g.numpy().copy() for g in grad_input],
                     [g.numpy().copy() for g in grad_output]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        handle = conv.register_backward_hook(hook)
        conv(x).square().sum().backward()
        handle.remove()
        conv(x).sum().backward()
    return seen


def test_one_op_layer_sees_its_nodes_gradients():
    got, want = _record(ftorch), _record(torch)
    assert len(got) == len(want) == 1
    (gname, gtype, gin, gout), (wname, wtype, win, wout) = got[0], want[0]
    assert (gname, gtype) == (wname, wtype) == ("Conv2d", "tuple")
    assert [a.shape for a in gin] == [a.shape for a in win] == [(1, 2, 6, 6), (3, 2, 3, 3), (3,)]
    for a, b in zip(gin + gout, win + wout):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("lib", [ftorch, torch], ids=["fgrad", "torch"])
def test_cannot_mix_with_full_hooks(lib):
    layer = lib.nn.Linear(2, 2)
    layer.register_full_backward_hook(lambda m, gi, go: None)
    with pytest.raises(RuntimeError, match="Cannot use both"):
        layer.register_backward_hook(lambda m, gi, go: None)
    other = lib.nn.Linear(2, 2)
    other.register_backward_hook(lambda m, gi, go: None)
    with pytest.raises(RuntimeError, match="Cannot use both"):
        other.register_full_backward_hook(lambda m, gi, go: None)


@pytest.mark.parametrize("lib", [ftorch, torch], ids=["fgrad", "torch"])
def test_returned_grad_input_replaces_the_gradients(lib):
    layer = lib.nn.Linear(3, 1)
    x = lib.ones(2, 3, requires_grad=True)
    layer.register_backward_hook(lambda m, gi, go: tuple(None if g is None else g * 0 for g in gi))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        layer(x).sum().backward()
    assert float(layer.bias.grad.abs().sum()) == 0.0
