"""Building blocks of batching (vmap) rules that are not plain axis moves: the loop over the
examples (the rule of a primitive without its own), and the rule of an elementwise primitive.
The axis moves (move_to_front, move_axis, batch_front) are shape functions in shape.py, which
this module is built on; the primitive modules import both at their top."""
from __future__ import annotations

from ..core.rules import shape_of
from .shape import broadcast_in_dim, concatenate, move_to_front, reshape, slice


def index_in_dim(x, i: int, axis: int):
    """Example `i` of `x` along `axis` (that axis removed)."""
    shape = shape_of(x)
    start = [0] * len(shape)
    limit = list(shape)
    start[axis], limit[axis] = i, i + 1
    return reshape(slice(x, start, limit), shape[:axis] + shape[axis + 1:])


def stack_front(xs):
    """Arrays of one shape stacked along a new leading axis."""
    return concatenate([reshape(x, (1,) + shape_of(x)) for x in xs], 0)


def loop_batch(prim, n: int, vals, dims, **params):
    """Batch `prim` by binding it once per example and stacking the results (batch axis 0):
    correct for any primitive, and the rule of those without one."""
    outs = []
    for i in range(n):
        args = [v if d is None else index_in_dim(v, i, d) for v, d in zip(vals, dims)]
        outs.append(prim.bind(*args, **params))
    return stack_front(outs), 0


def elementwise_batch(prim):
    """Batch rule of an elementwise primitive: one call on batch-first operands."""
    def rule(n, vals, dims, **params):
        example = ()
        for v, d in zip(vals, dims):
            s = shape_of(v) if d is None else tuple(x for k, x in enumerate(shape_of(v)) if k != d)
            if s:
                example = s
        args = []
        for v, d in zip(vals, dims):
            if d is None:
                args.append(v if not shape_of(v) else
                            broadcast_in_dim(v, (n,) + example, tuple(range(1, len(example) + 1))))
            else:
                v = move_to_front(v, d)
                if len(shape_of(v)) == 1 and example:
                    v = broadcast_in_dim(v, (n,) + example, (0,))
                args.append(v)
        return prim.bind(*args, **params), 0
    return rule


def def_vectorized(prim):
    """Batching for primitives that act on each element independently."""
    prim.def_batch(elementwise_batch(prim))
