"""Complex parts of fgrad.numpy: real, imag, conj (conjugate). On real arrays
they are what NumPy makes them (the array itself, zeros, the array itself)."""
from __future__ import annotations

from typing import Any

from ..ops import complex as cx
from ._creation import zeros_like
from ._util import as_value, dtype_of, fresh


def real(val: Any) -> Any:
    """The real part of `val` (`val` itself when it is real)."""
    x = as_value(val, "real")
    return cx.real(x) if dtype_of(x).kind == "c" else x


def imag(val: Any) -> Any:
    """The imaginary part of `val` (zeros of its dtype when it is real)."""
    x = as_value(val, "imag")
    return cx.imag(x) if dtype_of(x).kind == "c" else zeros_like(x)


def conj(x: Any) -> Any:
    """The complex conjugate of `x` (a copy of `x` when it is real)."""
    x = as_value(x, "conj")
    return cx.conj(x) if dtype_of(x).kind == "c" else fresh(x, x)


def conjugate(x: Any) -> Any:
    """The complex conjugate of `x` (NumPy's other name for conj)."""
    return conj(x)


__all__ = ["real", "imag", "conj", "conjugate"]
