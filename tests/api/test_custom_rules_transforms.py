"""Every custom rule kind under every transform: the derivative is the rule's, or a clear
error is raised -- never the plain function's derivative in one mode and the rule's in another.

Each rule differs recognisably from its function's own derivative (a scaled or clipped
gradient). As in JAX, a custom_vjp function has no forward rule: forward mode applied to it
directly (jvp, linearize, jacfwd, forward over forward) raises a TypeError, while forward mode
over a reverse pass (hessian = jacfwd(jacrev), jvp(grad)) differentiates the VJP rule. An
autograd.Function has forward mode exactly when it defines a `jvp` staticmethod (PyTorch's
forward-mode AD contract), else NotImplementedError. custom_jvp serves both modes from its one
rule, and checkpoint is its function in every mode (a rule inside it is still used).

Adding a rule kind is one entry of KINDS, a transform one entry of TRANSFORMS."""
from __future__ import annotations

import types
from functools import partial
from typing import Callable, NamedTuple

import numpy as onp
import pytest

import fgrad
import fgrad.numpy as np

SCALE = 3.0


class Kind(NamedTuple):
    make: Callable[[], Callable]   # a fresh f: scalar -> scalar
    value: Callable                # f(x)
    d1: Callable                   # the rule's first derivative
    d2: Callable                   # its second derivative (through the rule)
    forward: bool                  # has a forward-mode rule
    boxed: bool = False            # takes Tensors (autograd.Function)


def _custom_vjp_scaled():
    @fgrad.custom_vjp
    def f(x):
        return np.sin(x)
    f.defvjp(lambda x: (np.sin(x), x), lambda x, ct: (SCALE * np.cos(x) * ct,))
    return f


def _clip_gradient():
    # JAX's documentation example
    @partial(fgrad.custom_vjp, nondiff_argnums=(0, 1))
    def clip_gradient(lo, hi, x):
        return x
    clip_gradient.defvjp(lambda lo, hi, x: (x, None), lambda lo, hi, _, g: (np.clip(g, lo, hi),))
    return lambda x: clip_gradient(-0.75, 0.75, x ** 2)


def _custom_jvp_scaled():
    @fgrad.custom_jvp
    def f(x):
        return np.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return f(x), SCALE * np.cos(x) * t
    return f


class _FunctionScaled(fgrad.torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.sin()

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return SCALE * x.cos() * g


class _FunctionScaledJvp(_FunctionScaled):
    @staticmethod
    def jvp(ctx, t):
        (x,) = ctx.saved_tensors
        return SCALE * x.cos() * t


KINDS = {
    "custom_vjp": Kind(_custom_vjp_scaled, onp.sin, lambda x: SCALE * onp.cos(x),
                       lambda x: -SCALE * onp.sin(x), forward=False),
    "custom_vjp(clip_gradient)": Kind(_clip_gradient, lambda x: x ** 2, lambda x: 1.5 * x,
                                      lambda x: 1.5 + 0 * x, forward=False),
    "custom_jvp": Kind(_custom_jvp_scaled, onp.sin, lambda x: SCALE * onp.cos(x),
                       lambda x: -SCALE * onp.sin(x), forward=True),
    "autograd.Function": Kind(lambda: _FunctionScaled.apply, onp.sin, lambda x: SCALE * onp.cos(x),
                              lambda x: -SCALE * onp.sin(x), forward=False, boxed=True),
    "autograd.Function(jvp)": Kind(lambda: _FunctionScaledJvp.apply, onp.sin, lambda x: SCALE * onp.cos(x),
                                   lambda x: -SCALE * onp.sin(x), forward=True, boxed=True),
    "checkpoint": Kind(lambda: fgrad.checkpoint(np.sin), onp.sin, onp.cos, lambda x: -onp.sin(x), forward=True),
    "checkpoint(custom_jvp)": Kind(lambda: fgrad.checkpoint(_custom_jvp_scaled()), onp.sin,
                                   lambda x: SCALE * onp.cos(x), lambda x: -SCALE * onp.sin(x), forward=True),
    "checkpoint(custom_vjp)": Kind(lambda: fgrad.checkpoint(_custom_vjp_scaled()), onp.sin,
                                   lambda x: SCALE * onp.cos(x), lambda x: -SCALE * onp.sin(x), forward=False),
}


class Transform(NamedTuple):
    run: Callable       # run(F, f, x, ones) -> result; x a scalar, or a vector where `batched`
    order: int          # 0: f's value, 1: first derivative, 2: second
    inner: str | None   # the innermost differentiation: "fwd", "rev" (None for order 0)
    batched: bool = False


# The transforms F: fgrad's for the functional kinds; for autograd.Function, which takes
# Tensors, the facade's doors (torch.func's, torch.compile's engine for jit), which run fgrad's
# transforms on the Tensors' values (fgrad's own refuse Tensors).
_FGRAD = types.SimpleNamespace(
    grad=fgrad.grad, vjp=fgrad.vjp, jvp=fgrad.jvp, linearize=fgrad.linearize, jacfwd=fgrad.jacfwd,
    jacrev=fgrad.jacrev, hessian=fgrad.hessian, jit=fgrad.jit, vmap=fgrad.vmap, sum=np.sum)
_TORCH = types.SimpleNamespace(
    grad=fgrad.torch.func.grad, vjp=fgrad.torch.func.vjp, jvp=fgrad.torch.func.jvp,
    linearize=fgrad.torch.func.linearize, jacfwd=fgrad.torch.func.jacfwd,
    jacrev=fgrad.torch.func.jacrev, hessian=fgrad.torch.func.hessian,
    jit=fgrad.torch.func.compile_function, vmap=fgrad.torch.func.vmap, sum=lambda t: t.sum())


def _sum(F, f):
    return lambda v: F.sum(f(v))


def _g(F, f):
    return F.grad(f)


def _jvp1(F, f):
    return lambda x: F.jvp(f, (x,), (x * 0.0 + 1.0,))[1]


TRANSFORMS = {
    "jit": Transform(lambda F, f, x, o: F.jit(f)(x), 0, None),
    "vmap": Transform(lambda F, f, x, o: F.vmap(f)(x), 0, None, batched=True),
    "grad": Transform(lambda F, f, x, o: F.grad(f)(x), 1, "rev"),
    "vjp": Transform(lambda F, f, x, o: F.vjp(f, x)[1](o)[0], 1, "rev"),
    "jvp": Transform(lambda F, f, x, o: F.jvp(f, (x,), (o,))[1], 1, "fwd"),
    "linearize": Transform(lambda F, f, x, o: F.linearize(f, x)[1](o), 1, "fwd"),
    "jacfwd": Transform(lambda F, f, x, o: F.jacfwd(f)(x), 1, "fwd"),
    "jacrev": Transform(lambda F, f, x, o: F.jacrev(f)(x), 1, "rev"),
    "jit(grad)": Transform(lambda F, f, x, o: F.jit(_g(F, f))(x), 1, "rev"),
    "grad(jit)": Transform(lambda F, f, x, o: _g(F, F.jit(f))(x), 1, "rev"),
    "jit(jvp)": Transform(lambda F, f, x, o: F.jit(_jvp1(F, f))(x), 1, "fwd"),
    "jvp(jit)": Transform(lambda F, f, x, o: F.jvp(F.jit(f), (x,), (o,))[1], 1, "fwd"),
    "vmap(grad)": Transform(lambda F, f, x, o: F.vmap(_g(F, f))(x), 1, "rev", batched=True),
    "grad(vmap)": Transform(lambda F, f, x, o: _g(F, _sum(F, F.vmap(f)))(x), 1, "rev", batched=True),
    "vmap(jvp)": Transform(lambda F, f, x, o: F.vmap(_jvp1(F, f))(x), 1, "fwd", batched=True),
    "jvp(vmap)": Transform(lambda F, f, x, o: F.jvp(F.vmap(f), (x,), (o,))[1], 1, "fwd", batched=True),
    "grad(grad)": Transform(lambda F, f, x, o: _g(F, _g(F, f))(x), 2, "rev"),
    "hessian": Transform(lambda F, f, x, o: F.hessian(f)(x), 2, "rev"),
    "jvp(grad)": Transform(lambda F, f, x, o: F.jvp(_g(F, f), (x,), (o,))[1], 2, "rev"),
    "grad(jvp)": Transform(lambda F, f, x, o: _g(F, _jvp1(F, f))(x), 2, "fwd"),
    "jacfwd(jacfwd)": Transform(lambda F, f, x, o: F.jacfwd(F.jacfwd(f))(x), 2, "fwd"),
    "jacrev(jacrev)": Transform(lambda F, f, x, o: F.jacrev(F.jacrev(f))(x), 2, "rev"),
    "jit(hessian)": Transform(lambda F, f, x, o: F.jit(F.hessian(f))(x), 2, "rev"),
    "vmap(hessian)": Transform(lambda F, f, x, o: F.vmap(F.hessian(f))(x), 2, "rev", batched=True),
}


def _val(x):
    return onp.asarray(x.detach().numpy() if isinstance(x, fgrad.torch.Tensor) else x)


@pytest.mark.parametrize("transform", list(TRANSFORMS))
@pytest.mark.parametrize("kind", list(KINDS))
def test_rule_or_error(kind, transform):
    k, t = KINDS[kind], TRANSFORMS[transform]
    x0 = onp.array([0.3, 0.7, 2.0]) if t.batched else onp.float64(0.7)
    box = fgrad.torch.tensor if k.boxed else (lambda v: v)
    x, ones = box(x0), box(onp.ones_like(x0))
    F = _TORCH if k.boxed else _FGRAD
    f = k.make()
    if t.inner == "fwd" and not k.forward:
        # JAX's TypeError for custom_vjp; PyTorch's NotImplementedError for a Function without jvp
        expected = NotImplementedError if k.boxed else TypeError
        with pytest.raises(expected, match="forward") as info:
            t.run(F, f, x, ones)
        assert ("Function" if k.boxed else "custom_vjp") in str(info.value)
        return
    want = (k.value, k.d1, k.d2)[t.order](x0)
    onp.testing.assert_allclose(_val(t.run(F, f, x, ones)), want, rtol=1e-12, atol=1e-14,
                                err_msg=f"{transform} of {kind}")


def test_forward_mode_error_names_function_and_fix():
    @fgrad.custom_vjp
    def my_clipped(x):
        return x
    my_clipped.defvjp(lambda x: (x, None), lambda _, g: (np.clip(g, -1.0, 1.0),))
    with pytest.raises(TypeError) as info:
        fgrad.jacfwd(my_clipped)(2.0)
    msg = str(info.value)
    assert "my_clipped" in msg and "jacrev" in msg and "custom_jvp" in msg
