"""F.linear is PyTorch's composition, addmm(bias, input, weight.t()) (mm without a bias;
2-D views around other ranks): the same values, graph (node classes and next_functions) and
gradients for every mix of requires_grad, Parameter or plain weight, a weight subclass (its
own t()) and grad mode; in-place checks on what the ops saved; the checks of its arguments."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad.torch as torch

F = torch.nn.functional


def _graph(t, depth=3):
    """Node class names down the graph (next_functions), as a nested tuple."""
    def walk(node, d):
        if node is None or d == 0:
            return None
        return (type(node).__name__, tuple(walk(n, d - 1) for n, _ in node.next_functions))
    return walk(t.grad_fn, depth)


class _MyWeight(torch.Tensor):
    """A subclass: linear calls its t() like any other method."""


def _run(fn, x_shape, x_grad: bool, w_kind: str, b_grad: bool, grad_mode: bool):
    rng = np.random.default_rng(0)
    x = torch.tensor(rng.standard_normal(x_shape).astype(np.float32), requires_grad=x_grad)
    w = torch.tensor(rng.standard_normal((3, 4)).astype(np.float32))
    w = {"plain": w, "param": torch.nn.Parameter(w), "subclass": w.as_subclass(_MyWeight)}[w_kind]
    b = torch.tensor(rng.standard_normal(3).astype(np.float32), requires_grad=b_grad)
    with torch.set_grad_enabled(grad_mode):
        y = fn(x, w, b)
    out = {"y": y.detach().numpy().copy(), "graph": _graph(y), "requires_grad": y.requires_grad}
    if y.requires_grad:
        (y * y).sum().backward()
        out["grads"] = [None if t.grad is None else t.grad.numpy().copy() for t in (x, w, b)]
    return out


def _composed(x, w, b):
    if x.dim() == 2:
        return torch.addmm(b, x, w.t())
    return torch.addmm(b, x.reshape(-1, x.shape[-1]), w.t()).view(*x.shape[:-1], w.shape[0])


@pytest.mark.parametrize("x_shape", [(5, 4), (2, 5, 4)])
@pytest.mark.parametrize("x_grad", [False, True])
@pytest.mark.parametrize("w_kind", ["plain", "param", "subclass"])
@pytest.mark.parametrize("b_grad", [False, True])
@pytest.mark.parametrize("grad_mode", [False, True])
def test_linear_is_addmm_of_the_transpose(x_shape, x_grad, w_kind, b_grad, grad_mode):
    got = _run(F.linear, x_shape, x_grad, w_kind, b_grad, grad_mode)
    want = _run(_composed, x_shape, x_grad, w_kind, b_grad, grad_mode)
    assert got["graph"] == want["graph"] and got["requires_grad"] == want["requires_grad"]
    assert got["y"].tobytes() == want["y"].tobytes()
    for a, b in zip(got.get("grads", ()), want.get("grads", ())):
        assert (a is None) == (b is None) and (a is None or a.tobytes() == b.tobytes())
    if grad_mode and (x_grad or w_kind == "param" or b_grad):
        assert got["graph"][0] == ("AddmmBackward0" if len(x_shape) == 2 else "ViewBackward0")


def test_linear_keeps_the_saved_value_checks():
    w = torch.nn.Parameter(torch.ones(3, 4))
    x = torch.ones(5, 4, requires_grad=True)
    b = torch.zeros(3, requires_grad=True)
    y = F.linear(x, w, b)
    with torch.no_grad():
        x.mul_(2)  # the product's backward reads x: PyTorch refuses
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_linear_checks_its_arguments():
    w = torch.nn.Parameter(torch.ones(3, 4))
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        F.linear(torch.ones(5, 3), w, torch.zeros(3))
    with pytest.raises(RuntimeError, match="bias"):
        F.linear(torch.ones(5, 4), w, torch.zeros(4))
    with pytest.raises(RuntimeError, match="dtype"):
        F.linear(torch.ones(5, 4, dtype=torch.float64), w, torch.zeros(3))
    with pytest.raises(RuntimeError, match="dtype"):
        F.linear(torch.ones(5, 4, dtype=torch.float64), w)
    with pytest.raises(RuntimeError, match="dtype"):
        F.linear(torch.ones(5, 4), w, torch.zeros(3, dtype=torch.float64))
