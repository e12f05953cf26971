"""Parameter: a Tensor that a Module registers as trainable; Buffer: one it registers as a
buffer."""
from __future__ import annotations

import copy

import numpy as np

from .. import _tensor as T  # the facade namespace: T(data), T.zeros, T.float32, ...
from .._tensor.tensor import Tensor, _make


class Parameter(Tensor):
    """A leaf Tensor that requires grad (by default) and is registered by Module.__setattr__.
    `Parameter(t)` shares t's storage, as in PyTorch."""

    __slots__ = ()

    def __new__(cls, data=None, requires_grad: bool = True):
        if data is None:
            value = np.empty((0,), np.float32)
        elif isinstance(data, Tensor):
            value = data._value
        else:
            value = T(data)._value
        self = _make(value, vbox=data._vbox if isinstance(data, Tensor) else None, into=object.__new__(cls))
        if requires_grad:
            self.requires_grad_(True)
        return self

    def __init__(self, data=None, requires_grad: bool = True) -> None:
        pass  # everything happens in __new__ (Tensor.__init__ would reinterpret `data`)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        p = _make(self._value.copy(), None, self._requires_grad, into=object.__new__(Parameter))
        p._grad = None if self._grad is None else copy.deepcopy(self._grad, memo)
        memo[id(self)] = p
        return p

    def __reduce_ex__(self, protocol):
        return (_rebuild_parameter, (np.asarray(self.detach().cpu().numpy()).copy(),
                                     self._requires_grad))


def _rebuild_parameter(array, requires_grad):
    return Parameter(T.from_numpy(array), requires_grad)


class Buffer(Tensor):
    """A Tensor that a Module registers as a buffer when assigned as an attribute
    (`self.running = nn.Buffer(torch.zeros(3))`), persistent (in state_dict) or not. It shares
    `data`'s storage, as PyTorch's Buffer; unlike PyTorch's (a plain Tensor marked as a
    buffer) its type is this subclass of Tensor.

    Args:
        data: the values (default: an empty tensor).
        persistent: whether state_dict() includes it."""

    __slots__ = ("persistent",)

    def __new__(cls, data=None, *, persistent: bool = True):
        if data is None:
            data = T.empty(0)
        elif not isinstance(data, Tensor):
            data = T(data)
        self = _make(data._value, vbox=data._vbox, requires_grad=data._requires_grad, into=object.__new__(cls))
        self.persistent = persistent
        return self

    def __init__(self, data=None, *, persistent: bool = True) -> None:
        pass  # everything happens in __new__ (Tensor.__init__ would reinterpret `data`)
