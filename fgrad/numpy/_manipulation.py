"""More of NumPy's array manipulation: partition/argpartition, rollaxis, append, row_stack,
select, unstack, and the NumPy 2 names permute_dims, concat, matrix_transpose and vecdot.

Every one is a composition of fgrad.numpy's shape, sorting and selection functions, so its
derivative routes cotangents back to the elements the result is made of.
"""
from __future__ import annotations

from typing import Any

from ..core.errors import FgradTypeError, FgradValueError
from ..ops import elementwise as ew
from ..ops import shape as sh
from ._policy import NUMPY
from ._shape import concatenate, moveaxis, ravel, transpose, vstack
from ._sorting import argsort, sort
from ._util import (
    as_value,
    broadcast_args,
    cast,
    dtype_of,
    int_arg,
    normalize_axis,
    result_dtype,
    shape_of,
)
from .linalg import matrix_transpose, vecdot


def _check_kth(a: Any, kth: Any, axis: Any, name: str, policy) -> None:
    """NumPy's checks of `kth` (an int or a sequence of ints in [-n, n), n the length of the
    partitioned axis: the flattened array's for None)."""
    shape = shape_of(a)
    if axis is None:
        n = 1
        for d in shape:
            n *= d
    else:
        if not shape:
            raise policy.axis_error(name, "axis", axis, 0)
        n = shape[normalize_axis(axis, len(shape), name, policy=policy)]
    for k in kth if isinstance(kth, (list, tuple)) else [kth]:
        k = int_arg(k, name, "kth")
        if not -n <= k < n:
            raise FgradValueError(f"{name}: kth(={k}) out of bounds ({n})")


def _check_order(order: Any, name: str) -> None:
    if order is not None:
        raise FgradValueError(f"{name}: order= partitions structured arrays by field, which fgrad arrays do not have")


def partition(a: Any, kth: Any, axis: int | None = -1, kind: str = "introselect", order: Any = None, *,
              policy=NUMPY) -> Any:
    """`a` rearranged along `axis` (the flattened array for None) so that each position in
    `kth` holds the element a sort would put there, smaller ones before it and larger ones
    after (NumPy's contract, which leaves the order within the two sides unspecified). fgrad
    returns the sorted array, which keeps the contract for every `kth`. Differentiable: each
    value's cotangent goes to the element it came from."""
    a = as_value(a, "partition")
    _check_order(order, "partition")
    _check_kth(a, kth, axis, "partition", policy)
    return sort(a, axis=axis, policy=policy)


def argpartition(a: Any, kth: Any, axis: int | None = -1, kind: str = "introselect", order: Any = None, *,
                 policy=NUMPY) -> Any:
    """int64 indices that partition `a` along `axis` (the flattened array for None), NumPy's
    contract; fgrad's are those of a stable sort, which keep it for every `kth`."""
    a = as_value(a, "argpartition")
    _check_order(order, "argpartition")
    _check_kth(a, kth, axis, "argpartition", policy)
    return argsort(a, axis=axis, policy=policy)


def rollaxis(a: Any, axis: int, start: int = 0, *, policy=NUMPY) -> Any:
    """`a` with `axis` moved to lie before position `start` (NumPy's rollaxis; moveaxis is the
    clearer way to say it)."""
    a = as_value(a, "rollaxis")
    nd = len(shape_of(a))
    ax = normalize_axis(axis, nd, "rollaxis", policy=policy)
    start = int_arg(start, "rollaxis", "start")
    if not -nd <= start <= nd:
        raise policy.axis_error("rollaxis", "start", start, nd + 1)
    if start < 0:
        start += nd
    if ax < start:
        start -= 1  # the axis is taken out before it is put back
    return a if ax == start else moveaxis(a, ax, start, policy=policy)


def append(arr: Any, values: Any, axis: int | None = None, *, policy=NUMPY) -> Any:
    """`values` joined to the end of `arr` along `axis`; both flattened first when axis is
    None (NumPy's append)."""
    arr, values = as_value(arr, "append"), as_value(values, "append")
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], axis=0, policy=policy)
    return concatenate([arr, values], axis=axis, policy=policy)


def row_stack(tup: Any, *, dtype: Any = None, casting: str = "same_kind", policy=NUMPY) -> Any:
    """Stack arrays as rows: vstack's other name (deprecated in NumPy 2, kept for old code)."""
    return vstack(tup, dtype=dtype, policy=policy)


def permute_dims(a: Any, axes: Any = None) -> Any:
    """`a` with its axes permuted (NumPy 2's name for transpose)."""
    return transpose(a, axes)


def concat(arrays: Any, /, *, axis: int | None = 0, policy=NUMPY) -> Any:
    """Join arrays along an existing axis (NumPy 2's name for concatenate)."""
    return concatenate(arrays, axis=axis, policy=policy)


def unstack(x: Any, /, *, axis: int = 0, policy=NUMPY) -> tuple:
    """The slices of `x` along `axis`, as a tuple (the inverse of stack)."""
    x = as_value(x, "unstack")
    nd = len(shape_of(x))
    if nd == 0:
        raise FgradValueError("unstack: Input array must be at least 1-d.")
    ax = normalize_axis(axis, nd, "unstack", policy=policy)
    shape = shape_of(x)
    rest = shape[:ax] + shape[ax + 1:]
    out = []
    for i in range(shape[ax]):
        start, limit = [0] * nd, list(shape)
        start[ax], limit[ax] = i, i + 1
        out.append(sh.reshape(sh.slice(x, start, limit), rest))
    return tuple(out)


def select(condlist: Any, choicelist: Any, default: Any = 0, *, policy=NUMPY) -> Any:
    """Element-wise, the entry of the first choice whose condition holds, `default` where none
    does (NumPy's select). The cotangent goes to the chosen entries."""
    condlist, choicelist = list(condlist), list(choicelist)
    if len(condlist) != len(choicelist):
        raise FgradValueError("select: list of cases must be same length as list of conditions")
    if not choicelist:
        raise FgradValueError("select: select with an empty condition list is not possible")
    conds = [as_value(c, "select's condition") for c in condlist]
    for i, c in enumerate(conds):
        if dtype_of(c).kind != "b":
            raise FgradTypeError(f"select: invalid entry {i} in condlist: should be boolean ndarray")
    choices = [as_value(c, "select's choice") for c in choicelist]
    # the result type counts a Python number default as weak, as NumPy's select does
    dt = result_dtype(*choices, default if isinstance(default, (bool, int, float, complex)) else
                      as_value(default, "select's default"), policy=policy)
    default = as_value(default, "select's default")
    parts = broadcast_args("select", *conds, *[cast(c, dt) for c in choices], cast(default, dt), policy=policy)
    conds, choices, out = parts[:len(conds)], parts[len(conds):-1], parts[-1]
    shape = _common_shape(parts)
    out = _full(out, shape)
    for c, v in zip(reversed(conds), reversed(choices)):  # the first true condition wins
        out = ew.select(_full(c, shape), _full(v, shape), out)
    return out


def _common_shape(parts: list) -> tuple:
    return next((shape_of(p) for p in parts if shape_of(p)), ())


def _full(v: Any, shape: tuple) -> Any:
    """`v` broadcast to `shape` (a 0-d value beside full-shape ones)."""
    return v if shape_of(v) == shape else sh.broadcast_in_dim(v, shape, ())


__all__ = ["partition", "argpartition", "rollaxis", "append", "row_stack", "permute_dims", "concat", "unstack",
           "select", "matrix_transpose", "vecdot"]
