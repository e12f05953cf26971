"""torch.nn.utils.weight_norm / spectral_norm and their removal: the hook-based
reparametrisations of PyTorch (torch.nn.utils.weight_norm.py, spectral_norm.py), with the same
parameters, buffers, state_dict keys, random draws and forward pre-hooks."""
from __future__ import annotations

import warnings
from typing import Any

from ...core.errors import FgradRuntimeError, FgradValueError
from .._tensor.grad_mode import no_grad
from .._tensor.tensor import Tensor
from . import functional as F
from .module import Module
from .parameter import Parameter

__all__ = ["weight_norm", "remove_weight_norm", "spectral_norm", "remove_spectral_norm"]


def _norm_except_dim(v: Tensor, dim: int) -> Tensor:
    """The 2-norm of v over every dimension but `dim`, kept as size-1 dimensions (the whole
    norm, a 0-d Tensor, for dim = -1, as PyTorch's norm_except_dim)."""
    if dim == -1:
        return v.norm(2)
    axes = [d for d in range(v.dim()) if d != dim]
    return v.pow(2).sum(axes, keepdim=True).sqrt() if axes else v.abs()


class WeightNorm:
    """The forward pre-hook of weight_norm: recomputes `name` = name_v * (name_g / ||name_v||)."""

    def __init__(self, name: str, dim: int) -> None:
        self.name, self.dim = name, -1 if dim is None else dim

    def compute_weight(self, module: Module) -> Tensor:
        g, v = getattr(module, self.name + "_g"), getattr(module, self.name + "_v")
        return v * (g / _norm_except_dim(v, self.dim))

    def remove(self, module: Module) -> None:
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Reparametrise `module.<name>` as name_g * name_v / ||name_v|| (PyTorch's deprecated
    torch.nn.utils.weight_norm): the parameter is replaced by name_g (its norm over every
    dimension but `dim`) and name_v (its value), and a forward pre-hook recomputes it.

    Args:
        module: the module holding the parameter.
        name: the parameter's name.
        dim: the dimension kept out of the norm (None or -1: the norm of the whole tensor).

    Returns:
        The module.

    Raises:
        RuntimeError: the parameter already has a weight_norm hook.
        AttributeError: the module has no such parameter."""
    warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                  "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=2)
    for hook in module._forward_pre_hooks.values():
        if isinstance(hook, WeightNorm) and hook.name == name:
            raise FgradRuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
    fn = WeightNorm(name, dim)
    weight = getattr(module, name)
    if name not in module._parameters:
        raise FgradValueError(f"weight_norm: '{name}' is not a parameter of {type(module).__name__}")
    del module._parameters[name]
    module.register_parameter(name + "_g", Parameter(_norm_except_dim(weight, fn.dim).detach()))
    module.register_parameter(name + "_v", Parameter(weight.detach()))
    setattr(module, name, fn.compute_weight(module))
    module.register_forward_pre_hook(fn)
    return module


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    """Undo weight_norm: `name` becomes a Parameter again, holding the current weight.

    Args:
        module: the module weight_norm was applied to.
        name: the parameter's name.

    Returns:
        The module.

    Raises:
        ValueError: no weight_norm of `name` on the module."""
    for k, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise FgradValueError(f"weight_norm of '{name}' not found in {module}")


class SpectralNorm:
    """The forward pre-hook of spectral_norm: `name` = name_orig / sigma, with sigma estimated
    by power iteration on the buffers name_u, name_v (advanced in training mode only)."""

    def __init__(self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        if n_power_iterations <= 0:
            raise FgradValueError("Expected n_power_iterations to be positive, but got "
                                  f"n_power_iterations={n_power_iterations}")
        self.name, self.dim, self.n_power_iterations, self.eps = name, dim, n_power_iterations, eps

    def reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.permute(self.dim, *[d for d in range(weight.dim()) if d != self.dim])
        return weight.reshape(weight.size(0), -1)

    def compute_weight(self, module: Module, do_power_iteration: bool) -> Tensor:
        weight = getattr(module, self.name + "_orig")
        u, v = getattr(module, self.name + "_u"), getattr(module, self.name + "_v")
        mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):
                    v.copy_(F.normalize(mat.t().mv(u), dim=0, eps=self.eps))
                    u.copy_(F.normalize(mat.mv(v), dim=0, eps=self.eps))
                u, v = u.clone(), v.clone()
        sigma = u.dot(mat.mv(v))
        return weight / sigma

    def remove(self, module: Module) -> None:
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """Divide `module.<name>` by its spectral norm, estimated by power iteration (PyTorch's
    hook-based torch.nn.utils.spectral_norm): the parameter becomes name_orig, the buffers
    name_u and name_v hold the singular vector estimates (drawn from the default generator
    as PyTorch draws them), and a forward pre-hook recomputes `name` (one power iteration
    per forward in training mode).

    Args:
        module: the module holding the parameter.
        name: the parameter's name.
        n_power_iterations: power iterations per forward (> 0).
        eps: the normalisation's floor.
        dim: the output dimension (None: 1 for ConvTranspose modules, else 0).

    Returns:
        The module.

    Raises:
        RuntimeError: the parameter already has a spectral_norm hook.
        ValueError: n_power_iterations <= 0, or the parameter is None."""
    if dim is None:
        dim = 1 if type(module).__name__ in ("ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d") else 0
    for hook in module._forward_pre_hooks.values():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            raise FgradRuntimeError(f"Cannot register two spectral_norm hooks on the same parameter {name}")
    fn = SpectralNorm(name, n_power_iterations, dim, eps)
    weight = module._parameters.get(name)
    if weight is None:
        raise FgradValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
    with no_grad():
        h, w = fn.reshape_weight_to_matrix(weight).shape
        u = F.normalize(weight.new_empty(h).normal_(0, 1), dim=0, eps=fn.eps)
        v = F.normalize(weight.new_empty(w).normal_(0, 1), dim=0, eps=fn.eps)
    delattr(module, fn.name)
    module.register_parameter(fn.name + "_orig", weight)
    setattr(module, fn.name, weight.detach())
    module.register_buffer(fn.name + "_u", u)
    module.register_buffer(fn.name + "_v", v)
    module.register_forward_pre_hook(fn)
    return module


def remove_spectral_norm(module: Module, name: str = "weight") -> Module:
    """Undo spectral_norm: `name` becomes a Parameter holding name_orig / sigma (no power
    iteration).

    Args:
        module: the module spectral_norm was applied to.
        name: the parameter's name.

    Returns:
        The module.

    Raises:
        ValueError: no spectral_norm of `name` on the module."""
    for k, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise FgradValueError(f"spectral_norm of '{name}' not found in {module}")
