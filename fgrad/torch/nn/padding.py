"""Padding layers with PyTorch's names: constant (and zero), reflection, replication and
circular padding of the last 1, 2 or 3 dimensions (thin Modules over F.pad)."""
from __future__ import annotations

from ._spatial import ntuple, pad
from .module import Module

__all__ = ["ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
           "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d",
           "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d"]


class _PadNd(Module):
    """`padding`: an int (every side) or 2*n ints (left, right[, top, bottom[, front, back]])."""

    _n: int = 1
    _mode: str = "constant"

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = ntuple(padding, 2 * self._n, "padding")

    def forward(self, input):
        return pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dimension with `value`."""
    _n = 1


class ConstantPad2d(_ConstantPadNd):
    """Pad the last 2 dimensions with `value`."""
    _n = 2


class ConstantPad3d(_ConstantPadNd):
    """Pad the last 3 dimensions with `value`."""
    _n = 3


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad1d(_ZeroPadNd):
    """Pad the last dimension with zeros."""
    _n = 1


class ZeroPad2d(_ZeroPadNd):
    """Pad the last 2 dimensions with zeros."""
    _n = 2


class ZeroPad3d(_ZeroPadNd):
    """Pad the last 3 dimensions with zeros."""
    _n = 3


class ReflectionPad1d(_PadNd):
    """Mirror the last dimension about its edges (the edge not repeated)."""
    _n, _mode = 1, "reflect"


class ReflectionPad2d(_PadNd):
    """Mirror the last 2 dimensions about their edges."""
    _n, _mode = 2, "reflect"


class ReflectionPad3d(_PadNd):
    """Mirror the last 3 dimensions about their edges."""
    _n, _mode = 3, "reflect"


class ReplicationPad1d(_PadNd):
    """Repeat the edge values of the last dimension."""
    _n, _mode = 1, "replicate"


class ReplicationPad2d(_PadNd):
    """Repeat the edge values of the last 2 dimensions."""
    _n, _mode = 2, "replicate"


class ReplicationPad3d(_PadNd):
    """Repeat the edge values of the last 3 dimensions."""
    _n, _mode = 3, "replicate"


class CircularPad1d(_PadNd):
    """Wrap the last dimension around."""
    _n, _mode = 1, "circular"


class CircularPad2d(_PadNd):
    """Wrap the last 2 dimensions around."""
    _n, _mode = 2, "circular"


class CircularPad3d(_PadNd):
    """Wrap the last 3 dimensions around."""
    _n, _mode = 3, "circular"
