"""log_softmax and its backward on float32 NumPy arrays through the row kernels of
_softmax_kernels (imported, with Numba, on the first such call): the impls of
fgrad.ops.nn.dense's log_softmax and log_softmax_grad call these first and keep NumPy's code
for every other dtype and array module."""
from __future__ import annotations

import numpy as np

from ...interpreters.compile.kernels import prefer_wide_vectors

_KERNELS: list = []  # the kernels' module, once imported

# Arrays of fewer elements keep NumPy's code: the first kernel call of a process imports Numba
# and loads (or compiles) the kernels, which a program whose softmaxes are all small should not
# wait for, and below this size the passes over memory that the kernels save are cheap. A
# function of the size only, so a program computes the same bits on every run.
MIN_ELEMENTS = 8192


def _kernels():
    if not _KERNELS:
        prefer_wide_vectors()  # (before Numba compiles or loads them: twice the lanes, the same bits)
        from . import _softmax_kernels  # imports Numba: only once a float32 array needs it
        _KERNELS.append(_softmax_kernels)
    return _KERNELS[0]


def _rows(arrays, axis: int):
    """`arrays` as C-contiguous [rows, C] arrays with `axis` last (views where they are laid
    out so already), or None where the kernels do not apply: not all float32 NumPy arrays, 0-d,
    or fewer than MIN_ELEMENTS elements."""
    a0 = arrays[0]
    if a0.size < max(MIN_ELEMENTS, 1) or not a0.ndim or \
            not all(type(a) is np.ndarray and a.dtype == np.float32 for a in arrays):
        return None
    C = a0.shape[axis]
    return [np.ascontiguousarray(np.moveaxis(a, axis, -1)).reshape(-1, C) for a in arrays]


def _unrows(flat: np.ndarray, shape: tuple, axis: int) -> np.ndarray:
    """A [rows, C] result back in `shape` with C on `axis` (C-contiguous), undoing _rows."""
    moved = shape[:axis] + shape[axis + 1:] + (shape[axis],)
    out = flat.reshape(moved)
    return out if axis == len(shape) - 1 else np.ascontiguousarray(np.moveaxis(out, -1, axis))


def log_softmax(x, axis: int) -> np.ndarray | None:
    """log_softmax of float32 `x` along `axis`, or None for anything else.

    Args:
        x: the input (any array; only a float32 NumPy array of at least one dimension and
            MIN_ELEMENTS elements is computed here).
        axis: the non-negative axis to normalise over.

    Returns:
        A new C-contiguous float32 array of x's shape, or None.
    """
    rows = _rows((x,), axis)
    if rows is None:
        return None
    out = np.empty_like(rows[0])
    _kernels().log_softmax_rows(rows[0], out)
    return _unrows(out, x.shape, axis)


def log_softmax_grad(ct, out, axis: int) -> np.ndarray | None:
    """ct - exp(out) * sum(ct, axis) for float32 `ct` and `out` of one shape, or None for
    anything else.

    Args:
        ct: the cotangent of log_softmax's output.
        out: log_softmax's output.
        axis: the non-negative axis it normalised over.

    Returns:
        A new C-contiguous float32 array of out's shape, or None.
    """
    rows = _rows((ct, out), axis)
    if rows is None:
        return None
    g = np.empty_like(rows[0])
    _kernels().log_softmax_grad_rows(rows[0], rows[1], g)
    return _unrows(g, out.shape, axis)
