"""JVPTrace: pushes tangents forward with each primitive's JVP rule.
A value with a zero tangent is never wrapped, so zeros stay symbolic.

Complex values follow JAX's convention: a JVP is the plain complex-linear pushforward (the
tangent of a complex value is complex; of a real value computed from a complex one, e.g.
abs(z), real); see fgrad.ops.complex for the matching VJP convention."""
from __future__ import annotations

from operator import attrgetter

from ..core.avals import weak_aval
from ..core.trace import Trace, Tracer, aval_of


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


class WeakJVPTracer(JVPTracer):
    """A Python number given as a jvp primal: it promotes weakly, as the number does eagerly."""

    __slots__ = ()
    _weak = True

    @property
    def aval(self):
        return weak_aval(aval_of(self.primal))


class JVPTrace(Trace):
    name = "jvp"

    differentiates = True

    def concrete(self, tracer):
        return tracer.primal

    def weaken(self, tracer):
        if type(tracer) is JVPTracer and tracer._trace is self:
            return WeakJVPTracer(self, tracer.primal, tracer.tangent)
        return tracer

    unpack = attrgetter("primal", "tangent")

    def process_primitive(self, prim, args, params):
        primals, tangents, live = self.partition(args)
        if not live or prim.nondiff:
            return self.parent.process_primitive(prim, primals, params)
        out, out_dot = self.parent.run(prim.jvp, (primals, tangents), params)
        if out_dot is None or out.dtype.kind in "biu":
            return out
        return JVPTracer(self, out, out_dot)

