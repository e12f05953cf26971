"""StagingTrace: records equations on abstract values into a Jaxpr (make_jaxpr, jit).
Operations on known values only are evaluated right away (constant folding)."""
from __future__ import annotations

from operator import attrgetter

import numpy as np

from ..core.avals import weak_aval
from ..core.ir import Eqn, Jaxpr, Literal, Var
from ..core.trace import Trace, Tracer, aval_of


class StagingTracer(Tracer):
    __slots__ = ("_aval", "ir_var", "origins")

    def __init__(self, trace, aval, var, origins=frozenset()) -> None:
        self._trace = trace
        self._aval = aval
        self.ir_var = var  # not `var`: that name is the ndarray method x.var()
        self.origins = origins  # indices of the inputs this value depends on, for error messages

    @property
    def aval(self):
        return self._aval

    @property
    def _weak(self) -> bool:
        return self._aval.weak_type


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
        self.labels: list[str] = []

    def new_arg(self, aval, label: str | None = None) -> StagingTracer:
        v = Var(aval)
        self.invars.append(v)
        self.labels.append(label or f"input {len(self.labels)}")
        return StagingTracer(self, aval, v, frozenset((len(self.labels) - 1,)))

    def weaken(self, tracer):
        """`tracer` marked weakly typed: the result of Python arithmetic on traced Python
        numbers, which eagerly would be a Python number too."""
        if isinstance(tracer, StagingTracer) and tracer._trace is self and not tracer._aval.weak_type:
            return StagingTracer(self, weak_aval(tracer._aval), tracer.ir_var, tracer.origins)
        return tracer

    def origin_of(self, tracer) -> str | None:
        names = [self.labels[i] for i in sorted(tracer.origins)]
        return f"It depends on {', '.join(names)}." if names else None

    def atom(self, x):
        """The IR atom for `x`: its variable, an inline literal, or a constant variable."""
        if isinstance(x, Tracer):
            if x._trace is self:
                return x.ir_var
            self.check_foreign(x)
        return self._const_atom(x)

    def _const_atom(self, x):
        """A value this trace does not own (an array, or an enclosing trace's tracer)."""
        if getattr(x, "shape", None) == () and isinstance(x, (np.ndarray, np.generic)):
            return Literal(x)
        v = self._const_ids.get(id(x))
        if v is None:
            v = self._const_ids[id(x)] = Var(aval_of(x))
            self.constvars.append(v)
            self.consts.append(x)
        return v

    unpack = attrgetter("ir_var", "origins")

    def process_primitive(self, prim, args, params):
        ir_vars, origins, live = self.partition(args)
        if not live:  # known values only: computed now (constant folding)
            return self.parent.run(prim.bind, args, params)
        atoms = [v if o is not None else self._const_atom(v) for v, o in zip(ir_vars, origins)]
        aval = prim.abstract_eval(*[a.aval for a in atoms], **params)
        out = Var(aval)
        self.eqns.append(Eqn(prim, atoms, [out], params))
        return StagingTracer(self, aval, out, frozenset().union(*[o for o in origins if o is not None]))

    def to_jaxpr(self, outs) -> tuple[Jaxpr, list]:
        outvars = [self.atom(o) for o in outs]
        return Jaxpr(self.constvars, self.invars, self.eqns, outvars), self.consts
