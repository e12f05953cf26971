"""torch.hash_tensor: an order-independent fingerprint of a tensor's values (their 64-bit
patterns combined by XOR), whole or along dims, as a uint64 tensor."""
from __future__ import annotations

from typing import Any

import numpy as np

from ...core.errors import FgradIndexError, FgradNotImplementedError, FgradRuntimeError
from . import _dtypes as D
from .tensor import Tensor, _make, _nd


def hash_tensor(input: Tensor, dim: Any = None, *, keepdim: bool = False, mode: int = 0) -> Tensor:
    """PyTorch's torch.hash_tensor: each value widened to 64 bits (floats to float64, integers
    and bools to int64), its bit pattern read as uint64, and the patterns XOR-ed together over
    `dim` (all dims when None or empty). Equal tensors hash equal whatever their float width.

    Args:
        input: a real tensor.
        dim: a dim, a sequence of dims, or None.
        keepdim: keep the reduced dims with size 1.
        mode: the hash; 0 (XOR of the bit patterns) is the one there is.

    Returns:
        A uint64 tensor (no gradient).

    Raises:
        RuntimeError: an unknown mode, or an empty input without dim.
        IndexError: a dim out of range, or a reduced dim of size 0.
        NotImplementedError: a complex input (as PyTorch).
    """
    if mode != 0:
        raise FgradRuntimeError(f"Unknown hash_tensor mode: {mode} (0, XOR of the values' bits, is the one there is)")
    v = input._value
    if type(v) is not _nd:
        v = v.get() if hasattr(v, "get") else np.asarray(v)
    kind = D.kind(v.dtype)
    if kind == "c":
        raise FgradNotImplementedError(f"\"xor_sum_cpu\" not implemented for '{D.of_np(v.dtype)}'; hash the real "
                                       "and imaginary parts (torch.view_as_real) instead")
    wide = v.astype(np.float64 if kind == "f" else np.int64).view(np.uint64)
    ndim = v.ndim
    if dim is None or isinstance(dim, (tuple, list)) and len(dim) == 0:
        if v.size == 0:
            raise FgradRuntimeError("hash_tensor: Expected reduction dim to be specified for input.numel() == 0. "
                                    "Specify the reduction dim with the 'dim' argument.")
        axes = tuple(range(ndim))
    else:
        dims = (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim)
        lo, hi = -max(ndim, 1), max(ndim, 1) - 1
        for d in dims:
            if not lo <= d <= hi:
                raise FgradIndexError(f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {d})")
        axes = tuple(sorted({d % max(ndim, 1) for d in dims})) if ndim else ()
        for a in axes:
            if v.shape[a] == 0:
                raise FgradIndexError(f"hash_tensor: Expected reduction dim {a} to have non-zero size.")
    out = np.bitwise_xor.reduce(wide, axis=axes, keepdims=keepdim) if axes else wide.copy()
    return _make(np.asarray(out, dtype=np.uint64))
