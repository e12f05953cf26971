"""StagingTrace: records equations on abstract values into a Jaxpr (make_jaxpr, jit).
Operations on known values only are evaluated right away (constant folding).

Staging is on the path of every traced op, so it is kept lean: abstract_eval results are
cached by (primitive, input avals, params), a tracer's weak typing is its class (so
fgrad.numpy's promotion can trust a strong tracer's .shape and .dtype without building an
aval), and the origins of a value (for error messages) are shared, not copied, when one
input carries them all."""
from __future__ import annotations

from operator import attrgetter

import numpy as np

from ..core.avals import ShapedArray, weak_aval
from ..core.ir import Eqn, Jaxpr, Literal, Var
from ..core.trace import Trace, Tracer, aval_of, snapshot

_NO_ORIGINS = frozenset()


class StagingTracer(Tracer):
    """A staged value of a definite dtype (see WeakStagingTracer for Python numbers)."""

    __slots__ = ("_aval", "ir_var", "origins")
    _weak = False

    def __init__(self, trace, aval, var, origins=_NO_ORIGINS) -> None:
        self._trace = trace
        self._aval = aval
        self.ir_var = var  # not `var`: that name is the ndarray method x.var()
        self.origins = origins  # indices of the inputs this value depends on, for error messages

    @property
    def aval(self):
        return self._aval

    # read straight from the aval (Tracer's go through the `aval` property): promotion reads
    # them on every traced op
    shape = property(lambda self: self._aval.shape)
    dtype = property(lambda self: self._aval.dtype)


class WeakStagingTracer(StagingTracer):
    """A staged value standing for a Python number (its aval is a WeakShapedArray)."""

    __slots__ = ()
    _weak = True


def _tracer(trace, aval, var, origins=_NO_ORIGINS) -> StagingTracer:
    return (WeakStagingTracer if aval.weak_type else StagingTracer)(trace, aval, var, origins)


# (primitive, per-input (aval class, shape, dtype), params) -> the output aval. abstract_eval
# is a pure function of those, and a traced program repeats the same few signatures many
# times over. Bounded: cleared when full (a cache miss only costs the rule's call).
_AVAL_CACHE: dict = {}
_AVAL_CACHE_MAX = 8192


# Param types a key may hold: plain values, compared by value. Anything else (a jaxpr, a
# function, an array) is not cached: it would be keyed by identity, never hit again, and keep
# what it refers to (a jaxpr's constants) alive in the cache.
_PLAIN_PARAMS = frozenset({type(None), bool, int, float, complex, str, np.dtype, type,
                           *{type(np.dtype(d)) for d in "?bhilqBHILQefdgFDG"}})


def _plain(v) -> bool:
    c = v.__class__
    if c in _PLAIN_PARAMS:
        return True
    return c is tuple and all(_plain(x) for x in v)


def _aval_key(prim, avals, params):
    """The cache key of one abstract_eval call, or None when a param is not a plain value
    (see _PLAIN_PARAMS). Each param's type is part of the key: 1, 1.0 and True are equal in
    Python but a rule may treat them differently (e.g. reject a float)."""
    key = [prim]
    for a in avals:
        key.append(a.__class__)
        key.append(a.shape)
        key.append(a.dtype)
    if params:
        for k, v in params.items():
            if not _plain(v):
                return None
            key.append(k)
            key.append(v.__class__)
            key.append(v)
    return tuple(key)


def cached_abstract_eval(prim, avals, params) -> ShapedArray:
    """`prim.abstract_eval(*avals, **params)`, memoised (see _AVAL_CACHE)."""
    key = _aval_key(prim, avals, params)
    if key is None:
        return prim.abstract_eval(*avals, **params)
    out = _AVAL_CACHE.get(key)
    if out is None:
        out = prim.abstract_eval(*avals, **params)
        if len(_AVAL_CACHE) >= _AVAL_CACHE_MAX:
            _AVAL_CACHE.clear()
        _AVAL_CACHE[key] = out
    return out


# Callables run on each equation a StagingTrace stages, while they are listed (saved_residuals
# notes where the user's code staged each one).
EQN_HOOKS: list = []


class StagingTrace(Trace):
    """Stages the current function into equations.

    `freeze=True` (jit, make_jaxpr, linearize: a jaxpr kept and run later) makes every
    array constant a snapshot (`core.trace.snapshot`) of the value it had when the staged
    code read it, JAX's semantics for closed-over arrays: the folded constants, the
    compiled kernels, the 0-d scalar tier and the replayed jaxpr all see that one value,
    whatever the user writes into the array later. A buffer the staged code reads, refills
    and reads again gives one constant per value. Without `freeze` (a control-flow body,
    whose constants become the primitive's operands, snapshotted by whoever keeps them;
    replay's staged rules) arrays are kept as they are, and only 0-d literals, which the
    IR holds inline, are snapshots."""

    name = "make_jaxpr"

    def __init__(self, parent, name: str = "make_jaxpr", freeze: bool = False) -> None:
        super().__init__(parent)
        self.name = name
        self.freeze = freeze
        self.eqns: list[Eqn] = []
        self.invars: list[Var] = []
        self.constvars: list[Var] = []
        self.consts: list = []
        # id(value) -> (its variable, the value, the snapshot kept): the value is held so that
        # its id is not reused while the trace lives
        self._const_ids: dict[int, tuple] = {}
        self.labels: list[str] = []

    def new_arg(self, aval, label: str | None = None) -> StagingTracer:
        v = Var(aval)
        self.invars.append(v)
        self.labels.append(label or f"input {len(self.labels)}")
        return _tracer(self, aval, v, frozenset((len(self.labels) - 1,)))

    def weaken(self, tracer):
        """`tracer` marked weakly typed: the result of Python arithmetic on traced Python
        numbers, which eagerly would be a Python number too."""
        if isinstance(tracer, StagingTracer) and tracer._trace is self and not tracer._aval.weak_type:
            return WeakStagingTracer(self, weak_aval(tracer._aval), tracer.ir_var, tracer.origins)
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
            return Literal(snapshot(x))
        hit = self._const_ids.get(id(x))
        if hit is not None:
            v, _, kept = hit
            # the same buffer read again: the same constant, unless it was refilled meanwhile
            # (one with NaNs compares unequal: a second, equal constant, which costs nothing else)
            if kept is x or (kept.shape == x.shape and np.array_equal(kept, x)):
                return v
        kept = snapshot(x) if self.freeze else x
        v = Var(aval_of(x))
        self._const_ids[id(x)] = (v, x, kept)
        self.constvars.append(v)
        self.consts.append(kept)
        return v

    unpack = attrgetter("ir_var", "origins")

    def process_primitive(self, prim, args, params):
        # Trace.partition, inlined with what staging needs from each argument: the atom,
        # its aval and the origins (this runs once per traced op)
        atoms = []
        origins = None
        live = False
        others = False
        for a in args:
            if isinstance(a, Tracer):
                if a._trace is self:
                    atoms.append(a.ir_var)
                    o = a.origins
                    if origins is None or o is origins:
                        origins = o
                    elif o:
                        origins = origins | o
                    live = True
                    continue
                self.check_foreign(a)
            atoms.append(None)
            others = True
        if not live:  # known values only: computed now (constant folding)
            return self.parent.run(prim.bind, args, params)
        if others:
            atoms = [self._const_atom(a) if v is None else v for v, a in zip(atoms, args)]
        aval = cached_abstract_eval(prim, [v.aval for v in atoms], params)
        out = Var(aval)
        eqn = Eqn(prim, atoms, [out], params)
        self.eqns.append(eqn)
        if EQN_HOOKS:
            for hook in EQN_HOOKS:
                hook(eqn)
        return _tracer(self, aval, out, origins)

    def to_jaxpr(self, outs) -> tuple[Jaxpr, list]:
        outvars = [self.atom(o) for o in outs]
        return Jaxpr(self.constvars, self.invars, self.eqns, outvars), self.consts
