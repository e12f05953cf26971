"""The functions that bind fgrad's primitives (fgrad.lax's `<name>_p`) directly.

fgrad.lax's functions take what JAX's take and check it (Python numbers, operands of one dtype,
lax's error messages); these take arrays or tracers that already agree (dtypes, shapes,
normalised non-negative axes) and bind at once, keeping only the shortcuts that make no
equation (a reshape to the same shape, a concatenation of one array, a sum over no axes
return the operand). A library that has done its own argument handling, such as fgrad.torch,
calls these on its hot paths. Results are fgrad arrays or tracers; every transform goes
through them. Each takes its primitive's operands and params: where fgrad.lax (or jax.lax) has
a function of the same name with other arguments, this module's is the primitive's (`pad`
zero-pads by (lo, hi) pairs, where lax.pad takes a padding value and (lo, hi, interior)
triples; `scatter_add` takes fgrad's index spec, not XLA's scatter dimension numbers).

Element-wise (operands of one dtype, equal shapes or rank 0):
  add, sub, mul, div, sqrt, tanh, logistic, erf, logical_or, select(pred, x, y),
  convert_element_type(x, dtype), const(like, value) (a cached read-only 0-d constant of
  like's dtype), complex(re, im), conj(x).
Shape: reshape(x, new_sizes), transpose(x, permutation), broadcast_in_dim(x, shape,
  broadcast_dimensions), slice(x, start_indices, limit_indices), concatenate(xs, dimension),
  pad(x, widths) (zero padding, (lo, hi) per axis), move_axis(x, src, dst), rev(x, dimensions).
Indexing: getitem(x, arrays, spec) and scatter_add(updates, arrays, spec, shape), where `spec`
  has one entry per indexed axis: an int, a `Slice(start, stop, step)`, or `ARRAY` (the next
  of `arrays`); searchsorted(sorted_seq, values, side).
Contraction: dot_general(lhs, rhs, ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))),
  coo_matmul(values, dense, rows, cols, shape) (a sparse COO matrix times a dense one).
"""
from __future__ import annotations

from ..ops.complex import complex, conj  # noqa: A004 (lax's name)
from ..ops.elementwise import (add, const, convert_element_type, div, erf, logical_or, logistic, mul, select,
                               sqrt, sub, tanh)
from ..ops.index import ARRAY, Slice, getitem, rev, scatter_add
from ..ops.linalg import dot_general
from ..ops.search import searchsorted
from ..ops.shape import broadcast_in_dim, concatenate, move_axis, pad, reshape, slice, transpose  # noqa: A004
from ..ops.sparse import coo_matmul

__all__ = ["add", "sub", "mul", "div", "sqrt", "tanh", "logistic", "erf", "logical_or", "select",
           "convert_element_type", "const", "complex", "conj", "reshape", "transpose", "broadcast_in_dim",
           "slice", "concatenate", "pad", "move_axis", "rev", "getitem", "scatter_add", "Slice", "ARRAY",
           "searchsorted", "dot_general", "coo_matmul"]
