"""Sequences, series and second moments: convolve and correlate (1-D), polyval and vander,
cov and corrcoef, geomspace and logspace, and i0, modf and copy, NumPy's semantics.

All are compositions of fgrad's primitives (the full convolution of fgrad.ops.convolve, powers,
matrix products, linspace), differentiable in every array argument.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import FgradValueError
from ..ops import elementwise as ew
from ..ops import float_parts as fp
from ..ops import shape as sh
from ..ops.convolve import conv_full
from ..ops.special_bessel import i0 as _i0
from ._array import Array
from ._averages import average
from ._complex import conj, real
from ._creation import linspace
from ._elementwise import clip, power, sqrt, true_divide
from ._index import diagonal
from ._layout import order_arg
from ._linalg import dot
from ._math_extra import trunc
from ._policy import NUMPY
from ._shape import atleast_2d, concatenate, flip, squeeze, stack, transpose
from ._util import (
    as_value,
    fresh,
    broadcast_args,
    cast,
    dtype_of,
    int_arg,
    result_dtype,
    shape_of,
)


def _vector(x: Any, name: str) -> Any:
    x = as_value(x, name)
    if len(shape_of(x)) != 1:
        raise FgradValueError(f"{name}: object too deep for desired array (1-D arrays only, got shape {shape_of(x)})")
    if shape_of(x)[0] == 0:
        raise FgradValueError(f"{name}: v cannot be empty" if "v" in name else f"{name}: a cannot be empty")
    return x


def _crop(y: Any, start: int, size: int) -> Any:
    return sh.slice(y, [start], [start + size])


def convolve(a: Any, v: Any, mode: str = "full", *, policy=NUMPY) -> Any:
    """The discrete linear convolution of two 1-D arrays, NumPy's convolve: 'full' (length
    M + N - 1), 'same' (max(M, N), centred) or 'valid' (max(M, N) - min(M, N) + 1)."""
    a, v = _vector(a, "convolve"), _vector(v, "convolve's v")
    if mode not in ("full", "same", "valid"):
        raise FgradValueError(f"convolve: mode must be 'full', 'same' or 'valid', got {mode!r}")
    out_dt = result_dtype(a, v, policy=policy)
    dt = policy.float_dtype(out_dt)  # the convolution primitive computes in floats
    a, v = cast(a, dt), cast(v, dt)
    if shape_of(v)[0] > shape_of(a)[0]:  # convolution commutes: the longer one leads
        a, v = v, a
    n, m = shape_of(a)[0], shape_of(v)[0]
    out = conv_full(a, v)
    if mode == "same":
        out = _crop(out, (m - 1) // 2, n)
    elif mode == "valid":
        out = _crop(out, m - 1, n - m + 1)
    # integers stay integers, as in NumPy (the float sums of integer products are whole)
    return out if out_dt == dt else cast(ew.round(out), out_dt)


def correlate(a: Any, v: Any, mode: str = "valid", *, policy=NUMPY) -> Any:
    """The cross-correlation of two 1-D arrays, NumPy's correlate: c[k] = sum_n a[n + k] *
    conj(v[n]), in mode 'valid' (the default), 'same' or 'full'."""
    a, v = _vector(a, "correlate"), _vector(v, "correlate's v")
    if shape_of(v)[0] > shape_of(a)[0]:
        # NumPy: the roles swap and the result is reversed (and conjugated)
        return conj(flip(correlate(v, a, mode, policy=policy), 0))
    return convolve(a, flip(conj(v), 0), mode, policy=policy)


def polyval(p: Any, x: Any, *, policy=NUMPY) -> Any:
    """The polynomial with coefficients `p` (highest power first) at `x`, by Horner's rule;
    differentiable in the coefficients and in x."""
    p, x = as_value(p, "polyval"), as_value(x, "polyval")
    if len(shape_of(p)) != 1:
        raise FgradValueError(f"polyval: p must be a 1-D array of coefficients, got shape {shape_of(p)}")
    dt = result_dtype(p, x, policy=policy)
    p, x = cast(p, dt), cast(x, dt)
    y = ew.mul(x, ew.const(x, 0))
    for i in range(shape_of(p)[0]):
        y = ew.add(*broadcast_args("polyval", ew.mul(y, x), sh.reshape(sh.slice(p, [i], [i + 1]), ())))
    return y


def vander(x: Any, N: int | None = None, increasing: bool = False) -> Any:
    """The Vandermonde matrix of the 1-D `x`: columns x**(N-1), ..., x**0 (the reverse with
    `increasing`)."""
    x = _vector(x, "vander")
    x = cast(x, np.promote_types(dtype_of(x), np.int64))  # NumPy's dtype: at least int64 or float64
    n = shape_of(x)[0] if N is None else int_arg(N, "vander", "N")
    powers = range(n) if increasing else range(n - 1, -1, -1)
    if n == 0:
        return np.zeros((shape_of(x)[0], 0), dtype_of(x))
    return stack([power(x, k) for k in powers], axis=1)


def cov(m: Any, y: Any = None, rowvar: bool = True, bias: bool = False, ddof: int | None = None,
        fweights: Any = None, aweights: Any = None, *, dtype: Any = None, policy=NUMPY) -> Any:
    """The covariance matrix of the variables in the rows of `m` (columns with rowvar=False),
    and of `y`'s, NumPy's cov: normalised by N - 1 (N with `bias`, N - ddof with `ddof`),
    with integer frequency weights and observation weights as NumPy defines them."""
    m = as_value(m, "cov")
    if len(shape_of(m)) > 2:
        raise FgradValueError("cov: m has more than 2 dimensions")
    # NumPy computes covariances in float64 at least (float32 data included)
    dt = np.result_type(result_dtype(m, *([] if y is None else [as_value(y, "cov")]), policy=policy),
                        np.float64) if dtype is None else np.dtype(dtype)
    X = cast(atleast_2d(m), dt)
    if not rowvar and shape_of(X)[0] != 1:
        X = transpose(X)
    if y is not None:
        Y = cast(atleast_2d(as_value(y, "cov")), dt)
        if not rowvar and shape_of(Y)[0] != 1:
            Y = transpose(Y)
        X = concatenate([X, Y], axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    w = None
    if fweights is not None:
        w = cast(as_value(fweights, "cov's fweights"), dt)
    if aweights is not None:
        a = cast(as_value(aweights, "cov's aweights"), dt)
        w = a if w is None else ew.mul(w, a)
    avg, w_sum = average(X, axis=1, weights=None if w is None else sh.broadcast_in_dim(w, shape_of(X), (1,)),
                         returned=True)
    w_sum = sh.reshape(sh.slice(w_sum, [0], [1]), ()) if shape_of(w_sum) else w_sum
    if w is None:
        fact = ew.const(avg, float(shape_of(X)[1] - ddof))
    elif ddof == 0:
        fact = w_sum
    elif aweights is None:
        fact = ew.sub(w_sum, ew.const(w_sum, float(ddof)))
    else:
        a = cast(as_value(aweights, "cov's aweights"), dt)
        fact = ew.sub(w_sum, ew.div(ew.mul(ew.const(w_sum, float(ddof)), dot(w, a)), w_sum))
    Xc = ew.sub(X, sh.broadcast_in_dim(avg, shape_of(X), (0,)))
    Xw = Xc if w is None else ew.mul(Xc, sh.broadcast_in_dim(w, shape_of(X), (1,)))
    c = true_divide(dot(Xc, conj(transpose(Xw))), fact)
    return squeeze(c)


def corrcoef(x: Any, y: Any = None, rowvar: bool = True, *, dtype: Any = None, policy=NUMPY) -> Any:
    """The Pearson correlation coefficients, cov(x, y) / (std_i std_j), NumPy's corrcoef
    (clipped to [-1, 1] like NumPy's, so rounding cannot leave the interval)."""
    c = cov(x, y, rowvar, dtype=dtype, policy=policy)
    if not shape_of(c):
        return ew.div(c, c)  # one variable: 1 (NaN for a constant one), as NumPy
    d = diagonal(c)
    # the standard deviations in c's dtype: a real operand of a complex division would receive a
    # complex cotangent; the cast's transpose takes its real part
    s = cast(sqrt(real(d)), dtype_of(c))
    n = shape_of(d)[0]
    c = ew.div(c, sh.broadcast_in_dim(s, (n, n), (0,)))
    c = ew.div(c, sh.broadcast_in_dim(s, (n, n), (1,)))
    return clip(c, -1.0, 1.0) if dtype_of(c).kind != "c" else c


def logspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, base: Any = 10.0, dtype: Any = None,
             axis: int = 0) -> Any:
    """`num` numbers spaced evenly on a log scale: base ** linspace(start, stop, num)."""
    y = linspace(start, stop, num=num, endpoint=endpoint, axis=axis)
    out = power(base, y)
    return out if dtype is None else cast(out, np.dtype(dtype))


def geomspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, dtype: Any = None, axis: int = 0) -> Any:
    """`num` numbers from `start` to `stop` in a geometric progression (both of one sign,
    nonzero), NumPy's geomspace: the ends are exactly start and stop."""
    start, stop = as_value(start, "geomspace"), as_value(stop, "geomspace")
    dt = np.result_type(result_dtype(start, stop), np.float64)  # NumPy: at least float64
    start, stop = cast(start, dt), cast(stop, dt)
    if shape_of(start) or shape_of(stop) or axis != 0:
        raise FgradValueError("geomspace: fgrad takes scalar start and stop (axis=0)")
    num = int_arg(num, "geomspace", "num")
    sign = ew.sign(start)
    log_start, log_stop = ew.log(ew.abs(start)), ew.log(ew.abs(stop))
    out = ew.mul(sign, ew.exp(linspace(log_start, log_stop, num=num, endpoint=endpoint)))
    if num > 0:  # NumPy sets the ends exactly
        parts = [sh.reshape(start, (1,)), sh.slice(out, [1], [num - 1 if endpoint else num])]
        if endpoint and num > 1:
            parts.append(sh.reshape(stop, (1,)))
        out = concatenate(parts) if num > 1 else sh.reshape(start, (1,))
    return out if dtype is None else cast(out, np.dtype(dtype))


def i0(x: Any) -> Any:
    """The modified Bessel function of the first kind, order 0 (NumPy's i0; scipy.special.i0)."""
    x = as_value(x, "i0")
    return _i0(cast(x, NUMPY.float_dtype(dtype_of(x))))


def modf(x: Any) -> tuple:
    """(fractional part, integral part), both with the sign of x, NumPy's modf. The fractional
    part has derivative 1 (between the integers), the integral part none."""
    x = as_value(x, "modf")
    x = cast(x, NUMPY.float_dtype(dtype_of(x)))
    whole = trunc(x)
    # infinities are whole (their fraction is a signed zero): kept out of the subtraction,
    # where inf - inf would be NaN
    infinite = ew.isinf(x)
    finite = ew.select(infinite, ew.const(x, 0.0), x)
    # x - trunc(x) for x >= +0, -(trunc(x) - x) (the same number) for x <= -0: a whole x then
    # gives x's signed zero, and the fraction keeps derivative 1 there (frac(x) = x near 0)
    w = trunc(finite)
    frac = ew.select(fp.signbit(x), ew.neg(ew.sub(w, finite)), ew.sub(finite, w))
    return frac, whole


def copy(a: Any, order: str = "K", subok: bool = False) -> Any:
    """A new array with the values of `a`, NumPy's copy (a traced value, immutable, as is).

    Args:
        a: an array-like.
        order: the memory layout of the copy: 'C', 'F', 'A' (Fortran order if `a` is
            Fortran-contiguous, C order otherwise) or 'K' (a's own stride order).
        subok: keep an ndarray subclass (np.matrix, ...) instead of giving a plain array of
            its data; fgrad.numpy's own arrays stay fgrad arrays either way.

    Returns:
        An array that shares no memory with `a`.
    """
    v = as_value(a, "copy")
    order = order_arg(order, "copy")
    if isinstance(v, (np.ndarray, np.generic)):
        return np.array(v, order=order, copy=True, subok=bool(subok) or type(v) is Array)
    return fresh(v, v)


__all__ = ["convolve", "correlate", "polyval", "vander", "cov", "corrcoef", "logspace", "geomspace", "i0", "modf",
           "copy"]
