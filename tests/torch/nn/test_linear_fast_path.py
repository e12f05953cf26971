"""F.linear's fast path (a layer's 2-D call on NumPy values, bound without the general path's
per-argument checks) gives the general path's results: values, graph (node classes and
next_functions), gradients, the no-grad primitive, and in-place checks on what the ops saved."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad.torch as torch
from fgrad.torch.nn import functional as F_mod

F = torch.nn.functional


def _graph(t, depth=3):
    """Node class names down the graph (next_functions), as a nested tuple."""
    def walk(node, d):
        if node is None or d == 0:
            return None
        return (type(node).__name__, tuple(walk(n, d - 1) for n, _ in node.next_functions))
    return walk(t.grad_fn, depth)


def _run(x_grad: bool, w_param: bool, b_grad: bool, grad_mode: bool):
    rng = np.random.default_rng(0)
    x = torch.tensor(rng.standard_normal((5, 4)).astype(np.float32), requires_grad=x_grad)
    w = torch.tensor(rng.standard_normal((3, 4)).astype(np.float32))
    w = torch.nn.Parameter(w) if w_param else w
    b = torch.tensor(rng.standard_normal(3).astype(np.float32), requires_grad=b_grad)
    with torch.set_grad_enabled(grad_mode):
        y = F.linear(x, w, b)
    out = {"y": y.detach().numpy().copy(), "graph": _graph(y), "requires_grad": y.requires_grad}
    if y.requires_grad:
        (y * y).sum().backward()
        out["grads"] = [None if t.grad is None else t.grad.numpy().copy() for t in (x, w, b)]
    return out


@pytest.mark.parametrize("x_grad", [False, True])
@pytest.mark.parametrize("w_param", [False, True])
@pytest.mark.parametrize("b_grad", [False, True])
@pytest.mark.parametrize("grad_mode", [False, True])
def test_fast_path_is_the_general_path(monkeypatch, x_grad, w_param, b_grad, grad_mode):
    def general_path_taken(*a):
        raise AssertionError("F.linear took the general path")
    with monkeypatch.context() as m:
        m.setattr(F_mod, "_arr", general_path_taken)  # (the general path's first step)
        fast = _run(x_grad, w_param, b_grad, grad_mode)
    monkeypatch.setattr(F_mod, "_PLAIN_WEIGHTS", ())  # every call takes the general path
    general = _run(x_grad, w_param, b_grad, grad_mode)
    assert fast["graph"] == general["graph"] and fast["requires_grad"] == general["requires_grad"]
    assert fast["y"].tobytes() == general["y"].tobytes()
    for a, b in zip(fast.get("grads", ()), general.get("grads", ())):
        assert (a is None) == (b is None) and (a is None or a.tobytes() == b.tobytes())
    if grad_mode and (x_grad or w_param or b_grad):
        assert fast["graph"][0] == "AddmmBackward0"


def test_fast_path_keeps_the_saved_value_checks():
    w = torch.nn.Parameter(torch.ones(3, 4))
    x = torch.ones(5, 4, requires_grad=True)
    b = torch.zeros(3, requires_grad=True)
    y = F.linear(x, w, b)
    with torch.no_grad():
        x.mul_(2)  # the product's backward reads x: PyTorch refuses
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_fast_path_declines_what_the_general_path_checks():
    w = torch.nn.Parameter(torch.ones(3, 4))
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        F.linear(torch.ones(5, 3), w, torch.zeros(3))
    with pytest.raises(RuntimeError, match="bias"):
        F.linear(torch.ones(5, 4), w, torch.zeros(4))
    with pytest.raises(RuntimeError, match="dtype"):
        F.linear(torch.ones(5, 4, dtype=torch.float64), w, torch.zeros(3))
