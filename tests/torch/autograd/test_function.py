"""autograd.Function extras on fgrad.torch (fgrad/torch/_tensor/function.py) against real
PyTorch: the setup_context style, once_differentiable under create_graph, the
torch.autograd.function module path, the vmap hook's default and small torch.autograd names."""
from __future__ import annotations

import importlib

import numpy as np
import pytest

import fgrad.torch as ftorch

torch = pytest.importorskip("torch")

X = np.array([0.5, -1.0, 2.0])


def _scaled(L):
    class Scaled(L.autograd.Function):
        @staticmethod
        def forward(x, k):
            return x.exp() * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.k = inputs[1]
            ctx.save_for_backward(output)

        @staticmethod
        def backward(ctx, g):
            (out,) = ctx.saved_tensors
            return g * out, None
    return Scaled


def test_setup_context_style():
    res = {}
    for L in (torch, ftorch):
        x = L.tensor(X, requires_grad=True)
        y = _scaled(L).apply(x, 3.0)
        (y ** 2).sum().backward()
        res[L] = (y.detach().numpy(), x.grad.numpy())
    for a, b in zip(res[ftorch], res[torch]):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    # fgrad batches such a Function under vmap without a vmap staticmethod
    out = ftorch.func.vmap(lambda r: _scaled(ftorch).apply(r, 2.0))(ftorch.tensor(np.stack([X, 2 * X])))
    np.testing.assert_allclose(out.numpy(), 2 * np.exp(np.stack([X, 2 * X])), rtol=1e-12)


def _once(L):
    function = importlib.import_module(L.__name__ + ".autograd.function")

    class Square(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 2

        @staticmethod
        @function.once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            assert not L.is_grad_enabled()
            return 2 * x * g
    return Square


def test_once_differentiable_results_are_constants_of_a_recorded_backward():
    res = {}
    for L in (torch, ftorch):
        x = L.tensor(X, requires_grad=True)
        (g,) = L.autograd.grad(_once(L).apply(x).sum(), x, create_graph=True)
        assert not g.requires_grad
        with pytest.raises(RuntimeError, match="does not require grad"):
            g.sum().backward()
        y = _once(L).apply(x)
        y.sum().backward()
        res[L] = (g.numpy(), x.grad.numpy())
    for a, b in zip(res[ftorch], res[torch]):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_module_paths_and_names():
    for L in (torch, ftorch):
        function = importlib.import_module(L.__name__ + ".autograd.function")
        assert function.Function is L.autograd.Function
        assert function.FunctionCtx is L.autograd.function.FunctionCtx
        assert L.autograd.Function.generate_vmap_rule is False
        with pytest.raises(NotImplementedError, match="vmap"):
            L.autograd.Function.vmap(None, (0,), L.ones(2))
        assert isinstance(L.autograd.kineto_available(), bool)
        x = L.tensor(X, requires_grad=True)
        assert isinstance(x.exp().grad_fn._raw_saved_result, L.autograd.SavedTensor)
    assert ftorch.autograd.kineto_available() is False


def test_multithreading_and_view_replay_settings():
    for L in (torch, ftorch):
        ag = L.autograd
        assert ag.is_multithreading_enabled() and not ag.is_view_replay_enabled()
        with ag.set_multithreading_enabled(False):
            assert not ag.is_multithreading_enabled()
        assert ag.is_multithreading_enabled()
        ag.set_multithreading_enabled(False)  # (a call sets it at once)
        assert not ag.is_multithreading_enabled()
        ag.set_multithreading_enabled(True)
        assert ag.is_multithreading_enabled()


def _mul_two_(L):
    class MulTwo_(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2
    return MulTwo_


def test_mark_dirty_returns_the_input_modified_in_place():
    res = {}
    for L in (torch, ftorch):
        a = L.tensor(X, requires_grad=True)
        b = a.clone()
        out = _mul_two_(L).apply(b)
        assert out is b and b.grad_fn is not None and b._version == 2
        (out * out).sum().backward()
        c = L.tensor(X)
        assert _mul_two_(L).apply(c) is c
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            _mul_two_(L).apply(L.tensor(X, requires_grad=True))
        res[L] = (b.detach().numpy(), a.grad.numpy(), c.numpy())
    for u, v in zip(res[ftorch], res[torch]):
        np.testing.assert_allclose(u, v, rtol=1e-12)


def test_save_for_forward_is_what_jvp_reads():
    # (closed form: PyTorch's forward AD gives the same, see the slow comparisons in
    # test_forward_ad; its first forward-AD op costs seconds)
    class Exp(ftorch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_forward(y)
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y

        @staticmethod
        def jvp(ctx, t):
            (y,) = ctx.saved_tensors
            return t * y * 2
    fw = ftorch.autograd.forward_ad
    with fw.dual_level():
        tangent = fw.unpack_dual(Exp.apply(fw.make_dual(ftorch.tensor(X), ftorch.ones(3, dtype=ftorch.float64))))[1]
    np.testing.assert_allclose(tangent.numpy(), 2 * np.exp(X), rtol=1e-12)
    x = ftorch.tensor(X, requires_grad=True)
    Exp.apply(x).sum().backward()  # (backward still reads save_for_backward's tensors)
    np.testing.assert_allclose(x.grad.numpy(), np.exp(X), rtol=1e-12)
    with pytest.raises(TypeError, match="save_for_forward"):
        ftorch.autograd.function.FunctionCtx().save_for_forward(1.0)
