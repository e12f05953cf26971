"""Sparse COO tensors (torch.sparse_coo_tensor, Tensor.to_sparse) and torch.sparse, for the
graph models that multiply a sparse adjacency matrix with dense features.

A `SparseTensor` holds its indices (an int64 array of shape (sparse_dim, nnz), constant) and
its values (a dense Tensor of shape (nnz, *dense_dims), which carries the autograd graph).
So every derivative flows through the values: to_dense() is a scatter-add of them,
coalesce() sums repeated positions (a scatter-add), and the sparse @ dense product binds
the coo_matmul primitive (fgrad/ops/sparse.py: SciPy computes it; its rules are sparse
products and gathers, differentiable to any order) in both the values and the dense operand.
Each of these is one torch op over values (fgrad.torch._tensor._boundary.call) with PyTorch's
grad_fn: a sparse tensor built from values that require grad is their
SparseCooTensorWithDimsAndTensorsBackward0, values() a ValuesBackward0, and so on.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import numpy as fnp
from ..core.errors import FgradRuntimeError, FgradTypeError
from ..extend.numpy import cast
from ..extend.lax import coo_matmul
from ._tensor import _dtypes as D
from ._tensor import creation as _creation
from ._tensor._boundary import call
from ._tensor._format import tensor_repr
from ._tensor._layout import layout, sparse_coo, strided
from ._tensor._policy import TORCH as P
from ._tensor._ops import mul
from ._tensor._ops_index import concrete_array
from ._tensor.tensor import Size, Tensor, _make


def _same(v):
    return v


def _relabel(name: str, vals: Tensor) -> Tensor:
    """`vals` (the same values, a view of them) as the result of PyTorch's op `name`: a sparse
    tensor's values carry its graph, and PyTorch gives the sparse tensor built from them, its
    transpose, values() ... a node of their own."""
    return call(name, _same, (vals,))


def _coalesce_plan(idx: np.ndarray, size: tuple) -> tuple:
    """(sorted unique indices, the position of each entry among them, their count) for the
    COO indices idx (sparse_dim, nnz) of a tensor of `size`."""
    flat = np.ravel_multi_index(tuple(idx), size[:idx.shape[0]])
    keys, inverse = np.unique(flat, return_inverse=True)
    new_idx = np.stack(np.unravel_index(keys, size[:idx.shape[0]])).astype(np.int64)
    return new_idx.reshape(idx.shape[0], -1), inverse.reshape(-1), len(keys)


def _summed(v, inverse: np.ndarray, n: int):
    """The rows of v added up by their position in `inverse` (n positions): coalescing."""
    return fnp.at_add(np.zeros((n,) + tuple(v.shape[1:]), v.dtype), inverse, v)


def _index_array(indices) -> np.ndarray:
    v = concrete_array(indices, "sparse_coo_tensor's indices") if isinstance(indices, Tensor) else np.asarray(indices)
    if v.dtype.kind not in "iu" and not (v.size == 0):
        raise FgradRuntimeError(f"indices must be an int64 tensor, got dtype {v.dtype}")
    return v.astype(np.int64)


class SparseTensor:
    """A sparse COO tensor: `values[e]` at position `indices[:, e]` of a tensor of `size`
    (repeated positions add up). Build one with fgrad.torch.sparse_coo_tensor or Tensor.to_sparse."""

    is_sparse = True
    layout = sparse_coo
    __array_priority__ = 1001

    def __init__(self, indices: np.ndarray, values: Tensor, size: tuple, coalesced: bool = False) -> None:
        self._indices_np = indices
        self._vals = values
        self._size = tuple(int(s) for s in size)
        self._coalesced = coalesced

    # --- structure ---
    @property
    def shape(self):
        return Size(self._size)

    def size(self, dim=None):
        return self.shape if dim is None else self._size[dim]

    def dim(self) -> int:
        return len(self._size)

    ndim = property(dim)

    def sparse_dim(self) -> int:
        return self._indices_np.shape[0]

    def dense_dim(self) -> int:
        return self._vals._value.ndim - 1

    def _nnz(self) -> int:
        return self._indices_np.shape[1]

    def is_coalesced(self) -> bool:
        return self._coalesced

    def _indices(self) -> Tensor:
        return _make(self._indices_np.copy())

    def _values(self) -> Tensor:
        """The stored values as they are (uncoalesced too), outside the autograd graph, as
        PyTorch's _values(); values() is the differentiable accessor."""
        return self._vals.detach()

    def indices(self) -> Tensor:
        """The (sparse_dim, nnz) int64 indices; the tensor must be coalesced."""
        if not self._coalesced:
            raise FgradRuntimeError("Cannot get indices on an uncoalesced tensor, please call .coalesce() first")
        return self._indices()

    def values(self) -> Tensor:
        """The (nnz, *dense_dims) values, in the autograd graph (ValuesBackward0, a view of
        the stored values); the tensor must be coalesced."""
        if not self._coalesced:
            raise FgradRuntimeError("Cannot get values on an uncoalesced tensor, please call .coalesce() first")
        return _relabel("ValuesBackward0", self._vals)

    @property
    def dtype(self):
        return self._vals.dtype

    @property
    def device(self):
        return self._vals.device

    def numel(self) -> int:
        return int(np.prod(self._size, dtype=np.int64))

    # --- autograd ---
    @property
    def requires_grad(self) -> bool:
        return self._vals.requires_grad

    def requires_grad_(self, requires_grad: bool = True) -> SparseTensor:
        self._vals.requires_grad_(requires_grad)
        return self

    @property
    def is_leaf(self) -> bool:
        return self._vals.is_leaf

    @property
    def grad_fn(self):
        return self._vals.grad_fn

    @property
    def grad(self):
        """For a leaf built with requires_grad=True: the gradient as a sparse tensor with this
        one's indices (the gradient of each stored value), or None."""
        g = self._vals.grad
        return None if g is None else SparseTensor(self._indices_np, g, self._size, self._coalesced)

    def detach(self) -> SparseTensor:
        return SparseTensor(self._indices_np, self._vals.detach(), self._size, self._coalesced)

    # --- conversions ---
    def coalesce(self) -> SparseTensor:
        """The same tensor with its indices sorted (row-major) and repeated positions summed."""
        if self._coalesced:
            return self
        idx = self._indices_np
        if not idx.shape[1]:
            return SparseTensor(idx, self._vals, self._size, True)
        new_idx, inverse, n = _coalesce_plan(idx, self._size)
        summed = call("CoalesceBackward0", lambda v: _summed(v, inverse, n), (self._vals,))
        return SparseTensor(new_idx, summed, self._size, True)

    def to_dense(self, dtype=None, *, masked_grad=None) -> Tensor:
        """The dense tensor: zeros with the values added at their positions."""
        npd = self._vals._value.dtype if dtype is None else D.np_dtype(dtype)
        idx, size = tuple(self._indices_np), self._size
        return call("ToDenseBackward0", lambda v: fnp.at_add(np.zeros(size, npd), idx, cast(v, npd)), (self._vals,))

    def to(self, *args, **kwargs) -> SparseTensor:
        return SparseTensor(self._indices_np, self._vals.to(*args, **kwargs), self._size, self._coalesced)

    def float(self) -> SparseTensor:
        return self.to(D.float32)

    def double(self) -> SparseTensor:
        return self.to(D.float64)

    def to_sparse(self) -> SparseTensor:
        return self

    # --- arithmetic ---
    def t(self) -> SparseTensor:
        """The transpose of a 2-D sparse tensor (indices swapped)."""
        if len(self._size) != 2:
            raise FgradRuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {len(self._size)}D")
        return SparseTensor(self._indices_np[::-1].copy(), _relabel("TBackward0", self._vals), self._size[::-1], False)

    def transpose(self, dim0: int, dim1: int) -> SparseTensor:
        n = self.sparse_dim()
        d0, d1 = dim0 % len(self._size), dim1 % len(self._size)
        if d0 >= n or d1 >= n:
            raise FgradRuntimeError("transpose: fgrad's sparse tensors transpose their sparse dimensions only")
        perm = list(range(n))
        perm[d0], perm[d1] = perm[d1], perm[d0]
        size = list(self._size)
        size[d0], size[d1] = size[d1], size[d0]
        return SparseTensor(self._indices_np[perm], _relabel("TransposeBackward0", self._vals), tuple(size), False)

    def __mul__(self, other) -> SparseTensor:
        if isinstance(other, (SparseTensor, Tensor)) and getattr(other, "ndim", 0):
            raise FgradRuntimeError("fgrad's sparse tensors multiply by numbers or 0-d tensors only; convert with "
                               ".to_dense() for elementwise products")
        return SparseTensor(self._indices_np, mul(self._vals, other), self._size, self._coalesced)

    __rmul__ = __mul__

    def __neg__(self) -> SparseTensor:
        return SparseTensor(self._indices_np, call("NegBackward0", fnp.negative, (self._vals,)), self._size,
                            self._coalesced)

    def __truediv__(self, other) -> SparseTensor:
        return self * (1.0 / other)

    def __matmul__(self, other):
        return _product(self, other)

    def mm(self, other):
        return _product(self, other)

    def matmul(self, other):
        return _product(self, other)

    def sum(self, dim=None):
        return sum(self, dim)

    def __repr__(self) -> str:
        pad = " " * 7
        ind = tensor_repr(_make(self._indices_np)).replace("\n", "\n" + " " * 15)
        val = tensor_repr(self._vals.detach()).replace("\n", "\n" + " " * 14)
        extra = f",\n{pad}grad_fn=<{self.grad_fn.name()}>" if self.grad_fn is not None else (
            ", requires_grad=True" if self.requires_grad else "")
        return (f"tensor(indices={ind},\n{pad}values={val},\n{pad}size={self._size}, nnz={self._nnz()}, "
                f"layout=torch.sparse_coo{extra})")

    def backward(self, *args, **kwargs):
        raise FgradRuntimeError("backward on a sparse tensor: reduce it to a number first (e.g. "
                           "fgrad.torch.sparse.sum(s) or s.to_dense().sum())")


def sparse_coo_tensor(indices: Any, values: Any, size: Any = None, *, dtype: Any = None, device: Any = None,
                      requires_grad: bool = False, check_invariants: bool | None = None,
                      is_coalesced: bool | None = None) -> SparseTensor:
    """A sparse COO tensor with `values[e]` at the position `indices[:, e]` (indices of shape
    (sparse_dim, nnz), values of shape (nnz, *dense_dims)); `size` defaults to the smallest
    that holds every index. With requires_grad=True it is a leaf whose .grad is sparse;
    values that already require grad keep their graph (gradients flow to them)."""
    idx = _index_array(indices)
    if idx.ndim != 2:
        raise FgradRuntimeError(f"indices must be sparse_dim x nnz, but got: {list(idx.shape)}")
    vals = values if isinstance(values, Tensor) else _creation.tensor(values, dtype=dtype)
    if dtype is not None:
        vals = vals.to(dtype)
    if device is not None:
        vals = vals.to(device)
    if vals._value.ndim == 0 or vals._value.shape[0] != idx.shape[1]:
        raise FgradRuntimeError(f"indices and values must have same nnz, but got nnz from indices: {idx.shape[1]}, "
                           f"nnz from values: {vals._value.shape[0] if vals._value.ndim else 'a 0-d tensor'}")
    sparse_dim = idx.shape[0]
    dense_shape = tuple(vals._value.shape[1:])
    if size is None:
        size = tuple(int(m) + 1 for m in idx.max(axis=1)) if idx.shape[1] else (0,) * sparse_dim
        size = size + dense_shape
    size = tuple(int(s) for s in size)
    if len(size) != sparse_dim + len(dense_shape):
        raise FgradRuntimeError(f"number of dimensions must be sparse_dim ({sparse_dim}) + dense_dim "
                           f"({len(dense_shape)}), but got {len(size)}")
    if tuple(size[sparse_dim:]) != dense_shape:
        raise FgradRuntimeError(f"values has incorrect size, expected {[idx.shape[1], *size[sparse_dim:]]}, got "
                           f"{list(vals._value.shape)}")
    if idx.shape[1]:
        for d in range(sparse_dim):
            lo, hi = int(idx[d].min()), int(idx[d].max())
            if lo < 0:
                raise FgradRuntimeError(f"found negative index {lo} for dim {d}")
            if hi >= size[d]:
                raise FgradRuntimeError(f"size is inconsistent with indices: for dim {d}, size is {size[d]} but found "
                                   f"index {hi}")
    if requires_grad:
        vals = _make(np.array(vals.detach()._value), None, False)
        vals.requires_grad_(True)
    elif vals.requires_grad:  # values with a graph: the sparse tensor is an op of them, as in PyTorch
        vals = _relabel("SparseCooTensorWithDimsAndTensorsBackward0", vals)
    coalesced = bool(is_coalesced) if is_coalesced is not None else idx.shape[1] <= 1
    return SparseTensor(idx, vals, size, coalesced)


def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None) -> SparseTensor:
    """Tensor.to_sparse(): the nonzero entries (of the leading `sparse_dim` dims; all by
    default) as a coalesced sparse COO tensor whose values are gathered from this tensor
    (so gradients reach it)."""
    if layout not in (None, sparse_coo):
        raise FgradRuntimeError(f"to_sparse: fgrad has the sparse_coo layout only, got {layout!r}")
    nd = self._value.ndim
    k = nd if sparse_dim is None else int(sparse_dim)
    if not 0 < k <= nd:
        raise FgradRuntimeError(f"sparse_dim argument must be in [1, {nd}] range, but {k} is given (a 0-d tensor "
                           "has no sparse form in fgrad)")
    v = concrete_array(self, "to_sparse")
    mask = v != 0
    if k < nd:
        mask = mask.reshape(v.shape[:k] + (-1,)).any(axis=-1)
    idx = np.stack(np.nonzero(mask)).astype(np.int64).reshape(k, -1)
    where = tuple(idx)
    # PyTorch's overloads: to_sparse() is ToSparseBackward1, to_sparse(sparse_dim) ToSparseBackward0
    name = "ToSparseBackward1" if sparse_dim is None else "ToSparseBackward0"
    vals = call(name, lambda v: fnp.getitem(v, where), (self,))
    return SparseTensor(idx, vals, tuple(self._value.shape), True)


def _dense_operand(name: str, sparse, other) -> Tensor:
    if not isinstance(other, Tensor):
        raise FgradTypeError(f"{name}: the second operand must be a dense Tensor, got {type(other).__name__} (fgrad "
                        "multiplies sparse @ dense only; densify one with .to_dense())")
    if other._value.dtype != sparse._vals._value.dtype:
        raise FgradRuntimeError(f"expected scalar type {D.of_np(sparse._vals._value.dtype)._torch[:-6]} but found "
                           f"{D.of_np(other._value.dtype)._torch[:-6]}")
    return other


def _checked_product(name: str, mat1, mat2) -> tuple:
    """(dense operand, rows, cols, (n, k)) of the product mat1 @ mat2, checked."""
    if not isinstance(mat1, SparseTensor):
        raise FgradTypeError(f"{name}: the first operand must be a sparse tensor, got {type(mat1).__name__}")
    dense = _dense_operand(name, mat1, mat2)
    if mat1.sparse_dim() != 2 or mat1.dense_dim():
        raise FgradRuntimeError(f"{name}: a 2-D sparse matrix with scalar values is needed, got sparse_dim "
                           f"{mat1.sparse_dim()} and dense_dim {mat1.dense_dim()}")
    n, k = mat1._size
    if dense._value.ndim not in (1, 2) or dense._value.shape[0] != k:
        raise FgradRuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({n}x{k} and "
                           f"{'x'.join(map(str, dense._value.shape))})")
    rows, cols = mat1._indices_np
    return dense, rows, cols, (n, k)


def _product(mat1, mat2) -> Tensor:
    """mat1 @ mat2 (sparse @ dense) as one op, named as PyTorch's torch.mm/matmul/@ name it
    (MmBackward0, MvBackward0 for a vector)."""
    dense, rows, cols, nk = _checked_product("fgrad.torch.sparse.mm", mat1, mat2)
    grad_fn = "MvBackward0" if dense._value.ndim == 1 else "MmBackward0"
    return call(grad_fn, lambda v, d: coo_matmul(v, d, rows, cols, nk), (mat1._vals, dense))


def mm(mat1, mat2) -> Tensor:
    """sparse @ dense: a sparse 2-D (n, k) matrix times a dense (k, m) matrix or (k,) vector,
    differentiable in the sparse tensor's values and in the dense operand (PyTorch computes
    it as an addmm over a zero matrix: SparseAddmmBackward0, whose first operand is that
    matrix, a (None, 0) entry)."""
    dense, rows, cols, nk = _checked_product("fgrad.torch.sparse.mm", mat1, mat2)
    return call("SparseAddmmBackward0", lambda _, v, d: coo_matmul(v, d, rows, cols, nk),
                (None, mat1._vals, dense), operands=(0, 1, 2))


def addmm(mat, mat1, mat2, *, beta=1, alpha=1) -> Tensor:
    """beta * mat + alpha * (sparse mat1 @ dense mat2), one op (SparseAddmmBackward0)."""
    dense, rows, cols, nk = _checked_product("fgrad.torch.sparse.mm", mat1, mat2)

    def fn(m, v, d):
        prod = coo_matmul(v, d, rows, cols, nk)
        prod = prod if alpha == 1 else fnp.multiply(prod, alpha, policy=P)
        return prod if beta == 0 else fnp.add(prod, m if beta == 1 else fnp.multiply(m, beta, policy=P))
    return call("SparseAddmmBackward0", fn, (mat, mat1._vals, dense))


def sum(input: SparseTensor, dim: Any = None, dtype: Any = None) -> Tensor | SparseTensor:
    """The sum of all elements (a dense 0-d tensor), or over the sparse dims `dim` (a
    sparse tensor over the rest, or dense when no sparse dim remains)."""
    if not isinstance(input, SparseTensor):
        raise FgradTypeError(f"fgrad.torch.sparse.sum: expected a sparse tensor, got {type(input).__name__}")
    npd = None if dtype is None else D.np_dtype(dtype)

    def typed(v):
        return v if npd is None else cast(v, npd)
    if dim is None:  # PyTorch: the sum of values()
        return call("SumBackward0", lambda v: fnp.sum(typed(v)), (_relabel("ValuesBackward0", input._vals),))
    dims = sorted({d % input.ndim for d in ((dim,) if isinstance(dim, int) else dim)})
    n = input.sparse_dim()
    sparse_dims = [d for d in dims if d < n]
    dense_dims = tuple(d - n + 1 for d in dims if d >= n)
    keep = [d for d in range(n) if d not in sparse_dims]
    size = tuple(s for d, s in enumerate(input._size) if d not in dims)

    def dense_summed(v):
        v = typed(v)
        return fnp.sum(v, axis=dense_dims) if dense_dims else v
    if not keep:
        return call("SparseSumBackward0", lambda v: fnp.sum(dense_summed(v), axis=0), (input._vals,))
    idx = input._indices_np[keep]
    if not idx.shape[1]:
        return SparseTensor(idx, call("SparseSumBackward0", dense_summed, (input._vals,)), size, True)
    new_idx, inverse, count = _coalesce_plan(idx, size)
    vals = call("SparseSumBackward0", lambda v: _summed(dense_summed(v), inverse, count), (input._vals,))
    return SparseTensor(new_idx, vals, size, True)


__all__ = ["SparseTensor", "addmm", "layout", "mm", "sparse_coo", "sparse_coo_tensor", "strided", "sum"]
