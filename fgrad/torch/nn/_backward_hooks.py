"""Module backward hooks (register_full_backward_hook / _pre_hook), as PyTorch runs them:
the module's tensor inputs and outputs pass through two identity autograd Functions. The
one on the outputs sees every grad_output together (pre-hooks may replace them), the one
on the inputs every grad_input, where the hooks run and may replace grad_input. When no
input requires grad, the hooks run from the outputs' side with grad_input all None."""
from __future__ import annotations

import warnings

from ...core.errors import FgradRuntimeError
from .._tensor.function import Function
from .._tensor.tensor import Tensor


class _HookState:
    """What one call of the module shares between its two identity Functions."""

    def __init__(self, module, n_inputs: int) -> None:
        self.module = module
        self.n_inputs = n_inputs
        self.grad_output = None
        self.inputs_wait = False


class _Outputs(Function):
    @staticmethod
    def forward(ctx, state, *outputs):
        ctx.state = state
        return tuple(o.clone() for o in outputs)

    @staticmethod
    def backward(ctx, *grads):
        state = ctx.state
        grads = tuple(grads)
        for hook in tuple(state.module._backward_pre_hooks.values()):
            new = hook(state.module, grads)
            if new is not None:
                grads = tuple(new) if isinstance(new, (tuple, list)) else (new,)
        state.grad_output = grads
        if not state.inputs_wait:  # no input takes part in the graph: the hooks run now
            if state.module._backward_hooks:
                warnings.warn("Full backward hook is firing when gradients are computed with respect to module "
                              "outputs since no inputs require gradients. See https://docs.pytorch.org/docs/main/"
                              "generated/torch.nn.Module.html#torch.nn.Module.register_full_backward_hook for more "
                              "details.", UserWarning, stacklevel=2)
            _run_hooks(state, (None,) * state.n_inputs)
        return (None,) + grads

    @staticmethod
    def jvp(ctx, _, *tangents):
        return tuple(tangents)  # forward is an identity (copies)


class _Inputs(Function):
    @staticmethod
    def forward(ctx, state, *inputs):
        ctx.state = state
        return tuple(x.clone() for x in inputs)

    @staticmethod
    def backward(ctx, *grads):
        return (None,) + tuple(_run_hooks(ctx.state, tuple(grads)))

    @staticmethod
    def jvp(ctx, _, *tangents):
        return tuple(tangents)


def _run_hooks(state, grad_input: tuple) -> tuple:
    for hook in tuple(state.module._backward_hooks.values()):
        new = hook(state.module, grad_input, state.grad_output)
        if new is not None:
            new = tuple(new) if isinstance(new, (tuple, list)) else (new,)
            if len(new) != len(grad_input):
                raise FgradRuntimeError(f"Backward hook returned an invalid number of grad_input, got {len(new)}, but "
                                   f"expected {len(grad_input)}")
            grad_input = new
    return grad_input


def _single(x):
    return x[0] if isinstance(x, tuple) and len(x) == 1 else x


def wrap_inputs(module, args: tuple):
    """args with their tensors passed through the inputs' identity (returns the new args and
    the call's state)."""
    idx = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    state = _HookState(module, len(idx))
    diff = [i for i in idx if args[i].requires_grad]
    if not diff:
        return args, state
    state.inputs_wait = True
    outs = _Inputs.apply(state, *[args[i] for i in idx])
    outs = outs if isinstance(outs, tuple) else (outs,)
    new = list(args)
    for i, o in zip(idx, outs):
        new[i] = o
    return tuple(new), state


def wrap_outputs(state, out):
    """The module's output with its tensors passed through the outputs' identity."""
    if isinstance(out, Tensor):
        return _single(_Outputs.apply(state, out)) if out.requires_grad else out
    if isinstance(out, tuple) and out and all(isinstance(o, Tensor) for o in out):
        if not any(o.requires_grad for o in out):
            return out
        res = _Outputs.apply(state, *out)
        return res if isinstance(res, tuple) else (res,)
    return out
