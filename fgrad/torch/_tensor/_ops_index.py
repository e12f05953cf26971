"""Scatter, index updates, counting and searching with PyTorch's names and semantics.

PyTorch's scatter/index_* functions are fgrad.numpy's functional index updates (at_set,
at_add, at_mul, at_min, at_max) at an index built from PyTorch's arguments: scatter along
`dim` is an update at (arange, ..., index, ..., arange); index_add along `dim` one at
(:, ..., index). unique, bincount, searchsorted and histc are fgrad.numpy's. What stays
here is PyTorch's own: argument checks with its exception types, scatter_reduce's mean and
include_self, unique_consecutive (NumPy has none) and multinomial sampling. No derivative
rule lives here: each torch function is one boundary call (`_boundary.call`) whose function
of plain values is written with those updates, so its node is PyTorch's (ScatterBackward0,
IndexAddBackward0...) and its gradient comes from the gathers and scatter-adds underneath.
"""
from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from ... import lax
from ... import numpy as fnp
from ...core.errors import (
    FgradIndexError,
    FgradNotImplementedError,
    FgradRuntimeError,
    FgradTypeError,
)
from ...extend.numpy import cast
from ...extend.numpy import concrete_array as _concrete_array
from ...extend import lax as xlax
from . import _dtypes as D
from . import creation as _creation
from ._boundary import call, compute_dtype
from ._policy import TORCH as P
from ._ops import _operand, _tensor
from ._ops_shape import (
    _bool_mask,
    _copy_value,
    _fill_value,
    _index,
    _raw_index,
    clone,
    expand,
    flatten,
    index_select,
    reshape,
    unsqueeze,
)
from .tensor import Tensor, _dim, _make

_I64 = np.dtype(np.int64)


def concrete_array(x, what: str):
    """The values behind `x` (a Tensor's own, or an array's) as a host NumPy array; under
    jit/vmap a ConcretizationError saying that `what` needs them."""
    return _concrete_array(x._value if isinstance(x, Tensor) else x, what)



def _shape(t) -> tuple:
    return tuple(t._value.shape)


def _check_bounds(name: str, idx, size: int, d: int, ndim: int = 1) -> None:
    """PyTorch's bounds for concrete indices (traced ones cannot be checked here): [0, size)
    for scatter (a RuntimeError), index_add (an IndexError for a 1-D self, else a
    RuntimeError, as PyTorch's two kernels) and index_copy (an IndexError); index_fill also
    takes negative indices from -size."""
    try:
        v = concrete_array(idx, name)
    except TypeError:  # a traced index (under jit/vmap): NumPy's indexing checks it when it runs
        return
    if not v.size:
        return
    lo = -size if name == "index_fill" else 0
    bad = v.min() if v.min() < lo else v.max() if v.max() >= size else None
    if bad is None:
        return
    if name == "index_add" and ndim <= 1:
        raise FgradIndexError(f"index out of range in self (index {bad} along dimension {d} of size {size})")
    if name == "index_add":
        raise FgradRuntimeError(f"index {bad} is out of bounds for dimension {d} with size {size}")
    if name.startswith("index"):
        raise FgradIndexError(f"{name}_(): index {bad} is out of bounds for dimension {d} with size {size}")
    raise FgradRuntimeError(f"index {bad} is out of bounds for dimension {d} with size {size}")


# --- scatter ------------------------------------------------------------------------------------------

def _scatter_plan(name: str, input, dim, index, src):
    """(numpy index tuple, the function of src's value (or the number) giving the values it
    writes, the index) for scatter along `dim`: position `p` of `index` writes src[p] to
    input[p with p[dim] replaced by index[p]]."""
    idx = _index(index, name)
    shape = _shape(input)
    nd = len(shape)
    d = _dim(dim, nd)
    if idx.ndim != max(nd, 1) and not (nd == 0 and idx.ndim <= 1):
        raise FgradRuntimeError(f"Index tensor must have the same number of dimensions as self tensor (index of "
                           f"shape {tuple(idx.shape)}, self of shape {shape})")
    value = not isinstance(src, Tensor)
    if not value:
        if src._value.ndim != idx.ndim:
            raise FgradRuntimeError(f"Index tensor must have the same number of dimensions as src tensor (index of "
                               f"shape {tuple(idx.shape)}, src of shape {_shape(src)})")
        if src._value.dtype != input._value.dtype:
            raise FgradRuntimeError(f"{name}(): Expected self.dtype to be equal to src.dtype (self is {input.dtype}, "
                               f"src is {src.dtype}); convert one with .to(...)")
    ishape = tuple(idx.shape)
    sshape = ishape if value else _shape(src)
    full = shape if nd else (1,)
    if builtins.any(n > s for n, s in zip(ishape, sshape)) or builtins.any(
            n > s for k, (n, s) in enumerate(zip(ishape, full)) if k != d):
        raise FgradRuntimeError(f"Expected index {list(ishape)} to be no larger than self {list(shape)} apart from "
                           f"dimension {d} and to be no larger size than src {list(sshape)}")
    _check_bounds(name, idx, full[d], d)
    grid = list(np.indices(ishape, sparse=True)) if ishape else []
    if grid:
        grid[d] = idx
    pos = tuple(grid) if nd else ()
    dt = compute_dtype(input._value.dtype)  # (bfloat16: float32 until the boundary rounds)

    def values(s):
        if value:
            v = cast(s, dt)
            v = fnp.broadcast_to(v, ishape) if ishape else v
        else:
            v = s if sshape == ishape else fnp.getitem(s, tuple(slice(0, n) for n in ishape))
        # a 0-d self: index and src hold at most one element, written to self itself
        return v if nd else fnp.reshape(v, ())
    return pos, values, idx


def _empty(idx) -> bool:
    """Whether an index selects nothing (an update at it is a copy of the input)."""
    return bool(idx.ndim) and not np.prod(idx.shape, dtype=np.int64)


def scatter(input: Tensor, dim: int, index: Tensor, src: Tensor | float | None = None, *, value: float | None = None,
            reduce: str | None = None) -> Tensor:
    """`input` with src (or the number `value`) written at `index` along `dim`; reduce='add'
    or 'multiply' combines instead of overwriting. Where an index repeats a position, the
    last write wins (PyTorch leaves that order unspecified)."""
    src = value if src is None else src
    if src is None:
        raise FgradTypeError("scatter() missing 1 required argument: 'src' (or value=)")
    pos, values, idx = _scatter_plan("scatter", input, dim, index, src)
    fns = {None: fnp.at_set, "add": fnp.at_add, "multiply": fnp.at_mul}
    if reduce not in fns:
        raise FgradRuntimeError(f"reduce argument must be either add or multiply, got {reduce}")
    update, empty = fns[reduce], _empty(idx)

    def fn(v, s):
        return _copy_value(v) if empty else update(v, pos, values(s))
    # PyTorch's grad_fn: ScatterBackward0 over (self, src), ScatterBackward1 for a number; with
    # reduce= its node is named NotImplemented (its backward raises; fgrad's differentiates)
    name = "NotImplemented" if reduce is not None else "ScatterBackward0" if isinstance(src, Tensor) \
        else "ScatterBackward1"
    return call(name, fn, (input, _operand(src)))


def scatter_add(input: Tensor, dim: Any, index: Tensor | Any, src: Tensor | float | None) -> Tensor:
    """`input` with src added at `index` along `dim` (repeated positions accumulate)."""
    if not isinstance(src, Tensor):
        raise FgradTypeError(f"scatter_add(): argument 'src' must be Tensor, not {type(src).__name__}")
    pos, values, idx = _scatter_plan("scatter_add", input, dim, index, src)
    empty = _empty(idx)

    def fn(v, s):
        return _copy_value(v) if empty else fnp.at_add(v, pos, values(s))
    return call("ScatterAddBackward0", fn, (input, src))


_REDUCE_UPDATES = {"sum": fnp.at_add, "prod": fnp.at_mul, "amax": fnp.at_max, "amin": fnp.at_min}


def _identity(reduce: str, dtype):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    lowest = reduce == "amax"
    if dtype.kind == "f":
        return -np.inf if lowest else np.inf
    if dtype.kind == "b":
        return not lowest
    info = np.iinfo(dtype)
    return info.min if lowest else info.max


def _shares_with_self(out, v, pos, vals):
    """amax/amin without include_self, with PyTorch's derivative: fgrad.numpy's at_max/at_min
    split a position's derivative evenly between the src elements tied at its result, but
    PyTorch counts `input`'s own element among the ties when it equals the result, though it
    takes no part and gets no derivative (so the shares sum to less than 1). The value stays
    `out`'s: the scaled derivative rides on stop_gradient(out) - out, +0 where out is finite."""
    r = lax.stop_gradient(out)
    dt = r.dtype
    n_src = fnp.at_add(fnp.zeros_like(r), pos, fnp.astype(fnp.equal(vals, fnp.getitem(r, pos)), dt))
    self_tied = fnp.astype(fnp.equal(v, r), dt)
    share = fnp.where(fnp.greater(n_src, 0), fnp.true_divide(n_src, fnp.add(n_src, self_tied)), np.ones((), dt))
    scaled = fnp.subtract(r, fnp.multiply(share, fnp.subtract(r, out)))
    return fnp.where(fnp.isfinite(r), scaled, out)


def scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                   include_self: bool = True) -> Tensor:
    """`input` with the src values at `index` along `dim` reduced into it by 'sum', 'prod',
    'mean', 'amax' or 'amin'; without include_self, `input`'s own values at the scattered
    positions take no part. Integer means divide with floor, as PyTorch."""
    reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)  # PyTorch accepts both spellings
    if reduce not in ("sum", "prod", "mean", "amax", "amin"):
        raise FgradRuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    pos, values, idx = _scatter_plan("scatter_reduce", input, dim, index, src)
    empty = _empty(idx)
    dt = compute_dtype(input._value.dtype)  # (bfloat16: float32 until the boundary rounds)
    shape = _shape(input)

    def fn(v, s):
        if empty:
            return _copy_value(v)
        vals = values(s)
        base = v if include_self else fnp.at_set(v, pos, np.asarray(_identity(reduce, dt), dt))
        if reduce != "mean":
            out = _REDUCE_UPDATES[reduce](base, pos, vals)
            if not include_self and reduce in ("amax", "amin") and dt.kind == "f":
                out = _shares_with_self(out, v, pos, vals)
            return out
        total = fnp.at_add(base, pos, vals)
        count = fnp.at_add(np.full(shape or (), 1 if include_self else 0, _I64), pos, np.ones(idx.shape, _I64))
        if not include_self:
            count = fnp.maximum(count, np.ones((), _I64))  # untouched positions keep their own value
        count = cast(count, dt)
        return fnp.floor_divide(total, count, policy=P) if dt.kind in "biu" else fnp.true_divide(total, count,
                                                                                                policy=P)
    return call("ScatterReduceBackward0", fn, (input, src))


# --- index_* ------------------------------------------------------------------------------------------

def _along(name: str, input, dim, index, source=None):
    """(the index tuple of positions `index` along `dim`, the dim) for the index_* functions."""
    idx = _index(index, name)
    if idx.ndim > 1:
        raise FgradIndexError(f"{name}(): Index is supposed to be a vector, got shape {tuple(idx.shape)}")
    shape = _shape(input)
    d = _dim(dim, len(shape))
    _check_bounds(name, idx, shape[d] if shape else 1, d, len(shape))
    idx = idx.reshape(-1) if isinstance(idx, np.ndarray) else fnp.ravel(idx)
    if source is not None:
        want = shape[:d] + (int(idx.shape[0]),) + shape[d + 1:] if shape else ()
        if _shape(source) != want and not (not shape and source._value.size == 1):
            if shape and len(_shape(source)) == len(shape) and _shape(source)[d] != idx.shape[0]:
                raise FgradRuntimeError(f"{name}(): Number of indices ({idx.shape[0]}) should be equal to "
                                   f"source.size(dim) ({_shape(source)[d]})")
            raise FgradRuntimeError(f"{name}(): source of shape {_shape(source)} does not match self of shape "
                               f"{shape} with {idx.shape[0]} indices along dim {d} (it needs shape {want})")
        if source._value.dtype != input._value.dtype:
            raise FgradRuntimeError(f"{name}(): self ({input.dtype}) and source ({source.dtype}) must have the same "
                               "scalar type")
    return ((slice(None),) * d + (idx,)) if shape else (), d


def index_add(input: Tensor, dim: Any, index: Tensor | Any, source: Tensor, *, alpha: Any = 1) -> Tensor:
    """`input` with alpha * source added at `index` along `dim` (repeats accumulate)."""
    pos, _ = _along("index_add", input, dim, index, source)

    def fn(v, s):
        s = s if alpha == 1 else fnp.multiply(s, alpha, policy=P)
        return fnp.at_add(v, pos, fnp.reshape(s, ()) if not pos else s)
    return call("IndexAddBackward0", fn, (input, source))


def index_copy(input: Tensor, dim: Any, index: Tensor | Any, source: Tensor) -> Tensor:
    """`input` with the slices of `source` written at `index` along `dim`."""
    pos, _ = _along("index_copy", input, dim, index, source)
    return call("IndexCopyBackward0", lambda v, s: fnp.at_set(v, pos, fnp.reshape(s, ()) if not pos else s),
                (input, source))


def index_fill(input: Tensor, dim: Any, index: Tensor | Any, value: Any) -> Tensor:
    """`input` with the slices at `index` along `dim` set to the number (or 0-d tensor) `value`."""
    value = _fill_value(value, input._value.dtype, "index_fill")
    pos, _ = _along("index_fill", input, dim, index)
    dt = compute_dtype(input._value.dtype)  # (bfloat16: float32 until the boundary rounds)
    name = "IndexFillBackward1" if isinstance(value, Tensor) else "IndexFillBackward0"
    return call(name, lambda v, fill: fnp.at_set(v, pos, cast(fill, dt)), (input, value))


def index_put(input: Tensor, indices: Any, values: Any, accumulate: bool = False) -> Tensor:
    """`input` with `values` written (or with accumulate, added) at input[indices], where
    `indices` is a tuple of index tensors (integers or booleans)."""
    if not isinstance(indices, (tuple, list)):
        raise FgradTypeError(f"index_put(): argument 'indices' must be tuple of Tensors, not {type(indices).__name__}")
    values = _operand(values)
    if isinstance(values, Tensor) and values._value.dtype != input._value.dtype:
        raise FgradRuntimeError(f"Index put requires the source and destination dtypes match, got {input.dtype} for "
                           f"the destination and {values.dtype} for the source.")
    idx = _raw_index(tuple(indices))
    update = fnp.at_add if accumulate else fnp.at_set
    dt = compute_dtype(input._value.dtype)  # (bfloat16: float32 until the boundary rounds)
    return call("IndexPutBackward0", lambda v, vals: update(v, idx, cast(vals, dt)), (input, values))


def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """`input` with the positions where `mask` (broadcast to input's shape) is True filled,
    in row-major order, by the leading elements of `source`."""
    m = _bool_mask(mask, "masked_scatter")
    if source._value.dtype != input._value.dtype:
        raise FgradRuntimeError(f"masked_scatter: expected self and source to have same dtypes but got {input.dtype} "
                           f"and {source.dtype}")
    mv = np.broadcast_to(concrete_array(m, "masked_scatter"), _shape(input))
    count = int(mv.sum())
    if count > source._value.size:
        raise FgradRuntimeError(f"masked_scatter: Number of elements of source < number of ones in mask ("
                           f"{source._value.size} < {count})")
    # fgrad.numpy's place: the k-th masked position takes source's k-th element (the count
    # check above means place never wraps around source)
    return call("MaskedScatterBackward0", lambda v, s: fnp.place(v, mv, s), (input, source))


def repeat_interleave(input: Tensor, repeats: Tensor | int | None = None, dim: int | None = None, *,
                      output_size: int | None = None) -> Tensor:
    """Each element (slice along `dim`; of the flattened input when dim is None) repeated
    `repeats` times (an int, or one count per element). repeat_interleave(counts) alone
    repeats 0, 1, ... by the counts. PyTorch's graph: an int count is unsqueeze, expand,
    clone and view (ViewBackward0 over CloneBackward0), tensor counts an index_select."""
    if repeats is None:  # torch.repeat_interleave(repeats)
        counts = input
        return repeat_interleave(_creation.arange(counts._value.shape[0]), counts)
    reps = repeats
    if isinstance(repeats, Tensor):
        reps = concrete_array(repeats, "repeat_interleave")
        if reps.ndim > 1:
            raise FgradRuntimeError(f"repeat_interleave: repeats must be 0-dim or 1-dim tensor, got shape {reps.shape}")
    if np.any(np.asarray(reps) < 0):
        raise FgradRuntimeError("repeat_interleave: repeats can not be negative")
    if dim is None:
        x, d = flatten(input), 0
    else:
        x, d = input, _dim(dim, input._value.ndim)
    shape = tuple(x._value.shape)
    if isinstance(repeats, Tensor):  # one count per slice (a single count stands for all)
        n = shape[d] if shape else 1
        counts = np.broadcast_to(reps.reshape(-1), (n,)) if reps.size == 1 else reps.reshape(-1)
        if counts.shape[0] != n:
            raise FgradRuntimeError(f"repeats must have the same size as input along dim, but got repeats.size(0) "
                                    f"= {counts.shape[0]} and input.size({d}) = {n}")
        return index_select(x, d, np.repeat(np.arange(n), counts))
    r = int(reps)
    wide = expand(unsqueeze(x, d + 1), shape[:d + 1] + (r,) + shape[d + 1:])
    return reshape(clone(wide), shape[:d] + (shape[d] * r,) + shape[d + 1:])


# --- unique, bincount, searching ----------------------------------------------------------------------

def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,
           dim: int | None = None) -> Tensor | tuple:
    """The sorted unique elements (slices along `dim`), with the inverse indices (of input's
    shape, or along `dim`) and the counts when asked. Always sorted, as PyTorch's CPU
    implementation."""
    axis = None if dim is None else _dim(dim, input._value.ndim)

    def fn(v):
        out = fnp.unique(v, return_inverse=return_inverse, return_counts=return_counts, axis=axis)
        return tuple(np.asarray(o) if isinstance(o, (list, int)) else o for o in out) \
            if isinstance(out, tuple) else out
    return call("Unique2Backward0" if dim is None else "UniqueDimBackward0", fn, (input,))


def unique_consecutive(input: Tensor, return_inverse: bool = False, return_counts: bool = False,
                       dim: int | None = None) -> Tensor | tuple:
    """The first element of each run of equal consecutive elements (slices along `dim`),
    with the inverse indices and run lengths when asked."""
    v = concrete_array(input, "unique_consecutive")
    if dim is None:
        flat = v.reshape(-1)
        change = np.concatenate([[True], flat[1:] != flat[:-1]]) if flat.size else np.zeros(0, bool)
        starts = np.nonzero(change)[0]
        values = call("UniqueConsecutiveBackward0", lambda x: fnp.take(fnp.ravel(x), starts), (input,))
        inverse = (np.cumsum(change) - 1).reshape(v.shape)
        n = flat.size
    else:
        d = _dim(dim, v.ndim)
        rows = np.moveaxis(v, d, 0).reshape(v.shape[d], -1)
        change = np.concatenate([[True], (rows[1:] != rows[:-1]).any(axis=1)]) if len(rows) else np.zeros(0, bool)
        starts = np.nonzero(change)[0]
        values = call("UniqueConsecutiveBackward0", lambda x: fnp.take(x, starts, axis=d), (input,))
        inverse = np.cumsum(change) - 1
        n = len(rows)
    extra = []
    if return_inverse:
        extra.append(_make(inverse.astype(np.int64)))
    if return_counts:
        extra.append(_make(np.diff(np.append(starts, n)).astype(np.int64)))
    return (values, *extra) if extra else values


def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """The count of each value 0..max of the non-negative integer vector `input` (sums of
    `weights` instead: floating weights keep their dtype, others give float64)."""
    v = input._value
    if v.dtype.kind not in "iub":
        raise FgradNotImplementedError(f"\"bincount_cpu\" not implemented for '{D.of_np(v.dtype)._torch[:-6]}'")
    if v.ndim != 1 or (v.size and concrete_array(input, "bincount").min() < 0):
        raise FgradRuntimeError(f"bincount only supports 1-d non-negative integral inputs (got shape {tuple(v.shape)}, "
                           f"dtype {input.dtype})")
    if minlength < 0:
        raise FgradRuntimeError(f"minlength should be >= 0, got {minlength}")
    if weights is None:
        return call("BincountBackward0", lambda x: fnp.bincount(x, minlength=minlength), (input,))
    if _shape(weights) != tuple(v.shape):
        raise FgradRuntimeError(f"weights should be 1-d and have the same length as input (weights of shape "
                           f"{_shape(weights)}, input of shape {tuple(v.shape)})")
    wdt = weights._value.dtype
    out_dt = wdt if wdt.kind == "f" else np.dtype(np.float64)
    # PyTorch's grad_fn for weights that require grad is NotImplemented (fgrad's differentiates)
    return call("NotImplemented", lambda x, w: cast(fnp.bincount(x, w, minlength=minlength), out_dt),
                (input, weights))


def searchsorted(sorted_sequence: Tensor, input: Tensor | float, *, out_int32: bool = False, right: bool = False,
                 side: str | None = None, sorter: Tensor | None = None) -> Tensor:
    """Indices where the elements of `input` would be inserted into the innermost dimension
    of `sorted_sequence` to keep it sorted (side 'left', or 'right' / right=True for the
    last such position). A sorted_sequence of shape (*B, n) takes `input` of shape (*B, m)."""
    if side is not None and side not in ("left", "right"):
        raise FgradRuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
    if side is not None and right and side == "left":
        raise FgradRuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of left "
                           "while right was True")
    side = side or ("right" if right else "left")
    scalar = not isinstance(input, Tensor)
    values = _tensor(input) if not scalar else _creation.tensor(input, dtype=sorted_sequence.dtype)
    seq = sorted_sequence
    sv, vv = seq._value, values._value
    if sv.ndim == 0:
        raise FgradRuntimeError("torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 "
                           "dimension")
    if sv.ndim > 1 and sv.shape[:-1] != vv.shape[:-1]:
        raise FgradRuntimeError(f"torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                           f"dimensions of boundaries tensor and input value tensor must match, but we got "
                           f"boundaries tensor {list(sv.shape)} and input value tensor {list(vv.shape)}")
    dt = P.result_dtype(seq, values)
    order = None if sorter is None else sorter._value if isinstance(sorter, Tensor) else np.asarray(sorter)

    def fn(s, x):
        if order is not None:
            s = fnp.take_along_axis(s, order, -1)
        out = xlax.searchsorted(cast(s, dt), cast(x, dt), side)
        if scalar:
            out = fnp.reshape(out, ())
        return cast(out, np.dtype(np.int32)) if out_int32 else out
    return call("SearchsortedBackward0", fn, (seq, values))  # (integers: no node)


def bucketize(input: Tensor, boundaries: Tensor, *, out_int32: bool = False, right: bool = False) -> Tensor:
    """The index of the bucket of `boundaries` (1-D, increasing) each element of `input`
    falls in: boundaries[i-1] < x <= boundaries[i], or boundaries[i-1] <= x < boundaries[i]
    with right=True."""
    if not isinstance(boundaries, Tensor) or boundaries._value.ndim != 1:
        raise FgradRuntimeError("bucketize(): boundaries tensor must be 1 dimension, but got dim "
                           f"{getattr(getattr(boundaries, '_value', None), 'ndim', 0)}")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def histc(input: Tensor, bins: int = 100, min: Any = 0, max: Any = 0) -> Tensor:
    """A histogram of `input` with `bins` equal bins over [min, max] (the data's range when
    min equals max, widened by 1 each way when that is empty); values outside are not counted. Of
    input's (floating) dtype, and not differentiable. (NumPy's histogram, fgrad.numpy's,
    bins by comparing with the edges, which can differ at a boundary.)"""
    v = input._value
    if v.dtype.kind != "f":
        raise FgradNotImplementedError(f"\"histogram_cpu\" not implemented for '{D.of_np(v.dtype)._torch[:-6]}'")
    if bins <= 0:
        raise FgradRuntimeError(f"torch.histc(): bins must be > 0, but got {bins} for dimension 0")
    lo, hi = float(min), float(max)
    if lo == hi and v.size:
        data = concrete_array(input, "histc")
        lo, hi = float(data.min()), float(data.max())  # (PyTorch: for any equal min and max)
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if lo > hi:
        raise FgradRuntimeError(f"torch.histc(): max must be larger than min, got min {lo} and max {hi}")
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise FgradRuntimeError(f"torch.histc(): range of [{lo}, {hi}] is not finite")
    # PyTorch's bin of x: int((x - min) * bins / (max - min)) in input's dtype (not NumPy's
    # comparison with the edges), max itself in the last bin, values outside not counted
    dt = v.dtype
    lo_t, hi_t = np.asarray(lo, dt), np.asarray(hi, dt)

    def fn(x):
        inside = fnp.logical_and(fnp.greater_equal(x, lo_t), fnp.less_equal(x, hi_t))
        pos = fnp.floor(fnp.true_divide(fnp.multiply(fnp.subtract(x, lo_t), np.asarray(bins, dt)), hi_t - lo_t))
        pos = fnp.where(inside, fnp.clip(pos, 0, bins - 1), np.zeros((), dt))
        counts = fnp.bincount(fnp.ravel(fnp.astype(pos, np.int64)), fnp.ravel(fnp.astype(inside, np.float64)),
                              length=bins)
        return cast(counts, dt)
    return call("HistcBackward0", fn, (input.detach(),))  # (not differentiable: a detached input)


def _tri_indices(fn, name: str, where: str):
    def op(row: int, col: int, offset: int = 0, *, dtype=None, device=None, layout=None) -> Tensor:
        return _creation.tensor(np.stack(fn(row, offset, col)), dtype=dtype or D.int64, device=device)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"The 2 x N (row, column) indices of the {where} diagonal `offset` of a row x col "
                  "matrix, row by row.")
    return op


tril_indices = _tri_indices(fnp.tril_indices, "tril_indices", "lower triangle (on and below)")
triu_indices = _tri_indices(fnp.triu_indices, "triu_indices", "upper triangle (on and above)")


def multinomial(input, num_samples: int, replacement: bool = False, *, generator=None) -> Tensor:
    """`num_samples` category indices per row of the (unnormalised, non-negative) weights
    `input` (1-D, or 2-D: one row per distribution); without replacement each category is
    drawn at most once. Torch's draws and algorithms for the same seed."""
    w = np.asarray(concrete_array(input, "multinomial"), np.float64)
    if w.ndim not in (1, 2):
        raise FgradRuntimeError(f"prob_dist must be 1 or 2 dim, got {w.ndim} dims")
    if input._value.dtype.kind != "f":
        raise FgradRuntimeError(f"multinomial only supports floating-point dtypes for input, got: {input.dtype}")
    rows = w.reshape(-1, w.shape[-1])
    n = rows.shape[1]
    if num_samples <= 0:
        raise FgradRuntimeError(f"cannot sample n_sample <= 0 samples (got {num_samples})")
    if not replacement and num_samples > n:
        raise FgradRuntimeError(f"cannot sample n_sample > prob_dist.size(-1) samples without replacement "
                           f"({num_samples} > {n})")
    if not np.isfinite(rows).all() or (rows < 0).any():
        raise FgradRuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    sums = rows.sum(axis=1)
    if (sums <= 0).any():
        raise FgradRuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    if not replacement and ((rows > 0).sum(axis=1) < num_samples).any():
        raise FgradRuntimeError(f"invalid multinomial distribution (with replacement=False, not enough non-negative "
                           f"category to sample): fewer than {num_samples} categories have a positive weight")
    engine = _creation._engine(generator)
    out = np.array([engine.multinomial(r, num_samples, replacement, input._value.dtype) for r in rows], np.int64)
    return _make(out.reshape(w.shape[:-1] + (num_samples,)).astype(np.int64))


__all__ = [
    "bincount",
    "bucketize",
    "histc",
    "index_add",
    "index_copy",
    "index_fill",
    "index_put",
    "masked_scatter",
    "multinomial",
    "repeat_interleave",
    "scatter",
    "scatter_add",
    "scatter_reduce",
    "searchsorted",
    "tril_indices",
    "triu_indices",
    "unique",
    "unique_consecutive",
]
