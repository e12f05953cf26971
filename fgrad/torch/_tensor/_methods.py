"""The Tensor methods, as one table: each row names a method and how it reaches its torch
function. `tensor_methods()` turns the rows into the namespace the public Tensor class is
created with (tensor.py), so the methods are part of the class's definition.

Row kinds (`TABLE[name] = (kind, target)`):
- FUNCTION: the method is `target` itself, a torch function of _ops*.py (`x.add(y)` is
  `torch.add(x, y)`, `x + y` is `_ops._add(x, y)`) or a method written below;
- REFLECTED: `other <op> self` computed as `target(other, self)` (`2 - x`, `2 ** x`);
- INPLACE / INPLACE_ON_COPY: `self.<name>_(...)` computes `target(self, ...)` (on a copy of
  self for ON_COPY: compositions that save views of their input for backward) and writes it
  into self (check_inplace, then commit_inplace);
- ALIAS: the same function as the row `target` (`__iadd__` is `add_`);
- PROPERTY: a read-only attribute computed by `target(self)`;
- CASTER: `x.float()` & co., a conversion to the NumPy dtype `target`;
- FACTORY: `x.new_<name>(...)`, fgrad.torch.<target>(...) with x's dtype and device;
- RANDOM: an in-place random fill whose values `target(engine, n, dtype, *args)` draws;
- UPPER: a function of a module above the Tensor (`target` = (module, attribute, the
  method's parameters as Python source)): torch.linalg's det & co., Tensor.to_sparse. The
  method is declared here with its signature and looks the function up when called, so the
  Tensor does not import those modules (the layers in pyproject.toml);
- CONSTANT: a class attribute `target`.

Generated methods are real functions written as Python source from the signature of their
torch function (as collections.namedtuple writes its methods): inspect.signature and help()
show the torch parameters, and a call parses no *args/**kwargs.
"""
from __future__ import annotations

import importlib
import inspect
import linecache
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from ...core.errors import FgradRuntimeError, FgradTypeError
from ...core.trace import _state
from . import _dtypes as D
from . import _ops as O
from . import _ops_breadth as B
from . import _random
from . import _tensor_api as A
from . import creation
from ._device import to_device
from ._layout import PARTIAL_OVERLAP_MESSAGE, partial_overlap, same_elements, strided
from ._meta import MetaArray
from ._ops_hash import hash_tensor
from ._ops_math import nan_to_num
# (the base class: this module is imported while tensor.py builds the public one from it)
from .tensor import TensorBase, _make, check_inplace, commit_inplace

FUNCTION, REFLECTED, INPLACE, INPLACE_ON_COPY, ALIAS = "function", "reflected", "inplace", "inplace_on_copy", "alias"
PROPERTY, CASTER, FACTORY, RANDOM, UPPER, CONSTANT = "property", "caster", "factory", "random", "upper", "constant"
KINDS = (FUNCTION, REFLECTED, INPLACE, INPLACE_ON_COPY, ALIAS, PROPERTY, CASTER, FACTORY, RANDOM, UPPER, CONSTANT)

# The module the generated methods report as theirs (that of the class they belong to).
_CLASS_MODULE = "fgrad.torch._tensor.tensor"


# --- methods written here -------------------------------------------------------------------------

def _rtruediv(self, other):
    """`number / tensor` as PyTorch computes and records it: reciprocal, then a product."""
    return O.mul(O.reciprocal(self), other)


def _rsub(self, other):
    """`other - self`: torch.rsub(self, other) (RsubBackward1 for a number)."""
    return O.rsub(self, other)


def _pos(self):
    """`+x`: the tensor itself."""
    return self


_COMPARABLE = (TensorBase, bool, int, float, complex, np.ndarray, np.generic, list)


def _eq(self, other):
    """`x == other`: torch.eq for tensors, numbers and arrays; False for other objects."""
    return O.eq(self, other) if isinstance(other, _COMPARABLE) else False


def _ne(self, other):
    """`x != other`: torch.ne for tensors, numbers and arrays; True for other objects."""
    return O.ne(self, other) if isinstance(other, _COMPARABLE) else True


def _contains(self, element) -> bool:
    """`element in x`: whether any entry equals `element`."""
    return bool(O.any(O.eq(self, element)))


def where(self, condition, other):
    """Tensor.where(condition, other): torch.where(condition, self, other)."""
    return O.where(condition, self, other)


def view_as(self, other):
    """Tensor.view_as(other): self.view(other.shape)."""
    return O.view(self, tuple(other._value.shape))


def reshape_as(self, other):
    """Tensor.reshape_as(other): self.reshape(other.shape)."""
    return O.reshape(self, tuple(other._value.shape))


def adjoint(self):
    """Tensor.adjoint(): the conjugate transpose of the last two dims (torch.adjoint)."""
    return O.conj(O.transpose(self, -2, -1))


def cpu(self):
    """Tensor.cpu(): self.to("cpu")."""
    return O.to(self, "cpu")


def cuda(self, device=None, non_blocking=False):
    """Tensor.cuda(device=None): self.to(device), "cuda" by default."""
    return O.to(self, "cuda" if device is None else device)


def to_dense(self, dtype=None, *, masked_grad=None):
    """Tensor.to_dense(): a dense tensor is its own dense form (cast to `dtype` when given)."""
    return self if dtype is None else O.to(self, dtype)


def _T(self):
    """Tensor.T: the dims in reverse order (torch.permute)."""
    return O.permute(self, *reversed(range(self._value.ndim)))


def _mT(self):
    """Tensor.mT: the last two dims swapped (torch.transpose(self, -2, -1))."""
    return O.transpose(self, -2, -1)


def _H(self):
    """Tensor.H: the conjugate transpose of a matrix, as PyTorch's (conj of t)."""
    return O.conj(O.t(self))


def _mH(self):
    """Tensor.mH: the conjugate transpose of the last two dims."""
    return O.conj(O.transpose(self, -2, -1))


def zero_(self):
    """Tensor.zero_(): fill with zeros in place (ZeroBackward0 over a tensor with history)."""
    return B.zero_(self)


def fill_(self, value):
    """Tensor.fill_(value): every entry set to `value` (a number or a 0-d tensor) in place
    (FillBackward2, or FillBackward3 for a tensor value, over a tensor with history)."""
    return B.fill_(self, value)


def copy_(self, src, non_blocking: bool = False):
    """Tensor.copy_(src): `src`'s values (broadcast, cast, moved to this device) written in place.
    As in PyTorch, a `src` that partly shares memory with self (x[1:].copy_(x[:-1])) is refused
    and an expanded self too (in commit_inplace); where the layouts are too irregular for
    PyTorch's check, the copy reads all of src before writing."""
    check_inplace(self)
    if (isinstance(src, TensorBase) and self._node is None and not self._requires_grad and src._node is None
            and not src._requires_grad and same_elements(self._value, src._value)):
        self._vbox[0] += 1  # (nothing to copy, even into an expanded tensor; the version moves, as PyTorch's)
        return self
    src = O._tensor(src)
    if partial_overlap(self._value, src._value):
        raise FgradRuntimeError(PARTIAL_OVERLAP_MESSAGE)
    if src.device != self.device:
        src = O.to(src, self.device)
    if _state.grad_enabled and (self._requires_grad or src._requires_grad):
        return commit_inplace(self, B.copy_values(self, src))  # (PyTorch's CopyBackwards)
    if src._node is not None:  # (grad mode off: the values, not src's history)
        src = src.detach()
    src = O._to_dtype(src, self._value.dtype)
    shape = tuple(self._value.shape)
    if tuple(src._value.shape) != shape:
        src = O.expand(src, shape)
    return commit_inplace(self, src)


# --- fgrad's functional door refuses Tensors, naming the door to use instead ----------------------

_DOORS = {
    "fgrad.grad": "fgrad.torch.func.grad", "fgrad.value_and_grad": "fgrad.torch.func.grad_and_value",
    "fgrad.vjp": "fgrad.torch.func.vjp", "fgrad.jvp": "fgrad.torch.func.jvp",
    "fgrad.vmap": "fgrad.torch.func.vmap", "fgrad.jacrev": "fgrad.torch.func.jacrev",
    "fgrad.jacfwd": "fgrad.torch.func.jacfwd", "fgrad.hessian": "fgrad.torch.func.hessian",
    "fgrad.jit": "fgrad.torch.compile", "fgrad.custom_vjp": "fgrad.torch.autograd.Function",
    "fgrad.custom_jvp": "fgrad.torch.autograd.Function",
    "fgrad.checkpoint": "fgrad.torch.utils.checkpoint.checkpoint",
    "fgrad.stop_gradient": "Tensor.detach()",
}


def _refusal(entry: str) -> str:
    """What an fgrad functional entry point says when given a Tensor (the `__fgrad_foreign__`
    hook numpy._util.refuse_foreign and the core's bind read)."""
    door = _DOORS.get(entry)
    if door is None and entry.startswith("fgrad.numpy."):  # the torch function of that name
        door = f"fgrad.torch.{entry[len('fgrad.numpy.'):]} (import fgrad.torch as torch)"
    use = f"use {door}, or pass" if door else "pass"
    return (f"{entry} got a fgrad.torch.Tensor: {use} t.detach().numpy() (fgrad's functional "
            "door computes on arrays; the facade's own doors unbox Tensors for it)")


# --- in-place random fills ------------------------------------------------------------------------

def _random_fill(self, generator, draw, args, kwargs, layout):
    """Fill `self` in place with `draw(engine, n, dtype, *args, **kwargs)`'s flat values, from
    the PyTorch-algorithm stream of `generator` (the default generator when None), placed in
    the tensor's memory order. With `layout`, draw also gets `contiguous=` (normal_'s block
    kernel runs on contiguous tensors only)."""
    check_inplace(self)
    v = self._value
    if type(v) is MetaArray:  # no values to fill, nothing drawn (the generator does not advance, as PyTorch's)
        return self
    n = int(np.prod(v.shape))
    if layout:
        kwargs["contiguous"] = self.is_contiguous()
    flat = np.asarray(draw(creation._gen(generator), n, v.dtype, *args, **kwargs))
    values = _random.place(flat, v.shape, _random.memory_order(v)).astype(v.dtype, copy=False)
    if not isinstance(v, np.ndarray):
        values = to_device(values, self.device)
    new = _make(values)
    others = [a for a in args if isinstance(a, TensorBase)]  # (bernoulli_'s tensor of probabilities)
    if _state.grad_enabled and (self._requires_grad or any(o._requires_grad for o in others)):
        # PyTorch's node of the fill (UniformBackward0, ...): zeros to self's old history and to `others`
        new = B.overwrite(_random_node(draw, args, kwargs), self, new, others)
    return commit_inplace(self, new)


def _random_node(draw: Callable, args: tuple, kwargs: dict) -> str:
    """PyTorch's grad_fn name for the in-place random fill `draw` called with `args` and
    `kwargs` (the overload decides for bernoulli_ and random_)."""
    if draw is _bernoulli_draw:
        return "BernoulliBackward1" if args and isinstance(args[0], TensorBase) else "BernoulliBackward2"
    if draw is _random_draw:  # random_(from, to), random_(to), random_()
        given = sum(a is not None for a in (*args, kwargs.get("to")))
        return ("RandomBackward2", "RandomBackward1", "RandomBackward0")[min(given, 2)]
    return _RANDOM_NODES[draw]


def _draw_dtype(dtype):
    """torch draws float64 tensors in float64 and every other float dtype in float32."""
    return np.float64 if dtype == np.float64 else np.float32


def _uniform_draw(gen, n, dtype, a=0.0, b=1.0):
    return gen.engine.uniform_(n, _draw_dtype(dtype), a, b, dtype)


def _normal_draw(gen, n, dtype, mean=0.0, std=1.0, *, contiguous=True):
    return gen.engine.normal_(n, _draw_dtype(dtype), mean, std, contiguous=contiguous)


def _bernoulli_draw(gen, n, dtype, p=0.5):
    if isinstance(p, TensorBase):
        probs = p._value.get() if hasattr(p._value, "get") else np.asarray(p._value)
        return gen.engine.bernoulli(np.broadcast_to(probs, (n,)) if probs.size == 1 else probs)
    return gen.engine.bernoulli_(n, float(p))


def _exponential_draw(gen, n, dtype, lambd=1.0):
    return gen.engine.exponential_(n, lambd)


def _geometric_draw(gen, n, dtype, p):
    return gen.engine.geometric_(n, p)


def _cauchy_draw(gen, n, dtype, median=0.0, sigma=1.0):
    return gen.engine.cauchy_(n, median, sigma)


def _log_normal_draw(gen, n, dtype, mean=1.0, std=2.0):
    return gen.engine.log_normal_(n, mean, std)


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


# the grad_fn of each fill whose name does not depend on its arguments
_RANDOM_NODES = {_uniform_draw: "UniformBackward0", _normal_draw: "NormalBackward0",
                 _exponential_draw: "ExponentialBackward0", _geometric_draw: "GeometricBackward0",
                 _cauchy_draw: "CauchyBackward0", _log_normal_draw: "LogNormalBackward0"}


# --- the table --------------------------------------------------------------------------------------

# Names that are both fgrad.torch.<name>(tensor, ...) functions and tensor.<name>(...) methods;
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

TABLE: dict[str, tuple[str, Any]] = {}

# the torch functions of the same name, and the methods only a Tensor has
TABLE.update({name: (FUNCTION, getattr(O, name)) for name in SHARED_NAMES + (
    "view", "expand", "expand_as", "repeat", "to", "type_as", "contiguous", "is_contiguous", "select")})
TABLE.update({
    "type": (FUNCTION, O.tensor_type), "where": (FUNCTION, where), "view_as": (FUNCTION, view_as),
    "reshape_as": (FUNCTION, reshape_as), "adjoint": (FUNCTION, adjoint), "cpu": (FUNCTION, cpu),
    "cuda": (FUNCTION, cuda), "nan_to_num": (FUNCTION, nan_to_num), "to_dense": (FUNCTION, to_dense),
    "zero_": (FUNCTION, zero_), "fill_": (FUNCTION, fill_), "copy_": (FUNCTION, copy_),
    "__fgrad_foreign__": (FUNCTION, staticmethod(_refusal)),
})

# Python operators. PyTorch's reflected ones: commutative operators compute self <op> other
# (`2 * x` is x.mul(2): its node lists x first), `2 - x` is rsub(x, 2), `2 / x` is
# x.reciprocal() * 2, the others the function with the operands swapped (`2 ** x` is
# pow(2, x): PowBackward2)
_BINARY = {"add": O._add, "sub": O._sub, "mul": O.mul, "truediv": O._div, "floordiv": O.floor_divide,
           "mod": O.remainder, "pow": O.pow, "matmul": O.matmul, "and": O.bitwise_and, "or": O.bitwise_or,
           "xor": O.bitwise_xor}
TABLE.update({f"__{op}__": (FUNCTION, fn) for op, fn in _BINARY.items()})
TABLE.update({f"__r{op}__": (FUNCTION, _BINARY[op]) for op in ("add", "mul", "and", "or", "xor")})
TABLE.update({f"__r{op}__": (REFLECTED, _BINARY[op]) for op in ("floordiv", "mod", "pow", "matmul")})
TABLE.update({"__rsub__": (FUNCTION, _rsub), "__rtruediv__": (FUNCTION, _rtruediv)})
TABLE.update({f"__{op}__": (FUNCTION, fn) for op, fn in {
    "neg": O.neg, "abs": O.abs, "invert": O.bitwise_not, "lt": O.lt, "le": O.le, "gt": O.gt, "ge": O.ge,
    "pos": _pos, "eq": _eq, "ne": _ne, "contains": _contains, "getitem": O.getitem,
    "setitem": O.setitem}.items()})

# in-place ops: the torch function, written into self
TABLE.update({name: (INPLACE, fn) for name, fn in {
    "add_": O.add, "sub_": O.sub, "subtract_": O.sub, "mul_": O.mul, "multiply_": O.mul, "div_": O.div,
    "divide_": O.div, "true_divide_": O.div, "pow_": O.pow, "neg_": O.neg, "abs_": O.abs, "exp_": O.exp,
    "log_": O.log, "sqrt_": O.sqrt, "sin_": O.sin, "cos_": O.cos, "tanh_": O.tanh, "sigmoid_": O.sigmoid,
    "relu_": O.relu, "floor_": O.floor, "ceil_": O.ceil, "round_": O.round, "sign_": O.sign,
    "reciprocal_": O.reciprocal, "square_": O.square, "remainder_": O.remainder, "fmod_": O.fmod,
    "floor_divide_": O.floor_divide, "maximum_": O.maximum, "minimum_": O.minimum, "lerp_": O.lerp,
    "log1p_": O.log1p, "expm1_": O.expm1, "rsqrt_": O.rsqrt, "trunc_": O.trunc, "logical_not_": O.logical_not,
    "masked_fill_": O.masked_fill, "clamp_": O.clamp, "clip_": O.clamp, "__iand__": O.bitwise_and,
    "__ior__": O.bitwise_or, "scatter_": O.scatter, "scatter_add_": O.scatter_add, "index_add_": O.index_add,
    "index_copy_": O.index_copy, "index_fill_": O.index_fill, "index_put_": O.index_put,
    "masked_scatter_": O.masked_scatter, "addcmul_": O.addcmul, "addcdiv_": O.addcdiv, "addmm_": O.addmm,
    "addmv_": O.addmv, "baddbmm_": O.baddbmm, "addbmm_": O.addbmm, "frac_": O.frac, "clamp_min_": O.clamp_min,
    "clamp_max_": O.clamp_max}.items()})
TABLE.update({name: (INPLACE_ON_COPY, fn) for name, fn in {
    "scatter_reduce_": O.scatter_reduce, "cumprod_": O.cumprod, "hypot_": O.hypot, "logit_": O.logit,
    "xlogy_": O.xlogy}.items()})
TABLE.update({f"__{op}__": (ALIAS, method) for op, method in {
    "iadd": "add_", "isub": "sub_", "imul": "mul_", "itruediv": "div_", "ipow": "pow_", "imod": "remainder_",
    "ifloordiv": "floor_divide_"}.items()})

TABLE.update({name: (PROPERTY, fn) for name, fn in {
    "T": _T, "mT": _mT, "H": _H, "mH": _mH, "real": O.real, "imag": O.imag}.items()})
TABLE.update({name: (CASTER, dt) for name, dt in {
    "float": np.float32, "double": np.float64, "half": np.float16, "long": np.int64, "int": np.int32,
    "short": np.int16, "char": np.int8, "byte": np.uint8, "bool": np.bool_,
    "bfloat16": D.bfloat16, "chalf": D.complex32}.items()})
TABLE.update({f"new_{name}": (FACTORY, name) for name in ("tensor", "zeros", "ones", "empty", "full")})
TABLE.update({name: (RANDOM, draw) for name, draw in {
    "uniform_": _uniform_draw, "normal_": _normal_draw, "bernoulli_": _bernoulli_draw,
    "exponential_": _exponential_draw, "random_": _random_draw, "geometric_": _geometric_draw,
    "cauchy_": _cauchy_draw, "log_normal_": _log_normal_draw}.items()})
# torch.det & co (torch.linalg's functions under their older names) and the sparse conversions
TABLE.update({name: (UPPER, target) for name, target in {
    "det": ("fgrad.torch.linalg", "det", "self"),
    "inverse": ("fgrad.torch.linalg", "inv", "self"),
    "slogdet": ("fgrad.torch.linalg", "slogdet", "self"),
    "logdet": ("fgrad.torch.linalg", "logdet", "self"),
    "to_sparse": ("fgrad.torch.sparse", "to_sparse",
                  "self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None"),
    "to_sparse_coo": ("fgrad.torch.sparse", "to_sparse",
                      "self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None"),
}.items()})
TABLE.update({"is_sparse": (CONSTANT, False), "layout": (CONSTANT, strided)})

# --- breadth: the rest of torch.Tensor's public methods ------------------------------------------

# same-name torch functions of _ops_breadth.py (and creation.py's bernoulli)
TABLE.update({name: (FUNCTION, getattr(B, name)) for name in (
    "addr", "aminmax", "as_strided", "as_strided_scatter", "bitwise_left_shift", "bitwise_right_shift",
    "copysign", "corrcoef", "cov", "deg2rad", "diag_embed", "diagflat", "diagonal_scatter", "digamma", "dsplit",
    "erfc", "erfinv", "fliplr", "flipud", "fmax", "fmin", "frexp", "gcd", "get_device", "heaviside", "histogram",
    "hsplit", "i0", "igamma", "igammac", "index_reduce", "is_inference", "is_neg", "is_nonzero", "is_same_size",
    "is_signed", "isneginf", "isposinf", "isreal", "istft", "kthvalue", "lcm", "ldexp", "lgamma", "mode",
    "msort", "mvlgamma", "nanmean", "narrow_copy", "nextafter", "nonzero_static", "positive", "put",
    "rad2deg", "ravel", "renorm", "resolve_neg", "select_scatter", "sgn", "signbit", "sinc", "slice_scatter",
    "split_with_sizes", "stft", "take_along_dim", "tile", "unsafe_chunk", "unsafe_split",
    "unsafe_split_with_sizes", "vdot", "vsplit")})
TABLE["bernoulli"] = (FUNCTION, creation.bernoulli)
TABLE["hash_tensor"] = (FUNCTION, hash_tensor)

# in-place forms of functions that had only the out-of-place method
TABLE.update({name: (INPLACE, fn) for name, fn in {
    "absolute_": O.abs, "acos_": O.acos, "arccos_": O.acos, "arcsin_": O.asin, "arctan_": O.atan,
    "asin_": O.asin, "atan_": O.atan, "cosh_": O.cosh, "sinh_": O.sinh, "tan_": O.tan,
    "erf_": O.erf, "exp2_": O.exp2, "log10_": O.log10, "log2_": O.log2, "fix_": O.trunc, "negative_": O.neg,
    "conj_physical_": O.conj_physical, "atan2_": O.atan2, "arctan2_": O.atan2,
    "bitwise_and_": O.bitwise_and, "bitwise_or_": O.bitwise_or, "bitwise_xor_": O.bitwise_xor,
    "bitwise_not_": O.bitwise_not,
    "cumsum_": O.cumsum, "tril_": O.tril, "triu_": O.triu, "nan_to_num_": nan_to_num,
    "addr_": B.addr, "bitwise_left_shift_": B.bitwise_left_shift, "bitwise_right_shift_": B.bitwise_right_shift,
    "copysign_": B.copysign, "deg2rad_": B.deg2rad, "rad2deg_": B.rad2deg, "digamma_": B.digamma,
    "erfc_": B.erfc, "erfinv_": B.erfinv, "gcd_": B.gcd, "lcm_": B.lcm, "heaviside_": B.heaviside,
    "i0_": B.i0, "igamma_": B.igamma, "igammac_": B.igammac, "index_reduce_": B.index_reduce,
    "ldexp_": B.ldexp, "lgamma_": B.lgamma, "mvlgamma_": B.mvlgamma, "nextafter_": B.nextafter,
    "put_": B.put, "renorm_": B.renorm, "sgn_": B.sgn, "sinc_": B.sinc}.items()})
TABLE.update({f"__{op}__": (INPLACE, fn) for op, fn in {
    "ixor": O.bitwise_xor, "ilshift": B.bitwise_left_shift, "irshift": B.bitwise_right_shift}.items()})
TABLE.update({f"__{op}__": (FUNCTION, fn) for op, fn in {
    "lshift": B.bitwise_left_shift, "rshift": B.bitwise_right_shift}.items()})

# methods only a Tensor has, and those whose torch function takes the tensor second
TABLE.update({name: (FUNCTION, getattr(A, name)) for name in (
    "stride", "storage_offset", "dim_order", "is_pinned", "pin_memory", "const_data_ptr", "dense_dim",
    "sparse_dim", "reinforce", "new", "new_empty_strided", "apply_", "map_", "map2_", "fill_diagonal_",
    "sum_to_size", "unfold", "resize_", "resize_as_", "resize", "resize_as", "polygamma", "polygamma_",
    "float_power_", "register_post_accumulate_grad_hook", "as_subclass", "sparse_mask")})
TABLE.update({name: (FUNCTION, fn) for name, fn in {**A.VIEW_INPLACE, **A.NO_DERIVATIVE_INPLACE,
                                                     **A.SPARSE_ONLY, **A.COMPARE_INPLACE,
                                                     **A.LOGICAL_INPLACE}.items()})
TABLE.update({name: (PROPERTY, fn) for name, fn in {
    "nbytes": A._nbytes, "itemsize": A._itemsize, "is_cpu": A._is_cpu, "output_nr": A._output_nr,
    "volatile": A._volatile, "name": A._name, "grad_dtype": A._grad_dtype}.items()})
TABLE.update({name: (CASTER, dt) for name, dt in {"cfloat": np.complex64, "cdouble": np.complex128}.items()})

# torch functions of fgrad.torch._breadth (above the Tensor): linear algebra under its older
# names, the sparse products, hardshrink/prelu
TABLE.update({name: (UPPER, ("fgrad.torch._breadth", name, params)) for name, params in {
    "cholesky": "self, upper=False", "cholesky_inverse": "self, upper=False",
    "cholesky_solve": "self, L, upper=False", "geqrf": "self", "hardshrink": "self, lambd=0.5",
    "lu": "self, pivot=True, get_infos=False", "lu_solve": "self, LU_data, LU_pivots", "matrix_exp": "self",
    "matrix_power": "self, n", "orgqr": "self, tau", "ormqr": "self, tau, other, left=True, transpose=False",
    "pinverse": "self, rcond=1e-15", "prelu": "self, weight", "qr": "self, some=True",
    "smm": "self, mat2, out_dtype=None", "sspaddmm": "self, mat1, mat2, *, beta=1, alpha=1",
    "svd": "self, some=True, compute_uv=True",
    "triangular_solve": "self, A, upper=True, transpose=False, unitriangular=False"}.items()})
# removed from PyTorch (1.9): the methods raise the functions' errors, which name the replacement
TABLE.update({name: (FUNCTION, A.REMOVED[name]) for name in ("eig", "lstsq", "solve", "symeig")})


# --- methods from rows ----------------------------------------------------------------------------------

class _Default:
    """A default value in generated source: written as the namespace name that holds it."""

    def __init__(self, key: str) -> None:
        self.key = key

    def __repr__(self) -> str:
        return self.key


def _forwarding(fn: Callable, skip: int = 0, drop: tuple = ()) -> tuple[str, str, dict]:
    """(parameters, arguments, defaults): `fn`'s parameter list as Python source, its first
    parameter named `self`, without the `skip` parameters after it and those named in `drop`;
    the arguments that pass each on (positionally where it can, by name for keyword-only
    ones); the namespace holding their default values."""
    params, args, defaults = [], [], {}
    for i, p in enumerate(inspect.signature(fn).parameters.values()):
        if i == 0:
            if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                raise FgradTypeError(f"{fn.__qualname__}{inspect.signature(fn)}: a method's function must take "
                                     "the tensor as its first positional parameter")
            p = p.replace(name="self")
        elif i <= skip or p.name in drop:
            continue
        if p.default is not p.empty:
            key = f"_d{len(defaults)}"
            defaults[key] = p.default
            p = p.replace(default=_Default(key))
        params.append(p.replace(annotation=p.empty))
        if p.kind is p.VAR_POSITIONAL:
            args.append(f"*{p.name}")
        elif p.kind is p.VAR_KEYWORD:
            args.append(f"**{p.name}")
        elif p.kind is p.KEYWORD_ONLY:
            args.append(f"{p.name}={p.name}")
        else:
            args.append(p.name)
    return str(inspect.Signature(params))[1:-1], ", ".join(args), defaults


def _compile(name: str, params: str, body: str, namespace: dict, doc: str) -> Callable:
    """The function `def name(params): body` (one line of body), with `namespace` as its
    globals, named as a method of Tensor; its docstring is its signature, then `doc`."""
    src = f"def {name}({params}):\n    {body}\n"
    # a file name under fgrad's directory: error messages point past these frames to the
    # user's line (core/errors.py); linecache shows the source in tracebacks
    filename = f"{__file__}:Tensor.{name}"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    exec(compile(src, filename, "exec"), namespace)  # noqa: S102  (the table's own text)
    fn = namespace[name]
    shown = str(inspect.signature(fn)).replace("(self, ", "(").replace("(self)", "()")
    fn.__name__, fn.__qualname__, fn.__module__ = name, f"Tensor.{name}", _CLASS_MODULE
    fn.__doc__ = f"Tensor.{name}{shown}: {doc}"
    return fn


def _torch_name(fn: Callable) -> str:
    return getattr(fn, "__name__", repr(fn))


# In-place ops whose PyTorch kernel (a TensorIterator, or index_add_'s) refuses an operand
# that partly shares memory with self (x[1:].add_(x[:-1])): checked against torch 2.13
_OVERLAP_CHECKED = frozenset({
    "add_", "sub_", "subtract_", "mul_", "multiply_", "div_", "divide_", "true_divide_", "pow_", "remainder_",
    "fmod_", "floor_divide_", "atan2_", "arctan2_", "copysign_", "heaviside_", "igamma_", "igammac_", "ldexp_",
    "nextafter_", "hypot_", "xlogy_", "clamp_", "clip_", "clamp_min_", "clamp_max_", "lerp_", "addcmul_",
    "addcdiv_", "index_add_", "bitwise_and_", "bitwise_or_", "bitwise_xor_", "__iand__", "__ior__", "__ixor__",
    "__ilshift__", "__irshift__", "bitwise_left_shift_", "bitwise_right_shift_", "gcd_", "lcm_"})


def _no_partial_overlap(self, operands: tuple) -> None:
    """PyTorch's assert_no_partial_overlap(self, operand) for each Tensor operand."""
    for v in operands:
        if isinstance(v, TensorBase) and partial_overlap(self._value, v._value):
            raise FgradRuntimeError(PARTIAL_OVERLAP_MESSAGE)


def _inplace(name: str, fn: Callable, on_copy: bool) -> Callable:
    params, args, ns = _forwarding(fn)
    rest = args.split(", ", 1)[1] if ", " in args else ""
    first = "_clone(self)" if on_copy else "self"
    call = f"_fn({first}{', ' + rest if rest else ''})"
    ns.update(_fn=fn, _clone=O.clone, _check=check_inplace, _commit=commit_inplace, _overlap=_no_partial_overlap)
    doc = (f"torch.{_torch_name(fn)} written into this tensor in place"
           + (" (computed on a copy of it)" if on_copy else "") + ".")
    checks = "_check(self); "
    operands = [a.split("=", 1)[0] for a in rest.split(", ") if a and not a.startswith("*")]
    if name in _OVERLAP_CHECKED and operands:
        checks += f"_overlap(self, ({', '.join(operands)},)); "
    return _compile(name, params, f"{checks}return _commit(self, {call})", ns, doc)


def _reflected(name: str, fn: Callable) -> Callable:
    return _compile(name, "self, other", "return _fn(other, self)", {"_fn": fn},
                    f"the reflected operator: torch.{_torch_name(fn)}(other, self).")


def _caster(name: str, dt) -> Callable:
    # (a facade dtype for ml_dtypes' types: its NumPy dtype resolves when the method first runs)
    target = dt if isinstance(dt, D.dtype) else np.dtype(dt)
    label = dt.name if isinstance(dt, D.dtype) else np.dtype(dt).name if dt is not np.bool_ else "bool"
    return _compile(name, "self, memory_format=None", "return _to_dtype(self, _dt)",
                    {"_to_dtype": O._to_dtype, "_dt": target},
                    f"this tensor as torch.{label} (self.to(dtype); itself when it has that dtype already).")


def _factory(name: str, creator: str) -> Callable:
    return _compile(name, "self, *args, dtype=None, device=None, requires_grad=False, **kwargs",
                    "return _create(*args, **kwargs, dtype=dtype or self.dtype, device=device or self.device, "
                    "requires_grad=requires_grad)", {"_create": getattr(creation, creator)},
                    f"torch.{creator}(...) with this tensor's dtype and device by default.")


def _random_method(name: str, draw: Callable) -> Callable:
    layout = "contiguous" in inspect.signature(draw).parameters
    params, args, ns = _forwarding(draw, skip=2, drop=("contiguous",))
    sig = inspect.signature(eval(f"lambda {params}: None", dict(ns)))  # noqa: S307  (the table's own text)
    positional = [p.name for p in sig.parameters.values() if p.kind is p.POSITIONAL_OR_KEYWORD][1:]
    keywords = [p.name for p in sig.parameters.values() if p.kind is p.KEYWORD_ONLY]
    params += (", *" if not keywords else "") + ", generator=None"
    body = (f"return _fill(self, generator, _draw, ({''.join(a + ', ' for a in positional)}), "
            f"{{{', '.join(f'{k!r}: {k}' for k in keywords)}}}, {layout})")
    ns.update(_fill=_random_fill, _draw=draw)
    return _compile(name, params, body, ns, "fill this tensor in place with random values drawn as torch "
                    "draws them (from `generator`, or the default generator).")


def _upper(name: str, module: str, attr: str, params: str) -> Callable:
    ns: dict = {}
    fwd_params, args, defaults = _forwarding(eval(f"lambda {params}: None"))  # noqa: S307  (the table's text)
    ns.update(defaults, _modules=sys.modules, _import=importlib.import_module, _mod=module, _attr=attr)
    body = f"return getattr(_modules.get(_mod) or _import(_mod), _attr)({args})"
    return _compile(name, fwd_params, body, ns, f"{module}.{attr}({args}).")


def tensor_methods() -> dict:
    """The Tensor class's namespace from TABLE: every row's method, property or attribute."""
    out: dict = {}
    for name, (kind, target) in TABLE.items():
        if kind == FUNCTION or kind == CONSTANT:
            out[name] = target
        elif kind == REFLECTED:
            out[name] = _reflected(name, target)
        elif kind in (INPLACE, INPLACE_ON_COPY):
            out[name] = _inplace(name, target, kind == INPLACE_ON_COPY)
        elif kind == PROPERTY:
            out[name] = property(target, doc=target.__doc__)
        elif kind == CASTER:
            out[name] = _caster(name, target)
        elif kind == FACTORY:
            out[name] = _factory(name, target)
        elif kind == RANDOM:
            out[name] = _random_method(name, target)
        elif kind == UPPER:
            out[name] = _upper(name, *target)
        elif kind != ALIAS:
            raise FgradTypeError(f"Tensor method table: row {name!r} has kind {kind!r}, not one of {KINDS}")
    for name, (kind, target) in TABLE.items():
        if kind == ALIAS:
            out[name] = out[target]
    return out
