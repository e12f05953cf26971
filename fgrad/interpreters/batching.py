"""BatchTrace: vmap. A batched value carries the axis its examples run along.
Primitives with a batching rule handle the whole batch at once; any other
primitive falls back to a loop over the examples (correct, slower)."""
from __future__ import annotations

from ..core.avals import ShapedArray
from ..core.trace import Trace, Tracer, _state
from ..ops.shape import broadcast_in_dim, concatenate, reshape, slice, transpose


class BatchTracer(Tracer):
    __slots__ = ("val", "bdim")

    def __init__(self, trace, val, bdim: int) -> None:
        self._trace = trace
        self.val = val
        self.bdim = bdim

    @property
    def aval(self):
        shape = list(self.val.shape)
        del shape[self.bdim]
        return ShapedArray(tuple(shape), self.val.dtype)


class BatchTrace(Trace):
    name = "vmap"

    def __init__(self, parent, axis_size: int) -> None:
        super().__init__(parent)
        self.axis_size = axis_size

    def process_primitive(self, prim, args, params):
        vals, dims, batched = [], [], False
        for a in args:
            if isinstance(a, Tracer):
                if a._trace is self:
                    vals.append(a.val)
                    dims.append(a.bdim)
                    batched = True
                    continue
                self.check_foreign(a)
            vals.append(a)
            dims.append(None)
        if not batched:
            return self.parent.process_primitive(prim, vals, params)
        rule = prim.batch or (lambda n, v, d, **p: loop_batch(prim, n, v, d, **p))
        prev = _state.trace
        _state.trace = self.parent
        try:
            out, out_dim = rule(self.axis_size, vals, dims, **params)
        finally:
            _state.trace = prev
        return out if out_dim is None else BatchTracer(self, out, out_dim)


def move_to_front(x, bdim: int):
    if bdim == 0:
        return x
    nd = len(x.shape)
    return transpose(x, (bdim,) + tuple(i for i in range(nd) if i != bdim))


def move_axis(x, src: int, dst: int):
    nd = len(x.shape)
    order = [i for i in range(nd) if i != src]
    order.insert(dst, src)
    return transpose(x, tuple(order))


def index_in_dim(x, i: int, axis: int):
    start = [0] * len(x.shape)
    limit = list(x.shape)
    start[axis], limit[axis] = i, i + 1
    block = slice(x, start, limit)
    return reshape(block, tuple(d for k, d in enumerate(block.shape) if k != axis))


def stack_front(xs):
    return concatenate([reshape(x, (1,) + tuple(x.shape)) for x in xs], 0)


def loop_batch(prim, n, vals, dims, **params):
    outs = []
    for i in range(n):
        args = [v if d is None else index_in_dim(v, i, d) for v, d in zip(vals, dims)]
        outs.append(prim.bind(*args, **params))
    return stack_front(outs), 0


def batch_front(n, vals, dims):
    """Every operand with its batch axis first; unbatched ones broadcast to the batch."""
    out = []
    for v, d in zip(vals, dims):
        if d is None:
            shape = tuple(v.shape)
            v = broadcast_in_dim(v, (n,) + shape, tuple(range(1, len(shape) + 1)))
        else:
            v = move_to_front(v, d)
        out.append(v)
    return out


def elementwise_batch(prim):
    """Batch rule of an elementwise primitive: one call on batch-first operands."""
    def rule(n, vals, dims, **params):
        example = ()
        for v, d in zip(vals, dims):
            s = tuple(v.shape) if d is None else tuple(x for k, x in enumerate(v.shape) if k != d)
            if s:
                example = s
        args = []
        for v, d in zip(vals, dims):
            if d is None:
                args.append(v if not tuple(v.shape) else
                            broadcast_in_dim(v, (n,) + example, tuple(range(1, len(example) + 1))))
            else:
                v = move_to_front(v, d)
                if len(v.shape) == 1 and example:
                    v = broadcast_in_dim(v, (n,) + example, (0,))
                args.append(v)
        return prim.bind(*args, **params), 0
    return rule
