"""Elementwise primitives. Operands have one shape, or are 0-d beside it;
fgrad.numpy does the promotion and broadcasting before binding.

Also the rule helpers that are written with this module's add and mul: def_elementwise,
def_elementwise_deriv, def_bilinear (with bilinear_tangent and add_tangents),
sum_to_shape and broadcast_to_shape."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core.avals import ShapedArray, float_dtype, is_float
from ..core.primitive import Primitive, ignore_fp_errors, quiet_impl, restore_fp_errors
from ..core.rules import (
    bool_result,
    def_nondiff,
    elementwise_shape,
    float_result,
    same_dtype,
    shape_of,
)
from ..core.trace import aval_of
from ..interpreters.compile import eager_math
from ._batching import def_vectorized
from .shape import broadcast_in_dim

_CONSTS: dict = {}


def _dtype(x) -> np.dtype:
    """The dtype of any value, through `.dtype` when that is a NumPy dtype (arrays, tracers:
    no aval built), else `aval_of` (Python numbers)."""
    dtype = getattr(x, "dtype", None)
    # (isinstance: NumPy 2's dtypes are instances of subclasses, numpy.dtypes.Float64DType)
    return dtype if isinstance(dtype, np.dtype) else aval_of(x).dtype


def const(like, value):
    """A 0-d constant with the dtype of `like` (prints as a literal in the IR). Constants are
    cached and read-only: rules create the same few (0, 1, 0.5, 2) on every call."""
    dtype = _dtype(like)
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


def scalar_lowering(template, kinds: str = "biuf"):
    """A lowering rule (`Primitive.def_lowering`) from `template`, a format string over the
    operands ("({0} + {1})"), or a dict {dtype kinds: template}. It applies to operands
    whose last dtype's kind is in `kinds` (or a key of the dict): the operands of an
    element-wise primitive share a dtype, except select's predicate, which comes first."""
    table = template if isinstance(template, dict) else {kinds: template}

    def rule(*operands, **params):
        kind = operands[-1].dtype.kind
        for ks, text in table.items():
            if kind in ks:
                return text.format(*operands)
        return None
    return rule


def _named(fn, name: str, doc: str):
    """`fn` (a function a factory built) with its public name and docstring."""
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


# --- rule helpers -------------------------------------------------------------------------
# Rules are written with ops, and these with add and mul (defined below; looked up when a
# rule runs), so they live here rather than in core/rules.py, which sits below fgrad.ops.

def sum_to_shape(ct, shape: tuple):
    """Cotangent of a 0-d operand that was used beside full-shape ones."""
    if not shape and shape_of(ct):
        # reduce.py's rules are written with this module's ops (mul, div, eq), so reduce_sum
        # is looked up when a sum is first needed: a real cycle, not an optional dependency.
        from .reduce import reduce_sum
        return reduce_sum(ct, axes=tuple(range(len(shape_of(ct)))))
    return ct


def broadcast_to_shape(t, shape: tuple):
    """Tangent of a 0-d operand broadcast to the result's full shape."""
    if shape_of(t) != shape:
        return broadcast_in_dim(t, shape=shape, broadcast_dimensions=())
    return t


def add_tangents(a, b):
    """a + b, where None stands for a zero tangent."""
    if a is None:
        return b
    return a if b is None else add(a, b)


def def_elementwise(prim, impl, dtype_rule=same_dtype, *, quiet: bool = False):
    """Impl, shape/dtype rule (operands of one shape, or 0-d beside it) and batching rule of an
    elementwise primitive; `dtype_rule(*avals)` gives the result's dtype. `impl` is a function,
    or the name of the NumPy/CuPy function it is (see Primitive.def_np_function; `quiet`
    silences its floating-point warnings)."""
    if isinstance(impl, str):
        prim.def_np_function(impl, quiet)
    else:
        prim.def_impl(impl)
    prim.def_abstract_eval(
        lambda *avals, **params: ShapedArray(elementwise_shape(prim.name, avals), dtype_rule(*avals)))
    def_vectorized(prim)


def def_elementwise_deriv(prim, *derivs, inputs: bool | tuple[int, ...] = True, output: bool = True):
    """Derive JVP and VJP from the partial derivatives of an elementwise primitive.

    `derivs[i](*primals, out)` is d out / d input_i, written with fgrad ops. `inputs` and
    `output` declare which of those values the partials read (`Primitive.def_saves`): a
    recorded application keeps only those for the backward pass.
    """

    def jvp(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        shape = shape_of(out)
        out_dot = None
        for t, d in zip(tangents, derivs):
            if t is not None:
                out_dot = add_tangents(out_dot, broadcast_to_shape(mul(d(*primals, out), t), shape))
        return out, out_dot

    if len(derivs) == 1:
        (d0,) = derivs

        def vjp(needs, ct, out, x, **params):
            # (one operand: the output, so the cotangent, has its shape; nothing to sum)
            return [mul(ct, d0(x, out)) if needs[0] else None]
    else:
        def vjp(needs, ct, out, *primals, **params):
            return [sum_to_shape(mul(ct, d(*primals, out)), shape_of(x)) if need else None
                    for need, d, x in zip(needs, derivs, primals)]

    prim.def_jvp(jvp)
    prim.def_vjp(vjp)
    prim.def_saves(inputs=inputs, output=output)


def bilinear_tangent(prim, x, y, x_dot, y_dot, **params):
    """The tangent of a bilinear primitive: prim(x_dot, y) + prim(x, y_dot), a None (zero)
    tangent dropping its term; None when both are."""
    out_dot = None if x_dot is None else prim.bind(x_dot, y, **params)
    return out_dot if y_dot is None else add_tangents(out_dot, prim.bind(x, y_dot, **params))


def def_bilinear(prim, lhs_transpose, rhs_transpose):
    """A primitive bilinear in its two array inputs (mul, dot_general, the convolutions): the
    jvp is bilinear_tangent, and the vjp is [lhs_transpose(ct, x, y, **params),
    rhs_transpose(ct, x, y, **params)], the transposes of v -> prim(v, y) and v -> prim(x, v)
    applied to ct (the input whose cotangent is computed only lends its shape). The vjp reads
    both inputs, never the output."""

    def jvp(primals, tangents, **params):
        (x, y), (x_dot, y_dot) = primals, tangents
        return prim.bind(x, y, **params), bilinear_tangent(prim, x, y, x_dot, y_dot, **params)

    def vjp(needs, ct, out, x, y, **params):
        return [lhs_transpose(ct, x, y, **params) if needs[0] else None,
                rhs_transpose(ct, x, y, **params) if needs[1] else None]

    prim.def_jvp(jvp)
    prim.def_vjp(vjp)
    prim.def_saves(output=False)


# --- linear: neg, add, sub -------------------------------------------------------------

neg_p = Primitive("neg")
def_elementwise(neg_p, "negative")


def neg(x):
    """Element-wise negation, -x."""
    return neg_p.bind(x)


neg_p.def_jvp(lambda primals, tangents: (neg(primals[0]), neg(tangents[0])))
neg_p.def_vjp(lambda needs, ct, out, x: [neg(ct)])
neg_p.def_saves(inputs=False, output=False)
neg_p.def_lowering(scalar_lowering("(-{0})", "iuf"))

add_p = Primitive("add")
def_elementwise(add_p, "add")
sub_p = Primitive("sub")
def_elementwise(sub_p, "subtract")


def add(x, y):
    """Element-wise sum, x + y."""
    return add_p.bind(x, y)


def sub(x, y):
    """Element-wise difference, x - y."""
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
add_p.def_saves(inputs=False, output=False)  # their cotangents need only the shapes
sub_p.def_saves(inputs=False, output=False)
add_p.def_lowering(scalar_lowering("({0} + {1})", "iuf"))
sub_p.def_lowering(scalar_lowering("({0} - {1})", "iuf"))

# --- bilinear and other binary -----------------------------------------------------------

mul_p = Primitive("mul")
def_elementwise(mul_p, "multiply")


def mul(x, y):
    """Element-wise product, x * y."""
    # A literal 1 is common: the seed cotangent of grad. Skipping it keeps the IR small.
    # (.item() == 1: NumPy's 0-d `x == 1` costs 30x more, and this runs for every product)
    if type(x) is np.ndarray and x.shape == () and x.item() == 1 and _dtype(y) == x.dtype:
        return y
    if type(y) is np.ndarray and y.shape == () and y.item() == 1 and _dtype(x) == y.dtype:
        return x
    return mul_p.bind(x, y)


def _mul_transpose_lhs(ct, x, y):
    return sum_to_shape(mul(ct, y), shape_of(x))


def _mul_transpose_rhs(ct, x, y):
    return sum_to_shape(mul(ct, x), shape_of(y))


def_bilinear(mul_p, _mul_transpose_lhs, _mul_transpose_rhs)
mul_p.def_lowering(scalar_lowering("({0} * {1})", "iuf"))

div_p = Primitive("div")
def_elementwise(div_p, "true_divide", quiet=True)
div_p.def_lowering(scalar_lowering("({0} / {1})", "f"))


def div(x, y):
    """Element-wise true division, x / y."""
    return div_p.bind(x, y)


def_elementwise_deriv(div_p, lambda x, y, out: div(const(x, 1.0), y),
                      lambda x, y, out: neg(div(out, y)), inputs=(1,))

pow_p = Primitive("pow")
def_elementwise(pow_p, "power", quiet=True)
# NumPy's power loop, given one exponent for all elements (a 0-d y), computes these exponents
# without pow(): sqrt(-inf) is NaN and sqrt(-0.0) is -0.0 where pow gives inf and 0.0
_POW_FAST = {-1.0: "(1.0 / {0})", 0.0: "1.0", 0.5: "math.sqrt({0})", 1.0: "{0}", 2.0: "({0} * {0})"}


def _pow_lowering(x, y):
    if x.dtype.kind != "f":
        return None
    if y.value is not None:  # a literal: the one branch NumPy takes (exact but for pow's)
        return _POW_FAST.get(y.value, "math.pow({0}, {1})").format(x, y)
    out = f"math.pow({x}, {y})"
    if not y.zero_d:  # an exponent per element: NumPy's pow() for all
        return out
    for c, text in _POW_FAST.items():
        out = f"({text.format(x)} if {y} == {c!r} else {out})"
    return out


pow_p.def_lowering(_pow_lowering)


def pow(x, y):
    """Element-wise power, x ** y, for operands of one dtype."""
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

integer_pow_p = Primitive("integer_pow")
integer_pow_p.def_impl(quiet_impl(lambda xp, x, *, y: xp.power(x, y) if y >= 0
                              else xp.true_divide(1, xp.power(x, -y))))
def_vectorized(integer_pow_p)
integer_pow_p.def_abstract_eval(
    lambda x, *, y: ShapedArray(x.shape, x.dtype if y >= 0 or is_float(x.dtype) else float_dtype(x.dtype)))


def integer_pow(x, y: int):
    """Element-wise x ** y for a static Python int `y` (a negative one gives a float result)."""
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
integer_pow_p.def_saves(output=False)


def _integer_pow_lowering(x, *, y):
    # NumPy squares for y == 2 (exactly x * x); other powers go through pow()
    if x.dtype.kind != "f":
        return None
    if y in (0, 1, 2):
        return ("1.0", f"{x}", f"({x} * {x})")[y]
    if y in (-1, -2):
        return f"(1.0 / {x})" if y == -1 else f"(1.0 / ({x} * {x}))"
    return f"math.pow({x}, {float(y)!r})" if y > 0 else f"(1.0 / math.pow({x}, {float(-y)!r}))"


integer_pow_p.def_lowering(_integer_pow_lowering)


def _max_min(name, np_name, cmp):
    p = Primitive(name)
    def_elementwise(p, np_name)

    def dx(x, y, out):
        # ties split the derivative evenly between the operands (as JAX does): the derivative
        # stays symmetric in x and y, and d/dt max(t, t) = 1/2 + 1/2 is exact
        return add(convert_element_type(cmp(x, y), aval_of(out).dtype),
                   mul(const(out, 0.5), convert_element_type(eq(x, y), aval_of(out).dtype)))

    def_elementwise_deriv(p, dx, lambda x, y, out: dx(y, x, out), output=False)  # (out: its dtype only)
    # NumPy's result: x where x > y (< for min) or x is NaN, else y (so y for equal zeros)
    p.def_lowering(scalar_lowering(f"({{0}} if {{0}} {'>' if name == 'max' else '<'} {{1}} or {{0}} != {{0}} else {{1}})"))
    return p


max_p = _max_min("max", "maximum", lambda x, y: gt(x, y))
min_p = _max_min("min", "minimum", lambda x, y: lt(x, y))


def maximum(x, y):
    """Element-wise maximum; NaN propagates, and ties split the derivative evenly."""
    return max_p.bind(x, y)


def minimum(x, y):
    """Element-wise minimum; NaN propagates, and ties split the derivative evenly."""
    return min_p.bind(x, y)


atan2_p = Primitive("atan2")
def_elementwise(atan2_p, "arctan2")
atan2_p.def_lowering(scalar_lowering("math.atan2({0}, {1})", "f"))


def atan2(y, x):
    """Element-wise arc tangent of y / x, in the quadrant of the point (x, y)."""
    return atan2_p.bind(y, x)


def _atan2_denominator(y, x):
    return add(mul(x, x), mul(y, y))


def_elementwise_deriv(atan2_p, lambda y, x, out: div(x, _atan2_denominator(y, x)),
                      lambda y, x, out: neg(div(y, _atan2_denominator(y, x))), output=False)

# --- unary --------------------------------------------------------------------------------


_WARNS = {"tan", "asin", "acos", "acosh", "atanh", "log", "log1p", "sqrt"}


# Lowerings of the float-valued unary primitives (for float operands; integers go through
# the impl, which converts them)
_UNARY_LOWERING = {
    "sin": "math.sin({0})", "cos": "math.cos({0})", "tan": "math.tan({0})", "asin": "math.asin({0})",
    "acos": "math.acos({0})", "atan": "math.atan({0})", "sinh": "math.sinh({0})",
    "cosh": "math.cosh({0})", "tanh": "math.tanh({0})", "asinh": "math.asinh({0})",
    "acosh": "math.acosh({0})", "atanh": "math.atanh({0})", "exp": "math.exp({0})",
    "expm1": "math.expm1({0})", "log": "math.log({0})", "log1p": "math.log1p({0})",
    "sqrt": "math.sqrt({0})", "cbrt": "fg_cbrt({0})", "logistic": "fg_logistic({0})",
    "erf": "math.erf({0})",
}


def _unary(name, np_name, deriv, doc, *, reads="both"):
    """A float-valued unary primitive (`np_name`: the xp function, or an impl (xp, x) -> array),
    its derivative rules from `deriv(x, out)`, and its function, named `name`. `reads` says
    what `deriv` reads: "x" or "out" when only that one (the other lends at most its dtype),
    so a recorded application keeps only it (tanh's keeps its output, sin's its input)."""
    p = Primitive(name)
    def_elementwise(p, quiet_impl(np_name) if callable(np_name) else np_name, float_result, quiet=name in _WARNS)
    def_elementwise_deriv(p, deriv, inputs=reads != "out", output=reads != "x")
    if name in _UNARY_LOWERING:
        p.def_lowering(scalar_lowering(_UNARY_LOWERING[name], "f"))

    def fn(x):
        return p.bind(x)
    return p, _named(fn, name, doc)


def _rsqrt(x):
    return div(const(x, 1.0), sqrt(x))


sin_p, sin = _unary("sin", "sin", lambda x, out: cos(x), "Element-wise sine.", reads="x")
cos_p, cos = _unary("cos", "cos", lambda x, out: neg(sin(x)), "Element-wise cosine.", reads="x")
# NumPy's float64 sine and cosine are scalar loops: large float64 arrays take jit's vectorised
# kernels instead, in eager too (the same bits as a jit kernel)
eager_math.install((sin_p, cos_p))
tan_p, tan = _unary("tan", "tan", lambda x, out: add(const(x, 1.0), mul(out, out)),
                    "Element-wise tangent.", reads="out")
asin_p, asin = _unary("asin", "arcsin", lambda x, out: _rsqrt(sub(const(x, 1.0), mul(x, x))),
                      "Element-wise inverse sine (NaN outside [-1, 1]).", reads="x")
acos_p, acos = _unary("acos", "arccos", lambda x, out: neg(_rsqrt(sub(const(x, 1.0), mul(x, x)))),
                      "Element-wise inverse cosine (NaN outside [-1, 1]).", reads="x")
atan_p, atan = _unary("atan", "arctan", lambda x, out: div(const(x, 1.0), add(const(x, 1.0), mul(x, x))),
                      "Element-wise inverse tangent.", reads="x")
sinh_p, sinh = _unary("sinh", "sinh", lambda x, out: cosh(x), "Element-wise hyperbolic sine.", reads="x")
cosh_p, cosh = _unary("cosh", "cosh", lambda x, out: sinh(x), "Element-wise hyperbolic cosine.", reads="x")
# (1 + t)(1 - t) rather than 1 - t*t: no cancellation where tanh is near +-1 (float32)
tanh_p, tanh = _unary("tanh", "tanh", lambda x, out: mul(add(const(x, 1.0), out), sub(const(x, 1.0), out)),
                      "Element-wise hyperbolic tangent.", reads="out")
asinh_p, asinh = _unary("asinh", "arcsinh", lambda x, out: _rsqrt(add(mul(x, x), const(x, 1.0))),
                        "Element-wise inverse hyperbolic sine.", reads="x")
acosh_p, acosh = _unary("acosh", "arccosh", lambda x, out: _rsqrt(sub(mul(x, x), const(x, 1.0))),
                        "Element-wise inverse hyperbolic cosine (NaN below 1).", reads="x")
atanh_p, atanh = _unary("atanh", "arctanh", lambda x, out: div(const(x, 1.0), sub(const(x, 1.0), mul(x, x))),
                        "Element-wise inverse hyperbolic tangent (NaN outside [-1, 1]).", reads="x")
exp_p, exp = _unary("exp", "exp", lambda x, out: out, "Element-wise exponential, e ** x.", reads="out")
expm1_p, expm1 = _unary("expm1", "expm1", lambda x, out: add(out, const(x, 1.0)),
                        "Element-wise exp(x) - 1, accurate near 0.", reads="out")
log_p, log = _unary("log", "log", lambda x, out: div(const(x, 1.0), x),
                    "Element-wise natural logarithm (-inf at 0, NaN below).", reads="x")
log1p_p, log1p = _unary("log1p", "log1p", lambda x, out: div(const(x, 1.0), add(const(x, 1.0), x)),
                        "Element-wise log(1 + x), accurate near 0.", reads="x")
sqrt_p, sqrt = _unary("sqrt", "sqrt", lambda x, out: div(const(x, 0.5), out),
                      "Element-wise square root (NaN below 0; the derivative at 0 is inf).", reads="out")
cbrt_p, cbrt = _unary("cbrt", "cbrt",
                      lambda x, out: div(const(x, 1.0), mul(const(x, 3.0), integer_pow(out, 2))),
                      "Element-wise real cube root.", reads="out")
logistic_p, logistic = _unary(
    "logistic", lambda xp, x: _logistic(xp, x),
    lambda x, out: mul(out, sub(const(x, 1.0), out)),
    "Element-wise logistic sigmoid, 1 / (1 + exp(-x)), without overflow.",
    reads="out")
erf_p, erf = _unary("erf", lambda xp, x: _erf(xp, x),
                    lambda x, out: mul(const(x, 2.0 / math.sqrt(math.pi)), exp(neg(mul(x, x)))),
                    "Element-wise error function.", reads="x")


def _logistic(xp, x):
    # exp of a negative number only, so large |x| neither overflows nor loses precision
    e = xp.exp(-xp.abs(x))
    return xp.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


def _erf(xp, x):
    # imported on first use: CuPy is optional, and importing SciPy would add about a tenth
    # of a second to `import fgrad` for programs that never call erf
    if xp is np:
        # SciPy loads slowly (~130 ms): imported on first use, not with fgrad
        from scipy.special import erf as f
    else:
        # optional dependency (GPU arrays): imported only when a CuPy array is seen
        from cupyx.scipy.special import erf as f
    return f(x)


# --- fused backward of tanh and logistic ----------------------------------------------------
# Both derivatives are functions of the output y, and the VJP multiplies them into the
# cotangent: ct (1 + y)(1 - y) for tanh, ct y (1 - y) for logistic. Built from separate ops
# that is three temporaries as large as the output per application (in a deep tanh network
# they are what the backward pass adds to the saved outputs); as one primitive it is one
# array. Each is linear in ct (its own transpose there) and its derivative in y is written
# with ops, so derivatives of every order still work.

_FUSED_CHUNK = 1 << 16  # elements per block of the impl's two scratch buffers


def _blocked_impl(factor):
    """The impl ct * factor(y) of a fused gradient: `factor(one, y, a, b)` computes the
    factor with NumPy ufuncs into the scratch arrays a and b and returns the one holding it
    (a and b None: as new arrays, any shapes). It works in blocks on large arrays, so its
    temporaries stay small."""
    def impl(ct, y, *, xp):
        # (a cached 0-d array for NumPy: a ufunc takes it faster than a NumPy scalar)
        one = const(y, 1) if xp is np else y.dtype.type(1)
        n = ct.size
        if (xp is np and n > _FUSED_CHUNK and ct.shape == y.shape and ct.dtype == y.dtype
                and y.flags.c_contiguous):
            out = np.empty(ct.shape, ct.dtype)
            # (a strided ct, such as the broadcast seed of grad of a sum, is read through a
            # flat view where NumPy can make one: 1-d and all-zero strides need no copy)
            c = ct if ct.ndim == 1 else ct.reshape(-1)
            t, o = y.reshape(-1), out.reshape(-1)
            a, b = np.empty(_FUSED_CHUNK, ct.dtype), np.empty(_FUSED_CHUNK, ct.dtype)
            with np.errstate(all="ignore"):
                for i in range(0, n, _FUSED_CHUNK):
                    j = min(i + _FUSED_CHUNK, n)
                    k = j - i
                    f = factor(one, t[i:j], a[:k], b[:k])
                    np.multiply(c[i:j], f, out=o[i:j])
            return out
        token = ignore_fp_errors()
        try:
            out = ct * factor(one, y, None, None)
        finally:
            restore_fp_errors(token)
        return out.astype(ct.dtype, copy=False) if out.dtype != ct.dtype else out
    return impl


def _fused_grad(name: str, impl, dfactor, lowering: str, *, inner_tangent: bool = False) -> Primitive:
    """The primitive `name`(ct, y) = ct * factor(y), computed by `impl(ct, y, *, xp)`;
    `dfactor(y)` is d factor / dy with fgrad ops; `lowering` the kernel expression over
    {ct}, {y} and {one}, or a function (ct, y) -> expression. The tangent's y term is
    (ct dfactor(y)) y_dot, or with `inner_tangent` ct (dfactor(y) y_dot): the order in
    which the composite that the primitive replaced rounded it."""
    p = Primitive(name)

    def jvp(primals, tangents):
        (c, y), (c_dot, y_dot) = primals, tangents
        out = p.bind(c, y)
        shape = shape_of(out)
        out_dot = None if c_dot is None else broadcast_to_shape(p.bind(c_dot, y), shape)
        if y_dot is not None:
            term = mul(c, mul(dfactor(y), y_dot)) if inner_tangent else mul(mul(c, dfactor(y)), y_dot)
            out_dot = add_tangents(out_dot, broadcast_to_shape(term, shape))
        return out, out_dot

    def vjp(needs, ct, out, c, y):
        return [sum_to_shape(p.bind(ct, y), shape_of(c)) if needs[0] else None,
                sum_to_shape(mul(mul(ct, c), dfactor(y)), shape_of(y)) if needs[1] else None]

    def_elementwise(p, impl)
    p.def_jvp(jvp)
    p.def_vjp(vjp)
    p.def_saves(inputs=True, output=False)

    def lower(ct, y):
        if y.dtype.kind != "f" or ct.dtype != y.dtype:
            return None
        return lowering(ct, y) if callable(lowering) else lowering.format(ct=ct, y=y, one=y.const(1.0))
    p.def_lowering(lower)
    return p


def _tanh_factor(one, y, a, b):
    if a is None:
        return (one + y) * (one - y)
    np.add(one, y, out=a)
    return np.multiply(a, np.subtract(one, y, out=b), out=a)


def _logistic_factor(one, y, a, b):
    if b is None:
        return y * (one - y)
    np.subtract(one, y, out=b)
    return np.multiply(y, b, out=b)


# d/dy of (1 + y)(1 - y) is -2y; of y (1 - y), 1 - 2y
tanh_grad_p = _fused_grad("tanh_grad", _blocked_impl(_tanh_factor), lambda y: mul(const(y, -2.0), y),
                          "({ct} * (({one} + {y}) * ({one} - {y})))")
logistic_grad_p = _fused_grad("logistic_grad", _blocked_impl(_logistic_factor),
                              lambda y: sub(const(y, 1.0), mul(const(y, 2.0), y)),
                              "({ct} * ({y} * ({one} - {y})))")


def _def_output_grad(prim: Primitive, grad_p: Primitive) -> None:
    """`prim`'s derivative rules through `grad_p`(ct, out), for a unary primitive whose
    derivative is a function of its output (it keeps only the output for the backward)."""
    def jvp(primals, tangents):
        out = prim.bind(*primals)
        return out, None if tangents[0] is None else grad_p.bind(tangents[0], out)

    prim.def_jvp(jvp)
    prim.def_vjp(lambda needs, ct, out, x: [grad_p.bind(ct, out) if needs[0] else None])
    prim.def_saves(inputs=False, output=True)


_def_output_grad(tanh_p, tanh_grad_p)
_def_output_grad(logistic_p, logistic_grad_p)
# large arrays: one kernel pass instead of NumPy's four over blocks, with NumPy's bits
eager_math.install((tanh_grad_p, logistic_grad_p), (np.float32, np.float64), same_bits=True)


# --- fused backward of sin and cos ----------------------------------------------------------
# Their VJPs are ct cos(x) and ct (-sin(x)): as separate ops, a sine's pass and then a
# product's pass over a new array. As one primitive, large float64 arrays take one kernel
# pass (eager_math: vmath's sine or cosine, then the product, each rounded as the two ops
# round it, so the same bits); everything else computes the two ops themselves.


def _trig_grad_impl(trig: Primitive, negate: bool):
    """The impl ct * trig(x) (negated first when `negate`), by the impls that the VJP's two
    or three ops would run, in their order."""
    def impl(ct, x, *, xp):
        f = trig.raw_impl(x, xp=xp)
        if type(f) is np.ndarray and f.size >= _FUSED_CHUNK and type(ct) is np.ndarray \
                and ct.shape == f.shape and ct.dtype == f.dtype:
            # (into the function's new array: the same operations, one array fewer; on small
            # arrays the out= call costs more than the allocation it saves)
            if negate:
                np.negative(f, out=f)
            return np.multiply(ct, f, out=f)
        return xp.multiply(ct, xp.negative(f) if negate else f)
    impl.__name__ = impl.__qualname__ = f"{trig.name}_grad_impl"
    return impl


def _trig_grad_lowering(trig: Primitive, negate: bool):
    """The kernel expression ct * trig(x) (negated first when `negate`), with trig's value
    rounded to the operands' dtype before the product, as its own equation's would be."""
    def lower(ct, x):
        f = trig.lowering(x)
        if x.dtype != np.float64:
            f = f"np.{x.dtype.name}({f})"
        return f"({ct} * (-{f}))" if negate else f"({ct} * {f})"
    return lower


sin_grad_p = _fused_grad("sin_grad", _trig_grad_impl(cos_p, False), lambda x: neg(sin(x)),
                         _trig_grad_lowering(cos_p, False), inner_tangent=True)
cos_grad_p = _fused_grad("cos_grad", _trig_grad_impl(sin_p, True), lambda x: neg(cos(x)),
                         _trig_grad_lowering(sin_p, True), inner_tangent=True)
sin_grad_p.kernel_eqns, cos_grad_p.kernel_eqns = 2, 3  # (cos and mul; sin, neg and mul)


def _def_input_grad(prim: Primitive, grad_p: Primitive, deriv) -> None:
    """`prim`'s VJP through `grad_p`(ct, x), for a unary primitive whose VJP was
    mul(ct, deriv(x)) (its JVP stays that): where ct is a literal one, or of another dtype
    than x, that product itself, as before."""
    def vjp(needs, ct, out, x):
        if not needs[0]:
            return [None]
        if _dtype(ct) != _dtype(x) or (type(ct) is np.ndarray and ct.shape == () and ct.item() == 1):
            return [mul(ct, deriv(x))]
        return [grad_p.bind(ct, x)]

    prim.def_vjp(vjp)


_def_input_grad(sin_p, sin_grad_p, cos)
_def_input_grad(cos_p, cos_grad_p, lambda x: neg(sin(x)))
# large float64 arrays: one kernel pass with vmath's functions, as sin and cos take
eager_math.install((sin_grad_p, cos_grad_p))


# log(exp(x) + exp(y)) is smooth everywhere, but the stable composite max(x, y) +
# log1p(exp(-|x - y|)) passes through max and abs at x == y, and derivatives of that composite
# lose the curvature there (d2/dx2 = 0 instead of 1/4). One primitive, with partials
# logistic(+-(x - y)) that are smooth, is exact at every order.
logaddexp_p = Primitive("logaddexp")
def_elementwise(logaddexp_p, "logaddexp", float_result, quiet=True)
logaddexp_p.def_lowering(scalar_lowering("fg_logaddexp({0}, {1})", "f"))


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
                      lambda x, y, out: logistic(neg(_logaddexp_diff(x, y))), output=False)

abs_p = Primitive("abs")
# |z| of a complex z is real (complex64 -> float32), as in NumPy
def_elementwise(abs_p, "abs",
                lambda x: np.finfo(x.dtype).dtype if x.dtype.kind == "c" else x.dtype)
abs_p.def_lowering(scalar_lowering("abs({0})", "iuf"))


def abs(x):
    """Element-wise absolute value (real for complex x); its derivative at 0 is 0."""
    return abs_p.bind(x)


def _abs_unit(x):
    """d|x|/dx under JAX's complex convention: sign(x) for real x (sign(0) = 0, the subgradient
    of least magnitude; README: derivatives at non-differentiable points); conj(x) / |x| for
    complex x (|x|'s tangent is Re(conj(x) t) / |x|, its cotangent ct conj(x) / |x|), 0 at 0
    as in JAX, with a safe denominator so that higher orders stay finite there."""
    if aval_of(x).dtype.kind != "c":
        return sign(x)
    # complex.py's conj is written with this module's ops: looked up when a complex abs is
    # differentiated (a real cycle, as sum_to_shape's reduce_sum)
    from .complex import conj
    out = abs(x)
    zero = eq(out, const(out, 0.0))
    safe = convert_element_type(select(zero, const(out, 1.0), out), aval_of(x).dtype)
    return select(zero, const(x, 0.0), div(conj(x), safe))


def _abs_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    out = abs(x)
    # (the real part of a complex product: the convert rule takes it, as JAX's)
    return out, convert_element_type(mul(_abs_unit(x), t), aval_of(out).dtype)


def _abs_vjp(needs, ct, out, x):
    return [mul(convert_element_type(ct, aval_of(x).dtype), _abs_unit(x))]


abs_p.def_jvp(_abs_jvp)
abs_p.def_vjp(_abs_vjp)
abs_p.def_saves(output=False)


# Lowerings of the primitives _nondiff makes: {dtype kinds: template} (see scalar_lowering)
_NONDIFF_LOWERING = {
    "sign": {"f": "fg_sign({0})", "i": "(1 if {0} > 0 else (-1 if {0} < 0 else 0))"},
    "floor": {"f": "fg_floor({0})"}, "ceil": {"f": "fg_ceil({0})"}, "round": {"f": "fg_rint({0})"},
    "not": {"biuf": "({0} == 0)"}, "isnan": {"f": "({0} != {0})"},
    "isinf": {"f": "math.isinf({0})"}, "isfinite": {"f": "math.isfinite({0})"},
    "lt": {"biuf": "({0} < {1})"}, "le": {"biuf": "({0} <= {1})"}, "gt": {"biuf": "({0} > {1})"},
    "ge": {"biuf": "({0} >= {1})"}, "eq": {"biuf": "({0} == {1})"}, "ne": {"biuf": "({0} != {1})"},
    "and": {"biuf": "(({0} != 0) & ({1} != 0))"}, "or": {"biuf": "(({0} != 0) | ({1} != 0))"},
    "xor": {"biuf": "(({0} != 0) ^ ({1} != 0))"},
    # integer division by zero gives 0, and MIN // -1 wraps (fg_floordiv_i), as in NumPy
    "floordiv": {"f": "({0} // {1})", "i": "fg_floordiv_i({0}, {1})", "u": "({0} // {1})"},
    "bitwise_and": {"biu": "({0} & {1})"}, "bitwise_or": {"biu": "({0} | {1})"},
    "bitwise_xor": {"biu": "({0} ^ {1})"}, "invert": {"b": "(not {0})", "iu": "(~{0})"},
}


def _nondiff(name, np_name, arity, dtype_rule, doc, *, fn_name=None):
    """A primitive with a zero derivative everywhere (rounding, predicates, comparisons, bit
    operations) computed by the xp function `np_name` of `arity` operands, and its function,
    named `fn_name` (default `name`)."""
    p = Primitive(name)
    if arity == 1:
        def fn(x):
            return p.bind(x)
    else:
        def fn(x, y):
            return p.bind(x, y)
    def_elementwise(p, np_name, dtype_rule, quiet=arity != 1)
    def_nondiff(p)
    if name in _NONDIFF_LOWERING:
        p.def_lowering(scalar_lowering(_NONDIFF_LOWERING[name]))
    return p, _named(fn, fn_name or name, doc)


sign_p, sign = _nondiff("sign", "sign", 1, same_dtype, "Element-wise sign: -1, 0 or 1 (NaN for NaN).")
floor_p, floor = _nondiff("floor", "floor", 1, same_dtype, "Element-wise floor, in the input's dtype.")
ceil_p, ceil = _nondiff("ceil", "ceil", 1, same_dtype, "Element-wise ceiling, in the input's dtype.")
round_p, round = _nondiff("round", "round", 1, same_dtype,
                          "Element-wise rounding to the nearest integer, halves to even.")
not_p, logical_not = _nondiff("not", "logical_not", 1, bool_result, "Element-wise logical not.",
                              fn_name="logical_not")
isnan_p, isnan = _nondiff("isnan", "isnan", 1, bool_result, "Element-wise test for NaN.")
isinf_p, isinf = _nondiff("isinf", "isinf", 1, bool_result, "Element-wise test for +-inf.")
isfinite_p, isfinite = _nondiff("isfinite", "isfinite", 1, bool_result,
                                "Element-wise test for a finite value (not NaN or +-inf).")
lt_p, lt = _nondiff("lt", "less", 2, bool_result, "Element-wise x < y.")
le_p, le = _nondiff("le", "less_equal", 2, bool_result, "Element-wise x <= y.")
gt_p, gt = _nondiff("gt", "greater", 2, bool_result, "Element-wise x > y.")
ge_p, ge = _nondiff("ge", "greater_equal", 2, bool_result, "Element-wise x >= y.")
eq_p, eq = _nondiff("eq", "equal", 2, bool_result, "Element-wise x == y.")
ne_p, ne = _nondiff("ne", "not_equal", 2, bool_result, "Element-wise x != y.")
and_p, logical_and = _nondiff("and", "logical_and", 2, bool_result, "Element-wise logical and.",
                              fn_name="logical_and")
or_p, logical_or = _nondiff("or", "logical_or", 2, bool_result, "Element-wise logical or.",
                            fn_name="logical_or")
xor_p, logical_xor = _nondiff("xor", "logical_xor", 2, bool_result, "Element-wise logical xor.",
                              fn_name="logical_xor")
floordiv_p, floor_divide = _nondiff("floordiv", "floor_divide", 2, same_dtype,
                                    "Element-wise floor division, floor(x / y) (NumPy's //).",
                                    fn_name="floor_divide")
bitwise_and_p, bitwise_and = _nondiff("bitwise_and", "bitwise_and", 2, same_dtype,
                                      "Element-wise bitwise and of integers or booleans.")
bitwise_or_p, bitwise_or = _nondiff("bitwise_or", "bitwise_or", 2, same_dtype,
                                    "Element-wise bitwise or of integers or booleans.")
bitwise_xor_p, bitwise_xor = _nondiff("bitwise_xor", "bitwise_xor", 2, same_dtype,
                                      "Element-wise bitwise xor of integers or booleans.")
invert_p, invert = _nondiff("invert", "invert", 1, same_dtype,
                            "Element-wise bitwise not (logical not for booleans).")

# --- remainders ---------------------------------------------------------------------------
# fmod is C's fmod (the result has the sign of x), mod is Python's and NumPy's remainder (the
# sign of y). Both are x - n * y for an integer n (trunc(x / y) for fmod, floor(x / y) for mod),
# so d/dx = 1 and d/dy = -n. n is piecewise constant: its own derivative is zero, which the
# nondiff round/floordiv primitives give, so every order is right away from the jumps.

fmod_p = Primitive("fmod")
def_elementwise(fmod_p, "fmod", quiet=True)
fmod_p.def_lowering(scalar_lowering({"f": "fg_fmod({0}, {1})", "i": "fg_fmod_i({0}, {1})", "u": "({0} % {1})"}))


def fmod(x: Any, y: Any) -> Any:
    """C's fmod: x - trunc(x / y) * y, with the sign of x (NumPy's fmod); any real or integer
    dtype, x and y of one dtype."""
    return fmod_p.bind(x, y)


def _fmod_quotient(x: Any, y: Any, out: Any) -> Any:
    """The integer quotient fmod used: trunc(x / y) in exact arithmetic, but the rounded x / y
    can cross an integer (fmod(1.0, 0.1) uses 9 while trunc(1.0 / 0.1) == 10), and the
    derivative must be that of the value returned. x - out is a multiple of y, so rounding
    (x - out) / y recovers n exactly; for y = +-inf it is 0, as it should be."""
    return round(div(sub(x, out), y))


def_elementwise_deriv(fmod_p, lambda x, y, out: const(x, 1.0),
                      lambda x, y, out: neg(_fmod_quotient(x, y, out)))

mod_p = Primitive("mod")
def_elementwise(mod_p, "remainder", quiet=True)
# Python's remainder is NumPy's (the sign of y); integer x % 0 is 0 in the kernels, as in NumPy
mod_p.def_lowering(scalar_lowering("({0} % {1})", "iuf"))


def mod(x: Any, y: Any) -> Any:
    """Python's and NumPy's remainder: x - floor(x / y) * y, with the sign of y."""
    return mod_p.bind(x, y)


# NumPy computes floor_divide and remainder together (npy_divmod), so floor_divide(x, y) is
# exactly the n that remainder used (x == n * y + remainder(x, y)), also where the rounded x / y
# would floor to another integer (1.0 // 0.1 == 9.0).
def_elementwise_deriv(mod_p, lambda x, y, out: const(x, 1.0),
                      lambda x, y, out: neg(floor_divide(x, y)), output=False)

# --- select and dtype conversion ----------------------------------------------------------

select_p = Primitive("select")
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
select_p.def_saves(inputs=(0,), output=False)  # the predicate (x and y lend their shapes)
select_p.def_lowering(scalar_lowering("({1} if {0} else {2})"))

convert_element_type_p = Primitive("convert_element_type")
# complex to real keeps the real part (NumPy's astype, without its ComplexWarning; JAX's too)
convert_element_type_p.def_impl(lambda x, *, new_dtype, xp: (xp.real(x) if x.dtype.kind == "c" and new_dtype.kind != "c"
                                                             else x).astype(new_dtype))
convert_element_type_p.def_abstract_eval(lambda x, *, new_dtype: ShapedArray(x.shape, new_dtype))


def convert_element_type(x, new_dtype):
    """`x` cast to `new_dtype` (NumPy's astype); differentiable between float dtypes."""
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
convert_element_type_p.def_saves(inputs=False, output=False)


def _convert_lowering(x, *, new_dtype):
    new = np.dtype(new_dtype)
    if x.dtype.kind not in "biuf" or new.kind not in "biuf":
        return None
    if new.kind == "b":
        return f"({x} != 0)"
    if x.dtype.kind == "f" and new.kind in "iu":
        return None  # NaN and out-of-range values have no defined integer (C leaves it open)
    if x.dtype.kind == "b":
        return f"(1.0 if {x} else 0.0)" if new.kind == "f" else f"(1 if {x} else 0)"
    if new == np.float64:  # (Numba's float() keeps a float32 a float32: widen explicitly)
        return f"np.float64({x})" if x.dtype.kind == "f" and x.dtype.itemsize < 8 else f"float({x})"
    return x  # the compiler casts to the output's dtype (every integer one, and float32)


convert_element_type_p.def_lowering(_convert_lowering)


# --- stop_gradient ----------------------------------------------------------------------------

stop_gradient_p = Primitive("stop_gradient")
stop_gradient_p.def_impl(lambda x, *, xp: x)
stop_gradient_p.def_abstract_eval(lambda x: x)
def_nondiff(stop_gradient_p)
def_vectorized(stop_gradient_p)
stop_gradient_p.def_lowering(scalar_lowering("{0}"))


def stop_gradient(x: Any) -> Any:
    """The identity, with a zero derivative (traces do not record it)."""
    return stop_gradient_p.bind(x)
