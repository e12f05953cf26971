"""Tensor shape ops, indexing, linear algebra and conversions with PyTorch's names and
semantics (the elementwise maths and reductions are in _ops.py; the same principle holds:
map PyTorch's arguments onto fgrad.numpy and the lax-level ops, in PyTorch's dialect).

Each function checks its arguments (PyTorch's errors) and then runs as torch ops through the
facade's boundary (`_boundary.call`, over plain values), so its graph is PyTorch's: one node
per op PyTorch records, with its grad_fn name (x[0] is SelectBackward0, x.view(-1)
ViewBackward0, torch.cat one CatBackward0 over every input), composed as PyTorch composes
the ops it decomposes (x[1:, 0] is a slice then a select, matmul folds batches into
mm/bmm then UnsafeViewBackward0). Results that are NumPy views into an input are marked as
its views by the boundary. The hottest single-primitive views bind their primitive directly
(`_tensor_bind`) where the primitive's name is the torch function's."""
from __future__ import annotations

import builtins
import math

import numpy as np

from ... import numpy as fnp
from ...core.errors import FgradIndexError, FgradRuntimeError, FgradTypeError, FgradValueError
from ...core.trace import Tracer, _state
from ... import lax
from ...extend import lax as xlax
from ...extend.numpy import broadcast_shapes as _broadcast_shapes
from ...extend.numpy import cast, ints_arg, normalize_axes, resolve_shape
from . import _dtypes as D
from ._layout import (CHANNELS_LAST_ORDER, contiguous_format, empty_preserving, laid_out, memory_format,
                      preserve_format, strides_follow)
from ._device import as_device, is_cupy, resolved
from ._device import device as device_cls
from ._boundary import call, compute_dtype
from ._policy import TORCH as P
from ._ops import _operand, _sort_t, _tensor, _topk_t, _unsafe_view, unsqueeze
from .function import to_device
from ._meta_ops import to_meta
from .tensor import FORWARD_AD, Tensor, _dim, _make, _tensor_bind, check_inplace, commit_inplace, mark_view, node_class

_nd = np.ndarray


# --- shape -------------------------------------------------------------------------------------------

def _sizes(args, name: str) -> tuple:
    """PyTorch's sizes: f(2, 3) or f((2, 3)), as a tuple of ints."""
    return ints_arg(args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else args, name, "size")


def broadcast_shapes(*shapes) -> tuple:
    """The shape that tensors of `shapes` broadcast to (PyTorch's torch.broadcast_shapes).

    Args:
        *shapes: shapes (tuples of ints, or ints).

    Returns:
        A tuple of ints (PyTorch's is a torch.Size, a tuple subclass).

    Raises:
        RuntimeError: the shapes do not broadcast.
    """
    return _broadcast_shapes("broadcast_shapes", *shapes, policy=P)


# The hot single-primitive views bind their primitive directly (`_tensor_bind`, the facade's
# fast path) where the primitive's grad_fn name is the torch function's: reshape is
# ViewBackward0, slice SliceBackward0, broadcast_in_dim ExpandBackward0, concatenate
# CatBackward0, a 2-D dot_general MmBackward0, convert_element_type ToCopyBackward0.

def _view_node(input, shape: tuple):
    """input.view(shape) (ViewBackward0), for a shape its strides express."""
    return _tensor_bind(lax.reshape_p, (input,), {"new_sizes": shape})


def _reshaper(shape: tuple):
    """The functional reshape to `shape` (a NumPy view of a plain contiguous array)."""
    return lambda v: lax.reshape_p.bind(v, new_sizes=shape)


def _viewable(v, shape: tuple) -> bool:
    """Whether the strides of `v` express it with `shape` (always for traced values)."""
    if type(v) is not _nd or v.flags.c_contiguous:
        return True
    try:
        v.reshape(shape, copy=False)
    except ValueError:
        return False
    return True


def _own(t: Tensor) -> Tensor:
    """`t`, a result the boundary took for a view of an intermediate nobody else holds, as a
    tensor of its own storage (PyTorch's _unsafe_view: no view relation)."""
    t._view = None
    t._vbox = [0]
    return t


def reshape(input, *shape):
    """`input` with another shape: a view where its strides allow (ViewBackward0 when input is
    contiguous, PyTorch's _reshape_alias, ReshapeAliasBackward0, when it is not), else a copy
    (PyTorch's clone then _unsafe_view: UnsafeViewBackward0 over CloneBackward0)."""
    shape = resolve_shape(_sizes(shape, "view"), tuple(input._value.shape), "view", policy=P)
    # a node even when the shape is unchanged: like PyTorch, the result is a new (view) tensor
    if _viewable(input._value, shape):
        v = input._value
        if type(v) is _nd and not v.flags.c_contiguous:
            return call("ReshapeAliasBackward0", _reshaper(shape), (input,))
        return _view_node(input, shape)
    return _own(call("UnsafeViewBackward0", _reshaper(shape), (clone(input),)))


VIEW_STRIDE_MESSAGE = ("view size is not compatible with input tensor's size and stride (at least one dimension "
                       "spans across two contiguous subspaces). Use .reshape(...) instead.")


def view(input, *shape):
    """`input` with another shape, sharing its storage; PyTorch's error where the strides
    cannot express it (reshape() copies there instead)."""
    if len(shape) == 1 and not isinstance(shape[0], (int, np.integer, tuple, list, Tensor)):
        return _view_dtype(input, shape[0])
    shape = resolve_shape(_sizes(shape, "view"), tuple(input._value.shape), "view", policy=P)
    if not _viewable(input._value, shape):
        raise FgradRuntimeError(VIEW_STRIDE_MESSAGE)
    return _view_node(input, shape)


def _view_dtype(input, dtype):
    """x.view(dtype): the same bytes read as another dtype of the same size (no gradient)."""
    npd = D.np_dtype(dtype)
    v = input._value
    if npd.itemsize != v.dtype.itemsize:
        raise FgradRuntimeError(f"view(dtype): {input.dtype} and {dtype} differ in element size; fgrad only "
                           "reinterprets between dtypes of the same size")
    return _make(v.view(npd), None, False, input._vbox)


def _memory_format(fmt, where: str):
    """`fmt` checked to be a torch.memory_format (None: contiguous_format)."""
    if fmt is None:
        return contiguous_format
    if not isinstance(fmt, memory_format):
        raise FgradTypeError(f"{where}(): argument 'memory_format' must be torch.memory_format, not "
                             f"{type(fmt).__name__} (use torch.contiguous_format, torch.channels_last, "
                             f"torch.channels_last_3d or torch.preserve_format)")
    return fmt


def is_contiguous(input, memory_format=None) -> bool:
    """Tensor.is_contiguous(memory_format=torch.contiguous_format): whether the values are laid
    out densely in that format's order (C order; NHWC for channels_last on a 4-d tensor, NDHWC
    for channels_last_3d on a 5-d one; other ranks are never channels-last). A GPU or traced
    value counts as C-contiguous."""
    fmt = _memory_format(memory_format, "is_contiguous")
    v = input._value
    order = CHANNELS_LAST_ORDER.get(fmt)
    if order is None:
        return v.flags.c_contiguous if type(v) is _nd else True
    if v.ndim != len(order):
        return False
    item = v.dtype.itemsize
    strides = [s // item for s in v.strides] if type(v) is _nd else _c_strides(v.shape)
    return strides_follow(v.shape, strides, order)


def _c_strides(shape) -> list:
    """The row-major strides (in elements) of `shape`."""
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= max(n, 1)
    return out[::-1]


def flatten(input, start_dim: int = 0, end_dim: int = -1):
    """`input` with dims start_dim..end_dim merged; `input` itself when that is one dim (as
    PyTorch), a 0-d input as 1-d."""
    shape = tuple(input._value.shape)
    if not shape:
        return reshape(input, 1)
    s, e = _dim(start_dim, len(shape)), _dim(end_dim, len(shape))
    if s > e:
        raise FgradRuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    return reshape(input, shape[:s] + (math.prod(shape[s:e + 1]),) + shape[e + 1:])


def unflatten(input, dim, sizes):
    """torch.unflatten(input, dim, sizes): dim `dim` split into `sizes` (one of them may be -1)."""
    shape = tuple(input._value.shape)
    d = _dim(dim, len(shape))
    sizes = resolve_shape(_sizes((sizes,), "unflatten"), shape[d:d + 1], "unflatten", policy=P)
    return view(input, shape[:d] + sizes + shape[d + 1:])


def squeeze(input, dim=None):
    """`input` without its dims of size 1 (those of `dim`); a dim of another size stays.
    PyTorch's node: SqueezeBackward0 (every dim), 1 (one dim), 2 (a tuple of dims)."""
    shape = tuple(input._value.shape)
    dims = range(len(shape)) if dim is None else normalize_axes(dim, len(shape), "squeeze", policy=P)
    new = tuple(s for i, s in enumerate(shape) if not (i in dims and s == 1))
    name = "SqueezeBackward0" if dim is None else "SqueezeBackward2" if isinstance(dim, (tuple, list)) \
        else "SqueezeBackward1"
    return call(name, _reshaper(new), (input,))


def permute(input, *dims):
    """torch.permute(input, dims): the dims reordered (PermuteBackward0)."""
    dims = _sizes(dims, "permute")
    return call("PermuteBackward0", lambda v: fnp.transpose(v, dims, policy=P), (input,))


def _swap(input, dim0: int, dim1: int, name: str):
    nd = input._value.ndim
    perm = list(range(nd))
    if nd:
        i, j = _dim(dim0, nd), _dim(dim1, nd)
        perm[i], perm[j] = perm[j], perm[i]
    else:
        _dim(dim0, 0), _dim(dim1, 0)  # (0-d: PyTorch's range check, then a node all the same)
    perm = tuple(perm)
    if isinstance(input, Tensor):  # one primitive: its own node, of the op's class
        return _tensor_bind(lax.transpose_p, (input,), {"permutation": perm}, node_class(name))
    return call(name, lambda v: lax.transpose_p.bind(v, permutation=perm), (input,))


def transpose(input, dim0: int, dim1: int):
    """torch.transpose(input, dim0, dim1) (also swapaxes, swapdims): two dims swapped, a view."""
    return _swap(input, dim0, dim1, "TransposeBackward0")


swapaxes = swapdims = transpose


def t(input):
    """torch.t(input): a matrix transposed; 0-d and 1-d tensors as they are."""
    nd = input._value.ndim
    if nd > 2:
        raise FgradRuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {nd}D")
    return _swap(input, 0, nd - 1 if nd else 0, "TBackward0")


def expand(input, *sizes):
    """`input` broadcast to `sizes`; -1 keeps an existing dimension's size."""
    sizes = _sizes(sizes, "expand")
    shape = tuple(input._value.shape)
    lead = len(sizes) - len(shape)
    target = tuple(shape[i - lead] if s == -1 and i >= lead else s for i, s in enumerate(sizes))
    if -1 in target:
        raise FgradRuntimeError(f"expand: -1 is not allowed in a leading, non-existing dimension {target.index(-1)}")
    if target == shape:  # a view writable as its input (NumPy's broadcast_to is read-only)
        return call("ExpandBackward0", _reshaper(shape), (input,))
    if lead >= 0 and builtins.all(n in (1, m) for n, m in zip(shape, target[lead:])):
        return _tensor_bind(lax.broadcast_in_dim_p, (input,),
                            {"shape": target, "broadcast_dimensions": tuple(range(lead, len(target)))})
    return call("ExpandBackward0", lambda v: fnp.broadcast_to(v, target, policy=P), (input,))


def expand_as(input, other):
    """Tensor.expand_as(other): self.expand(other.shape)."""
    return expand(input, tuple(other._value.shape))


def broadcast_to(input, shape):
    """torch.broadcast_to(input, shape): input.expand(shape)."""
    return expand(input, tuple(shape))


def repeat(input, *sizes):
    """Tensor.repeat(*sizes): the tensor tiled `sizes` times along each dim (leading new dims
    allowed)."""
    reps = _sizes(sizes, "repeat")
    if len(reps) < input._value.ndim:
        raise FgradRuntimeError("Number of dimensions of repeat dims can not be smaller than number of "
                           "dimensions of tensor")
    return call("RepeatBackward0", lambda v: fnp.tile(v, reps), (input,))


def _concat(vs, dim):
    out = fnp.concatenate(vs, axis=dim, policy=P)
    # a concatenation of one array may hand that array back: a new tensor, as PyTorch's
    return out.copy() if type(out) is _nd and any(out is v for v in vs) else out


def cat(tensors, dim: int = 0):
    """One CatBackward0 over every input tensor, in order (PyTorch's legacy rule: 1-D empty
    tensors take no part in the shape check and the values)."""
    tensors = [_tensor(x) for x in tensors]
    if len(tensors) > 1:
        v0 = tensors[0]._value
        nd, dt = v0.ndim, v0.dtype
        if nd and builtins.all(x._value.ndim == nd and x._value.dtype == dt for x in tensors):
            d = _dim(dim, nd)
            rest = v0.shape[:d] + v0.shape[d + 1:]
            if builtins.all(x._value.shape[:d] + x._value.shape[d + 1:] == rest for x in tensors) and \
                    not (nd == 1 and builtins.any(x._value.shape == (0,) for x in tensors)):
                return _tensor_bind(lax.concatenate_p, tuple(tensors), {"dimension": d})
    skip = [x._value.shape == (0,) for x in tensors]
    if builtins.all(skip):
        skip[0] = False

    def fn(vs):
        return _concat([v for v, s in zip(vs, skip) if not s], dim)
    return call("CatBackward0", fn, (tensors,))


concat = concatenate = cat


def stack(tensors, dim: int = 0):
    """The tensors joined along a new dimension `dim` (PyTorch's torch.stack, grad_fn
    StackBackward0).

    Args:
        tensors: a sequence of Tensors of one shape.
        dim: where the new dimension goes.

    Returns:
        A Tensor with one more dimension.
    """
    tensors = [_tensor(x) for x in tensors]
    return call("StackBackward0", lambda vs: fnp.stack(vs, axis=dim, policy=P), (tensors,))


def _at_least(x, nd: int):
    """PyTorch's atleast_1d / atleast_2d as the views it makes (0-d: a view to (1,) or (1, 1);
    1-d to 2-d: unsqueeze(0))."""
    x = _tensor(x)
    n = x._value.ndim
    if n >= nd:
        return x
    if n == 0:
        return reshape(x, (1,) * nd)
    return unsqueeze(x, 0)


def hstack(tensors):
    """The tensors joined along dim 1 (dim 0 for 1-D tensors; PyTorch's torch.hstack).

    Args:
        tensors: a sequence of Tensors.

    Returns:
        A Tensor.
    """
    tensors = [_at_least(x, 1) for x in tensors]
    return cat(tensors, 0 if tensors and tensors[0]._value.ndim == 1 else 1)


def vstack(tensors):
    """The tensors, each made at least 2-D, joined along dim 0 (PyTorch's torch.vstack).

    Args:
        tensors: a sequence of Tensors.

    Returns:
        A Tensor.
    """
    return cat([_at_least(x, 2) for x in tensors], 0)


def _slice(input, d: int, start: int, stop: int):
    """input[..., start:stop, ...] along dim `d`, 0 <= start <= stop <= its size (a view,
    SliceBackward0)."""
    shape = input._value.shape
    lo, hi = [0] * len(shape), list(shape)
    lo[d], hi[d] = start, stop
    return _tensor_bind(lax.slice_p, (input,), {"start_indices": tuple(lo), "limit_indices": tuple(hi)})


def _slice_entry(input, d: int, e: slice):
    """input[..., e, ...] for the slice `e` along dim `d` (SliceBackward0)."""
    start, stop, step = e.indices(input._value.shape[d])
    if step == 1:
        return _slice(input, d, start, builtins.max(start, stop))
    return _index_step("SliceBackward0", input, (slice(None),) * d + (e,))


def narrow(input, dim: int, start: int, length: int):
    """torch.narrow(input, dim, start, length): entries start .. start + length - 1 along `dim`, a view."""
    shape = tuple(input._value.shape)
    d = _dim(dim, len(shape))
    start, length = int(start), int(length)
    start = start % shape[d] if start < 0 else start
    if start + length > shape[d] or length < 0:
        raise FgradRuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({shape[d]}).")
    return _slice(input, d, start, start + length)


# `saves` of the indexing views (select, slice, split, unbind, x[idx]): their gradient puts the
# cotangent back at the indexed positions and reads no value of the input, so PyTorch saves
# only sizes and indices (SelectBackward0's _saved_dim, _saved_index, _saved_self_sym_sizes)
# and a later in-place write into the input leaves their backward valid
_NO_VALUES = ()


def _split_views(name: str, input, bounds, d: int) -> tuple:
    """The pieces of `input` between consecutive `bounds` along dim `d`: views, the outputs
    of one multi-view torch op `name` (SplitBackward0...)."""
    idxs = [(slice(None),) * d + (slice(a, b),) for a, b in zip(bounds[:-1], bounds[1:])]
    return _multi_views(call(name, lambda v: tuple(fnp.getitem(v, i) for i in idxs), (input,), saves=_NO_VALUES),
                        name)


def split(tensor, split_size_or_sections, dim: int = 0):
    """Pieces of `split_size` along `dim` (SplitBackward0), or of the given sizes
    (SplitWithSizesBackward0)."""
    shape = tuple(tensor._value.shape)
    d = _dim(dim, len(shape))
    n = shape[d]
    if isinstance(split_size_or_sections, (int, np.integer)):
        size = int(split_size_or_sections)
        if size <= 0 and n:
            raise FgradRuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
        sizes = [size] * (n // size) + ([n % size] if n % size else []) if size else [0]
        name = "SplitBackward0"
    else:
        sizes = [int(s) for s in split_size_or_sections]
        if builtins.sum(sizes) != n:
            raise FgradRuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's "
                               f"size at dimension {d}), but got split_sizes={sizes}")
        name = "SplitWithSizesBackward0"
    return _split_views(name, tensor, [0, *np.cumsum(sizes).tolist()], d)


def _multi_views(outs, name: str) -> tuple:
    """Views made by a function returning several (unbind, split...): PyTorch refuses to
    modify them in place in a graph, or to use them after their base was."""
    for o in outs:
        if o._view is not None:
            o._view[2] = name
    return tuple(outs)


def tensor_split(input, indices_or_sections, dim: int = 0):
    """Pieces along `dim`: `sections` nearly equal ones, or cut at `indices`. Each is its own
    slice (PyTorch's tensor_split is slices: SliceBackward0 each, ordinary views)."""
    shape = tuple(input._value.shape)
    d = _dim(dim, len(shape))
    n = shape[d]
    ios = indices_or_sections
    if isinstance(ios, Tensor):
        ios = ios.tolist()
    if isinstance(ios, (int, np.integer)):
        k = int(ios)
        if k <= 0:
            raise FgradRuntimeError(f"number of sections must be larger than 0, got {k}")
        q, r = divmod(n, k)
        cuts = np.cumsum([q + 1] * r + [q] * (k - r)).tolist()[:-1]
    else:
        cuts = [int(i) for i in ios]
    bounds = [0, *cuts, n]
    out = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        lo = builtins.min(builtins.max(a, 0), n)  # NumPy's (and PyTorch's) clamping of the cuts
        out.append(_slice(input, d, lo, builtins.max(lo, builtins.min(b, n))))
    return tuple(out)


def chunk(input, chunks: int, dim: int = 0):
    """torch.chunk(input, chunks, dim=0): at most `chunks` views of equal size along `dim`
    (the last may be smaller)."""
    if chunks <= 0:
        raise FgradRuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    n = input._value.shape[_dim(dim, input._value.ndim)]
    size = -(-n // chunks) if n else 1
    return split(input, size, dim)


def diagonal(input, offset: int = 0, dim1: int = 0, dim2: int = 1):
    """A view of the diagonal (writes through to `input`, as in PyTorch)."""
    out = call("DiagonalBackward0", lambda v: fnp.diagonal(v, offset, dim1, dim2), (input,))
    v = input._value
    if type(v) is _nd:  # fgrad.numpy's diagonal gathers a copy: stand a strided view in for it
        d = np.diagonal(v, offset, dim1, dim2)
        d.flags.writeable = v.flags.writeable
        out._value = d
        mark_view(out, input)
    return out


def trace(input):
    """The sum of the main diagonal of a matrix (integers sum in int64, as PyTorch)."""
    return call("TraceBackward0", lambda v: fnp.sum(fnp.diagonal(v), policy=P), (input,))


def unbind(input, dim: int = 0):
    """The slices along `dim`, without it: views, outputs of one UnbindBackward0."""
    d = _dim(dim, input._value.ndim)
    idxs = [(slice(None),) * d + (i,) for i in range(input._value.shape[d])]
    return _multi_views(call("UnbindBackward0", lambda v: tuple(fnp.getitem(v, i) for i in idxs), (input,),
                             saves=_NO_VALUES),
                        "UnbindBackward0")


def _select(input, d: int, index: int):
    """input[..., index] at dim `d` (SelectBackward0): a slice of size 1 and a view without
    that dim (the lax-level pair, cheaper than fgrad.numpy's indexing)."""
    shape = tuple(input._value.shape)
    n = shape[d]
    if not -n <= index < n:
        raise FgradIndexError(f"index {index} is out of bounds for dimension {d} with size {n}")
    index %= n
    lo, hi = [0] * len(shape), list(shape)
    lo[d], hi[d] = index, index + 1
    lo, hi, new = tuple(lo), tuple(hi), shape[:d] + shape[d + 1:]

    def fn(v):
        return lax.reshape_p.bind(lax.slice_p.bind(v, start_indices=lo, limit_indices=hi), new_sizes=new)
    return call("SelectBackward0", fn, (input,), saves=_NO_VALUES)


def select(input, dim: int, index: int):
    """The slice at `index` along `dim`, without that dim (a view, like input[..., index])."""
    d = _dim(dim, input._value.ndim)
    n = input._value.shape[d]
    index = int(index)
    if not -n <= index < n:
        raise FgradIndexError(f"select(): index {index} out of range for tensor of size {list(input._value.shape)} "
                         f"at dimension {d}")
    return _select(input, d, index)


# --- indexing -------------------------------------------------------------------------------------

def _raw_index(idx):
    """An index with Tensors replaced by their values (NumPy indexing semantics)."""
    if isinstance(idx, Tensor):
        return idx._value
    if isinstance(idx, tuple):
        return tuple(_raw_index(i) for i in idx)
    if isinstance(idx, list) and builtins.any(isinstance(i, Tensor) for i in idx):
        return [_raw_index(i) for i in idx]
    return idx


def _int_entry(e) -> bool:
    return isinstance(e, (int, np.integer)) and not isinstance(e, (bool, np.bool_))


class _Advanced:
    """An advanced index entry (an index tensor, array or list; its values as NumPy indexing
    takes them) and how many dims of the indexed tensor it consumes."""

    __slots__ = ("raw", "dims")

    def __init__(self, raw) -> None:
        self.raw = raw
        dt = getattr(raw, "dtype", None)
        if dt is None:
            dt = np.asarray(raw).dtype
        self.dims = (raw.ndim if hasattr(raw, "ndim") else np.ndim(raw)) if dt.kind == "b" else 1


class _BoolEntry:
    """A bool index entry (x[True]): PyTorch's new dim of size 1 (an unsqueeze) masked by the
    bool (kept, or emptied)."""

    __slots__ = ("mask",)
    dims = 0

    def __init__(self, flag) -> None:
        self.mask = np.array([bool(flag)])


def _index_plan(idx):
    """`idx`'s entries: ints (a concrete 0-d integer Tensor counts as its int, as in PyTorch),
    slices, None, Ellipsis, _Advanced and _BoolEntry."""
    entries = idx if isinstance(idx, tuple) else (idx,)
    out = []
    for e in entries:
        if isinstance(e, Tensor):
            v = e._value
            out.append(int(v) if type(v) is _nd and not v.ndim and v.dtype.kind in "iu" else _Advanced(v))
        elif _int_entry(e) or e is None or e is Ellipsis or isinstance(e, slice):
            out.append(e)
        elif isinstance(e, (bool, np.bool_)):
            out.append(_BoolEntry(e))
        else:
            out.append(_Advanced(_raw_index(e)))
    return out


def _basic_entries(idx):
    """`idx`'s entries when all are basic (ints, slices, None, Ellipsis), else None."""
    plan = _index_plan(idx)
    return None if builtins.any(isinstance(e, (_Advanced, _BoolEntry)) for e in plan) else plan


def _index_step(name: str, input, idx):
    return call(name, lambda v: fnp.getitem(v, idx), (input,), saves=_NO_VALUES)


def getitem(input, idx):
    """input[idx] with PyTorch's graph and order: the basic entries make a chain of views, one
    per entry (SelectBackward0 for an int, SliceBackward0 for a slice that is not the whole
    dim, UnsqueezeBackward0 for None; AliasBackward0 when nothing changes), then the index
    tensors, lists or masks index the result in one IndexBackward0 (as PyTorch, an int
    separated from an index tensor by a slice selects first: x[0, :, [0, 1]] has shape
    (n1, 2), where NumPy's rules give (2, n1))."""
    if _int_entry(idx) and input._value.ndim:
        return _select(input, 0, int(idx))
    if isinstance(idx, slice) and input._value.ndim:  # a node even when it spans the dim (as PyTorch)
        return _slice_entry(input, 0, idx)
    plan = _index_plan(idx)
    nd = input._value.ndim
    n_used = builtins.sum(e.dims if isinstance(e, (_Advanced, _BoolEntry)) else 1 for e in plan
                          if e is not None and e is not Ellipsis)
    if n_used > nd or builtins.sum(1 for e in plan if e is Ellipsis) > 1:
        fnp.getitem(input._value, _raw_index(idx))  # NumPy's IndexError, in PyTorch's dialect
    out, d, made, rest, advanced = input, 0, False, [], False
    for e in plan:
        if e is Ellipsis:
            d += nd - n_used
            rest.append(Ellipsis)  # (the same dims of the result: the ints' dims are gone from both)
        elif e is None:
            out = _index_step("UnsqueezeBackward0", out, (slice(None),) * d + (None,))
            d, made = d + 1, True
            rest.append(slice(None))
        elif isinstance(e, slice):
            if e.indices(out._value.shape[d]) != (0, out._value.shape[d], 1):
                out = _slice_entry(out, d, e)
                made = True
            d += 1
            rest.append(slice(None))
        elif isinstance(e, _Advanced):
            rest.append(e.raw)
            d += e.dims
            advanced = True
        elif isinstance(e, _BoolEntry):
            out = _index_step("UnsqueezeBackward0", out, (slice(None),) * d + (None,))
            rest.append(e.mask)
            d, advanced = d + 1, True
        else:
            out = _select(out, d, int(e))
            made = True
    if advanced:
        return _index_step("IndexBackward0", out, tuple(rest))
    return out if made else _index_step("AliasBackward0", input, Ellipsis)


def _concrete(v):
    """A concrete array for an index computation (values of indices are not differentiated)."""
    while isinstance(v, Tracer):
        v = v._concrete("Using a traced value as an index")
    return v


def setitem(t, idx, value) -> None:
    """t[idx] = value. In a graph: a write through the view t[idx] (CopySlices over t's
    history and value's) for a basic index, an index_put_ (IndexPutBackward0) for an
    advanced one, as PyTorch."""
    check_inplace(t)
    raw = _raw_index(idx)
    value = _operand(value)
    vreq = isinstance(value, Tensor) and value._requires_grad
    # (written straight into the storage; not under a dual level: the boundary carries tangents)
    if FORWARD_AD[0] is None and (not _state.grad_enabled or not (t._requires_grad or vreq)):
        tv = t._value
        if (type(tv) is _nd and tv.flags.writeable) or is_cupy(tv):
            tv[raw] = value._value if isinstance(value, Tensor) else value
            t._vbox[0] += 1
            return
    dt = t._value.dtype
    name = "CopySlices" if _basic_entries(idx) is not None else "IndexPutBackward0"
    # through the graph: the functional index update (x.at[idx].set(v)), written back in place;
    # PyTorch's node lists both operands, a value that needs no gradient (a number) as (None, 0)
    commit_inplace(t, call(name, lambda tv, val: fnp.at_set(tv, raw, cast(val, dt)), (t, value), operands=(0, 1)))


def _index(index, name: str | None = None):
    """`index` as an array of indices (concrete or traced); with `name`, one of integers
    (PyTorch's error for `name` otherwise)."""
    v = index._value if isinstance(index, Tensor) else np.asarray(index)
    if name is not None and v.dtype.kind not in "iu":
        raise FgradRuntimeError(f"{name}(): Expected dtype int64 for index (got {v.dtype}); index tensors hold "
                                "integers (convert with .long())")
    return v


def gather(input, dim: int, index):
    """torch.gather(input, dim, index): out[i][j] = input[index[i][j]][j] for dim 0, and so on."""
    idx = _index(index)
    if idx.ndim != input._value.ndim:
        raise FgradRuntimeError(f"Index tensor must have the same number of dimensions as input tensor "
                           f"(index shape {tuple(idx.shape)}, input shape {tuple(input._value.shape)})")
    d = _dim(dim, input._value.ndim)
    return call("GatherBackward0", lambda v: fnp.take_along_axis(v, idx, axis=d), (input,))


def index_select(input, dim: int, index):
    """torch.index_select(input, dim, index): the entries at the 1-d `index` along `dim`."""
    idx = _index(index)
    if idx.ndim > 1:
        raise FgradIndexError("index_select(): Index is supposed to be a vector")
    d = _dim(dim, input._value.ndim)
    return call("IndexSelectBackward0", lambda v: fnp.take(v, idx, axis=d), (input,))


def take(input, index):
    """torch.take(input, index): entries of the flattened input at `index`, in index's shape."""
    idx = _index(index)
    return call("TakeBackward0", lambda v: fnp.take(fnp.ravel(v), idx, axis=0), (input,))


def _bool_mask(mask, name: str) -> Tensor:
    """`mask` as a Tensor, which must be boolean (PyTorch's error for `name`_ otherwise)."""
    m = _tensor(mask)
    if m._value.dtype.kind != "b":
        raise FgradRuntimeError(f"{name}_ only supports boolean masks, but got mask with dtype {m.dtype}")
    return m


def _fill_value(value, dtype, name: str):
    """A fill value (a number or a 0-d tensor; PyTorch's error for `name`_ otherwise)."""
    if isinstance(value, Tensor) and value._value.ndim != 0:
        raise FgradRuntimeError(f"{name}_ only supports a 0-dimensional value tensor, but got tensor with "
                                f"{value._value.ndim} dimension(s).")
    return _operand(value)


def masked_fill(input, mask, value):
    """`input` with `value` where `mask`: MaskedFillBackward0 for a number, MaskedFillBackward1
    (over input and value) for a 0-d tensor."""
    m = _bool_mask(mask, "masked_fill")
    value = _fill_value(value, input._value.dtype, "masked_fill")
    dt = compute_dtype(input._value.dtype)  # (bfloat16: float32 until the boundary rounds)
    name = "MaskedFillBackward1" if isinstance(value, Tensor) else "MaskedFillBackward0"
    return call(name, lambda v, mv, fill: fnp.where(mv, cast(fill, dt), v, policy=P), (input, m, value))


def masked_select(input, mask):
    """torch.masked_select(input, mask): the entries where the broadcast `mask` is True, as a
    1-d tensor."""
    m = _tensor(mask)
    shape = broadcast_shapes(input._value.shape, m._value.shape)

    def fn(v, mv):
        return fnp.getitem(fnp.broadcast_to(v, shape, policy=P), fnp.broadcast_to(mv, shape, policy=P))
    return call("MaskedSelectBackward0", fn, (input, m))


def nonzero(input, *, as_tuple: bool = False):  # (argwhere: the same, as_tuple=False)
    """torch.nonzero(input, *, as_tuple=False) (also argwhere): the indices of the nonzero
    entries, (n, ndim) or one 1-d tensor per dim."""
    v = _concrete(_tensor(input)._value)
    xp = np if type(v) is _nd else __import__("cupy")
    if as_tuple:
        return tuple(_make(i.astype(np.int64)) for i in xp.atleast_1d(v).nonzero())
    return _make(xp.argwhere(v).astype(np.int64))


argwhere = nonzero


def _argsort(v, d, descending):
    if not v.ndim:  # PyTorch: 0-d in, 0-d out (NumPy's argsort gives shape (1,))
        return fnp.reshape(fnp.argsort(v, policy=P), ())
    return fnp.argsort(v, d, descending=descending, policy=P)


def sort(input, dim: int = -1, descending: bool = False, stable: bool = False):
    """(values, indices) along `dim`; always stable, as fgrad.numpy.sort. One SortBackward0
    for the values (the indices are integers)."""
    d = _dim(dim, input._value.ndim)

    def fn(v):
        order = _argsort(v, d, descending)
        return _sort_t(fnp.take_along_axis(v, order, d) if v.ndim else _copy_value(v), order)
    return call("SortBackward0", fn, (input,))


def argsort(input, dim: int = -1, descending: bool = False, stable: bool = False):
    """torch.argsort(input, dim=-1, descending=False, stable=False): the indices that sort
    `input` along `dim`."""
    d = _dim(dim, input._value.ndim)
    return call("ArgsortBackward0", lambda v: _argsort(v, d, descending), (input,))  # (integers: no node)


def topk(input, k: int, dim: int = -1, largest: bool = True, sorted: bool = True):
    """The k largest (smallest) values along `dim` with their indices: one TopkBackward0."""
    d = _dim(dim, input._value.ndim)
    n = input._value.shape[d] if input._value.ndim else 1
    if not 0 <= k <= n:
        raise FgradRuntimeError(f"selected index k out of range (k={k}, size {n} at dim {d})")

    def fn(v):
        if not v.ndim:
            return _topk_t(_copy_value(v), fnp.reshape(fnp.argsort(v, policy=P), ()))
        idx = fnp.getitem(_argsort(v, d, largest), (slice(None),) * d + (slice(0, k),))
        return _topk_t(fnp.take_along_axis(v, idx, d), idx)
    return call("TopkBackward0", fn, (input,))


# --- linear algebra ------------------------------------------------------------------------------

def _product(name: str, input, other):
    """One node `name` for input @ other (NumPy's matmul: values as fgrad.numpy's)."""
    return call(name, lambda a, b: fnp.matmul(a, b, policy=P), (input, other))


def matmul(input, other):
    """input @ other with PyTorch's graph: dot, mv and mm as one node each; a vector times a
    matrix as mm then SqueezeBackward4 (PyTorch unsqueezes the vector); a product with a batch
    composed of torch ops as PyTorch's matmul composes it (a batch times a matrix or vector
    folded into one mm/mv, see _should_fold; otherwise both sides expanded and reshaped to one
    bmm), so every node of its graph is PyTorch's."""
    if getattr(input, "is_sparse", False):  # a sparse COO matrix (fgrad.torch.sparse): its own product
        return input.mm(other)
    if getattr(other, "is_sparse", False):  # dense @ sparse = (sparse^T @ dense^T)^T
        if input._value.ndim == 1:
            return other.t().mm(input)
        return transpose(other.t().mm(transpose(input, 0, 1)), 0, 1)
    input, other = _tensor(input), _tensor(other)
    n1, n2 = input._value.ndim, other._value.ndim
    if n1 == 0 or n2 == 0:  # PyTorch's error (both arguments need a dimension)
        return _product("MmBackward0", input, other)
    inner = {(1, 1): "DotBackward0", (2, 1): "MvBackward0", (2, 2): "MmBackward0"}.get((n1, n2))
    if inner == "MmBackward0" and input._value.dtype == other._value.dtype and input._value.dtype.kind in "fc" \
            and input._value.shape[1] == other._value.shape[0]:
        return _tensor_bind(lax.dot_general_p, (input, other), {"dimension_numbers": _MM})
    if inner is not None:
        return _product(inner, input, other)
    if (n1, n2) == (1, 2):  # PyTorch: input.unsqueeze(0).mm(other).squeeze_(0)
        row = _product("MmBackward0", unsqueeze(input, 0), other)
        return call("SqueezeBackward4", lambda v: fnp.squeeze(v, 0), (row,))
    s1, s2 = tuple(input._value.shape), tuple(other._value.shape)
    if not _batched_shapes_fit(s1, s2):  # (the product raises PyTorch's shape error)
        return _product("BmmBackward0", input, other)
    if _should_fold(input, other):
        return _folded_product(input, other)
    return _batched_product(input, other)


def _batched_shapes_fit(s1: tuple, s2: tuple) -> bool:
    """Whether shapes s1 @ s2 (one of them at least 3-D) multiply: the inner sizes agree and
    the batch dims broadcast."""
    if s1[-1] != (s2[-2] if len(s2) > 1 else s2[0]):
        return False
    try:
        _broadcast_shapes("matmul", s1[:-2], s2[:-2], policy=P)
    except Exception:  # noqa: BLE001 (any refusal means: not multipliable)
        return False
    return True


def _should_fold(input, other) -> bool:
    """PyTorch's choice for a batch times a matrix or vector (either side): fold the batch into
    the rows of one mm/mv when the smaller operand requires grad (its gradient is then one
    product instead of a batch summed), or when the larger one folds without a copy."""
    n1, n2 = input._value.ndim, other._value.ndim
    big, small_nd = (input, n2) if n1 >= n2 else (other, n1)
    if not (big._value.ndim >= 3 and small_nd <= 2):
        return False
    small = other if n1 >= n2 else input
    if small._requires_grad:  # (also under no_grad, as PyTorch decides)
        return True
    if n1 == 2:  # (the transposed mm's result would need a copy to come back in order)
        return False
    v = big._value if n1 >= n2 else (big._value.swapaxes(-1, -2) if type(big._value) is _nd else big._value)
    if 0 in v.shape:
        return True
    return _viewable(v, (math.prod(v.shape[:-1]), v.shape[-1]))


def _folded_product(input, other):
    """PyTorch's folded matmul: the larger operand (transposed when it is the right one) viewed
    as one matrix of rows, one mm (or mv) with the smaller, the result viewed back
    (_unsafe_view) and, when transposed, transposed back and made contiguous."""
    n1, n2 = input._value.ndim, other._value.ndim
    flip = n2 > n1
    t1 = transpose(other, -1, -2) if flip else input
    t2 = (t(input) if n1 == 2 else input) if flip else other
    s1 = tuple(t1._value.shape)
    out_shape = s1[:-1]
    rows = reshape(t1, (math.prod(out_shape), s1[-1]))
    if t2._value.ndim == 2:
        out = _unsafe_view(mm(rows, t2), out_shape + (t2._value.shape[1],))
        return contiguous(transpose(out, -1, -2)) if flip else out
    return _unsafe_view(mv(rows, t2), out_shape)


def _batched_product(input, other):
    """PyTorch's unfolded matmul: both operands expanded to the broadcast batch and reshaped to
    3-D (a vector on the right as a column), one bmm, the result viewed to its shape."""
    s1, s2 = tuple(input._value.shape), tuple(other._value.shape)
    n1, n2 = len(s1), len(s2)
    n, m1 = (s1[-2] if n1 > 1 else 1), s1[-1]
    m2, p = (s2[-2] if n2 > 1 else s2[0]), (s2[-1] if n2 > 1 else 1)
    batch = _broadcast_shapes("matmul", s1[:-2] if n1 > 1 else (), s2[:-2] if n2 > 1 else (), policy=P)
    b = math.prod(batch)
    a3 = reshape(expand(input, batch + (n, m1)), (b, n, m1))
    if n2 == 1:
        b3 = unsqueeze(reshape(expand(other, batch + (m2,)), (b, m2)), 2)
    else:
        b3 = reshape(expand(other, batch + (m2, p)), (b, m2, p))
    out = bmm(a3, b3)
    if n2 == 1:
        out = squeeze(out, -1)
    return _unsafe_view(out, batch + ((n,) if n1 > 1 else ()) + ((p,) if n2 > 1 else ()))


_MM = (((1,), (0,)), ((), ()))  # dot_general's dimension numbers of a matrix product


def mm(input, mat2):
    """torch.mm(input, mat2): the product of two matrices (a sparse operand: torch.sparse's product)."""
    if getattr(input, "is_sparse", False) or getattr(mat2, "is_sparse", False):
        return matmul(input, mat2)
    if input._value.ndim != 2 or mat2._value.ndim != 2:
        raise FgradRuntimeError(f"mm: both arguments must be matrices (2-D), got shapes "
                           f"{tuple(input._value.shape)} and {tuple(mat2._value.shape)}")
    return matmul(input, mat2)


def bmm(input, mat2):
    """torch.bmm(input, mat2): the products of two batches of matrices, (b, n, m) @ (b, m, p)."""
    if input._value.ndim != 3 or mat2._value.ndim != 3:
        raise FgradRuntimeError(f"bmm: both arguments must be 3-D batches of matrices, got shapes "
                           f"{tuple(input._value.shape)} and {tuple(mat2._value.shape)}")
    if input._value.shape[0] != mat2._value.shape[0]:
        raise FgradRuntimeError(f"bmm: batch sizes differ: shapes {tuple(input._value.shape)} and "
                           f"{tuple(mat2._value.shape)}")
    return _product("BmmBackward0", input, mat2)


def dot(input, other):
    """torch.dot(input, other): the inner product of two 1-d tensors of one size."""
    if input._value.ndim != 1 or other._value.ndim != 1:
        raise FgradRuntimeError(f"1D tensors expected, but got {input._value.ndim}D and {other._value.ndim}D tensors")
    if input._value.shape != other._value.shape:
        raise FgradRuntimeError(f"inconsistent tensor size, expected tensor [{input._value.shape[0]}] and src "
                           f"[{other._value.shape[0]}] to have the same number of elements, but got "
                           f"{input._value.shape[0]} and {other._value.shape[0]} elements respectively")
    return call("DotBackward0", lambda a, b: fnp.sum(fnp.multiply(a, b, policy=P), policy=P), (input, other))


def inner(input, other):
    """The inner product over the last dimension: result shape input.shape[:-1] +
    other.shape[:-1]; a 0-d operand scales the other (input * other). PyTorch's graph:
    tensordot's, each operand permuted and reshaped to a matrix (a vector when both are 1-D,
    whose product is a dot), an mm (or dot), and a view to the result's shape.

    Args:
        input: a Tensor.
        other: a Tensor whose last dimension is input's (unless one of them is 0-d).

    Returns:
        The Tensor of the products summed over the last dimension.
    """
    input, other = _tensor(input), _tensor(other)
    s1, s2 = tuple(input._value.shape), tuple(other._value.shape)
    if not s1 or not s2:
        return input * other
    if s1[-1] != s2[-1]:
        raise FgradRuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                                f"{list(s1)} and {list(s2)}")
    n1, n2 = len(s1), len(s2)
    t1, t2 = input, other
    if s2[-1] == 1:  # (tensordot sums a dimension of size 1 away at once)
        t1 = t1.sum(-1, keepdim=True)
    k = s1[-1]
    rows, cols = math.prod(s1[:-1]), math.prod(s2[:-1])
    t1 = t1.permute(*range(n1))
    t2 = t2.permute(n2 - 1, *range(n2 - 1))
    if n1 == 1 and n2 == 1:
        return dot(t1, t2).reshape(())
    return t1.reshape(rows, k).mm(t2.reshape(k, cols)).reshape(*s1[:-1], *s2[:-1])


def mv(input, vec):
    """torch.mv(input, vec): a matrix times a vector."""
    return matmul(input, vec)


def outer(input, vec2):
    """PyTorch's outer: input.reshape(-1, 1) * vec2 (a view, then MulBackward0)."""
    return call("MulBackward0", lambda a, b: fnp.multiply(a, b, policy=P), (reshape(input, (-1, 1)), vec2))


ger = outer


def einsum(*args):
    """torch.einsum(equation, *operands) (also the sublist form einsum(op, [dims], op, [dims],
    ..., [out])): the Einstein sum, composed of torch ops as PyTorch's einsum composes it, so its
    graph is PyTorch's: each operand's repeated labels taken as diagonals, missing labels
    unsqueezed and its dims permuted to (output labels, contracted labels); then the operands
    contracted pairwise (left to right, or along opt_einsum's path for three or more operands
    when the opt_einsum package is installed and torch.backends.opt_einsum.enabled), each pair
    a product of permuted, reshaped batches of matrices (bmm), a contracted dim that only one
    side has summed first; finally the contracted (size-1) dims viewed away, or summed for a
    single operand.

    Args:
        *args: the equation and the operand Tensors (or one list of them), or the sublist form.

    Returns:
        The Tensor of the sums.

    Raises:
        RuntimeError: an equation that does not fit the operands (PyTorch's messages).
    """
    if args and not isinstance(args[0], str):
        equation, operands = _sublist_equation(args)
    else:
        equation, operands = args[0], args[1:]
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise FgradRuntimeError("einsum(): must provide at least one operand")
    operands = tuple(_tensor(o) for o in operands)
    path = None
    if len(operands) > 2:
        from .. import backends  # (the switch lives in fgrad.torch.backends, as torch's)
        engine = backends.opt_einsum.get_opt_einsum() if backends.opt_einsum.enabled else None
        if engine is not None:
            steps = engine.contract_path(equation, *[tuple(o._value.shape) for o in operands], shapes=True,
                                         optimize=backends.opt_einsum.strategy)[0]
            path = [int(i) for step in steps for i in step]
    return _einsum(equation, operands, path)


def _sublist_equation(args) -> tuple:
    """(equation, operands) of einsum's sublist form: operand, [dims], operand, [dims], ...,
    optionally [output dims]; a dim is an int in [0, 52) or Ellipsis."""
    def letters(dims):
        out = ""
        for d in dims:
            if d is Ellipsis:
                out += "..."
            elif isinstance(d, (int, np.integer)) and 0 <= d < 52:
                out += chr(ord("A") + d) if d < 26 else chr(ord("a") + d - 26)
            else:
                raise FgradValueError(f"einsum(): expected a subscript in [0, 52) or Ellipsis, got {d!r}")
        return out
    n = len(args) // 2
    operands = tuple(args[2 * i] for i in range(n))
    terms = [letters(args[2 * i + 1]) for i in range(n)]
    equation = ",".join(terms)
    if len(args) % 2:
        equation += "->" + letters(args[-1])
    return equation, operands


_ELLIPSIS = "..."


def _einsum_terms(text: str, where: str) -> list:
    """The labels of one einsum term (spaces ignored), "..." as one item."""
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c == " ":
            i += 1
        elif c == ".":
            if text[i:i + 3] != "..." or _ELLIPSIS in out:
                raise FgradRuntimeError(f"einsum(): found '.' for {where} that is not part of any ellipsis "
                                        "(...), or a second ellipsis")
            out.append(_ELLIPSIS)
            i += 3
        elif c.isascii() and c.isalpha():
            out.append(c)
            i += 1
        else:
            raise FgradRuntimeError(f"einsum(): invalid subscript given at index {i} in the equation string, "
                                    "subscripts must be in [a-zA-Z]")
    return out


def _einsum(equation: str, ops: tuple, path):
    lhs, arrow, rhs = equation.partition("->")
    terms = lhs.split(",")
    if len(terms) < len(ops):
        raise FgradRuntimeError("einsum(): more operands were provided than specified in the equation")
    if len(terms) > len(ops):
        raise FgradRuntimeError("einsum(): fewer operands were provided than specified in the equation")
    labels = [_einsum_terms(t, f"operand {k}") for k, t in enumerate(terms)]
    counts: dict = {}
    ell_nd = 0
    for k, (labs, op) in enumerate(zip(labels, ops)):
        nd, n = op._value.ndim, len([x for x in labs if x is not _ELLIPSIS])
        has_ell = _ELLIPSIS in labs
        if (n > nd) if has_ell else (n != nd):
            raise FgradRuntimeError(
                f"einsum(): the number of subscripts in the equation ({n}) "
                + ("is more than" if has_ell else "does not match") + f" the number of dimensions ({nd}) for "
                f"operand {k}" + ("" if has_ell else " and no ellipsis was given"))
        if has_ell:
            ell_nd = builtins.max(ell_nd, nd - n)
        for x in labs:
            if x is not _ELLIPSIS:
                counts[x] = counts.get(x, 0) + 1
    # every label's position in the aligned operands: the output's dims, then the contracted ones
    where: dict = {}
    ell_at, ell_out, p = 0, False, 0
    if not arrow:
        p, ell_out = ell_nd, True
        for x in sorted(counts):
            if counts[x] == 1:
                where[x], p = p, p + 1
    else:
        for x in _einsum_terms(rhs, "output"):
            if x is _ELLIPSIS:
                ell_at, p, ell_out = p, p + ell_nd, True
                continue
            if counts.get(x, 0) == 0 or x in where:
                raise FgradRuntimeError(f"einsum(): output subscript {x} " + (
                    "appears more than once in the output" if x in where
                    else "does not appear in the equation for any input operand"))
            where[x], p = p, p + 1
    out_nd = p
    if not ell_out:
        ell_at, p = p, p + ell_nd
    for x in sorted(counts):
        if x not in where:
            where[x], p = p, p + 1
    total = p
    # align: diagonals for repeated labels, unsqueezed missing dims, one permute per operand
    sizes: dict = {}
    ell_sizes = [1] * ell_nd
    dim_counts = [0] * total
    aligned = []
    for k, (labs, op) in enumerate(zip(labels, ops)):
        perm = [-1] * total
        d = 0
        for x in labs:
            if x is _ELLIPSIS:
                covered = op._value.ndim - (len(labs) - 1)
                for j in range(ell_nd - covered, ell_nd):
                    size = op._value.shape[d]
                    if size != 1:
                        if ell_sizes[j] not in (1, size):
                            raise FgradRuntimeError(
                                f"einsum(): dimension {d} covered by ellipsis in operand {k} has size {size} which "
                                f"does not broadcast with previously seen ellipsis with size {ell_sizes[j]} for "
                                "the respective dimension")
                        ell_sizes[j] = size
                        dim_counts[ell_at + j] += 1
                    perm[ell_at + j], d = d, d + 1
            elif perm[where[x]] == -1:
                size = op._value.shape[d]
                if size != 1:
                    if sizes.get(x, 1) not in (1, size):
                        raise FgradRuntimeError(
                            f"einsum(): subscript {x} has size {size} for operand {k} which does not broadcast "
                            f"with previously seen size {sizes[x]}")
                    sizes[x] = size
                    dim_counts[where[x]] += 1
                perm[where[x]], d = d, d + 1
            else:  # a repeated label: its diagonal, in the first one's place
                prev = perm[where[x]]
                if op._value.shape[d] != op._value.shape[prev]:
                    raise FgradRuntimeError(
                        f"einsum(): subscript {x} is repeated for operand {k} but the sizes don't match, "
                        f"{op._value.shape[d]} != {op._value.shape[prev]}")
                op = op.diagonal(0, prev, d).movedim(-1, prev)
        for i in range(total):
            if perm[i] == -1:
                op, perm[i], d = op.unsqueeze(d), d, d + 1
        aligned.append(op.permute(perm))
    # contract pairwise: a dim is summed in the product that leaves no other operand with it
    pending = list(aligned)
    steps = iter(path or ())
    while len(pending) > 1:
        i, j = 0, 1
        if path is not None:
            i, j = next(steps), next(steps)
            i, j = builtins.min(i, j), builtins.max(i, j)
        a, b = pending[i], pending[j]
        del pending[j], pending[i]
        both, a_only, b_only = [], [], []
        for dim in range(out_nd, total):
            sa, sb = a._value.shape[dim] != 1, b._value.shape[dim] != 1
            if sa and sb:
                dim_counts[dim] -= 1
                if dim_counts[dim] == 1:
                    both.append(dim)
                    dim_counts[dim] = 0
            elif dim_counts[dim] == 1:
                if sa:
                    a_only.append(dim)
                    dim_counts[dim] = 0
                elif sb:
                    b_only.append(dim)
                    dim_counts[dim] = 0
        if a_only:
            a = a.sum(a_only, keepdim=True)
        if b_only:
            b = b.sum(b_only, keepdim=True)
        product = _sum_of_products(a, b, both)
        if path is not None:
            pending.append(product)
        else:
            pending.insert(0, product)
    out = pending[0]
    if total > out_nd:
        if len(ops) > 1:  # the contracted dims are all 1 by now
            return out.view(tuple(out._value.shape[:out_nd]))
        return out.sum(list(range(out_nd, total)))
    return out


def _sum_of_products(left, right, summed: list):
    """(left * right).sum(summed, keepdim=True) for aligned operands of one rank, as PyTorch's
    einsum computes it: dims in both (and the output) are the batch of one bmm, dims in one
    side only its rows or columns, the summed dims in both its inner dimension; a summed dim
    that only one side has is summed there first. No summed dim: a plain product."""
    if not summed:
        return left * right
    both, lo, ro = [], [], []
    sizes = [1, 1, 1, 1]  # (both, left only, right only, summed)
    for i in range(left._value.ndim):
        nl, nr = left._value.shape[i], right._value.shape[i]
        if i in summed:
            if nl != 1 and nr != 1:
                if nl != nr:
                    raise FgradRuntimeError("einsum(): non-broadcast dimensions must match")
                sizes[3] *= nl
            elif nl != 1:
                left = left.sum(i, keepdim=True)
            elif nr != 1:
                right = right.sum(i, keepdim=True)
        elif nl != 1 and nr != 1:
            if nl != nr:
                raise FgradRuntimeError("einsum(): non-broadcast dimensions must match")
            both.append(i)
            sizes[0] *= nl
        elif nl != 1:
            lo.append(i)
            sizes[1] *= nl
        else:
            ro.append(i)
            sizes[2] *= nr
    if lo and ro and ro[-1] < lo[0]:  # (PyTorch swaps the sides: the product comes out in order)
        left, right, lo, ro = right, left, ro, lo
        sizes[1], sizes[2] = sizes[2], sizes[1]
    out_size = ([left._value.shape[d] for d in both] + [left._value.shape[d] for d in lo] + [1] * len(summed)
                + [right._value.shape[d] for d in ro])
    order = both + lo + summed + ro
    back = [0] * len(order)
    for pos, d in enumerate(order):
        back[d] = pos
    lhs = left.permute(order).reshape(sizes[0], sizes[1], sizes[3])
    rhs = right.permute(both + summed + ro + lo).reshape(sizes[0], sizes[3], sizes[2])
    return bmm(lhs, rhs).view(out_size).permute(back)


# --- copies and conversions -------------------------------------------------------------------------

def _copy_value(v):
    """A new array equal to `v`: v + (-0.0), which keeps -0.0 (as PyTorch's clone), and whose
    rule reads no value (an in-place change of `v` later leaves the gradient valid)."""
    kind = v.dtype.kind
    if kind == "b":
        return xlax.logical_or(v, np.bool_(False))
    zero = complex(-0.0, -0.0) if kind == "c" else -0.0 if kind == "f" else 0
    return xlax.add(v, v.dtype.type(zero))


def clone(input, *, memory_format=None):
    """torch.clone(input, memory_format=torch.preserve_format): a copy with its own storage
    (CloneBackward0), laid out as `input` (preserve_format) or in the format given."""
    fmt = preserve_format if memory_format is None else _memory_format(memory_format, "clone")
    _check_rank(input, fmt)
    v = input._value
    # (the copy without a node; not for a dual tensor, whose tangent the boundary carries over)
    if not input._requires_grad and FORWARD_AD[0] is None and (type(v) is _nd or hasattr(v, "__cuda_array_interface__")):
        if type(v) is _nd and fmt is preserve_format and not v.flags.c_contiguous:
            same = empty_preserving(v)  # (one copy, straight into PyTorch's layout for it)
            same[...] = v
            return _make(same)
        out = _make(v.copy())
    else:
        out = call("CloneBackward0", _copy_value, (input,))
    if type(v) is _nd and type(out._value) is _nd:
        if fmt is preserve_format:
            if not v.flags.c_contiguous:  # (PyTorch's layout for a copy: see empty_preserving)
                same = empty_preserving(v, out._value.dtype)
                same[...] = out._value
                out._value = same
            elif not out._value.flags.c_contiguous:
                out._value = np.ascontiguousarray(out._value)
            return out
        if fmt is not contiguous_format or not out._value.flags.c_contiguous:
            out._value = laid_out(out._value, fmt)
    return out


def _check_rank(input, fmt) -> None:
    """Raise unless `input` has the rank the channels-last format `fmt` is defined for."""
    order = CHANNELS_LAST_ORDER.get(fmt)
    if order is not None and input.ndim != len(order):
        raise FgradRuntimeError(f"required rank {len(order)} tensor to use {fmt.name} format; this tensor "
                                f"has shape {tuple(input.shape)}")


def _to_dtype(input, npd):
    """`input` as the NumPy dtype `npd`: itself when it has it (as PyTorch), else a copy
    (ToCopyBackward0)."""
    if input._value.dtype == npd:
        return input
    npd = np.dtype(npd)
    rule = _FLOAT8_INPUT_RULES.get(npd.name) if npd.itemsize == 1 else None
    if rule is not None and input._value.dtype.kind in "fiu" and type(input._value) is _nd:
        # PyTorch's rounding into these two formats differs from the plain cast: float8_e4m3fn
        # saturates at +-448 (infinities included), float8_e8m0fnu (exponent only) drops the
        # sign and takes zero to its smallest value
        return _make(rule(input._value.astype(np.float32)).astype(npd))
    return _tensor_bind(lax.convert_element_type_p, (input,), {"new_dtype": npd})


def _saturate_e4m3fn(v):
    return np.clip(v, -448.0, 448.0)


def _e8m0_magnitude(v):
    v = np.abs(v)
    return np.where(v == 0, np.float32(2.0 ** -127), v)


_FLOAT8_INPUT_RULES = {"float8_e4m3fn": _saturate_e4m3fn, "float8_e8m0fnu": _e8m0_magnitude}  # (by NumPy name)


def to(input, *args, dtype=None, device=None, non_blocking: bool = False, copy: bool = False,
       memory_format=None, **kwargs):
    """to(dtype) / to(device) / to(device, dtype) / to(other_tensor); memory_format= lays the
    result out in that format (a copy unless it is already)."""
    for a in args:
        if isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif isinstance(a, (str, device_cls)):
            device = a
        elif isinstance(a, int) and not isinstance(a, bool):
            device = device_cls("cuda", a)
        else:
            dtype = a
    out = input
    if device is not None:
        dev = resolved(as_device(device))
        if dev != out.device:  # already there: the tensor itself, as PyTorch
            out = to_meta(out) if dev.type == "meta" else to_device(out, dev)
    if dtype is not None:
        out = _to_dtype(out, D.np_dtype(dtype))
    if memory_format is not None:
        fmt = _memory_format(memory_format, "to")
        if fmt is not preserve_format:
            _check_rank(out, fmt)
            if not is_contiguous(out, fmt):
                out = clone(out, memory_format=fmt)
    if copy and out is input:
        out = clone(input)
    return out


def type_as(input, other):
    """Tensor.type_as(other): this tensor in other's dtype."""
    return _to_dtype(input, other._value.dtype)


def _caster(npdt):
    def conv(self, memory_format=None):
        return _to_dtype(self, np.dtype(npdt))
    return conv


def tensor_type(self, dtype=None, non_blocking=False):
    """Tensor.type(dtype=None): the type name ("torch.FloatTensor") without `dtype`; else this
    tensor converted to it (a dtype, a legacy class or its name)."""
    if dtype is None:
        return ("torch.cuda." if self.device.type == "cuda" else "torch.") + self.dtype._torch
    if isinstance(dtype, type) and issubclass(dtype, Tensor):  # x.type(fgrad.torch.FloatTensor)
        dtype = dtype.__name__
    if isinstance(dtype, str):
        name = dtype.split(".")[-1]
        for d in D.ALL:
            if d._torch == name:
                return _to_dtype(self, d.dtype)
    return _to_dtype(self, D.np_dtype(dtype))


def contiguous(input, memory_format=None):
    """Tensor.contiguous(memory_format=torch.contiguous_format): `input` itself if it is laid
    out in that format already, else a copy that is (CloneBackward0).

    Raises:
        RuntimeError: channels_last on a tensor that is not 4-d (channels_last_3d: 5-d).
        TypeError: memory_format is not a torch.memory_format.
    """
    fmt = _memory_format(memory_format, "contiguous")
    _check_rank(input, fmt)
    if is_contiguous(input, fmt):
        return input
    return clone(input, memory_format=fmt)


def _close(np_fn, input, other, rtol, atol, equal_nan):
    """np.allclose / np.isclose (`np_fn`) of two tensors that broadcast together (shape errors
    name both shapes)."""
    name = np_fn.__name__
    b = _operand(other)
    a, b = input.detach().cpu().numpy(), (b.detach().cpu().numpy() if isinstance(b, Tensor) else np.asarray(b))
    if b.dtype.kind not in "biufc":
        raise FgradTypeError(f"{name}: cannot compare with {type(other).__name__} {other!r:.40} (not a number "
                        "that fits 64 bits, or not numeric)")
    _broadcast_shapes(name, a.shape, b.shape, policy=P)
    return np_fn(a, b, rtol=float(rtol), atol=float(atol), equal_nan=equal_nan)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    """torch.allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False): whether every
    |input - other| <= atol + rtol * |other|."""
    return bool(_close(np.allclose, input, other, rtol, atol, equal_nan))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """torch.isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False): per entry, whether
    |input - other| <= atol + rtol * |other| (a bool tensor)."""
    return _make(_close(np.isclose, input, other, rtol, atol, equal_nan))


def equal(input, other) -> bool:
    """torch.equal(input, other): whether both have the same shape and the same values."""
    a, b = input.detach().cpu().numpy(), _tensor(other).detach().cpu().numpy()
    return a.shape == b.shape and bool((a == b).all())


def numel(input) -> int:
    """The number of elements of `input` (PyTorch's torch.numel).

    Args:
        input: a Tensor.

    Returns:
        An int.
    """
    return input.numel()
