"""Vectorisable float64 math for compiled kernels: exp, log, tanh, sin, cos and the logistic
function written without calls and without branches (range reduction by arithmetic, special
values by selects), so that a kernel computes them on vectors of elements. The C library's
`exp` etc. compute one element at a time (tanh about 15 ns), which is slower than NumPy's
SIMD loops; these take about 1 ns an element.

This Python source is the one definition. A region's kernel (llvm_kernels.py) translates it
into LLVM IR on vectors, `_f2i`/`_i2f` (a float64's bits as an int64 and back) as bitcasts,
inlined at each use or, in kernels under `INLINE` elements, called; loops.py's Numba loops
import it from one generated module (kernels.py, made from `numba_source`, compiled once
and cached by Numba), with `_f2i`/`_i2f` as Numba intrinsics. Here they are plain Python, so
the functions also run, slowly, on their own: every runtime computes the same IEEE
operations in the same order and gives the same bits (tests/interpreters/compile/
test_vmath_llvm.py and test_lowerings.py check that, and the errors below against NumPy and a
long-double reference).

A float32 argument takes the float32 versions (`VECTOR32`, chosen by the argument's dtype
only): the same reductions in float64, then polynomials of about half the degree, enough for
a float64 value within 2^-28 of the function's relative to it; the caller rounds it to
float32 once. About half the float64 functions' operations, and within 1 float32 ulp of the
exact value (tests/interpreters/compile/test_vmath_float32.py: a sweep over every 97th float32, and
the compiled kernels' bits against these functions run as plain Python):

    fg_vexpf, fg_vlogisticf, fg_vtanhf, fg_vlogf, fg_vsinf, fg_vcosf    1  (0.50 to 0.53)

Maximum errors in float64 ulps (the bound the tests check against long double on 10^6
values from subnormals to where each function saturates; the worst measured in brackets,
NumPy's own on the same values after the slash):

    fg_vexp       1  (0.90 / 0.72)  exp: Cody-Waite reduction by ln 2, degree-13 Taylor polynomial
    fg_vlog       1  (0.75 / 0.51)  log: fdlibm's e_log.c reduction and polynomial
    fg_vtanh      3  (2.43 / 1.15)  tanh: -u / (u + 2) with u = expm1(-2|x|)
    fg_vlogistic  3  (2.07 / 1.97)  1 / (1 + exp(-x)), as fgrad's impl computes it
    fg_vsin       1  (0.73 / 0.51)  sin and cos: fdlibm's kernels after a three-part reduction
    fg_vcos       1  (0.73 / 0.51)  by pi/2, valid for |x| <= TRIG_MAX; a kernel whose sine or
                                    cosine meets a larger or infinite argument computes with
                                    the C library instead
"""
from __future__ import annotations

import inspect
import struct

import numpy as np

# Kernels over at least this many elements compute with these functions, smaller ones with
# the C library's, which compiles faster: a kernel of a few hundred elements already repays
# vmath's compilation within a few hundred calls, a smaller one only after thousands.
# Kernels over INLINE elements or more inline the functions at each use (the fastest loop;
# compiling them grows with each use), smaller ones call one copy of each (a loop about a
# third slower that compiles several times faster), so a size whose run is short does not
# wait on a long compilation. Functions of the shape only: what a program computes never
# depends on measured speed (scalar.MATH), and both ways give the same bits.
LARGE = 256
INLINE = 1024
# Arguments of sin and cos up to this size are reduced exactly enough by the three-part
# reduction (n * _PIO2_1 is exact while n < 2^20); larger ones go to the C library.
TRIG_MAX = 1.0e6

_INV_LN2 = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01  # 32 significant bits: k * _LN2_HI is exact
_LN2_LO = 1.90821492927058770002e-10
_SHIFT = 6755399441055744.0           # 1.5 * 2^52: (v + _SHIFT) - _SHIFT rounds v to an integer
_TWO_OVER_PI = 6.36619772367581382433e-01
_PIO2_1 = 1.57079632673412561417e+00   # first 33 bits of pi/2
_PIO2_2 = 6.07710050630396597660e-11   # next 33 bits
_PIO2_3 = 2.02226624879595063154e-21   # pi/2 - _PIO2_1 - _PIO2_2
_SQRT2 = 1.4142135623730951
_LN2 = 0.6931471805599453
_TWO54 = 18014398509481984.0


def _f2i(x):
    """The bits of float64 `x` as an int64 (a bitcast in compiled code)."""
    return struct.unpack("<q", struct.pack("<d", x))[0]


def _i2f(i):
    """The float64 with bits `i` (a bitcast in compiled code)."""
    return struct.unpack("<d", struct.pack("<q", int(i)))[0]


def _exp_parts(c):
    """k and expm1(r) for c = k ln2 + r, |r| <= ln2 / 2 (|c| < 2^51): the Taylor polynomial
    of degree 13, whose truncation error is below 2^-60, with its leading term exact."""
    k = (c * _INV_LN2 + _SHIFT) - _SHIFT
    r = (c - k * _LN2_HI) - k * _LN2_LO
    p = 1.0 / 6227020800.0
    p = 1.0 / 479001600.0 + r * p
    p = 1.0 / 39916800.0 + r * p
    p = 1.0 / 3628800.0 + r * p
    p = 1.0 / 362880.0 + r * p
    p = 1.0 / 40320.0 + r * p
    p = 1.0 / 5040.0 + r * p
    p = 1.0 / 720.0 + r * p
    p = 1.0 / 120.0 + r * p
    p = 1.0 / 24.0 + r * p
    p = 1.0 / 6.0 + r * p
    p = 0.5 + r * p
    return np.int64(k), r + (r * r) * p


def fg_vexp(x):
    """exp(x) = 2^k (1 + expm1(r)), the power of two applied as two factors so that results
    in the subnormal range are rounded once."""
    d = np.float64(x)
    c = d if d > -746.0 else -746.0  # (NaN too, restored below): exp(-746) rounds to 0
    c = c if c < 710.0 else 710.0    # exp(710) overflows to inf
    k, p = _exp_parts(c)
    k1 = k >> 1
    s1 = _i2f((k1 + 1023) << 52)
    s2 = _i2f((k - k1 + 1023) << 52)
    res = ((1.0 + p) * s1) * s2
    return res if d == d else d


def _expm1_neg(y):
    """expm1(y) for y <= 0 (or NaN): 2^k (expm1(r) + 1) - 1, with 2^k - 1 exact."""
    k, p = _exp_parts(y if y > -60.0 else -60.0)  # expm1(-60) rounds to -1
    s = _i2f((k + 1023) << 52)
    return s * p + (s - 1.0)


def fg_vtanh(x):
    """tanh(x) = sign(x) * -u / (u + 2), u = expm1(-2|x|) in (-1, 0]: no cancellation for
    small |x|, and exactly +-1 for large ones."""
    d = np.float64(x)
    a = d if d >= 0.0 else -d
    u = _expm1_neg(-2.0 * a)
    t = -u / (u + 2.0)
    t = t if d >= 0.0 else -t
    t = d if d == 0.0 else t  # keeps -0.0
    return t if d == d else d


def fg_vlogistic(x):
    """1 / (1 + exp(-x)) as fgrad's impl computes it: e = exp(-|x|), then 1 / (1 + e) for
    x >= 0 and e / (1 + e) below."""
    d = np.float64(x)
    a = d if d >= 0.0 else -d
    e = fg_vexp(-a)
    res = (1.0 if d >= 0.0 else e) / (1.0 + e)
    return res if d == d else d


def fg_vlog(x):
    """log(x), fdlibm's e_log.c: x = 2^k m with m in [sqrt(2)/2, sqrt(2)), f = m - 1,
    log(1 + f) = f - f^2/2 + s (f^2/2 + R(s^2)) with s = f / (2 + f); subnormal x are
    scaled by 2^54 first."""
    d = np.float64(x)
    sub = d < 2.2250738585072014e-308
    v = d * _TWO54 if sub else d
    bits = _f2i(v)
    k = ((bits >> 52) & 0x7FF) - (1077 if sub else 1023)
    m = _i2f((bits & 0x000FFFFFFFFFFFFF) | 0x3FF0000000000000)
    big = m > _SQRT2
    m = m * 0.5 if big else m
    dk = np.float64(k + 1 if big else k)
    f = m - 1.0
    s = f / (2.0 + f)
    z = s * s
    w = z * z
    t1 = w * (3.999999999940941908e-01 + w * (2.222219843214978396e-01 + w * 1.531383769920937332e-01))
    t2 = z * (6.666666666666735130e-01 + w * (2.857142874366239149e-01
                                              + w * (1.818357216161805012e-01 + w * 1.479819860511658591e-01)))
    hfsq = 0.5 * f * f
    res = dk * _LN2_HI - ((hfsq - (s * (hfsq + t2 + t1) + dk * _LN2_LO)) - f)
    res = res if d < np.inf else d          # log(inf) = inf
    res = res if d != 0.0 else -np.inf      # log(+-0) = -inf
    return res if d >= 0.0 else (d - d) / (d - d)  # NaN for x < 0 and for NaN


def _ksin(x, y):
    """fdlibm's __kernel_sin(x, y, 1): sin(x + y) for |x| <= pi/4, y the tail of x."""
    z = x * x
    v = z * x
    r = 8.33333333332248946124e-03 + z * (-1.98412698298579493134e-04 + z * (
        2.75573137070700676789e-06 + z * (-2.50507602534068634195e-08 + z * 1.58969099521155010221e-10)))
    return x - ((z * (0.5 * y - v * r) - y) - v * -1.66666666666666324348e-01)


def _kcos(x, y):
    """FreeBSD's __kernel_cos(x, y): cos(x + y) for |x| <= pi/4, y the tail of x."""
    z = x * x
    w = z * z
    r = z * (4.16666666666666019037e-02 + z * (-1.38888888888741095749e-03 + z * 2.48015872894767294178e-05)) \
        + w * w * (-2.75573143513906633035e-07 + z * (2.08757232129817482790e-09 + z * -1.13596475577881948265e-11))
    hz = 0.5 * z
    w = 1.0 - hz
    return w + (((1.0 - w) - hz) + (z * r - x * y))


def _reduce(d):
    """n and y_hi + y_lo = d - n pi/2 (|y| <= pi/4), for |d| <= TRIG_MAX; any other d gives
    some finite values (the caller selects NaN, or recomputes with the C library)."""
    c = d if d < TRIG_MAX else 0.0      # (NaN too)
    c = c if c > -TRIG_MAX else 0.0
    n = (c * _TWO_OVER_PI + _SHIFT) - _SHIFT
    t = c - n * _PIO2_1                 # exact
    w = n * _PIO2_2                     # exact
    r = t - w
    w = n * _PIO2_3 - ((t - r) - w)     # the next part, less the rounding error of r
    hi = r - w
    lo = (r - hi) - w
    return np.int64(n), hi, lo


def _vtrig(x, quadrant):
    """sin(x + quadrant pi/2) for |x| <= TRIG_MAX (NaN for infinities and NaN): the kernel
    of the quadrant that n + quadrant falls in, signed."""
    d = np.float64(x)
    n, hi, lo = _reduce(d)
    s = _ksin(hi, lo)
    c = _kcos(hi, lo)
    q = (n + quadrant) & 3
    res = s if (q & 1) == 0 else c
    res = res if q < 2 else -res
    return res if (d - d) == 0.0 else d - d


def fg_vsin(x):
    """sin(x), |x| <= TRIG_MAX (and -0.0 for -0.0)."""
    res = _vtrig(x, 0)
    return x if x == 0.0 else res


def fg_vcos(x):
    """cos(x), |x| <= TRIG_MAX."""
    return _vtrig(x, 1)


# --- float32 -----------------------------------------------------------------------------
# A float32 result needs a float64 value within a few 2^-30 of the function's, not the 2^-53
# of the functions above: these take a float32 argument, reduce it exactly as those do, and
# evaluate polynomials of about half their degree (fitted, by iterated weighted least squares
# on Chebyshev nodes, to the relative error after each one's name). The caller rounds the
# float64 result to float32 once.


def _expm1_f(r):
    """expm1(r) for |r| <= ln2 / 2: r + r^2 P(r), relative error below 5e-10."""
    p = 1.9857781896042456e-04
    p = 1.3933597556299224e-03 + r * p
    p = 8.333360740893395e-03 + r * p
    p = 4.166646552795639e-02 + r * p
    p = 1.6666666532288035e-01 + r * p
    p = 5.000000013379494e-01 + r * p
    return r + (r * r) * p


def _exp_parts_f(c):
    """k and expm1(r) for c = k ln2 + r, |r| <= ln2 / 2 (|c| < 2^20)."""
    k = (c * _INV_LN2 + _SHIFT) - _SHIFT
    r = (c - k * _LN2_HI) - k * _LN2_LO
    return np.int64(k), _expm1_f(r)


def fg_vexpf(x):
    """exp(x) of a float32: 2^k (1 + expm1(r)); every 2^k needed is a normal float64, so the
    float32 rounding of the result (subnormal ones too) is the only one."""
    d = np.float64(x)
    c = d if d > -104.0 else -104.0  # (NaN too, restored below): exp(-104) rounds to 0 in float32
    c = c if c < 89.0 else 89.0      # exp(89) rounds to inf in float32
    k, p = _exp_parts_f(c)
    res = (1.0 + p) * _i2f((k + 1023) << 52)
    return res if d == d else d


def fg_vtanhf(x):
    """tanh(x) of a float32: sign(x) * -u / (u + 2), u = expm1(-2|x|) (tanh rounds to +-1 in
    float32 from |x| = 9.01 on)."""
    d = np.float64(x)
    a = d if d >= 0.0 else -d
    a = a if a < 10.0 else 10.0
    k, p = _exp_parts_f(-2.0 * a)
    s = _i2f((k + 1023) << 52)
    u = s * p + (s - 1.0)
    t = -u / (u + 2.0)
    t = t if d >= 0.0 else -t
    t = d if d == 0.0 else t  # keeps -0.0
    return t if d == d else d


def fg_vlogisticf(x):
    """1 / (1 + exp(-x)) of a float32, as fg_vlogistic computes it."""
    d = np.float64(x)
    a = d if d >= 0.0 else -d
    e = fg_vexpf(-a)
    res = (1.0 if d >= 0.0 else e) / (1.0 + e)
    return res if d == d else d


def fg_vlogf(x):
    """log(x) of a float32: x = 2^k m (a float32's subnormals are normal float64s), m in
    [sqrt(2)/2, sqrt(2)), log m = 2s + s^3 P(s^2) with s = (m - 1) / (m + 1)."""
    d = np.float64(x)
    bits = _f2i(d)
    k = ((bits >> 52) & 0x7FF) - 1023
    m = _i2f((bits & 0x000FFFFFFFFFFFFF) | 0x3FF0000000000000)
    big = m > _SQRT2
    m = m * 0.5 if big else m
    dk = np.float64(k + 1 if big else k)
    s = (m - 1.0) / (m + 1.0)
    z = s * s
    p = 6.666668509974237e-01 + z * (3.9988764114212555e-01 + z * 2.958050942023773e-01)
    res = dk * _LN2 + (2.0 * s + (s * z) * p)
    res = res if d < np.inf else d          # log(inf) = inf
    res = res if d != 0.0 else -np.inf      # log(+-0) = -inf
    return res if d >= 0.0 else (d - d) / (d - d)  # NaN for x < 0 and for NaN


def _vtrigf(x, quadrant):
    """sin(x + quadrant pi/2) of a float32 with |x| <= TRIG_MAX (NaN for infinities and NaN)."""
    d = np.float64(x)
    n, r, _ = _reduce(d)  # (the tail is below 2^-53 r: negligible here)
    z = r * r
    s = r + (r * z) * (-1.6666666663817253e-01 + z * (8.333331863657052e-03 + z * (
        -1.9840081966971695e-04 + z * 2.7249411093695434e-06)))
    c = 1.0 - 0.5 * z + (z * z) * (4.1666664643523865e-02 + z * (-1.3888300971878883e-03 + z * 2.4547607922412846e-05))
    q = (n + quadrant) & 3
    res = s if (q & 1) == 0 else c
    res = res if q < 2 else -res
    return res if (d - d) == 0.0 else d - d


def fg_vsinf(x):
    """sin(x) of a float32, |x| <= TRIG_MAX (and -0.0 for -0.0)."""
    res = _vtrigf(x, 0)
    return np.float64(x) if x == 0.0 else res


def fg_vcosf(x):
    """cos(x) of a float32, |x| <= TRIG_MAX."""
    return _vtrigf(x, 1)


# the library function each vectorised one replaces (the name a lowering rule writes)
VECTOR = {"math.exp": "fg_vexp", "math.log": "fg_vlog", "math.tanh": "fg_vtanh",
          "math.sin": "fg_vsin", "math.cos": "fg_vcos", "fg_logistic": "fg_vlogistic"}
# the ones whose argument a kernel checks against TRIG_MAX (the others cover every float64)
# the float32 versions (for a float32 argument; each returns a float64 that the caller rounds)
VECTOR32 = {"math.exp": "fg_vexpf", "math.log": "fg_vlogf", "math.tanh": "fg_vtanhf",
            "math.sin": "fg_vsinf", "math.cos": "fg_vcosf", "fg_logistic": "fg_vlogisticf"}
CHECKED = frozenset({"fg_vsin", "fg_vcos", "fg_vsinf", "fg_vcosf"})
_PRIVATE = {"fg_vexp": ["_exp_parts"], "fg_vtanh": ["_expm1_neg"], "_expm1_neg": ["_exp_parts"],
            "fg_vlogistic": ["fg_vexp"], "fg_vsin": ["_vtrig"], "fg_vcos": ["_vtrig"],
            "_vtrig": ["_reduce", "_ksin", "_kcos"],
            "fg_vexpf": ["_exp_parts_f"], "_exp_parts_f": ["_expm1_f"], "fg_vtanhf": ["_exp_parts_f"],
            "fg_vlogisticf": ["fg_vexpf"], "fg_vsinf": ["_vtrigf"], "fg_vcosf": ["_vtrigf"],
            "_vtrigf": ["_reduce"]}
CONSTANTS = {name: value for name, value in globals().items()
             if name.startswith("_") and name[1:2].isupper() and isinstance(value, float)}
CONSTANTS["TRIG_MAX"] = TRIG_MAX


def needed(names) -> list[str]:
    """The functions `names` call, themselves included, callees first."""
    out: list[str] = []
    stack = [(n, False) for n in sorted(names, reverse=True)]
    while stack:  # an iterative post-order walk
        name, expanded = stack.pop()
        if expanded:
            if name not in out:
                out.append(name)
            continue
        stack.append((name, True))
        stack.extend((c, False) for c in _PRIVATE.get(name, ()) if c not in out)
    return out


def numba_source(name: str) -> str:
    """The source of `name` (undecorated)."""
    return inspect.getsource(globals()[name])
