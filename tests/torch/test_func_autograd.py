"""torch.func's transforms join the autograd graph (fgrad/torch/_tensor/_func.py): a
transform's results, for arguments that require grad, have a grad_fn, so `backward()` after a
vmapped function or a torch.func.grad reaches those arguments, as in PyTorch; a Tensor that
requires grad and is only closed over is refused rather than left without its gradient."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad.torch as ftorch

torch = pytest.importorskip("torch")

X = np.arange(6.0).reshape(2, 3) / 5
W = np.array([0.5, -1.0, 2.0])

CASES = {
    "vmap": lambda L, x, w: L.func.vmap(lambda r, w: (r * w).sin().sum(), in_dims=(0, None))(x, w).sum(),
    "grad": lambda L, x, w: L.func.grad(lambda r, w: ((r * w) ** 3).sum())(x, w).tanh().sum(),
    "grad_argnums": lambda L, x, w: sum(g.sum() for g in L.func.grad(lambda r, w: (r.exp() * w).sum(),
                                                                     argnums=(0, 1))(x, w)),
    "jacrev": lambda L, x, w: L.func.jacrev(lambda w, x: (x * w).sin().sum(0))(w, x).square().sum(),
    "hessian": lambda L, x, w: L.func.hessian(lambda w: (w ** 4).sum())(w).sum(),
    "vjp": lambda L, x, w: L.func.vjp(lambda r: (r * r).sin(), x)[1](w.expand(2, 3))[0].sum()
                            + L.func.vjp(lambda r: (r * r).sin(), x)[0].sum(),
    "jvp": lambda L, x, w: sum(o.sum() for o in L.func.jvp(lambda r: (r * r).sin(), (x,), (w.expand(2, 3),))),
    "vmap_of_grad": lambda L, x, w: L.func.vmap(L.func.grad(lambda r, w: (r * w).cos().sum()),
                                                in_dims=(0, None))(x, w).square().sum(),
}


@pytest.mark.parametrize("name", CASES)
def test_results_backpropagate_to_the_arguments_as_in_torch(name):
    grads = {}
    for L in (torch, ftorch):
        x = L.tensor(X, requires_grad=True)
        w = L.tensor(W, requires_grad=True)
        out = CASES[name](L, x, w)
        assert out.requires_grad
        (gx, gw) = L.autograd.grad(out, (x, w), allow_unused=True, create_graph=True)
        grads[L] = [None if g is None else g.detach().numpy() for g in (gx, gw)]
    for ours, theirs in zip(grads[ftorch], grads[torch]):
        assert (ours is None) == (theirs is None)
        if ours is not None:
            np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14)


def test_second_order_through_a_transform_result():
    vals = {}
    for L in (torch, ftorch):
        w = L.tensor(W, requires_grad=True)
        g = L.func.grad(lambda w: (w.sin() * w).sum())(w)
        (h,) = L.autograd.grad(g.sum(), w, create_graph=True)
        (t,) = L.autograd.grad(h.sum(), w)
        vals[L] = (h.detach().numpy(), t.numpy())
    for ours, theirs in zip(vals[ftorch], vals[torch]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14)


def test_a_closed_over_tensor_that_requires_grad_is_refused_with_the_fix():
    x = ftorch.tensor(X, requires_grad=True)
    w = ftorch.tensor(W, requires_grad=True)
    with pytest.raises(RuntimeError, match="closed over.*Pass it as an argument"):
        ftorch.func.vmap(lambda r: (r * w).sum())(x)
    out = ftorch.func.vmap(lambda r: (r * w.detach()).sum())(x)  # no gradient wanted: fine
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.broadcast_to(W, X.shape))
    # the library keeps working afterwards
    assert ftorch.func.vmap(lambda r, w: (r * w).sum(), in_dims=(0, None))(x, w).requires_grad


def test_arguments_without_grad_give_plain_results():
    x = ftorch.tensor(X)
    out = ftorch.func.vmap(lambda r: r.sin().sum())(x)
    assert not out.requires_grad and out.grad_fn is None
    with ftorch.no_grad():
        out = ftorch.func.grad(lambda r: r.sin().sum())(ftorch.tensor(X, requires_grad=True))
    assert not out.requires_grad


def test_compiled_function_results_backpropagate():
    # torch.compile of a function (fgrad.jit on the values) records one node per call
    f = ftorch.compile(lambda a, b: (a * b).sin().sum())
    a = ftorch.tensor(W, requires_grad=True)
    b = ftorch.tensor(X[0])
    y = f(a, b)
    (g,) = ftorch.autograd.grad(y, a, create_graph=True)
    (h,) = ftorch.autograd.grad(g.sum(), a)
    np.testing.assert_allclose(g.detach().numpy(), np.cos(W * X[0]) * X[0], rtol=1e-14)
    np.testing.assert_allclose(h.numpy(), -np.sin(W * X[0]) * X[0] ** 2, rtol=1e-14)
    assert f(a.detach(), b).grad_fn is None
