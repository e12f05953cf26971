"""Elementwise functions of fgrad.numpy, NumPy names and semantics."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..core.avals import float_dtype
from ..ops import elementwise as ew
from ._util import _FAST_TYPES, as_value, cast, dtype_of, int_arg, promote, reject_out, result_dtype


def _binary(prim_fn, name):
    def fn(x, y):
        return prim_fn(*promote(name, x, y))
    fn.__name__ = name
    fn.__doc__ = f"Elementwise {name} with NumPy broadcasting; differentiable."
    return fn


def _unary_float(prim_fn, name):
    def fn(x):
        if type(x) in _FAST_TYPES and x.dtype.kind == "f":
            return prim_fn(x)
        x = as_value(x, name)
        return prim_fn(cast(x, float_dtype(dtype_of(x))))
    fn.__name__ = name
    fn.__doc__ = f"Elementwise {name}; differentiable to any order."
    return fn


add = _binary(ew.add, "add")
subtract = _binary(ew.sub, "subtract")
multiply = _binary(ew.mul, "multiply")
maximum = _binary(ew.maximum, "maximum")
minimum = _binary(ew.minimum, "minimum")
less = _binary(ew.lt, "less")
less_equal = _binary(ew.le, "less_equal")
greater = _binary(ew.gt, "greater")
greater_equal = _binary(ew.ge, "greater_equal")
equal = _binary(ew.eq, "equal")
not_equal = _binary(ew.ne, "not_equal")
logical_and = _binary(ew.logical_and, "logical_and")
logical_or = _binary(ew.logical_or, "logical_or")
logical_xor = _binary(ew.logical_xor, "logical_xor")


def _division(prim_fn: Any, name: str, doc: str) -> Any:
    """fmod, remainder and floor_divide: NumPy's promotion, and booleans computed as int8
    (NumPy has no boolean loop for them; True % True is an int8 0)."""
    def fn(x: Any, y: Any) -> Any:
        x, y = promote(name, x, y)
        if dtype_of(x).kind == "b":
            x, y = cast(x, np.dtype(np.int8)), cast(y, np.dtype(np.int8))
        return prim_fn(x, y)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


fmod = _division(ew.rem, "fmod", """Elementwise C remainder x - trunc(x / y) * y, with the sign of x
(NumPy's fmod). Differentiable: d/dx = 1, d/dy = -trunc(x / y). Integers stay integers
(x fmod 0 is 0, as in NumPy).""")
remainder = _division(ew.mod, "remainder", """Elementwise Python remainder x - floor(x / y) * y, with the
sign of y: NumPy's remainder/mod and the % operator (-1.0 % 3.0 == 2.0). Differentiable:
d/dx = 1, d/dy = -floor(x / y). Integers stay integers (x % 0 is 0, as in NumPy).""")
mod = remainder
floor_divide = _division(ew.floor_divide, "floor_divide", """Elementwise floor(x / y), the // operator,
consistent with remainder (x == floor_divide(x, y) * y + remainder(x, y)). Its derivative is
zero wherever it is defined.""")


def divmod(x: Any, y: Any) -> tuple:
    """(floor_divide(x, y), remainder(x, y)), as NumPy's divmod and Python's divmod()."""
    return floor_divide(x, y), remainder(x, y)


def _bitwise(prim_fn: Any, name: str) -> Any:
    """bitwise_and/or/xor: NumPy's promotion, integers and booleans only."""
    def fn(x: Any, y: Any) -> Any:
        x, y = promote(name, x, y)
        _check_bitwise(x, name)
        return prim_fn(x, y)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"Elementwise {name} of integers or booleans (the {_BITWISE_OPS[name]} operator); "
                  "zero derivative.")
    return fn


_BITWISE_OPS = {"bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^", "invert": "~"}


def _check_bitwise(x: Any, name: str) -> None:
    """Bitwise operations exist for integers and booleans only (NumPy raises for floats)."""
    dt = dtype_of(x)
    if dt.kind not in "biu":
        raise TypeError(f"{name}: the {_BITWISE_OPS[name]} operator works on integers and booleans, "
                        f"got dtype {dt}. For conditions on floats compare first (e.g. (x > 0) "
                        f"{_BITWISE_OPS[name]} (y > 0)), or use logical_and/logical_or/logical_not.")


bitwise_and = _bitwise(ew.bitwise_and, "bitwise_and")
bitwise_or = _bitwise(ew.bitwise_or, "bitwise_or")
bitwise_xor = _bitwise(ew.bitwise_xor, "bitwise_xor")


def invert(x: Any) -> Any:
    """Elementwise bitwise NOT of integers, logical NOT of booleans (the ~ operator)."""
    x = as_value(x, "invert")
    _check_bitwise(x, "invert")
    return ew.invert(x)


bitwise_not = invert


def true_divide(x, y):
    """Elementwise x / y (integers divide to float64, as in NumPy)."""
    x, y = promote("divide", x, y)
    dt = float_dtype(dtype_of(x))
    return ew.div(cast(x, dt), cast(y, dt))


divide = true_divide


def arctan2(y, x):
    y, x = promote("arctan2", y, x)
    dt = float_dtype(dtype_of(x))
    return ew.atan2(cast(y, dt), cast(x, dt))


def power(x: Any, y: Any) -> Any:
    """x ** y. An integer exponent (Python or NumPy) uses integer_pow, exact for negative
    bases; as in NumPy, a Python int is weak (float32 ** 2 is float32) and integers to
    negative integer powers are an error."""
    if isinstance(y, (int, np.integer)) and not isinstance(y, bool):
        x = as_value(x, "power")
        x = cast(x, result_dtype(x, y))  # bool ** 2 is int64, float32 ** np.int64(2) float64
        if y < 0 and dtype_of(x).kind in "iu":
            raise ValueError(f"power: integers to negative integer powers are not allowed (x of dtype "
                             f"{dtype_of(x)} ** {y}); use a float base, e.g. x.astype(float) ** {y}")
        return ew.integer_pow(x, int(y))
    return ew.pow(*promote("power", x, y))


def square(x: Any) -> Any:
    """x * x; booleans square as int8, as in NumPy (which has no boolean loop for it)."""
    x = as_value(x, "square")
    if dtype_of(x).kind == "b":
        x = cast(x, np.dtype(np.int8))
    return ew.integer_pow(x, 2)


def reciprocal(x: Any) -> Any:
    """1 / x. Integers stay integers, as in NumPy (1.0 / x truncated: 0 unless |x| == 1)."""
    x = as_value(x, "reciprocal")
    if dtype_of(x).kind in "iu":
        return cast(true_divide(1.0, x), dtype_of(x))
    return true_divide(1.0, x)


def negative(x):
    return ew.neg(as_value(x, "negative"))


def positive(x: Any) -> Any:
    """+x: x itself. Booleans are refused, as NumPy refuses them."""
    x = as_value(x, "positive")
    if dtype_of(x).kind == "b":
        raise TypeError("positive: the unary + of booleans is not supported (NumPy has no boolean "
                        "positive); convert first, e.g. x.astype(int)")
    return x


def absolute(x):
    return ew.abs(as_value(x, "abs"))


abs = absolute


def sign(x):
    return ew.sign(as_value(x, "sign"))


sin = _unary_float(ew.sin, "sin")
cos = _unary_float(ew.cos, "cos")
tan = _unary_float(ew.tan, "tan")
arcsin = _unary_float(ew.asin, "arcsin")
arccos = _unary_float(ew.acos, "arccos")
arctan = _unary_float(ew.atan, "arctan")
sinh = _unary_float(ew.sinh, "sinh")
cosh = _unary_float(ew.cosh, "cosh")
tanh = _unary_float(ew.tanh, "tanh")
arcsinh = _unary_float(ew.asinh, "arcsinh")
arccosh = _unary_float(ew.acosh, "arccosh")
arctanh = _unary_float(ew.atanh, "arctanh")
exp = _unary_float(ew.exp, "exp")
expm1 = _unary_float(ew.expm1, "expm1")
log = _unary_float(ew.log, "log")
log1p = _unary_float(ew.log1p, "log1p")
sqrt = _unary_float(ew.sqrt, "sqrt")
cbrt = _unary_float(ew.cbrt, "cbrt")


def exp2(x):
    x = as_value(x, "exp2")
    x = cast(x, float_dtype(dtype_of(x)))
    return ew.exp(ew.mul(x, ew.const(x, np.log(2.0))))


def log2(x):
    y = log(x)
    return ew.div(y, ew.const(y, np.log(2.0)))


def log10(x):
    y = log(x)
    return ew.div(y, ew.const(y, np.log(10.0)))


def floor(x):
    return ew.floor(as_value(x, "floor"))


def ceil(x):
    return ew.ceil(as_value(x, "ceil"))


def round(x: Any, decimals: int = 0, out: Any = None) -> Any:
    """Round to `decimals` decimal places (halves to even, as NumPy); out= must be None."""
    reject_out(out, "round")
    if type(decimals) is not int:
        decimals = int_arg(decimals, "round", "decimals")
    if decimals and not -_MAX_DECIMALS <= decimals <= _MAX_DECIMALS:
        raise ValueError(f"round: decimals={decimals:.3g} is out of range: float64 resolves at most "
                         f"{_MAX_DECIMALS} decimal places either way, so use |decimals| <= {_MAX_DECIMALS}")
    x = as_value(x, "round")
    if dtype_of(x).kind in "iu":
        # NumPy: integers are whole at decimals >= 0; otherwise rounded in float64, cast back
        if decimals >= 0:
            return x
        return cast(round(cast(x, np.dtype(np.float64)), decimals), dtype_of(x))
    if decimals > 0:  # NumPy's order of operations, so that eager and traced agree to the bit
        s = 10.0 ** decimals
        return true_divide(ew.round(multiply(x, s)), s)
    if decimals < 0:
        s = 10.0 ** -decimals
        return multiply(ew.round(true_divide(x, s)), s)
    return ew.round(x)


around = round
_MAX_DECIMALS = 308  # 10.0 ** decimals must be a finite float64


def logical_not(x):
    return ew.logical_not(as_value(x, "logical_not"))


def isnan(x):
    return ew.isnan(as_value(x, "isnan"))


def isinf(x):
    return ew.isinf(as_value(x, "isinf"))


def isfinite(x):
    return ew.isfinite(as_value(x, "isfinite"))


def where(condition, x=None, y=None):
    """Elementwise choice between x and y. The cotangent of the branch not taken is
    zero, but a NaN computed in that branch still poisons its own gradient: guard
    the input of log/sqrt/div too (the "double where" idiom)."""
    if x is None and y is None:
        from ._shape import nonzero
        return nonzero(condition)
    cond = cast(as_value(condition, "where"), np.dtype(bool))
    x, y = promote("where", x, y)
    cond, x, y = _where_args(cond, x, y)
    return ew.select(cond, x, y)


def _where_args(cond, x, y):
    from ._util import aval_of, broadcast_shapes, broadcast_to
    shapes = [aval_of(a).shape for a in (cond, x, y)]
    full = [s for s in shapes if s != ()]
    if full and any(s != full[0] for s in full):
        shape = broadcast_shapes("where", *shapes)
        return [a if s == () else broadcast_to(a, shape) for a, s in zip((cond, x, y), shapes)]
    return cond, x, y


def clip(a: Any, a_min: Any = None, a_max: Any = None, out: Any = None, *, min: Any = None,
         max: Any = None) -> Any:
    """a limited to [a_min, a_max] (either bound may be None; `min`/`max` are NumPy 2's
    keyword names for them); differentiable in a and in both bounds."""
    reject_out(out, "clip")
    if min is not None or max is not None:
        if a_min is not None or a_max is not None:
            raise ValueError("clip: passing `min` or `max` keyword argument when `a_min` and `a_max` "
                             "are provided is forbidden")
        a_min, a_max = min, max
    if a_min is not None:
        a = maximum(a, a_min)
    if a_max is not None:
        a = minimum(a, a_max)
    return a


def logaddexp(x: Any, y: Any) -> Any:
    """log(exp(x) + exp(y)) without overflow. One primitive (fgrad.ops.elementwise.logaddexp)
    with smooth partials, so every derivative order is exact at x == y too."""
    x, y = promote("logaddexp", x, y)
    x = cast(x, float_dtype(dtype_of(x)))
    y = cast(y, float_dtype(dtype_of(y)))
    return ew.logaddexp(x, y)


def logaddexp2(x: Any, y: Any) -> Any:
    """log2(2**x + 2**y) without overflow; smooth at x == y (binds the logaddexp primitive)."""
    x, y = promote("logaddexp2", x, y)
    x = cast(x, float_dtype(dtype_of(x)))
    y = cast(y, float_dtype(dtype_of(y)))
    ln2 = ew.const(x, np.log(2.0))
    return ew.div(ew.logaddexp(ew.mul(x, ln2), ew.mul(y, ew.const(y, np.log(2.0)))), ln2)


__all__ = [n for n in dir() if not n.startswith("_") and n not in (
    "annotations", "np", "ew", "sh", "float_dtype", "as_value", "cast", "dtype_of", "promote", "int_arg",
    "normalize_axes", "aval_of", "ShapeError", "Any", "reject_out", "result_dtype")]
