"""RecordTrace: runs primitives under its parent with concrete values and records
a Node for each one that depends on an input, for the backward engine."""
from __future__ import annotations

from ..core.trace import Trace, Tracer, aval_of
from .backward import Node


class RecordTracer(Tracer):
    __slots__ = ("primal", "node")

    def __init__(self, trace, primal, node) -> None:
        self._trace = trace
        self.primal = primal
        self.node = node

    @property
    def aval(self):
        return aval_of(self.primal)

    shape = property(lambda self: self.primal.shape)
    dtype = property(lambda self: self.primal.dtype)


class RecordTrace(Trace):
    name = "grad"

    def concrete(self, tracer):
        return tracer.primal

    def process_primitive(self, prim, args, params):
        primals, parents, recorded = [], [], False
        for a in args:
            if isinstance(a, Tracer):
                if a._trace is self:
                    primals.append(a.primal)
                    parents.append(a.node)
                    recorded = True
                    continue
                self.check_foreign(a)
            primals.append(a)
            parents.append(None)
        # The parent interprets the primitive itself (each trace sets the current trace
        # for the rules it runs), which skips a second dispatch through bind.
        out = self.parent.process_primitive(prim, primals, params)
        if not recorded or prim.nondiff or out.dtype.kind not in "fc":
            return out
        return RecordTracer(self, out, Node(prim, params, tuple(parents), tuple(primals), out))


from ..numpy._util import register_fast_type  # noqa: E402

register_fast_type(RecordTracer)
