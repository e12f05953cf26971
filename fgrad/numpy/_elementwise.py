"""Elementwise functions of fgrad.numpy, NumPy names and semantics. Those whose result
depends on the dialect (promotion, integer -> float, error wording) take `policy=` (see
_policy.py); fgrad.torch calls them with PyTorch's."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import FgradTypeError, FgradValueError
from ..ops import elementwise as ew
from ._index import nonzero
from ._policy import NUMPY
from ._util import (
    _FAST_TYPES,
    _PY_SCALARS,
    _promote_fast,
    as_value,
    broadcast_args,
    fresh,
    cast,
    dtype_of,
    int_arg,
    promote,
    reject_out,
)


def _binary(prim_fn, name):
    def fn(x, y, *, policy=NUMPY):
        fast = None
        if policy is NUMPY:  # (promote's first step, without its call: this runs for every operator)
            fast = _promote_fast(x, y)
        x, y = fast if fast is not None else promote(name, x, y, policy=policy)
        out = prim_fn(x, y)
        # (a product by 1 or a sum with 0 hands back the other operand: a new array for the user)
        return out if out is not x and out is not y else fresh(out, x, y)
    fn.__name__ = name
    fn.__doc__ = f"Elementwise {name} with NumPy broadcasting; differentiable."
    return fn


def unary_float(prim_fn, name):
    """`name(x)`: prim_fn of x, integers first converted to the policy's float dtype."""
    def fn(x, *, policy=NUMPY):
        if type(x) in _FAST_TYPES and x.dtype.kind == "f":
            return prim_fn(x)
        x = as_value(x, name)
        return prim_fn(cast(x, policy.float_dtype(dtype_of(x))))
    fn.__name__ = name
    fn.__doc__ = f"Elementwise {name}; differentiable to any order."
    return fn


def _float_binary(prim_fn, name):
    """`name(x, y)` in the float dtype of the operands' common dtype (the policy's for
    integers); integer operands convert to it directly, not through their common integer
    type (which PyTorch's categories may not hold them in: int32 0-d with uint8, uint8 with -1)."""
    def fn(x, y, *, policy=NUMPY):
        return prim_fn(*promote(name, x, y, policy=policy, to_float=True))
    fn.__name__ = fn.__qualname__ = name
    return fn


add = _binary(ew.add, "add")
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
    def fn(x: Any, y: Any, *, policy=NUMPY) -> Any:
        x, y = promote(name, x, y, policy=policy)
        if dtype_of(x).kind == "b":
            x, y = cast(x, np.dtype(np.int8)), cast(y, np.dtype(np.int8))
        return prim_fn(x, y)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


fmod = _division(ew.fmod, "fmod", """Elementwise C remainder x - trunc(x / y) * y, with the sign of x
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
    def fn(x: Any, y: Any, *, policy=NUMPY) -> Any:
        x, y = promote(name, x, y, policy=policy)
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
        example = "~(x > 0)" if name == "invert" else f"(x > 0) {_BITWISE_OPS[name]} (y > 0)"
        raise FgradTypeError(f"{name}: the {_BITWISE_OPS[name]} operator works on integers and booleans, "
                        f"got dtype {dt}. For conditions on floats compare first (e.g. {example}), "
                        "or use logical_and/logical_or/logical_not.", doc="bitwise-float")


bitwise_and = _bitwise(ew.bitwise_and, "bitwise_and")
bitwise_or = _bitwise(ew.bitwise_or, "bitwise_or")
bitwise_xor = _bitwise(ew.bitwise_xor, "bitwise_xor")


def invert(x: Any) -> Any:
    """Elementwise bitwise NOT of integers, logical NOT of booleans (the ~ operator)."""
    x = as_value(x, "invert")
    _check_bitwise(x, "invert")
    return ew.invert(x)


bitwise_not = invert


true_divide = divide = _float_binary(ew.div, "divide")
true_divide.__doc__ = "Elementwise x / y (integers divide to float64, as in NumPy)."
arctan2 = _float_binary(ew.atan2, "arctan2")
arctan2.__doc__ = """The arc tangent of x / y in radians, in [-pi, pi], with the quadrant given by the signs
of both: the angle of the point with first coordinate y and second coordinate x (NumPy's
arctan2(x1, x2) with x1 = x, x2 = y; `atan2` is the same function). Integer inputs give floats.

Args:
    x: the numerators (NumPy's x1).
    y: the denominators (NumPy's x2).

Returns:
    A float array of the broadcast shape."""


def subtract(x: Any, y: Any, *, policy=NUMPY) -> Any:
    """Elementwise x - y; booleans refused (as the policy says: NumPy when the result is
    boolean, PyTorch for any boolean tensor)."""
    if policy is NUMPY:  # (promote's first step, as in _binary: this runs for every `-`)
        fast = _promote_fast(x, y)
        if fast is not None and fast[0].dtype.kind != "b":
            return ew.sub(*fast)
    a, b = promote("subtract", x, y, policy=policy)
    policy.check_bool_arithmetic("subtract", (x, y), dtype_of(a))
    return ew.sub(a, b)


def power(x: Any, y: Any, *, policy=NUMPY) -> Any:
    """x ** y. An integer exponent (Python or NumPy) uses integer_pow, exact for negative
    bases; as in NumPy, a Python int is weak (float32 ** 2 is float32) and integers to
    negative integer powers are an error."""
    if isinstance(y, (int, np.integer)) and not isinstance(y, bool):
        x = as_value(x, "power")
        x = cast(x, policy.result_dtype(x, y))  # bool ** 2 is int64, float32 ** np.int64(2) float64
        if y < 0 and dtype_of(x).kind in "iu":
            raise policy.negative_power_error("power", dtype_of(x), y)
        return ew.integer_pow(x, int(y))
    return ew.pow(*promote("power", x, y, policy=policy))


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


def negative(x: Any, *, policy=NUMPY) -> Any:
    """-x; booleans refused (the policy's error)."""
    x = as_value(x, "negative")
    if dtype_of(x).kind == "b":
        raise policy.bool_arithmetic_error("negative")
    return ew.neg(x)


def positive(x: Any) -> Any:
    """+x: a copy of x. Booleans are refused, as NumPy refuses them."""
    x = as_value(x, "positive")
    if dtype_of(x).kind == "b":
        raise FgradTypeError("positive: the unary + of booleans is not supported (NumPy has no boolean "
                        "positive); convert first, e.g. x.astype(int)", doc="bool-positive")
    return fresh(x, x)


def absolute(x):
    """The absolute value, element-wise (NumPy's absolute; `abs` is the same function). The derivative at 0 is 0.

    Args:
        x: an array, a number or a nested list.

    Returns:
        An array of x's dtype (a complex x gives its real dtype).
    """
    return ew.abs(as_value(x, "abs"))


abs = absolute


def sign(x):
    """-1, 0 or 1 by the sign of each element (NumPy's sign); its derivative is 0.

    Args:
        x: an array, a number or a nested list.

    Returns:
        An array of x's dtype.
    """
    return ew.sign(as_value(x, "sign"))


sin = unary_float(ew.sin, "sin")
cos = unary_float(ew.cos, "cos")
tan = unary_float(ew.tan, "tan")
arcsin = unary_float(ew.asin, "arcsin")
arccos = unary_float(ew.acos, "arccos")
arctan = unary_float(ew.atan, "arctan")
sinh = unary_float(ew.sinh, "sinh")
cosh = unary_float(ew.cosh, "cosh")
tanh = unary_float(ew.tanh, "tanh")
arcsinh = unary_float(ew.asinh, "arcsinh")
arccosh = unary_float(ew.acosh, "arccosh")
arctanh = unary_float(ew.atanh, "arctanh")
exp = unary_float(ew.exp, "exp")
expm1 = unary_float(ew.expm1, "expm1")
log = unary_float(ew.log, "log")
log1p = unary_float(ew.log1p, "log1p")
sqrt = unary_float(ew.sqrt, "sqrt")
cbrt = unary_float(ew.cbrt, "cbrt")


def exp2(x):
    """2 ** x, element-wise (NumPy's exp2); integer inputs give floats.

    Args:
        x: an array, a number or a nested list.

    Returns:
        A float array.
    """
    x = as_value(x, "exp2")
    x = cast(x, NUMPY.float_dtype(dtype_of(x)))
    return ew.exp(ew.mul(x, ew.const(x, np.log(2.0))))


def log2(x, *, policy=NUMPY):
    """The base-2 logarithm, element-wise (NumPy's log2); integer inputs give floats.

    Args:
        x: an array, a number or a nested list.

    policy: internal: the dtype rules of the calling door.

    Returns:
        A float array.
    """
    y = log(x, policy=policy)
    return ew.div(y, ew.const(y, np.log(2.0)))


def log10(x, *, policy=NUMPY):
    """The base-10 logarithm, element-wise (NumPy's log10); integer inputs give floats.

    Args:
        x: an array, a number or a nested list.

    policy: internal: the dtype rules of the calling door.

    Returns:
        A float array.
    """
    y = log(x, policy=policy)
    return ew.div(y, ew.const(y, np.log(10.0)))


def floor(x):
    """The largest integer not greater than each element (NumPy's floor); its derivative is 0.

    Args:
        x: an array, a number or a nested list.

    Returns:
        An array of x's dtype.
    """
    return ew.floor(as_value(x, "floor"))


def ceil(x):
    """The smallest integer not less than each element (NumPy's ceil); its derivative is 0.

    Args:
        x: an array, a number or a nested list.

    Returns:
        An array of x's dtype.
    """
    return ew.ceil(as_value(x, "ceil"))


def round(x: Any, decimals: int = 0, out: Any = None) -> Any:
    """Round to `decimals` decimal places (halves to even, as NumPy); out= must be None."""
    reject_out(out, "round")
    if type(decimals) is not int:
        decimals = int_arg(decimals, "round", "decimals")
    if decimals and not -_MAX_DECIMALS <= decimals <= _MAX_DECIMALS:
        raise FgradValueError(f"round: decimals={decimals:.3g} is out of range: float64 resolves at most "
                         f"{_MAX_DECIMALS} decimal places either way, so use |decimals| <= {_MAX_DECIMALS}")
    x = as_value(x, "round")
    if dtype_of(x).kind in "iu":
        # NumPy: integers are whole at decimals >= 0; otherwise rounded in float64, cast back
        if decimals >= 0:
            return fresh(x, x)
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
    """NOT of each element's truth value (NumPy's logical_not).

    Args:
        x: an array, a number or a nested list.

    Returns:
        A boolean array.
    """
    return ew.logical_not(as_value(x, "logical_not"))


def isnan(x):
    """Whether each element is NaN (NumPy's isnan).

    Args:
        x: an array, a number or a nested list.

    Returns:
        A boolean array.
    """
    return ew.isnan(as_value(x, "isnan"))


def isinf(x):
    """Whether each element is +inf or -inf (NumPy's isinf).

    Args:
        x: an array, a number or a nested list.

    Returns:
        A boolean array.
    """
    return ew.isinf(as_value(x, "isinf"))


def isfinite(x):
    """Whether each element is neither infinite nor NaN (NumPy's isfinite).

    Args:
        x: an array, a number or a nested list.

    Returns:
        A boolean array.
    """
    return ew.isfinite(as_value(x, "isfinite"))


def where(condition, x=None, y=None, *, policy=NUMPY):
    """Elementwise choice between x and y. The cotangent of the branch not taken is
    zero, but a NaN computed in that branch still poisons its own gradient: guard
    the input of log/sqrt/div too (the "double where" idiom)."""
    if x is None and y is None:
        return nonzero(condition)
    cond = cast(as_value(condition, "where"), np.dtype(bool))
    x, y = (a if isinstance(a, _PY_SCALARS) else as_value(a, "where") for a in (x, y))
    dt = policy.result_dtype(x, y)
    return ew.select(*broadcast_args("where", cond, cast(x, dt), cast(y, dt), policy=policy))


def clip(a: Any, a_min: Any = None, a_max: Any = None, out: Any = None, *, min: Any = None,
         max: Any = None) -> Any:
    """a limited to [a_min, a_max] (either bound may be None; `min`/`max` are NumPy 2's
    keyword names for them); differentiable in a and in both bounds."""
    reject_out(out, "clip")
    if min is not None or max is not None:
        if a_min is not None or a_max is not None:
            raise FgradValueError("clip: passing `min` or `max` keyword argument when `a_min` and `a_max` "
                             "are provided is forbidden", doc="clip-bounds-twice")
        a_min, a_max = min, max
    if a_min is not None:
        a = maximum(a, a_min)
    if a_max is not None:
        a = minimum(a, a_max)
    return a


logaddexp = _float_binary(ew.logaddexp, "logaddexp")
logaddexp.__doc__ = """log(exp(x) + exp(y)) without overflow. One primitive (fgrad.ops.elementwise.logaddexp)
with smooth partials, so every derivative order is exact at x == y too."""


def _logaddexp2(x: Any, y: Any) -> Any:
    ln2 = ew.const(x, np.log(2.0))
    return ew.div(ew.logaddexp(ew.mul(x, ln2), ew.mul(y, ew.const(y, np.log(2.0)))), ln2)


logaddexp2 = _float_binary(_logaddexp2, "logaddexp2")
logaddexp2.__doc__ = "log2(2**x + 2**y) without overflow; smooth at x == y (binds the logaddexp primitive)."


__all__ = [n for n in dir() if not n.startswith("_") and n not in (
    "annotations", "np", "ew", "sh", "float_dtype", "as_value", "cast", "dtype_of", "promote", "int_arg",
    "normalize_axes", "aval_of", "ShapeError", "Any", "reject_out", "result_dtype", "NUMPY", "unary_float",
    "broadcast_args", "fresh")]
