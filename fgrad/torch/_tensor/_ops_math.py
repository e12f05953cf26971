"""More of PyTorch's tensor maths, mapped onto fgrad.numpy in PyTorch's dialect: cumulative
products and extremes, the fused multiply-adds (addcmul, addmm, ...), differences, order
statistics, pair products, distances and a few elementwise functions.

As in _ops.py, NumPy's functions (cumprod, diff, quantile, kron, cross, hypot, ...) are
called with `policy=TORCH`; what has no NumPy counterpart is written here from fgrad.numpy
functions: cummax/cummin (an associative scan choosing (value, index) pairs, then a gather
so the gradient goes to the returned index), logcumsumexp (a scan of logaddexp), torch's
lower median with its index, and the argument conventions (beta/alpha, value=, eps=).
"""
from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ... import numpy as fnp
from ...core.errors import (
    FgradIndexError,
    FgradNotImplementedError,
    FgradRuntimeError,
    FgradTypeError,
    FgradValueError,
)
from ...numpy._cumulative import associative_scan
from ...numpy._policy import TORCH as P
from ...numpy._util import cast, fresh
from ...scipy import linalg as fsl
from ...scipy import special as fss
from . import _dtypes as D
from ._ops import (
    _float,
    _operand,
    _tensor,
    _var_args,
    add,
    clamp,
    div,
    log,
    logaddexp,
    mul,
    named,
    result_type,
    sqrt,
    sub,
    sum,
    trunc,
)
from ._ops_shape import matmul, reshape, stack
from .tensor import Tensor, _dim, _make

_cummax_t, _cummin_t, _median_t, _nanmedian_t = (result_type(n) for n in ("cummax", "cummin", "median",
                                                                         "nanmedian"))


# --- cumulative ---------------------------------------------------------------------------------------

def on_copy(fn: Callable) -> Callable:
    """`fn` for the in-place method of a composition whose intermediate steps save views or
    values of `input` for backward (cumprod's scan slices, xlogy's product): run on a copy,
    so writing the result into `input` leaves what backward reads intact."""
    def op(input, *args, **kwargs):
        return fn(input.clone(), *args, **kwargs)
    op.__name__ = op.__qualname__ = fn.__name__
    return op


def _cumulative_extreme(input, dim, larger: bool, rtype):
    nd = input._value.ndim
    d = _dim(dim, nd)
    x = input.detach()
    if not nd:
        return rtype(input.clone(), _make(np.zeros((), np.int64)))
    shape = tuple(x._value.shape)
    idx = fnp.broadcast_to(fnp.reshape(np.arange(shape[d], dtype=np.int64),
                                       tuple(shape[d] if k == d else 1 for k in range(nd))), shape)

    def pick(earlier, later):
        (v0, i0), (v1, i1) = earlier, later
        # the later element wins ties (PyTorch's index) and NaN wins over numbers (NaN propagates)
        wins = fnp.greater_equal(v1, v0) if larger else fnp.less_equal(v1, v0)
        if x._value.dtype.kind in "fc":
            wins = fnp.logical_or(wins, fnp.isnan(v1))
        return fnp.where(wins, v1, v0), fnp.where(wins, i1, i0)

    _, indices = associative_scan(pick, (x, idx), d)  # of the detached input: no graph
    values = fnp.take_along_axis(input, indices._value, d)
    return rtype(named(values, "CummaxBackward0" if larger else "CumminBackward0", input), indices)


def cummax(input: Tensor, dim: Any) -> tuple:
    """(values, indices): the running maximum along `dim` and where it was attained (the
    latest position among equal values; NaN propagates). The gradient goes to the index."""
    return _cumulative_extreme(input, dim, True, _cummax_t)


def cummin(input: Tensor, dim: Any) -> tuple:
    """(values, indices): the running minimum along `dim` (as cummax)."""
    return _cumulative_extreme(input, dim, False, _cummin_t)


def logcumsumexp(input: Tensor, dim: Any) -> Tensor:
    """log(cumsum(exp(input))) along `dim`, computed stably (a scan of logaddexp, so every
    derivative is logaddexp's)."""
    x = _float(input)
    if not x._value.ndim:
        return named(x.clone(), "LogcumsumexpBackward0", input)
    d = _dim(dim, x._value.ndim)
    (out,) = associative_scan(lambda e, later: (logaddexp(e[0], later[0]),), (x,), d)
    return named(out, "LogcumsumexpBackward0", input)


# --- fused multiply-adds ------------------------------------------------------------------------------

def _scaled(t, factor):
    return t if factor == 1 else mul(t, factor)


def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """input + value * tensor1 * tensor2."""
    return named(add(input, _scaled(mul(tensor1, tensor2), value)), "AddcmulBackward0", input, tensor1, tensor2)


def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """input + value * tensor1 / tensor2 (floating point only)."""
    if tensor1._value.dtype.kind in "biu" and tensor2._value.dtype.kind in "biu":
        raise FgradRuntimeError("Integer division with addcdiv is no longer supported, and in a future release "
                           "addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv "
                           "behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2))."
                           "to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) for "
                           "float inputs.")
    return named(add(input, _scaled(div(tensor1, tensor2), value)), "AddcdivBackward0", input, tensor1, tensor2)


def _beta_alpha(name: str, input, a, b, beta, alpha, what=("mat1", "mat2"), ndims=(2, 2),
                batch_sum: bool = False) -> Tensor:
    """beta * input + alpha * (a @ b) (summed over the batch with `batch_sum`), where `a` and
    `b` (the arguments `what`) must have `ndims` dimensions; with beta == 0 `input` is
    ignored (its NaNs too), as PyTorch's BLAS-style functions do. grad_fn <Name>Backward0."""
    input, a, b = _tensor(input), _tensor(a), _tensor(b)
    for w, t, nd in zip(what, (a, b), ndims):
        if t._value.ndim != nd:
            raise FgradRuntimeError(f"{name}: {w} must be a {nd}-D tensor, got shape {tuple(t._value.shape)}")
    product = matmul(a, b)
    out = _scaled(sum(product, 0) if batch_sum else product, alpha)
    if beta == 0:
        fnp.broadcast_to(input.detach(), tuple(out._value.shape), policy=P)  # it must still fit the shape
    else:
        out = add(_scaled(input, beta), out)
    return named(out, f"{name.capitalize()}Backward0", input)


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """beta * input + alpha * (mat1 @ mat2), input broadcast to the product's shape."""
    return _beta_alpha("addmm", input, mat1, mat2, beta, alpha)


def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """beta * input + alpha * (mat @ vec)."""
    return _beta_alpha("addmv", input, mat, vec, beta, alpha, ("mat", "vec"), (2, 1))


def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """beta * input + alpha * (batch1 @ batch2), batch by batch."""
    return _beta_alpha("baddbmm", input, batch1, batch2, beta, alpha, ("batch1", "batch2"), (3, 3))


def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """beta * input + alpha * sum over the batch of batch1[b] @ batch2[b]."""
    return _beta_alpha("addbmm", input, batch1, batch2, beta, alpha, ("batch1", "batch2"), (3, 3), True)


# --- differences, grids, distances --------------------------------------------------------------------

def diff(input: Tensor, n: int = 1, dim: int = -1, prepend: Tensor | None = None,
         append: Tensor | None = None) -> Tensor:
    """The n-th forward difference along `dim` (booleans: logical xor), after joining
    `prepend` and `append` (tensors) along it."""
    for what, v in (("prepend", prepend), ("append", append)):
        if v is not None and not isinstance(v, Tensor):
            raise FgradTypeError(f"diff(): argument '{what}' must be Tensor, not {type(v).__name__}")
    if n < 0:
        raise FgradRuntimeError(f"order must be non-negative but got {n}")
    return fresh(fnp.diff(input, n, dim, prepend, append, policy=P), input)  # (n=0: PyTorch's copy)


def meshgrid(*tensors: Any, indexing: str | None = None) -> tuple:
    """Coordinate grids of 0-d or 1-D tensors; indexing 'ij' (PyTorch's default, with a
    warning when not given) or 'xy'."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    tensors = tuple(_tensor(t) for t in tensors)
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing "
                      "argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise FgradRuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {indexing}")
    for t in tensors:
        if t._value.ndim > 1:
            raise FgradRuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got a tensor of "
                               f"shape {tuple(t._value.shape)}")
    return fnp.meshgrid(*tensors, indexing=indexing, copy=False)  # (PyTorch's grids are views)


def cartesian_prod(*tensors: Any) -> Tensor:
    """The rows of every combination of one element from each 1-D tensor (itertools.product
    order); one tensor comes back as itself."""
    tensors = tuple(_tensor(t) for t in tensors)
    for t in tensors:
        if t._value.ndim != 1:
            raise FgradRuntimeError(f"Expect a 1D vector, but got shape {list(t._value.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = fnp.meshgrid(*tensors, indexing="ij")
    return stack([reshape(g, -1) for g in grids], 1)


def block_diag(*tensors: Any) -> Tensor:
    """The tensors (0-d, 1-D as one row, or 2-D) as the blocks of a block-diagonal matrix."""
    blocks = []
    for k, t in enumerate(tensors):
        t = _tensor(t)
        if t._value.ndim > 2:
            raise FgradRuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {k} has "
                               f"{t._value.ndim} dimensions")
        blocks.append(reshape(t, 1, -1) if t._value.ndim < 2 else t)
    if not blocks:
        return _make(np.zeros((1, 0), P.default_float))
    return fsl.block_diag(*blocks, policy=P)


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """The p-norm distance between each row of x1 (..., P, M) and each row of x2 (..., R, M):
    (..., P, R). For p = 2 with more than 25 rows on a side (or compute_mode
    'use_mm_for_euclid_dist') the squared distances come from a matrix product, as PyTorch's
    (clamped at 1e-30 before the square root); otherwise from the differences, with the
    gradient 0 at zero distance."""
    for name, t in (("X1", x1), ("X2", x2)):
        if t._value.dtype.kind != "f":
            raise FgradRuntimeError(f"cdist only supports floating-point dtypes, {name} got: {t.dtype}")
        if t._value.ndim < 2:
            raise FgradRuntimeError(f"cdist only supports at least 2D tensors, {name} got: {t._value.ndim}D")
    if x1._value.shape[-1] != x2._value.shape[-1]:
        raise FgradRuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1._value.shape[-1]} X2: "
                           f"{x2._value.shape[-1]}")
    if p < 0:
        raise FgradRuntimeError(f"cdist only supports non-negative p values, got {p}")
    modes = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist")
    if compute_mode not in modes:
        raise FgradValueError(f"{compute_mode} is not a valid value for compute_mode")
    rows1, rows2 = x1._value.shape[-2], x2._value.shape[-2]
    use_mm = p == 2 and (compute_mode == "use_mm_for_euclid_dist" or (
        compute_mode == modes[0] and (rows1 > 25 or rows2 > 25)))
    if use_mm:
        n1 = sum(mul(x1, x1), -1, keepdim=True)
        n2 = sum(mul(x2, x2), -1, keepdim=True)
        sq = add(sub(n1, mul(matmul(x1, x2.mT), 2.0)), n2.mT)
        return sqrt(clamp(sq, min=1e-30))
    diff_ = sub(x1.unsqueeze(-2), x2.unsqueeze(-3))
    return fnp.linalg.vector_norm(diff_, axis=-1, ord=float(p))


def dist(input: Tensor, other: Tensor, p: float = 2) -> Tensor:
    """The p-norm of input - other (broadcast), as one number."""
    return fnp.linalg.vector_norm(sub(input, other), ord=float(p))


# --- order statistics ---------------------------------------------------------------------------------

def _lower_median(input, dim, keepdim: bool, ignore_nan: bool, rtype):
    """PyTorch's median: the lower of the two middle elements (no averaging), with its index;
    NaN (the first one) unless `ignore_nan` skips NaNs."""
    v = input._value
    if dim is None:
        flat = reshape(input, -1)
        if not flat._value.shape[0]:
            return named(_make(np.full((), np.nan, v.dtype)), "MedianBackward0", input)
        values, _ = _lower_median(flat, 0, False, ignore_nan, rtype)
        return named(values, "NanmedianBackward0" if ignore_nan else "MedianBackward0", input)
    nd = v.ndim
    d = _dim(dim, nd)
    if not nd:
        return rtype(input.clone(), _make(np.zeros((), np.int64)))
    if not v.shape[d]:
        raise FgradIndexError(f"median(): Expected reduction dim {d} to have non-zero size.")
    order = fnp.argsort(input.detach(), d, policy=P)  # NaNs last
    isnan = fnp.isnan(input.detach()) if v.dtype.kind in "fc" else None
    if ignore_nan and isnan is not None:
        count = fnp.sum(fnp.logical_not(isnan), axis=d, keepdims=True, policy=P)
        k = fnp.maximum(fnp.floor_divide(fnp.subtract(count, 1), 2), 0)
    else:
        k = np.full(tuple(1 if i == d else s for i, s in enumerate(v.shape)), (v.shape[d] - 1) // 2, np.int64)
    idx = fnp.take_along_axis(order, k, d)
    if not ignore_nan and isnan is not None:  # PyTorch: any NaN makes the median NaN, at the first NaN
        first_nan = fnp.argmax(isnan, axis=d, keepdims=True, policy=P)
        idx = fnp.where(fnp.any(isnan, axis=d, keepdims=True), first_nan, idx)
    idx = idx if isinstance(idx, Tensor) else _make(np.asarray(idx))
    values = fnp.take_along_axis(input, idx._value, d)
    if not keepdim:
        values, idx = fnp.squeeze(values, d), fnp.squeeze(idx, d)
    return rtype(named(values, "NanmedianBackward1" if ignore_nan else "MedianBackward1", input), idx)


def median(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor | tuple:
    """The lower median (of all elements, or (values, indices) along `dim`); NaN if any
    element is NaN. The gradient goes to the returned element."""
    return _lower_median(input, dim, keepdim, False, _median_t)


def nanmedian(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor | tuple:
    """median ignoring NaNs (NaN only for an all-NaN slice)."""
    return _lower_median(input, dim, keepdim, True, _nanmedian_t)


def _quantile(name, fn, input, q, dim, keepdim, interpolation):
    if input._value.dtype.kind != "f":
        raise FgradRuntimeError(f"{name}() input tensor must be either float or double dtype")
    if isinstance(q, Tensor):
        if q._value.dtype != input._value.dtype:
            raise FgradRuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        if q._value.ndim > 1:
            raise FgradRuntimeError(f"{name}() q must be a scalar or 1D tensor")
        qv = q._value
    else:
        qv = q
    if not np.all((np.asarray(qv) >= 0) & (np.asarray(qv) <= 1)):
        raise FgradRuntimeError(f"{name}() q values must be in the range [0, 1]")
    if dim is None and keepdim is False:
        input = reshape(input, -1)
    return fn(input, qv, axis=dim, method=interpolation, keepdims=keepdim, policy=P)


def quantile(input: Tensor, q: Tensor | float, dim: int | None = None, keepdim: bool = False, *,
             interpolation: str = "linear") -> Tensor:
    """The q-th quantiles (q a number or 1-D tensor in [0, 1]) over `dim` (all elements when
    None), interpolating by 'linear', 'lower', 'higher', 'midpoint' or 'nearest'; NaN where
    a slice holds NaN."""
    return _quantile("quantile", fnp.quantile, input, q, dim, keepdim, interpolation)


def nanquantile(input: Tensor, q: Tensor | float, dim: int | None = None, keepdim: bool = False, *,
                interpolation: str = "linear") -> Tensor:
    """quantile ignoring NaNs."""
    return _quantile("nanquantile", fnp.nanquantile, input, q, dim, keepdim, interpolation)


def _with_mean(spread: Callable, name: str) -> Callable:
    def op(input: Tensor, dim: Any = None, unbiased: Any = True, keepdim: bool = False, *,
           correction: Any = None) -> tuple:
        args = _var_args(dim, unbiased, keepdim, correction)
        return (spread(input, **args), fnp.mean(input, axis=args["axis"], keepdims=keepdim, policy=P))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"({spread.__name__}, mean) over `dim`."
    return op


std_mean, var_mean = _with_mean(fnp.std, "std_mean"), _with_mean(fnp.var, "var_mean")


# --- products and elementwise -------------------------------------------------------------------------

def rot90(input: Tensor, k: int = 1, dims: Any = (0, 1)) -> Tensor:
    """`input` rotated by 90 degrees k times in the plane of `dims`, from the first towards
    the second."""
    dims = tuple(dims)
    if len(dims) != 2:
        raise FgradRuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    nd = input._value.ndim
    if nd < 2:
        raise FgradRuntimeError(f"expected total dims >= 2, but got total dims = {nd}")
    if _dim(dims[0], nd) == _dim(dims[1], nd):
        raise FgradRuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} and dim1 = {dims[1]}")
    return fresh(fnp.rot90(input, k, dims), input)  # (NumPy's rot90 is a view, PyTorch's a copy)


def cross(input: Tensor, other: Tensor, dim: Any = None) -> Tensor:
    """The cross product along `dim` (both need 3 entries there; by default the first dim
    of size 3, with a warning, as PyTorch); the other dims broadcast."""
    if dim is None:
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the "
                      "dim explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to "
                      "agree with that of linalg.cross in a future release.", UserWarning, stacklevel=2)
        shape = np.broadcast_shapes(tuple(input._value.shape), tuple(other._value.shape))
        dim = next((i for i, s in enumerate(shape) if s == 3), None)
        if dim is None:
            raise FgradRuntimeError(f"no dimension of size 3 in input (shapes {tuple(input._value.shape)} and "
                               f"{tuple(other._value.shape)})")
    return linalg_cross(input, other, dim=dim)


def linalg_cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    """torch.linalg.cross: the cross product along `dim` (size 3 in both), broadcasting."""
    s1, s2 = tuple(input._value.shape), tuple(other._value.shape)
    if len(s1) != len(s2):
        raise FgradRuntimeError(f"linalg.cross: inputs must have the same number of dimensions (shapes {s1} and {s2})")
    nd = len(s1)
    d = _dim(dim, nd)
    if s1[d] != 3 or s2[d] != 3:
        raise FgradRuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {s1[d]} and {s2[d]}")
    dt = P.result_dtype(input, other)
    return named(fnp.cross(cast(input, dt), cast(other, dt), axis=d), "LinalgCrossBackward0", input, other)


def clamp_min(input: Tensor, min: Any) -> Tensor:
    """max(input, min), the gradient passing at the bound (PyTorch's clamp)."""
    return clamp(input, min=min)


def clamp_max(input: Tensor, max: Any) -> Tensor:
    """min(input, max), the gradient passing at the bound (PyTorch's clamp)."""
    return clamp(input, max=max)


def frac(input: Tensor) -> Tensor:
    """input - trunc(input): the fractional part, with input's sign."""
    if input._value.dtype.kind not in "fc":
        raise FgradNotImplementedError(f"\"frac_cpu\" not implemented for '{D.of_np(input._value.dtype)._torch[:-6]}'")
    return named(sub(input, trunc(input)), "FracBackward0", input)


def logit(input: Tensor, eps: float | None = None) -> Tensor:
    """log(p / (1 - p)), with p clamped to [eps, 1 - eps] first when eps is given (the
    gradient is then 0 outside those bounds)."""
    x = _float(input)
    if eps is not None:
        x = clamp(x, eps, 1.0 - eps)
    return named(fss.logit(x), "LogitBackward0", input)


def xlogy(input: Tensor, other: Tensor) -> Tensor:
    """input * log(other), 0 where input is 0 (unless other is NaN). PyTorch's derivative
    conventions where input is 0 and other is 0 (or negative, or inf): d/dinput is 0 there,
    not log(other); d/dother is 0 (PyTorch: NaN at 0/0)."""
    a, b = _operand(input), _operand(other)
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        raise FgradTypeError("xlogy(): at least one of input and other must be a Tensor")
    dt = P.float_dtype(P.result_dtype(a, b))
    a, b = cast(a, dt), cast(b, dt)
    # where input is 0 and log(other) is not finite the product is 0 (the double-where: the
    # guarded log(1) keeps its derivatives finite); elsewhere input * log(other)
    guard = fnp.logical_and(fnp.equal(a, 0), fnp.logical_or(fnp.less_equal(b, 0), fnp.isinf(b)))
    safe = fnp.where(guard, np.ones((), dt), b)
    return named(fnp.where(guard, np.zeros((), dt), mul(a, log(safe)), policy=P), "XlogyBackward0", input,
                 other)


__all__ = [
    "addbmm",
    "addcdiv",
    "addcmul",
    "addmm",
    "addmv",
    "baddbmm",
    "block_diag",
    "cartesian_prod",
    "cdist",
    "clamp_max",
    "clamp_min",
    "cross",
    "cummax",
    "cummin",
    "diff",
    "dist",
    "frac",
    "logcumsumexp",
    "logit",
    "median",
    "meshgrid",
    "nanmedian",
    "nanquantile",
    "quantile",
    "rot90",
    "std_mean",
    "var_mean",
    "xlogy",
]


def nan_to_num(input: Tensor, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None) -> Tensor:
    """NaN -> nan, +inf -> posinf, -inf -> neginf (the dtype's largest/smallest by default)."""
    out = fnp.nan_to_num(_tensor(input), nan=nan, posinf=posinf, neginf=neginf)
    return named(out, "NanToNumBackward0", input)
