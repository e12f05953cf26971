"""r_ and c_: NumPy's index tricks that build an array by concatenating what is written
between the brackets (arrays, scalars, lists, slices as ranges), on fgrad values, so the
result is traced (and differentiable) whenever an entry is."""
from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ..core.avals import PY_NUMBERS
from ..core.errors import FgradValueError
from ._creation import arange, linspace
from ._shape import concatenate, reshape, swapaxes, transpose
from ._util import as_value, aval_of, cast, dtype_of

__all__ = ["r_", "c_"]

_PY_SCALARS = PY_NUMBERS  # Python numbers (isinstance checks here also accept their subclasses)


def _ndmin(x, ndmin: int):
    """x with leading axes of size 1 added up to `ndmin` dimensions (np.array(x, ndmin=...))."""
    shape = aval_of(x).shape
    return x if len(shape) >= ndmin else reshape(x, (1,) * (ndmin - len(shape)) + shape)


def _common_dtype(kinds: list) -> np.dtype:
    """NumPy's result_type of arrays' dtypes and Python scalars (weak), for any number of
    entries (np.result_type takes a bounded number of arguments)."""
    strong = [k for k in kinds if isinstance(k, np.dtype)]
    weak = {type(k): k for k in kinds if not isinstance(k, np.dtype)}  # one of each Python type
    if strong:
        return np.result_type(functools.reduce(np.promote_types, strong), *weak.values())
    return np.result_type(*weak.values())


class AxisConcatenator:
    """The object behind r_ and c_ (NumPy's AxisConcatenator without the matrix mode).

    `obj[a, b, ...]` concatenates the entries along `axis` after giving each at least `ndmin`
    dimensions. An entry is an array (traced or NumPy), a nested list, a scalar
    (Python scalars take part in the dtype as weakly as in NumPy), or a slice: `0:5:1` is
    arange(0, 5, 1), `0:1:5j` is linspace(0, 1, 5). A first entry that is a string of one
    to three integers, 'axis[,ndmin[,trans1d]]', overrides the defaults ('0,2' stacks rows).
    """

    def __init__(self, name: str, axis: int = 0, ndmin: int = 1, trans1d: int = -1) -> None:
        self.name, self.axis, self.ndmin, self.trans1d = name, axis, ndmin, trans1d

    def _directive(self, item: str):
        """(axis, ndmin, trans1d) from a string directive such as '1' or '0,2,-1'."""
        if item in ("r", "c"):
            raise FgradValueError(f"{self.name}: the matrix directive {item!r} is not supported: fgrad has "
                             "no matrix type. Build a 2-D array instead (e.g. r_['0,2', a, b] stacks "
                             "a and b as rows).")
        try:
            nums = [int(p) for p in item.split(",")]
        except ValueError:
            nums = []
        if not 1 <= len(nums) <= 3:
            raise FgradValueError(f"{self.name}: unknown special directive {item!r}; fgrad supports "
                             "'axis', 'axis,ndmin' and 'axis,ndmin,trans1d' (integers)", doc="index-trick-directive")
        return tuple(nums) + (self.ndmin, self.trans1d)[len(nums) - 1:]

    def __getitem__(self, key: Any):
        if not isinstance(key, tuple):
            key = (key,)
        axis, ndmin, trans1d = self.axis, self.ndmin, self.trans1d
        objs, kinds = [], []
        for k, item in enumerate(key):
            if isinstance(item, str):
                if k != 0:
                    raise FgradValueError(f"{self.name}: special directives (strings such as '0,2') must be "
                                     f"the first entry, got {item!r} at position {k}")
                axis, ndmin, trans1d = self._directive(item)
                continue
            if isinstance(item, slice):
                start = 0 if item.start is None else item.start
                step = 1 if item.step is None else item.step
                if isinstance(step, (complex, np.complexfloating)):  # 0:1:5j, five points
                    new = linspace(start, item.stop, num=int(abs(step)))
                else:
                    new = arange(start, item.stop, step)
                if ndmin > 1:
                    new = _ndmin(new, ndmin)
                    if trans1d != -1:
                        new = swapaxes(new, -1, trans1d)
                kinds.append(dtype_of(new))
            elif isinstance(item, (*_PY_SCALARS, np.generic)):
                new = item
                kinds.append(item if isinstance(item, _PY_SCALARS) else np.dtype(type(item)))
            else:
                item = as_value(item, self.name)
                item_ndim = aval_of(item).ndim
                new = _ndmin(item, ndmin)
                if trans1d != -1 and item_ndim < ndmin:
                    # NumPy's rule: the item's own axes go to position trans1d of the new ones
                    k2 = ndmin - item_ndim
                    k1 = trans1d + k2 + 1 if trans1d < 0 else trans1d
                    order = list(range(ndmin))
                    new = transpose(new, order[:k1] + order[k2:] + order[k1:k2])
                kinds.append(dtype_of(new))
            objs.append(new)
        if not objs:
            raise FgradValueError(f"{self.name}: need at least one array to concatenate")
        dtype = _common_dtype(kinds)
        return concatenate([_ndmin(cast(as_value(o, self.name), dtype), ndmin) for o in objs], axis=axis)

    def __len__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return f"fgrad.numpy.{self.name}"


r_ = AxisConcatenator("r_", 0)
"""r_[a, b, 0:3, 7.0]: entries concatenated along the first axis (NumPy's r_)."""
c_ = AxisConcatenator("c_", -1, ndmin=2, trans1d=0)
"""c_[a, b]: 1-D entries become columns, concatenated along the last axis (NumPy's c_)."""
