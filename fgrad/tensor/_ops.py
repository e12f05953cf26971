"""Tensor maths with PyTorch names and semantics, on fgrad.numpy and the lax-level ops.

PyTorch and NumPy differ in names (dim/axis, keepdim/keepdims, cat/concatenate) and in
type promotion (torch: int tensor / int -> float32, int tensor * 2.5 -> float32, 0-d
tensors and Python numbers rank below tensors with dimensions). Functions here settle the
PyTorch dtype first, then call the same fgrad ops the functional side uses, so every
derivative comes from the primitives' own rules. Compositions (softmax, clamp, prod, ...)
are written with those ops too; nothing here has a derivative rule of its own.
"""
from __future__ import annotations

import builtins
import math

import numpy as np

from .. import numpy as fnp
from ..ops import elementwise as ew
from . import _dtypes as D
from .tensor import _EMPTY, AccumulateGrad, Tensor, _dim, _make, _tensor_bind, node_class

_nd = np.ndarray
_pyfloat, _pyint, _pybool = float, int, bool


# --- operands ----------------------------------------------------------------------------------

def _operand(x):
    """A Tensor, or a Python number kept as such (it promotes weakly)."""
    if isinstance(x, Tensor) or D.is_python_scalar(x):
        return x
    if isinstance(x, (np.generic,)) and not isinstance(x, np.ndarray):
        return x.item()
    from .creation import as_tensor
    t = as_tensor(x)
    if t._value.dtype.kind not in "biufc":
        raise TypeError(f"expected a Tensor or a number as operand, got {type(x).__name__} of dtype "
                        f"{t._value.dtype} ({x!r:.60})")
    return t


def _tensor(x) -> Tensor:
    if isinstance(x, Tensor):
        return x
    from .creation import tensor
    return tensor(x)


def _cast(x, dt):
    """`x` (Tensor or Python number) as NumPy dtype `dt`."""
    if isinstance(x, Tensor):
        return x if x._value.dtype == dt else ew.convert_element_type(x, dt)
    return dt.type(x)


def _float(x: Tensor) -> Tensor:
    """int/bool tensors become the default float dtype (torch.exp(int tensor) is float32)."""
    return x if x._value.dtype.kind in "fc" else ew.convert_element_type(x, D.default_float())


def _shape(x) -> tuple:
    return tuple(x._value.shape) if isinstance(x, Tensor) else ()


def broadcast_shapes(*shapes) -> tuple:
    """NumPy/PyTorch broadcasting; the error names both full shapes."""
    out: list = []
    for s in shapes:
        s = tuple(s)
        if len(s) > len(out):
            out = [1] * (len(s) - len(out)) + out
        for i in range(1, len(s) + 1):
            a, b = out[-i], s[-i]
            if a == 1:
                out[-i] = b
            elif b != 1 and a != b:
                raise RuntimeError(
                    f"The size of tensor a ({a}) must match the size of tensor b ({b}) at non-singleton "
                    f"dimension {len(out) - i}: shapes {' and '.join(str(tuple(q)) for q in shapes)} "
                    "cannot be broadcast together")
    return tuple(out)


def _expand_to(x, shape):
    if isinstance(x, Tensor) and tuple(x._value.shape) != shape and x._value.shape != ():
        return fnp.broadcast_to(x, shape)
    return x


def _binary_general(fn, a, b, divide=False, out_dtype=None):
    a, b = _operand(a), _operand(b)
    dt = D.result_type(a, b) if out_dtype is None else out_dtype
    if divide and dt.kind in "biu":
        dt = D.default_float()
    a, b = _cast(a, dt), _cast(b, dt)
    sa, sb = _shape(a), _shape(b)
    if sa != sb and sa and sb:
        shape = broadcast_shapes(sa, sb)
        a, b = _expand_to(a, shape), _expand_to(b, shape)
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        return _make(fn(np.asarray(a), np.asarray(b)))
    return fn(a, b)


_FAST = {ew.add: ew.add_p, ew.sub: ew.sub_p, ew.mul: ew.mul_p, ew.div: ew.div_p, ew.pow: ew.pow_p,
         ew.maximum: ew.max_p, ew.minimum: ew.min_p, ew.atan2: ew.atan2_p, ew.lt: ew.lt_p, ew.le: ew.le_p,
         ew.gt: ew.gt_p, ew.ge: ew.ge_p, ew.eq: ew.eq_p, ew.ne: ew.ne_p}


def binary(fn, a, b, divide: bool = False):
    """`fn(a, b)` for a lax-level elementwise fn, with PyTorch promotion and broadcasting.
    Fast path (binds the primitive directly): two plain tensors of one dtype and shape, or a
    float tensor and a Python number."""
    if isinstance(a, Tensor):
        av = a._value
        if isinstance(b, Tensor):
            bv = b._value
            if av.dtype == bv.dtype and av.shape == bv.shape and (not divide or av.dtype.kind in "fc"):
                p = _FAST.get(fn)
                return _tensor_bind(p, (a, b), _EMPTY) if p is not None else fn(a, b)
        else:
            tb = type(b)
            if (tb is _pyfloat or tb is _pyint) and av.dtype.kind in "fc":
                p = _FAST.get(fn)
                s = av.dtype.type(b)
                return _tensor_bind(p, (a, s), _EMPTY) if p is not None else fn(a, s)
    elif isinstance(b, Tensor):
        ta = type(a)
        bv = b._value
        if (ta is _pyfloat or ta is _pyint) and bv.dtype.kind in "fc":
            p = _FAST.get(fn)
            s = bv.dtype.type(a)
            return _tensor_bind(p, (s, b), _EMPTY) if p is not None else fn(s, b)
    return _binary_general(fn, a, b, divide)


def named(out, name: str, *inputs):
    """Give `out`'s graph node PyTorch's name for the function that made it (one primitive
    serves several torch functions: reduce_sum is SumBackward0 for x.sum(), a composition
    ending in div is MeanBackward0 for x.mean()). Only the class name changes: every node
    class is a slot-less TensorNode subclass, so the instance keeps its data and rule."""
    node = out._node if isinstance(out, Tensor) else None
    if node is not None and not isinstance(node, AccumulateGrad) and builtins.all(
            not isinstance(i, Tensor) or i._node is not node for i in inputs):
        node.__class__ = node_class(name)
    return out


def _require_tensor(x, name):
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(x).__name__}")
    return x


# --- elementwise ---------------------------------------------------------------------------------

def add(input, other, *, alpha=1):
    if alpha != 1:
        other = mul(other, alpha)
    return binary(ew.add, input, other)


def sub(input, other, *, alpha=1):
    if alpha != 1:
        other = mul(other, alpha)
    if isinstance(input, Tensor) and input._value.dtype.kind == "b":
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.")
    return binary(ew.sub, input, other)


subtract = sub


def mul(input, other):
    return binary(ew.mul, input, other)


multiply = mul


def div(input, other, *, rounding_mode=None):
    if rounding_mode is None:
        return binary(ew.div, input, other, divide=True)
    if rounding_mode == "floor":
        return floor_divide(input, other)
    if rounding_mode == "trunc":
        q = binary(ew.div, input, other, divide=True)
        out = where(lt(q, 0), ceil(q), floor(q))
        dt = D.result_type(_operand(input), _operand(other))
        return _cast(out, dt)
    raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'")


divide = true_divide = div


def floor_divide(input, other):
    """Floor division, one primitive for every dtype (floor(a / b) after rounding differs:
    1.0 // 0.1 is 9.0, not 10.0)."""
    return _binary_general(ew.floor_divide, input, other)


def remainder(input, other):
    """Python's modulo (sign of the divisor), the same primitive as fgrad.numpy.remainder."""
    return _binary_general(ew.mod, input, other)


def fmod(input, other):
    return _binary_general(ew.rem, input, other)


def pow(input, exponent):
    if isinstance(input, Tensor) and type(exponent) is _pyint:
        if exponent < 0 and input._value.dtype.kind in "biu":
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        return ew.integer_pow(input, exponent)
    return binary(ew.pow, input, exponent)


def float_power(input, exponent):
    f64 = np.dtype(np.float64)
    return pow(_cast(_tensor(input), f64), _cast(exponent, f64) if isinstance(exponent, Tensor) else exponent)


def maximum(input, other):
    return named(binary(ew.maximum, input, other), "MaximumBackward0", input, other)


def minimum(input, other):
    return named(binary(ew.minimum, input, other), "MinimumBackward0", input, other)


def atan2(input, other):
    return binary(ew.atan2, input, other, divide=True)


arctan2 = atan2


def logaddexp(input, other):
    """log(exp(input) + exp(other)) with PyTorch promotion: the logaddexp primitive of
    fgrad.numpy.logaddexp (smooth at input == other, to every derivative order)."""
    return binary(ew.logaddexp, input, other, divide=True)


def logaddexp2(input, other):
    """log2(2**input + 2**other) with PyTorch promotion, through fgrad.numpy.logaddexp2."""
    return named(binary(fnp.logaddexp2, input, other, divide=True), "Logaddexp2Backward0", input, other)


def _cmp(fn):
    def cmp(input, other):
        return binary(fn, input, other)
    cmp.__name__ = fn.__name__ if hasattr(fn, "__name__") else "cmp"
    return cmp


eq = _cmp(ew.eq)
ne = not_equal = _cmp(ew.ne)
lt = less = _cmp(ew.lt)
le = less_equal = _cmp(ew.le)
gt = greater = _cmp(ew.gt)
ge = greater_equal = _cmp(ew.ge)


def logical_and(input, other):
    return _binary_general(ew.logical_and, _cast(_tensor(input), np.dtype(bool)),
                           _cast(_operand(other), np.dtype(bool)))


def logical_or(input, other):
    return _binary_general(ew.logical_or, _cast(_tensor(input), np.dtype(bool)),
                           _cast(_operand(other), np.dtype(bool)))


def logical_xor(input, other):
    return _binary_general(ew.logical_xor, _cast(_tensor(input), np.dtype(bool)),
                           _cast(_operand(other), np.dtype(bool)))


def logical_not(input):
    return ew.logical_not(_cast(_tensor(input), np.dtype(bool)))


def _bitwise(logical, name):
    def op(input, other):
        a, b = _operand(input), _operand(other)
        if D.result_type(a, b).kind != "b":
            raise TypeError(f"fgrad supports `{name}` on bool tensors only (as logical_{name}); "
                            "integer bitwise operations have no primitive")
        return logical(a, b)
    return op


bitwise_and = _bitwise(logical_and, "and")
bitwise_or = _bitwise(logical_or, "or")
bitwise_xor = _bitwise(logical_xor, "xor")


def bitwise_not(input):
    if input._value.dtype.kind != "b":
        raise TypeError("fgrad supports `~` on bool tensors only (integer bitwise ops have no primitive)")
    return ew.logical_not(input)


def _unary_float(prim, name):
    def op(input):
        if isinstance(input, Tensor) and input._value.dtype.kind == "f":  # fast path
            return _tensor_bind(prim, (input,), _EMPTY)
        return prim.bind(_float(_require_tensor(input, name)))
    op.__name__ = name
    return op


exp = _unary_float(ew.exp_p, "exp")
expm1 = _unary_float(ew.expm1_p, "expm1")
log = _unary_float(ew.log_p, "log")
log1p = _unary_float(ew.log1p_p, "log1p")
sqrt = _unary_float(ew.sqrt_p, "sqrt")
sin = _unary_float(ew.sin_p, "sin")
cos = _unary_float(ew.cos_p, "cos")
tan = _unary_float(ew.tan_p, "tan")
asin = arcsin = _unary_float(ew.asin_p, "asin")
acos = arccos = _unary_float(ew.acos_p, "acos")
atan = arctan = _unary_float(ew.atan_p, "atan")
sinh = _unary_float(ew.sinh_p, "sinh")
cosh = _unary_float(ew.cosh_p, "cosh")
tanh = _unary_float(ew.tanh_p, "tanh")
asinh = arcsinh = _unary_float(ew.asinh_p, "asinh")
acosh = arccosh = _unary_float(ew.acosh_p, "acosh")
atanh = arctanh = _unary_float(ew.atanh_p, "atanh")
sigmoid = _unary_float(ew.logistic_p, "sigmoid")
erf = _unary_float(ew.erf_p, "erf")


def log2(input):
    return div(log(input), math.log(2.0))


def log10(input):
    return div(log(input), math.log(10.0))


def exp2(input):
    return pow(2.0, _float(input))


def rsqrt(input):
    return div(1.0, sqrt(input))


def reciprocal(input):
    return div(1.0, _float(input))


def square(input):
    return ew.integer_pow(input, 2)


def neg(input):
    if input._value.dtype.kind == "b":
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are "
                           "trying to invert a mask, use the `~` or `logical_not()` operator instead.")
    return ew.neg(input)


negative = neg


def abs(input):
    return ew.abs(input)


absolute = abs


def sign(input):
    return ew.sign(input)


def floor(input):
    return ew.floor(input) if input._value.dtype.kind in "fc" else input


def ceil(input):
    return ew.ceil(input) if input._value.dtype.kind in "fc" else input


def round(input, *, decimals: int = 0):
    if input._value.dtype.kind not in "fc":
        return input
    if decimals:
        s = 10.0 ** decimals
        return div(ew.round(mul(input, s)), s)
    return ew.round(input)


def trunc(input):
    return where(lt(input, 0), ceil(input), floor(input))


fix = trunc


def isnan(input):
    return ew.isnan(input)


def isinf(input):
    return ew.isinf(input)


def isfinite(input):
    return ew.isfinite(input)


def relu(input):
    """max(x, 0) with relu'(0) = 0 (a select, so ties do not split)."""
    zero = input._value.dtype.type(0)
    return named(ew.select(ew.gt(input, zero), input, zero), "ReluBackward0", input)


def where(condition, input=None, other=None):
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    cond = _cast(_tensor(condition), np.dtype(bool))
    x, y = _operand(input), _operand(other)
    dt = D.result_type(x, y)
    x, y = _cast(x, dt), _cast(y, dt)
    shapes = [_shape(cond), _shape(x), _shape(y)]
    full = [s for s in shapes if s]
    if full and builtins.any(s != full[0] for s in full):
        shape = broadcast_shapes(*shapes)
        cond, x, y = (_expand_to(v, shape) for v in (cond, x, y))
    if not isinstance(x, Tensor) and not isinstance(y, Tensor):
        x = _make(np.asarray(x))
    return ew.select(cond, x, y)


def clamp(input, min=None, max=None):
    """PyTorch's clamp: the gradient passes where min <= input <= max (bounds included)."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    out = input
    if min is not None:
        out = where(lt(out, min), min, out)
    if max is not None:
        out = where(gt(out, max), max, out)
    return named(out, "ClampBackward1", input)


clip = clamp


def lerp(input, end, weight):
    return add(input, mul(weight, sub(end, input)))


# --- reductions ------------------------------------------------------------------------------------

def _axes(dim, ndim: int):
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        if len(dim) == 0:
            return None
        return tuple(_dim(d, ndim) for d in dim)
    return _dim(dim, ndim)


def sum(input, dim=None, keepdim: bool = False, *, dtype=None):
    v = input._value
    if dtype is not None:
        input = _cast(input, D.np_dtype(dtype))
    elif v.dtype.kind in "biu":
        input = _cast(input, np.dtype(np.int64))
    out = fnp.sum(input, axis=_axes(dim, v.ndim), keepdims=keepdim)
    return named(out, "SumBackward0" if dim is None else "SumBackward1", input)


def nansum(input, dim=None, keepdim: bool = False, *, dtype=None):
    return sum(where(isnan(input), 0.0, input), dim, keepdim, dtype=dtype)


def mean(input, dim=None, keepdim: bool = False, *, dtype=None):
    if dtype is not None:
        input = _cast(input, D.np_dtype(dtype))
    if input._value.dtype.kind not in "fc":
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating "
                           f"point or complex dtype. Got: {input.dtype}")
    out = fnp.mean(input, axis=_axes(dim, input._value.ndim), keepdims=keepdim)
    return named(out, "MeanBackward0" if dim is None else "MeanBackward1", input)


def prod(input, dim=None, keepdim: bool = False, *, dtype=None):
    if dtype is not None:
        input = _cast(input, D.np_dtype(dtype))
    out = fnp.prod(input, axis=None if dim is None else _dim(dim, input._value.ndim), keepdims=keepdim)
    return named(out, "ProdBackward0" if dim is None else "ProdBackward1", input)


def cumsum(input, dim, *, dtype=None):
    if dtype is not None:
        input = _cast(input, D.np_dtype(dtype))
    elif input._value.dtype.kind in "biu":
        input = _cast(input, np.dtype(np.int64))
    return named(fnp.cumsum(input, axis=_dim(dim, input._value.ndim)), "CumsumBackward0", input)


class _ReturnTypes(tuple):
    """(values, indices) results print like torch.return_types.max(...)."""

    _name = "result"

    def __new__(cls, values, indices):
        return tuple.__new__(cls, (values, indices))

    values = property(lambda self: self[0])
    indices = property(lambda self: self[1])

    def __repr__(self) -> str:
        return f"fgrad.return_types.{self._name}(\nvalues={self[0]!r},\nindices={self[1]!r})"


def _return_type(name):
    return type(name, (_ReturnTypes,), {"_name": name, "__slots__": ()})


_max_t, _min_t, _sort_t, _topk_t, _mode_t = (_return_type(n) for n in ("max", "min", "sort", "topk", "mode"))


def _extreme(reduce_fn, arg_fn, binary_fn, rtype):
    def op(input, dim=None, keepdim: bool = False):
        if isinstance(dim, Tensor):  # torch.max(a, b)
            return binary_fn(input, dim)
        v = input._value
        if dim is None:
            if v.size == 0:
                raise RuntimeError(f"{rtype._name}(): Expected reduction dim to be specified for "
                                   "input.numel() == 0. Specify the reduction dim with the 'dim' argument.")
            return named(reduce_fn(input), f"{rtype._name.capitalize()}Backward1", input)
        d = _dim(dim, v.ndim)
        values = named(reduce_fn(input, axis=d, keepdims=keepdim), f"{rtype._name.capitalize()}Backward0", input)
        return rtype(values, arg_fn(input, axis=d, keepdims=keepdim))
    return op


max = _extreme(fnp.max, fnp.argmax, maximum, _max_t)
min = _extreme(fnp.min, fnp.argmin, minimum, _min_t)


def amax(input, dim=(), keepdim: bool = False):
    return fnp.max(input, axis=_axes(dim if dim != () else None, input._value.ndim), keepdims=keepdim)


def amin(input, dim=(), keepdim: bool = False):
    return fnp.min(input, axis=_axes(dim if dim != () else None, input._value.ndim), keepdims=keepdim)


def argmax(input, dim=None, keepdim: bool = False):
    return fnp.argmax(input, axis=None if dim is None else _dim(dim, input._value.ndim), keepdims=keepdim)


def argmin(input, dim=None, keepdim: bool = False):
    return fnp.argmin(input, axis=None if dim is None else _dim(dim, input._value.ndim), keepdims=keepdim)


def _ddof(unbiased, correction):
    if correction is not None:
        return int(correction)
    return 1 if unbiased else 0


def var(input, dim=None, unbiased=True, keepdim: bool = False, *, correction=None):
    if isinstance(dim, bool):  # legacy var(unbiased)
        dim, unbiased = None, dim
    if input._value.dtype.kind not in "fc":
        raise RuntimeError(f"std and var only support floating point and complex dtypes, got {input.dtype}")
    out = fnp.var(input, axis=_axes(dim, input._value.ndim), ddof=_ddof(unbiased, correction), keepdims=keepdim)
    return named(out, "VarBackward0", input)


def std(input, dim=None, unbiased=True, keepdim: bool = False, *, correction=None):
    return named(sqrt(var(input, dim, unbiased, keepdim, correction=correction)), "StdBackward0", input)


def logsumexp(input, dim, keepdim: bool = False):
    from ..scipy.special import logsumexp as _logsumexp
    x = _float(input)
    out = _logsumexp(x, axis=_axes(dim, x._value.ndim), keepdims=keepdim)
    return named(out, "LogsumexpBackward0", input)


def norm(input, p="fro", dim=None, keepdim: bool = False, dtype=None):
    """Vector p-norm (matrix Frobenius norm for p='fro' over two dims), via fgrad.numpy.linalg.norm."""
    if p == "nuc":
        raise NotImplementedError("fgrad's norm has no nuclear norm (it needs an SVD primitive)")
    x = _float(input if dtype is None else _cast(input, D.np_dtype(dtype)))
    ord_ = 2 if p in ("fro", 2, 2.0, None) else p
    if dim is None:
        out = fnp.linalg.norm(fnp.ravel(x), ord=ord_)
        return fnp.reshape(out, (1,) * x._value.ndim) if keepdim else out
    axes = _axes(dim, x._value.ndim)
    if isinstance(axes, tuple) and len(axes) == 2 and p == "fro":
        return fnp.linalg.norm(x, ord="fro", axis=axes, keepdims=keepdim)
    return fnp.linalg.norm(x, ord=ord_, axis=axes, keepdims=keepdim)


def any(input, dim=None, keepdim: bool = False):
    b = _cast(input, np.dtype(bool))
    if b._value.size == 0:
        return _make(np.zeros(() if dim is None else _reduced(b, dim, keepdim), bool))
    return fnp.max(b, axis=_axes(dim, b._value.ndim), keepdims=keepdim)


def all(input, dim=None, keepdim: bool = False):
    b = _cast(input, np.dtype(bool))
    if b._value.size == 0:
        return _make(np.ones(() if dim is None else _reduced(b, dim, keepdim), bool))
    return fnp.min(b, axis=_axes(dim, b._value.ndim), keepdims=keepdim)


def _reduced(t, dim, keepdim):
    d = _dim(dim, t._value.ndim)
    return tuple(1 if i == d else s for i, s in enumerate(t._value.shape) if keepdim or i != d)


def count_nonzero(input, dim=None):
    return sum(ne(input, 0), dim)


def _stopped(v):
    """`v` with a zero derivative under every transform (the shift of softmax & co.)."""
    from ..api import stop_gradient_p
    return stop_gradient_p.bind(v)


def softmax(input, dim, dtype=None):
    from ..ops.nn import softmax as _softmax
    x = _float(input if dtype is None else _cast(input, D.np_dtype(dtype)))
    return named(_softmax(x, _dim(dim, x._value.ndim)), "SoftmaxBackward0", input)


def log_softmax(input, dim, dtype=None):
    from ..ops.nn import log_softmax as _log_softmax
    x = _float(input if dtype is None else _cast(input, D.np_dtype(dtype)))
    return _log_softmax(x, _dim(dim, x._value.ndim))


# --- NumPy interop -----------------------------------------------------------------------------------

_UFUNCS = {"add": add, "subtract": sub, "multiply": mul, "true_divide": div, "divide": div,
           "power": pow, "maximum": maximum, "minimum": minimum, "less": lt, "less_equal": le,
           "greater": gt, "greater_equal": ge, "equal": eq, "not_equal": ne, "floor_divide": floor_divide,
           "remainder": remainder, "arctan2": atan2, "logical_and": logical_and, "logical_or": logical_or,
           "negative": neg, "exp": exp, "log": log, "sin": sin, "cos": cos, "tanh": tanh, "sqrt": sqrt,
           "absolute": abs}


def array_ufunc(self, ufunc, method, inputs, kwargs):
    """`np_array * tensor` gives a Tensor (as in PyTorch); other NumPy calls see a plain array."""
    fn = _UFUNCS.get(ufunc.__name__)
    if method == "__call__" and not kwargs and fn is not None:
        return fn(*[i if isinstance(i, Tensor) or D.is_python_scalar(i) else _tensor(i) for i in inputs])
    arrays = [i.numpy() if isinstance(i, Tensor) else i for i in inputs]
    return getattr(ufunc, method)(*arrays, **kwargs)


from ._ops_shape import *  # noqa: E402,F401,F403  (shape ops, indexing, linalg, conversions)
from ._ops_shape import _caster  # noqa: E402,F401  (used by _methods)
