"""Small top-level names of `torch` that are not ops: its math constants, `newaxis`, `typename`."""
from __future__ import annotations

import math
from typing import Any

from ._tensor import Tensor

__all__ = ["e", "inf", "nan", "newaxis", "pi", "typename"]

e, pi, inf, nan = math.e, math.pi, math.inf, math.nan
newaxis = None  # indexing with it adds an axis, as NumPy's


def typename(obj: Any) -> str:
    """A readable type name: a Tensor's legacy type (`torch.FloatTensor`), else the dotted name
    of `obj` (a class or function) or of its class, without "builtins.".

    Args:
        obj: any object.

    Returns:
        The name, e.g. "torch.LongTensor", "int", "fgrad.torch.nn.layers.Linear".
    """
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module, qualname = type(obj).__module__, type(obj).__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"
