"""Memory layouts (torch.layout): `strided` for dense tensors, `sparse_coo` for fgrad.torch.sparse's;
memory formats (torch.memory_format) and the NumPy array layouts that realise them."""
from __future__ import annotations

import numpy as np


class layout:
    """A tensor's memory layout: torch.strided (dense) or torch.sparse_coo."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"


strided = layout("strided")
sparse_coo = layout("sparse_coo")


class memory_format:
    """How a dense tensor's elements are ordered in memory (PyTorch's torch.memory_format):
    torch.contiguous_format (row-major), torch.channels_last (NHWC order of a 4-d NCHW tensor),
    torch.channels_last_3d (NDHWC of a 5-d NCDHW one) and torch.preserve_format (whatever the
    source tensor has). The formats are the module's four instances; no others can be made."""

    __slots__ = ("name",)

    def __new__(cls, *args, **kwargs):
        raise TypeError("cannot create 'torch.memory_format' instances")

    @classmethod
    def _make(cls, name: str) -> "memory_format":
        self = object.__new__(cls)
        self.name = name
        return self

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __reduce__(self):
        return (_format_named, (self.name,))


def _format_named(name: str) -> memory_format:
    """The memory format called `name` (how pickle restores one: the same object)."""
    return _FORMATS[name]


contiguous_format = memory_format._make("contiguous_format")
legacy_contiguous_format = contiguous_format  # (PyTorch's name for the same format)
channels_last = memory_format._make("channels_last")
channels_last_3d = memory_format._make("channels_last_3d")
preserve_format = memory_format._make("preserve_format")
_FORMATS = {f.name: f for f in (contiguous_format, channels_last, channels_last_3d, preserve_format)}

# the order of dims from fastest- to slowest-varying in memory, per channels-last format
CHANNELS_LAST_ORDER = {channels_last: (1, 3, 2, 0), channels_last_3d: (1, 4, 3, 2, 0)}


def strides_follow(shape, strides, order) -> bool:
    """Whether `strides` (in elements) lay out `shape` densely with dims varying fastest to
    slowest in `order`; dims of size 1 may have any stride (as PyTorch decides contiguity)."""
    expected = 1
    for d in order:
        if shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= shape[d]
    return True


def array_format(v) -> memory_format:
    """The memory format PyTorch suggests for a tensor with the NumPy array `v`: a channels-last
    one when v's strides follow it and C order does not hold, else contiguous_format."""
    if not isinstance(v, np.ndarray) or v.flags.c_contiguous:
        return contiguous_format
    steps = [s // v.itemsize for s in v.strides]
    for fmt, order in CHANNELS_LAST_ORDER.items():
        if v.ndim == len(order) and strides_follow(v.shape, steps, order):
            return fmt
    return contiguous_format


def laid_out(v: np.ndarray, fmt: memory_format) -> np.ndarray:
    """The NumPy array `v` copied into memory format `fmt` (values and shape unchanged; C order
    for contiguous_format or a rank the format does not apply to)."""
    order = CHANNELS_LAST_ORDER.get(fmt)
    if order is None or v.ndim != len(order):
        return np.ascontiguousarray(v)
    perm = order[::-1]  # a C-ordered copy of the dims in memory order, viewed back in the logical order
    return np.ascontiguousarray(v.transpose(perm)).transpose(np.argsort(perm))
