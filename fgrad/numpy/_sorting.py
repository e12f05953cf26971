"""Sorting: sort, argsort and partial orders over the argsort primitive (fgrad.ops.sort).
A sorted array is the input gathered by its argsort, so gradients flow back to the elements
the sorted values came from, under every transform."""
from __future__ import annotations

import math
from typing import Any

from ..core.errors import FgradValueError
from ..ops import shape as sh
from ..ops.sort import argsort as _argsort
from ._index import take_along_axis
from ._policy import NUMPY
from ._util import as_value, normalize_axis, shape_of

_KINDS = (None, "quicksort", "mergesort", "heapsort", "stable")


def _check(name: str, kind, order) -> None:
    if kind not in _KINDS:
        raise FgradValueError(f"{name}: kind={kind!r} is not one of {_KINDS[1:]}")
    if order is not None:
        raise FgradValueError(f"{name}: order= sorts structured arrays by field, which fgrad arrays do not have; "
                         "sort by the field's array instead")


def _flat_axis(a, axis, name: str, policy):
    """(array, axis): axis=None sorts the flattened array."""
    if axis is None:
        return sh.reshape(a, (math.prod(shape_of(a)),)), 0
    return a, normalize_axis(axis, len(shape_of(a)), name, policy=policy)


def argsort(a: Any, axis: int | None = -1, kind: str | None = None, order: Any = None, *,
            stable: bool | None = None, descending: bool = False, policy=NUMPY) -> Any:
    """int64 indices that sort `a` along `axis` (the flattened array for None). The sort is
    always stable (equal elements keep their order, also with `descending=True`, as
    jax.numpy's), whatever `kind` asks for; NaNs sort last (first with `descending=True`, as
    jax.numpy's)."""
    _check("argsort", kind, order)
    a = as_value(a, "argsort")
    if not shape_of(a):  # NumPy sorts a 0-d array as its flattened (1,)-shaped self
        axis = None
    a, ax = _flat_axis(a, axis, "argsort", policy)
    return _argsort(a, ax, bool(descending))


def sort(a: Any, axis: int | None = -1, kind: str | None = None, order: Any = None, *,
         stable: bool | None = None, descending: bool = False, policy=NUMPY) -> Any:
    """`a` sorted along `axis` (stably; the flattened array for None). Differentiable: each
    sorted value's gradient goes to the element it came from."""
    _check("sort", kind, order)
    a = as_value(a, "sort")
    if not shape_of(a) and axis is not None:
        raise policy.axis_error("sort", "axis", axis, 0)
    a, ax = _flat_axis(a, axis, "sort", policy)
    return take_along_axis(a, _argsort(a, ax, bool(descending)), ax)


__all__ = ["sort", "argsort"]
