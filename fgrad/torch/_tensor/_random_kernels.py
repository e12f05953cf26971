"""Compiled (Numba) transforms of fgrad.torch's RNG, for large draws.

_random.py keeps the NumPy reference of each transform (used for small draws and without Numba);
these loops compute the same values, rounding for rounding: torch's kernels on uniforms that
_random.py drew from the MT19937 stream. They exist because the references either loop in Python
over elements (libm's log/sin/cos in float64, randperm's swaps) or emulate a fused multiply-add
with a dozen NumPy passes; here the FMA is LLVM's (the CPU's instruction, rounded once), and
math.log/log1p/sin/cos are libm's, as in torch's compiled C++.

Importing this module imports Numba and compiles on first use (cached on disk), so _random.py
imports it only when a draw is large enough to pay for that.
"""
from __future__ import annotations

import math

import numba
import numpy as np
from numba.core import types
from numba.extending import intrinsic

_jit = numba.njit(cache=True, nogil=True)
_F = np.float32


@intrinsic
def _fma(typingctx, a, b, c):
    """a * b + c rounded once (llvm.fma), for three floats of one type."""
    if not (isinstance(a, types.Float) and a == b == c):
        return None

    def codegen(context, builder, signature, args):
        return builder.fma(*args)
    return a(a, b, c), codegen


# avx_mathfun.h's constants, as float32 (Numba keeps float32 arithmetic float32 only when every
# operand is float32)
_TINY = _F(np.finfo(_F).tiny)
_SQRTHF = _F(0.707106781186547524)
_LOG_P = tuple(_F(c) for c in (7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1,
                                1.4249322787E-1, -1.6668057665E-1, 2.0000714765E-1, -2.4999993993E-1,
                                3.3333331174E-1))
_LOG_Q1, _LOG_Q2 = _F(-2.12194440e-4), _F(0.693359375)
_FOPI = _F(1.27323954473516)
_DP1, _DP2, _DP3 = _F(-0.78515625), _F(-2.4187564849853515625e-4), _F(-3.77489497744594108e-8)
_COS_P0, _COS_P1, _COS_P2 = _F(2.443315711809948E-005), _F(-1.388731625493765E-003), _F(4.166664568298827E-002)
_SIN_P0, _SIN_P1, _SIN_P2 = _F(-1.9515295891E-4), _F(8.3321608736E-3), _F(-1.6666654611E-1)
_ZERO, _HALF, _ONE, _TWO = _F(0), _F(0.5), _F(1), _F(2)
_TWO_PI_F = _F(2.0 * math.pi)
_TWO_PI = 2.0 * math.pi


@_jit
def _log_f32(x):
    """log256_ps for one lane: Cephes logf in float32, each multiply feeding an add fused as
    torch's compiled AVX2 code fuses it (see _random._log8, the reference)."""
    if x < _TINY:
        x = _TINY
    m, ex = math.frexp(x)  # m in [0.5, 1): the mantissa avx_mathfun extracts by masking bits
    e = _F(ex)
    if m < _SQRTHF:  # below sqrt(1/2): log(2m) - log 2, with 2m - 1 as (m - 1) + m
        e = e - _ONE
        m = (m - _ONE) + m
    else:
        m = m - _ONE
    z = m * m
    y = _LOG_P[0]
    y = _fma(y, m, _LOG_P[1])
    y = _fma(y, m, _LOG_P[2])
    y = _fma(y, m, _LOG_P[3])
    y = _fma(y, m, _LOG_P[4])
    y = _fma(y, m, _LOG_P[5])
    y = _fma(y, m, _LOG_P[6])
    y = _fma(y, m, _LOG_P[7])
    y = _fma(y, m, _LOG_P[8])
    y = _fma(y * m, z, e * _LOG_Q1)
    y = _fma(-z, _HALF, y)
    return _fma(e, _LOG_Q2, m + y)


@_jit
def _sincos_f32(x):
    """sincos256_ps for one lane (x >= 0): Cephes sinf/cosf in float32 (see _random._sincos8)."""
    j = np.int32(x * _FOPI)  # truncation, as cvttps
    j = (j + 1) & ~1
    y = _F(j)
    sin_negative = (j & 4) != 0
    sine_poly = (j & 2) == 0
    cos_negative = ((j - 2) & 4) == 0
    x = _fma(y, _DP1, x)
    x = _fma(y, _DP2, x)
    x = _fma(y, _DP3, x)
    z = x * x
    c = _fma(_COS_P0, z, _COS_P1)
    c = _fma(c, z, _COS_P2)
    c = _fma(c * z, z, -(z * _HALF)) + _ONE
    s = _fma(_SIN_P0, z, _SIN_P1)
    s = _fma(s, z, _SIN_P2)
    s = _fma(s * z, x, x)
    sin, cos = (s, c) if sine_poly else (c, s)
    return (-sin if sin_negative else sin), (-cos if cos_negative else cos)


@_jit
def normal_blocks_f32(data, mean, std):
    """normal_fill_16_AVX2 over `data` (float32 uniforms, a multiple of 16 long) in place: per
    block of 16, Box-Muller pairs (data[j], data[j + 8]) become cos into j and sin into j + 8."""
    for b in range(0, data.size, 16):
        for j in range(b, b + 8):
            radius = math.sqrt(-_TWO * _log_f32(_ONE - data[j]))
            sin, cos = _sincos_f32(_TWO_PI_F * data[j + 8])
            data[j] = _fma(radius * cos, std, mean)
            data[j + 8] = _fma(radius * sin, std, mean)


@_jit
def normal_blocks_f64(data, mean, std):
    """normal_fill_16<double> over `data` (float64 uniforms, a multiple of 16 long) in place,
    with libm's log/cos/sin."""
    for b in range(0, data.size, 16):
        for j in range(b, b + 8):
            radius = math.sqrt(-2.0 * math.log(1.0 - data[j]))
            theta = _TWO_PI * data[j + 8]
            data[j] = _fma(radius * math.cos(theta), std, mean)
            data[j + 8] = _fma(radius * math.sin(theta), std, mean)


@_jit
def affine(u, scale, shift):
    """u * scale + shift, fused (uniform_'s transform), in u's dtype."""
    out = np.empty_like(u)
    for i in range(u.size):
        out[i] = _fma(u[i], scale, shift)
    return out


@_jit
def scaled_log1p_neg(u, scale):
    """scale * log1p(-u) in float64 with libm's log1p (exponential_'s transform)."""
    out = np.empty(u.size, np.float64)
    for i in range(u.size):
        out[i] = scale * math.log1p(-u[i])
    return out


@_jit
def randperm_swaps(draws, n):
    """randperm for n < 2**32 / 20: Fisher-Yates from the front, swapping r[i] with
    r[i + draws[i] % (n - i)] (draws: n - 1 32-bit values)."""
    perm = np.arange(n)
    for i in range(n - 1):
        j = i + np.int64(draws[i] % np.uint64(n - i))
        perm[i], perm[j] = perm[j], perm[i]
    return perm


@_jit
def randperm_inside_out(draws, n):
    """randperm for larger n: the inside-out Fisher-Yates with 64-bit draws."""
    perm = np.empty(n, np.int64)
    for i in range(n):
        z = np.int64(draws[i] % np.uint64(i + 1))
        perm[i] = perm[z]
        perm[z] = i
    return perm


@_jit
def box_muller_pairs(u):
    """normal_distribution<double> without its cache: per pair (u1, u2) of `u`, r * cos(theta)
    then r * sin(theta), r = sqrt(-2 log1p(-u2)), theta = 2 pi u1."""
    out = np.empty(u.size, np.float64)
    for i in range(0, u.size - 1, 2):
        r = math.sqrt(-2.0 * math.log1p(-u[i + 1]))
        theta = _TWO_PI * u[i]
        out[i] = r * math.cos(theta)
        out[i + 1] = r * math.sin(theta)
    return out


@_jit
def geometric(u, denominator):
    """ceil(log(u) / denominator) (geometric_'s transform, denominator = log1p(-p))."""
    out = np.empty(u.size, np.float64)
    for i in range(u.size):
        out[i] = math.ceil(math.log(u[i]) / denominator) if u[i] > 0 else math.inf
    return out


@_jit
def cauchy(u, median, sigma):
    """median + sigma * tan(pi * (u - 0.5)), fused (cauchy_'s transform)."""
    out = np.empty(u.size, np.float64)
    for i in range(u.size):
        out[i] = _fma(math.tan(math.pi * (u[i] - 0.5)), sigma, median)
    return out


@_jit
def exp(x):
    """libm's exp elementwise (log_normal_'s transform)."""
    out = np.empty(x.size, np.float64)
    for i in range(x.size):
        out[i] = math.exp(x[i])
    return out
