"""torch.nn.utils.convert_conv2d_weight_memory_format / convert_conv3d_weight_memory_format:
the weights of a model's convolutions rewritten in a memory format (channels_last for NHWC
kernels), in place, as PyTorch does before running a model in channels-last order."""
from __future__ import annotations

from ...core.errors import FgradTypeError
from .._tensor._layout import memory_format as _memory_format_cls
from .._tensor.grad_mode import no_grad
from ._modules_more import ConvTranspose3d
from .conv import Conv2d, Conv3d, ConvTranspose2d
from .module import Module


def _convert(module: Module, memory_format, kinds: tuple, name: str) -> Module:
    if not isinstance(module, Module):
        raise FgradTypeError(f"{name}: module must be a torch.nn.Module, not {type(module).__name__}")
    if not isinstance(memory_format, _memory_format_cls):
        raise FgradTypeError(f"{name}: memory_format must be a torch.memory_format (torch.channels_last, "
                        f"torch.contiguous_format, ...), not {memory_format!r}")
    for m in module.modules():
        if isinstance(m, kinds):
            with no_grad():
                m.weight.data = m.weight.detach().clone(memory_format=memory_format)
    return module


def convert_conv2d_weight_memory_format(module: Module, memory_format) -> Module:
    """Rewrite the weight of every Conv2d and ConvTranspose2d in `module` (itself included) in
    `memory_format`, in place; values, parameters and their identity are unchanged.

    Args:
        module: a Module (a model or a single convolution).
        memory_format: torch.channels_last or torch.contiguous_format (a 4-d weight).

    Returns:
        `module` itself.

    Raises:
        TypeError: module is not a Module, or memory_format not a torch.memory_format.
    """
    return _convert(module, memory_format, (Conv2d, ConvTranspose2d), "convert_conv2d_weight_memory_format")


def convert_conv3d_weight_memory_format(module: Module, memory_format) -> Module:
    """Rewrite the weight of every Conv3d and ConvTranspose3d in `module` (itself included) in
    `memory_format`, in place (see convert_conv2d_weight_memory_format).

    Args:
        module: a Module.
        memory_format: torch.channels_last_3d or torch.contiguous_format (a 5-d weight).

    Returns:
        `module` itself.

    Raises:
        TypeError: module is not a Module, or memory_format not a torch.memory_format.
    """
    return _convert(module, memory_format, (Conv3d, ConvTranspose3d), "convert_conv3d_weight_memory_format")
