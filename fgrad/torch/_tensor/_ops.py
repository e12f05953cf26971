"""Tensor maths with PyTorch's names and semantics: fgrad.numpy in PyTorch's dialect.

Each function maps PyTorch's names and arguments (input/other, dim -> axis, keepdim ->
keepdims, fgrad dtypes -> NumPy dtypes) onto the fgrad.numpy function of the same meaning and
passes `policy=TORCH` (fgrad/numpy/_policy.py): PyTorch's promotion (int tensor / int ->
float32, tensors with dimensions outrank 0-d tensors and Python numbers, sums accumulate in
int64) and PyTorch's exception types and messages.

Every function is one torch op: its computation, written on plain values, runs through the
facade's boundary (`_boundary.call`), which gives the result ONE graph node named as
PyTorch's grad_fn (MaximumBackward0, ClampBackward1, LogsumexpBackward0...) whose parents are
the input tensors in operand order; where PyTorch itself composes several ops (2 / x is
x.reciprocal() * 2, real(z) a select of view_as_real) the facade composes the same ops. The
hot single-primitive ops (add, sub, mul, div with tensors of one shape or a Python number,
float unary functions, x ** int, relu, abs) bind their primitive directly (`_tensor_bind`),
the node then named after the primitive (PyTorch's name for these). What stays here is
PyTorch's own: which grad_fn each overload records, (values, indices) results, and functions
NumPy has no counterpart for (clamp's gradient at its bounds, trunc division, ...). Nothing
here has a derivative rule: every derivative comes from the primitives' own rules.
"""
from __future__ import annotations

import builtins
from collections import namedtuple

import numpy as np

from ... import numpy as fnp
from ...core.errors import FgradNotImplementedError, FgradRuntimeError, FgradTypeError, FgradValueError
from ...core.trace import Tracer
from ...custom import custom_vjp, with_forward_rule
from ... import lax
from ...extend import lax as xlax
from ...extend.lax import complex as _lax_complex
from ...extend.nn import log_softmax as _log_softmax
from ...extend.nn import softmax as _softmax
from ...extend.numpy import cast, dtype_of, normalize_axes, unary_float
from ...lax import conj_p as _conj_p
from ...lax import relu_p as _relu_p
from ._policy import TORCH as P
from ...scipy.special import logsumexp as _logsumexp
from . import _dtypes as D
from ._adapt import _axis, adapt_table, default_name
from ._boundary import GradOperands, call, replayable
from ._names import grad_fn_name
from . import (
    creation as _creation,  # (creation's as_tensor converts with _ops.to: a cycle, resolved at call time)
)
from .tensor import _EMPTY, Tensor, _dim, _make, _tensor_bind, refresh_view

_PY_NUMBERS = (bool, int, float, complex)
_BOTH = (0, 1)  # the operand positions of a binary op's node


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


def _own(out: Tensor) -> Tensor:
    """`out` with storage of its own: for the torch ops that PyTorch documents as returning a
    new tensor while the fgrad.numpy function they run returns a view (flip, rot90)."""
    if out._view is not None:
        out._value = out._value.copy()
        out._vbox = [0]
        out._view = None
    return out


def _to_dtype(t: Tensor, npdt) -> Tensor:
    """`t` converted to the NumPy dtype `npdt` as a facade op (ToCopyBackward0, as PyTorch's
    dtype= arguments record it); `t` itself when it has that dtype."""
    if t._value.dtype == npdt:
        return t
    return _tensor_bind(lax.convert_element_type_p, (t,), {"new_dtype": np.dtype(npdt)})


def _constant_pieces(out, *xs):
    """`out`, a piecewise-constant function of `xs` (floor, sign, a rounding division), made to
    depend on the traced ones with derivative zero: PyTorch records these ops (FloorBackward0,
    DivBackward2) and their gradient is zeros, while fgrad's rounding primitives record
    nothing. A select of `out` over the input changes no value; on plain values it is skipped."""
    for x in xs:
        if isinstance(x, Tracer) and dtype_of(x).kind in "fc":
            out = fnp.where(True, out, x)
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
hypot | hypot | input, other | Hypot
angle | angle | input |
"""
globals().update(adapt_table(_TABLE))
moveaxis = movedim  # noqa: F821
_flip_view = flip  # noqa: F821


def diag(input, diagonal: int = 0):
    """A 1-D input's values on the `diagonal`-th diagonal of a square matrix (DiagEmbedBackward0),
    or a 2-D input's `diagonal`-th diagonal as a new tensor (PyTorch's diagonal_copy:
    DiagonalBackward0_copy)."""
    if input._value.ndim == 1:
        return call("DiagEmbedBackward0", lambda v: fnp.diag(v, diagonal), (input,))
    return _own(call("DiagonalBackward0_copy", lambda v: fnp.diag(v, diagonal), (input,)))


def _unsafe_view(t: Tensor, shape: tuple) -> Tensor:
    """`t` reshaped, recorded as PyTorch's _unsafe_view (UnsafeViewBackward0: no view relation
    to `t`, so it gets storage of its own here)."""
    return _own(call("UnsafeViewBackward0", lambda v: fnp.reshape(v, shape), (t,)))


def kron(input, other):
    """The Kronecker product, composed as PyTorch's: each operand viewed with its dims
    interleaved with 1s, their broadcast product, viewed to the product's shape."""
    a, b = _tensor(input), _tensor(other)
    nd = builtins.max(a._value.ndim, b._value.ndim)
    sa = (1,) * (nd - a._value.ndim) + tuple(a._value.shape)
    sb = (1,) * (nd - b._value.ndim) + tuple(b._value.shape)
    a2 = _unsafe_view(a, tuple(x for d in sa for x in (d, 1)))
    b2 = _unsafe_view(b, tuple(x for d in sb for x in (1, d)))
    return _unsafe_view(mul(a2, b2), tuple(p * q for p, q in zip(sa, sb)))


def flip(input, dims):
    """`input` reversed along `dims`: a new tensor, as PyTorch's (NumPy's flip is a view)."""
    return _own(_flip_view(input, dims))


# --- elementwise ---------------------------------------------------------------------------------

def _refusing(fnp_fn, aten: str):
    """`fnp_fn` on values, as an op whose derivative PyTorch does not define: its backward
    raises PyTorch's error for `aten` (a custom_vjp, so the result still depends on the
    operands and the node exists to refuse). On plain values (no node is recorded) it is
    `fnp_fn` itself, which costs less to call than the custom_vjp."""
    @custom_vjp
    def refused(a, b):
        return fnp_fn(a, b, policy=P)

    def fwd(a, b):
        return refused(a, b), None

    def bwd(res, ct):
        raise FgradRuntimeError(f"derivative for aten::{aten} is not implemented")

    def forward(call, primals, tangents, live):
        raise FgradNotImplementedError(f"Trying to use forward AD with aten::{aten} that does not support it.")
    refused.defvjp(fwd, bwd)
    # (forward mode, a dual tensor or torch.func.jvp, refuses with PyTorch's words, where the
    # custom_vjp's own refusal would name this function)
    with_forward_rule(refused, forward)

    def values(a, b):
        if isinstance(a, Tracer) or isinstance(b, Tracer):
            return refused(a, b)
        return fnp_fn(a, b, policy=P)
    return values


# PyTorch's NotImplemented node (an op without a derivative): an entry for each operand that
# requires grad, none for the others
_GRAD_OPERANDS = GradOperands(_BOTH)


def _binary(fnp_fn, prim=None, kinds="biufc", name=None, grad_fn=None, scalar_grad_fn=None, refuses=None):
    """torch.<name>(input, other): `fnp_fn` in PyTorch's dialect, one torch op named `grad_fn`
    (`scalar_grad_fn` when `other` is a Python number: PyTorch's Scalar overload, e.g.
    RemainderBackward0, whose node has the tensor as its only input). `refuses` (an aten name)
    makes it an op without a derivative, as PyTorch's: a NotImplemented node over the operands
    that require grad, whose backward raises. The fast path (every operator's hot path) binds
    `prim` directly -- its node is named after the primitive, which for add/sub/mul/div is
    PyTorch's name -- for two tensors of one dtype (of the `kinds` it may take) and shape, or
    a float tensor and a Python int or float (a wrapped number: the node lists it as an input
    that needs no gradient, as PyTorch's does)."""
    name = name or fnp_fn.__name__
    if refuses is None:
        grad_fn = grad_fn or default_name(name)
        operands = _BOTH

        @replayable
        def values(a, b):
            return fnp_fn(a, b, policy=P)
    else:
        grad_fn, operands, values = "NotImplemented", _GRAD_OPERANDS, _refusing(fnp_fn, refuses)

    def op(input, other):
        if prim is not None:
            if isinstance(input, Tensor):
                av = input._value
                if isinstance(other, Tensor):
                    bv = other._value
                    if av.dtype == bv.dtype and av.shape == bv.shape and av.dtype.kind in kinds:
                        return _tensor_bind(prim, (input, other), _EMPTY)
                elif (type(other) is float or type(other) is int) and av.dtype.kind in "fc":
                    return _tensor_bind(prim, (input, av.dtype.type(other)), _EMPTY)
            elif (type(input) is float or type(input) is int) and isinstance(other, Tensor) \
                    and other._value.dtype.kind in "fc":
                return _tensor_bind(prim, (other._value.dtype.type(input), other), _EMPTY)
        a, b = _operand(input), _operand(other)
        if scalar_grad_fn and not isinstance(b, Tensor):  # (PyTorch's Scalar overload: one operand)
            return call(scalar_grad_fn, values, (a, b))
        # (both are operands of PyTorch's node: an integer Tensor or a number is a (None, 0) entry)
        return call(grad_fn, values, (a, b), operands=operands)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"torch.{name}(input, other): fgrad.numpy.{fnp_fn.__name__} in PyTorch's dialect "
                  f"(promotion, errors); grad_fn {grad_fn}.")
    return op


_add = _binary(fnp.add, lax.add_p, name="add")
_sub = _binary(fnp.subtract, lax.sub_p, "iufc", name="sub")
mul = multiply = _binary(fnp.multiply, lax.mul_p, name="mul")
_div = _binary(fnp.true_divide, lax.div_p, "fc", name="div")
maximum = _binary(fnp.maximum, lax.max_p, "biuf")  # (_names: the max primitive is MaximumBackward0)
minimum = _binary(fnp.minimum, lax.min_p, "biuf")
atan2 = arctan2 = _binary(fnp.arctan2, lax.atan2_p, "fc", name="atan2")
logaddexp = _binary(fnp.logaddexp, lax.logaddexp_p, "fc")
logaddexp2 = _binary(fnp.logaddexp2)
eq = _binary(fnp.equal, lax.eq_p, name="eq")
ne = not_equal = _binary(fnp.not_equal, lax.ne_p, name="ne")
lt = less = _binary(fnp.less, lax.lt_p, name="lt")
le = less_equal = _binary(fnp.less_equal, lax.le_p, name="le")
gt = greater = _binary(fnp.greater, lax.gt_p, name="gt")
ge = greater_equal = _binary(fnp.greater_equal, lax.ge_p, name="ge")
_remainder = _binary(fnp.remainder, grad_fn="RemainderBackward1", scalar_grad_fn="RemainderBackward0",
                     name="remainder")


# (one primitive for every dtype: 1.0 // 0.1 is 9.0)
floor_divide = _binary(fnp.floor_divide, name="floor_divide", refuses="floor_divide")
# PyTorch's remainder(Scalar, Tensor) overload
_scalar_remainder = _binary(fnp.remainder, name="remainder", refuses="remainder")


def remainder(input, other):
    """torch.remainder(input, other) (also `%`): Python's modulus, the sign of `other`.
    RemainderBackward1 over two tensors, RemainderBackward0 for a number `other`; a number
    `input` (PyTorch's Scalar-Tensor overload, which has no derivative) gets a NotImplemented
    node whose backward raises "derivative for aten::remainder is not implemented"."""
    a = _operand(input)
    return (_remainder if isinstance(a, Tensor) else _scalar_remainder)(a, other)


fmod = _binary(fnp.fmod, grad_fn="FmodBackward1", scalar_grad_fn="FmodBackward0")
bitwise_and = _binary(fnp.bitwise_and)
bitwise_or = _binary(fnp.bitwise_or)
bitwise_xor = _binary(fnp.bitwise_xor)


def _logical(fnp_fn):
    """torch.logical_<op>(input, other): of the operands' truth values, whatever their dtypes."""
    def values(a, b):
        return fnp_fn(cast(a, np.dtype(bool)), cast(b, np.dtype(bool)), policy=P)

    def op(input, other):
        return call(default_name(fnp_fn.__name__), values, (_operand(input), _operand(other)))
    op.__name__ = op.__qualname__ = fnp_fn.__name__
    op.__doc__ = f"torch.{fnp_fn.__name__}(input, other): of the operands' truth values (a bool tensor)."
    return op


logical_and, logical_or, logical_xor = (_logical(f) for f in (fnp.logical_and, fnp.logical_or, fnp.logical_xor))


def _scaled_values(fnp_fn, alpha):
    """input <op> alpha * other on values (add/sub with alpha: one node, as PyTorch's).

    PyTorch's CPU kernel rounds once, a fused multiply-add with alpha in the tensors' dtype. For
    float32 the sum is taken in float64 (the float32 product is exact there) and rounded back,
    which gives that single rounding; optimizers step with add_(grad, alpha=-lr), so two
    roundings would drift from PyTorch's trajectories. float64 keeps two roundings (NumPy has no
    fused multiply-add).
    """
    fused = isinstance(alpha, (bool, int, float)) and not isinstance(alpha, bool)

    def values(a, b):
        if fused and getattr(a, "dtype", None) == np.float32 and getattr(b, "dtype", None) == np.float32:
            wide = float(np.float32(alpha))
            return fnp_fn(a.astype(np.float64), fnp.multiply(b.astype(np.float64), wide, policy=P),
                          policy=P).astype(np.float32)
        return fnp_fn(a, fnp.multiply(b, alpha, policy=P), policy=P)
    return values


def add(input, other, *, alpha=1):
    """input + alpha * other: one AddBackward0 node over (input, other), alpha included."""
    if alpha == 1:
        return _add(input, other)
    if type(other) in _PY_NUMBERS and type(alpha) in _PY_NUMBERS:
        return _add(input, other * alpha)
    return call("AddBackward0", _scaled_values(fnp.add, alpha), (_operand(input), _operand(other)), operands=_BOTH)


def sub(input, other, *, alpha=1):
    """input - alpha * other: one SubBackward0 node over (input, other), alpha included."""
    if alpha == 1:
        return _sub(input, other)
    if type(other) in _PY_NUMBERS and type(alpha) in _PY_NUMBERS:
        return _sub(input, other * alpha)
    return call("SubBackward0", _scaled_values(fnp.subtract, alpha), (_operand(input), _operand(other)),
                operands=_BOTH)


subtract = sub


def _rsub_values(alpha):
    def values(a, b):
        return fnp.subtract(b, a if alpha == 1 else fnp.multiply(a, alpha, policy=P), policy=P)
    return values


def rsub(input, other, *, alpha=1):
    """other - alpha * input (what `number - tensor` runs, as in PyTorch): RsubBackward1 for a
    number `other`, whose node has `input` as its only input; RsubBackward0 for a tensor."""
    b = _operand(other)
    return call("RsubBackward0" if isinstance(b, Tensor) else "RsubBackward1", _rsub_values(alpha), (input, b))


def _rounded_division(mode):
    def values(a, b):
        if mode == "floor":
            out = fnp.floor_divide(a, b, policy=P)
        else:
            q = fnp.true_divide(a, b, policy=P)
            q = fnp.where(fnp.less(q, 0, policy=P), fnp.ceil(q), fnp.floor(q), policy=P)
            out = cast(q, P.result_dtype(a, b))
        return _constant_pieces(out, a, b)
    return values


_DIV_FLOOR, _DIV_TRUNC = _rounded_division("floor"), _rounded_division("trunc")


def div(input, other, *, rounding_mode=None):
    """input / other; rounding_mode "trunc" or "floor" rounds the quotient (DivBackward2, a zero
    gradient, as PyTorch records it)."""
    if rounding_mode is None:
        return _div(input, other)
    if rounding_mode not in ("floor", "trunc"):
        raise FgradValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                              f"'{rounding_mode}'")
    a, b = _operand(input), _operand(other)
    fn = _DIV_FLOOR if rounding_mode == "floor" else _DIV_TRUNC
    return call("DivBackward2", fn, (a, b))


divide = true_divide = div


def _power_values(a, b):
    return fnp.power(a, b, policy=P)


def pow(input, exponent):
    """input ** exponent; a Python int exponent binds integer_pow (exact for negative bases).
    PyTorch's nodes: PowBackward0 (a number exponent), PowBackward1 (two tensors),
    PowBackward2 (a number base)."""
    if isinstance(input, Tensor):
        if type(exponent) is int and input._value.dtype.kind in "fc":
            return _tensor_bind(lax.integer_pow_p, (input,), {"y": exponent})
        e = _operand(exponent)
        if isinstance(e, Tensor):
            return call("PowBackward1", _power_values, (input, e), operands=_BOTH)
        return call("PowBackward0", _power_values, (input, e))
    return call("PowBackward2", _power_values, (_operand(input), _operand(exponent)))


def float_power(input, exponent):
    """input ** exponent in float64 (the conversions are ToCopyBackward0 nodes, as PyTorch's)."""
    f64 = np.dtype(np.float64)
    return pow(_to_dtype(_tensor(input), f64), _to_dtype(exponent, f64) if isinstance(exponent, Tensor) else exponent)


def _float_unary(fnp_fn, prim, name):
    """torch.<name>(input): `fnp_fn` in PyTorch's dialect (integers become float32); a float
    tensor binds `prim` directly (its node: the primitive's name, PyTorch's)."""
    grad_fn = grad_fn_name(prim.name)  # (the fast path's name: Log1PBackward0, SigmoidBackward0)

    def values(x):
        return fnp_fn(x, policy=P)

    def op(input):
        if isinstance(input, Tensor) and input._value.dtype.kind == "f":  # the hot path
            return _tensor_bind(prim, (input,), _EMPTY)
        return call(grad_fn, values, (input,))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"torch.{name}(input): fgrad.numpy.{getattr(fnp_fn, '__name__', name)} in PyTorch's "
                  f"dialect (integer tensors give float32); grad_fn {grad_fn}.")
    return op


# torch name: (the fgrad.numpy function, the primitive a float tensor binds directly)
_FLOAT_FUNCTIONS = {
    "exp": (fnp.exp, lax.exp_p), "expm1": (fnp.expm1, lax.expm1_p), "log": (fnp.log, lax.log_p),
    "log1p": (fnp.log1p, lax.log1p_p), "sqrt": (fnp.sqrt, lax.sqrt_p), "sin": (fnp.sin, lax.sin_p),
    "cos": (fnp.cos, lax.cos_p), "tan": (fnp.tan, lax.tan_p), "asin": (fnp.arcsin, lax.asin_p),
    "acos": (fnp.arccos, lax.acos_p), "atan": (fnp.arctan, lax.atan_p), "sinh": (fnp.sinh, lax.sinh_p),
    "cosh": (fnp.cosh, lax.cosh_p), "tanh": (fnp.tanh, lax.tanh_p), "asinh": (fnp.arcsinh, lax.asinh_p),
    "acosh": (fnp.arccosh, lax.acosh_p), "atanh": (fnp.arctanh, lax.atanh_p),
    "sigmoid": (unary_float(xlax.logistic, "sigmoid"), lax.logistic_p), "erf": (unary_float(xlax.erf, "erf"), lax.erf_p),
}
globals().update({name: _float_unary(fn, prim, name) for name, (fn, prim) in _FLOAT_FUNCTIONS.items()})
arcsin, arccos, arctan, arcsinh, arccosh, arctanh = asin, acos, atan, asinh, acosh, atanh  # noqa: F821


def _unary(name: str, values, grad_fn: str | None = None):
    """torch.<name>(input): one torch op computing `values(x)` on the input's value."""
    grad_fn = grad_fn or default_name(name)
    replayable(values)

    def op(input):
        return call(grad_fn, values, (input,))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"torch.{name}(input): elementwise, one {grad_fn} node."
    return op


exp2 = _unary("exp2", lambda x: fnp.power(2.0, _float(x), policy=P))
rsqrt = _unary("rsqrt", lambda x: fnp.true_divide(1.0, fnp.sqrt(x, policy=P), policy=P))
reciprocal = _unary("reciprocal", lambda x: fnp.true_divide(1.0, x, policy=P))


def square(input):
    """input ** 2 (PowBackward0, as PyTorch's)."""
    return pow(input, 2)


def _round_values(decimals):
    def values(x):
        return _constant_pieces(fnp.round(x, decimals), x) if dtype_of(x).kind in "fc" else x
    return values


def round(input, *, decimals: int | None = None):
    """Round half to even (to `decimals` places), with a zero gradient: RoundBackward0 without
    `decimals`, RoundBackward1 when it is given (PyTorch's decimals overload, even for 0);
    integer tensors come back as they are."""
    if input._value.dtype.kind not in "fcV":  # (V: ml_dtypes' bfloat16 & co.)
        return input
    if decimals is None:
        return call("RoundBackward0", _round_values(0), (input,))
    return call("RoundBackward1", _round_values(decimals), (input,))


def _trunc_values(x):
    if dtype_of(x).kind not in "fc":
        return fnp.copy(x)
    return _constant_pieces(fnp.where(fnp.less(x, 0, policy=P), fnp.ceil(x), fnp.floor(x), policy=P), x)


trunc = _unary("trunc", _trunc_values)
sign = _unary("sign", lambda x: _constant_pieces(fnp.sign(x), x))
floor = _unary("floor", lambda x: _constant_pieces(fnp.floor(x), x))
ceil = _unary("ceil", lambda x: _constant_pieces(fnp.ceil(x), x))
isnan, isinf, isfinite, logical_not = (_unary(f.__name__, f) for f in (fnp.isnan, fnp.isinf, fnp.isfinite,
                                                                         fnp.logical_not))


def relu(input):
    """The relu primitive, as nn.functional.relu's: relu'(0) = 0, NaN propagates."""
    return _tensor_bind(_relu_p, (_tensor(input),), _EMPTY)


def abs(input):
    """|input| (real for complex input); abs'(0) = 0."""
    if isinstance(input, Tensor) and input._value.dtype.kind in "iuf":
        return _tensor_bind(lax.abs_p, (input,), _EMPTY)
    return call("AbsBackward0", fnp.absolute, (input,))


negative, fix, absolute = neg, trunc, abs  # noqa: F821


def _where_values(cond, numbers=(None, None)):
    """where on values; `numbers` holds the Python numbers that stand for the operands (they
    promote weakly, which their wrapping 0-d tensors would not)."""
    na, nb = numbers

    def values(a, b):
        return fnp.where(cond, a if na is None else na, b if nb is None else nb, policy=P)
    return values


def _wrapped_number(v):
    """PyTorch's wrapped number: a Python number operand as a 0-d tensor, an input of the node
    that needs no gradient (next_functions lists it as (None, 0)). Its value goes unread (the
    computation keeps the number itself); a float one, so the boundary lists it whatever the
    number's type, as PyTorch lists every tensor operand."""
    return _make(np.zeros((), np.float64))


def where(condition, input=None, other=None):
    """input where condition holds, else other (one WhereBackward0 node over input and other);
    with only a condition, the indices where it holds (nonzero(as_tuple=True))."""
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    # the condition is no operand of the node (PyTorch's lists input and other only)
    cond = _tensor(condition)
    if cond._view is not None and cond._view[0]._node is not cond._view[1]:
        refresh_view(cond)  # (its base was modified in place since it was derived)
    a, b = _operand(input), _operand(other)
    if type(a) in _PY_NUMBERS or type(b) in _PY_NUMBERS:
        numbers = tuple(v if type(v) in _PY_NUMBERS else None for v in (a, b))
        args = tuple(_wrapped_number(v) if type(v) in _PY_NUMBERS else v for v in (a, b))
        return call("WhereBackward0", _where_values(cond._value, numbers), args)
    return call("WhereBackward0", _where_values(cond._value), (a, b))


@replayable
def _clamp_values(x, lo, hi):
    """PyTorch's clamp on values: the gradient passes where lo <= x <= hi (bounds included)."""
    out = x
    if lo is not None:
        out = fnp.where(fnp.less(out, lo, policy=P), lo, out, policy=P)
    if hi is not None:
        out = fnp.where(fnp.greater(out, hi, policy=P), hi, out, policy=P)
    return out


def clamp(input, min=None, max=None):
    """PyTorch's clamp: the gradient passes where min <= input <= max (bounds included).
    ClampBackward1 for number bounds, ClampBackward0 (input, min, max) for tensor bounds."""
    if min is None and max is None:
        raise FgradRuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    lo = None if min is None else _operand(min)
    hi = None if max is None else _operand(max)
    if isinstance(lo, Tensor) or isinstance(hi, Tensor):
        # ClampBackward0's inputs are (input, min, max), an absent bound too (a (None, 0) parent)
        absent = (lo is None, hi is None)

        def values(x, a, b):
            return _clamp_values(x, None if absent[0] else a, None if absent[1] else b)
        return call("ClampBackward0", values, (input, *(_wrapped_number(0.0) if v is None else v for v in (lo, hi))))
    return call("ClampBackward1", _clamp_values, (input, lo, hi))


clip = clamp


_F64 = np.dtype(np.float64)
_VELTKAMP = np.float64(2.0 ** 27 + 1)  # splits a double into two halves of 26 bits each


def _fma64(a, b, c):
    """a * b + c for float64 arrays, rounded once as a fused multiply-add rounds it (up to the
    rare ties of a second rounding): the product's exact error by Veltkamp's split and
    Dekker's product, the sum's by Knuth's two-sum, both added to the rounded sum. Values
    only (its derivative is not the fma's: callers carry that separately)."""
    def split(x):
        t = fnp.multiply(x, _VELTKAMP)
        hi = fnp.subtract(t, fnp.subtract(t, x))
        return hi, fnp.subtract(x, hi)
    p = fnp.multiply(a, b)
    (ah, al), (bh, bl) = split(a), split(b)
    e = fnp.add(fnp.add(fnp.add(fnp.subtract(fnp.multiply(ah, bh), p), fnp.multiply(ah, bl)), fnp.multiply(al, bh)),
                fnp.multiply(al, bl))
    s = fnp.add(p, c)
    bb = fnp.subtract(s, p)
    t = fnp.add(fnp.subtract(p, fnp.subtract(s, bb)), fnp.subtract(c, bb))
    err = fnp.add(t, e)
    return fnp.where(fnp.equal(err, 0), s, fnp.add(s, err))  # (s itself: -0.0 + 0.0 would lose the sign)


def _lerp_values(a, e, w):
    """PyTorch's lerp, bit for bit: a + w * (e - a) where |w| < 0.5, else e + (w - 1) * (e - a),
    each one fused multiply-add (its CPU kernel's fmadd, in float32 for half types, float32
    through float64, where the product is exact). The derivative is that of the unfused
    formula (1 - w, w, e - a), carried by stop_gradient(lin) - lin, +0 where lin is finite."""
    diff = fnp.subtract(e, a, policy=P)
    small = fnp.less(fnp.abs(w), 0.5)
    lin = fnp.where(small, fnp.add(a, fnp.multiply(w, diff, policy=P), policy=P),
                    fnp.add(e, fnp.multiply(w - 1 if isinstance(w, (int, float)) else fnp.subtract(w, 1, policy=P),
                                            diff, policy=P), policy=P), policy=P)  # (a number stays a double)
    dt = dtype_of(lin)
    if dt.kind != "f":  # (complex: the unfused formula)
        return lin
    work = dt if dt.itemsize >= 4 else np.dtype(np.float32)  # (PyTorch's opmath type)
    aw, ew_, ww = (cast(lax.stop_gradient(x) if isinstance(x, Tracer) else x, work) for x in (a, e, w))
    small = fnp.less(fnp.abs(ww), np.asarray(0.5, work))
    coeff = fnp.where(small, ww, fnp.subtract(ww, np.asarray(1, work)))
    base = fnp.where(small, aw, ew_)
    d = fnp.subtract(ew_, aw)
    with np.errstate(invalid="ignore", over="ignore"):  # (infinities, and the split of values beyond 1e300)
        if work == _F64:
            fused = _fma64(coeff, d, base)
        else:
            fused = cast(fnp.add(fnp.multiply(cast(coeff, _F64), cast(d, _F64)), cast(base, _F64)), work)
        fused = fnp.broadcast_to(cast(fused, dt), fnp.shape(lin))
        # where either is not finite (infinities, NaNs, a split that overflowed) the unfused value
        ok = fnp.logical_and(fnp.isfinite(fused), fnp.isfinite(lin))
        return fnp.where(ok, fnp.subtract(fused, fnp.subtract(lax.stop_gradient(lin), lin)), lin)


def lerp(input, end, weight):
    """input + weight * (end - input): LerpBackward0 (a number weight) or LerpBackward1."""
    w = _operand(weight)
    return call("LerpBackward1" if isinstance(w, Tensor) else "LerpBackward0", _lerp_values,
                (input, _operand(end), w))


# --- reductions ------------------------------------------------------------------------------------

def nansum(input, dim=None, keepdim: bool = False, *, dtype=None):
    """The sum with NaNs counted as zero (NansumBackward0)."""
    def values(x):
        if dtype_of(x).kind in "fc":  # (integers hold no NaN and keep their dtype: sums are int64)
            x = fnp.where(fnp.isnan(x), 0.0, x, policy=P)
        return fnp.sum(x, axis=_axis(dim), keepdims=keepdim, dtype=D.np_dtype(dtype), policy=P)
    return call("NansumBackward0", values, (input,))


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

    def full(x):
        return fnp_fn(x, policy=P)

    def op(input, dim=None, keepdim: bool = False):
        if isinstance(dim, Tensor):  # torch.max(a, b)
            return binary_fn(input, dim)
        if dim is None:
            return call(f"{name}Backward1", full, (input,))
        nd = input._value.ndim
        d = _dim(dim, nd)

        # the values gathered at the returned indices: with ties, the gradient goes to the
        # index returned (PyTorch's rule; full reductions split it evenly instead)
        def along(x):
            if not nd:
                return x, np.zeros((), np.int64)
            idx = arg_fn(x, axis=d, keepdims=True, policy=P)
            values = fnp.take_along_axis(x, idx, d)
            return (values, idx) if keepdim else (fnp.squeeze(values, d), fnp.squeeze(idx, d))
        values, idx = call(f"{name}Backward0", along, (input,))
        return rtype(_own(values), idx)
    op.__name__ = op.__qualname__ = rtype._name
    op.__doc__ = (f"torch.{rtype._name}(input, dim=None, keepdim=False): the {rtype._name}imum of every entry "
                  f"({name}Backward1), or ({rtype._name}, indices) along `dim` ({name}Backward0; with ties the "
                  f"gradient goes to the returned index); torch.{rtype._name}(input, other) is "
                  f"torch.{binary_fn.__name__}.")
    return op


max = _extreme(fnp.max, fnp.argmax, maximum, _max_t)
min = _extreme(fnp.min, fnp.argmin, minimum, _min_t)


def _var_args(dim, unbiased, keepdim, correction) -> dict:
    if isinstance(dim, bool):  # legacy var(unbiased)
        dim, unbiased = None, dim
    ddof = int(correction) if correction is not None else 1 if unbiased else 0
    return {"axis": _axis(dim), "ddof": ddof, "keepdims": keepdim, "policy": P}


def var(input, dim=None, unbiased=True, keepdim: bool = False, *, correction=None):
    """The variance over `dim` (correction: 1 unless unbiased=False or given)."""
    args = _var_args(dim, unbiased, keepdim, correction)
    return call("VarBackward0", _var_values, (input, args["axis"], args["ddof"], keepdim))


def std(input, dim=None, unbiased=True, keepdim: bool = False, *, correction=None):
    """sqrt(var) with the gradient 0 at zero spread (the norm'(0) = 0 convention of fgrad.numpy.std)."""
    args = _var_args(dim, unbiased, keepdim, correction)
    return call("StdBackward0", _std_values, (input, args["axis"], args["ddof"], keepdim))


@replayable
def _var_values(x, axis, ddof, keepdims):
    return fnp.var(x, axis=axis, ddof=ddof, keepdims=keepdims, policy=P)


@replayable
def _std_values(x, axis, ddof, keepdims):
    return fnp.std(x, axis=axis, ddof=ddof, keepdims=keepdims, policy=P)


def logsumexp(input, dim, keepdim: bool = False):
    """log(sum(exp(input))) over `dim`, computed stably (integers as float32)."""
    axes = normalize_axes(_axis(dim), input._value.ndim, "logsumexp", policy=P)
    return call("LogsumexpBackward0", _logsumexp_values, (input, axes, keepdim))


@replayable
def _logsumexp_values(x, axes, keepdims):
    return _logsumexp(_float(x), axis=axes, keepdims=keepdims)


def _svd_without_vectors(v):
    s = fnp.linalg.svdvals(v)
    return fnp.zeros((0,), s.dtype), s, fnp.zeros((0,), s.dtype)


def _svdvals(x: Tensor) -> Tensor:
    """The singular values of each matrix of `x` (its last two dims), descending, as PyTorch
    records them: output 1 (S) of a LinalgSvdBackward0 node whose U and V are empty
    (torch.linalg.svdvals and the nuclear and spectral norms call it).

    Args:
        x: a float or complex Tensor of matrices.

    Returns:
        A real Tensor.
    """
    return call("LinalgSvdBackward0", _svd_without_vectors, (x,))[1]


def _nuclear(x: Tensor, d0: int, d1: int, keepdim: bool) -> Tensor:
    """The nuclear norm of the matrices in dims (d0, d1) of `x`, as PyTorch composes it: the
    two dims moved last, the singular values, their sum (SumBackward1).

    Args:
        x: a float or complex Tensor.
        d0, d1: two different dims of x, non-negative.
        keepdim: keep d0 and d1 with size 1.

    Returns:
        A real Tensor.
    """
    perm = [k for k in builtins.range(x._value.ndim) if k not in (d0, d1)] + [d0, d1]
    out = _svdvals(x.permute(*perm)).sum(-1)
    if keepdim:
        out = out.unsqueeze(-1).unsqueeze(-1).permute(*np.argsort(perm).tolist())
    return out


def norm(input, p="fro", dim=None, keepdim: bool = False, dtype=None):
    """Vector p-norm (matrix Frobenius norm for p='fro', nuclear norm for p='nuc', over two
    dims), via fgrad.numpy.linalg.norm: one LinalgVectorNormBackward0 node, as PyTorch's
    (the nuclear norm: PyTorch's last node, the sum of the singular values)."""
    nd = input._value.ndim
    if p == "nuc":  # the sum of the singular values of the matrices in dim (a 2-D input's by default)
        axes = (0, 1) if dim is None else normalize_axes(dim, nd, "norm", policy=P)
        if len(axes) != 2:
            raise FgradRuntimeError(f"nuclear norm requires a 2-D input or two dims, got dims {axes} of a "
                                    f"{nd}-D tensor")
        x = input if dtype is None and input._value.dtype.kind in "fc" else \
            call("ToCopyBackward0", lambda v: _float(v, dtype), (input,))
        return _nuclear(x, axes[0], axes[1], keepdim)
    ord_ = 2 if p in ("fro", 2, 2.0, None) else p
    axes = None if dim is None else normalize_axes(dim, nd, "norm", policy=P)
    if p == "fro" and axes is not None and len(axes) > 2:  # (PyTorch's matrix norm takes two dims)
        raise FgradRuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, axes))} "
                                "(the Frobenius norm is a matrix norm: give two dims, or a number p for the "
                                "vector norm over more)")

    def values(v):
        x = _float(v, dtype)
        if axes is None:
            out = fnp.linalg.norm(fnp.ravel(x), ord=ord_)
            return fnp.reshape(out, (1,) * nd) if keepdim else out
        # a number p over two dims, or any p over more: PyTorch's vector norm of their elements
        if len(axes) > 2 or (len(axes) == 2 and p != "fro"):
            return fnp.linalg.vector_norm(x, ord=ord_, axis=axes, keepdims=keepdim)
        return fnp.linalg.norm(x, ord="fro" if len(axes) == 2 and p == "fro" else ord_, axis=axes, keepdims=keepdim)
    return call("LinalgVectorNormBackward0", values, (input,))


def count_nonzero(input, dim=None):
    """How many elements are not zero (over `dim`: an int, a tuple, or None for all), as
    int64: fgrad.numpy.count_nonzero; an integer result, so no graph node."""
    return call(None, lambda v: fnp.count_nonzero(v, dim, policy=P), (input,))


def _dtype_arg(input, dtype):
    """softmax's dtype=: the input converted first, as its own node (PyTorch's ToCopyBackward0)."""
    return input if dtype is None else _to_dtype(input, D.np_dtype(dtype))


def softmax(input, dim, dtype=None):
    """exp(input) normalised along `dim` (the input converted to `dtype` first, as its own node)."""
    x = _dtype_arg(input, dtype)
    d = _dim(dim, x._value.ndim)
    return call("SoftmaxBackward0", _softmax_values, (x, d))


def log_softmax(input, dim, dtype=None):
    """log(softmax(input, dim)), computed stably (the input converted to `dtype` first)."""
    x = _dtype_arg(input, dtype)
    d = _dim(dim, x._value.ndim)
    return call("LogSoftmaxBackward0", _log_softmax_values, (x, d))


@replayable
def _softmax_values(v, dim):
    return _softmax(_float(v), dim)


@replayable
def _log_softmax_values(v, dim):
    return _log_softmax(_float(v), dim)


# --- complex numbers -----------------------------------------------------------------------------
# Functions of fgrad.numpy (JAX's derivative convention); the facade conjugates cotangents at its
# boundary (tensor.torch_convention), so .grad follows PyTorch's. real/imag are new tensors, not
# writable views as in PyTorch, but recorded as PyTorch records them: a select of view_as_real.

def _complex_input(input, name: str) -> None:
    if input._value.dtype.kind != "c":
        raise FgradRuntimeError(f"{name} is not implemented for tensors with non-complex dtypes (got "
                                f"{input._value.dtype}); make it complex first, e.g. t.to(torch.complex64)")


def _part(input, k: int):
    return select(view_as_real(input), -1, k)  # noqa: F821  (select: from _ops_shape, below)


def real(input):
    """The real part (a real tensor; a real input is returned as is, as PyTorch)."""
    return _part(input, 0) if input._value.dtype.kind == "c" else input


def imag(input):
    """The imaginary part of a complex tensor (PyTorch refuses real tensors)."""
    _complex_input(input, "imag")
    return _part(input, 1)


def conj(input):
    """The complex conjugate (a real input is returned as is, as PyTorch)."""
    return _tensor_bind(_conj_p, (input,), _EMPTY) if input._value.dtype.kind == "c" else input


def conj_physical(input):
    """The complex conjugate as a new tensor (a real input is returned as is)."""
    return call("ConjPhysicalBackward0", fnp.conj, (input,)) if input._value.dtype.kind == "c" else input


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
    return call("ViewAsRealBackward0", lambda z: fnp.stack([fnp.real(z), fnp.imag(z)], axis=-1), (input,))


def view_as_complex(input):
    """A real float32/float64 tensor (..., 2) as the complex tensor (...,) of its pairs."""
    shape, dt = tuple(input._value.shape), input._value.dtype
    if dt not in (np.float32, np.float64):
        raise FgradRuntimeError(f"view_as_complex is only supported for float and double tensors, but got a "
                                f"tensor of scalar type: {dt}")
    if not shape or shape[-1] != 2:
        raise FgradRuntimeError(f"Tensor must have a last dimension of size 2 (got shape {shape})")
    return call("ViewAsComplexBackward0",
                lambda x: _lax_complex(fnp.take(x, 0, axis=-1), fnp.take(x, 1, axis=-1)), (input,))


def complex(real, imag):
    """real + i imag from two float tensors of one dtype (float32 or float64), broadcast."""
    if not isinstance(imag, Tensor):
        raise FgradTypeError(f"complex(): argument 'imag' (position 2) must be Tensor, not {type(imag).__name__}")
    dr, di = real._value.dtype, imag._value.dtype
    if dr != di or dr not in (np.float32, np.float64):
        raise FgradRuntimeError(f"Expected both inputs to be Float or Double tensors of one dtype but got {dr} "
                                f"and {di}")
    return call("ComplexBackward0", _lax_complex, (real, imag))


def polar(abs, angle):
    """abs * (cos(angle) + i sin(angle)) from two float tensors of one dtype."""
    if not isinstance(angle, Tensor):
        raise FgradTypeError(f"polar(): argument 'angle' (position 2) must be Tensor, not {type(angle).__name__}")
    dr, di = abs._value.dtype, angle._value.dtype
    if dr != di or dr not in (np.float32, np.float64):
        raise FgradRuntimeError(f"Expected both inputs to be Float or Double tensors of one dtype but got {dr} "
                                f"and {di}")
    return call("PolarBackward0", lambda r, t: _lax_complex(fnp.multiply(r, fnp.cos(t)), fnp.multiply(r, fnp.sin(t))),
                (abs, angle))


# --- NumPy interop -----------------------------------------------------------------------------------

_UFUNCS = {"add": add, "subtract": sub, "multiply": mul, "true_divide": div, "divide": div,
           "power": pow, "maximum": maximum, "minimum": minimum, "less": lt, "less_equal": le,
           "greater": gt, "greater_equal": ge, "equal": eq, "not_equal": ne, "floor_divide": floor_divide,
           "remainder": remainder, "arctan2": atan2, "logical_and": logical_and, "logical_or": logical_or,
           "negative": neg, "exp": exp, "log": log, "sin": sin, "cos": cos, "tanh": tanh, "sqrt": sqrt,
           "absolute": abs}


# NumPy calls these for `number <op> tensor` when the number is a NumPy scalar: PyTorch runs the
# tensor's reflected operator then (np.float32(2) * x is x.__rmul__(2), whose node lists x first)
_REFLECTED = {"add": "__radd__", "subtract": "__rsub__", "multiply": "__rmul__", "true_divide": "__rtruediv__",
              "divide": "__rtruediv__", "power": "__rpow__", "floor_divide": "__rfloordiv__",
              "remainder": "__rmod__"}


def array_ufunc(self, ufunc, method, inputs, kwargs):
    """`np_array * tensor` gives a Tensor (as in PyTorch); other NumPy calls see a plain array."""
    fn = _UFUNCS.get(ufunc.__name__)
    if method == "__call__" and not kwargs and fn is not None:
        args = [i if isinstance(i, Tensor) or type(i) in _PY_NUMBERS else i.item() if isinstance(i, np.generic)
                else _tensor(i) for i in inputs]
        reflected = _REFLECTED.get(ufunc.__name__)
        if reflected is not None and len(args) == 2 and type(args[0]) in _PY_NUMBERS and isinstance(args[1], Tensor):
            return getattr(args[1], reflected)(args[0])
        return fn(*args)
    arrays = [i.numpy() if isinstance(i, Tensor) else i for i in inputs]
    return getattr(ufunc, method)(*arrays, **kwargs)


from ._ops_index import *  # noqa: E402,F401,F403  (scatter, index updates, counting, searching)
from ._ops_math import *  # noqa: E402,F401,F403  (cumulative, fused multiply-adds, order statistics)
from ._ops_shape import *  # noqa: E402,F401,F403  (shape ops, indexing, linalg, conversions)
from ._ops_shape import _caster, nonzero  # noqa: E402,F401  (used by _methods)

# The names installed from tables above, declared for static checkers (pyright, mypy); the stub
# is generated by tools/gen_type_stubs.py and never imported at run time.
import typing as _typing  # noqa: E402
if _typing.TYPE_CHECKING:
    from ._ops_names import *  # noqa: F401,F403
