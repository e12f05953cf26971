"""Reductions over axes: sum (linear), max/min (ties share the cotangent), argmax/argmin."""
from __future__ import annotations

import numpy as np

from ..core.avals import ShapedArray
from ..core.primitive import Primitive
from ..core.rules import def_linear, def_nondiff
from .elementwise import convert_element_type, div, eq, mul
from .shape import broadcast_in_dim


def _reduced_aval(x, *, axes, dtype=None):
    return ShapedArray(tuple(d for i, d in enumerate(x.shape) if i not in axes), dtype or x.dtype)


def _batch_axes(prim):
    """Reductions under vmap: batch axis first, reduced axes shifted past it."""
    def rule(n, vals, dims, *, axes):
        from ..interpreters.batching import move_to_front
        (x,), (d,) = vals, dims
        return prim.bind(move_to_front(x, d), axes=tuple(a + 1 for a in axes)), 0
    prim.def_batch(rule)


def _kept(ndim, axes):
    return tuple(i for i in range(ndim) if i not in axes)


def expand_back(v, shape, axes):
    """Broadcast a reduced value back over the reduced axes of `shape`."""
    return broadcast_in_dim(v, shape, _kept(len(shape), axes))


reduce_sum_p = Primitive("reduce_sum", backward_name="SumBackward1")
# dtype=x.dtype: NumPy would widen small integers, but the primitive keeps its input's
# dtype (as abstract_eval says); fgrad.numpy.sum does NumPy's widening before binding.
reduce_sum_p.def_impl(lambda x, *, axes, xp: xp.sum(x, axis=axes, dtype=x.dtype))
reduce_sum_p.def_abstract_eval(_reduced_aval)
def_linear(reduce_sum_p, lambda ct, x_aval, *, axes: expand_back(ct, x_aval.shape, axes))
_batch_axes(reduce_sum_p)


def reduce_sum(x, axes):
    if not axes:
        return x
    return reduce_sum_p.bind(x, axes=tuple(sorted(axes)))


def _reduce_extreme(name, np_name):
    p = Primitive(name, backward_name="MaxBackward1" if name == "reduce_max" else "MinBackward1")
    p.def_impl(lambda x, *, axes, xp: getattr(xp, np_name)(x, axis=axes))
    p.def_abstract_eval(_reduced_aval)

    def location(x, out, axes):
        shape = x.shape
        hits = convert_element_type(eq(x, expand_back(out, shape, axes)), out.dtype)
        return div(hits, expand_back(reduce_sum(hits, axes), shape, axes))

    def jvp(primals, tangents, *, axes):
        (x,), (t,) = primals, tangents
        out = p.bind(x, axes=axes)
        return out, reduce_sum(mul(t, location(x, out, axes)), axes)

    def vjp(needs, ct, out, x, *, axes):
        return [mul(expand_back(ct, x.shape, axes), location(x, out, axes))]

    p.def_jvp(jvp)
    p.def_vjp(vjp)
    _batch_axes(p)
    return p


reduce_max_p = _reduce_extreme("reduce_max", "max")
reduce_min_p = _reduce_extreme("reduce_min", "min")


def reduce_max(x, axes):
    return reduce_max_p.bind(x, axes=tuple(sorted(axes))) if axes else x


def reduce_min(x, axes):
    return reduce_min_p.bind(x, axes=tuple(sorted(axes))) if axes else x


def _arg_extreme(name, np_name):
    p = Primitive(name)
    p.def_impl(lambda x, *, axis, xp: getattr(xp, np_name)(x, axis=axis))
    p.def_abstract_eval(lambda x, *, axis: _reduced_aval(x, axes=(axis,), dtype=np.dtype(np.int64)))
    def_nondiff(p)

    def batch(n, vals, dims, *, axis):
        from ..interpreters.batching import move_to_front
        return p.bind(move_to_front(vals[0], dims[0]), axis=axis + 1), 0
    p.def_batch(batch)
    return p


argmax_p = _arg_extreme("argmax", "argmax")
argmin_p = _arg_extreme("argmin", "argmin")


def argmax(x, axis: int):
    return argmax_p.bind(x, axis=axis)


def argmin(x, axis: int):
    return argmin_p.bind(x, axis=axis)
