"""The line between fgrad's functional door and the PyTorch facade's (issue 24): fgrad's
transforms, custom rules and lax control flow compute on arrays and refuse Tensors with a
TypeError that names the facade's door; the facade's doors (torch.func, torch.compile,
autograd.Function, torch.utils.checkpoint) unbox Tensors, run fgrad's machinery on values,
and give Tensors back."""
import numpy as onp
import pytest

import fgrad
import fgrad.numpy as np
import fgrad.torch as torch
from fgrad.torch import func

X = onp.array([0.3, 0.7, 1.1])

# entry point -> (a call of it on a Tensor, the door its message names)
REFUSED = {
    "fgrad.grad": (lambda t: fgrad.grad(lambda x: x.sum())(t), "fgrad.torch.func.grad"),
    "fgrad.vjp": (lambda t: fgrad.vjp(lambda x: x, t), "fgrad.torch.func.vjp"),
    "fgrad.jvp": (lambda t: fgrad.jvp(lambda x: x, (t,), (t,)), "fgrad.torch.func.jvp"),
    "fgrad.vmap": (lambda t: fgrad.vmap(lambda x: x)(t), "fgrad.torch.func.vmap"),
    "fgrad.jacrev": (lambda t: fgrad.jacrev(lambda x: x)(t), "fgrad.torch.func.jacrev"),
    "fgrad.jacfwd": (lambda t: fgrad.jacfwd(lambda x: x)(t), "fgrad.torch.func.jacfwd"),
    "fgrad.hessian": (lambda t: fgrad.hessian(lambda x: x.sum())(t), "fgrad.torch.func.hessian"),
    "fgrad.jit": (lambda t: fgrad.jit(lambda x: x)(t), "fgrad.torch.compile"),
    "fgrad.make_jaxpr": (lambda t: fgrad.make_jaxpr(lambda x: x)(t), None),
    "fgrad.linearize": (lambda t: fgrad.linearize(lambda x: x, t), None),
    "fgrad.stop_gradient": (lambda t: fgrad.stop_gradient(t), "Tensor.detach()"),
    "fgrad.custom_vjp": (lambda t: _sin_vjp()(t), "fgrad.torch.autograd.Function"),
    "fgrad.checkpoint": (lambda t: fgrad.checkpoint(np.sin)(t), "fgrad.torch.utils.checkpoint.checkpoint"),
    "fgrad.lax.scan": (lambda t: fgrad.lax.scan(lambda c, x: (c, x), 0.0, t), None),
    "fgrad.lax.cond": (lambda t: fgrad.lax.cond(True, lambda v: v, lambda v: v, t), None),
}


def _sin_vjp():
    @fgrad.custom_vjp
    def f(x):
        return np.sin(x)
    f.defvjp(lambda x: (np.sin(x), np.cos(x)), lambda c, g: (g * c,))
    return f


@pytest.mark.parametrize("entry", list(REFUSED))
def test_functional_entry_points_refuse_tensors_naming_the_fix(entry):
    run, door = REFUSED[entry]
    with pytest.raises(TypeError) as info:
        run(torch.tensor(X, requires_grad=True))
    msg = str(info.value)
    assert msg.startswith(f"{entry} got a fgrad.torch.Tensor: "), msg
    assert "t.detach().numpy()" in msg and (door is None or f"use {door}" in msg), msg
    assert fgrad.grad(lambda x: np.sum(x * x))(X).tolist() == (2 * X).tolist()  # fgrad keeps working


def test_torch_func_transforms_take_and_give_tensors():
    x = torch.tensor(X, dtype=torch.float64)
    g = func.grad(lambda t: (t.sin() * t).sum())(x)
    assert isinstance(g, torch.Tensor) and onp.allclose(g.numpy(), onp.cos(X) * X + onp.sin(X))
    out, pull = func.vjp(lambda t: t.exp(), x)
    assert isinstance(out, torch.Tensor) and onp.allclose(pull(torch.ones(3, dtype=torch.float64))[0].numpy(),
                                                          onp.exp(X))
    y, dy = func.jvp(lambda t: t.exp(), (x,), (torch.ones(3, dtype=torch.float64),))
    assert isinstance(dy, torch.Tensor) and onp.allclose(dy.numpy(), onp.exp(X))
    y, f_jvp = func.linearize(lambda t: t.exp(), x)
    assert onp.allclose(f_jvp(torch.ones(3, dtype=torch.float64)).numpy(), onp.exp(X))
    assert onp.allclose(func.jacrev(lambda t: t * t)(x).numpy(), onp.diag(2 * X))
    assert onp.allclose(func.hessian(lambda t: (t ** 3).sum())(x).numpy(), onp.diag(6 * X))
    assert onp.allclose(func.vmap(lambda t: t.sum())(torch.ones(4, 3)).numpy(), [3.0] * 4)
    # nested: the inner transform's Tensors hold the outer one's tracers
    gg = func.grad(lambda t: func.grad(lambda u: (u ** 3).sum())(t).sum())(x)
    assert onp.allclose(gg.numpy(), 6 * X)
    # aux keeps its Tensors
    g, aux = func.grad(lambda t: ((t * t).sum(), t.detach() * 2), has_aux=True)(x)
    assert isinstance(aux, torch.Tensor) and onp.allclose(aux.numpy(), 2 * X)


def test_compile_keys_its_trace_on_tensor_arguments():
    calls = []

    def f(t):
        calls.append(type(t).__name__)
        return t * 2.0
    c = torch.compile(f)
    for _ in range(3):
        out = c(torch.tensor(X))
        assert isinstance(out, torch.Tensor) and onp.allclose(out.numpy(), 2 * X)
    assert calls == ["Tensor"]  # traced once (the function saw a Tensor), then replayed


class _Scaled(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x * w

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return 3.0 * g * w, g * x


def test_function_is_one_node_named_after_it_over_its_tensor_arguments():
    x = torch.tensor(X, requires_grad=True)
    w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = _Scaled.apply(x, w)
    assert y.grad_fn.name() == "_ScaledBackward"
    assert [type(n).__name__ for n, _ in y.grad_fn.next_functions] == ["AccumulateGrad", "AccumulateGrad"]
    y.sum().backward()
    assert onp.allclose(x.grad.numpy(), 3.0 * onp.array([1.0, 2.0, 3.0]))
    assert onp.allclose(w.grad.numpy(), X.astype(onp.float32))
    # second order through create_graph: backward itself is differentiated (the boundary
    # re-records the op, forward and backward, on traced values)
    x, w = torch.tensor(X, requires_grad=True), torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    gx, gw = torch.autograd.grad(_Scaled.apply(x, w).sum(), (x, w), create_graph=True)
    assert gx.requires_grad and gw.requires_grad
    (gx * gw).sum().backward()  # = sum(3 w x): d/dx = 3 w, d/dw = 3 x
    assert onp.allclose(x.grad.numpy(), [3.0, 6.0, 9.0]) and onp.allclose(w.grad.numpy(), 3 * X)


def test_checkpoint_takes_tensors_and_recomputes():
    from fgrad.torch.utils.checkpoint import checkpoint
    x = torch.tensor(X, requires_grad=True)
    y = checkpoint(lambda t: (t.sin() * t).sum(), x, use_reentrant=True)
    y.backward()
    assert onp.allclose(x.grad.numpy(), (onp.cos(X) * X + onp.sin(X)).astype(onp.float32), rtol=1e-6)


class _TwoOutputs(torch.autograd.Function):
    calls = 0

    @staticmethod
    def forward(ctx, x):
        return x * 2.0, (x > 0).sum()

    @staticmethod
    def backward(ctx, g, gcount):
        _TwoOutputs.calls += 1
        return g * 2.0


def test_function_with_several_outputs_runs_backward_once():
    # the outputs are packed into the op's one output and sliced apart again, so backward
    # receives every output's gradient in one call, as in PyTorch
    x = torch.tensor(X, requires_grad=True)
    y, count = _TwoOutputs.apply(x)
    assert count.item() == 3 and not count.requires_grad and y.grad_fn.name() == "_TwoOutputsBackward"
    _TwoOutputs.calls = 0
    (y.sum() + y[0]).backward()
    assert _TwoOutputs.calls == 1
    assert onp.allclose(x.grad.numpy(), [4.0, 2.0, 2.0])
