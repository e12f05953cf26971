"""ParameterList and ParameterDict: containers whose Tensors are registered parameters (found
by parameters(), state_dict(), optimisers), with PyTorch's keys and reprs."""
from __future__ import annotations

from typing import Any, Iterable, Iterator

from ...core.errors import FgradIndexError, FgradRuntimeError
from .._tensor.tensor import Tensor
from .module import Module
from .parameter import Parameter


def _as_param(value):
    return value if isinstance(value, Parameter) or not isinstance(value, Tensor) else Parameter(value)


def _entry(key, p, type_name: str) -> str:
    """One line of a container's repr, as PyTorch prints it."""
    if not isinstance(p, Tensor):
        return f"  ({key}): Object of type: {type(p).__name__}"
    size = "x".join(str(d) for d in p.shape)
    device = "" if p.device.type == "cpu" else f" ({p.device})"
    return f"  ({key}): {type(p).__name__} containing: [{type_name} of size {size}{device}]"


class ParameterList(Module):
    """A list of parameters, registered under "0", "1", ... (plain Tensors are wrapped)."""

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        self._size = 0
        if values is not None:
            self.extend(values)

    def _key(self, idx: int) -> str:
        n = self._size
        if not -n <= idx < n:
            raise FgradIndexError(f"index {idx} is out of range")
        return str(idx % n)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return ParameterList([self[i] for i in range(self._size)[idx]])
        return getattr(self, self._key(idx))

    def __setitem__(self, idx: int, param) -> None:
        setattr(self, self._key(idx), _as_param(param))

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[Any]:
        return iter(self[i] for i in range(self._size))

    def __iadd__(self, parameters: Iterable[Any]) -> "ParameterList":
        return self.extend(parameters)

    def __dir__(self):
        return [k for k in super().__dir__() if not k.isdigit()]

    def append(self, value) -> "ParameterList":
        self._size += 1
        setattr(self, str(self._size - 1), _as_param(value))
        return self

    def extend(self, values: Iterable[Any]) -> "ParameterList":
        for v in values:
            self.append(v)
        return self

    def extra_repr(self) -> str:
        return "\n".join(_entry(i, p, str(p.dtype) if isinstance(p, Tensor) else "") for i, p in enumerate(self))

    def __call__(self, *args, **kwargs):
        raise FgradRuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """A dict of parameters, registered under their keys (plain Tensors are wrapped)."""

    def __init__(self, parameters: Any = None) -> None:
        super().__init__()
        self._keys: dict[str, None] = {}
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key: str):
        if key not in self._keys:
            raise KeyError(key)
        return getattr(self, key)

    def __setitem__(self, key: str, value) -> None:
        self._keys[key] = None
        setattr(self, key, _as_param(value))

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, key)

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __reversed__(self) -> Iterator[str]:
        return reversed(list(self._keys))

    def __contains__(self, key) -> bool:
        return key in self._keys

    def keys(self):
        return self._keys.keys()

    def values(self):
        return [self[k] for k in self._keys]

    def items(self):
        return [(k, self[k]) for k in self._keys]

    def get(self, key: str, default: Any = None):
        return self[key] if key in self else default

    def pop(self, key: str):
        v = self[key]
        del self[key]
        return v

    def popitem(self):
        k = list(self._keys)[-1]
        return k, self.pop(k)

    def setdefault(self, key: str, default: Any = None):
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        for k in list(self._keys):
            del self[k]

    def copy(self) -> "ParameterDict":
        return ParameterDict(dict(self.items()))

    def update(self, parameters: Any) -> None:
        items = parameters.items() if hasattr(parameters, "items") else parameters
        for pair in items:
            key, value = pair
            self[key] = value

    def __or__(self, other: "ParameterDict") -> "ParameterDict":
        out = self.copy()
        out.update(other)
        return out

    def extra_repr(self) -> str:
        # (PyTorch names the tensor type here, e.g. torch.FloatTensor, and the dtype in ParameterList)
        return "\n".join(_entry(k, p, p.type() if isinstance(p, Tensor) else "") for k, p in self.items())

    def __call__(self, *args, **kwargs):
        raise FgradRuntimeError("ParameterDict should not be called.")


__all__ = ["ParameterList", "ParameterDict"]
