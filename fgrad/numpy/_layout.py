"""Memory order ('C', 'F', 'A', 'K') of concrete arrays, as NumPy's array, asarray and copy
honour it. Traced values have no memory layout: the order is checked and has no effect on them."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import FgradValueError
_ORDERS = ("C", "F", "A", "K")


def order_arg(order: Any, name: str) -> str:
    """NumPy's `order` argument as one of 'C', 'F', 'A', 'K' (None is 'K'; lower case is
    accepted, as NumPy accepts it).

    Args:
        order: the argument.
        name: the function's name, for the error.

    Returns:
        'C', 'F', 'A' or 'K'.

    Raises:
        ValueError: anything else.
    """
    if order is None:
        return "K"
    if isinstance(order, str) and order.upper() in _ORDERS:
        return order.upper()
    raise FgradValueError(f"{name}: order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")


def laid_out(out: Any, order: str, copy: bool) -> Any:
    """`out` in the memory order NumPy's asarray/array give for `order`: with `copy`, a new
    array ('K': in out's stride order; 'A': Fortran order if out is Fortran-contiguous, C
    order otherwise); without, `out` itself unless 'C' or 'F' asks for a layout it lacks.

    Args:
        out: a concrete NumPy array (anything else is returned as is).
        order: 'C', 'F', 'A' or 'K' (see order_arg).
        copy: whether the result must not share memory with `out`.

    Returns:
        An array of out's class (Array stays Array).
    """
    if not isinstance(out, np.ndarray):
        return out
    if copy:
        return np.array(out, order=order, copy=True, subok=True)
    if order == "K" or order == "A":
        return out
    if (out.flags.c_contiguous if order == "C" else out.flags.f_contiguous):
        return out
    return np.array(out, order=order, copy=True, subok=True)
