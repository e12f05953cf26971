"""Tensor shape ops, indexing, linear algebra and conversions with PyTorch's names and
semantics (the elementwise maths and reductions are in _ops.py; the same principle holds:
map PyTorch's arguments onto fgrad.numpy and the lax-level ops, in PyTorch's dialect)."""
from __future__ import annotations

import builtins
import math

import numpy as np

from ... import numpy as fnp
from ...core.errors import FgradIndexError, FgradRuntimeError, FgradTypeError
from ...core.trace import Tracer, _state
from ...numpy._policy import TORCH as P
from ...numpy._shape import resolve_shape
from ...numpy._util import broadcast_shapes as _broadcast_shapes
from ...numpy._util import cast, ints_arg, normalize_axes
from ...ops import elementwise as ew
from ...ops import shape as sh
from . import _dtypes as D
from ._device import as_device, is_cupy, resolved
from ._device import device as device_cls
from ._ops import _operand, _sort_t, _tensor, _topk_t, mul, named, sum, unsqueeze, where
from .function import to_device
from .tensor import Tensor, _dim, _make, check_inplace, commit_inplace, mark_view

_nd = np.ndarray


# --- shape -------------------------------------------------------------------------------------------

def _sizes(args, name: str) -> tuple:
    """PyTorch's sizes: f(2, 3) or f((2, 3)), as a tuple of ints."""
    return ints_arg(args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else args, name, "size")


def broadcast_shapes(*shapes) -> tuple:
    return _broadcast_shapes("broadcast_shapes", *shapes, policy=P)


def reshape(input, *shape):
    shape = resolve_shape(_sizes(shape, "view"), tuple(input._value.shape), "view", policy=P)
    # bound even when the shape is unchanged: like PyTorch, the result is a new (view) tensor
    return sh.reshape_p.bind(input, new_sizes=shape)


VIEW_STRIDE_MESSAGE = ("view size is not compatible with input tensor's size and stride (at least one dimension "
                       "spans across two contiguous subspaces). Use .reshape(...) instead.")


def view(input, *shape):
    """`input` with another shape, sharing its storage; PyTorch's error where the strides
    cannot express it (reshape() copies there instead)."""
    if len(shape) == 1 and not isinstance(shape[0], (int, np.integer, tuple, list, Tensor)):
        return _view_dtype(input, shape[0])
    shape = resolve_shape(_sizes(shape, "view"), tuple(input._value.shape), "view", policy=P)
    v = input._value
    if type(v) is _nd and not v.flags.c_contiguous:
        try:
            v.reshape(shape, copy=False)
        except ValueError:
            raise FgradRuntimeError(VIEW_STRIDE_MESSAGE) from None
    return sh.reshape_p.bind(input, new_sizes=shape)


def _view_dtype(input, dtype):
    """x.view(dtype): the same bytes read as another dtype of the same size (no gradient)."""
    npd = D.np_dtype(dtype)
    v = input._value
    if npd.itemsize != v.dtype.itemsize:
        raise FgradRuntimeError(f"view(dtype): {input.dtype} and {dtype} differ in element size; fgrad only "
                           "reinterprets between dtypes of the same size")
    return _make(v.view(npd), None, False, input._vbox)


def is_contiguous(input, memory_format=None) -> bool:
    v = input._value
    return v.flags.c_contiguous if type(v) is _nd else True
def flatten(input, start_dim: int = 0, end_dim: int = -1):
    shape = tuple(input._value.shape)
    if not shape:
        return reshape(input, 1)
    s, e = _dim(start_dim, len(shape)), _dim(end_dim, len(shape))
    if s > e:
        raise FgradRuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    return reshape(input, shape[:s] + (math.prod(shape[s:e + 1]),) + shape[e + 1:])


def unflatten(input, dim, sizes):
    shape = tuple(input._value.shape)
    d = _dim(dim, len(shape))
    sizes = resolve_shape(_sizes((sizes,), "unflatten"), shape[d:d + 1], "unflatten", policy=P)
    return reshape(input, shape[:d] + sizes + shape[d + 1:])


def squeeze(input, dim=None):
    """`input` without its dims of size 1 (those of `dim`); a dim of another size stays."""
    shape = tuple(input._value.shape)
    dims = range(len(shape)) if dim is None else normalize_axes(dim, len(shape), "squeeze", policy=P)
    new = tuple(s for i, s in enumerate(shape) if not (i in dims and s == 1))
    return named(sh.reshape_p.bind(input, new_sizes=new), "SqueezeBackward0" if dim is None else "SqueezeBackward1",
                 input)


def permute(input, *dims):
    return fnp.transpose(input, _sizes(dims, "permute"), policy=P)


def transpose(input, dim0: int, dim1: int):
    nd = input._value.ndim
    if nd == 0:
        return input
    perm = list(range(nd))
    i, j = _dim(dim0, nd), _dim(dim1, nd)
    perm[i], perm[j] = perm[j], perm[i]
    return named(sh.transpose_p.bind(input, permutation=tuple(perm)), "TransposeBackward0", input)


swapaxes = swapdims = transpose


def t(input):
    nd = input._value.ndim
    if nd > 2:
        raise FgradRuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {nd}D")
    return named(transpose(input, 0, 1), "TBackward0", input) if nd == 2 else input


def expand(input, *sizes):
    """`input` broadcast to `sizes`; -1 keeps an existing dimension's size."""
    sizes = _sizes(sizes, "expand")
    shape = tuple(input._value.shape)
    lead = len(sizes) - len(shape)
    target = tuple(shape[i - lead] if s == -1 and i >= lead else s for i, s in enumerate(sizes))
    if -1 in target:
        raise FgradRuntimeError(f"expand: -1 is not allowed in a leading, non-existing dimension {target.index(-1)}")
    return fnp.broadcast_to(input, target, policy=P)


def expand_as(input, other):
    return expand(input, tuple(other._value.shape))


def broadcast_to(input, shape):
    return expand(input, tuple(shape))


def repeat(input, *sizes):
    reps = _sizes(sizes, "repeat")
    if len(reps) < input._value.ndim:
        raise FgradRuntimeError("Number of dimensions of repeat dims can not be smaller than number of "
                           "dimensions of tensor")
    return fnp.tile(input, reps)


def cat(tensors, dim: int = 0):
    # PyTorch's legacy rule: 1-D empty tensors are skipped
    tensors = [_tensor(x) for x in tensors]
    out = fnp.concatenate([x for x in tensors if x._value.shape != (0,)] or tensors[:1], axis=dim, policy=P)
    return clone(out) if builtins.any(out is x for x in tensors) else out


concat = concatenate = cat


def stack(tensors, dim: int = 0):
    tensors = [_tensor(x) for x in tensors]
    return named(fnp.stack(tensors, axis=dim, policy=P), "StackBackward0", *tensors)


def hstack(tensors):
    return fnp.hstack([_tensor(x) for x in tensors], policy=P)


def vstack(tensors):
    return fnp.vstack([_tensor(x) for x in tensors], policy=P)


def narrow(input, dim: int, start: int, length: int):
    shape = tuple(input._value.shape)
    d = _dim(dim, len(shape))
    start = start % shape[d] if start < 0 else start
    if start + length > shape[d] or length < 0:
        raise FgradRuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({shape[d]}).")
    lo = [0] * len(shape)
    hi = list(shape)
    lo[d], hi[d] = start, start + length
    return sh.slice(input, lo, hi)


def split(tensor, split_size_or_sections, dim: int = 0):
    shape = tuple(tensor._value.shape)
    d = _dim(dim, len(shape))
    n = shape[d]
    if isinstance(split_size_or_sections, (int, np.integer)):
        size = int(split_size_or_sections)
        if size <= 0 and n:
            raise FgradRuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
        sizes = [size] * (n // size) + ([n % size] if n % size else []) if size else [0]
    else:
        sizes = [int(s) for s in split_size_or_sections]
        if builtins.sum(sizes) != n:
            raise FgradRuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's "
                               f"size at dimension {d}), but got split_sizes={sizes}")
    return tensor_split(tensor, np.cumsum(sizes)[:-1].tolist(), d)


def _multi_views(outs, name: str) -> tuple:
    """Views made by a function returning several (unbind, split...): PyTorch refuses to
    modify them in place in a graph, or to use them after their base was."""
    for o in outs:
        if o._view is not None:
            o._view[2] = name
    return tuple(outs)


def tensor_split(input, indices_or_sections, dim: int = 0):
    return _multi_views(fnp.array_split(input, indices_or_sections, axis=dim, policy=P), "SplitBackward0")


def chunk(input, chunks: int, dim: int = 0):
    if chunks <= 0:
        raise FgradRuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    n = input._value.shape[_dim(dim, input._value.ndim)]
    size = -(-n // chunks) if n else 1
    return split(input, size, dim)


def diagonal(input, offset: int = 0, dim1: int = 0, dim2: int = 1):
    """A view of the diagonal (writes through to `input`, as in PyTorch)."""
    out = named(fnp.diagonal(input, offset, dim1, dim2), "DiagonalBackward0", input)
    v = input._value
    if type(v) is _nd:  # fgrad.numpy's diagonal gathers a copy: stand a strided view in for it
        d = np.diagonal(v, offset, dim1, dim2)
        d.flags.writeable = v.flags.writeable
        out._value = d
        mark_view(out, input)
    return out


def trace(input):
    return named(sum(fnp.diagonal(input)), "TraceBackward0", input)


def unbind(input, dim: int = 0):
    d = _dim(dim, input._value.ndim)
    return _multi_views([squeeze(p, d) for p in split(input, 1, d)], "UnbindBackward0")


def select(input, dim: int, index: int):
    """The slice at `index` along `dim`, without that dim (a view, like input[..., index])."""
    d = _dim(dim, input._value.ndim)
    n = input._value.shape[d]
    if not -n <= index < n:
        raise FgradIndexError(f"select(): index {index} out of range for tensor of size {list(input._value.shape)} "
                         f"at dimension {d}")
    return named(getitem(input, (slice(None),) * d + (index,)), "SelectBackward0", input)


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


def getitem(input, idx):
    out = fnp.getitem(input, _raw_index(idx))
    # PyTorch's grad_fn for the two commonest indexings: x[i] and x[a:b]
    if isinstance(idx, (int, np.integer)) and not isinstance(idx, bool):
        return named(out, "SelectBackward0", input)
    if isinstance(idx, slice):
        return named(out, "SliceBackward0", input)
    return out


def _concrete(v):
    """A concrete array for an index computation (values of indices are not differentiated)."""
    while isinstance(v, Tracer):
        v = v._concrete("Using a traced value as an index")
    return v


def setitem(t, idx, value) -> None:
    check_inplace(t)
    idx = _raw_index(idx)
    value = _operand(value)
    vreq = isinstance(value, Tensor) and value._requires_grad
    if not _state.grad_enabled or not (t._requires_grad or vreq):
        tv = t._value
        if (type(tv) is _nd and tv.flags.writeable) or is_cupy(tv):
            tv[idx] = value._value if isinstance(value, Tensor) else value
            t._vbox[0] += 1
            return
    # through the graph: the functional index update (x.at[idx].set(v)), written back in place
    commit_inplace(t, fnp.at_set(t, idx, cast(value, t._value.dtype)))


def _index(index, name: str | None = None):
    """`index` as an array of indices (concrete or traced); with `name`, one of integers
    (PyTorch's error for `name` otherwise)."""
    v = index._value if isinstance(index, Tensor) else np.asarray(index)
    if name is not None and v.dtype.kind not in "iu":
        raise FgradRuntimeError(f"{name}(): Expected dtype int64 for index (got {v.dtype}); index tensors hold "
                                "integers (convert with .long())")
    return v


def gather(input, dim: int, index):
    idx = _index(index)
    if idx.ndim != input._value.ndim:
        raise FgradRuntimeError(f"Index tensor must have the same number of dimensions as input tensor "
                           f"(index shape {tuple(idx.shape)}, input shape {tuple(input._value.shape)})")
    return fnp.take_along_axis(input, idx, axis=_dim(dim, input._value.ndim))


def index_select(input, dim: int, index):
    idx = _index(index)
    if idx.ndim > 1:
        raise FgradIndexError("index_select(): Index is supposed to be a vector")
    return fnp.take(input, idx, axis=_dim(dim, input._value.ndim))


def take(input, index):
    return fnp.take(fnp.ravel(input), _index(index), axis=0)


def _bool_mask(mask, name: str) -> Tensor:
    """`mask` as a Tensor, which must be boolean (PyTorch's error for `name`_ otherwise)."""
    m = _tensor(mask)
    if m._value.dtype.kind != "b":
        raise FgradRuntimeError(f"{name}_ only supports boolean masks, but got mask with dtype {m.dtype}")
    return m


def _fill_value(value, dtype, name: str):
    """A fill value (a number or a 0-d tensor; PyTorch's error for `name`_ otherwise) as `dtype`."""
    if isinstance(value, Tensor) and value._value.ndim != 0:
        raise FgradRuntimeError(f"{name}_ only supports a 0-dimensional value tensor, but got tensor with "
                                f"{value._value.ndim} dimension(s).")
    return cast(_operand(value), dtype)


def masked_fill(input, mask, value):
    m = _bool_mask(mask, "masked_fill")
    return named(where(m, _fill_value(value, input._value.dtype, "masked_fill"), input), "MaskedFillBackward0",
                 input)


def masked_select(input, mask):
    m = _tensor(mask)
    shape = broadcast_shapes(input._value.shape, m._value.shape)
    return getitem(fnp.broadcast_to(input, shape, policy=P), fnp.broadcast_to(m, shape, policy=P))


def nonzero(input, *, as_tuple: bool = False):  # (argwhere: the same, as_tuple=False)
    v = _concrete(_tensor(input)._value)
    xp = np if type(v) is _nd else __import__("cupy")
    if as_tuple:
        return tuple(_make(i.astype(np.int64)) for i in xp.atleast_1d(v).nonzero())
    return _make(xp.argwhere(v).astype(np.int64))


argwhere = nonzero


def sort(input, dim: int = -1, descending: bool = False, stable: bool = False):
    """(values, indices) along `dim`; always stable, as fgrad.numpy.sort."""
    order = argsort(input, dim, descending)
    if not input._value.ndim:
        return _sort_t(input, order)
    return _sort_t(named(fnp.take_along_axis(input, order, _dim(dim, input._value.ndim)), "SortBackward0",
                         input), order)


def argsort(input, dim: int = -1, descending: bool = False, stable: bool = False):
    d = _dim(dim, input._value.ndim)
    if not input._value.ndim:  # PyTorch: 0-d in, 0-d out (NumPy's argsort gives shape (1,))
        return fnp.reshape(fnp.argsort(input, policy=P), ())
    return fnp.argsort(input, d, descending=descending, policy=P)


def topk(input, k: int, dim: int = -1, largest: bool = True, sorted: bool = True):
    d = _dim(dim, input._value.ndim)
    n = input._value.shape[d] if input._value.ndim else 1
    if not 0 <= k <= n:
        raise FgradRuntimeError(f"selected index k out of range (k={k}, size {n} at dim {d})")
    if not input._value.ndim:
        return _topk_t(*sort(input))
    idx = narrow(argsort(input, d, largest), d, 0, k)
    return _topk_t(named(fnp.take_along_axis(input, idx, d), "TopkBackward0", input), idx)


# --- linear algebra ------------------------------------------------------------------------------

def matmul(input, other):
    if getattr(input, "is_sparse", False):  # a sparse COO matrix (fgrad.torch.sparse): its own product
        return input.mm(other)
    if getattr(other, "is_sparse", False):  # dense @ sparse = (sparse^T @ dense^T)^T
        if input._value.ndim == 1:
            return other.t().mm(input)
        return transpose(other.t().mm(transpose(input, 0, 1)), 0, 1)
    return fnp.matmul(_tensor(input), _tensor(other), policy=P)


def mm(input, mat2):
    if getattr(input, "is_sparse", False) or getattr(mat2, "is_sparse", False):
        return matmul(input, mat2)
    if input._value.ndim != 2 or mat2._value.ndim != 2:
        raise FgradRuntimeError(f"mm: both arguments must be matrices (2-D), got shapes "
                           f"{tuple(input._value.shape)} and {tuple(mat2._value.shape)}")
    return matmul(input, mat2)


def bmm(input, mat2):
    if input._value.ndim != 3 or mat2._value.ndim != 3:
        raise FgradRuntimeError(f"bmm: both arguments must be 3-D batches of matrices, got shapes "
                           f"{tuple(input._value.shape)} and {tuple(mat2._value.shape)}")
    if input._value.shape[0] != mat2._value.shape[0]:
        raise FgradRuntimeError(f"bmm: batch sizes differ: shapes {tuple(input._value.shape)} and "
                           f"{tuple(mat2._value.shape)}")
    return matmul(input, mat2)


def dot(input, other):
    if input._value.ndim != 1 or other._value.ndim != 1:
        raise FgradRuntimeError(f"1D tensors expected, but got {input._value.ndim}D and {other._value.ndim}D tensors")
    if input._value.shape != other._value.shape:
        raise FgradRuntimeError(f"inconsistent tensor size, expected tensor [{input._value.shape[0]}] and src "
                           f"[{other._value.shape[0]}] to have the same number of elements, but got "
                           f"{input._value.shape[0]} and {other._value.shape[0]} elements respectively")
    return sum(mul(input, other))


inner = dot
mv = matmul


def outer(input, vec2):
    return mul(unsqueeze(input, 1), unsqueeze(vec2, 0))


ger = outer


def einsum(equation, *operands):
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    return fnp.einsum(equation, *operands)


# --- copies and conversions -------------------------------------------------------------------------

def clone(input, *, memory_format=None):
    v = input._value
    if not input._requires_grad and (type(v) is _nd or hasattr(v, "__cuda_array_interface__")):
        return _make(v.copy())
    out = ew.add(input, v.dtype.type(0)) if v.dtype.kind != "b" else ew.logical_or(input, np.bool_(False))
    return named(out, "CloneBackward0", input)


def to(input, *args, dtype=None, device=None, non_blocking: bool = False, copy: bool = False, **kwargs):
    """to(dtype) / to(device) / to(device, dtype) / to(other_tensor)."""
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
            out = to_device(out, dev)
    if dtype is not None:
        out = cast(out, D.np_dtype(dtype))
    if copy and out is input:
        out = clone(input)
    return out


def type_as(input, other):
    return cast(input, other._value.dtype)


def _caster(npdt):
    def conv(self, memory_format=None):
        return cast(self, np.dtype(npdt))
    return conv


def tensor_type(self, dtype=None, non_blocking=False):
    if dtype is None:
        return ("torch.cuda." if self.device.type == "cuda" else "torch.") + self.dtype._torch
    if isinstance(dtype, type) and issubclass(dtype, Tensor):  # x.type(fgrad.torch.FloatTensor)
        dtype = dtype.__name__
    if isinstance(dtype, str):
        name = dtype.split(".")[-1]
        for d in D.ALL:
            if d._torch == name:
                return cast(self, d.dtype)
    return cast(self, D.np_dtype(dtype))


def contiguous(input, memory_format=None):
    """`input` itself if its storage is contiguous, else a contiguous copy."""
    if is_contiguous(input):
        return input
    out = clone(input)
    out._value = np.ascontiguousarray(out._value)
    return out


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
    return bool(_close(np.allclose, input, other, rtol, atol, equal_nan))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return _make(_close(np.isclose, input, other, rtol, atol, equal_nan))


def equal(input, other) -> bool:
    a, b = input.detach().cpu().numpy(), _tensor(other).detach().cpu().numpy()
    return a.shape == b.shape and bool((a == b).all())


def numel(input) -> int:
    return input.numel()
