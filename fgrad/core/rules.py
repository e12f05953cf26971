"""Helpers that derive a primitive's rule set from one declaration, and the shape and dtype
rules that primitives share. Nothing here is written with ops (core sits below fgrad.ops):
the helpers whose rules call ops -- def_elementwise, def_elementwise_deriv, def_bilinear,
sum_to_shape, broadcast_to_shape -- are in fgrad/ops/elementwise.py, beside the add and mul
they are written with, and def_vectorized is in fgrad/ops/_batching.py."""
from __future__ import annotations

import sys

import numpy as np

from . import errors
from .avals import float_dtype
from .trace import aval_of


def shape_of(x) -> tuple:
    """The shape of an array, tracer, Tensor or number, as a tuple."""
    shape = getattr(x, "shape", None)
    if type(shape) is tuple:
        return shape
    return tuple(shape) if shape is not None else aval_of(x).shape


def elementwise_shape(prim_name: str, avals) -> tuple:
    """Elementwise primitives take operands of one shape, or 0-d operands beside them."""
    shape = ()
    for a in avals:
        if a.shape:
            if shape and a.shape != shape:
                raise errors.ShapeError(
                    f"{prim_name}: operand shapes {' and '.join(str(b.shape) for b in avals)} differ; "
                    "primitives take equal shapes (fgrad.numpy broadcasts before binding).")
            shape = a.shape
    return shape


def same_dtype(*avals):
    """Dtype rule: the result has the first operand's dtype."""
    return avals[0].dtype


def float_result(*avals):
    """Dtype rule: the float dtype NumPy gives a float function of the first operand (ints
    become float64)."""
    return float_dtype(avals[0].dtype)


def bool_result(*avals):
    """Dtype rule: a boolean result (comparisons, predicates)."""
    return np.dtype(bool)


def def_linear(prim, transpose):
    """A primitive linear in its first array input. Any further inputs only select (index
    arrays, the values that choose a routing): they get no derivative. The jvp applies the
    primitive to the first input's tangent; the vjp is `transpose(ct, x_aval, *rest, **params)`
    for the first input and None for the rest. So a recorded application keeps only the rest:
    the first input lends its aval, the output nothing."""

    def jvp(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        x_dot = tangents[0]
        return out, None if x_dot is None else prim.bind(x_dot, *primals[1:], **params)

    def vjp(needs, ct, out, x, *rest, **params):
        ct_x = transpose(ct, aval_of(x), *rest, **params) if needs[0] else None
        return [ct_x, *[None] * len(rest)] if rest else [ct_x]

    prim.def_jvp(jvp)
    prim.def_vjp(vjp)
    prim.def_saves(inputs=range(1, sys.maxsize), output=False)


def def_nondiff(prim):
    """Zero derivative everywhere: traces do not record it, so no rule is ever asked."""
    prim.nondiff = True


