"""In-place ops that overwrite every entry of self, against PyTorch: their node (name and
edges) and the gradients that reach the leaves. Each keeps its edge to self's old history and
sends it zeros, so a leaf below gets a zero gradient rather than None (copy_'s CopyBackwards,
fill_, zero_, the random fills' <Dist>Backward, a comparison written in place); through a view
the base's CopySlices lists the same further inputs as the op's own node. Under no_grad they
record nothing, also when the source has history."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad.torch as ftorch

from ..graphs import graph_of

torch = pytest.importorskip("torch")

OPS = {
    "copy_": lambda lib, y, v: y.copy_(v),
    "copy_ broadcast": lambda lib, y, v: y.copy_(v[..., :1]),
    "copy_ float64 source": lambda lib, y, v: y.copy_(v.double()),
    "copy_ constant": lambda lib, y, v: y.copy_(lib.ones(tuple(y.shape))),
    "fill_": lambda lib, y, v: y.fill_(2.0),
    "fill_ tensor": lambda lib, y, v: y.fill_(v.reshape(-1)[0]),
    "zero_": lambda lib, y, v: y.zero_(),
    "uniform_": lambda lib, y, v: y.uniform_(),
    "normal_": lambda lib, y, v: y.normal_(),
    "bernoulli_": lambda lib, y, v: y.bernoulli_(0.3),
    "bernoulli_ tensor": lambda lib, y, v: y.bernoulli_(v.detach() / 3),
    "random_": lambda lib, y, v: y.random_(),
    "random_ to": lambda lib, y, v: y.random_(5),
    "random_ from to": lambda lib, y, v: y.random_(1, 5),
    "exponential_": lambda lib, y, v: y.exponential_(),
    "geometric_": lambda lib, y, v: y.geometric_(0.3),
    "cauchy_": lambda lib, y, v: y.cauchy_(),
    "log_normal_": lambda lib, y, v: y.log_normal_(),
    "eq_ tensor": lambda lib, y, v: y.eq_(v),
    "lt_ number": lambda lib, y, v: y.lt_(1.0),
    "ge_ constant tensor": lambda lib, y, v: y.ge_(v.detach()),
}


def _run(lib, op: str, view: bool, x_grad: bool = True) -> tuple:
    x = lib.tensor(np.linspace(0.5, 1.5, 6).reshape(2, 3), requires_grad=x_grad)
    v = lib.tensor(np.linspace(0.7, 2, 6).reshape(2, 3), requires_grad=True)
    y = x * 1
    # (through a view: y's first row, written from v's second)
    OPS[op](lib, y[0] if view else y, v[1] if view else v)
    graph = graph_of(y, 2)
    if y.requires_grad:
        (y * y).sum().backward()
    return graph, [None if g is None else g.numpy() for g in (x.grad, v.grad)]


@pytest.mark.parametrize("view", [False, True], ids=["direct", "view"])
@pytest.mark.parametrize("op", list(OPS))
def test_overwrite_keeps_self_edge_as_pytorch(op, view):
    (g_got, got), (g_want, want) = _run(ftorch, op, view), _run(torch, op, view)
    assert g_got == g_want
    for name, g, w in zip(("x.grad", "v.grad"), got, want):
        assert (g is None) == (w is None), f"{name}: {g} where PyTorch has {w}"
        if g is not None:
            np.testing.assert_allclose(g, w, rtol=1e-12, err_msg=name)


@pytest.mark.parametrize("op", ["copy_", "copy_ broadcast", "eq_ tensor", "fill_ tensor"])
def test_self_without_history_gets_an_empty_first_entry(op):
    (g_got, got), (g_want, want) = _run(ftorch, op, False, x_grad=False), _run(torch, op, False, x_grad=False)
    assert g_got == g_want
    assert got[0] is None and want[0] is None
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12)


def test_copy_under_no_grad_records_nothing():
    for lib in (ftorch, torch):
        h = lib.tensor([1.0, 2.0], requires_grad=True) * 2
        y = lib.zeros(2)
        with lib.no_grad():
            y.copy_(h)
        assert y.grad_fn is None and not y.requires_grad, lib.__name__
        np.testing.assert_array_equal(y.numpy(), [2.0, 4.0])


@pytest.mark.parametrize("op", ["copy_", "fill_", "fill_ tensor", "uniform_", "eq_ tensor", "lt_ number",
                                "bernoulli_ tensor"])
def test_bfloat16_self_keeps_its_dtype_and_gradients(op):
    """Over a bfloat16 tensor with history the node rounds to bfloat16 (a float32 operand is
    converted first, so its entry is a ToCopyBackward0 where PyTorch's is the operand's own)."""
    out = []
    for lib in (ftorch, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        v = lib.tensor([1.5, 2.5], requires_grad=True)
        y = (x * 1).bfloat16()
        OPS[op](lib, y, v)
        (y.float() * 3).sum().backward()
        out.append((str(y.dtype), type(y.grad_fn).__name__, x.grad.numpy(), None if v.grad is None else v.grad.numpy()))
    (dt, name, gx, gv), (dt_t, name_t, gx_t, gv_t) = out
    assert (dt, name) == (dt_t, name_t)
    np.testing.assert_array_equal(gx, gx_t)
    assert (gv is None) == (gv_t is None)
    if gv is not None:
        np.testing.assert_array_equal(gv, gv_t)
