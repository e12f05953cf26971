"""Tensor maths with PyTorch's names and semantics: fgrad.numpy in PyTorch's dialect.

Each function maps PyTorch's names and arguments (input/other, dim -> axis, keepdim ->
keepdims, fgrad dtypes -> NumPy dtypes) onto the fgrad.numpy function of the same meaning and
passes `policy=TORCH` (fgrad/numpy/_policy.py): PyTorch's promotion (int tensor / int ->
float32, tensors with dimensions outrank 0-d tensors and Python numbers, sums accumulate in
int64) and PyTorch's exception types and messages. What stays here is PyTorch's own: grad_fn
names (`named`), (values, indices) results, the operators' fast paths, and functions NumPy
has no counterpart for (clamp's gradient at its bounds, trunc division, ...). Nothing here
has a derivative rule: every derivative comes from the primitives' own rules.
"""
from __future__ import annotations

import builtins
from collections import namedtuple

import numpy as np

from ... import numpy as fnp
from ...core.errors import FgradRuntimeError, FgradTypeError, FgradValueError
from ...numpy._elementwise import unary_float
from ...numpy._policy import TORCH as P
from ...numpy._util import cast, dtype_of, fresh, normalize_axes
from ...ops import elementwise as ew
from ...ops.complex import complex as _lax_complex
from ...ops.nn import log_softmax as _log_softmax
from ...ops.nn import relu as _relu
from ...ops.nn import softmax as _softmax
from ...scipy.special import logsumexp as _logsumexp
from . import _dtypes as D
from ._adapt import _axis, adapt_table
from . import (
    creation as _creation,  # (creation's as_tensor converts with _ops.to: a cycle, resolved at call time)
)
from .tensor import _EMPTY, AccumulateGrad, Tensor, _dim, _tensor_bind, node_class

_PY_NUMBERS = (bool, int, float, complex)


# --- operands and grad_fn names ------------------------------------------------------------------

def _operand(x):
    """A Tensor, or a Python number kept as such (it promotes weakly; so do NumPy scalars);
    other data becomes a Tensor of its own (torch.tensor's copy, not as_tensor's alias: a
    graph may save the operand, and no version counter watches the caller's NumPy array)."""
    if isinstance(x, Tensor) or type(x) in _PY_NUMBERS:
        return x
    if isinstance(x, np.generic):
        return x.item()
    t = _creation.tensor(x)
    if t._value.dtype.kind not in "biufc":
        raise FgradTypeError(f"expected a Tensor or a number as operand, got {type(x).__name__} of dtype "
                        f"{t._value.dtype} ({x!r:.60})")
    return t


def _tensor(x) -> Tensor:
    return x if isinstance(x, Tensor) else _creation.tensor(x)


def _float(x, dtype=None):
    """int/bool tensors as the default float dtype (torch.exp(int tensor) is float32); the
    fgrad `dtype` first, when given (softmax(x, dim, dtype), norm(..., dtype))."""
    x = x if dtype is None else cast(x, D.np_dtype(dtype))
    return cast(x, P.float_dtype(dtype_of(x)))


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


# Functions that are an fgrad.numpy function under PyTorch's names (see _adapt.py):
# torch name | fgrad.numpy function | torch parameters | grad_fn ("Sum*": SumBackward0 / 1)
_TABLE = """
log2 | log2 | input |
log10 | log10 | input |
neg | negative | input |
bitwise_not | invert | input |
sum | sum | input, dim=None, keepdim=False, *, dtype=None | Sum*
mean | mean | input, dim=None, keepdim=False, *, dtype=None | Mean*
prod | prod | input, dim=None, keepdim=False, *, dtype=None | Prod*
amax | amax | input, dim=None, keepdim=False | Amax
amin | amin | input, dim=None, keepdim=False | Amin
argmax | argmax | input, dim=None, keepdim=False |
argmin | argmin | input, dim=None, keepdim=False |
any | any | input, dim=None, keepdim=False |
all | all | input, dim=None, keepdim=False |
cumsum | cumsum | input, dim, *, dtype=None | Cumsum
cumprod | cumprod | input, dim, *, dtype=None | Cumprod
unsqueeze | expand_dims | input, dim | Unsqueeze
movedim | moveaxis | input, source, destination | Permute
flip | flip | input, dims | Flip
roll | roll | input, shifts, dims=None | Roll
tril | tril | input, diagonal=0 | Tril
triu | triu | input, diagonal=0 | Triu
diag | diag | input, diagonal=0 | =('DiagEmbed' if input.ndim == 1 else 'Diagonal')
kron | kron | input, other | Kron
hypot | hypot | input, other | Hypot
angle | angle | input |
"""
globals().update(adapt_table(_TABLE))
moveaxis = movedim  # noqa: F821
_flip_view = flip  # noqa: F821


def flip(input, dims):
    """`input` reversed along `dims`: a new tensor, as PyTorch's (NumPy's flip is a view)."""
    return named(fresh(_flip_view(input, dims), input), "FlipBackward0", input)


# --- elementwise ---------------------------------------------------------------------------------

def _binary(fnp_fn, prim=None, kinds="biufc", backward=None, name=None):
    """torch.<name>(input, other): `fnp_fn` in PyTorch's dialect, its node named `backward`.
    The fast path (every operator's hot path) binds `prim` directly for two tensors of one
    dtype (of the `kinds` it may take) and shape, or a float tensor and a Python int or float."""
    def op(input, other):
        out = None
        if prim is not None:
            if isinstance(input, Tensor):
                av = input._value
                if isinstance(other, Tensor):
                    bv = other._value
                    if av.dtype == bv.dtype and av.shape == bv.shape and av.dtype.kind in kinds:
                        out = _tensor_bind(prim, (input, other), _EMPTY)
                elif (type(other) is float or type(other) is int) and av.dtype.kind in "fc":
                    out = _tensor_bind(prim, (input, av.dtype.type(other)), _EMPTY)
            elif (type(input) is float or type(input) is int) and isinstance(other, Tensor) \
                    and other._value.dtype.kind in "fc":
                out = _tensor_bind(prim, (other._value.dtype.type(input), other), _EMPTY)
        if out is None:
            out = fnp_fn(_operand(input), _operand(other), policy=P)
        return out if backward is None else named(out, backward, input, other)
    op.__name__ = op.__qualname__ = name or fnp_fn.__name__
    return op


_add = _binary(fnp.add, ew.add_p, name="add")
_sub = _binary(fnp.subtract, ew.sub_p, "iufc", name="sub")
mul = multiply = _binary(fnp.multiply, ew.mul_p, name="mul")
_div = _binary(fnp.true_divide, ew.div_p, "fc", name="div")
_pow = _binary(fnp.power, ew.pow_p, "fc", name="pow")
maximum = _binary(fnp.maximum, ew.max_p, backward="MaximumBackward0")
minimum = _binary(fnp.minimum, ew.min_p, backward="MinimumBackward0")
atan2 = arctan2 = _binary(fnp.arctan2, ew.atan2_p, "fc", name="atan2")
logaddexp = _binary(fnp.logaddexp, ew.logaddexp_p, "fc")
logaddexp2 = _binary(fnp.logaddexp2, backward="Logaddexp2Backward0")
eq = _binary(fnp.equal, ew.eq_p, name="eq")
ne = not_equal = _binary(fnp.not_equal, ew.ne_p, name="ne")
lt = less = _binary(fnp.less, ew.lt_p, name="lt")
le = less_equal = _binary(fnp.less_equal, ew.le_p, name="le")
gt = greater = _binary(fnp.greater, ew.gt_p, name="gt")
ge = greater_equal = _binary(fnp.greater_equal, ew.ge_p, name="ge")
floor_divide = _binary(fnp.floor_divide)  # one primitive for every dtype (1.0 // 0.1 is 9.0)
remainder = _binary(fnp.remainder)  # Python's modulo (the sign of the divisor)
fmod = _binary(fnp.fmod)
bitwise_and = _binary(fnp.bitwise_and)
bitwise_or = _binary(fnp.bitwise_or)
bitwise_xor = _binary(fnp.bitwise_xor)


def _logical(fnp_fn):
    """torch.logical_<op>(input, other): of the operands' truth values, whatever their dtypes."""
    def op(input, other):
        return fnp_fn(*(cast(_operand(v), np.dtype(bool)) for v in (input, other)), policy=P)
    op.__name__ = op.__qualname__ = fnp_fn.__name__
    return op


logical_and, logical_or, logical_xor = (_logical(f) for f in (fnp.logical_and, fnp.logical_or, fnp.logical_xor))


def add(input, other, *, alpha=1):
    return _add(input, other if alpha == 1 else mul(other, alpha))


def sub(input, other, *, alpha=1):
    return _sub(input, other if alpha == 1 else mul(other, alpha))


subtract = sub


def div(input, other, *, rounding_mode=None):
    if rounding_mode is None:
        return _div(input, other)
    if rounding_mode == "floor":
        return floor_divide(input, other)
    if rounding_mode == "trunc":
        return cast(trunc(_div(input, other)), P.result_dtype(_operand(input), _operand(other)))
    raise FgradValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'")


divide = true_divide = div


def pow(input, exponent):
    """input ** exponent; a Python int exponent binds integer_pow (exact for negative bases)."""
    if type(exponent) is int and isinstance(input, Tensor):
        if input._value.dtype.kind in "fc":
            return ew.integer_pow(input, exponent)
        return fnp.power(input, exponent, policy=P)
    return _pow(input, exponent)


def float_power(input, exponent):
    f64 = np.dtype(np.float64)
    return pow(cast(_tensor(input), f64), cast(exponent, f64) if isinstance(exponent, Tensor) else exponent)


def _float_unary(fnp_fn, prim, name):
    """torch.<name>(input): `fnp_fn` in PyTorch's dialect (integers become float32); a float
    tensor binds `prim` directly."""
    def op(input):
        if isinstance(input, Tensor) and input._value.dtype.kind == "f":  # the hot path
            return _tensor_bind(prim, (input,), _EMPTY)
        return fnp_fn(input, policy=P)
    op.__name__ = op.__qualname__ = name
    return op


# torch name: (the fgrad.numpy function, the primitive a float tensor binds directly)
_FLOAT_FUNCTIONS = {
    "exp": (fnp.exp, ew.exp_p), "expm1": (fnp.expm1, ew.expm1_p), "log": (fnp.log, ew.log_p),
    "log1p": (fnp.log1p, ew.log1p_p), "sqrt": (fnp.sqrt, ew.sqrt_p), "sin": (fnp.sin, ew.sin_p),
    "cos": (fnp.cos, ew.cos_p), "tan": (fnp.tan, ew.tan_p), "asin": (fnp.arcsin, ew.asin_p),
    "acos": (fnp.arccos, ew.acos_p), "atan": (fnp.arctan, ew.atan_p), "sinh": (fnp.sinh, ew.sinh_p),
    "cosh": (fnp.cosh, ew.cosh_p), "tanh": (fnp.tanh, ew.tanh_p), "asinh": (fnp.arcsinh, ew.asinh_p),
    "acosh": (fnp.arccosh, ew.acosh_p), "atanh": (fnp.arctanh, ew.atanh_p),
    "sigmoid": (unary_float(ew.logistic, "sigmoid"), ew.logistic_p), "erf": (unary_float(ew.erf, "erf"), ew.erf_p),
}
globals().update({name: _float_unary(fn, prim, name) for name, (fn, prim) in _FLOAT_FUNCTIONS.items()})
arcsin, arccos, arctan, arcsinh, arccosh, arctanh = asin, acos, atan, asinh, acosh, atanh  # noqa: F821


def exp2(input):
    return pow(2.0, _float(input))


def rsqrt(input):
    return div(1.0, sqrt(input))


def reciprocal(input):
    return div(1.0, input)


def square(input):
    return pow(input, 2)


def round(input, *, decimals: int = 0):
    return fnp.round(input, decimals) if input._value.dtype.kind in "fc" else input


def trunc(input):
    return where(lt(input, 0), ceil(input), floor(input))


relu = _relu  # the relu primitive, as nn.functional.relu's: relu'(0) = 0, NaN propagates
negative, fix, logical_not = neg, trunc, fnp.logical_not
abs = absolute = fnp.absolute
sign, floor, ceil, isnan, isinf, isfinite = fnp.sign, fnp.floor, fnp.ceil, fnp.isnan, fnp.isinf, fnp.isfinite


def where(condition, input=None, other=None):
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    return fnp.where(_tensor(condition), _operand(input), _operand(other), policy=P)


def clamp(input, min=None, max=None):
    """PyTorch's clamp: the gradient passes where min <= input <= max (bounds included)."""
    if min is None and max is None:
        raise FgradRuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
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

def nansum(input, dim=None, keepdim: bool = False, *, dtype=None):
    return sum(where(isnan(input), 0.0, input), dim, keepdim, dtype=dtype)


def result_type(name: str, fields: tuple = ("values", "indices")) -> type:
    """A named tuple printed as PyTorch prints torch.return_types.<name>."""
    base = namedtuple(name, fields)

    def __repr__(self) -> str:
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
        return f"torch.return_types.{name}(\n{body})"

    return type(name, (base,), {"__slots__": (), "__repr__": __repr__, "_name": name})


_max_t, _min_t, _sort_t, _topk_t, _mode_t = (result_type(n) for n in ("max", "min", "sort", "topk", "mode"))


def _extreme(fnp_fn, arg_fn, binary_fn, rtype):
    name = rtype._name.capitalize()

    def op(input, dim=None, keepdim: bool = False):
        if isinstance(dim, Tensor):  # torch.max(a, b)
            return binary_fn(input, dim)
        if dim is None:
            return named(fnp_fn(input, policy=P), f"{name}Backward1", input)
        # the values gathered at the returned indices: with ties, the gradient goes to the
        # index returned (PyTorch's rule; full reductions split it evenly instead)
        d = _dim(dim, input._value.ndim)
        if not input._value.ndim:
            return rtype(input, _creation.zeros((), dtype=D.int64))
        idx = arg_fn(input, axis=d, keepdims=True, policy=P)
        values = fnp.take_along_axis(input, idx, d)
        if not keepdim:
            values, idx = fnp.squeeze(values, d), fnp.squeeze(idx, d)
        return rtype(named(values, f"{name}Backward0", input), idx)
    return op


max = _extreme(fnp.max, fnp.argmax, maximum, _max_t)
min = _extreme(fnp.min, fnp.argmin, minimum, _min_t)


def _var_args(dim, unbiased, keepdim, correction) -> dict:
    if isinstance(dim, bool):  # legacy var(unbiased)
        dim, unbiased = None, dim
    ddof = int(correction) if correction is not None else 1 if unbiased else 0
    return {"axis": _axis(dim), "ddof": ddof, "keepdims": keepdim, "policy": P}


def var(input, dim=None, unbiased=True, keepdim: bool = False, *, correction=None):
    return named(fnp.var(input, **_var_args(dim, unbiased, keepdim, correction)), "VarBackward0", input)


def std(input, dim=None, unbiased=True, keepdim: bool = False, *, correction=None):
    """sqrt(var) with the gradient 0 at zero spread (the norm'(0) = 0 convention of fgrad.numpy.std)."""
    return named(fnp.std(input, **_var_args(dim, unbiased, keepdim, correction)), "StdBackward0", input)


def logsumexp(input, dim, keepdim: bool = False):
    x = _float(input)
    axes = normalize_axes(_axis(dim), x._value.ndim, "logsumexp", policy=P)
    return named(_logsumexp(x, axis=axes, keepdims=keepdim), "LogsumexpBackward0", input)


def norm(input, p="fro", dim=None, keepdim: bool = False, dtype=None):
    """Vector p-norm (matrix Frobenius norm for p='fro', nuclear norm for p='nuc', over two
    dims), via fgrad.numpy.linalg.norm."""
    x = _float(input, dtype)
    if p == "nuc":  # the sum of the singular values of the matrices in dim (a 2-D input's by default)
        axes = (0, 1) if dim is None else normalize_axes(dim, x._value.ndim, "norm", policy=P)
        if len(axes) != 2:
            raise FgradRuntimeError(f"nuclear norm requires a 2-D input or two dims, got dims {axes} of a "
                               f"{x._value.ndim}-D tensor")
        return fnp.linalg.norm(x, "nuc", axis=axes, keepdims=keepdim)
    ord_ = 2 if p in ("fro", 2, 2.0, None) else p
    if dim is None:
        out = fnp.linalg.norm(fnp.ravel(x), ord=ord_)
        return fnp.reshape(out, (1,) * x._value.ndim) if keepdim else out
    axes = normalize_axes(dim, x._value.ndim, "norm", policy=P)
    return fnp.linalg.norm(x, ord="fro" if len(axes) == 2 and p == "fro" else ord_, axis=axes, keepdims=keepdim)


def count_nonzero(input, dim=None):
    return sum(ne(input, 0), dim)


def softmax(input, dim, dtype=None):
    x = _float(input, dtype)
    return named(_softmax(x, _dim(dim, x._value.ndim)), "SoftmaxBackward0", input)


def log_softmax(input, dim, dtype=None):
    x = _float(input, dtype)
    return _log_softmax(x, _dim(dim, x._value.ndim))


# --- complex numbers -----------------------------------------------------------------------------
# Functions of fgrad.numpy (JAX's derivative convention); the facade conjugates cotangents at its
# boundary (tensor.torch_convention), so .grad follows PyTorch's. real/imag are new tensors, not
# writable views as in PyTorch.

def _complex_input(input, name: str) -> None:
    if input._value.dtype.kind != "c":
        raise FgradRuntimeError(f"{name} is not implemented for tensors with non-complex dtypes (got "
                                f"{input._value.dtype}); make it complex first, e.g. t.to(torch.complex64)")


def real(input):
    """The real part (a real tensor; a real input is returned as is, as PyTorch)."""
    return fnp.real(input) if input._value.dtype.kind == "c" else input


def imag(input):
    """The imaginary part of a complex tensor (PyTorch refuses real tensors)."""
    _complex_input(input, "imag")
    return fnp.imag(input)


def conj(input):
    """The complex conjugate (a real input is returned as is, as PyTorch)."""
    return fnp.conj(input) if input._value.dtype.kind == "c" else input


conj_physical = conj


def resolve_conj(input):
    """The tensor itself: fgrad conjugates eagerly, so there is no lazy conjugate bit."""
    return input


def is_conj(input) -> bool:
    """False: fgrad's conj is never a lazy view."""
    return False


def view_as_real(input):
    """A complex tensor (..., ) as a real one (..., 2) of its real and imaginary parts (a new
    tensor, not a view)."""
    _complex_input(input, "view_as_real")
    return fnp.stack([fnp.real(input), fnp.imag(input)], axis=-1)


def view_as_complex(input):
    """A real float32/float64 tensor (..., 2) as the complex tensor (...,) of its pairs."""
    shape, dt = tuple(input._value.shape), input._value.dtype
    if dt not in (np.float32, np.float64):
        raise FgradRuntimeError(f"view_as_complex is only supported for float and double tensors, but got a "
                                f"tensor of scalar type: {dt}")
    if not shape or shape[-1] != 2:
        raise FgradRuntimeError(f"Tensor must have a last dimension of size 2 (got shape {shape})")
    return _lax_complex(fnp.take(input, 0, axis=-1), fnp.take(input, 1, axis=-1))


def complex(real, imag):
    """real + i imag from two float tensors of one dtype (float32 or float64), broadcast."""
    if not isinstance(imag, Tensor):
        raise FgradTypeError(f"complex(): argument 'imag' (position 2) must be Tensor, not {type(imag).__name__}")
    dr, di = real._value.dtype, imag._value.dtype
    if dr != di or dr not in (np.float32, np.float64):
        raise FgradRuntimeError(f"Expected both inputs to be Float or Double tensors of one dtype but got {dr} "
                                f"and {di}")
    return _lax_complex(real, imag)


def polar(abs, angle):
    """abs * (cos(angle) + i sin(angle)) from two float tensors of one dtype."""
    return complex(fnp.multiply(abs, fnp.cos(angle)), fnp.multiply(abs, fnp.sin(angle)))


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
        return fn(*[i if isinstance(i, Tensor) or type(i) in _PY_NUMBERS else _tensor(i) for i in inputs])
    arrays = [i.numpy() if isinstance(i, Tensor) else i for i in inputs]
    return getattr(ufunc, method)(*arrays, **kwargs)


from ._ops_index import *  # noqa: E402,F401,F403  (scatter, index updates, counting, searching)
from ._ops_math import *  # noqa: E402,F401,F403  (cumulative, fused multiply-adds, order statistics)
from ._ops_shape import *  # noqa: E402,F401,F403  (shape ops, indexing, linalg, conversions)
from ._ops_shape import _caster, nonzero  # noqa: E402,F401  (used by _methods)
