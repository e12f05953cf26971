"""More of PyTorch's tensor maths, mapped onto fgrad.numpy in PyTorch's dialect: cumulative
products and extremes, the fused multiply-adds (addcmul, addmm, ...), differences, order
statistics, pair products, distances and a few elementwise functions.

As in _ops.py, NumPy's functions (cumprod, diff, quantile, kron, cross, hypot, ...) are
called with `policy=TORCH`; what has no NumPy counterpart is written here from fgrad.numpy
functions: cummax/cummin (the indices from fgrad.lax.cummax/cummin's running extremes, then a
gather so the gradient goes to the returned index), logcumsumexp (fgrad.lax.cumlogsumexp), torch's
lower median with its index, and the argument conventions (beta/alpha, value=, eps=).
Each function is one torch op through the boundary (`_boundary.call`): one node named as
PyTorch's grad_fn (AddmmBackward0 over input, mat1, mat2; CummaxBackward0; ...), or the same
composition of facade ops as PyTorch's (diff: narrowed slices and a sub; meshgrid: a view
then an expand).
"""
from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ... import lax
from ... import numpy as fnp
from ...custom import custom_vjp
from ...core.errors import (
    FgradIndexError,
    FgradNotImplementedError,
    FgradRuntimeError,
    FgradTypeError,
    FgradValueError,
)
from ...extend.numpy import cast, dtype_of, shape_of
from ...scipy import linalg as fsl
from ...scipy import special as fss
from . import _dtypes as D
from ._boundary import call
from ._policy import TORCH as P
from ._ops import (
    _clamp_values,
    _float,
    _operand,
    _own,
    _tensor,
    _trunc_values,
    _var_args,
    lerp,
    logical_xor,
    result_type,
    sub,
)
from ._ops_shape import cat, clone, expand, gather, narrow, reshape, sort, stack, transpose, view
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


def _extreme_indices(k, d: int, larger: bool):
    """PyTorch's indices of cummax (larger) / cummin along the non-negative `d`: where the
    running extreme was attained, the latest position among equal values, NaN winning over
    numbers (and the latest NaN over earlier ones). The running extreme only changes at a
    "record", an entry equal to the running extreme at its position (or a NaN), and stays
    equal to it until the next record: so the index is the running maximum of the records'
    positions (0 elsewhere). Integers, from the value `k` alone: no derivative."""
    if dtype_of(k).kind == "b":  # (lax's scans take numbers; False < True as in uint8)
        k = fnp.astype(k, np.uint8)
    record = fnp.equal(k, (lax.cummax if larger else lax.cummin)(k, d))
    if dtype_of(k).kind in "fc":
        record = fnp.logical_or(record, fnp.isnan(k))
    shape = shape_of(k)
    positions = fnp.broadcast_to(fnp.reshape(np.arange(shape[d], dtype=np.int64),
                                             tuple(shape[d] if i == d else 1 for i in range(len(shape)))), shape)
    return lax.cummax(fnp.where(record, positions, np.int64(0)), d)


def _cumulative_extreme(input, dim, larger: bool, rtype):
    nd = input._value.ndim
    d = _dim(dim, nd)
    name = "CummaxBackward0" if larger else "CumminBackward0"
    if not nd:
        return rtype(_own(call(name, _identity, (input,))), _make(np.zeros((), np.int64)))

    # the indices come from the input's value alone (integers: no graph), outside the recorder
    indices = _extreme_indices(input._value, d, larger)

    def fn(v):
        # the values are gathered at the indices, so the gradient goes to the index (PyTorch's
        # convention; fgrad.lax.cummax splits it between ties, as JAX)
        return rtype(fnp.take_along_axis(v, indices, d), indices)
    return call(name, fn, (input,))


def _identity(x):
    return x


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
    nd = input._value.ndim
    d = _dim(dim, nd) if nd else 0

    def values(v):
        x = _float(v)
        # (a dim of length 1 is the input itself, so complex inputs pass there, as before)
        return lax.cumlogsumexp(x, d) if nd and shape_of(x)[d] > 1 else x
    return _own(call("LogcumsumexpBackward0", values, (input,)))


# --- fused multiply-adds ------------------------------------------------------------------------------

def _scaled(t, factor):
    """`t` * factor on values (t itself for factor 1)."""
    return t if factor == 1 else fnp.multiply(t, factor, policy=P)


def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """input + value * tensor1 * tensor2."""
    def values(a, t1, t2):
        return fnp.add(a, _scaled(fnp.multiply(t1, t2, policy=P), value), policy=P)
    return call("AddcmulBackward0", values, (_operand(input), _operand(tensor1), _operand(tensor2)))


def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """input + value * tensor1 / tensor2 (floating point only)."""
    if tensor1._value.dtype.kind in "biu" and tensor2._value.dtype.kind in "biu":
        raise FgradRuntimeError("Integer division with addcdiv is no longer supported, and in a future release "
                           "addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv "
                           "behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2))."
                           "to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) for "
                           "float inputs.")

    def values(a, t1, t2):
        return fnp.add(a, _scaled(fnp.true_divide(t1, t2, policy=P), value), policy=P)
    return call("AddcdivBackward0", values, (_operand(input), tensor1, tensor2))


def _beta_alpha(name: str, input, a, b, beta, alpha, what=("mat1", "mat2"), ndims=(2, 2),
                batch_sum: bool = False) -> Tensor:
    """beta * input + alpha * (a @ b) (summed over the batch with `batch_sum`), where `a` and
    `b` (the arguments `what`) must have `ndims` dimensions; with beta == 0 `input` is
    ignored (its NaNs too), as PyTorch's BLAS-style functions do. One node <Name>Backward0
    over (input, a, b), as PyTorch's."""
    input, a, b = _tensor(input), _tensor(a), _tensor(b)
    for w, t, nd in zip(what, (a, b), ndims):
        if t._value.ndim != nd:
            raise FgradRuntimeError(f"{name}: {w} must be a {nd}-D tensor, got shape {tuple(t._value.shape)}")

    def values(c, x, y):
        product = fnp.matmul(x, y, policy=P)
        out = _scaled(fnp.sum(product, axis=0, policy=P) if batch_sum else product, alpha)
        if beta == 0:
            fnp.broadcast_to(c, shape_of(out), policy=P)  # it must still fit the shape
            return out
        return fnp.add(_scaled(c, beta), out, policy=P)
    return call(f"{name.capitalize()}Backward0", values, (input, a, b))


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
    `prepend` and `append` (tensors) along it. PyTorch's graph: a cat when prepend or append
    is given, then per order a sub (logical_xor) of two narrowed slices."""
    for what, v in (("prepend", prepend), ("append", append)):
        if v is not None and not isinstance(v, Tensor):
            raise FgradTypeError(f"diff(): argument '{what}' must be Tensor, not {type(v).__name__}")
    if n < 0:
        raise FgradRuntimeError(f"order must be non-negative but got {n}")
    nd = input._value.ndim
    d = _dim(dim, nd)
    if prepend is not None or append is not None:
        shape = tuple(input._value.shape)
        parts = [input]
        for k, v in ((0, prepend), (2, append)):
            if v is None:
                continue
            if not v._value.ndim:  # a number joins as one slice of the input's shape
                v = expand(v, shape[:d] + (1,) + shape[d + 1:])
            parts.insert(k if k == 0 else len(parts), v)
        input = cat(parts, d)
    if n == 0:
        return clone(input)  # (PyTorch's copy)
    x = input
    step = logical_xor if x._value.dtype.kind == "b" else sub
    for _ in range(n):
        length = x._value.shape[d]
        if length == 0:
            break
        x = step(narrow(x, d, 1, length - 1), narrow(x, d, 0, length - 1))
    return x


def meshgrid(*tensors: Any, indexing: str | None = None) -> tuple:
    """Coordinate grids of 0-d or 1-D tensors; indexing 'ij' (PyTorch's default, with a
    warning when not given) or 'xy'. Each grid is a view, its tensor reshaped then expanded
    (PyTorch's ViewBackward0 then ExpandBackward0)."""
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
    sizes = [int(np.prod(t._value.shape)) for t in tensors]
    axes = list(range(len(tensors)))
    if indexing == "xy" and len(tensors) >= 2:  # the first two grid axes swap
        axes[0], axes[1] = 1, 0
    full = [0] * len(tensors)
    for i, a in enumerate(axes):
        full[a] = sizes[i]
    grids = []
    for t, a in zip(tensors, axes):
        shape = tuple(-1 if k == a else 1 for k in range(len(tensors)))
        grids.append(expand(reshape(t, shape), tuple(full)))
    return tuple(grids)


def cartesian_prod(*tensors: Any) -> Tensor:
    """The rows of every combination of one element from each 1-D tensor (itertools.product
    order); one tensor comes back as itself."""
    tensors = tuple(_tensor(t) for t in tensors)
    for t in tensors:
        if t._value.ndim != 1:
            raise FgradRuntimeError(f"Expect a 1D vector, but got shape {list(t._value.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([reshape(g, -1) for g in grids], 1)


def _block_diag_values(*blocks):
    return fsl.block_diag(*[fnp.reshape(b, (1, -1)) if len(shape_of(b)) < 2 else b for b in blocks], policy=P)


def block_diag(*tensors: Any) -> Tensor:
    """The tensors (0-d, 1-D as one row, or 2-D) as the blocks of a block-diagonal matrix."""
    blocks = []
    for k, t in enumerate(tensors):
        t = _tensor(t)
        if t._value.ndim > 2:
            raise FgradRuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {k} has "
                               f"{t._value.ndim} dimensions")
        blocks.append(t)
    if not blocks:
        return _make(np.zeros((1, 0), P.default_float))
    return call("BlockDiagBackward0", _block_diag_values, tuple(blocks))


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
    if use_mm:  # PyTorch's _euclidean_dist node, then a view to the result's shape
        out = call("EuclideanDistBackward0", _euclidean_dist, (x1, x2))
        return view(out, tuple(out._value.shape))
    return call("CdistBackward0", lambda a, b: _cdist_values(a, b, float(p)), (x1, x2))


def _cdist_values(a, b, p: float):
    """The p-norm distances of the rows of a and b, with PyTorch's derivatives: fgrad.numpy's
    vector_norm's (JAX's) for p >= 1; below 1, where |d|^(p-1) is infinite at a zero
    difference d, PyTorch's cdist gives such a component (and a zero distance) derivative 0,
    as here by selecting 1 for |d| before the power; p = 0 counts the nonzero differences,
    with derivative 0 (a node all the same, as PyTorch's)."""
    d = fnp.subtract(fnp.expand_dims(a, -2), fnp.expand_dims(b, -3), policy=P)
    if p >= 1:
        return fnp.linalg.vector_norm(d, axis=-1, ord=p)
    nonzero = fnp.not_equal(d, 0)
    zeros = fnp.multiply(fnp.where(nonzero, np.zeros((), d.dtype), d), np.zeros((), d.dtype))  # (+-0, no derivative)
    if p == 0:
        return fnp.add(fnp.astype(fnp.sum(nonzero, axis=-1), d.dtype), fnp.sum(zeros, axis=-1))
    powered = fnp.power(fnp.abs(fnp.where(nonzero, d, np.ones((), d.dtype))), np.asarray(p, d.dtype))
    total = fnp.sum(fnp.where(nonzero, powered, zeros), axis=-1)
    positive = fnp.greater(total, 0)
    root = fnp.power(fnp.where(positive, total, np.ones((), d.dtype)), np.asarray(1 / p, d.dtype))
    return fnp.where(positive, root, fnp.sum(zeros, axis=-1))


def _euclidean_dist(a, b):
    """sqrt(|a|^2 - 2 a.b + |b|^2), the squared distances clamped at 1e-30 (PyTorch's)."""
    n1 = fnp.sum(fnp.multiply(a, a), axis=-1, keepdims=True, policy=P)
    n2 = fnp.sum(fnp.multiply(b, b), axis=-1, keepdims=True, policy=P)
    sq = fnp.add(fnp.subtract(n1, fnp.multiply(fnp.matmul(a, fnp.swapaxes(b, -1, -2), policy=P), 2.0, policy=P),
                              policy=P), fnp.swapaxes(n2, -1, -2), policy=P)
    return fnp.sqrt(fnp.where(fnp.less(sq, 1e-30), 1e-30, sq, policy=P))


def dist(input: Tensor, other: Tensor, p: float = 2) -> Tensor:
    """The p-norm of input - other (broadcast), as one number."""
    return call("DistBackward0", lambda a, b: fnp.linalg.vector_norm(fnp.subtract(a, b, policy=P), ord=float(p)),
                (input, other))


# --- order statistics ---------------------------------------------------------------------------------

def _median_index(v, d: int, ignore_nan: bool):
    """Where PyTorch's median of the value `v` along `d` lies (keeping `d`): the lower of the
    two middle elements; the first NaN unless `ignore_nan` skips NaNs."""
    order = fnp.argsort(v, d, policy=P)  # NaNs last
    isnan = fnp.isnan(v) if v.dtype.kind in "fc" else None
    if ignore_nan and isnan is not None:
        count = fnp.sum(fnp.logical_not(isnan), axis=d, keepdims=True, policy=P)
        k = fnp.maximum(fnp.floor_divide(fnp.subtract(count, 1), 2), 0)
    else:
        k = np.full(tuple(1 if i == d else s for i, s in enumerate(v.shape)), (v.shape[d] - 1) // 2, np.int64)
    idx = fnp.take_along_axis(order, k, d)
    if not ignore_nan and isnan is not None:  # PyTorch: any NaN makes the median NaN, at the first NaN
        first_nan = fnp.argmax(isnan, axis=d, keepdims=True, policy=P)
        idx = fnp.where(fnp.any(isnan, axis=d, keepdims=True), first_nan, idx)
    return idx


def _evenly_shared(flat, chosen):
    """`chosen` (an element of the 1-D `flat`) in value, with PyTorch's derivative of a
    reduction to one of its elements (median and nanmedian of all elements): shared evenly by
    every element equal to it (every NaN when it is NaN), not sent to the one picked. The
    shares ride on stop_gradient(e) - e of the tied elements (+0 where finite, so the value
    keeps every bit); an infinite result is the mean of the tied elements, each of them it."""
    r = lax.stop_gradient(chosen)
    tied = fnp.where(fnp.isnan(r), fnp.isnan(flat), fnp.equal(flat, r))
    count = fnp.astype(fnp.sum(tied), flat.dtype)
    # (selecting before subtracting: no inf - inf; a NaN carrier only where the result is NaN)
    carried = fnp.where(fnp.logical_and(tied, fnp.logical_not(fnp.isinf(flat))), flat, np.zeros((), flat.dtype))
    shared = fnp.subtract(r, fnp.true_divide(fnp.sum(fnp.subtract(lax.stop_gradient(carried), carried)), count))
    mean = fnp.true_divide(fnp.sum(fnp.where(tied, flat, np.zeros((), flat.dtype))), count)
    return fnp.where(fnp.isinf(r), mean, shared)


def _lower_median(input, dim, keepdim: bool, ignore_nan: bool, rtype):
    """PyTorch's median: the lower of the two middle elements (no averaging), with its index;
    NaN (the first one) unless `ignore_nan` skips NaNs. The values are one node over the
    input (Median/NanmedianBackward0 of every element, ...Backward1 along `dim`)."""
    v = input._value
    stem = "NanmedianBackward" if ignore_nan else "MedianBackward"
    if dim is None:
        if not v.size:
            return _make(np.full((), np.nan, v.dtype))
        idx = _median_index(fnp.ravel(v), 0, ignore_nan)
        return call(stem + "0", lambda x: _evenly_shared(fnp.ravel(x), fnp.take_along_axis(fnp.ravel(x), idx, 0)[0]),
                    (input,))
    nd = v.ndim
    d = _dim(dim, nd)
    if not nd:
        return rtype(_own(call(stem + "1", _identity, (input,))), _make(np.zeros((), np.int64)))
    if not v.shape[d]:
        raise FgradIndexError(f"median(): Expected reduction dim {d} to have non-zero size.")
    idx = _median_index(v, d, ignore_nan)

    def values(x):
        out = fnp.take_along_axis(x, idx, d)
        return out if keepdim else fnp.squeeze(out, d)
    return rtype(call(stem + "1", values, (input,)), _make(idx if keepdim else fnp.squeeze(idx, d)))


def median(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor | tuple:
    """The lower median (of all elements, or (values, indices) along `dim`); NaN if any
    element is NaN. The gradient goes to the returned element."""
    return _lower_median(input, dim, keepdim, False, _median_t)


def nanmedian(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor | tuple:
    """median ignoring NaNs (NaN only for an all-NaN slice)."""
    return _lower_median(input, dim, keepdim, True, _nanmedian_t)


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(name, ignore_nan, input, q, dim, keepdim, interpolation):
    """PyTorch's quantile, composed as PyTorch composes it (ATen's quantile_impl): the input
    sorted along the reduced dim (flattened for dim=None), the ranks q * (n - 1) of the sorted
    values computed without a graph (NaN: the last rank, or for nanquantile ranks among the
    non-NaN values), the values at the ranks gathered and, for 'linear' and 'midpoint',
    interpolated by a lerp; the result's node is PyTorch's final squeeze (SqueezeBackward4)."""
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
    if interpolation not in _INTERPOLATIONS:
        raise FgradRuntimeError(f"{name}() interpolation must be one of linear, lower, higher, midpoint or nearest, "
                                f"but got {interpolation}")
    v = input._value
    if not v.size:
        raise FgradRuntimeError(f"{name}() input tensor must be non-empty")
    nd, shape, dt = v.ndim, tuple(v.shape), v.dtype
    if dim is None:
        rest = (1,) * nd if keepdim else ()
        to_sort = reshape(input, -1)
    else:
        d = _dim(dim, nd)
        rest = tuple(1 if k == d else s for k, s in enumerate(shape)) if keepdim else shape[:d] + shape[d + 1:]
        to_sort = input if d == nd - 1 else transpose(input.unsqueeze(-1), d, -1)
    ordered = sort(to_sort, -1).values
    n = ordered._value.shape[-1]
    ordered = reshape(ordered, rest + (n,))
    # the ranks: values only, no graph (PyTorch computes them from the sorted values too)
    sv = ordered._value
    q1 = fnp.reshape(fnp.asarray(qv, dtype=dt), (-1,))
    if ignore_nan:
        count = fnp.sum(fnp.logical_not(fnp.isnan(sv)), axis=-1, keepdims=True, policy=P)
        ranks = fnp.multiply(q1, fnp.subtract(count, 1), policy=P)
        ranks = fnp.where(fnp.less(ranks, 0), fnp.zeros((), dt), ranks)  # all NaN: rank 0, a NaN
    else:
        nan_slice = fnp.any(fnp.isnan(sv), axis=-1, keepdims=True)
        ranks = fnp.where(nan_slice, np.asarray(n - 1, dt), fnp.multiply(q1, np.asarray(n - 1, dt)))
    if interpolation == "lower":
        ranks = fnp.floor(ranks)
    elif interpolation == "higher":
        ranks = fnp.ceil(ranks)
    elif interpolation == "nearest":
        ranks = fnp.round(ranks)
    below = cast(ranks, np.dtype(np.int64))
    out = gather(ordered, -1, _make(below))
    if interpolation in ("linear", "midpoint"):
        weights = fnp.full(shape_of(ranks), 0.5, dt) if interpolation == "midpoint" else \
            fnp.subtract(ranks, cast(below, dt))
        above = gather(ordered, -1, _make(cast(fnp.ceil(ranks), np.dtype(np.int64))))
        out = lerp(out, above, _make(cast(weights, dt)))
    if isinstance(q, Tensor) and q._value.ndim:  # the quantiles' dim moves to the front
        out = call("UnsqueezeBackward1", lambda x: fnp.expand_dims(x, 0), (out,))
        out = call("TransposeBackward1", lambda x: fnp.swapaxes(x, 0, -1), (out,))
    return _own(call("SqueezeBackward4", lambda x: fnp.squeeze(x, -1), (out,)))


def quantile(input: Tensor, q: Tensor | float, dim: int | None = None, keepdim: bool = False, *,
             interpolation: str = "linear") -> Tensor:
    """The q-th quantiles (q a number or 1-D tensor in [0, 1]) over `dim` (all elements when
    None), interpolating by 'linear', 'lower', 'higher', 'midpoint' or 'nearest'; NaN where
    a slice holds NaN."""
    return _quantile("quantile", False, input, q, dim, keepdim, interpolation)


def nanquantile(input: Tensor, q: Tensor | float, dim: int | None = None, keepdim: bool = False, *,
                interpolation: str = "linear") -> Tensor:
    """quantile ignoring NaNs."""
    return _quantile("nanquantile", True, input, q, dim, keepdim, interpolation)


def _with_mean(spread: Callable, name: str) -> Callable:
    def op(input: Tensor, dim: Any = None, unbiased: Any = True, keepdim: bool = False, *,
           correction: Any = None) -> tuple:
        args = _var_args(dim, unbiased, keepdim, correction)

        def values(x):
            return spread(x, **args), fnp.mean(x, axis=args["axis"], keepdims=keepdim, policy=P)
        return tuple(call(grad_fn, values, (input,)))
    grad_fn = "".join(w.capitalize() for w in name.split("_")) + "Backward0"  # StdMeanBackward0
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
    return _own(call("Rot90Backward0", lambda x: fnp.rot90(x, k, dims), (input,)))  # (NumPy's rot90 is a view)


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
    return call("LinalgCrossBackward0", lambda a, b: fnp.cross(cast(a, dt), cast(b, dt), axis=d), (input, other))


def clamp_min(input: Tensor, min: Any) -> Tensor:
    """max(input, min), the gradient passing at the bound (PyTorch's clamp): ClampMinBackward0
    for a number bound, ClampMinBackward1 (input, min) for a tensor."""
    lo = _operand(min)
    return call("ClampMinBackward1" if isinstance(lo, Tensor) else "ClampMinBackward0",
                lambda x, m: _clamp_values(x, m, None), (input, lo))


def clamp_max(input: Tensor, max: Any) -> Tensor:
    """min(input, max), the gradient passing at the bound (PyTorch's clamp): ClampMaxBackward0
    for a number bound, ClampMaxBackward1 (input, max) for a tensor."""
    hi = _operand(max)
    return call("ClampMaxBackward1" if isinstance(hi, Tensor) else "ClampMaxBackward0",
                lambda x, m: _clamp_values(x, None, m), (input, hi))


def frac(input: Tensor) -> Tensor:
    """input - trunc(input): the fractional part, with input's sign."""
    if input._value.dtype.kind not in "fcV":  # (V: ml_dtypes' bfloat16 & co.)
        raise FgradNotImplementedError(f"\"frac_cpu\" not implemented for '{D.of_np(input._value.dtype)._torch[:-6]}'")
    return call("FracBackward0", lambda x: fnp.subtract(x, _trunc_values(x), policy=P), (input,))


def logit(input: Tensor, eps: float | None = None) -> Tensor:
    """log(p / (1 - p)), with p clamped to [eps, 1 - eps] first when eps is given (the
    gradient is then 0 outside those bounds)."""
    def values(v):
        x = _float(v)
        return fss.logit(x if eps is None else _clamp_values(x, eps, 1.0 - eps))
    return call("LogitBackward0", values, (input,))


@custom_vjp
def _xlogy(x, y):
    """x * log(y) on values of one float dtype and shape, 0 where x is 0 unless y is NaN (the
    log of a guarded 1 there keeps every value finite)."""
    zero = fnp.logical_and(fnp.equal(x, 0), fnp.logical_not(fnp.isnan(y)))
    return fnp.where(zero, fnp.zeros_like(x), fnp.multiply(x, fnp.log(fnp.where(zero, fnp.ones_like(y), y))))


def _xlogy_fwd(x, y):
    return _xlogy(x, y), (x, y)


def _xlogy_bwd(res, ct):
    # PyTorch's rule (derivatives.yaml): d/dx xlogy(ct, y), masked to 0 where x == 0 and y <= 0;
    # d/dy ct * x / y (NaN at x = y = 0, 0/0, as PyTorch's). Written with fgrad ops, so it
    # differentiates again.
    x, y = res
    masked = fnp.logical_and(fnp.equal(x, 0), fnp.less_equal(y, 0))
    return (fnp.where(masked, fnp.zeros_like(x), _xlogy(ct, y)),
            fnp.true_divide(fnp.multiply(ct, x), y))


_xlogy.defvjp(_xlogy_fwd, _xlogy_bwd)


def xlogy(input: Tensor, other: Tensor) -> Tensor:
    """input * log(other), 0 where input is 0 (unless other is NaN), with PyTorch's derivatives:
    d/dinput is log(other), 0 where input is 0 and other <= 0; d/dother is input / other (NaN
    at 0/0, as PyTorch's)."""
    a, b = _operand(input), _operand(other)
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        raise FgradTypeError("xlogy(): at least one of input and other must be a Tensor")
    dt = P.float_dtype(P.result_dtype(a, b))

    def values(x, y):
        return _xlogy(*fnp.broadcast_arrays(cast(x, dt), cast(y, dt)))
    # PyTorch's overloads: XlogyBackward0 (two tensors), 1 (a number input), 2 (a number other)
    name = "XlogyBackward0" if isinstance(a, Tensor) and isinstance(b, Tensor) else \
        "XlogyBackward2" if isinstance(a, Tensor) else "XlogyBackward1"
    return call(name, values, (a, b))


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
    return call("NanToNumBackward0", lambda x: fnp.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf),
                (_tensor(input),))
