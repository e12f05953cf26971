"""Elementwise primitives. Operands have one shape, or are 0-d beside it;
fgrad.numpy does the promotion and broadcasting before binding."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core.avals import ShapedArray, float_dtype, is_float
from ..core.primitive import Primitive
from ..core.rules import (bool_result, broadcast_to_shape, def_elementwise, def_elementwise_deriv,
                          def_nondiff, def_vectorized, elementwise_shape, float_result, same_dtype,
                          shape_of, sum_to_shape)
from ..core.trace import aval_of


_CONSTS: dict = {}


def const(like, value):
    """A 0-d constant with the dtype of `like` (prints as a literal in the IR). Constants are
    cached and read-only: rules create the same few (0, 1, 0.5, 2) on every call."""
    dtype = getattr(like, "dtype", None)
    if type(dtype) is not np.dtype:
        dtype = aval_of(like).dtype
    key = (dtype, value)
    if not value:  # -0.0 == 0.0, so the key needs the sign to tell them apart
        key = (dtype, value, math.copysign(1.0, value) if type(value) is float else 1.0)
    c = _CONSTS.get(key)
    if c is None:
        c = np.array(value, dtype=dtype)
        c.flags.writeable = False
        if len(_CONSTS) < 4096 and value == value:  # NaN keys never match: don't pile them up
            _CONSTS[key] = c
    return c


def _quiet(fn):
    def impl(*args, xp, **params):
        with np.errstate(all="ignore"):
            return fn(xp, *args, **params)
    return impl


# --- linear: neg, add, sub -------------------------------------------------------------

neg_p = Primitive("neg")
def_elementwise(neg_p, lambda x, *, xp: xp.negative(x))


def neg(x):
    return neg_p.bind(x)


neg_p.def_jvp(lambda primals, tangents: (neg(primals[0]), neg(tangents[0])))
neg_p.def_vjp(lambda needs, ct, out, x: [neg(ct)])

add_p = Primitive("add")
def_elementwise(add_p, lambda x, y, *, xp: xp.add(x, y))
sub_p = Primitive("sub")
def_elementwise(sub_p, lambda x, y, *, xp: xp.subtract(x, y))


def add(x, y):
    return add_p.bind(x, y)


def sub(x, y):
    return sub_p.bind(x, y)


def _add_sub_jvp(sign):
    def jvp(primals, tangents):
        out = (add if sign > 0 else sub)(*primals)
        tx, ty = tangents
        shape = shape_of(out)
        if ty is not None and sign < 0:
            ty = neg(ty)
        if tx is None:
            return out, broadcast_to_shape(ty, shape)
        if ty is None:
            return out, broadcast_to_shape(tx, shape)
        return out, add(tx, ty)
    return jvp


def _add_sub_vjp(sign):
    def vjp(needs, ct, out, x, y):
        return [sum_to_shape(ct, shape_of(x)) if needs[0] else None,
                sum_to_shape(ct if sign > 0 else neg(ct), shape_of(y)) if needs[1] else None]
    return vjp


add_p.def_jvp(_add_sub_jvp(1))
add_p.def_vjp(_add_sub_vjp(1))
sub_p.def_jvp(_add_sub_jvp(-1))
sub_p.def_vjp(_add_sub_vjp(-1))

# --- bilinear and other binary -----------------------------------------------------------

mul_p = Primitive("mul")
def_elementwise(mul_p, lambda x, y, *, xp: xp.multiply(x, y))


def mul(x, y):
    # A literal 1 is common: the seed cotangent of grad. Skipping it keeps the IR small.
    if type(x) is np.ndarray and x.shape == () and x == 1 and aval_of(y).dtype == x.dtype:
        return y
    if type(y) is np.ndarray and y.shape == () and y == 1 and aval_of(x).dtype == y.dtype:
        return x
    return mul_p.bind(x, y)


def_elementwise_deriv(mul_p, lambda x, y, out: y, lambda x, y, out: x)

div_p = Primitive("div")
def_elementwise(div_p, _quiet(lambda xp, x, y: xp.true_divide(x, y)))


def div(x, y):
    return div_p.bind(x, y)


def_elementwise_deriv(div_p, lambda x, y, out: div(const(x, 1.0), y),
                      lambda x, y, out: neg(div(out, y)))

pow_p = Primitive("pow")
def_elementwise(pow_p, _quiet(lambda xp, x, y: xp.power(x, y)))


def pow(x, y):
    return pow_p.bind(x, y)


def _pow_dx(x, y, out):
    # y * x**(y-1), except at x == y == 0 (0 * inf). Only that point is masked, and with a
    # safe base, so d/dy of this partial (the mixed second derivative) survives at y == 0.
    both_zero = logical_and(eq(x, const(x, 0.0)), eq(y, const(y, 0.0)))
    safe_x = select(both_zero, const(x, 1.0), x)
    return select(both_zero, const(y, 0.0), mul(y, pow(safe_x, sub(y, const(y, 1.0)))))


def _pow_dy(x, y, out):
    zero = const(x, 0.0)
    is_zero = eq(x, zero)
    return select(is_zero, zero, mul(log(select(is_zero, const(x, 1.0), x)), out))


def_elementwise_deriv(pow_p, _pow_dx, _pow_dy)

integer_pow_p = Primitive("integer_pow", backward_name="PowBackward0")
integer_pow_p.def_impl(_quiet(lambda xp, x, *, y: xp.power(x, y) if y >= 0
                              else xp.true_divide(1, xp.power(x, -y))))
def_vectorized(integer_pow_p)
integer_pow_p.def_abstract_eval(
    lambda x, *, y: ShapedArray(x.shape, x.dtype if y >= 0 or is_float(x.dtype) else float_dtype(x.dtype)))


def integer_pow(x, y: int):
    return integer_pow_p.bind(x, y=y)


def _integer_pow_deriv(x, out, *, y):
    if y == 0:
        return const(x, 0.0)
    if y == 1:
        return const(x, 1.0)
    if y == 2:
        return mul(const(x, 2.0), x)
    return mul(const(x, float(y)), integer_pow(x, y - 1))


integer_pow_p.def_jvp(lambda primals, tangents, *, y: (
    integer_pow(primals[0], y), mul(tangents[0], _integer_pow_deriv(primals[0], None, y=y))))
integer_pow_p.def_vjp(lambda needs, ct, out, x, *, y: [mul(ct, _integer_pow_deriv(x, out, y=y))])


def _max_min(name, np_name, cmp):
    p = Primitive(name)
    def_elementwise(p, lambda x, y, *, xp: getattr(xp, np_name)(x, y))

    def dx(x, y, out):
        # ties split the derivative evenly between the operands (SPEC 3b)
        return add(convert_element_type(cmp(x, y), aval_of(out).dtype),
                   mul(const(out, 0.5), convert_element_type(eq(x, y), aval_of(out).dtype)))

    def_elementwise_deriv(p, dx, lambda x, y, out: dx(y, x, out))
    return p


max_p = _max_min("max", "maximum", lambda x, y: gt(x, y))
min_p = _max_min("min", "minimum", lambda x, y: lt(x, y))


def maximum(x, y):
    return max_p.bind(x, y)


def minimum(x, y):
    return min_p.bind(x, y)


atan2_p = Primitive("atan2")
def_elementwise(atan2_p, lambda y, x, *, xp: xp.arctan2(y, x))


def atan2(y, x):
    return atan2_p.bind(y, x)


def _atan2_denominator(y, x):
    return add(mul(x, x), mul(y, y))


def_elementwise_deriv(atan2_p, lambda y, x, out: div(x, _atan2_denominator(y, x)),
                      lambda y, x, out: neg(div(y, _atan2_denominator(y, x))))

# --- unary --------------------------------------------------------------------------------


_WARNS = {"tan", "asin", "acos", "acosh", "atanh", "log", "log1p", "sqrt"}


def _unary(name, np_name, deriv, *, backward_name=None):
    p = Primitive(name, backward_name=backward_name)
    if callable(np_name):
        impl = _quiet(np_name)
    elif name in _WARNS:
        impl = _quiet(lambda xp, x: getattr(xp, np_name)(x))
    else:
        impl = lambda x, *, xp: getattr(xp, np_name)(x)  # noqa: E731
    def_elementwise(p, impl, float_result)
    if deriv is not None:
        def_elementwise_deriv(p, deriv)
    return p, (lambda x: p.bind(x))


def _rsqrt(x):
    return div(const(x, 1.0), sqrt(x))


sin_p, sin = _unary("sin", "sin", lambda x, out: cos(x))
cos_p, cos = _unary("cos", "cos", lambda x, out: neg(sin(x)))
tan_p, tan = _unary("tan", "tan", lambda x, out: add(const(x, 1.0), mul(out, out)))
asin_p, asin = _unary("asin", "arcsin", lambda x, out: _rsqrt(sub(const(x, 1.0), mul(x, x))))
acos_p, acos = _unary("acos", "arccos", lambda x, out: neg(_rsqrt(sub(const(x, 1.0), mul(x, x)))))
atan_p, atan = _unary("atan", "arctan", lambda x, out: div(const(x, 1.0), add(const(x, 1.0), mul(x, x))))
sinh_p, sinh = _unary("sinh", "sinh", lambda x, out: cosh(x))
cosh_p, cosh = _unary("cosh", "cosh", lambda x, out: sinh(x))
# (1 + t)(1 - t) rather than 1 - t*t: no cancellation where tanh is near +-1 (float32)
tanh_p, tanh = _unary("tanh", "tanh", lambda x, out: mul(add(const(x, 1.0), out), sub(const(x, 1.0), out)))
asinh_p, asinh = _unary("asinh", "arcsinh", lambda x, out: _rsqrt(add(mul(x, x), const(x, 1.0))))
acosh_p, acosh = _unary("acosh", "arccosh", lambda x, out: _rsqrt(sub(mul(x, x), const(x, 1.0))))
atanh_p, atanh = _unary("atanh", "arctanh", lambda x, out: div(const(x, 1.0), sub(const(x, 1.0), mul(x, x))))
exp_p, exp = _unary("exp", "exp", lambda x, out: out)
expm1_p, expm1 = _unary("expm1", "expm1", lambda x, out: add(out, const(x, 1.0)))
log_p, log = _unary("log", "log", lambda x, out: div(const(x, 1.0), x))
log1p_p, log1p = _unary("log1p", "log1p", lambda x, out: div(const(x, 1.0), add(const(x, 1.0), x)))
sqrt_p, sqrt = _unary("sqrt", "sqrt", lambda x, out: div(const(x, 0.5), out))
cbrt_p, cbrt = _unary("cbrt", "cbrt",
                      lambda x, out: div(const(x, 1.0), mul(const(x, 3.0), integer_pow(out, 2))))
logistic_p, logistic = _unary(
    "logistic", lambda xp, x: _logistic(xp, x),
    lambda x, out: mul(out, sub(const(x, 1.0), out)), backward_name="SigmoidBackward0")
erf_p, erf = _unary("erf", lambda xp, x: _erf(xp, x),
                    lambda x, out: mul(const(x, 2.0 / math.sqrt(math.pi)), exp(neg(mul(x, x)))))


def _logistic(xp, x):
    # exp of a negative number only, so large |x| neither overflows nor loses precision
    e = xp.exp(-xp.abs(x))
    return xp.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


def _erf(xp, x):
    if xp is np:
        from scipy.special import erf as f
    else:
        from cupyx.scipy.special import erf as f
    return f(x)


# log(exp(x) + exp(y)) is smooth everywhere, but the stable composite max(x, y) +
# log1p(exp(-|x - y|)) passes through max and abs at x == y, and derivatives of that composite
# lose the curvature there (d2/dx2 = 0 instead of 1/4). One primitive, with partials
# logistic(+-(x - y)) that are smooth, is exact at every order.
logaddexp_p = Primitive("logaddexp", backward_name="LogaddexpBackward0")
def_elementwise(logaddexp_p, _quiet(lambda xp, x, y: xp.logaddexp(x, y)), float_result)


def logaddexp(x: Any, y: Any) -> Any:
    """log(exp(x) + exp(y)), elementwise, without overflow; smooth at x == y (any order)."""
    return logaddexp_p.bind(x, y)


def _logaddexp_diff(x, y):
    """x - y, but 0 where x and y are the same infinity (inf - inf would be NaN; the tie
    splits the derivative 1/2, 1/2). Only that point is masked, so the tangents of x and y
    pass everywhere else, ties at finite values included."""
    same_inf = logical_and(eq(x, y), isinf(x))
    return sub(select(same_inf, const(x, 0.0), x), select(same_inf, const(y, 0.0), y))


def_elementwise_deriv(logaddexp_p, lambda x, y, out: logistic(_logaddexp_diff(x, y)),
                      lambda x, y, out: logistic(neg(_logaddexp_diff(x, y))))

abs_p = Primitive("abs")
def_elementwise(abs_p, lambda x, *, xp: xp.abs(x))


def abs(x):
    return abs_p.bind(x)


def_elementwise_deriv(abs_p, lambda x, out: sign(x))  # abs'(0) = sign(0) = 0 (SPEC 3b)


def _nondiff_unary(name, np_name, dtype_rule=same_dtype):
    p = Primitive(name)
    def_elementwise(p, lambda x, *, xp: getattr(xp, np_name)(x), dtype_rule)
    def_nondiff(p)
    return p, (lambda x: p.bind(x))


sign_p, sign = _nondiff_unary("sign", "sign")
floor_p, floor = _nondiff_unary("floor", "floor")
ceil_p, ceil = _nondiff_unary("ceil", "ceil")
round_p, round = _nondiff_unary("round", "round")
not_p, logical_not = _nondiff_unary("not", "logical_not", bool_result)
isnan_p, isnan = _nondiff_unary("isnan", "isnan", bool_result)
isinf_p, isinf = _nondiff_unary("isinf", "isinf", bool_result)
isfinite_p, isfinite = _nondiff_unary("isfinite", "isfinite", bool_result)


def _nondiff_binary(name, np_name, dtype_rule=bool_result):
    p = Primitive(name)
    def_elementwise(p, _quiet(lambda xp, x, y: getattr(xp, np_name)(x, y)), dtype_rule)
    def_nondiff(p)
    return p, (lambda x, y: p.bind(x, y))


lt_p, lt = _nondiff_binary("lt", "less")
le_p, le = _nondiff_binary("le", "less_equal")
gt_p, gt = _nondiff_binary("gt", "greater")
ge_p, ge = _nondiff_binary("ge", "greater_equal")
eq_p, eq = _nondiff_binary("eq", "equal")
ne_p, ne = _nondiff_binary("ne", "not_equal")
and_p, logical_and = _nondiff_binary("and", "logical_and")
or_p, logical_or = _nondiff_binary("or", "logical_or")
xor_p, logical_xor = _nondiff_binary("xor", "logical_xor")
floordiv_p, floor_divide = _nondiff_binary("floordiv", "floor_divide", same_dtype)
bitwise_and_p, bitwise_and = _nondiff_binary("bitwise_and", "bitwise_and", same_dtype)
bitwise_or_p, bitwise_or = _nondiff_binary("bitwise_or", "bitwise_or", same_dtype)
bitwise_xor_p, bitwise_xor = _nondiff_binary("bitwise_xor", "bitwise_xor", same_dtype)
invert_p, invert = _nondiff_unary("invert", "invert")

# --- remainders ---------------------------------------------------------------------------
# rem is C's fmod (the result has the sign of x), mod is Python's and NumPy's remainder (the
# sign of y). Both are x - n * y for an integer n (trunc(x / y) for rem, floor(x / y) for mod),
# so d/dx = 1 and d/dy = -n. n is piecewise constant: its own derivative is zero, which the
# nondiff round/floordiv primitives give, so every order is right away from the jumps.

rem_p = Primitive("rem", backward_name="FmodBackward0")
def_elementwise(rem_p, _quiet(lambda xp, x, y: xp.fmod(x, y)))


def rem(x: Any, y: Any) -> Any:
    """C's fmod: x - trunc(x / y) * y, with the sign of x (NumPy's fmod); any real or integer
    dtype, x and y of one dtype."""
    return rem_p.bind(x, y)


def _rem_quotient(x: Any, y: Any, out: Any) -> Any:
    """The integer quotient fmod used: trunc(x / y) in exact arithmetic, but the rounded x / y
    can cross an integer (fmod(1.0, 0.1) uses 9 while trunc(1.0 / 0.1) == 10), and the
    derivative must be that of the value returned. x - out is a multiple of y, so rounding
    (x - out) / y recovers n exactly; for y = +-inf it is 0, as it should be."""
    return round(div(sub(x, out), y))


def_elementwise_deriv(rem_p, lambda x, y, out: const(x, 1.0),
                      lambda x, y, out: neg(_rem_quotient(x, y, out)))

mod_p = Primitive("mod", backward_name="RemainderBackward0")
def_elementwise(mod_p, _quiet(lambda xp, x, y: xp.remainder(x, y)))


def mod(x: Any, y: Any) -> Any:
    """Python's and NumPy's remainder: x - floor(x / y) * y, with the sign of y."""
    return mod_p.bind(x, y)


# NumPy computes floor_divide and remainder together (npy_divmod), so floor_divide(x, y) is
# exactly the n that remainder used (x == n * y + remainder(x, y)), also where the rounded x / y
# would floor to another integer (1.0 // 0.1 == 9.0).
def_elementwise_deriv(mod_p, lambda x, y, out: const(x, 1.0),
                      lambda x, y, out: neg(floor_divide(x, y)))

# --- select and dtype conversion ----------------------------------------------------------

select_p = Primitive("select", backward_name="WhereBackward0")
select_p.def_impl(lambda pred, x, y, *, xp: xp.where(pred, x, y))
select_p.def_abstract_eval(
    lambda pred, x, y: ShapedArray(elementwise_shape("select", (pred, x, y)), x.dtype))


def select(pred, x, y):
    """Elementwise `x if pred else y`; pred is boolean."""
    return select_p.bind(pred, x, y)


def _select_jvp(primals, tangents):
    pred, x, y = primals
    out = select(pred, x, y)
    _, tx, ty = tangents
    zero = const(out, 0.0)
    return out, broadcast_to_shape(select(pred, zero if tx is None else tx, zero if ty is None else ty),
                                   shape_of(out))


def _select_vjp(needs, ct, out, pred, x, y):
    zero = const(ct, 0.0)
    return [None,
            sum_to_shape(select(pred, ct, zero), shape_of(x)) if needs[1] else None,
            sum_to_shape(select(pred, zero, ct), shape_of(y)) if needs[2] else None]


def_vectorized(select_p)
select_p.def_jvp(_select_jvp)
select_p.def_vjp(_select_vjp)

convert_element_type_p = Primitive("convert_element_type", backward_name="ToCopyBackward0")
convert_element_type_p.def_impl(lambda x, *, new_dtype, xp: x.astype(new_dtype))
convert_element_type_p.def_abstract_eval(lambda x, *, new_dtype: ShapedArray(x.shape, new_dtype))


def convert_element_type(x, new_dtype):
    new_dtype = np.dtype(new_dtype)
    if aval_of(x).dtype == new_dtype:
        return x
    return convert_element_type_p.bind(x, new_dtype=new_dtype)


def _convert_jvp(primals, tangents, *, new_dtype):
    (x,), (t,) = primals, tangents
    out = convert_element_type(x, new_dtype)
    if not (is_float(new_dtype) and is_float(aval_of(x).dtype)):
        return out, None
    return out, convert_element_type(t, new_dtype)


def _convert_vjp(needs, ct, out, x, *, new_dtype):
    old = aval_of(x).dtype
    return [convert_element_type(ct, old) if is_float(old) and is_float(new_dtype) else None]


def_vectorized(convert_element_type_p)
convert_element_type_p.def_jvp(_convert_jvp)
convert_element_type_p.def_vjp(_convert_vjp)
