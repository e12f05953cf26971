"""The `meta` device: tensors with a shape and a dtype and no values (PyTorch's meta tensors).

A meta tensor's value is a `MetaArray`, which holds only its shape and dtype. A torch op with a
meta operand does not compute: `_meta_ops.meta_call` traces the op's functional computation with fgrad's
abstract evaluation (`make_jaxpr` on zero-stride stand-ins of the operands, as
`fgrad.eval_shape` does) and wraps the output shapes and dtypes as new meta tensors, so
`conv(torch.rand(2**10, 3, 2**16, 2**16, device="meta"))` takes as long as for a small input.
The result records a grad_fn named as the op's (so printing shows PyTorch's), whose backward
refuses: there are no values to differentiate.
"""
from __future__ import annotations

import math

import numpy as np

from ...core.avals import ShapedArray
from ...core.errors import FgradNotImplementedError, FgradRuntimeError, FgradTypeError

__all__ = ["MetaArray", "is_meta_value", "NO_DATA"]

NO_DATA = "Cannot copy out of meta tensor; no data!"

# Non-zero while _meta_ops.meta_call traces an op for its output shapes: a meta value the op's
# computation holds as a constant (a mask closed over) then reads as its zero-stride stand-in.
SHAPES_ONLY = [0]


class MetaArray(ShapedArray):
    """A value of the meta device: a shape and a NumPy dtype, no memory.

    It answers the array attributes the facade reads (shape, dtype, ndim and size as the
    core's ShapedArray has them; strides, nbytes, ...) and the shape-only methods (reshape,
    astype, transpose, indexing), and refuses to give up values (`np.asarray`, `.item()`,
    `.tolist()`), as PyTorch refuses to copy out of a meta tensor. Writing into it
    (`x[i] = v`) does nothing: there is nothing to write to. Unlike an aval it is a value:
    it equals only itself (`==` with an array is NumPy's elementwise op, a meta result).

    Args:
        shape: the sizes.
        dtype: a NumPy dtype (or anything np.dtype takes).
    """

    __slots__ = ()
    base = None
    __array_priority__ = 2000  # (NumPy operators hand a meta operand's op back to it: refused below)
    __eq__ = object.__eq__
    __hash__ = object.__hash__

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def strides(self) -> tuple:
        """C-order strides in bytes (PyTorch's meta tensors are contiguous when made)."""
        out, acc = [], self.dtype.itemsize
        for s in reversed(self.shape):
            out.append(acc)
            acc *= max(s, 1)
        return tuple(reversed(out))

    def stand_in(self) -> np.ndarray:
        """A read-only zero-stride NumPy array of this shape and dtype (no memory): what shape
        computations run on."""
        return np.broadcast_to(np.zeros((), self.dtype), self.shape)

    def astype(self, dtype, copy: bool = True) -> "MetaArray":
        return MetaArray(self.shape, dtype)

    def reshape(self, *shape, order: str = "C") -> "MetaArray":
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        return MetaArray(_reshaped(self.shape, shape), self.dtype)

    def view(self, dtype=None) -> "MetaArray":
        return MetaArray(self.shape, self.dtype if dtype is None else dtype)

    def copy(self, order: str = "C") -> "MetaArray":
        return MetaArray(self.shape, self.dtype)

    def transpose(self, *axes) -> "MetaArray":
        return MetaArray(self.stand_in().transpose(*axes).shape, self.dtype)

    @property
    def T(self) -> "MetaArray":
        return MetaArray(self.shape[::-1], self.dtype)

    def __getitem__(self, index) -> "MetaArray":
        return MetaArray(self.stand_in()[_plain_index(index)].shape, self.dtype)

    def __setitem__(self, index, value) -> None:
        self.stand_in()[_plain_index(index)]  # (an index out of range is still refused)

    def __len__(self) -> int:
        if not self.shape:
            raise FgradTypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __array__(self, dtype=None, copy=None):
        if SHAPES_ONLY[0]:  # (an op traced for its shapes closes over this value: its stand-in will do)
            return self.stand_in() if dtype is None else self.stand_in().astype(dtype)
        raise FgradNotImplementedError(NO_DATA + " (a meta tensor has a shape and a dtype only; make it on "
                                       "the CPU to get values, e.g. torch.empty_like(t, device='cpu'))")

    def item(self, *args):
        raise FgradNotImplementedError(f"Tensor.item() cannot be called on meta tensors: {NO_DATA}")

    def tolist(self):
        raise FgradNotImplementedError(f"Tensor.tolist() cannot be called on meta tensors: {NO_DATA}")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """An elementwise NumPy function of meta values: the broadcast shape and the dtype NumPy's
        rules give (found on empty arrays), nothing computed."""
        if method != "__call__" or kwargs.get("out") is not None or ufunc.nout != 1:
            raise FgradNotImplementedError(f"{ufunc.__name__}.{method} on a meta value: {NO_DATA}")
        shapes, empties = [], []
        for x in inputs:
            if type(x) is MetaArray:
                shapes.append(x.shape)
                empties.append(np.zeros((0,), x.dtype))
            else:
                a = np.asarray(x)
                shapes.append(a.shape)
                empties.append(a.reshape(-1)[:0] if a.ndim else a)  # (a 0-d operand keeps NumPy's scalar rules)
        dtype = ufunc(*empties, **kwargs).dtype
        return MetaArray(np.broadcast_shapes(*shapes), dtype)

    def __add__(self, other):
        return np.add(self, other)

    def __radd__(self, other):
        return np.add(other, self)

    def __sub__(self, other):
        return np.subtract(self, other)

    def __rsub__(self, other):
        return np.subtract(other, self)

    def __mul__(self, other):
        return np.multiply(self, other)

    def __rmul__(self, other):
        return np.multiply(other, self)

    def __truediv__(self, other):
        return np.true_divide(self, other)

    def __rtruediv__(self, other):
        return np.true_divide(other, self)

    def __repr__(self) -> str:
        return f"MetaArray(shape={self.shape}, dtype={self.dtype})"


def _reshaped(shape: tuple, new: tuple) -> tuple:
    """`new` with its one -1 resolved against `shape`'s element count (NumPy's reshape rules)."""
    new = tuple(int(s) for s in new)
    total = math.prod(shape)
    if -1 in new:
        rest = math.prod(s for s in new if s != -1)
        if new.count(-1) > 1 or rest == 0 or total % rest:
            raise FgradRuntimeError(f"shape '{list(new)}' is invalid for input of size {total}")
        new = tuple(total // rest if s == -1 else s for s in new)
    if math.prod(new) != total:
        raise FgradRuntimeError(f"shape '{list(new)}' is invalid for input of size {total}")
    return new


def _plain_index(index):
    """An index with meta arrays (index tensors on the meta device) refused and others kept."""
    items = index if isinstance(index, tuple) else (index,)
    for e in items:
        if type(e) is MetaArray:
            raise FgradNotImplementedError(f"indexing with a meta tensor: the result's shape depends on its "
                                           f"values, which a meta tensor has none of ({NO_DATA})")
    return index


def is_meta_value(v) -> bool:
    """Whether `v` is a meta device value.

    Args:
        v: a Tensor's value.

    Returns:
        True or False.
    """
    return type(v) is MetaArray
