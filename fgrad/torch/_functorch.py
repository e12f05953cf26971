"""PyTorch's `functorch` package on fgrad.torch: torch.func's transforms under their pre-2.0
names (each warns, as PyTorch's do, that torch.func is the name to use), and the functional
module API that torch.func replaced with functional_call: `make_functional`,
`make_functional_with_buffers` and `combine_state_for_ensemble`.

Under `python -m fgrad.run` and `fgrad.install_as_torch()`, `import functorch` gives this
module (fgrad/torch/_alias.py), as `import torch` gives fgrad.torch.
"""
from __future__ import annotations

import copy
import functools
import warnings
from typing import Any, Callable, Sequence

from ..core.errors import FgradRuntimeError
from . import func as _func
from ._tensor import empty_like, stack
from .nn.module import Module
from .nn.parameter import Parameter

__all__ = ["vmap", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "functionalize",
           "make_functional", "make_functional_with_buffers", "combine_state_for_ensemble",
           "FunctionalModule", "FunctionalModuleWithBuffers"]


def _deprecated(api: Callable) -> Callable:
    """torch.func's `api` under functorch's name: the same function, with PyTorch's
    FutureWarning pointing at torch.func."""
    name = api.__name__

    @functools.wraps(api)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        warnings.warn(f"functorch.{name} is deprecated since PyTorch 2.0: use torch.func.{name} "
                      f"(fgrad.torch.func.{name}), which it calls", FutureWarning, stacklevel=2)
        return api(*args, **kwargs)
    wrapper.__module__ = __name__
    return wrapper


vmap = _deprecated(_func.vmap)
grad = _deprecated(_func.grad)
grad_and_value = _deprecated(_func.grad_and_value)
vjp = _deprecated(_func.vjp)
jvp = _deprecated(_func.jvp)
jacrev = _deprecated(_func.jacrev)
jacfwd = _deprecated(_func.jacfwd)
hessian = _deprecated(_func.hessian)
functionalize = _deprecated(_func.functionalize)


def _stateless_copy(model: Module, buffers: bool):
    """A deep copy of `model` whose parameters (and buffers, if `buffers`) are replaced by meta
    placeholders, with the copy's own tensors (shared ones once) and their names, as PyTorch's
    extract_weights leaves a stateless model behind."""
    stateless = copy.deepcopy(model)
    kinds = [("param", stateless.named_parameters)] + ([("buffer", stateless.named_buffers)] if buffers else [])
    out = []
    for kind, named in kinds:
        unique = tuple(named())  # (a tensor shared by several names once, as PyTorch's)
        every = tuple(named(remove_duplicate=False))
        memo = {id(t): empty_like(t, device="meta") for _, t in unique}
        for path, t in every:
            owner_path, _, leaf = path.rpartition(".")
            owner = stateless.get_submodule(owner_path)
            stand_in = Parameter(memo[id(t)], requires_grad=t.requires_grad) if kind == "param" else memo[id(t)]
            setattr(owner, leaf, stand_in)
        out.append((tuple(n for n, _ in unique), tuple(t for _, t in unique)))
    return stateless, out


class FunctionalModule(Module):
    """What `make_functional` returns: `func(params, *args, **kwargs)` runs the model with
    `params` (in the order `make_functional` returned them) in place of its parameters."""

    def __init__(self, stateless_model: Module, param_names: tuple[str, ...]) -> None:
        super().__init__()
        self.stateless_model = stateless_model
        self.param_names = param_names

    def forward(self, params: Sequence, *args: Any, **kwargs: Any) -> Any:
        """The model's output with `params` as its parameters."""
        return _func.functional_call(self.stateless_model, dict(zip(self.param_names, params)), args, kwargs)


class FunctionalModuleWithBuffers(Module):
    """What `make_functional_with_buffers` returns: `func(params, buffers, *args, **kwargs)`."""

    def __init__(self, stateless_model: Module, param_names: tuple[str, ...],
                 buffer_names: tuple[str, ...]) -> None:
        super().__init__()
        self.stateless_model = stateless_model
        self.param_names = param_names
        self.buffer_names = buffer_names

    def forward(self, params: Sequence, buffers: Sequence, *args: Any, **kwargs: Any) -> Any:
        """The model's output with `params` and `buffers` in place of its own."""
        values = dict(zip(self.param_names, params))
        values.update(zip(self.buffer_names, buffers))
        return _func.functional_call(self.stateless_model, values, args, kwargs)


def make_functional(model: Module, disable_autograd_tracking: bool = False):
    """`(func, params)`: a stateless copy of `model` as a function of its parameters, and the
    copy's parameters (tensors shared between names appear once).

    Args:
        model: the module; it is copied, not changed.
        disable_autograd_tracking: return the parameters with requires_grad=False.

    Returns:
        (FunctionalModule, tuple of Tensors). PyTorch's make_functional refuses a model with
        buffers (use make_functional_with_buffers); so does this.
    """
    if len(tuple(model.buffers())) > 0:
        raise FgradRuntimeError("make_functional(model): `model` has buffers. Please use "
                                "make_functional_with_buffers(model) instead.")
    stateless, [(names, params)] = _stateless_copy(model, buffers=False)
    if disable_autograd_tracking:
        for p in params:
            p.requires_grad_(False)
    return FunctionalModule(stateless, names), params


def make_functional_with_buffers(model: Module, disable_autograd_tracking: bool = False):
    """`(func, params, buffers)`: as make_functional, with the buffers (batch norm's running
    statistics, ...) as a second argument of `func`.

    Args:
        model: the module; it is copied, not changed.
        disable_autograd_tracking: return the parameters with requires_grad=False.

    Returns:
        (FunctionalModuleWithBuffers, tuple of parameter Tensors, tuple of buffer Tensors).
    """
    stateless, [(pnames, params), (bnames, buffers)] = _stateless_copy(model, buffers=True)
    if disable_autograd_tracking:
        for p in params:
            p.requires_grad_(False)
    return FunctionalModuleWithBuffers(stateless, pnames, bnames), params, buffers


def combine_state_for_ensemble(models: Sequence[Module]):
    """`(func, params, buffers)` for an ensemble of models of one class: each parameter and
    buffer stacked over the models along a new leading dimension (detached), to vmap over.

    Args:
        models: modules of the same class, all in training mode or all in eval mode.

    Returns:
        (FunctionalModuleWithBuffers of the first model, stacked parameters, stacked buffers).
    """
    if len(models) == 0:
        raise FgradRuntimeError("combine_state_for_ensemble: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise FgradRuntimeError("combine_state_for_ensemble: Expected all models to have the same "
                                "training/eval mode.")
    if not all(type(m) is type(models[0]) for m in models):
        raise FgradRuntimeError("combine_state_for_ensemble: Expected all models to be of the same class.")
    funcs, params, buffers = zip(*[make_functional_with_buffers(m) for m in models])
    return (funcs[0], tuple(stack(s).detach() for s in zip(*params)),
            tuple(stack(s).detach() for s in zip(*buffers)))
