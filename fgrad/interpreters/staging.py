"""StagingTrace: records equations on abstract values into a Jaxpr (make_jaxpr, jit).
Operations on known values only are evaluated right away (constant folding)."""
from __future__ import annotations

import numpy as np

from ..core.ir import Eqn, Jaxpr, Literal, Var
from ..core.trace import Trace, Tracer, _state, aval_of


class StagingTracer(Tracer):
    __slots__ = ("_aval", "var")

    def __init__(self, trace, aval, var) -> None:
        self._trace = trace
        self._aval = aval
        self.var = var

    @property
    def aval(self):
        return self._aval


class StagingTrace(Trace):
    name = "make_jaxpr"

    def __init__(self, parent, name: str = "make_jaxpr") -> None:
        super().__init__(parent)
        self.name = name
        self.eqns: list[Eqn] = []
        self.invars: list[Var] = []
        self.constvars: list[Var] = []
        self.consts: list = []
        self._const_ids: dict[int, Var] = {}

    def new_arg(self, aval) -> StagingTracer:
        v = Var(aval)
        self.invars.append(v)
        return StagingTracer(self, aval, v)

    def atom(self, x):
        """The IR atom for `x`: its variable, an inline literal, or a constant variable."""
        if isinstance(x, Tracer):
            if x._trace is self:
                return x.var
            self.check_foreign(x)
        elif getattr(x, "shape", None) == () and isinstance(x, (np.ndarray, np.generic)):
            return Literal(x)
        v = self._const_ids.get(id(x))
        if v is None:
            v = self._const_ids[id(x)] = Var(aval_of(x))
            self.constvars.append(v)
            self.consts.append(x)
        return v

    def process_primitive(self, prim, args, params):
        if not any(isinstance(a, Tracer) and a._trace is self for a in args):
            prev = _state.trace
            _state.trace = self.parent
            try:
                return prim.bind(*args, **params)
            finally:
                _state.trace = prev
        atoms = [self.atom(a) for a in args]
        aval = prim.abstract_eval(*[a.aval for a in atoms], **params)
        out = Var(aval)
        self.eqns.append(Eqn(prim, atoms, [out], params))
        return StagingTracer(self, aval, out)

    def to_jaxpr(self, outs) -> tuple[Jaxpr, list]:
        outvars = [self.atom(o) for o in outs]
        return Jaxpr(self.constvars, self.invars, self.eqns, outvars), self.consts
