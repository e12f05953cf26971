"""torch.SymInt, torch.SymFloat, torch.SymBool: the types PyTorch gives sizes and scalars that
its tracer keeps symbolic. fgrad's tracing (fgrad.torch.compile, fx) works on concrete shapes,
so no fgrad value is ever one of these: as in eager PyTorch, `isinstance(x.shape[0],
torch.SymInt)` is False, and code that accepts `(int, torch.SymInt)` runs unchanged."""
from __future__ import annotations

from typing import Any


class SymInt:
    """An int whose value a tracer keeps symbolic, wrapping its symbolic `node` (see the module
    docstring: fgrad makes none)."""

    def __init__(self, node: Any) -> None:
        self.node = node


class SymFloat:
    """A float whose value a tracer keeps symbolic, wrapping its symbolic `node`."""

    def __init__(self, node: Any) -> None:
        self.node = node


class SymBool:
    """A bool whose value a tracer keeps symbolic, wrapping its symbolic `node`."""

    def __init__(self, node: Any) -> None:
        self.node = node
