"""Tensor shape ops, indexing, linear algebra and conversions with PyTorch names and
semantics (the elementwise maths and reductions are in _ops.py; the same principles hold:
settle PyTorch's conventions, then call fgrad.numpy / the lax-level ops)."""
from __future__ import annotations

import builtins

import numpy as np

from .. import numpy as fnp
from ..core.trace import Tracer
from ..ops import elementwise as ew
from ..ops import shape as sh
from . import _dtypes as D
from ._ops import (_cast, _expand_to, _make, _operand, _shape, _sort_t, _tensor, _topk_t, broadcast_shapes, mul,
                   named, sum)
from .tensor import Tensor, _dim, check_inplace, commit_inplace

_nd = np.ndarray


# --- shape -------------------------------------------------------------------------------------------

def _sizes(args) -> tuple:
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    return tuple(int(a) for a in args)


def reshape(input, *shape):
    shape = _sizes(shape)
    size = input._value.size
    known = 1
    for d in shape:
        if d != -1:
            known *= d
    if shape.count(-1) > 1 or (-1 not in shape and known != size) or (-1 in shape and (known == 0 or size % known)):
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {size} "
                           f"(input shape {tuple(input._value.shape)})")
    if -1 in shape:
        shape = tuple(size // known if d == -1 else d for d in shape)
    # bound even when the shape is unchanged: like PyTorch, the result is a new (view) tensor
    return sh.reshape_p.bind(input, new_sizes=shape)


def view(input, *shape):
    return reshape(input, *shape)


def flatten(input, start_dim: int = 0, end_dim: int = -1):
    shape = tuple(input._value.shape)
    if not shape:
        return reshape(input, 1)
    s, e = _dim(start_dim, len(shape)), _dim(end_dim, len(shape))
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    n = 1
    for d in shape[s:e + 1]:
        n *= d
    return reshape(input, shape[:s] + (n,) + shape[e + 1:])


def unflatten(input, dim, sizes):
    shape = tuple(input._value.shape)
    d = _dim(dim, len(shape))
    sizes = list(sizes)
    if -1 in sizes:
        known = 1
        for s in sizes:
            if s != -1:
                known *= s
        sizes[sizes.index(-1)] = shape[d] // known
    return reshape(input, shape[:d] + tuple(sizes) + shape[d + 1:])


def unsqueeze(input, dim: int):
    shape = list(input._value.shape)
    n = len(shape) + 1
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    shape.insert(dim % n, 1)
    return named(sh.reshape_p.bind(input, new_sizes=tuple(shape)), "UnsqueezeBackward0", input)


def squeeze(input, dim=None):
    shape = tuple(input._value.shape)
    if dim is None:
        new = tuple(s for s in shape if s != 1)
    else:
        dims = {_dim(d, len(shape)) for d in (dim if isinstance(dim, (tuple, list)) else (dim,))}
        new = tuple(s for i, s in enumerate(shape) if not (i in dims and s == 1))
    return named(sh.reshape_p.bind(input, new_sizes=new), "SqueezeBackward0" if dim is None else "SqueezeBackward1",
                 input)


def permute(input, *dims):
    dims = _sizes(dims)
    nd = input._value.ndim
    if len(dims) != nd:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match "
                           f"the length of the desired ordering of dimensions i.e. input.dim() = {nd} is not "
                           f"equal to len(dims) = {len(dims)}")
    perm = tuple(_dim(d, nd) for d in dims)
    if sorted(perm) != list(range(nd)):
        raise RuntimeError(f"permute(): duplicate dims are not allowed (got {dims})")
    return sh.transpose(input, perm)


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
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {nd}D")
    return named(transpose(input, 0, 1), "TBackward0", input) if nd == 2 else input


def movedim(input, source, destination):
    return fnp.moveaxis(input, source, destination)


moveaxis = movedim


def expand(input, *sizes):
    sizes = _sizes(sizes)
    shape = tuple(input._value.shape)
    if len(sizes) < len(shape):
        raise RuntimeError(f"expand: the number of sizes provided ({len(sizes)}) must be greater or equal "
                           f"to the number of dimensions in the tensor ({len(shape)})")
    lead = len(sizes) - len(shape)
    target = []
    for i, s in enumerate(sizes):
        if s == -1:
            if i < lead:
                raise RuntimeError(f"expand: -1 is not allowed in a leading, non-existing dimension {i}")
            s = shape[i - lead]
        elif i >= lead and shape[i - lead] not in (1, s):
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing size "
                               f"({shape[i - lead]}) at non-singleton dimension {i}.  Target sizes: "
                               f"{list(sizes)}.  Tensor sizes: {list(shape)}")
        target.append(s)
    return fnp.broadcast_to(input, tuple(target))


def expand_as(input, other):
    return expand(input, tuple(other._value.shape))


def broadcast_to(input, shape):
    return expand(input, tuple(shape))


def repeat(input, *sizes):
    """Tile: broadcast each dim d of size s to (r, s) and merge (differentiable, no new rule)."""
    reps = _sizes(sizes)
    shape = tuple(input._value.shape)
    if len(reps) < len(shape):
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of "
                           "dimensions of tensor")
    shape = (1,) * (len(reps) - len(shape)) + shape
    x = sh.reshape(input, tuple(d for s in shape for d in (1, s)))
    x = fnp.broadcast_to(x, tuple(d for r, s in zip(reps, shape) for d in (r, s)))
    return sh.reshape(x, tuple(r * s for r, s in zip(reps, shape)))


def cat(tensors, dim: int = 0):
    tensors = [_tensor(x) for x in tensors]
    if not tensors:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    tensors = [x for x in tensors if not (x._value.ndim == 1 and x._value.shape[0] == 0)] or tensors[:1]
    nd = tensors[0]._value.ndim
    if nd == 0:
        raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
    d = _dim(dim, nd)
    first = tuple(tensors[0]._value.shape)
    for k, x in enumerate(tensors[1:], 1):
        s = tuple(x._value.shape)
        if len(s) != nd:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {nd} and {len(s)} "
                               f"(shapes {first} and {s})")
        for i in range(nd):
            if i != d and s[i] != first[i]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size "
                                   f"{first[i]} but got size {s[i]} for tensor number {k} in the list "
                                   f"(shapes {first} and {s})")
    dt = D.result_type(*tensors) if len({x._value.dtype for x in tensors}) > 1 else tensors[0]._value.dtype
    tensors = [_cast(x, dt) for x in tensors]
    if len(tensors) == 1:
        return clone(tensors[0])
    return sh.concatenate(tensors, d)


concat = concatenate = cat


def stack(tensors, dim: int = 0):
    tensors = [_tensor(x) for x in tensors]
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    first = tuple(tensors[0]._value.shape)
    for k, x in enumerate(tensors[1:], 1):
        if tuple(x._value.shape) != first:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(first)} at entry 0 "
                               f"and {list(x._value.shape)} at entry {k}")
    n = len(first) + 1
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return named(cat([unsqueeze(x, dim % n) for x in tensors], dim % n), "StackBackward0", *tensors)


def hstack(tensors):
    tensors = [_tensor(x) for x in tensors]
    return cat(tensors, 0 if tensors[0]._value.ndim == 1 else 1)


def vstack(tensors):
    return cat([x if x._value.ndim >= 2 else reshape(x, 1, -1) for x in map(_tensor, tensors)], 0)


def narrow(input, dim: int, start: int, length: int):
    shape = tuple(input._value.shape)
    d = _dim(dim, len(shape))
    start = start % shape[d] if start < 0 else start
    if start + length > shape[d] or length < 0:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({shape[d]}).")
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
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
        sizes = [size] * (n // size) + ([n % size] if n % size else []) if size else [0]
    else:
        sizes = [int(s) for s in split_size_or_sections]
        if builtins.sum(sizes) != n:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's "
                               f"size at dimension {d}), but got split_sizes={sizes}")
    out, start = [], 0
    for s in sizes:
        out.append(narrow(tensor, d, start, s))
        start += s
    return tuple(out)


def tensor_split(input, indices_or_sections, dim: int = 0):
    n = input._value.shape[_dim(dim, input._value.ndim)]
    if isinstance(indices_or_sections, (int, np.integer)):
        k = int(indices_or_sections)
        sizes = [n // k + 1] * (n % k) + [n // k] * (k - n % k)
    else:
        bounds = [0] + [builtins.min(int(i), n) for i in indices_or_sections] + [n]
        sizes = [builtins.max(b - a, 0) for a, b in zip(bounds, bounds[1:])]
    return split(input, sizes, dim)


def chunk(input, chunks: int, dim: int = 0):
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    n = input._value.shape[_dim(dim, input._value.ndim)]
    size = -(-n // chunks) if n else 1
    return split(input, size, dim)


def flip(input, dims):
    dims = (dims,) if isinstance(dims, (int, np.integer)) else tuple(dims)
    return named(fnp.flip(input, axis=tuple(_dim(d, input._value.ndim) for d in dims)), "FlipBackward0", input)


def roll(input, shifts, dims=None):
    return named(fnp.roll(input, shifts, axis=dims), "RollBackward0", input)


def tril(input, diagonal: int = 0):
    return named(fnp.tril(input, diagonal), "TrilBackward0", input)


def triu(input, diagonal: int = 0):
    return named(fnp.triu(input, diagonal), "TriuBackward0", input)


def diagonal(input, offset: int = 0, dim1: int = 0, dim2: int = 1):
    return fnp.diagonal(input, offset, dim1, dim2)


def diag(input, diagonal: int = 0):
    return fnp.diag(input, diagonal)


def trace(input):
    return named(sum(fnp.diagonal(input)), "TraceBackward0", input)


def unbind(input, dim: int = 0):
    d = _dim(dim, input._value.ndim)
    return tuple(squeeze(p, d) for p in split(input, 1, d))


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
    return fnp.getitem(input, _raw_index(idx))


def _concrete(v):
    """A concrete array for an index computation (values of indices are not differentiated)."""
    while isinstance(v, Tracer):
        v = v._concrete("Using a traced value as an index")
    return v


def setitem(t, idx, value) -> None:
    from ._device import is_cupy
    from ..core.trace import _state
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
    v = _cast(value, t._value.dtype)
    commit_inplace(t, fnp.at_set(t, idx, v if isinstance(v, Tensor) else _make(np.asarray(v))))


def gather(input, dim: int, index):
    d = _dim(dim, input._value.ndim)
    idx = index._value if isinstance(index, Tensor) else np.asarray(index)
    if idx.ndim != input._value.ndim:
        raise RuntimeError(f"Index tensor must have the same number of dimensions as input tensor "
                           f"(index shape {tuple(idx.shape)}, input shape {tuple(input._value.shape)})")
    return fnp.take_along_axis(input, idx, axis=d)


def index_select(input, dim: int, index):
    idx = index._value if isinstance(index, Tensor) else np.asarray(index)
    if idx.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    return fnp.take(input, idx, axis=_dim(dim, input._value.ndim))


def take(input, index):
    idx = index._value if isinstance(index, Tensor) else np.asarray(index)
    return fnp.take(fnp.ravel(input), idx, axis=0)


def masked_fill(input, mask, value):
    m = _tensor(mask)
    if m._value.dtype.kind != "b":
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype {m.dtype}")
    if isinstance(value, Tensor) and value._value.ndim != 0:
        raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value._value.ndim} dimension(s).")
    shape = tuple(input._value.shape)
    if _shape(m) != shape:
        if broadcast_shapes(_shape(m), shape) != shape:
            raise RuntimeError(f"masked_fill: mask of shape {_shape(m)} cannot be broadcast to the input's "
                               f"shape {shape}")
        m = _expand_to(m, shape)
    v = _cast(value, input._value.dtype) if not isinstance(value, Tensor) else _cast(value, input._value.dtype)
    if not isinstance(v, Tensor):
        v = _make(np.asarray(v))
    return named(ew.select(m, v, input), "MaskedFillBackward0", input)


def masked_select(input, mask):
    m = _tensor(mask)
    shape = broadcast_shapes(_shape(input), _shape(m))
    return getitem(_expand_to(input, shape), _expand_to(m, shape))


def nonzero(input, *, as_tuple: bool = False):
    v = _concrete(_tensor(input)._value)
    xp = np if type(v) is _nd else __import__("cupy")
    if as_tuple:
        return tuple(_make(i.astype(np.int64)) for i in xp.atleast_1d(v).nonzero())
    return _make(xp.argwhere(v).astype(np.int64))


def argwhere(input):
    return nonzero(input)


def sort(input, dim: int = -1, descending: bool = False, stable: bool = False):
    d = _dim(dim, input._value.ndim)
    v = _concrete(input._value)
    xp = np if type(v) is _nd else __import__("cupy")
    order = xp.argsort(-v if descending and v.dtype.kind != "b" else v, axis=d, kind="stable")
    if descending and v.dtype.kind == "b":
        order = xp.flip(order, axis=d)
    if input._value.ndim == 0:
        return _sort_t(input, _make(np.zeros((), np.int64)))
    return _sort_t(gather(input, d, order), _make(order.astype(np.int64)))


def argsort(input, dim: int = -1, descending: bool = False, stable: bool = False):
    return sort(input, dim, descending, stable)[1]


def topk(input, k: int, dim: int = -1, largest: bool = True, sorted: bool = True):
    d = _dim(dim, input._value.ndim)
    n = input._value.shape[d] if input._value.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError(f"selected index k out of range (k={k}, size {n} at dim {d})")
    _, order = sort(input, d, descending=largest)
    idx = narrow(order, d, 0, k)
    return _topk_t(gather(input, d, idx._value), idx)


# --- linear algebra ------------------------------------------------------------------------------

def matmul(input, other):
    a, b = _tensor(input), _tensor(other)
    sa, sb = tuple(a._value.shape), tuple(b._value.shape)
    if not sa or not sb:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {len(sa)}D and {len(sb)}D")
    ka = sa[-1]
    kb = sb[0] if len(sb) == 1 else sb[-2]
    if ka != kb:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({'x'.join(map(str, sa))} and "
                           f"{'x'.join(map(str, sb))})")
    dt = D.result_type(a, b) if a._value.dtype != b._value.dtype else a._value.dtype
    return fnp.matmul(_cast(a, dt), _cast(b, dt))


def mm(input, mat2):
    if input._value.ndim != 2 or mat2._value.ndim != 2:
        raise RuntimeError(f"mm: both arguments must be matrices (2-D), got shapes "
                           f"{tuple(input._value.shape)} and {tuple(mat2._value.shape)}")
    return matmul(input, mat2)


def bmm(input, mat2):
    if input._value.ndim != 3 or mat2._value.ndim != 3:
        raise RuntimeError(f"bmm: both arguments must be 3-D batches of matrices, got shapes "
                           f"{tuple(input._value.shape)} and {tuple(mat2._value.shape)}")
    if input._value.shape[0] != mat2._value.shape[0]:
        raise RuntimeError(f"bmm: batch sizes differ: shapes {tuple(input._value.shape)} and "
                           f"{tuple(mat2._value.shape)}")
    return matmul(input, mat2)


def mv(input, vec):
    return matmul(input, vec)


def dot(input, other):
    if input._value.ndim != 1 or other._value.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input._value.ndim}D and {other._value.ndim}D tensors")
    if input._value.shape != other._value.shape:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{input._value.shape[0]}] and src "
                           f"[{other._value.shape[0]}] to have the same number of elements, but got "
                           f"{input._value.shape[0]} and {other._value.shape[0]} elements respectively")
    return sum(mul(input, other))


inner = dot


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
    from ._device import as_device, device as device_cls
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
        dev = as_device(device)
        if dev != out.device:
            from .function import to_device
            out = to_device(out, dev)
    if dtype is not None:
        out = _cast(out, D.np_dtype(dtype))
    if copy and out is input:
        out = clone(input)
    return out


def type_as(input, other):
    return _cast(input, other._value.dtype)


def _caster(npdt):
    def conv(self, memory_format=None):
        return _cast(self, np.dtype(npdt))
    return conv


def tensor_type(self, dtype=None, non_blocking=False):
    if dtype is None:
        return ("torch.cuda." if self.device.type == "cuda" else "torch.") + self.dtype._torch
    if isinstance(dtype, str):
        name = dtype.split(".")[-1]
        for d in D.ALL:
            if d._torch == name:
                return _cast(self, d.dtype)
    return _cast(self, D.np_dtype(dtype))


def contiguous(input, memory_format=None):
    return input


def _close_operands(name, input, other):
    """NumPy arrays of two tensors that broadcast together (shape errors name both shapes)."""
    b = _operand(other)
    a, b = input.detach().cpu().numpy(), (b.detach().cpu().numpy() if isinstance(b, Tensor) else np.asarray(b))
    if b.dtype.kind not in "biufc":
        raise TypeError(f"{name}: cannot compare with {type(other).__name__} {other!r:.40} (not a number "
                        "that fits 64 bits, or not numeric)")
    if max(a.ndim, b.ndim) > 32:
        raise RuntimeError(f"{name}: compares tensors of at most 32 dimensions (NumPy's limit), got "
                           f"shapes {a.shape} and {b.shape}")
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise RuntimeError(f"{name}: shapes {a.shape} and {b.shape} cannot be broadcast together") from None
    return a, b


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    a, b = _close_operands("allclose", input, other)
    rtol, atol = float(rtol), float(atol)
    return bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    a, b = _close_operands("isclose", input, other)
    rtol, atol = float(rtol), float(atol)
    return _make(np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


def equal(input, other) -> bool:
    a, b = input.detach().cpu().numpy(), _tensor(other).detach().cpu().numpy()
    return a.shape == b.shape and bool((a == b).all())


def numel(input) -> int:
    return input.numel()
