"""Tensor methods and Python operators, installed on the class: each calls the function of
the same PyTorch name in _ops (the in-place ones go through check_inplace/commit_inplace)."""
from __future__ import annotations

import numpy as np

from ...core.errors import FgradRuntimeError
from ...core.trace import _state
from . import _ops as O
from . import _random
from . import creation
from ._device import is_cupy, to_device
from ._ops_math import on_copy
from .tensor import Tensor, _make, _writable, check_inplace, commit_inplace

# --- operators ------------------------------------------------------------------------------------

def _rev(fn):
    return lambda self, other: fn(other, self)


def _rtruediv(self, other):
    """`number / tensor` as PyTorch computes and records it: reciprocal, then a product."""
    return O.mul(O.reciprocal(self), other)


# PyTorch's reflected operators: commutative ones compute self <op> other (`2 * x` is x.mul(2):
# its node lists x first), `2 - x` is rsub(x, 2), `2 / x` is x.reciprocal() * 2, the others
# the function with the operands swapped (`2 ** x` is pow(2, x): PowBackward2)
for _name, _fn in {"add": O._add, "sub": O._sub, "mul": O.mul, "truediv": O._div, "floordiv": O.floor_divide,
                   "mod": O.remainder, "pow": O.pow, "matmul": O.matmul, "and": O.bitwise_and,
                   "or": O.bitwise_or, "xor": O.bitwise_xor}.items():
    setattr(Tensor, f"__{_name}__", _fn)
    setattr(Tensor, f"__r{_name}__", _fn if _name in ("add", "mul", "and", "or", "xor") else _rev(_fn))
Tensor.__rsub__ = lambda self, other: O.rsub(self, other)
Tensor.__rtruediv__ = _rtruediv
for _name, _fn in {"neg": O.neg, "abs": O.abs, "invert": O.bitwise_not, "lt": O.lt, "le": O.le, "gt": O.gt,
                   "ge": O.ge}.items():
    setattr(Tensor, f"__{_name}__", _fn)
Tensor.__pos__ = lambda self: self


def _comparable(other) -> bool:
    return isinstance(other, (Tensor, bool, int, float, complex, np.ndarray, np.generic, list))


Tensor.__eq__ = lambda self, other: O.eq(self, other) if _comparable(other) else False
Tensor.__ne__ = lambda self, other: O.ne(self, other) if _comparable(other) else True
Tensor.__contains__ = lambda self, element: bool(O.any(O.eq(self, element)))
Tensor.__getitem__ = O.getitem
Tensor.__setitem__ = O.setitem


# --- in-place ops ------------------------------------------------------------------------------------

def _inplace(fn):
    def op(self, *args, **kwargs):
        check_inplace(self)
        return commit_inplace(self, fn(self, *args, **kwargs))
    op.__name__ = fn.__name__ + "_"
    return op


def zero_(self):
    return fill_(self, 0)


def fill_(self, value):
    check_inplace(self)
    v = self._value
    if isinstance(value, Tensor):
        if value._value.ndim != 0:
            raise FgradRuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value._value.ndim} dimensions.")
        if value._requires_grad and _state.grad_enabled:
            return commit_inplace(self, O.expand(O._to_dtype(value, v.dtype), tuple(v.shape)))
        value = value.item()
    if not (_state.grad_enabled and self._requires_grad) and _writable(v):
        v.fill(value)
        self._vbox[0] += 1
        return self
    xp = __import__("cupy") if is_cupy(v) else np
    const = _make(xp.full(tuple(v.shape), value, v.dtype))
    return commit_inplace(self, const)


def copy_(self, src, non_blocking: bool = False):
    check_inplace(self)
    src = O._tensor(src)
    if src.device != self.device:
        src = O.to(src, self.device)
    src = O._to_dtype(src, self._value.dtype)
    shape = tuple(self._value.shape)
    if tuple(src._value.shape) != shape:
        src = O.expand(src, shape)
    if src._node is None and not (_state.grad_enabled and self._requires_grad):
        return commit_inplace(self, src)
    return commit_inplace(self, src if src._node is not None else O.clone(src))  # (on src's device)


def _random_(draw, layout: bool = False):
    """An in-place random method: `draw(engine, n, dtype, *args)` gives the flat values, from
    the PyTorch-algorithm stream of `generator` (the default generator when None), placed in
    the tensor's memory order. With `layout`, draw also gets `contiguous=` (normal_'s block
    kernel runs on contiguous tensors only)."""
    def op(self, *args, generator=None, **kwargs):
        check_inplace(self)
        v = self._value
        n = int(np.prod(v.shape))
        if layout:
            kwargs["contiguous"] = self.is_contiguous()
        flat = np.asarray(draw(creation._gen(generator), n, v.dtype, *args, **kwargs))
        values = _random.place(flat, v.shape, _random.memory_order(v)).astype(v.dtype, copy=False)
        if not isinstance(v, np.ndarray):
            values = to_device(values, self.device)
        return commit_inplace(self, _make(values))
    return op


def _draw_dtype(dtype):
    """torch draws float64 tensors in float64 and every other float dtype in float32."""
    return np.float64 if dtype == np.float64 else np.float32


def _bernoulli_draw(gen, n, dtype, p=0.5):
    if isinstance(p, Tensor):
        probs = p._value.get() if hasattr(p._value, "get") else np.asarray(p._value)
        return gen.engine.bernoulli(np.broadcast_to(probs, (n,)) if probs.size == 1 else probs)
    return gen.engine.bernoulli_(n, float(p))


def _random_draw(gen, n, dtype, low=None, high=None, *, to=None):
    """random_(), random_(to), random_(from, to): torch's default range is [0, 2**mantissa] for
    floats and [0, max] for integer dtypes."""
    if to is not None:
        low, high = (0 if low is None else low), to
    elif high is None and low is not None:
        low, high = 0, low
    if low is None:
        # uniform_int_distribution: a draw modulo the dtype's range, 64-bit draws for float64
        # and int64 only
        dt = np.dtype(dtype)
        if dt.kind == "f":
            high = (1 << (np.finfo(dt).nmant + 1)) + 1
        elif dt.kind == "b":
            high = 2
        else:
            high = int(np.iinfo(dt).max) + 1
        wide = dt in (np.float64, np.int64)
        draws = gen.engine.random64(n) if wide else gen.engine.random32(n)
        return (draws % np.uint64(high)).astype(np.int64)
    return gen.engine.random_(n, int(low), int(high))


uniform_ = _random_(lambda gen, n, dtype, a=0.0, b=1.0: gen.engine.uniform_(n, _draw_dtype(dtype), a, b, dtype))
normal_ = _random_(lambda gen, n, dtype, mean=0.0, std=1.0, *, contiguous=True:
                   gen.engine.normal_(n, _draw_dtype(dtype), mean, std, contiguous=contiguous), layout=True)
bernoulli_ = _random_(_bernoulli_draw)
exponential_ = _random_(lambda gen, n, dtype, lambd=1.0: gen.engine.exponential_(n, lambd))
geometric_ = _random_(lambda gen, n, dtype, p: gen.engine.geometric_(n, p))
cauchy_ = _random_(lambda gen, n, dtype, median=0.0, sigma=1.0: gen.engine.cauchy_(n, median, sigma))
log_normal_ = _random_(lambda gen, n, dtype, mean=1.0, std=2.0: gen.engine.log_normal_(n, mean, std))
random_ = _random_(_random_draw)


_INPLACE = {"add_": O.add, "sub_": O.sub, "subtract_": O.sub, "mul_": O.mul, "multiply_": O.mul,
            "div_": O.div, "divide_": O.div, "true_divide_": O.div, "pow_": O.pow, "neg_": O.neg,
            "abs_": O.abs, "exp_": O.exp, "log_": O.log, "sqrt_": O.sqrt, "sin_": O.sin, "cos_": O.cos,
            "tanh_": O.tanh, "sigmoid_": O.sigmoid, "relu_": O.relu, "floor_": O.floor, "ceil_": O.ceil,
            "round_": O.round, "sign_": O.sign, "reciprocal_": O.reciprocal, "square_": O.square,
            "remainder_": O.remainder, "fmod_": O.fmod, "floor_divide_": O.floor_divide,
            "maximum_": O.maximum, "minimum_": O.minimum, "lerp_": O.lerp, "log1p_": O.log1p,
            "expm1_": O.expm1, "rsqrt_": O.rsqrt, "trunc_": O.trunc, "logical_not_": O.logical_not,
            "masked_fill_": O.masked_fill, "clamp_": O.clamp, "clip_": O.clamp, "__iand__": O.bitwise_and,
            "__ior__": O.bitwise_or, "scatter_": O.scatter, "scatter_add_": O.scatter_add,
            "scatter_reduce_": on_copy(O.scatter_reduce), "index_add_": O.index_add, "index_copy_": O.index_copy,
            "index_fill_": O.index_fill, "index_put_": O.index_put, "masked_scatter_": O.masked_scatter,
            "cumprod_": on_copy(O.cumprod), "addcmul_": O.addcmul, "addcdiv_": O.addcdiv, "addmm_": O.addmm,
            "addmv_": O.addmv, "baddbmm_": O.baddbmm, "addbmm_": O.addbmm, "frac_": O.frac,
            "clamp_min_": O.clamp_min, "clamp_max_": O.clamp_max, "hypot_": on_copy(O.hypot), "logit_": on_copy(O.logit),
            "xlogy_": on_copy(O.xlogy)}
for _name, _fn in _INPLACE.items():
    setattr(Tensor, _name, _inplace(_fn))
for _name, _fn in {"zero_": zero_, "fill_": fill_, "copy_": copy_, "uniform_": uniform_, "normal_": normal_,
                   "bernoulli_": bernoulli_, "exponential_": exponential_, "random_": random_,
                   "geometric_": geometric_, "cauchy_": cauchy_, "log_normal_": log_normal_}.items():
    setattr(Tensor, _name, _fn)
for _name, _method in {"iadd": "add_", "isub": "sub_", "imul": "mul_", "itruediv": "div_", "ipow": "pow_",
                       "imod": "remainder_", "ifloordiv": "floor_divide_"}.items():
    setattr(Tensor, f"__{_name}__", getattr(Tensor, _method))


# --- methods with the functions' names ---------------------------------------------------------------

# Names that are both fgrad.<name>(tensor, ...) functions and tensor.<name>(...) methods;
# fgrad/torch/_tensor/__init__.py adds the function-only names, this module the method-only ones.
SHARED_NAMES = (
    "add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "floor_divide",
    "remainder", "fmod", "pow", "float_power", "maximum", "minimum", "atan2", "arctan2", "eq",
    "logaddexp", "logaddexp2", "ne", "lt", "le", "gt", "ge", "greater", "less", "greater_equal", "less_equal", "not_equal",
    "logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_and", "bitwise_or",
    "bitwise_xor", "bitwise_not", "exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "sqrt",
    "rsqrt", "sin", "cos", "tan", "asin", "acos", "atan", "arcsin", "arccos", "arctan", "sinh",
    "cosh", "tanh", "asinh", "acosh", "atanh", "arcsinh", "arccosh", "arctanh", "sigmoid", "erf",
    "reciprocal", "square", "neg", "negative", "abs", "absolute", "sign", "floor", "ceil", "round",
    "trunc", "fix", "isnan", "isinf", "isfinite", "relu", "clamp", "clip", "lerp", "sum", "nansum",
    "mean", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "var", "std", "logsumexp",
    "norm", "any", "all", "count_nonzero", "softmax", "log_softmax", "reshape", "flatten",
    "unflatten", "unsqueeze", "squeeze", "permute", "transpose", "swapaxes", "swapdims", "t",
    "movedim", "moveaxis", "broadcast_to", "narrow", "split", "tensor_split", "chunk", "unbind",
    "gather", "index_select", "take", "masked_fill", "masked_select", "nonzero", "argwhere",
    "sort", "argsort", "topk", "cumsum", "flip", "roll", "tril", "triu", "diagonal", "diag",
    "trace", "matmul", "mm", "bmm", "mv", "dot", "inner", "outer", "ger", "clone", "allclose",
    "isclose", "equal",
    # scatter and index updates, counting (_ops_index.py); cumulative, fused multiply-adds, order
    # statistics, products (_ops_math.py)
    "scatter", "scatter_add", "scatter_reduce", "index_add", "index_copy", "index_fill", "index_put",
    "masked_scatter", "repeat_interleave", "unique", "unique_consecutive", "bincount", "histc", "multinomial",
    "cumprod", "cummax", "cummin", "logcumsumexp", "addcmul", "addcdiv", "addmm", "addmv", "baddbmm", "addbmm",
    "diff", "median", "nanmedian", "quantile", "nanquantile", "frac", "rot90", "kron", "cross", "dist",
    "clamp_min", "clamp_max", "hypot", "logit", "xlogy",
    # complex numbers (_ops.py; real and imag are properties below)
    "conj", "conj_physical", "resolve_conj", "is_conj", "angle",
)

_SAME_NAME = SHARED_NAMES + ("view", "expand", "expand_as", "repeat", "to", "type_as", "contiguous",
                             "is_contiguous", "select")
for _name in _SAME_NAME:
    setattr(Tensor, _name, getattr(O, _name))

Tensor.type = O.tensor_type
Tensor.where = lambda self, condition, other: O.where(condition, self, other)
Tensor.view_as = lambda self, other: O.view(self, tuple(other._value.shape))
Tensor.reshape_as = lambda self, other: O.reshape(self, tuple(other._value.shape))
Tensor.T = property(lambda self: O.permute(self, *reversed(range(self._value.ndim))))
Tensor.mT = property(lambda self: O.transpose(self, -2, -1))
Tensor.H = property(lambda self: O.conj(O.t(self)))   # the conjugate transpose, as PyTorch's
Tensor.mH = property(lambda self: O.conj(O.transpose(self, -2, -1)))
Tensor.adjoint = lambda self: O.conj(O.transpose(self, -2, -1))
Tensor.real = property(O.real)
Tensor.imag = property(O.imag)
Tensor.cpu = lambda self: O.to(self, "cpu")
Tensor.cuda = lambda self, device=None, non_blocking=False: O.to(self, "cuda" if device is None else device)

for _name, _dt in {"float": np.float32, "double": np.float64, "half": np.float16, "long": np.int64,
                   "int": np.int32, "short": np.int16, "char": np.int8, "byte": np.uint8, "bool": np.bool_}.items():
    setattr(Tensor, _name, O._caster(_dt))


def _new_factory(name):
    """Tensor.new_<name>(...): fgrad.<name>(...) with this tensor's dtype and device by default."""
    def new(self, *args, dtype=None, device=None, requires_grad=False, **kwargs):
        return getattr(creation, name)(*args, **kwargs, dtype=dtype or self.dtype, device=device or self.device,
                                       requires_grad=requires_grad)
    return new


for _name in ("tensor", "zeros", "ones", "empty", "full"):
    setattr(Tensor, f"new_{_name}", _new_factory(_name))
