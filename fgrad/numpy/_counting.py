"""count_nonzero: NumPy's (and jax.numpy's) signature, how many entries are not zero."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..ops import elementwise as ew
from ._policy import NUMPY
from ._reductions import sum as _sum
from ._util import as_value, normalize_axes, shape_of

__all__ = ["count_nonzero"]


def count_nonzero(a: Any, axis: Any = None, keepdims: bool = False, *, policy=NUMPY) -> Any:
    """How many entries of `a` are not zero (not False; complex: either part nonzero), over
    `axis` (an int, a tuple, or None: all axes), as int64; NaN counts as nonzero. An integer
    count, so it has no derivative (it is not traced through)."""
    a = as_value(a, "count_nonzero")
    axes = normalize_axes(axis, len(shape_of(a)), "count_nonzero", policy=policy)  # (its name in errors)
    return _sum(ew.ne(a, ew.const(a, 0)), axes, dtype=np.int64, keepdims=keepdims, policy=policy)
