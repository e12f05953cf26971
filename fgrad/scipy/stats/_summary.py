"""fgrad.scipy.stats's summary statistics (module-level functions, as SciPy's)."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ... import numpy as fnp
from ...core.errors import FgradValueError
from ...numpy._setops import concrete_array
from ...numpy._util import dtype_of
from .._args import float_values

__all__ = ["sem"]

_POLICIES = ("propagate", "omit", "raise")


def sem(a: Any, axis: int | None = 0, ddof: int = 1, nan_policy: str = "propagate", *,
        keepdims: bool = False) -> Any:
    """The standard error of the mean, std(a, ddof=ddof) / sqrt(n) along `axis` (None: over
    every entry), SciPy's signature. nan_policy "propagate" gives NaN where a NaN enters,
    "omit" leaves NaNs out (n counts the others), "raise" raises FgradValueError on a NaN (it
    reads the values, so not under jit or vmap). Differentiable to any order, except where every
    entry is equal (std's kink, derivative 0 there)."""
    if nan_policy not in _POLICIES:
        raise FgradValueError(f"sem: nan_policy={nan_policy!r} is not one of {_POLICIES}; pass one of them")
    (a,) = float_values("sem", a)
    if axis is None:
        a, axis = fnp.ravel(a), 0
    if nan_policy == "raise" and np.isnan(concrete_array(a, "sem(nan_policy='raise') checking for NaN")).any():
        raise FgradValueError("sem: the input contains NaN and nan_policy='raise'; pass nan_policy='omit' "
                              "to leave NaNs out, or 'propagate' to return NaN")
    if nan_policy == "omit":
        spread = fnp.nanstd(a, axis=axis, ddof=ddof, keepdims=keepdims)
        n = fnp.sum(fnp.logical_not(fnp.isnan(a)), axis=axis, keepdims=keepdims)
        return spread / fnp.sqrt(fnp.astype(n, dtype_of(spread)))
    spread = fnp.std(a, axis=axis, ddof=ddof, keepdims=keepdims)
    return spread / math.sqrt(fnp.shape(a)[axis])  # (a Python float: float32 stays float32)
