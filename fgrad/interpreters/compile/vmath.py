"""Vectorisable float64 math for compiled kernels: exp, log, tanh, sin, cos and the logistic
function written without calls and without branches (range reduction by arithmetic, special
values by selects), so that a kernel computes them on vectors of elements. The C library's
`exp` etc. compute one element at a time (tanh about 15 ns), which is slower than NumPy's
SIMD loops; these take about 1 ns an element (below).

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
only): the same reductions in float64 (tanh: exp's table without its low parts), then polynomials
of about half the degree, enough for a float64 value within 2^-28 of the function's relative
to it; the caller rounds it to float32 once. About half the float64 functions' operations, and within 1 float32 ulp of the
exact value (tests/interpreters/compile/test_vmath_float32.py: a sweep over every 97th float32, and
the compiled kernels' bits against these functions run as plain Python):

    fg_vexpf, fg_vlogisticf, fg_vtanhf, fg_vlogf, fg_vsinf, fg_vcosf    1  (0.50 to 0.53)

Maximum errors in float64 ulps (the bound the tests check against long double on 10^6
values from subnormals to where each function saturates, and on each function's edge cases:
test_lowerings.py, test_vmath_accuracy.py; the worst measured in brackets, NumPy's own on the
same values after the slash):

    fg_vexp       1  (0.51 / 0.72)  exp: reduction by ln2/128, 2^(j/128) from a 128-entry table
                                    (two doubles each; read as a gather), degree-5 Taylor polynomial
    fg_vlog       1  (0.75 / 0.51)  log: fdlibm's e_log.c reduction and polynomial
    fg_vtanh      3  (2.43 / 1.15)  tanh: -u / (u + 2) with u = expm1(-2|x|) from exp's table
                                    (its reduction rounded up: no cancellation)
    fg_vlogistic  3  (2.07 / 1.97)  1 / (1 + exp(-x)), as fgrad's impl computes it
    fg_vsin       1  (0.73 / 0.51)  sin and cos: fdlibm's kernels after a three-part reduction
    fg_vcos       1  (0.73 / 0.51)  by pi/2, valid for |x| <= TRIG_MAX; a kernel whose sine or
                                    cosine meets a larger or infinite argument computes with
                                    the C library instead. Both kernels are evaluated and the
                                    quadrant selects: a sine and a cosine of the same argument
                                    (a sine's derivative) then share all of it in a kernel

No function uses a fused multiply-add or a reciprocal estimate (tanh, the logistic function
and log divide): their availability and bits differ between CPUs, and the results must not.
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
# exp's reduction by ln2 / 128: k = round(c * 128 / ln2), c = k ln2/128 + r; the high part has
# 32 significant bits, so k * _LN2_128_HI is exact for |k| < 2^21
_INV_LN2_128 = 184.66496523378731
_LN2_128_HI = _LN2_HI / 128.0
_LN2_128_LO = _LN2_LO / 128.0

# 2^(j/128), j = 0 .. 127, as _EXP_HI[j] + _EXP_LO[j] (the double nearest, then the double
# nearest the rest: together within 2^-106 relative; tests/interpreters/compile/
# test_vmath_accuracy.py recomputes them with the decimal module)
_EXP_HI = (
    1.0, 1.0054299011128027, 1.0108892860517005, 1.016378314910953, 1.0218971486541166,
    1.0274459491187637, 1.0330248790212284, 1.0386341019613787, 1.0442737824274138,
    1.0499440858006872, 1.0556451783605572, 1.061377227289262, 1.0671404006768237,
    1.0729348675259756, 1.0787607977571199, 1.0846183622133092, 1.0905077326652577,
    1.0964290818163769, 1.102382583307841, 1.1083684117236787, 1.1143867425958924,
    1.1204377524096067, 1.1265216186082418, 1.1326385195987192, 1.1387886347566916,
    1.1449721444318042, 1.1511892299529827, 1.1574400736337511, 1.1637248587775775,
    1.1700437696832502, 1.1763969916502812, 1.182784710984341, 1.189207115002721,
    1.1956643920398273, 1.202156731452703, 1.2086843236265816, 1.215247359980469,
    1.2218460329727576, 1.22848053610687, 1.2351510639369334, 1.241857812073484,
    1.2486009771892048, 1.255380757024691, 1.2621973503942507, 1.2690509571917332,
    1.275941778396392, 1.2828700160787783, 1.2898358734066657, 1.2968395546510096,
    1.3038812651919358, 1.3109612115247644, 1.318079601266064, 1.3252366431597413,
    1.3324325470831615, 1.339667524053303, 1.3469417862329458, 1.3542555469368927,
    1.3616090206382248, 1.3690024229745905, 1.3764359707545302, 1.383909881963832,
    1.3914243757719262, 1.3989796725383112, 1.4065759938190154, 1.4142135623730951,
    1.4218926021691656, 1.42961333839197, 1.4373759974489824, 1.4451808069770467,
    1.4530279958490526, 1.460917794180647, 1.4688504333369818, 1.4768261459394993,
    1.4848451658727524, 1.4929077282912648, 1.5010140696264256, 1.5091644275934228,
    1.5173590411982147, 1.5255981507445384, 1.533881997840956, 1.5422108254079407, 1.550584877685,
    1.559004400237837, 1.567469639965553, 1.5759808451078865, 1.5845382652524937,
    1.593142151342267, 1.6017927556826934, 1.6104903319492543, 1.6192351351948637,
    1.6280274218573478, 1.6368674497669644, 1.645755478153965, 1.6546917676561943,
    1.6636765803267364, 1.6727101796415966, 1.681792830507429, 1.6909247992693053,
    1.7001063537185235, 1.709337763100463, 1.718619298122478, 1.7279512309618377,
    1.7373338352737062, 1.746767386199169, 1.7562521603732995, 1.7657884359332727,
    1.7753764925265212, 1.785016611318935, 1.7947090750031072, 1.804454167806624,
    1.8142521755003989, 1.8241033854070534, 1.8340080864093424, 1.843966568958626,
    1.8539791250833855, 1.864046048397789, 1.8741676341103, 1.8843441790323345, 1.8945759815869656,
    1.9048633418176741, 1.9152065613971474, 1.925605943636125, 1.9360617934922943,
    1.9465744175792332, 1.9571441241754002, 1.9677712232331759, 1.978456026387951,
    1.9891988469672663,
)
_EXP_LO = (
    0.0, 9.499186535455032e-17, -1.5234778603368577e-17, -5.77217007319966e-17,
    5.109225028973444e-17, -4.9560741746453704e-17, 7.600838874027088e-18, 5.996273788852511e-17,
    8.551889705537965e-17, 5.592937848127003e-17, 1.759325738772092e-18, -1.1973537085365658e-17,
    -7.899853966841582e-17, -3.839668843358824e-18, -6.656660436056593e-17, 3.166152845816346e-17,
    -3.046782079812471e-17, -5.919933484449316e-17, 5.2660368715706944e-17, -8.786813845180527e-17,
    1.0410278456845571e-16, -6.201085906554179e-17, 5.165856758795457e-17, 3.237356166738e-17,
    8.912812676025408e-17, 4.6412898921700107e-17, 3.250710218863827e-17, -9.1238712311344e-17,
    3.8292048369240935e-17, -1.8477442017900047e-18, 5.554203254218079e-17, 1.542975430079076e-17,
    3.982015231465646e-17, 4.6166036704814814e-17, 6.644981499252301e-17, -4.746725945228984e-17,
    -7.712630692681488e-17, -1.0611021211402691e-16, -1.89878163130253e-17,
    -1.0755244344307841e-16, 4.658027591836937e-17, -8.261810999021964e-17,
    -6.7113898212968784e-18, -3.0844648874738465e-17, 2.667932131342186e-18, 9.91543024421429e-17,
    1.713594918243561e-17, 8.949257530897592e-17, 2.5382502794888315e-17, 8.647675598267871e-17,
    -7.181536135519454e-17, -5.4579558271491535e-17, -2.8587312100388614e-17,
    -5.101586630916744e-17, 8.927282594831732e-17, 3.224065101254679e-17, 7.70094837980299e-17,
    1.533787661270668e-18, 9.593797919118849e-17, -6.898588935871801e-17, -6.770511658794786e-17,
    -4.9061748652889893e-17, -9.614213209051323e-17, 7.034914812136422e-18, -9.667293313452913e-17,
    -1.6077828915890244e-17, -1.2031642489053655e-17, -4.2040340164675566e-17,
    -3.0237581349939873e-17, -5.779948609396106e-17, -5.600377186075216e-17, 8.465882756533628e-17,
    -3.483994556892796e-17, 1.0780086764407481e-16, 1.4192920154284036e-17, -6.413767275790235e-17,
    -1.016455327754295e-16, -4.308699472043341e-17, -1.1024941712342561e-16, 8.875226844438446e-17,
    7.949834809697621e-17, -1.4600706590689385e-17, 3.7812070533575275e-17,
    -1.0352061768849722e-16, -1.0136916471278304e-17, -1.9337717034585703e-17,
    -1.0094406542311964e-16, -6.054917453527784e-17, 2.4707192569797888e-17,
    2.0941334154229092e-17, -6.712955084707084e-17, 7.698325071319876e-17, -1.0125679913674773e-16,
    9.643294303196029e-17, 5.8909926967131e-17, -5.476715964599563e-17, 8.199010020581497e-17,
    -9.66967147439488e-17, -8.0237193703977e-18, -9.868779456632931e-17, -1.851380418263111e-17,
    -1.0750981861204642e-16, 3.164389299292957e-17, -1.0752290483507515e-16, 2.960140695448873e-17,
    9.461315018083268e-17, 6.429731796556572e-17, 1.5330400121031314e-17, 1.8227458427912087e-17,
    -5.177222408793318e-17, -9.969531538920349e-17, -1.0159627862277083e-16, 3.283107224245627e-17,
    -5.939742026949965e-17, 9.761887490727594e-17, 6.540912680620572e-17, -6.122763413004143e-17,
    -8.226593125533711e-17, 3.4034035352165297e-17, 6.533857514718279e-17, -1.0619946056195963e-16,
    -9.914963769693741e-17, 1.0332385960676326e-16, 6.811022349533877e-17, 8.960767791036668e-17,
    -1.0314928011531132e-16, 4.0388753109278167e-17, 8.2051326383692e-18,
)



def _f2i(x):
    """The bits of float64 `x` as an int64 (a bitcast in compiled code)."""
    return struct.unpack("<q", struct.pack("<d", x))[0]


def _i2f(i):
    """The float64 with bits `i` (a bitcast in compiled code)."""
    return struct.unpack("<d", struct.pack("<q", int(i)))[0]


def _exp_parts(c):
    """e, 2^(j/128) as hi + lo, and expm1(r) for c = (128 e + j) ln2/128 + r, 0 <= j < 128,
    |r| <= ln2/256 (|c| < 2^20): the Taylor polynomial of degree 5, whose truncation error is
    below 2^-60, with its leading term exact. The table's two reads are a gather in a kernel."""
    k = (c * _INV_LN2_128 + _SHIFT) - _SHIFT
    r = (c - k * _LN2_128_HI) - k * _LN2_128_LO
    p = r + (r * r) * (0.5 + r * (0.16666666666666666 + r * (0.041666666666666664 + r * 0.008333333333333333)))
    i = np.int64(k)
    j = i & 127
    return i >> 7, _EXP_HI[j], _EXP_LO[j], p


def fg_vexp(x):
    """exp(x) = 2^e 2^(j/128) (1 + expm1(r)): m = hi + (lo + hi expm1(r)) rounded once, then
    the power of two applied as two factors so that results in the subnormal range are
    rounded once more only."""
    d = np.float64(x)
    c = d if d > -746.0 else -746.0  # (NaN too, restored below): exp(-746) rounds to 0
    c = c if c < 710.0 else 710.0    # exp(710) overflows to inf
    e, hi, lo, p = _exp_parts(c)
    m = hi + (lo + hi * p)
    e1 = e >> 1
    res = (m * _i2f((e1 + 1023) << 52)) * _i2f((e - e1 + 1023) << 52)
    return res if d == d else d


def _expm1_neg(y):
    """expm1(y) for -60 <= y <= 0: as _exp_parts, y = (128 e + j) ln2/128 + r, but k = 128 e + j
    rounded up, so that -ln2/128 <= r <= 0 (the Taylor polynomial of degree 6, truncation
    below 2^-60) and 2^e 2^(j/128) - 1 and expm1(r) never have opposite signs (their sum
    would cancel). Summed so that the part of the largest size is exact: where
    2^e hi >= 1/2 (e >= -1), (2^e hi - 1) (Sterbenz) plus 2^e (lo + hi expm1(r)); below,
    (2^e - 1) plus 2^e ((hi - 1) + lo + hi expm1(r))."""
    k = ((y * _INV_LN2_128 + 0.5) + _SHIFT) - _SHIFT
    r = (y - k * _LN2_128_HI) - k * _LN2_128_LO
    p = r + (r * r) * (0.5 + r * (0.16666666666666666 + r * (0.041666666666666664 + r * (
        0.008333333333333333 + r * 0.001388888888888889))))
    i = np.int64(k)
    e = i >> 7
    hi = _EXP_HI[i & 127]
    s = _i2f((e + 1023) << 52)
    w = _EXP_LO[i & 127] + hi * p
    near = e >= -1
    a = s * hi if near else s
    w = w if near else (hi - 1.0) + w
    return (a - 1.0) + s * w


def fg_vtanh(x):
    """tanh(x) = sign(x) * -u / (u + 2), u = expm1(-2|x|) in (-1, 0]: no cancellation in the
    division, and exactly +-1 for large |x|."""
    d = np.float64(x)
    a = abs(d)
    a = a if a < 30.0 else 30.0  # (NaN too, restored below): tanh(30) rounds to 1
    u = _expm1_neg(-2.0 * a)
    t = (0.0 - u) / (u + 2.0)  # (+0.0 for u = 0)
    t = _i2f(_f2i(t) | (_f2i(d) & _f2i(-0.0)))  # x's sign (that of -0.0 too)
    return t if d == d else d


def fg_vlogistic(x):
    """1 / (1 + exp(-x)) as fgrad's impl computes it: e = exp(-|x|), then 1 / (1 + e) for
    x >= 0 and e / (1 + e) below."""
    d = np.float64(x)
    a = abs(d)
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
    c = d if d <= TRIG_MAX else 0.0     # (NaN too; the kernels take |d| > TRIG_MAX elsewhere)
    c = c if c >= -TRIG_MAX else 0.0
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


def _exp_parts_f(c):
    """2^e hi and expm1(r) for c = (128 e + j) ln2/128 + r as in _exp_parts, hi = _EXP_HI[j]
    (within 2^-53 of 2^(j/128)), |c| < 2^20: the Taylor polynomial of degree 4, whose
    truncation error is below 2^-40 relative to expm1(r)."""
    k = (c * _INV_LN2_128 + _SHIFT) - _SHIFT
    r = (c - k * _LN2_128_HI) - k * _LN2_128_LO
    p = r + (r * r) * (0.5 + r * (0.16666666666666666 + r * 0.041666666666666664))
    i = np.int64(k)
    return _i2f(((i >> 7) + 1023) << 52) * _EXP_HI[i & 127], p


def _expm1_f(r):
    """expm1(r) for |r| <= ln2 / 2: r + r^2 P(r), relative error below 5e-10."""
    p = 1.9857781896042456e-04
    p = 1.3933597556299224e-03 + r * p
    p = 8.333360740893395e-03 + r * p
    p = 4.166646552795639e-02 + r * p
    p = 1.6666666532288035e-01 + r * p
    p = 5.000000013379494e-01 + r * p
    return r + (r * r) * p


def fg_vexpf(x):
    """exp(x) of a float32: 2^k (1 + expm1(r)) for x = k ln2 + r, |r| <= ln2 / 2 (without the
    table: its gather costs what the shorter polynomial saves); every 2^k needed is a normal
    float64, so the float32 rounding of the result (subnormal ones too) is the only one."""
    d = np.float64(x)
    c = d if d > -104.0 else -104.0  # (NaN too, restored below): exp(-104) rounds to 0 in float32
    c = c if c < 89.0 else 89.0      # exp(89) rounds to inf in float32
    k = (c * _INV_LN2 + _SHIFT) - _SHIFT
    p = _expm1_f((c - k * _LN2_HI) - k * _LN2_LO)
    res = (1.0 + p) * _i2f((np.int64(k) + 1023) << 52)
    return res if d == d else d


def fg_vtanhf(x):
    """tanh(x) of a float32: sign(x) * -u / (u + 2), u = expm1(-2|x|) (tanh rounds to +-1 in
    float32 from |x| = 9.01 on)."""
    d = np.float64(x)
    a = abs(d)
    a = a if a < 10.0 else 10.0
    s, p = _exp_parts_f(-2.0 * a)
    u = (s - 1.0) + s * p  # (s - 1 exact from s = 1/2 on; below, |u| > 1/2)
    t = (0.0 - u) / (u + 2.0)  # (+0.0 for u = 0)
    t = _i2f(_f2i(t) | (_f2i(d) & _f2i(-0.0)))  # x's sign (that of -0.0 too)
    return t if d == d else d


def fg_vlogisticf(x):
    """1 / (1 + exp(-x)) of a float32, as fg_vlogistic computes it."""
    d = np.float64(x)
    a = abs(d)
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
_PRIVATE = {"fg_vexp": ["_exp_parts"], "fg_vtanh": ["_expm1_neg"],
            "fg_vlogistic": ["fg_vexp"], "fg_vsin": ["_vtrig"], "fg_vcos": ["_vtrig"],
            "_vtrig": ["_reduce", "_ksin", "_kcos"],
            "fg_vexpf": ["_expm1_f"], "fg_vtanhf": ["_exp_parts_f"],
            "fg_vlogisticf": ["fg_vexpf"], "fg_vsinf": ["_vtrigf"], "fg_vcosf": ["_vtrigf"],
            "_vtrigf": ["_reduce"]}
CONSTANTS = {name: value for name, value in globals().items()
             if name.startswith("_") and name[1:2].isupper() and isinstance(value, float)}
CONSTANTS["TRIG_MAX"] = TRIG_MAX
# the tables the functions read (name -> tuple of floats; a constant array in a kernel)
TABLES = {"_EXP_HI": _EXP_HI, "_EXP_LO": _EXP_LO}
CONSTANTS.update(TABLES)


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
