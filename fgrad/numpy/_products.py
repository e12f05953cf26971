"""Products of whole arrays (kron, cross) and the norm of a pair (hypot), NumPy's semantics,
as compositions of the elementwise and shape primitives (multilinear, so their derivatives
are the primitives' own)."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import FgradValueError
from ..ops import elementwise as ew
from ..ops import shape as sh
from . import linalg as _la
from ._policy import NUMPY
from ._shape import moveaxis
from ._util import (
    as_value,
    broadcast_shapes,
    cast,
    normalize_axis,
    promote,
    result_dtype,
    shape_of,
)


def kron(a: Any, b: Any, *, policy=NUMPY) -> Any:
    """The Kronecker product: blocks a[i, j, ...] * b, laid out as `a` is (the operands are
    first given the same number of axes by leading 1s)."""
    a, b = as_value(a, "kron"), as_value(b, "kron")
    dt = result_dtype(a, b, policy=policy)
    a, b = cast(a, dt), cast(b, dt)
    sa, sb = shape_of(a), shape_of(b)
    nd = max(len(sa), len(sb))
    sa, sb = (1,) * (nd - len(sa)) + tuple(sa), (1,) * (nd - len(sb)) + tuple(sb)
    # a's axis i and b's axis i side by side: (a0, b0, a1, b1, ...), then merged pairwise
    full = tuple(d for pair in zip(sa, sb) for d in pair)
    ea = sh.broadcast_in_dim(sh.reshape(a, sa), full, tuple(range(0, 2 * nd, 2)))
    eb = sh.broadcast_in_dim(sh.reshape(b, sb), full, tuple(range(1, 2 * nd, 2)))
    return sh.reshape(ew.mul(ea, eb), tuple(x * y for x, y in zip(sa, sb)))


def cross(a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis: Any = None) -> Any:
    """The cross product of 3-vectors along `axisa` of `a` and `axisb` of `b` (both `axis`
    when given), placed along `axisc` of the result; the other axes broadcast."""
    a, b = as_value(a, "cross"), as_value(b, "cross")
    if axis is not None:
        axisa = axisb = axisc = axis
    sa, sb = shape_of(a), shape_of(b)
    if not sa or not sb:
        raise FgradValueError(f"cross: both operands need at least one axis, got shapes {sa} and {sb}")
    a = moveaxis(a, normalize_axis(axisa, len(sa), "cross", "axisa"), -1)
    b = moveaxis(b, normalize_axis(axisb, len(sb), "cross", "axisb"), -1)
    if shape_of(a)[-1] != 3 or shape_of(b)[-1] != 3:
        raise FgradValueError(f"cross: incompatible dimensions for cross product (dimension must be 3): vectors "
                         f"of {shape_of(a)[-1]} and {shape_of(b)[-1]} entries (shapes {sa} and {sb})")
    out = _la.cross(a, b, axis=-1)
    return moveaxis(out, -1, normalize_axis(axisc, len(shape_of(out)), "cross", "axisc"))


def hypot(x1: Any, x2: Any, *, policy=NUMPY) -> Any:
    """sqrt(x1**2 + x2**2) elementwise, without overflow or underflow in between (NumPy's
    values); its derivative is that of the formula, x / hypot, with 0 at the origin (the
    norm's convention; PyTorch gives NaN there)."""
    x, y = promote("hypot", x1, x2, policy=policy, to_float=True)
    if shape_of(x) != shape_of(y):  # promote keeps 0-d operands 0-d
        shape = broadcast_shapes("hypot", shape_of(x), shape_of(y), policy=policy)
        x, y = (sh.broadcast_in_dim(v, shape, ()) if not shape_of(v) else v for v in (x, y))
    ax, ay = ew.abs(x), ew.abs(y)
    big = ew.maximum(ax, ay)
    # scale by a power of two near the larger magnitude: exact, and constant (floor has a zero
    # derivative), so the derivatives are exactly those of sqrt(x**2 + y**2)
    finite = ew.logical_and(ew.isfinite(big), ew.gt(big, ew.const(big, 0.0)))
    safe = ew.select(finite, big, ew.const(big, 1.0))
    scale = ew.pow(ew.const(big, 2.0), ew.floor(ew.div(ew.log(safe), ew.const(big, float(np.log(2.0))))))
    sx, sy = ew.div(x, scale), ew.div(y, scale)
    s = ew.add(ew.mul(sx, sx), ew.mul(sy, sy))
    zero = ew.eq(s, ew.const(s, 0.0))
    root = ew.select(zero, ew.const(s, 0.0), ew.sqrt(ew.select(zero, ew.const(s, 1.0), s)))
    out = ew.mul(root, scale)
    # an infinite operand gives inf even beside NaN (IEEE hypot)
    inf = ew.logical_or(ew.isinf(x), ew.isinf(y))
    return ew.select(inf, ew.const(out, np.inf), out)


__all__ = ["cross", "hypot", "kron"]
