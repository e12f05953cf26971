"""The boundary's `saves` declaration: only the operands an op's backward reads are checked
against later in-place writes (PyTorch's SavedVariable), so linear ops such as CopySlices
survive writes into their operands, also when the backward pass is recorded."""
import numpy as np
import pytest

import fgrad.torch as ftorch
from fgrad.torch._tensor._boundary import call

torch = pytest.importorskip("torch")


def _square_plus(a, c):
    return a * a + c  # (its gradient reads a, never c)


@pytest.mark.parametrize("create_graph", [False, True])
def test_only_declared_operands_are_version_checked(create_graph):
    """A write into an operand the backward does not read is harmless once declared (also
    when the backward is recorded, which reruns the op on its saved inputs); a write into
    one it reads raises PyTorch's error."""
    x = ftorch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    for write_into, ok in (("c", True), ("a", False)):
        a, c = x * 1, x * 2
        y = call("AddBackward0", _square_plus, (a, c), saves=(0,))
        (a if write_into == "a" else c).add_(1.0)
        if ok:
            (g,) = ftorch.autograd.grad(y.sum(), x, create_graph=create_graph)
            np.testing.assert_allclose(g.detach().numpy(), 2 * x.detach().numpy() + 2)
        else:
            with pytest.raises(RuntimeError, match="modified by an inplace operation"):
                ftorch.autograd.grad(y.sum(), x, create_graph=create_graph)


def _copies_into_own_slices(lib, x):
    # each copy reads a slice of the tensor that the next copy writes into
    y = x * x
    y[:, :1].copy_(y[:, 2:3])
    y[:, 3:].copy_(y[:, :1])
    y.narrow(1, 1, 1).copy_(y.narrow(1, 3, 1))
    return y


def test_create_graph_through_copies_into_slices_of_one_base():
    """Second derivatives through CopySlices nodes whose sources are later overwritten, as
    PyTorch gives them (the first backward records its own graph)."""
    v = np.random.default_rng(0).standard_normal((2, 4))
    out = []
    for lib in (ftorch, torch):
        x = lib.tensor(v, requires_grad=True)
        y = _copies_into_own_slices(lib, x)
        (g,) = lib.autograd.grad((y * y).sum(), x, create_graph=True)
        (h,) = lib.autograd.grad((g * g).sum(), x)
        out.append((y.detach().numpy(), g.detach().numpy(), h.numpy(), y.grad_fn.name()))
    for got, want in zip(*out):
        if isinstance(want, str):
            assert got == want
        else:
            np.testing.assert_allclose(got, want, rtol=1e-12)


def test_undeclared_op_keeps_checking_every_operand():
    """By default (saves=None) every operand is checked: a recorded backward, which reruns
    the op on its inputs, refuses one written since, even one the gradient does not read."""
    x = ftorch.tensor([1.0, 2.0], requires_grad=True)
    a, c = x * 1, x * 2
    y = call("AddBackward0", _square_plus, (a, c))
    c.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        ftorch.autograd.grad(y.sum(), x, create_graph=True)


def test_saved_tensors_hooks_pack_nothing_for_copy_slices():
    """An op that declares no saved operands packs none under saved_tensors_hooks, and its
    grad_fn has no _saved_ attributes: PyTorch's CopySlices."""
    got = {}
    for lib in (ftorch, torch):
        x = lib.ones(3, 4, requires_grad=True) * 2  # (made outside the hooks: only the copies pack)
        z = lib.ones(1, 4, requires_grad=True) * 3
        packed = []
        with lib.autograd.graph.saved_tensors_hooks(lambda t: packed.append(tuple(t.shape)) or t, lambda t: t):
            x[0:1].copy_(z)
            x[2:3].copy_(x[0:1])
        saved = [a for a in dir(x.grad_fn) if a.startswith("_saved")]
        x.sum().backward()
        got[lib.__name__] = (packed, x.grad_fn.name(), saved)
    assert got["fgrad.torch"] == got["torch"]
