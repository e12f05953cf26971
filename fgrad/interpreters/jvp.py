"""JVPTrace: pushes tangents forward with each primitive's JVP rule.
A value with a zero tangent is never wrapped, so zeros stay symbolic."""
from __future__ import annotations

from ..core.trace import Trace, Tracer, _state, aval_of


class JVPTracer(Tracer):
    __slots__ = ("primal", "tangent")

    def __init__(self, trace, primal, tangent) -> None:
        self._trace = trace
        self.primal = primal
        self.tangent = tangent

    @property
    def aval(self):
        return aval_of(self.primal)

    shape = property(lambda self: self.primal.shape)
    dtype = property(lambda self: self.primal.dtype)


class JVPTrace(Trace):
    name = "jvp"

    def concrete(self, tracer):
        return tracer.primal

    def process_primitive(self, prim, args, params):
        primals, tangents, live = [], [], False
        for a in args:
            if isinstance(a, Tracer):
                if a._trace is self:
                    primals.append(a.primal)
                    tangents.append(a.tangent)
                    live = True
                    continue
                self.check_foreign(a)
            primals.append(a)
            tangents.append(None)
        if not live or prim.nondiff:
            return self.parent.process_primitive(prim, primals, params)
        prev = _state.trace
        _state.trace = self.parent
        try:
            out, out_dot = prim.jvp(primals, tangents, **params)
        finally:
            _state.trace = prev
        if out_dot is None or out.dtype.kind not in "fc":
            return out
        return JVPTracer(self, out, out_dot)


from ..numpy._util import register_fast_type  # noqa: E402

register_fast_type(JVPTracer)
