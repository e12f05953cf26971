"""fgrad.scipy.signal: SciPy's n-dimensional convolve and correlate (modes 'full', 'valid',
'same'), differentiable in both arrays to any order. One primitive computes the full
convolution (fgrad.ops.convolve); the other modes crop it as SciPy does. `method` is
accepted for SciPy's signature: the values are SciPy's (its 'auto' choice)."""
from __future__ import annotations

from typing import Any

from ..core.avals import float_dtype
from ..core.errors import FgradTypeError, FgradValueError, ShapeError
from ..numpy._util import as_value, aval_of, cast, dtype_of, result_dtype
from ..ops import convolve as cv
from ..ops import index as ix
from ..ops import shape as sh

__all__ = ["convolve", "correlate"]

_MODES = ("full", "valid", "same")


def _operands(in1, in2, name):
    x, k = as_value(in1, name), as_value(in2, name)
    for v in (x, k):
        if dtype_of(v).kind == "c":
            raise FgradTypeError(f"{name}: complex arrays are not supported (dtype {dtype_of(v)}); fgrad's {name} "
                            "takes real arrays")
    dt = float_dtype(result_dtype(x, k))
    x, k = cast(x, dt), cast(k, dt)
    sx, sk = aval_of(x).shape, aval_of(k).shape
    if len(sx) != len(sk):
        raise ShapeError(f"{name}: in1 and in2 should have the same dimensionality, got shapes {sx} and {sk}")
    if not sx:   # 0-d: a product
        return sh.reshape(x, (1,)), sh.reshape(k, (1,)), True
    return x, k, False


def _crop(y, start, size):
    return sh.slice(y, tuple(start), tuple(s + n for s, n in zip(start, size)))


def _convolve(x, k, mode, name):
    if mode not in _MODES:
        raise FgradValueError(f"{name}: mode must be 'full', 'valid' or 'same', got {mode!r}")
    sx, sk = aval_of(x).shape, aval_of(k).shape
    full = cv.conv_full(x, k)
    if mode == "full":
        return full
    if mode == "same":   # centred on the full result, in1's shape
        return _crop(full, [(f - a) // 2 for f, a in zip(aval_of(full).shape, sx)], sx)
    if not (all(a >= b for a, b in zip(sx, sk)) or all(a <= b for a, b in zip(sx, sk))):
        raise ShapeError(f"{name}: for 'valid' mode one of in1 {sx} and in2 {sk} must be at least as large as "
                         "the other in every dimension")
    small = [min(a, b) for a, b in zip(sx, sk)]
    return _crop(full, [s - 1 for s in small], [abs(a - b) + 1 for a, b in zip(sx, sk)])


def convolve(in1: Any, in2: Any, mode: str = "full", method: str = "auto") -> Any:
    """The n-dimensional convolution of two real arrays of one rank: 'full' (every overlap),
    'valid' (complete overlaps; one array must be at least as large as the other in every
    dimension) or 'same' (centred, in1's shape)."""
    x, k, scalar = _operands(in1, in2, "convolve")
    out = _convolve(x, k, mode, "convolve")
    return sh.reshape(out, ()) if scalar else out


def correlate(in1: Any, in2: Any, mode: str = "full", method: str = "auto") -> Any:
    """The n-dimensional cross-correlation of two real arrays of one rank: convolve with in2
    reversed along every axis (SciPy's modes, and its alignment for 'valid' with a larger in2)."""
    x, k, scalar = _operands(in1, in2, "correlate")
    nd = len(aval_of(x).shape)
    sx, sk = aval_of(x).shape, aval_of(k).shape
    if mode == "valid" and all(a <= b for a, b in zip(sx, sk)) and sx != sk:
        # SciPy swaps the operands when in2 is the larger: the result is reversed
        out = ix.rev(_convolve(k, ix.rev(x, tuple(range(nd))), mode, "correlate"), tuple(range(nd)))
    else:
        out = _convolve(x, ix.rev(k, tuple(range(nd))), mode, "correlate")
    return sh.reshape(out, ()) if scalar else out
