"""RecordTrace: runs primitives under its parent with concrete values and records
a Node for each one that depends on an input, for the backward engine."""
from __future__ import annotations

from ..core.avals import weak_aval
from ..core.errors import DifferentiationError, complex_intermediate_message
from ..core.trace import Trace, Tracer, _state, aval_of
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


class WeakRecordTracer(RecordTracer):
    """A recorded Python number (vjp(f, x, 2.0)): it promotes weakly, as the number does
    eagerly. Not a fast type, so promotion always looks at its aval."""

    __slots__ = ()
    _weak = True

    @property
    def aval(self):
        return weak_aval(aval_of(self.primal))


class RecordTrace(Trace):
    name = "grad"

    differentiates = True

    def concrete(self, tracer):
        return tracer.primal

    def weaken(self, tracer):
        if type(tracer) is RecordTracer and tracer._trace is self:
            return WeakRecordTracer(self, tracer.primal, tracer.node)
        return tracer

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
        if recorded and prim.vjp_fwd is not None and not prim.nondiff:
            # The forward half of the VJP runs instead of the primitive (once per application)
            # and its residuals are kept in this application's node (see def_vjp_fwd).
            prev = _state.trace
            _state.trace = self.parent
            try:
                out, residuals = prim.vjp_fwd(*primals, **params)
            finally:
                _state.trace = prev
            if out.dtype.kind != "f":
                return _not_float(prim, out)
            return RecordTracer(self, out, Node(prim, params, tuple(parents), tuple(primals), out, residuals))
        # The parent interprets the primitive itself (each trace sets the current trace
        # for the rules it runs), which skips a second dispatch through bind.
        out = self.parent.process_primitive(prim, primals, params)
        if not recorded or prim.nondiff:
            return out
        if out.dtype.kind != "f":
            return _not_float(prim, out)
        return RecordTracer(self, out, Node(prim, params, tuple(parents), tuple(primals), out))


def _not_float(prim, out):
    """A differentiated primitive's output that is not a real float: integers and booleans
    carry no derivative; complex values would need a convention fgrad's rules don't follow."""
    if out.dtype.kind == "c":
        raise DifferentiationError(complex_intermediate_message(prim.name, out.dtype))
    return out


from ..numpy._util import register_fast_type  # noqa: E402

register_fast_type(RecordTracer)
