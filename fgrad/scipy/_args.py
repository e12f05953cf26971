"""Argument handling shared by fgrad.scipy: SciPy's functions take array-likes of any numeric
dtype, broadcast them together and compute in their common float dtype (integers give
float64, float32 stays float32, Python numbers are weak)."""
from __future__ import annotations

from typing import Any

from ..core.avals import float_dtype
from ..numpy._util import _PY_SCALARS, as_value, cast, promote, result_dtype


def float_args(name: str, *args: Any) -> list:
    """`args` as values of one float dtype, broadcast to one shape (0-d ones stay 0-d, as the
    elementwise primitives accept them); `name` is the function named in any error."""
    return promote(name, *args, to_float=True)


def float_values(name: str, *args: Any) -> list:
    """`args` cast to their common float dtype, shapes left as they are (for functions whose
    arguments have different roles and shapes: a vector of parameters, a matrix)."""
    args = [a if isinstance(a, _PY_SCALARS) else as_value(a, name) for a in args]
    dtype = float_dtype(result_dtype(*args))  # (Python numbers are weak: float32 with 2.0 stays float32)
    return [cast(as_value(a, name), dtype) for a in args]
