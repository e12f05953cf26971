"""The typed IR: variables, literals, equations and jaxprs, with a printer,
a type checker, dead-code elimination and an evaluator."""
from __future__ import annotations

import numpy as np

from .avals import ShapedArray
from .errors import FgradTypeError


class Var:
    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray) -> None:
        self.aval = aval


_LITERAL_AVALS: dict = {}


class Literal:
    """A 0-d constant written inline in the IR."""

    __slots__ = ("val", "aval")

    def __init__(self, val) -> None:
        self.val = val
        dtype = val.dtype if isinstance(val, (np.ndarray, np.generic)) else np.asarray(val).dtype
        aval = _LITERAL_AVALS.get(dtype)
        if aval is None:  # one aval per dtype, shared (avals are immutable)
            aval = _LITERAL_AVALS[dtype] = ShapedArray((), dtype)
        self.aval = aval

    def __str__(self) -> str:
        v = np.asarray(self.val).item()
        return repr(v) if isinstance(v, (float, bool)) else str(v)


class Eqn:
    __slots__ = ("primitive", "invars", "outvars", "params")

    def __init__(self, primitive, invars, outvars, params) -> None:
        self.primitive = primitive
        self.invars = list(invars)
        self.outvars = list(outvars)
        self.params = dict(params)


class Jaxpr:
    __slots__ = ("constvars", "invars", "eqns", "outvars")

    def __init__(self, constvars, invars, eqns, outvars) -> None:
        self.constvars = list(constvars)
        self.invars = list(invars)
        self.eqns = list(eqns)
        self.outvars = list(outvars)

    def __str__(self) -> str:
        return pp_jaxpr(self)


class ClosedJaxpr:
    """A jaxpr with values for its constant variables; what make_jaxpr returns."""

    __slots__ = ("jaxpr", "consts")

    def __init__(self, jaxpr: Jaxpr, consts) -> None:
        self.jaxpr = jaxpr
        self.consts = list(consts)

    @property
    def eqns(self):
        return self.jaxpr.eqns

    @property
    def in_avals(self):
        return [v.aval for v in self.jaxpr.invars]

    @property
    def out_avals(self):
        return [v.aval for v in self.jaxpr.outvars]

    def __call__(self, *args):
        return eval_jaxpr(self.jaxpr, self.consts, *args)

    def __str__(self) -> str:
        return pp_jaxpr(self.jaxpr)

    __repr__ = __str__


def _name(i: int) -> str:
    s = ""
    while True:
        s = chr(ord("a") + i % 26) + s
        i = i // 26 - 1
        if i < 0:
            return s


def _fmt_param(v) -> str:
    if isinstance(v, np.dtype) or (isinstance(v, type) and issubclass(v, np.generic)):
        return np.dtype(v).name
    if isinstance(v, tuple):
        return "(" + ", ".join(_fmt_param(x) for x in v) + ("," if len(v) == 1 else "") + ")"
    return repr(v) if isinstance(v, str) else str(v)


def pp_jaxpr(jaxpr: Jaxpr) -> str:
    """The jaxpr as text, JAX's notation. Jaxprs in params (control-flow bodies and branches)
    are printed nested and indented; one naming of variables runs through all of them."""
    return "\n".join(_pp_lines(jaxpr, {}))


def _is_jaxpr(v) -> bool:
    return isinstance(v, (Jaxpr, ClosedJaxpr))


def _has_jaxpr(v) -> bool:
    return _is_jaxpr(v) or (isinstance(v, (tuple, list)) and any(_is_jaxpr(x) for x in v))


_COUNT = "count"  # the key of pp_jaxpr's names dict that counts the names given (others are ids)


def _pp_lines(jaxpr: Jaxpr, names: dict) -> list[str]:
    if isinstance(jaxpr, ClosedJaxpr):
        jaxpr = jaxpr.jaxpr

    def decl(v) -> str:
        # a fresh name on every declaration, also of a variable declared before: one body may
        # appear twice among the params (custom_linear_solve's symmetric matvec and vecmat)
        count = names[_COUNT] = names.get(_COUNT, 0) + 1
        names[id(v)] = _name(count - 1)
        return f"{names[id(v)]}:{v.aval.str_short()}"

    def atom(v) -> str:
        return str(v) if isinstance(v, Literal) else names.get(id(v), "?")

    consts = " ".join(decl(v) for v in jaxpr.constvars)
    ins = " ".join(decl(v) for v in jaxpr.invars)
    lines = [f"{{ lambda {consts + ' ' if consts else ''}; {ins}. let"]
    for e in jaxpr.eqns:
        outs = " ".join(decl(v) for v in e.outvars)
        args = " ".join(atom(v) for v in e.invars)
        items = sorted(e.params.items())
        if any(_has_jaxpr(v) for _, v in items):  # one param a line, nested jaxprs indented
            lines.append(f"    {outs} = {e.primitive.name}[")
            for k, v in items:
                lines += ["      " + line for line in _pp_param(k, v, names)]
            lines.append(f"    ] {args}".rstrip())
            continue
        params = ""
        if e.params:
            params = "[" + ", ".join(f"{k}={_fmt_param(v)}" for k, v in items) + "]"
        lines.append(f"    {outs} = {e.primitive.name}{params} {args}".rstrip())
    outs = ", ".join(atom(v) for v in jaxpr.outvars)
    lines.append(f"  in ({outs},) }}")
    return lines


def _pp_param(key: str, value, names: dict) -> list[str]:
    if _is_jaxpr(value):
        sub = _pp_lines(value, names)
        return [f"{key}={sub[0]}"] + ["  " + line for line in sub[1:]]
    if _has_jaxpr(value):
        lines = [f"{key}=("]
        for v in value:
            lines += ["  " + line for line in (_pp_lines(v, names) if _is_jaxpr(v) else [_fmt_param(v)])]
        return lines + [")"]
    return [f"{key}={_fmt_param(value)}"]


def eval_jaxpr(jaxpr: Jaxpr, consts, *args) -> list:
    """Run `jaxpr` by binding each equation, so evaluation is itself traceable."""
    if len(args) != len(jaxpr.invars):
        raise FgradTypeError(f"eval_jaxpr: the jaxpr takes {len(jaxpr.invars)} arguments, got {len(args)}")
    if len(consts) != len(jaxpr.constvars):
        raise FgradTypeError(f"eval_jaxpr: the jaxpr has {len(jaxpr.constvars)} constants, got {len(consts)}")
    env = {}
    for v, x in zip(jaxpr.constvars, consts):
        env[id(v)] = x
    for v, x in zip(jaxpr.invars, args):
        env[id(v)] = x

    def read(a):
        return a.val if isinstance(a, Literal) else env[id(a)]

    # Each value is dropped after the last equation that reads it, so replaying a long jaxpr
    # (a staged backward pass) holds only what is still to be read, as the eager pass does.
    eqns = jaxpr.eqns
    last = {}
    for i, e in enumerate(eqns):
        for a in e.invars:
            last[id(a)] = i
    for a in jaxpr.outvars:
        last[id(a)] = len(eqns)
    drops: list[list] = [[] for _ in eqns]
    for k, i in last.items():
        if i < len(eqns):
            drops[i].append(k)
    for e, dead in zip(eqns, drops):
        out = e.primitive.bind(*[read(a) for a in e.invars], **e.params)
        env[id(e.outvars[0])] = out
        for k in dead:
            env.pop(k, None)
    return [read(a) for a in jaxpr.outvars]


def dce_jaxpr(jaxpr: Jaxpr) -> Jaxpr:
    """Drop equations whose outputs nothing uses: primitives are pure, except those marked
    `effectful` (fgrad.debug's host callback), which stay for their effect."""
    live = {id(v) for v in jaxpr.outvars if isinstance(v, Var)}
    kept = []
    for e in reversed(jaxpr.eqns):
        outs = e.outvars
        if ((id(outs[0]) in live) if len(outs) == 1 else any(id(v) in live for v in outs)) \
                or e.primitive.effectful:
            kept.append(e)
            for v in e.invars:
                if v.__class__ is not Literal:
                    live.add(id(v))
    kept.reverse()
    used = [i for i, v in enumerate(jaxpr.constvars) if id(v) in live]
    return Jaxpr([jaxpr.constvars[i] for i in used], jaxpr.invars, kept, jaxpr.outvars), used


def _literal_key(a: Literal) -> tuple:
    """Literals are merged when their bytes and dtype agree (so -0.0 and 0.0 stay apart)."""
    val = a.val
    if not isinstance(val, (np.ndarray, np.generic)):
        val = np.asarray(val)
    return ("lit", val.dtype, val.tobytes())


def cse_jaxpr(jaxpr: Jaxpr) -> Jaxpr:
    """Merge equations that apply the same primitive to the same atoms and params."""
    rename: dict[int, object] = {}
    seen: dict = {}
    eqns = []
    for e in jaxpr.eqns:
        # one pass over the atoms builds both the renamed inputs and the key
        invars = []
        key = [e.primitive]
        renamed = False
        for a in e.invars:
            if a.__class__ is Literal:
                invars.append(a)
                key.append(_literal_key(a))
                continue
            r = rename.get(id(a))
            if r is not None:
                a = r
                renamed = True
            invars.append(a)
            key.append(id(a))
        if e.params:
            key.append(tuple(sorted(e.params.items())))
        key = tuple(key)
        try:
            hit = seen.get(key)
        except TypeError:  # an unhashable param (a list): never merged
            key = hit = None
        if hit is not None:
            rename[id(e.outvars[0])] = hit
            continue
        if key is not None:
            seen[key] = e.outvars[0]
        # an equation whose inputs were not renamed is kept as it is (equations are never
        # mutated after staging)
        eqns.append(Eqn(e.primitive, invars, e.outvars, e.params) if renamed else e)
    outvars = [rename.get(id(v), v) for v in jaxpr.outvars]
    return Jaxpr(jaxpr.constvars, jaxpr.invars, eqns, outvars)


def typecheck_jaxpr(jaxpr: Jaxpr | ClosedJaxpr) -> None:
    """Check that `jaxpr` is well formed and well typed; raise TypeError naming the first
    equation that is not.

    Every variable is defined once (constvars, invars, then one output per equation) and
    before it is used; every atom is a Var or a 0-d Literal whose aval is its value's; each
    equation's output aval is exactly (shape, dtype and weak type) what its primitive's
    abstract_eval gives for the input avals; the outputs are defined. Jaxprs nested in
    params are checked too. Staged jaxprs pass by construction unless a rule is
    inconsistent; a recorded graph (`interpreters.record.graph_to_jaxpr`) takes its avals
    from the values the impls produced, so there this compares abstract_eval with impl.
    """
    if isinstance(jaxpr, ClosedJaxpr):
        if len(jaxpr.consts) != len(jaxpr.jaxpr.constvars):
            raise FgradTypeError(f"typecheck: {len(jaxpr.consts)} constants for "
                            f"{len(jaxpr.jaxpr.constvars)} constant variables")
        jaxpr = jaxpr.jaxpr
    defined: set[int] = set()

    def define(v, where: str) -> None:
        if not isinstance(v, Var):
            raise FgradTypeError(f"typecheck: {where} is a {type(v).__name__}, not a Var")
        if id(v) in defined:
            raise FgradTypeError(f"typecheck: {where} defines a variable a second time")
        defined.add(id(v))

    def check_atom(a, where: str) -> None:
        if isinstance(a, Literal):
            val = np.asarray(a.val)
            if val.shape != () or a.aval != ShapedArray((), val.dtype):
                raise FgradTypeError(f"typecheck: {where}: a literal must be 0-d and typed by its value, "
                                f"got {val.dtype}{list(val.shape)} typed {a.aval}")
        elif not isinstance(a, Var):
            raise FgradTypeError(f"typecheck: {where} is a {type(a).__name__}, not a Var or Literal")
        elif id(a) not in defined:
            raise FgradTypeError(f"typecheck: {where} uses an undefined variable")

    for i, v in enumerate(jaxpr.constvars):
        define(v, f"constant {i}")
    for i, v in enumerate(jaxpr.invars):
        define(v, f"input {i}")
    for k, e in enumerate(jaxpr.eqns):
        where = f"equation {k} ({e.primitive.name})"
        for a in e.invars:
            check_atom(a, where)
        for p in e.params.values():  # nested jaxprs (control flow, custom rules)
            for sub in (p if isinstance(p, (tuple, list)) else (p,)):
                if isinstance(sub, (Jaxpr, ClosedJaxpr)):
                    typecheck_jaxpr(sub)
        if len(e.outvars) != 1:  # every fgrad primitive has one output
            raise FgradTypeError(f"typecheck: {where} has {len(e.outvars)} outputs, primitives have one")
        out = e.primitive.abstract_eval(*[a.aval for a in e.invars], **e.params)
        want = e.outvars[0].aval
        if out != want or out.weak_type != want.weak_type:
            raise FgradTypeError(f"typecheck: {where} gives {_aval_str(out)} by its abstract_eval, "
                            f"the jaxpr says {_aval_str(want)}")
        define(e.outvars[0], where)
    for i, a in enumerate(jaxpr.outvars):
        check_atom(a, f"output {i}")


def _aval_str(aval: ShapedArray) -> str:
    return aval.str_short() + (" (weak)" if aval.weak_type else "")
