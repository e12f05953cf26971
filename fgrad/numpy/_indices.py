"""Index arrays of matrix triangles (tril_indices, triu_indices): constants of the shape
alone, as NumPy's, in int64."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import FgradValueError
from ._array import as_array
from ._util import int_arg


def _triangle_indices(name: str, n: Any, k: Any, m: Any, lower: bool) -> tuple:
    n = int_arg(n, name, "n")
    m = n if m is None else int_arg(m, name, "m")
    k = int_arg(k, name, "k", bounded=False)
    if n < 0 or m < 0:
        raise FgradValueError(f"{name}: negative dimensions are not allowed (n={n}, m={m})")
    rows, cols = (np.tril_indices if lower else np.triu_indices)(n, k, m)
    return as_array(rows.astype(np.int64)), as_array(cols.astype(np.int64))


def tril_indices(n: Any, k: Any = 0, m: Any = None) -> tuple:
    """(rows, cols) of the entries on and below diagonal k of an n x m matrix (m = n by
    default), row by row."""
    return _triangle_indices("tril_indices", n, k, m, True)


def triu_indices(n: Any, k: Any = 0, m: Any = None) -> tuple:
    """(rows, cols) of the entries on and above diagonal k of an n x m matrix (m = n by
    default), row by row."""
    return _triangle_indices("triu_indices", n, k, m, False)


__all__ = ["tril_indices", "triu_indices"]
