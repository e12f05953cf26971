"""BatchTrace: vmap. A batched value carries the axis its examples run along.
Primitives with a batching rule handle the whole batch at once; any other
primitive falls back to a loop over the examples (correct, slower)."""
from __future__ import annotations

from operator import attrgetter

from ..core.avals import ShapedArray
from ..core.trace import Trace, Tracer

_new = object.__new__


class BatchTracer(Tracer):
    __slots__ = ("val", "bdim")

    def __init__(self, trace, val, bdim: int) -> None:
        self._trace = trace
        self.val = val
        self.bdim = bdim

    @property
    def aval(self):
        """One example's shape and dtype: the value's without the batch axis. (Built without
        ShapedArray's normalising __init__: the shape is an array's, already a tuple of ints;
        promotion reads avals on every op.)"""
        val = self.val
        shape = val.shape
        d = self.bdim
        aval = _new(ShapedArray)
        aval.shape = shape[:d] + shape[d + 1:]
        aval.dtype = val.dtype
        return aval


class BatchTrace(Trace):
    name = "vmap"

    def __init__(self, parent, axis_size: int, fallback) -> None:
        """`fallback(prim, n, vals, dims, **params)` batches a primitive that has no batching
        rule (one bind per example). It is passed in by vmap because it is written with
        shape primitives, which sit in the ops layer above the interpreters."""
        super().__init__(parent)
        self.axis_size = axis_size
        self.fallback = fallback

    unpack = attrgetter("val", "bdim")

    def process_primitive(self, prim, args, params):
        vals, dims, batched = self.partition(args)
        if not batched:
            return self.parent.process_primitive(prim, vals, params)
        if prim.batch is not None:
            out, out_dim = self.parent.run(prim.batch, (self.axis_size, vals, dims), params)
        else:  # no batching rule: one bind per example (correct, slower)
            out, out_dim = self.parent.run(self.fallback, (prim, self.axis_size, vals, dims), params)
        return out if out_dim is None else BatchTracer(self, out, out_dim)
