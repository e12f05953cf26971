"""More of NumPy's elementwise mathematics: NaN-ignoring fmax/fmin, nan_to_num, sinc, angle,
degree/radian conversions, fabs, copysign, heaviside, float_power, ldexp/frexp, signbit,
nextafter, truncation (trunc, fix, rint), the NumPy 2 short names of the inverse trigonometric
functions and pow, gcd and lcm of integers, and the predicates isposinf, isneginf, isclose,
allclose, iscomplex, isreal, iscomplexobj, isrealobj.

Derivatives at the points where a function switches pieces: heaviside has none in x1 and passes
the cotangent to x2 where x1 == 0, nan_to_num passes it where the entry is kept, frexp's
mantissa has 2 ** -exponent and sinc is exact at 0 to every order
(fgrad.ops.float_parts.sinc_maclaurin), all as in jax.numpy. Two follow fgrad's own functions
instead, so that they agree with the ones they generalise: copysign and fabs have abs's
derivative, sign(x) = 0 at x = 0 (jnp.copysign: +-1), and fmax/fmin split a tie evenly between
the operands, as maximum/minimum (and HIPS autograd's fmax) do (jnp.fmax gives it to x2).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core.errors import ConcretizationError, FgradTypeError
from ..ops import complex as cx
from ..ops import elementwise as ew
from ..ops import float_parts as fp
from ..ops import reduce as red
from ._complex import imag, real
from ._elementwise import (
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctan2,
    arctanh,
    invert,
    power,
)
from ._policy import NUMPY
from ._util import (
    as_value,
    fresh,
    broadcast_args,
    cast,
    dtype_of,
    is_traced,
    promote,
    shape_of,
)


def _float(x: Any, name: str, policy) -> Any:
    """`x` as an array in the float dtype a float function of it computes in (integers and
    booleans: the policy's float dtype)."""
    x = as_value(x, name)
    return cast(x, policy.float_dtype(dtype_of(x)))


def _real_only(x: Any, name: str) -> None:
    if dtype_of(x).kind == "c":
        raise FgradTypeError(f"{name}: complex inputs are not supported (NumPy's {name} has no complex loop); "
                        "apply it to the real and imaginary parts, real(x) and imag(x)")


# --- NaN-ignoring maximum and minimum -------------------------------------------------------------

def _nan_ignoring(pick: Any, name: str) -> Any:
    def fn(x1: Any, x2: Any, *, policy=NUMPY) -> Any:
        x, y = promote(name, x1, x2, policy=policy)
        if dtype_of(x).kind not in "fc":
            return pick(x, y)  # integers and booleans have no NaN
        # where exactly one side is NaN the other side is the result (and takes the whole
        # derivative); elsewhere pick's value and its even split of ties
        x_nan, y_nan = ew.isnan(x), ew.isnan(y)
        return ew.select(y_nan, x, ew.select(x_nan, y, pick(x, y)))
    fn.__name__ = fn.__qualname__ = name
    return fn


fmax = _nan_ignoring(ew.maximum, "fmax")
fmax.__doc__ = """Element-wise maximum that ignores NaN: where one operand is NaN the other is the
result (NaN only where both are). Ties split the derivative evenly, as in maximum."""
fmin = _nan_ignoring(ew.minimum, "fmin")
fmin.__doc__ = """Element-wise minimum that ignores NaN: where one operand is NaN the other is the
result (NaN only where both are). Ties split the derivative evenly, as in minimum."""


def nan_to_num(x: Any, copy: bool = True, nan: Any = 0.0, posinf: Any = None, neginf: Any = None) -> Any:
    """`x` with NaN replaced by `nan`, +inf by `posinf` and -inf by `neginf` (default: the
    largest and smallest finite numbers of its dtype), NumPy's nan_to_num; complex numbers are
    treated part by part, integers and booleans returned as they are. The derivative passes
    where an entry is kept, and goes to the replacement values where they are used."""
    x = as_value(x, "nan_to_num")
    dt = dtype_of(x)
    if dt.kind == "c":
        return cx.complex(nan_to_num(cx.real(x), nan=nan, posinf=posinf, neginf=neginf),
                          nan_to_num(cx.imag(x), nan=nan, posinf=posinf, neginf=neginf))
    if dt.kind not in "f":
        return fresh(x, x) if copy else x
    info = np.finfo(dt)
    fill = [cast(as_value(v, "nan_to_num's replacement"), dt) for v in (
        nan, info.max if posinf is None else posinf, info.min if neginf is None else neginf)]
    x, *fill = broadcast_args("nan_to_num", x, *fill)
    out = ew.select(ew.isnan(x), fill[0], x)
    is_inf = ew.isinf(x)
    out = ew.select(ew.logical_and(is_inf, ew.gt(x, ew.const(x, 0.0))), fill[1], out)
    return ew.select(ew.logical_and(is_inf, ew.lt(x, ew.const(x, 0.0))), fill[2], out)


# --- sinc, angle, degrees and radians ---------------------------------------------------------------

def sinc(x: Any, *, policy=NUMPY) -> Any:
    """The normalised sinc function sin(pi x) / (pi x), 1 at x = 0. Smooth, and differentiable
    at 0 to every order (the Maclaurin branch there, as jax.numpy's sinc)."""
    x = _float(x, "sinc", policy)
    pi_x = ew.mul(x, ew.const(x, math.pi))
    at_zero = ew.eq(x, ew.const(x, 0.0))
    safe = ew.select(at_zero, ew.const(x, 1.0), pi_x)  # no 0 / 0 in the branch not taken
    return ew.select(at_zero, fp.sinc_maclaurin(pi_x, 0), ew.div(ew.sin(safe), safe))


def angle(z: Any, deg: bool = False, *, policy=NUMPY) -> Any:
    """The counterclockwise angle of the complex number `z` from the positive real axis, in
    (-pi, pi] (degrees with `deg`): arctan2(imag(z), real(z)), so pi for negative reals and 0
    for the others. For real `z` it is piecewise constant (derivative 0)."""
    z = as_value(z, "angle")
    out = arctan2(imag(z), real(z), policy=policy)
    return ew.mul(out, ew.const(out, 180.0 / math.pi)) if deg else out


def _scaled(factor: float, name: str, doc: str) -> Any:
    def fn(x: Any, *, policy=NUMPY) -> Any:
        x = _float(x, name, policy)
        return ew.mul(x, ew.const(x, factor))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


deg2rad = _scaled(math.pi / 180.0, "deg2rad", "Angles in degrees converted to radians (x * pi / 180).")
radians = _scaled(math.pi / 180.0, "radians", "Angles in degrees converted to radians (NumPy's other name "
                                              "for deg2rad).")
rad2deg = _scaled(180.0 / math.pi, "rad2deg", "Angles in radians converted to degrees (x * 180 / pi).")
degrees = _scaled(180.0 / math.pi, "degrees", "Angles in radians converted to degrees (NumPy's other name "
                                              "for rad2deg).")


# --- sign manipulation: fabs, copysign, signbit, heaviside ----------------------------------------

def fabs(x: Any, *, policy=NUMPY) -> Any:
    """Absolute value as a float (integers become float64), NumPy's fabs; complex numbers are
    refused (use abs). Its derivative at 0 is sign(0) = 0, as abs's."""
    x = _float(x, "fabs", policy)
    _real_only(x, "fabs")
    return ew.abs(x)


def signbit(x: Any) -> Any:
    """Element-wise: whether the sign bit is set (True for negative numbers and for -0.0);
    a boolean result with no derivative."""
    x = as_value(x, "signbit")
    _real_only(x, "signbit")
    if dtype_of(x).kind == "b":
        return ew.ne(x, x)  # booleans have no sign: all False, as in NumPy
    return fp.signbit(x)


def copysign(x1: Any, x2: Any, *, policy=NUMPY) -> Any:
    """|x1| with the sign of x2 (its sign bit: -0.0 counts as negative), as a float. The
    derivative in x1 is +-sign(x1), 0 at x1 = 0 (abs's convention; jnp.copysign's is +-1
    there); in x2 it is 0."""
    x, y = promote("copysign", x1, x2, policy=policy, to_float=True)
    _real_only(x, "copysign")
    magnitude = ew.abs(x)
    if shape_of(magnitude) != shape_of(y):
        magnitude, y = broadcast_args("copysign", magnitude, y, policy=policy)
    return ew.select(fp.signbit(y), ew.neg(magnitude), magnitude)


def heaviside(x1: Any, x2: Any, *, policy=NUMPY) -> Any:
    """The Heaviside step: 0 where x1 < 0, x2 where x1 == 0, 1 where x1 > 0 (NaN where x1 is
    NaN), as a float. No derivative in x1 (a step); the cotangent reaches x2 where x1 == 0,
    as in JAX."""
    x, y = promote("heaviside", x1, x2, policy=policy, to_float=True)
    _real_only(x, "heaviside")
    x, y = broadcast_args("heaviside", x, y, policy=policy)
    zero, one = ew.const(x, 0.0), ew.const(x, 1.0)
    at_zero_or_nan = ew.select(ew.isnan(x), x, y)
    return ew.select(ew.lt(x, zero), zero, ew.select(ew.gt(x, zero), one, at_zero_or_nan))


# --- powers of two and float_power ------------------------------------------------------------------

def float_power(x1: Any, x2: Any, *, policy=NUMPY) -> Any:
    """x1 ** x2 computed in float64 (complex128 for complex operands), NumPy's float_power:
    integers and float32 are widened first, so negative integer powers of integers work."""
    x, y = as_value(x1, "float_power"), as_value(x2, "float_power")
    wide = np.dtype(np.complex128 if "c" in (dtype_of(x).kind, dtype_of(y).kind) else np.float64)
    return power(cast(x, wide), cast(y, wide), policy=policy)


def ldexp(x1: Any, x2: Any, *, policy=NUMPY) -> Any:
    """x1 * 2 ** x2 for integer x2, exactly (NumPy's ldexp); integer x1 computes in float64.
    Differentiable in x1 (the derivative is 2 ** x2); x2 is an integer."""
    x = _float(x1, "ldexp", policy)
    _real_only(x, "ldexp")
    n = as_value(x2, "ldexp")
    if dtype_of(n).kind not in "biu":
        raise FgradTypeError(f"ldexp: the exponent x2 must be an integer array, got dtype {dtype_of(n)} (NumPy's "
                        "ldexp has no loop for it); round it first, e.g. x2.astype(int)")
    if dtype_of(n).kind != "i" or dtype_of(n).itemsize != 8:
        n = cast(n, np.dtype(np.int64))
    x, n = broadcast_args("ldexp", x, n, policy=policy)
    return fp.ldexp(x, n)


def frexp(x: Any, *, policy=NUMPY) -> tuple:
    """(mantissa, exponent) with x == mantissa * 2 ** exponent, 0.5 <= |mantissa| < 1 (both 0
    for x = 0; inf and NaN keep their value with exponent 0), NumPy's frexp; the exponent is
    int32. The mantissa's derivative is 2 ** -exponent (as in JAX); the exponent has none."""
    x = _float(x, "frexp", policy)
    _real_only(x, "frexp")
    e = fp.frexp_exponent(x)
    return fp.ldexp(x, ew.neg(e)), e


def nextafter(x1: Any, x2: Any, *, policy=NUMPY) -> Any:
    """The next representable float after x1 in the direction of x2, elementwise, NumPy's
    nextafter: x2 where x1 == x2 (x1 for float16, NumPy's own loop), NaN where either is NaN, the smallest subnormal (signed)
    from zero, the largest finite float from an infinity; integers compute in the policy's
    float dtype. Complex input is a TypeError, as NumPy's. Its derivative is zero (a step
    function of its inputs, as floor's)."""
    x, y = promote("nextafter", x1, x2, policy=policy, to_float=True)
    _real_only(x, "nextafter")
    x, y = ew.stop_gradient(x), ew.stop_gradient(y)
    dt = dtype_of(x)
    info = np.finfo(dt)
    zero = ew.const(x, 0.0)
    tiny = ew.const(x, np.ldexp(1.0, int(info.minexp) - info.nmant))  # the smallest subnormal
    ax = ew.abs(x)
    m, e = frexp(ew.select(ew.isfinite(ax), ax, ew.const(ax, 1.0)))
    # one unit in the last place of |x|, half of it stepping down from a power of two
    ulp = ldexp(ew.const(m, 1.0), ew.sub(e, ew.const(e, info.nmant + 1)))
    down = ew.ne(ew.gt(y, x), ew.gt(x, zero))  # towards zero in magnitude
    ulp = ew.select(ew.logical_and(down, ew.eq(m, ew.const(m, 0.5))), ew.mul(ulp, ew.const(ulp, 0.5)), ulp)
    ulp = ew.select(ew.lt(ulp, tiny), tiny, ulp)
    big = ew.const(x, info.max)
    # (past the largest finite float is the infinity of its sign: not added, which would warn)
    over = ew.logical_and(ew.eq(ax, big), ew.logical_not(down))
    out = ew.add(ew.select(over, zero, x), ew.select(ew.gt(y, x), ulp, ew.neg(ulp)))
    out = ew.select(over, ew.select(ew.gt(x, zero), ew.const(x, np.inf), ew.const(x, -np.inf)), out)
    # (a subnormal stepping to zero keeps its sign)
    out = ew.select(ew.eq(out, zero), ew.select(fp.signbit(x), ew.neg(zero), zero), out)
    out = ew.select(ew.eq(x, zero), ew.select(ew.gt(y, zero), tiny, ew.neg(tiny)), out)
    out = ew.select(ew.isinf(x), ew.select(ew.gt(x, zero), big, ew.neg(big)), out)
    # equal operands: C's nextafter returns y (the sign of zero it has), NumPy's own float16 loop x
    out = ew.select(ew.eq(x, y), x if dt == np.float16 else y, out)
    return ew.select(ew.logical_or(ew.isnan(x), ew.isnan(y)), ew.const(x, np.nan), out)


# --- infinities by sign ----------------------------------------------------------------------------

def _signed_inf(x: Any, name: str, positive: bool) -> Any:
    x = as_value(x, name)
    if dtype_of(x).kind == "c":
        raise FgradTypeError(f"{name}: this operation is not supported for complex values because it would be "
                             "ambiguous (NumPy's error); test the real and imaginary parts separately")
    if dtype_of(x).kind != "f":
        return ew.ne(x, x)  # integers and booleans are never infinite: all False
    zero = ew.const(x, 0.0)
    return ew.logical_and(ew.isinf(x), ew.gt(x, zero) if positive else ew.lt(x, zero))


def isposinf(x: Any) -> Any:
    """Element-wise: whether x is +inf (all False for integers and booleans), NumPy's
    isposinf; complex input is a TypeError, as NumPy's. A boolean result, with no derivative."""
    return _signed_inf(x, "isposinf", True)


def isneginf(x: Any) -> Any:
    """Element-wise: whether x is -inf (all False for integers and booleans), NumPy's
    isneginf; complex input is a TypeError, as NumPy's. A boolean result, with no derivative."""
    return _signed_inf(x, "isneginf", False)


# --- greatest common divisor and least common multiple ---------------------------------------------

def _integers(name: str, x1: Any, x2: Any, policy) -> tuple:
    x, y = promote(name, x1, x2, policy=policy)
    if dtype_of(x).kind not in "iu":
        raise FgradTypeError(f"{name}: expected integer operands, got dtype {dtype_of(x)} (NumPy's {name} has no "
                             "loop for it); convert them first, e.g. x.astype(int)")
    return x, y


def _euclid_rounds(bits: int) -> int:
    """The most remainder steps Euclid's algorithm takes on operands below 2 ** bits (its
    worst case is two consecutive Fibonacci numbers)."""
    a, b, k = 1, 1, 0
    while b < 2 ** bits:
        a, b, k = b, a + b, k + 1
    return k + 1


def gcd(x1: Any, x2: Any, *, policy=NUMPY) -> Any:
    """The greatest common divisor of |x1| and |x2|, elementwise (0 for two zeros), NumPy's
    gcd: integer operands only (a TypeError otherwise), in their promoted dtype. Euclid's
    algorithm: on concrete values until every pair is done, traced (jit, vmap) for as many
    rounds as the dtype's worst case."""
    x, y = _integers("gcd", x1, x2, policy)
    a, b = broadcast_args("gcd", ew.abs(x), ew.abs(y), policy=policy)
    zero, one = ew.const(b, 0), ew.const(b, 1)
    traced = is_traced(a) or is_traced(b)
    for _ in range(_euclid_rounds(8 * dtype_of(x).itemsize)):
        if not traced and not bool(red.reduce_max(ew.ne(b, zero), tuple(range(len(shape_of(b)))))):
            break
        done = ew.eq(b, zero)
        a, b = ew.select(done, a, b), ew.select(done, zero, ew.fmod(a, ew.select(done, one, b)))
    return a


def lcm(x1: Any, x2: Any, *, policy=NUMPY) -> Any:
    """The least common multiple of |x1| and |x2|, elementwise (0 where either is 0), NumPy's
    lcm: integer operands only (a TypeError otherwise), in their promoted dtype."""
    x, y = _integers("lcm", x1, x2, policy)
    g = gcd(x, y, policy=policy)
    safe = ew.select(ew.eq(g, ew.const(g, 0)), ew.const(g, 1), g)
    # (|x| // g * |y|, wrapping where it overflows the dtype, as NumPy's)
    return ew.mul(*broadcast_args("lcm", ew.floor_divide(*broadcast_args("lcm", ew.abs(x), safe)), ew.abs(y)))


# --- truncation ----------------------------------------------------------------------------------

def trunc(x: Any) -> Any:
    """Round toward zero; integers and booleans are copied as they are (NumPy 2). Zero
    derivative."""
    x = as_value(x, "trunc")
    if dtype_of(x).kind != "f":
        _real_only(x, "trunc")
        return fresh(x, x)
    return ew.select(ew.lt(x, ew.const(x, 0.0)), ew.ceil(x), ew.floor(x))


def fix(x: Any) -> Any:
    """Round toward zero, NumPy's fix (trunc's values and dtypes). Zero derivative."""
    return trunc(x)


def rint(x: Any) -> Any:
    """Round to the nearest integer, halves to even. Floats keep their dtype; integers and
    booleans give NumPy's float dtype for them (float64, float16 for 8-bit ones). Zero
    derivative."""
    x = as_value(x, "rint")
    dt = dtype_of(x)
    if dt.kind in "fc":  # (complex: both parts rounded, as NumPy's)
        return ew.round(x)
    _real_only(x, "rint")
    return cast(x, np.result_type(dt, np.float16))


# --- NumPy 2's short names -------------------------------------------------------------------------

acos, acosh, asin, asinh, atan, atanh, atan2 = arccos, arccosh, arcsin, arcsinh, arctan, arctanh, arctan2
pow = power  # noqa: A001 (NumPy's name)
bitwise_invert = invert


# --- closeness and complexness ---------------------------------------------------------------------

def _magnitude(v: Any) -> Any:
    """|v| in v's real dtype (the modulus of complex numbers)."""
    if dtype_of(v).kind != "c":
        return ew.abs(v)
    re, im = cx.real(v), cx.imag(v)
    return ew.sqrt(ew.add(ew.mul(re, re), ew.mul(im, im)))


def _tolerance(v: Any, like: Any, name: str) -> Any:
    """rtol or atol in the dtype of `like` (a Python number stays weak, as in NumPy)."""
    return cast(as_value(v, f"isclose's {name}"), dtype_of(like))


def isclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08, equal_nan: bool = False, *,
            policy=NUMPY) -> Any:
    """Element-wise |a - b| <= atol + rtol * |b|, NumPy's isclose (not symmetric in a and b):
    infinities are close only to themselves, NaNs only to each other and only with
    `equal_nan`. A boolean result, with no derivative."""
    x, y = broadcast_args("isclose", *promote("isclose", a, b, policy=policy, to_float=True), policy=policy)
    diff, size = _magnitude(ew.sub(x, y)), _magnitude(y)
    tol = ew.add(*broadcast_args("isclose", _tolerance(atol, size, "atol"),
                                 ew.mul(*broadcast_args("isclose", _tolerance(rtol, size, "rtol"), size))))
    diff, tol = broadcast_args("isclose", diff, tol, policy=policy)
    finite_y = ew.isfinite(size)
    # within the tolerance of a finite b, or exactly equal (the same infinity)
    close = ew.logical_or(ew.logical_and(ew.le(diff, tol), finite_y), ew.eq(x, y))
    if equal_nan:
        close = ew.logical_or(close, ew.logical_and(ew.isnan(_magnitude(x)), ew.isnan(size)))
    return close


def allclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08, equal_nan: bool = False, *,
             policy=NUMPY) -> Any:
    """Whether every pair is isclose: a Python bool for concrete values, as NumPy's; a traced
    boolean under jit and vmap."""
    close = isclose(a, b, rtol, atol, equal_nan, policy=policy)
    misses = red.reduce_sum(cast(ew.logical_not(close), np.dtype(np.int64)), tuple(range(len(shape_of(close)))))
    out = ew.eq(misses, ew.const(misses, 0))
    return out if is_traced(out) else bool(out)


def iscomplexobj(x: Any) -> bool:
    """Whether `x` has a complex dtype (whatever its values)."""
    return dtype_of(as_value(x, "iscomplexobj")).kind == "c"


def isrealobj(x: Any) -> bool:
    """Whether `x` does not have a complex dtype (whatever its values)."""
    return not iscomplexobj(x)


def iscomplex(x: Any) -> Any:
    """Element-wise: whether the imaginary part is nonzero (all False for a real dtype)."""
    im = imag(as_value(x, "iscomplex"))
    return ew.ne(im, ew.const(im, 0))


def isreal(x: Any) -> Any:
    """Element-wise: whether the imaginary part is zero (all True for a real dtype)."""
    im = imag(as_value(x, "isreal"))
    return ew.eq(im, ew.const(im, 0))


def real_if_close(a: Any, tol: float = 100) -> Any:
    """real(a) when `a` is complex and every imaginary part is below `tol` machine epsilons
    (a `tol` <= 1 is an absolute bound), else `a`, NumPy's real_if_close. Which one depends on
    the values, so a complex `a` must be concrete: under jit or vmap it raises
    ConcretizationError."""
    a = as_value(a, "real_if_close")
    dt = dtype_of(a)
    if dt.kind != "c":
        return a
    im = _magnitude(cx.imag(a))
    bound = tol * np.finfo(dt).eps if tol > 1 else tol
    misses = red.reduce_sum(cast(ew.ge(im, ew.const(im, bound)), np.dtype(np.int64)), tuple(range(len(shape_of(a)))))
    try:
        real_enough = bool(ew.eq(misses, ew.const(misses, 0)))
    except ConcretizationError:
        raise ConcretizationError("real_if_close: whether the result is real depends on the values of a complex "
                                  "input, which jit and vmap do not know; take real(a), or keep a, explicitly") \
            from None
    return cx.real(a) if real_enough else a


__all__ = ["fmax", "fmin", "nan_to_num", "sinc", "angle", "deg2rad", "radians", "rad2deg", "degrees",
           "fabs", "signbit", "copysign", "heaviside", "float_power", "ldexp", "frexp", "trunc", "fix",
           "rint", "acos", "acosh", "asin", "asinh", "atan", "atanh", "atan2", "pow", "bitwise_invert",
           "isclose", "allclose", "iscomplexobj", "isrealobj", "iscomplex", "isreal", "real_if_close",
           "nextafter", "isposinf", "isneginf", "gcd", "lcm"]
