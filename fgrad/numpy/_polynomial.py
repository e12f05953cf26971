"""NumPy's legacy polynomial functions (coefficients highest power first): poly, polyadd,
polysub, polymul, polydiv, polyder, polyint, polyfit and roots (polyval is in _series).

Each is written from fgrad.numpy functions with NumPy's algorithm and dtype rules, so each is
differentiable in its coefficient arrays to every order: poly and polymul are products,
polydiv NumPy's long division, polyfit a scaled least-squares solve (lstsq), roots the
eigenvalues of the companion matrix (eigvals; the derivative is undefined at repeated roots).
Three results have a length that depends on the values: polydiv trims the remainder's
leading zeros and roots strips the leading and trailing zero coefficients, as NumPy does;
both need concrete values for that (under jit or vmap pass trim_leading_zeros=False /
strip_zeros=False, JAX's options, for results of a static length); poly of complex zeros
returns real coefficients when the zeros come in conjugate pairs (which needs them concrete).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import FgradTypeError, FgradValueError
from ..ops import shape as sh
from ._complex import real
from ._elementwise import add, divide, multiply, negative, sqrt, subtract
from ._index import getitem
from ._insertion import concrete
from ._linalg import dot, outer
from ._reductions import sum as _sum
from ._series import convolve, vander
from ._shape import atleast_1d, concatenate, reshape, stack
from ._util import as_value, cast, dtype_of, int_arg, shape_of
from .linalg import eigvals, inv, lstsq


def _coefficients(p: Any, name: str) -> Any:
    return atleast_1d(as_value(p, name))


def _padded_pair(a1: Any, a2: Any, name: str) -> tuple:
    """a1 and a2 as 1-d arrays of one length, the shorter padded with leading zeros (its dtype)."""
    a1, a2 = _coefficients(a1, name), _coefficients(a2, name)
    n1, n2 = shape_of(a1)[0], shape_of(a2)[0]
    if n1 < n2:
        a1 = concatenate([np.zeros(n2 - n1, dtype_of(a1)), a1])
    elif n2 < n1:
        a2 = concatenate([np.zeros(n1 - n2, dtype_of(a2)), a2])
    return a1, a2


def polyadd(a1: Any, a2: Any) -> Any:
    """The sum of two polynomials (coefficient arrays, highest power first; the shorter is
    padded with leading zeros), NumPy's polyadd."""
    return add(*_padded_pair(a1, a2, "polyadd"))


def polysub(a1: Any, a2: Any) -> Any:
    """The difference a1 - a2 of two polynomials, NumPy's polysub."""
    return subtract(*_padded_pair(a1, a2, "polysub"))


def polymul(a1: Any, a2: Any) -> Any:
    """The product of two polynomials (the full convolution of their coefficients), NumPy's
    polymul."""
    return convolve(_coefficients(a1, "polymul"), _coefficients(a2, "polymul"))


def polyder(p: Any, m: int = 1) -> Any:
    """The m-th derivative of the polynomial p, NumPy's polyder (integer coefficients stay
    integers)."""
    m = int_arg(m, "polyder", "m")
    if m < 0:
        raise FgradValueError(f"polyder: Order of derivative must be positive (see polyint), got m={m}")
    p = as_value(p, "polyder")
    if not shape_of(p):
        raise FgradTypeError("polyder: p must be a 1-d array of coefficients, got a 0-d value (len() of unsized "
                             "object)")
    for _ in range(m):
        n = shape_of(p)[0] - 1
        p = multiply(getitem(p, slice(None, -1)), np.arange(n, 0, -1))
    return p


def polyint(p: Any, m: int = 1, k: Any = None) -> Any:
    """The m-th antiderivative of the polynomial p, NumPy's polyint; `k` holds the
    integration constants (a scalar for all, or m values, the first for the first
    integration; default 0). Differentiable in p and k."""
    m = int_arg(m, "polyint", "m")
    if m < 0:
        raise FgradValueError(f"polyint: Order of integral must be positive (see polyder), got m={m}")
    k = atleast_1d(np.zeros(m, float) if k is None else as_value(k, "polyint"))
    if shape_of(k)[0] == 1 and m > 1:
        k = multiply(getitem(k, 0), np.ones(m, float))
    if shape_of(k)[0] < m:
        raise FgradValueError(f"polyint: k must be a scalar or a rank-1 array of length 1 or >m (got length "
                              f"{shape_of(k)[0]} for m={m})")
    p = as_value(p, "polyint")
    for i in range(m):
        n = shape_of(p)[0]
        p = concatenate([divide(p, np.arange(n, 0, -1)), reshape(getitem(k, i), (1,))])
    return p


def polydiv(u: Any, v: Any, *, trim_leading_zeros: bool = True) -> tuple:
    """(quotient, remainder) of the polynomial division u / v, NumPy's polydiv (its long
    division; the computation is in a float or complex dtype). NumPy trims the remainder's
    leading (near-)zeros, which needs u and v concrete; `trim_leading_zeros=False` (JAX's
    option) keeps the remainder at u's length, which also works under jit and vmap."""
    u = add(_coefficients(u, "polydiv"), 0.0)
    v = add(_coefficients(v, "polydiv"), 0.0)
    dt = np.result_type(dtype_of(u), dtype_of(v))
    u, v = cast(u, dt), cast(v, dt)
    m, n = shape_of(u)[0] - 1, shape_of(v)[0] - 1
    scale = divide(1.0, getitem(v, 0))
    r = u
    q = []
    for k in range(m - n + 1):
        d = multiply(scale, getitem(r, k))
        q.append(d)
        shifted = concatenate([np.zeros(k, dt), v, np.zeros(m - n - k, dt)])
        r = subtract(r, multiply(d, shifted))
    q = stack(q) if q else np.zeros(1, dt)
    if trim_leading_zeros:
        rv = concrete(r, "polydiv", "remainder (pass trim_leading_zeros=False for a remainder of u's length)")
        start = 0
        while start < rv.shape[0] - 1 and np.allclose(rv[start], 0, rtol=1e-14):
            start += 1
        r = getitem(r, slice(start, None))
    return q, r


def poly(seq_of_zeros: Any) -> Any:
    """The coefficients (highest power first, leading 1) of the monic polynomial with the
    given zeros, or of a square matrix's characteristic polynomial, NumPy's poly. Integer
    zeros give float64; complex zeros in conjugate pairs give real coefficients."""
    z = as_value(seq_of_zeros, "poly")
    shape = shape_of(z)
    matrix = len(shape) == 2 and shape[0] == shape[1] and shape[0] != 0
    if matrix:
        real_matrix = dtype_of(z).kind != "c"
        z = eigvals(z)
    elif len(shape) == 1:
        dt = dtype_of(z)
        z = cast(z, np.dtype(np.float32 if dt == np.float32 else np.complex64 if dt == np.complex64 else
                             np.complex128 if dt.kind == "c" else np.float64))
    else:
        raise FgradValueError(f"poly: input must be 1d or non-empty square 2d array, got shape {shape}")
    n = shape_of(z)[0]
    if n == 0:
        return 1.0
    dt = dtype_of(z)
    a = np.ones(1, dt)
    for i in range(n):   # a(x) * (x - z_i), one zero at a time (NumPy's convolutions)
        a = subtract(concatenate([a, np.zeros(1, dt)]), multiply(getitem(z, i), concatenate([np.zeros(1, dt), a])))
    if dt.kind == "c":
        if matrix and real_matrix:
            return real(a)   # a real matrix's characteristic polynomial is real
        zc = concrete(z, "poly", "complex zeros (whether they pair up as conjugates)")
        if np.all(np.sort(zc) == np.sort(zc.conjugate())):
            return real(a)
    return a


def polyfit(x: Any, y: Any, deg: int, rcond: float | None = None, full: bool = False, w: Any = None,
            cov: Any = False) -> Any:
    """The least-squares polynomial fit of degree `deg` to the points (x, y) (y may hold one
    data set per column), NumPy's polyfit: the Vandermonde matrix, columns scaled to unit
    norm, solved by lstsq with rcond = len(x) * eps by default. `full` returns (coefficients,
    residuals, rank, singular values, rcond); `cov` (True or 'unscaled') also returns the
    covariance of the coefficients. Differentiable in x, y and w (while the rank does not
    change)."""
    order = int_arg(deg, "polyfit", "deg") + 1
    x = add(as_value(x, "polyfit"), 0.0)
    y = add(as_value(y, "polyfit"), 0.0)
    if order - 1 < 0:
        raise FgradValueError("polyfit: expected deg >= 0")
    xs, ys = shape_of(x), shape_of(y)
    if len(xs) != 1:
        raise FgradTypeError(f"polyfit: expected 1D vector for x, got shape {xs}")
    if xs[0] == 0:
        raise FgradTypeError("polyfit: expected non-empty vector for x")
    if not 1 <= len(ys) <= 2:
        raise FgradTypeError(f"polyfit: expected 1D or 2D array for y, got shape {ys}")
    if xs[0] != ys[0]:
        raise FgradTypeError(f"polyfit: expected x and y to have same length, got {xs[0]} and {ys[0]}")
    if rcond is None:
        rcond = xs[0] * np.finfo(dtype_of(x)).eps
    lhs = vander(x, order)
    rhs = y
    if w is not None:
        w = add(as_value(w, "polyfit"), 0.0)
        if len(shape_of(w)) != 1:
            raise FgradTypeError(f"polyfit: expected a 1-d array for weights, got shape {shape_of(w)}")
        if shape_of(w)[0] != ys[0]:
            raise FgradTypeError(f"polyfit: expected w and y to have the same length, got {shape_of(w)[0]} and "
                                 f"{ys[0]}")
        lhs = multiply(lhs, reshape(w, (-1, 1)))
        rhs = multiply(rhs, reshape(w, (-1, 1)) if len(ys) == 2 else w)
    scale = sqrt(_sum(multiply(lhs, lhs), axis=0))
    lhs = divide(lhs, scale)
    c, resids, rank, s = lstsq(lhs, rhs, rcond)
    c = divide(c, reshape(scale, (-1, 1)) if len(ys) == 2 else scale)
    if full:
        return c, resids, rank, s, rcond
    if cov:
        vbase = divide(inv(dot(sh.transpose(lhs, (1, 0)), lhs)), outer(scale, scale))
        if cov == "unscaled":
            fac = 1.0
        else:
            if xs[0] <= order:
                raise FgradValueError("polyfit: the number of data points must exceed order to scale the "
                                      f"covariance matrix (got {xs[0]} points for order {order})")
            fac = divide(resids, float(xs[0] - order))
        if len(ys) == 1:
            return c, multiply(vbase, fac)
        return c, multiply(reshape(vbase, shape_of(vbase) + (1,)), fac)
    return c


def roots(p: Any, *, strip_zeros: bool = True) -> Any:
    """The roots of the polynomial with coefficients p (highest power first), NumPy's roots:
    the eigenvalues of the companion matrix, with one zero root per trailing zero coefficient.
    NumPy strips leading and trailing zero coefficients and returns real roots when every
    root is real, which needs p concrete; `strip_zeros=False` (JAX's option) keeps the zeros
    and always returns complex roots, which works under jit and vmap (a leading zero then
    gives inf/NaN roots). Differentiable in p where the roots are simple."""
    p = atleast_1d(as_value(p, "roots"))
    if len(shape_of(p)) != 1:
        raise FgradValueError(f"roots: Input must be a rank-1 array, got shape {shape_of(p)}")
    trailing = 0
    if strip_zeros:
        pv = concrete(p, "roots", "coefficients (pass strip_zeros=False to keep the zeros)")
        nz = np.nonzero(pv.ravel())[0]
        if len(nz) == 0:
            return np.zeros(0, np.float64)   # NumPy's array([])
        trailing = len(pv) - int(nz[-1]) - 1
        p = getitem(p, slice(int(nz[0]), int(nz[-1]) + 1))
    if dtype_of(p).kind not in "fc":
        p = cast(p, np.dtype(np.float64))
    n = shape_of(p)[0]
    cdt = np.result_type(dtype_of(p), np.complex64)
    if n > 1:
        first = reshape(divide(negative(getitem(p, slice(1, None))), getitem(p, 0)), (1, n - 1))
        companion = concatenate([first, np.eye(n - 2, n - 1, dtype=dtype_of(p))], axis=0)
        r = cast(eigvals(companion), cdt)
    else:
        r = np.zeros(0, cdt)
    if trailing:
        r = concatenate([r, np.zeros(trailing, cdt)])
    if strip_zeros and np.all(np.imag(concrete(r, "roots", "roots")) == 0):
        return real(r)   # NumPy's eigvals (so its roots) are real when every root is
    return r


__all__ = ["poly", "polyadd", "polysub", "polymul", "polydiv", "polyder", "polyint", "polyfit", "roots"]
