"""fgrad.numpy's array-API machinery, for a library that speaks another array API's dialect on
top of fgrad.numpy (fgrad.torch speaks PyTorch's).

fgrad.numpy's functions take `policy=`: a `Policy` decides type promotion (`result_dtype`,
`float_dtype`, `accumulate_dtype`, `reduction_float_dtype`) and the exceptions raised for bad
arguments (the `*_error` methods return them). `NUMPY` is fgrad.numpy's own; a dialect
subclasses `Policy` and overrides what differs.

The helpers fgrad.numpy's functions share, each taking `policy=` where it raises:
  dtype_of(x), shape_of(x): dtype and shape of any value fgrad handles (arrays, tracers,
    Python numbers), arrays without building an aval.
  cast(x, dtype): x as dtype (plain data converted directly, traced values by a primitive).
  normalize_axis(axis, ndim, name, what="axis", policy), normalize_axes(axis, ndim, name,
    policy): one axis in [0, ndim); sorted distinct axes from None, an int or a sequence.
  shape_arg(shape, name, what="shape", allow_unknown=False, policy): a validated shape tuple.
  ints_arg(v, name, what, bounded=True): a tuple of Python ints from an int or a flat sequence.
  resolve_shape(shape, in_shape, name="reshape", policy): a reshape target with its -1 filled.
  broadcast_shapes(name, *shapes, policy): NumPy's broadcasting of shapes.
  fresh(out, *operands): out, or a copy where it may share memory with an operand (for a
    function documented to return a new array).
  concrete_array(x, what): the values behind x as a NumPy array (an error under jit or vmap
    naming `what`, the thing that needs them).
  unary_float(prim_fn, name) -> fn(x, *, policy): an element-wise float function (integers
    converted to the policy's float dtype first) from a primitive's function.
  chain_order(dims) -> split: the cheapest parenthesisation of a chain of matrices of shapes
    dims[i] x dims[i + 1] (split[i][j]: where the product of matrices i..j splits), as
    fgrad.numpy.linalg.multi_dot orders its products.
"""
from __future__ import annotations

from ..numpy._elementwise import unary_float
from ..numpy.linalg import _chain_order as chain_order
from ..numpy._policy import NUMPY, Policy, dtype_of, shape_of
from ..numpy._setops import concrete_array
from ..numpy._shape import resolve_shape
from ..numpy._util import broadcast_shapes, cast, fresh, ints_arg, normalize_axes, normalize_axis, shape_arg

__all__ = ["Policy", "NUMPY", "dtype_of", "shape_of", "cast", "normalize_axis", "normalize_axes", "shape_arg",
           "ints_arg", "resolve_shape", "broadcast_shapes", "fresh", "concrete_array", "unary_float",
           "chain_order"]
