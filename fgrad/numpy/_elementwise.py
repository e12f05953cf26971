"""Elementwise functions of fgrad.numpy, NumPy names and semantics."""
from __future__ import annotations

import numpy as np

from ..core.avals import float_dtype
from ..ops import elementwise as ew
from ._util import _FAST_TYPES, as_value, cast, dtype_of, int_arg, promote


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
fmod = _binary(ew.rem, "fmod")
floor_divide = _binary(ew.floor_divide, "floor_divide")


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


def power(x, y):
    """x ** y. A Python int exponent uses integer_pow, exact for negative bases."""
    if isinstance(y, (int, np.integer)) and not isinstance(y, bool):
        x = as_value(x, "power")
        return ew.integer_pow(x, int(y))
    return ew.pow(*promote("power", x, y))


def square(x):
    return ew.integer_pow(as_value(x, "square"), 2)


def reciprocal(x):
    return true_divide(1.0, x)


def negative(x):
    return ew.neg(as_value(x, "negative"))


def positive(x):
    return as_value(x, "positive")


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


def round(x, decimals: int = 0):
    """Round to `decimals` decimal places (halves to even, as NumPy)."""
    if type(decimals) is not int:
        decimals = int_arg(decimals, "round", "decimals")
    if decimals and not -_MAX_DECIMALS <= decimals <= _MAX_DECIMALS:
        raise ValueError(f"round: decimals={decimals:.3g} is out of range: float64 resolves at most "
                         f"{_MAX_DECIMALS} decimal places either way, so use |decimals| <= {_MAX_DECIMALS}")
    if decimals:
        s = 10.0 ** decimals
        return true_divide(ew.round(multiply(x, s)), s)
    return ew.round(as_value(x, "round"))


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


def clip(a, a_min=None, a_max=None):
    if a_min is not None:
        a = maximum(a, a_min)
    if a_max is not None:
        a = minimum(a, a_max)
    return a


def logaddexp(x, y):
    """log(exp(x) + exp(y)) without overflow."""
    x, y = promote("logaddexp", x, y)
    x = cast(x, float_dtype(dtype_of(x)))
    y = cast(y, float_dtype(dtype_of(y)))
    m = ew.maximum(x, y)
    return ew.add(m, ew.log1p(ew.exp(ew.neg(ew.abs(ew.sub(x, y))))))


__all__ = [n for n in dir() if not n.startswith("_") and n not in (
    "annotations", "np", "ew", "sh", "float_dtype", "as_value", "cast", "dtype_of", "promote", "int_arg",
    "normalize_axes", "aval_of", "ShapeError")]
