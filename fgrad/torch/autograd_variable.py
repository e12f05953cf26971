"""torch.autograd.Variable: PyTorch's deprecated wrapper, kept for old scripts.

Since PyTorch 0.4 a Variable is a Tensor: `Variable(t, requires_grad=True)` returns a Tensor that
shares `t`'s values, detached from `t`'s graph, and `isinstance(x, Variable)` holds for every
Tensor. `volatile` is accepted and ignored with a warning, as in PyTorch. The function
`torch.autograd.variable(...)` (long gone) raises, pointing to `torch.tensor`.
"""
from __future__ import annotations

import warnings

from ._tensor import Tensor
from ._tensor.creation import tensor
from ..core.errors import FgradRuntimeError, FgradTypeError

__all__ = ["Variable", "variable"]


class _VariableMeta(type):
    """Makes every Tensor an instance of Variable, as PyTorch's VariableMeta does."""

    def __instancecheck__(cls, instance) -> bool:
        return isinstance(instance, Tensor)


class Variable(metaclass=_VariableMeta):
    """`Variable(data, requires_grad=False, volatile=False)`: `data` as a new leaf Tensor.

    Args:
        data: the Tensor to wrap (omitted: an empty float tensor).
        requires_grad: whether the returned leaf records operations for backward.
        volatile: removed in PyTorch 0.4; accepted, ignored, with a UserWarning.

    Returns:
        A Tensor (not a Variable instance: there is no such type) sharing `data`'s values.

    Raises:
        TypeError: when `data` is not a Tensor.
        RuntimeError: when `requires_grad=True` and `data` is not floating point or complex.
    """

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = False,
                volatile: bool = False) -> Tensor:
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` "
                          "instead.", UserWarning, stacklevel=2)
        if data is None:
            data = tensor([])
        if not isinstance(data, Tensor):
            raise FgradTypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        out = data.detach()
        if requires_grad:
            out.requires_grad_(True)
        return out


def variable(*args, **kwargs):
    """`torch.autograd.variable(...)`, removed from PyTorch: raises, naming the replacement.

    Args:
        *args: ignored.
        **kwargs: ignored.

    Returns:
        Never returns.

    Raises:
        RuntimeError: always, pointing to `torch.tensor(...)`.
    """
    raise FgradRuntimeError("torch.autograd.variable(...) is deprecated, use torch.tensor(...) instead")
