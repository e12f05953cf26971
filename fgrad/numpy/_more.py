"""More of NumPy: interp and unwrap (signal-style helpers), percentile and nanpercentile
(quantile and nanquantile on the 0-100 scale), sort_complex, and NumPy 2.2's matvec and
vecmat.

interp is piecewise linear: its derivative in x is the slope of the piece x lies in (at a
knot, the piece to its right; 0 outside [xp[0], xp[-1]], where left/right take the
derivative), and it is differentiable in xp, fp, left and right. unwrap adds multiples of
the period chosen from the jumps, a piecewise-constant correction, so its derivative is the
identity.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core.errors import FgradValueError
from ..ops import complex as cx
from ..ops import elementwise as ew
from ..ops import shape as sh
from ._cumulative import diff
from ._elementwise import abs as _abs
from ._elementwise import mod
from ._index import cumsum, getitem, take
from ._linalg import matmul
from ._policy import NUMPY
from ._setops import searchsorted
from ._shape import concatenate
from ._sorting import argsort, sort
from ._statistics import nanquantile, quantile
from ._util import as_value, broadcast_to, cast, dtype_of, is_traced, normalize_axis, reject_out, shape_of

_F64, _C128, _I64 = np.dtype(np.float64), np.dtype(np.complex128), np.dtype(np.int64)


# --- interp --------------------------------------------------------------------------------------

def _interp_real(x: Any, xp: Any, fp: Any, left: Any, right: Any) -> Any:
    """NumPy's compiled interp for float64 x, xp, fp (1-d, of one length n >= 1)."""
    n = shape_of(xp)[0]
    shape = shape_of(x)
    first, last = getitem(xp, 0), getitem(xp, n - 1)
    f_first, f_last = getitem(fp, 0), getitem(fp, n - 1)
    lval = f_first if left is None else cast(as_value(left, "interp's left"), _F64)
    rval = f_last if right is None else cast(as_value(right, "interp's right"), _F64)
    lval, rval = broadcast_to(lval, shape), broadcast_to(rval, shape)

    def full(v):
        return broadcast_to(v, shape)
    if n == 1:
        inside = full(f_first)
    else:
        # the piece [xp[j], xp[j+1]) holding x (the end pieces extended beyond the ends)
        j = ew.sub(cast(searchsorted(xp, x, side="right"), _I64), np.ones((), _I64))
        j = ew.minimum(ew.maximum(j, np.zeros((), _I64)), np.full((), n - 2, _I64))
        j1 = ew.add(j, np.ones((), _I64))
        xj, xj1, fj, fj1 = take(xp, j), take(xp, j1), take(fp, j), take(fp, j1)
        dx = ew.sub(xj1, xj)
        flat = ew.eq(dx, ew.const(dx, 0.0))   # repeated knots: no slope (the value comes from a knot)
        slope = ew.div(ew.sub(fj1, fj), ew.select(flat, ew.const(dx, 1.0), dx))
        inside = ew.add(ew.mul(slope, ew.sub(x, xj)), fj)
        # NumPy's fix-ups for infinite values: from the right knot, then the common value
        nan = ew.isnan(inside)
        inside = ew.select(nan, ew.add(ew.mul(slope, ew.sub(x, xj1)), fj1), inside)
        inside = ew.select(ew.logical_and(ew.isnan(inside), ew.eq(fj, fj1)), fj, inside)
        at_knot = ew.logical_or(ew.eq(x, xj), flat)
        inside = ew.select(ew.logical_and(at_knot, ew.logical_not(ew.isfinite(slope))), fj, inside)
        inside = ew.select(ew.eq(x, full(last)), full(f_last), inside)
    out = ew.select(ew.gt(x, full(last)), rval, inside)
    return ew.select(ew.lt(x, full(first)), lval, out)


def interp(x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None, period: Any = None) -> Any:
    """The piecewise-linear interpolant through the points (xp, fp) (xp increasing),
    evaluated at x, NumPy's interp: `left`/`right` (default fp[0]/fp[-1]) outside the
    points; with `period`, x and xp are taken modulo the period (xp need not be sorted, left
    and right are ignored). The result is float64 (complex128 for complex fp).
    Differentiable in x (between the knots), xp, fp, left and right."""
    x = cast(as_value(x, "interp"), _F64)
    xp = cast(as_value(xp, "interp"), _F64)
    fp = as_value(fp, "interp")
    is_complex = dtype_of(fp).kind == "c"
    fp = cast(fp, _C128 if is_complex else _F64)
    if len(shape_of(xp)) != 1 or len(shape_of(fp)) != 1:
        raise FgradValueError(f"interp: Data points must be 1-D sequences (xp has shape {shape_of(xp)}, fp "
                              f"{shape_of(fp)})")
    if shape_of(xp)[0] == 0:
        raise FgradValueError("interp: array of sample points is empty")
    if shape_of(xp)[0] != shape_of(fp)[0]:
        raise FgradValueError(f"interp: fp and xp are not of the same length ({shape_of(fp)[0]} and "
                              f"{shape_of(xp)[0]})")
    if period is not None:
        if not is_traced(period) and np.all(np.asarray(period) == 0):
            raise FgradValueError("interp: period must be a non-zero value")
        period = ew.abs(cast(as_value(period, "interp's period"), _F64))
        left = right = None
        x, xp = mod(x, period), mod(xp, period)
        order = argsort(xp)
        xp, fp = take(xp, order), take(fp, order)
        n = shape_of(xp)[0]
        xp = concatenate([sh.reshape(ew.sub(getitem(xp, n - 1), period), (1,)), xp,
                          sh.reshape(ew.add(getitem(xp, 0), period), (1,))])
        fp = concatenate([getitem(fp, slice(n - 1, n)), fp, getitem(fp, slice(0, 1))])
    if not is_complex:
        return _interp_real(x, xp, fp, left, right)

    def part(v, pick):
        return None if v is None else pick(cast(as_value(v, "interp's left/right"), _C128))
    return cx.complex(_interp_real(x, xp, cx.real(fp), part(left, cx.real), part(right, cx.real)),
                      _interp_real(x, xp, cx.imag(fp), part(left, cx.imag), part(right, cx.imag)))


# --- unwrap --------------------------------------------------------------------------------------

def unwrap(p: Any, discont: Any = None, axis: int = -1, *, period: Any = 2 * math.pi, policy=NUMPY) -> Any:
    """`p` with every jump between neighbours along `axis` larger than `discont` (default
    period / 2) reduced by whole periods, NumPy's unwrap (integer p and period stay integers).
    The corrections are piecewise constant: the derivative is the identity."""
    p = as_value(p, "unwrap")
    nd = len(shape_of(p))
    ax = normalize_axis(axis, nd, "unwrap", policy=policy)
    dd = diff(p, axis=ax)
    if discont is None:
        discont = period / 2
    dt = np.result_type(dtype_of(dd), period if isinstance(period, (int, float)) else
                        dtype_of(as_value(period, "unwrap's period")))
    if dt.kind in "iu":
        high, rem = divmod(period, 2)
        ambiguous = rem == 0
    else:
        high, ambiguous = period / 2, True
    dd = cast(dd, dt)
    low = -high
    ddmod = ew.add(mod(ew.sub(dd, ew.const(dd, low)), cast(as_value(period, "unwrap's period"), dt)),
                   ew.const(dd, low))
    if ambiguous:
        ddmod = ew.select(ew.logical_and(ew.eq(ddmod, ew.const(ddmod, low)), ew.gt(dd, ew.const(dd, 0))),
                          ew.const(ddmod, high), ddmod)
    correct = ew.sub(ddmod, dd)
    small = ew.lt(_abs(dd), broadcast_to(cast(as_value(discont, "unwrap's discont"), dt), shape_of(dd)))
    correct = ew.select(small, ew.const(correct, 0), correct)
    p = cast(p, dt)
    n = shape_of(p)[ax] if nd else 0
    if n < 2:
        return p
    head = getitem(p, (slice(None),) * ax + (slice(0, 1),))
    tail = getitem(p, (slice(None),) * ax + (slice(1, None),))
    return concatenate([head, ew.add(tail, cumsum(correct, axis=ax))], axis=ax)


# --- percentiles ----------------------------------------------------------------------------------

def _fraction(q: Any, name: str) -> Any:
    """q / 100 as NumPy's percentile computes it (a Python number stays a weak Python float),
    after NumPy's range check for concrete q."""
    if isinstance(q, (int, float)) and not isinstance(q, bool):
        if not 0 <= q <= 100:
            raise FgradValueError(f"{name}: Percentiles must be in the range [0, 100], got {q}")
        return q / 100
    qv = as_value(q, f"{name}'s q")
    if not is_traced(qv):
        qa = np.asarray(qv)
        if qa.size and not (np.all(qa >= 0) and np.all(qa <= 100)):
            raise FgradValueError(f"{name}: Percentiles must be in the range [0, 100] (got {qa.ravel()[:6]})")
        return np.true_divide(qa, 100)
    if dtype_of(qv).kind not in "fc":
        qv = cast(qv, _F64)
    return ew.div(qv, ew.const(qv, 100.0))


def percentile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
               method: str = "linear", keepdims: bool = False, *, interpolation: Any = None,
               policy=NUMPY) -> Any:
    """The q-th percentiles (q in [0, 100]) of `a` over `axis`: quantile(a, q / 100) with
    NumPy's percentile semantics (its methods, dtypes and NaN rule)."""
    return quantile(a, _fraction(q, "percentile"), axis, out, overwrite_input, method, keepdims,
                    interpolation=interpolation, policy=policy)


def nanpercentile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
                  method: str = "linear", keepdims: bool = False, *, interpolation: Any = None,
                  policy=NUMPY) -> Any:
    """percentile ignoring NaNs (an all-NaN slice gives NaN): nanquantile(a, q / 100)."""
    return nanquantile(a, _fraction(q, "nanpercentile"), axis, out, overwrite_input, method, keepdims,
                       interpolation=interpolation, policy=policy)


# --- sort_complex, matvec, vecmat ------------------------------------------------------------------

def sort_complex(a: Any) -> Any:
    """`a` sorted along its last axis by real part, then imaginary part, as a complex array
    (NumPy's sort_complex: complex64 for 8- and 16-bit integers, complex128 for other real
    dtypes). The cotangent goes to the element sorted into each place."""
    a = as_value(a, "sort_complex")
    dt = dtype_of(a)
    if dt.kind != "c":
        a = cast(a, np.dtype(np.complex64 if dt.char in "bhBH" else np.complex128))
    return sort(a, axis=-1)


def _gufunc_check(name: str, x1: Any, x2: Any, need: tuple, signature: str) -> None:
    for i, (v, k) in enumerate(zip((x1, x2), need)):
        if len(shape_of(v)) < k:
            raise FgradValueError(f"{name}: Input operand {i} does not have enough dimensions (has "
                                  f"{len(shape_of(v))}, gufunc core with signature {signature} requires {k})")


def matvec(x1: Any, x2: Any, /, out: Any = None) -> Any:
    """The matrix-vector product of the stacks x1 (..., m, n) and x2 (..., n) -> (..., m)
    (NumPy 2.2's matvec; leading dimensions broadcast)."""
    x1, x2 = as_value(x1, "matvec"), as_value(x2, "matvec")
    reject_out(out, "matvec")
    _gufunc_check("matvec", x1, x2, (2, 1), "(m,n),(n)->(m)")
    res = matmul(x1, sh.reshape(x2, shape_of(x2) + (1,)))
    return sh.reshape(res, shape_of(res)[:-1])


def vecmat(x1: Any, x2: Any, /, out: Any = None) -> Any:
    """The vector-matrix product of the stacks x1 (..., n) and x2 (..., n, m) -> (..., m), with
    the vector conjugated (NumPy 2.2's vecmat; leading dimensions broadcast)."""
    x1, x2 = as_value(x1, "vecmat"), as_value(x2, "vecmat")
    _gufunc_check("vecmat", x1, x2, (1, 2), "(n),(n,m)->(m)")
    if dtype_of(x1).kind == "c":
        x1 = cx.conj(x1)
    s1 = shape_of(x1)
    reject_out(out, "vecmat")
    res = matmul(sh.reshape(x1, s1[:-1] + (1, s1[-1])), x2)
    rs = shape_of(res)
    return sh.reshape(res, rs[:-2] + rs[-1:])


__all__ = ["interp", "unwrap", "percentile", "nanpercentile", "sort_complex", "matvec", "vecmat"]
