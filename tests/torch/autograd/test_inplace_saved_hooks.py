"""In-place ops in a graph, with and without identity saved-tensor hooks, against PyTorch: the
gradients of `(y * y).sum()` after an in-place op on `y = x * 1` (directly and through the
view `y[0]`) for both the leaf `x` below the overwritten history and the op's other operand
`v`, including which of them get None and which get zeros (copy_ keeps its edge to self's old
history and sends it zeros, as PyTorch's CopyBackwards does)."""
from __future__ import annotations

import contextlib

import numpy as np
import pytest

import fgrad.torch as ftorch

torch = pytest.importorskip("torch")

OPS = {
    "mul_": lambda y, v: y.mul_(v), "div_": lambda y, v: y.div_(v), "pow_": lambda y, v: y.pow_(v),
    "addcmul_": lambda y, v: y.addcmul_(v, v), "addcdiv_": lambda y, v: y.addcdiv_(v, v),
    "sin_": lambda y, v: y.sin_(), "exp_": lambda y, v: y.exp_(), "tanh_": lambda y, v: y.tanh_(),
    "sigmoid_": lambda y, v: y.sigmoid_(), "sqrt_": lambda y, v: y.sqrt_(), "log_": lambda y, v: y.log_(),
    "reciprocal_": lambda y, v: y.reciprocal_(), "mul_ scalar": lambda y, v: y.mul_(3.0),
    "lerp_": lambda y, v: y.lerp_(v, 0.3), "clamp_": lambda y, v: y.clamp_(0.6, 1.2),
    "copy_": lambda y, v: y.copy_(v), "atan2_": lambda y, v: y.atan2_(v), "hypot_": lambda y, v: y.hypot_(v),
}


def _grads(lib, op: str, hooks: bool, view: bool) -> list:
    x = lib.tensor(np.linspace(0.5, 1.5, 6).reshape(2, 3), requires_grad=True)
    v = lib.tensor(np.linspace(0.7, 2, 6).reshape(2, 3), requires_grad=True)
    ctx = lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t) if hooks else contextlib.nullcontext()
    with ctx:
        y = x * 1
        if view:
            OPS[op](y[0], v[1])
        else:
            OPS[op](y, v)
        (y * y).sum().backward()
    return [None if g is None else g.numpy() for g in (x.grad, v.grad)]


@pytest.mark.parametrize("hooks", [False, True], ids=["plain", "hooks"])
@pytest.mark.parametrize("view", [False, True], ids=["direct", "view"])
@pytest.mark.parametrize("op", list(OPS))
def test_inplace_gradients_match_pytorch(op, view, hooks):
    got, want = _grads(ftorch, op, hooks, view), _grads(torch, op, hooks, view)
    for name, g, w in zip(("x.grad", "v.grad"), got, want):
        assert (g is None) == (w is None), f"{name}: {g} where PyTorch has {w}"
        if g is not None:
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14, err_msg=name)
