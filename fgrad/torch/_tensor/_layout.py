"""Memory layouts (torch.layout): `strided` for dense tensors, `sparse_coo` for fgrad.torch.sparse's;
memory formats (torch.memory_format) and the NumPy array layouts that realise them."""
from __future__ import annotations

import numpy as np

from ...core.errors import FgradTypeError


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
        raise FgradTypeError("cannot create 'torch.memory_format' instances")

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


def laid_out(v: np.ndarray, fmt: memory_format) -> np.ndarray:
    """The NumPy array `v` copied into memory format `fmt` (values and shape unchanged; C order
    for contiguous_format or a rank the format does not apply to)."""
    order = CHANNELS_LAST_ORDER.get(fmt)
    if order is None or v.ndim != len(order):
        return np.ascontiguousarray(v)
    perm = order[::-1]  # a C-ordered copy of the dims in memory order, viewed back in the logical order
    return np.ascontiguousarray(v.transpose(perm)).transpose(np.argsort(perm))


def dense(v: np.ndarray) -> bool:
    """Whether the NumPy array `v` covers its memory without gaps or overlaps, in some order of
    its dims (dims of size 1 aside)."""
    expected = v.itemsize
    for step, n in sorted((s, n) for s, n in zip(v.strides, v.shape) if n != 1):
        if step != expected:
            return False
        expected *= n
    return True


PARTIAL_OVERLAP_MESSAGE = ("unsupported operation: some elements of the input tensor and the written-to tensor refer "
                           "to a single memory location. Please clone() the tensor before performing the operation.")


def partial_overlap(out, src) -> bool:
    """PyTorch's get_overlap_status(out, src) == Partial: both dense (see `dense`) over
    intersecting byte ranges that are not the same elements in the same layout (x[1:] and
    x[:-1]; a tensor and its transpose). Where either is not dense PyTorch does not decide
    ("too hard") and neither does this: False.

    Args:
        out: the written-to value (a NumPy array, or anything else: False).
        src: the value read.

    Returns:
        True or False.
    """
    if type(out) is not np.ndarray or type(src) is not np.ndarray or out is src or not out.size or not src.size:
        return False
    if (out.base is None and src.base is None) or not np.may_share_memory(out, src):
        return False  # (two arrays that own their memory share none; disjoint byte ranges neither)
    if not (dense(out) and dense(src)):
        return False
    a0, b0 = out.__array_interface__["data"][0], src.__array_interface__["data"][0]
    a1, b1 = a0 + out.nbytes, b0 + src.nbytes
    if a0 == b0 and a1 == b1:
        return out.strides != src.strides or out.itemsize != src.itemsize
    return a0 < b1 and b0 < a1


def same_elements(a, b) -> bool:
    """Whether the NumPy arrays `a` and `b` are the same elements of one memory in the same
    layout (a view of a view's twin): PyTorch's copy_ has nothing to do then.

    Args:
        a, b: Tensor values (anything but NumPy arrays: False unless identical).

    Returns:
        True or False.
    """
    if a is b:
        return True
    return (type(a) is np.ndarray and type(b) is np.ndarray and a.shape == b.shape and a.strides == b.strides
            and a.dtype == b.dtype and np.may_share_memory(a, b)
            and a.__array_interface__["data"][0] == b.__array_interface__["data"][0])


def _dense_strides(shape, strides) -> list:
    """PyTorch's infer_dense_strides: element strides of a dense layout that keeps the order of
    `strides` (fastest first; equal strides put the smaller dim first, zero strides stay put)."""
    ndim = len(shape)
    perm = list(range(ndim - 1, -1, -1))

    def swap(d0, d1) -> int:
        s0, s1 = strides[d0], strides[d1]
        if s0 == 0 or s1 == 0:
            return 0
        if s0 != s1:
            return -1 if s0 < s1 else 1
        return 1 if shape[d0] > shape[d1] else 0
    for i in range(1, ndim):
        d1 = i
        for j in range(1, i + 1):
            d0 = i - j
            c = swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    out = [0] * ndim
    step = 1
    for idx in perm:
        out[idx] = step
        if shape[idx] > 1:
            step *= shape[idx]
    return out


def empty_preserving(v: np.ndarray, dtype=None) -> np.ndarray:
    """An uninitialised array shaped like `v` in the layout PyTorch's preserve_format gives a
    copy of it: v's own strides when v is dense, else a dense layout in v's order of strides."""
    dtype = v.dtype if dtype is None else np.dtype(dtype)
    if v.flags.c_contiguous or v.size == 0:
        return np.empty(v.shape, dtype)
    if dense(v) and dtype.itemsize == v.itemsize:
        steps = v.strides
    else:
        steps = [s * dtype.itemsize for s in _dense_strides(v.shape, [s // v.itemsize for s in v.strides])]
    return np.ndarray(v.shape, dtype, buffer=np.empty(v.size * dtype.itemsize, np.uint8), strides=steps)
