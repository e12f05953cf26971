"""Helpers that derive a primitive's rule set from one declaration."""
from __future__ import annotations

import numpy as np

from . import errors
from .avals import ShapedArray, float_dtype
from .trace import aval_of


def shape_of(x) -> tuple:
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
    return avals[0].dtype


def float_result(*avals):
    return float_dtype(avals[0].dtype)


def bool_result(*avals):
    return np.dtype(bool)


def def_elementwise(prim, impl, dtype_rule=same_dtype):
    prim.def_impl(impl)
    prim.def_abstract_eval(
        lambda *avals, **params: ShapedArray(elementwise_shape(prim.name, avals), dtype_rule(*avals)))
    def_vectorized(prim)


def def_vectorized(prim):
    """Batching for primitives that act on each element independently."""
    from ..interpreters.batching import elementwise_batch
    prim.def_batch(elementwise_batch(prim))


def sum_to_shape(ct, shape: tuple):
    """Cotangent of a 0-d operand that was used beside full-shape ones."""
    if not shape and shape_of(ct):
        from ..ops.reduce import reduce_sum
        return reduce_sum(ct, axes=tuple(range(len(shape_of(ct)))))
    return ct


def broadcast_to_shape(t, shape: tuple):
    if shape_of(t) != shape:
        from ..ops.shape import broadcast_in_dim
        return broadcast_in_dim(t, shape=shape, broadcast_dimensions=())
    return t


def def_elementwise_deriv(prim, *derivs):
    """Derive JVP and VJP from the partial derivatives of an elementwise primitive.

    `derivs[i](*primals, out)` is d out / d input_i, written with fgrad ops.
    """
    from ..ops.elementwise import add, mul

    def jvp(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        shape = shape_of(out)
        out_dot = None
        for t, d in zip(tangents, derivs):
            if t is None:
                continue
            term = broadcast_to_shape(mul(d(*primals, out), t), shape)
            out_dot = term if out_dot is None else add(out_dot, term)
        return out, out_dot

    def vjp(needs, ct, out, *primals, **params):
        return [sum_to_shape(mul(ct, d(*primals, out)), shape_of(x)) if need else None
                for need, d, x in zip(needs, derivs, primals)]

    prim.def_jvp(jvp)
    prim.def_vjp(vjp)


def def_linear(prim, transpose):
    """A primitive linear in its single array input: jvp applies it to the tangent,
    vjp is `transpose(ct, x_aval, **params)`."""

    def jvp(primals, tangents, **params):
        return prim.bind(*primals, **params), prim.bind(tangents[0], **params)

    def vjp(needs, ct, out, x, **params):
        return [transpose(ct, aval_of(x), **params)]

    prim.def_jvp(jvp)
    prim.def_vjp(vjp)


def def_nondiff(prim):
    """Zero derivative everywhere: traces do not record it, so no rule is ever asked."""
    prim.nondiff = True


