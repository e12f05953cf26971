"""The product of a sparse COO matrix with a dense matrix or vector.

`coo_matmul_p(values, dense, rows, cols, shape=(n, k))` is A @ dense for the n x k matrix A
whose nonzero entries are values[e] at (rows[e], cols[e]) (repeated positions add up), and
dense of shape (k,) or (k, m). The impl hands the product to scipy.sparse (CSR).

It is bilinear in (values, dense), and its rules are written with ops that compose: the
cotangent of `dense` is the same product with the transposed matrix (cols and rows swapped),
and that of `values` is the sampled product sum(ct[rows] * dense[cols], -1), a gather
(getitem) of each operand, a mul and a sum. So derivatives of any order are again sparse
products, gathers and their transposes (scatter-adds).
"""
from __future__ import annotations

import numpy as np

from ..core.avals import ShapedArray
from ..core.errors import FgradTypeError, ShapeError
from ..core.primitive import Primitive
from ..core.rules import shape_of
from ._batching import loop_batch
from .elementwise import add_tangents, mul
from .index import ARRAY, getitem
from .reduce import reduce_sum
from .shape import move_axis, reshape

coo_matmul_p = Primitive("coo_matmul")


def _coo_matmul_impl(values, dense, rows, cols, *, shape, xp):
    if xp is np:
        import scipy.sparse  # SciPy is slow to import: only when a product runs
        a = scipy.sparse.coo_matrix((values, (rows, cols)), shape=shape).tocsr()  # CSR sums repeated entries
        return np.asarray(a @ dense, dtype=np.result_type(values, dense))
    import cupyx  # CuPy is optional: imported only when an impl runs on a CuPy array
    rows, cols = xp.asarray(rows), xp.asarray(cols)
    out = xp.zeros((shape[0],) + dense.shape[1:], dtype=values.dtype)
    contrib = values.reshape((-1,) + (1,) * (dense.ndim - 1)) * dense[cols]
    cupyx.scatter_add(out, rows, contrib)
    return out


def _coo_matmul_aval(values, dense, rows, cols, *, shape):
    n, k = shape
    if values.ndim != 1 or rows.shape != values.shape or cols.shape != values.shape:
        raise ShapeError(f"coo_matmul: values, rows and cols must be vectors of one length (nnz), got shapes "
                         f"{values.shape}, {rows.shape} and {cols.shape}")
    if rows.dtype.kind not in "iu" or cols.dtype.kind not in "iu":
        raise FgradTypeError(f"coo_matmul: rows and cols must be integers, got {rows.dtype} and {cols.dtype}")
    if dense.ndim not in (1, 2) or dense.shape[0] != k:
        raise ShapeError(f"coo_matmul: a sparse {n} x {k} matrix times a dense operand of shape {dense.shape}: "
                         f"the dense operand must be ({k},) or ({k}, m)")
    if values.dtype != dense.dtype:
        raise FgradTypeError(f"coo_matmul: values ({values.dtype}) and the dense operand ({dense.dtype}) must have one "
                        "dtype")
    return ShapedArray((n,) + dense.shape[1:], values.dtype)


def _sampled(ct, dense, rows, cols):
    """The cotangent of `values`: sum over the columns of ct[rows] * dense[cols]."""
    prod = mul(getitem(ct, [rows], (ARRAY,)), getitem(dense, [cols], (ARRAY,)))
    return reduce_sum(prod, (1,)) if len(shape_of(prod)) == 2 else prod


def _coo_matmul_jvp(primals, tangents, *, shape):
    values, dense, rows, cols = primals
    dv, dd = tangents[0], tangents[1]
    out = coo_matmul(values, dense, rows, cols, shape)
    t = None
    if dv is not None:
        t = coo_matmul(dv, dense, rows, cols, shape)
    if dd is not None:
        t = add_tangents(t, coo_matmul(values, dd, rows, cols, shape))
    return out, t


def _coo_matmul_vjp(needs, ct, out, values, dense, rows, cols, *, shape):
    ct_values = _sampled(ct, dense, rows, cols) if needs[0] else None
    ct_dense = coo_matmul(values, ct, cols, rows, (shape[1], shape[0])) if needs[1] else None
    return [ct_values, ct_dense, None, None]


def _coo_matmul_batch(n, vals, dims, *, shape):
    values, dense, rows, cols = vals
    if dims[0] is None and dims[2] is None and dims[3] is None:
        # one matrix, a batch of dense operands: put the batch among the columns of one product
        d = move_axis(dense, dims[1], 1)
        ds = shape_of(d)
        flat = reshape(d, (ds[0], int(np.prod(ds[1:], dtype=np.int64))))
        out = coo_matmul(values, flat, rows, cols, shape)
        return reshape(out, (shape[0],) + ds[1:]), 1
    return loop_batch(coo_matmul_p, n, vals, dims, shape=shape)


coo_matmul_p.def_impl(_coo_matmul_impl)
coo_matmul_p.def_abstract_eval(_coo_matmul_aval)
coo_matmul_p.def_jvp(_coo_matmul_jvp)
coo_matmul_p.def_vjp(_coo_matmul_vjp)
coo_matmul_p.def_saves(output=False)  # the vjp reads every operand, never the output
coo_matmul_p.def_batch(_coo_matmul_batch)


def coo_matmul(values, dense, rows, cols, shape):
    """A @ dense for the sparse n x k matrix A = (values at (rows, cols)), shape = (n, k)."""
    return coo_matmul_p.bind(values, dense, rows, cols, shape=(int(shape[0]), int(shape[1])))
