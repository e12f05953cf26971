"""User-defined derivative rules (custom_vjp, custom_jvp) and checkpoint.

Each is one primitive whose one param, `call`, carries the user's functions and the
structure of the arguments, so every trace (record, jvp, staging, vmap) handles it like any
other primitive.

`call` is immutable: jit replays one equation (with its params) on every call and vmap's
loop binds the same params once per example, so anything one application computes must
live with that application. custom_vjp's residuals therefore live in the recorded node:
`custom_vjp_call_p` has a `vjp_fwd` rule, which the recorders (RecordTrace, and
`interpreters.record.record_call` for other callers) run instead of the primitive's impl --
once per application, as JAX does -- and
whose residuals they store in that application's Node; the VJP rule receives them as
`residuals=`. With no transform active, a custom function simply runs its primal.
Under a transform the function is staged once per input signature (`_staged_fun`) and
replayed wherever it is evaluated, so the user's Python runs once per trace, as in JAX.

Pytree outputs: the primitives are single-output, so several output leaves travel as one
flat vector (concatenated, in their promoted dtype; fgrad/_packing.py) that the caller slices apart again.
The caller learns the output structure from whichever rule ran the user's function during
its own `bind` (see `_OutSinks`), since that structure is only known once the function ran.
"""
from __future__ import annotations

import functools
import inspect
import threading
import types
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from . import numpy as fnp
from ._packing import pack_leaves, unpack_leaves
from .api import jvp, make_jaxpr, vjp, vmap
from .core import errors
from .core.avals import ShapedArray
from .core.errors import FgradRuntimeError, FgradTypeError, FgradValueError
from .core.ir import Literal, eval_jaxpr
from .core.primitive import Primitive
from .core.trace import EVAL_TRACE, Tracer, _state, aval_of, new_trace, snapshot
from .core.rules import def_linear
from .interpreters.record import record_known
from .interpreters.staging import StagingTrace
from .numpy._util import as_value, is_array, plain_value, refuse_foreign
from .ops._batching import loop_batch
from .ops.elementwise import convert_element_type
from .tree_util import tree_flatten, tree_map, tree_unflatten

# --- the call object ------------------------------------------------------------------------

class _Call:
    """The static params of one call site: the user's functions, the pytree structure of the
    positional arguments, and the argument leaves that are not primitive inputs (`statics`:
    (flat index, value) pairs, e.g. Python numbers given as nondiff arguments). Hashes by
    identity. Immutable: see the module docstring."""

    __slots__ = ("fun", "fwd", "bwd", "jvp", "in_tree", "statics", "diff", "nondiff_argnums", "kind",
                 "staged", "policy", "__weakref__")

    def __init__(self, fun: Callable, in_tree, fwd: Callable | None = None, bwd: Callable | None = None,
                 jvp: Callable | None = None, *, statics: tuple = (), nondiff_argnums: tuple = (),
                 kind: str = "custom_vjp", diff: tuple | None = None,
                 policy: Callable | None = None) -> None:
        if diff is None:  # per primitive input: does it belong to a differentiable argument
            static_idx = {i for i, _ in statics}
            owners = _owners(in_tree)
            diff = tuple(owners[i] not in nondiff_argnums for i in range(in_tree.num_leaves)
                         if i not in static_idx)
        init = object.__setattr__
        init(self, "fun", fun)
        init(self, "fwd", fwd)
        init(self, "bwd", bwd)
        init(self, "jvp", jvp)
        init(self, "in_tree", in_tree)
        init(self, "statics", tuple(statics))
        init(self, "diff", diff)
        init(self, "nondiff_argnums", tuple(nondiff_argnums))
        init(self, "kind", kind)
        init(self, "policy", policy)  # checkpoint's: which values its forward keeps (None: none)
        # fun staged once per input signature (_staged_fun): a cache of what the function is,
        # like a compiled program, never of one application's values
        init(self, "staged", {})

    def __setattr__(self, name: str, value) -> None:
        raise AttributeError(f"{self.kind} call parameters are immutable: jit and vmap reuse them across "
                             "applications, so per-application values (residuals) belong in the node")

    def __repr__(self) -> str:
        return getattr(self.fun, "__name__", "fun")

    def args(self, dyn: Sequence) -> tuple:
        """The positional arguments, rebuilt from the primitive's inputs and the static leaves."""
        if not self.statics:
            return tuple(tree_unflatten(self.in_tree, list(dyn)))
        static = dict(self.statics)
        it = iter(dyn)
        leaves = [static[i] if i in static else next(it) for i in range(self.in_tree.num_leaves)]
        return tuple(tree_unflatten(self.in_tree, leaves))

    def split(self, dyn: Sequence) -> tuple[tuple, tuple]:
        """(nondiff arguments, differentiable arguments), each in positional order."""
        args = self.args(dyn)
        nd = set(self.nondiff_argnums)
        return (tuple(args[i] for i in self.nondiff_argnums),
                tuple(a for i, a in enumerate(args) if i not in nd))

    def diff_positions(self) -> list[int]:
        nd = set(self.nondiff_argnums)
        return [i for i in range(len(_arg_trees(self.in_tree))) if i not in nd]


def _arg_trees(in_tree) -> list:
    """The structure of each positional argument (in_tree is the structure of the args tuple)."""
    return list(in_tree.children)


def _owners(in_tree) -> list[int]:
    """The argument position of each flat leaf."""
    children = in_tree.children
    if all(c.node_type is None for c in children):  # every argument is one leaf (the common case)
        return list(range(len(children)))
    return [p for p, child in enumerate(children) for _ in range(child.num_leaves)]


class _Residuals(NamedTuple):
    """What custom_vjp's forward rule keeps for the backward of one application."""
    value: Any          # the user's residuals (anything fwd returned)
    out_tree: Any       # the output structure, to hand bwd its cotangent in that shape
    out_avals: tuple    # the output leaves' avals, to slice a packed cotangent apart


# --- output structure: reported by the rule that ran the function, read by the caller ---------

class _OutSinks(threading.local):
    """{id(call): [out_tree, out_avals]} for the custom calls being bound on this thread.

    Only the `bind` of one application writes into its entry (its rules run synchronously
    inside that bind), and the entry is removed when the bind returns, so this is state of
    one application, never shared: a jaxpr replayed by jit or an example of vmap's loop
    finds no entry (or the same call's, already filled with the same structure)."""

    def __init__(self) -> None:
        self.by_call: dict = {}


_SINKS = _OutSinks()


def _report_out(call: _Call, tree, avals: tuple) -> None:
    slot = _SINKS.by_call.get(id(call))
    if slot is not None and not slot:
        slot.extend((tree, avals))


def _bind(prim: Primitive, call: _Call, dyn: list) -> tuple:
    """One application: (packed output, out_tree, out_avals). The packed output is what the
    trace returned; `_unpack(*_bind(...))` is the output pytree."""
    slot: list = []
    _SINKS.by_call[id(call)] = slot
    try:
        packed = prim.bind(*dyn, call=call)
    finally:
        del _SINKS.by_call[id(call)]
    if not slot:  # every path that computes the output runs the user's function and reports
        raise FgradRuntimeError(f"internal error: {call.kind} {call!r} produced no output structure")
    return packed, slot[0], slot[1]


def _bind_and_unpack(prim: Primitive, call: _Call, dyn: list):
    return _unpack(*_bind(prim, call, dyn))


# --- packing several output leaves into the primitive's one output ----------------------------

def _as_array(x, what: str, kind: str = "custom_vjp"):
    """A rule's output leaf as an array (Python numbers and NumPy scalars converted)."""
    if isinstance(x, np.generic):
        return np.asarray(x)
    return x if isinstance(x, Tracer) or type(x) is np.ndarray else plain_value(x, f"fgrad.{kind}", what)


def _pack(call: _Call, out, what: str):
    """The one array standing for the pytree `out`; reports the structure to the caller.
    Returns (packed, out_tree, out_avals)."""
    leaves, tree = tree_flatten(out)
    if not leaves:
        raise FgradTypeError(f"{what} of {call!r} returned {_describe(out)}, which holds no array; "
                        "return an array or a pytree (tuple, list, dict) of arrays.")
    leaves = [_as_array(x, f"output of {what} of {call!r}", call.kind) for x in leaves]
    avals = tuple(ShapedArray(aval_of(x).shape, aval_of(x).dtype) for x in leaves)
    _report_out(call, tree, avals)
    if len(leaves) == 1:
        return leaves[0], tree, avals
    return pack_leaves(leaves, avals, zero_ints=False), tree, avals


def _unpack(packed, tree, avals: tuple):
    """The pytree `tree` out of a value packed by `_pack` (an output or its cotangent)."""
    return tree_unflatten(tree, unpack_leaves(packed, avals))


def _describe(x) -> str:
    """What a rule returned, for error messages (arrays by type, not by tracer class)."""
    if isinstance(x, (tuple, list)):
        return f"a {type(x).__name__} of length {len(x)}"
    if isinstance(x, (Tracer, np.ndarray, np.generic)):
        return f"an array of type {aval_of(x).str_short()}"
    return f"a {type(x).__name__}"


# --- binding a call: the arguments' leaves become inputs or static values ---------------------

class _Positional:
    """Binds a call's keyword arguments to positions (defaults filled in), as JAX's custom rules
    do: fwd, bwd and the jvp rule always see positional arguments. The signature is read once,
    when the function is decorated."""

    __slots__ = ("fun", "kind", "sig", "npos")

    def __init__(self, fun: Callable, kind: str) -> None:
        self.fun, self.kind = fun, kind
        try:
            self.sig = inspect.signature(fun)
        except (TypeError, ValueError):
            self.sig = None
        # a call with exactly this many positional arguments needs no binding (no defaults to fill)
        self.npos = None
        if self.sig is not None:
            kinds = [p.kind for p in self.sig.parameters.values()]
            if all(k in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
                   for k in kinds):
                self.npos = len(kinds)

    def __call__(self, args: tuple, kwargs: dict) -> tuple:
        if not kwargs and (len(args) == self.npos or self.sig is None):
            return args
        name = _name(self.fun)
        if self.sig is None:
            raise FgradTypeError(f"{self.kind} function {name}: keyword arguments need a function whose "
                            "signature Python can inspect; pass them positionally")
        try:
            bound = self.sig.bind(*args, **kwargs)
        except TypeError as e:
            raise FgradTypeError(f"{self.kind} function {name}: {e}") from None
        bound.apply_defaults()
        if bound.kwargs:
            raise FgradTypeError(f"{self.kind} function {name}: keyword arguments {sorted(bound.kwargs)} could "
                            "not be resolved to positions (keyword-only or **kwargs parameters); custom "
                            "rules receive positional arguments only", doc="custom-keyword-only")
        return tuple(bound.args)


def _name(fun) -> str:
    return getattr(fun, "__name__", repr(fun))


def _check_nondiff_argnums(nums, kind: str) -> tuple:
    nums = (nums,) if isinstance(nums, int) else tuple(nums)
    for n in nums:
        if type(n) is not int or n < 0:
            raise FgradTypeError(f"{kind}: nondiff_argnums must be non-negative integers, got {nums!r}")
    if len(set(nums)) != len(nums):
        raise FgradTypeError(f"{kind}: nondiff_argnums has a repeated position: {nums!r}")
    return nums  # in the given order: bwd / the jvp rule receive those arguments in this order


def _apply(prim: Primitive, fun: Callable, args: tuple, nondiff_argnums: tuple, kind: str, **rules):
    """Apply a custom function: its primal when nothing is traced, else one bind of `prim`."""
    if nondiff_argnums and max(nondiff_argnums) >= len(args):
        raise FgradTypeError(f"{kind} function {_name(fun)} was called with {len(args)} positional "
                        f"argument(s), but nondiff_argnums={nondiff_argnums} names argument "
                        f"{max(nondiff_argnums)}", doc="custom-nondiff-argnums")
    flat, in_tree = tree_flatten(args)
    for x in flat:
        refuse_foreign(x, f"fgrad.{kind}")
    if not any(isinstance(x, Tracer) for x in flat):
        # No transform sees these arguments: the function is just its primal (a custom rule of
        # an untransformed value is never used). Also what fwd and bwd get when they call the
        # decorated function itself at the bottom of the trace stack, so that terminates.
        return fun(*args)
    owners = _owners(in_tree)
    statics, dyn, diff = [], [], []
    for i, (x, p) in enumerate(zip(flat, owners)):
        differentiable = p not in nondiff_argnums
        if is_array(x):
            dyn.append(x)
            diff.append(differentiable)
        elif differentiable and isinstance(x, (float, complex)):
            dyn.append(as_value(x, f"argument {p} of {_name(fun)}"))  # differentiable, as in JAX
            diff.append(True)
        else:
            # Python values with no derivative stay Python values: nondiff arguments (JAX
            # passes them to bwd as they are), bools and ints (flags, sizes the function may
            # use in Python control flow), and non-numeric leaves (strings, functions)
            statics.append((i, x))
    call = _Call(fun, in_tree, statics=tuple(statics), nondiff_argnums=nondiff_argnums, kind=kind,
                 diff=tuple(diff), **rules)
    return _bind_and_unpack(prim, call, dyn)


def _zeros_for(x):
    """Zeros shaped like `x`."""
    a = aval_of(x)
    return np.zeros(a.shape, a.dtype)


def _run_primal(call: _Call, xs: Sequence):
    """fun on the primitive's inputs: (packed output, out_tree, out_avals)."""
    return _pack(call, call.fun(*call.args(xs)), f"{call.kind} function")


class _StagedFun(NamedTuple):
    closed: Any         # ClosedJaxpr: the primitive's inputs -> the packed output
    out_tree: Any
    out_avals: tuple


def _staged_fun(call: _Call, avals: Sequence) -> _StagedFun | None:
    """The call's function staged once per input signature, at the bottom of the trace stack
    (a custom function sees only its arguments), or None when its Python reads values
    (ConcretizationError), which then runs per application. Every path that evaluates the
    function (impl, abstract_eval, vmap's loop, jit's replays, checkpoint's recomputation and
    forward mode) binds these equations, so the user's Python runs once per trace, as in JAX."""
    key = tuple((tuple(a.shape), a.dtype) for a in avals)  # (as _fun_on's lookup)
    if key in call.staged:
        return call.staged[key]
    found: list = []

    def packed(*xs):
        out, tree, out_avals = _run_primal(call, xs)
        found.append((tree, out_avals))
        return out
    try:
        closed = EVAL_TRACE.run(make_jaxpr(packed), tuple(np.zeros(a.shape, a.dtype) for a in avals))
    except errors.ConcretizationError:
        staged = None
    except errors.UnexpectedTracerError as e:
        raise _closure_error(call, f"{call.kind} function {call!r}") from e
    else:
        if any(isinstance(c, Tracer) for c in closed.consts):
            raise _closure_error(call, f"{call.kind} function {call!r}")
        staged = _StagedFun(closed, *found[0])
    call.staged[key] = staged
    return staged


def _fun_on(call: _Call, xs: Sequence, stage: bool = True):
    """The call's function on the primitive's inputs `xs` (under the current trace): its
    packed output, the output structure reported to the caller (see _staged_fun). With
    `stage=False` the function runs as Python unless it was staged already (an application
    with no transform above it runs once: staging would not pay)."""
    avals = [aval_of(x) for x in xs]
    if stage:
        staged = _staged_fun(call, avals)
    else:
        staged = call.staged.get(tuple((tuple(a.shape), a.dtype) for a in avals))
    if staged is None:
        return _run_primal(call, xs)[0]
    _report_out(call, staged.out_tree, staged.out_avals)
    return eval_jaxpr(staged.closed.jaxpr, staged.closed.consts, *xs)[0]


def _abstract_eval(*avals, call: _Call):
    staged = _staged_fun(call, avals)
    if staged is None:  # raises the function's ConcretizationError with its own message
        make_jaxpr(lambda *xs: _run_primal(call, xs)[0])(*[np.zeros(a.shape, a.dtype) for a in avals])
    return staged.closed.out_avals[0]


def _closure_error(call: _Call, what: str) -> errors.UnexpectedTracerError:
    return errors.UnexpectedTracerError(
        f"{what} uses a value being differentiated that is not one of its arguments: a "
        "traced value closed over (or leaked from an earlier transform). A "
        f"{call.kind} primitive sees only its arguments, so that value's derivative would be "
        "lost. Pass it as an argument.", doc="custom-closure")


def _impl(*xs, call: _Call, xp):
    # EvalTrace does not set the current trace for impls; the user's function binds fgrad ops,
    # which must run on these concrete values, not through the trace that called us
    try:
        out = EVAL_TRACE.run(_fun_on, (call, xs, False))
    except errors.UnexpectedTracerError as e:
        raise _closure_error(call, f"{call.kind} function {call!r}") from e
    if isinstance(out, Tracer):  # a tracer there came from a closure
        raise _closure_error(call, f"{call.kind} function {call!r}")
    return out


def _batch_rule(prim: Primitive):
    """vmap of a custom call. With nothing below vmap (the eval trace) no rule is needed: the
    staged function runs vectorised, its Python once. Under a transform the rule must be seen
    by it, so each example binds the call there (its staged function reused)."""
    def rule(n, vals, dims, *, call: _Call):
        if _state.trace is EVAL_TRACE:
            avals = [aval_of(v) if d is None else _example_aval(v, d) for v, d in zip(vals, dims)]
            staged = _staged_fun(call, avals)
            if staged is not None:
                _report_out(call, staged.out_tree, staged.out_avals)
                run = vmap(lambda *xs: eval_jaxpr(staged.closed.jaxpr, staged.closed.consts, *xs)[0],
                           in_axes=tuple(dims), axis_size=n)
                return run(*vals), 0
        return loop_batch(prim, n, vals, dims, call=call)
    return rule


def _example_aval(v, d: int) -> ShapedArray:
    a = aval_of(v)
    return ShapedArray(tuple(x for k, x in enumerate(a.shape) if k != d), a.dtype)


def _with_cts(needs, xs, cts, call: _Call, what: str) -> list:
    """One cotangent per primitive input from one per differentiable argument (pytrees, None =
    zero), checked against the inputs' shapes and cast to their dtypes."""
    positions = call.diff_positions()
    if not isinstance(cts, (tuple, list)):
        raise FgradTypeError(f"{what} of {call!r} must return a tuple with one cotangent per differentiable "
                        f"argument ({len(positions)}), got {_describe(cts)}")
    if len(cts) != len(positions):
        raise FgradValueError(f"{what} of {call!r} returned {len(cts)} cotangents for {len(positions)} "
                         "differentiable argument(s); return one per argument (None for zero)"
                         + (", leaving out the nondiff_argnums" if call.nondiff_argnums else "") + ".", doc="custom-vjp-bwd-count")
    trees = _arg_trees(call.in_tree)
    if len(trees) == len(positions) == len(xs) and all(t.node_type is None for t in trees) and \
            not any(isinstance(c, (tuple, list, dict)) for c in cts):
        dyn_cts = list(cts)  # one array argument per input (the common case)
    else:
        per_leaf: list = [None] * call.in_tree.num_leaves
        offsets = [0]
        for t in trees:
            offsets.append(offsets[-1] + t.num_leaves)
        for p, c in zip(positions, cts):
            leaves = _flatten_like(c, trees[p])
            if leaves is None:
                raise FgradValueError(f"{what} of {call!r}: the cotangent for argument {p} has the structure "
                                 f"{tree_flatten(c)[1]}, but the argument has {trees[p]}; give it the "
                                 "argument's structure (None for zero)", doc="custom-vjp-bwd-structure")
            per_leaf[offsets[p]:offsets[p + 1]] = leaves
        static = {i for i, _ in call.statics}
        dyn_cts = [c for i, c in enumerate(per_leaf) if i not in static]
    out = []
    for need, diff, c, x in zip(needs, call.diff, dyn_cts, xs):
        if not (need and diff) or c is None:
            out.append(None)
            continue
        c = _as_array(c, f"cotangent from {what} of {call!r}", call.kind)
        ca, xa = aval_of(c), aval_of(x)
        if tuple(ca.shape) != tuple(xa.shape):
            raise FgradValueError(f"{what} of {call!r}: cotangent shape {tuple(ca.shape)} for an input of shape "
                             f"{tuple(xa.shape)}; each cotangent must have its input's shape", doc="custom-vjp-bwd-shape")
        out.append(c if ca.dtype == xa.dtype else convert_element_type(c, xa.dtype))
    return out


def _flatten_like(ct, treedef) -> list | None:
    """The leaves of `ct` in the layout of `treedef` (None leaves allowed, None = all zero)."""
    if ct is None:
        return [None] * treedef.num_leaves
    leaves, tree = tree_flatten(ct, is_leaf=lambda v: v is None)
    if tree == treedef:
        return leaves
    leaves, tree = tree_flatten(ct)
    if tree == treedef:
        return leaves
    return None


# --- custom_vjp ---------------------------------------------------------------------------

custom_vjp_call_p = Primitive("custom_vjp_call")


def _custom_vjp_fwd(*xs, call: _Call):
    """The forward half of the VJP, run by the recorders: (packed output, _Residuals)."""
    try:
        res = call.fwd(*call.args(xs))
        if not (isinstance(res, (tuple, list)) and len(res) == 2):
            raise FgradTypeError(f"custom_vjp fwd of {call!r} must return a pair (output, residuals), got "
                            f"{_describe(res)}", doc="custom-vjp-fwd-pair")
        packed, tree, avals = _pack(call, res[0], "custom_vjp fwd")
    except errors.UnexpectedTracerError as e:
        raise _closure_error(call, f"custom_vjp fwd of {call!r}") from e
    # the node keeps the residuals until bwd runs: arrays among them (a closed-over one, say)
    # are snapshots, so later writes into them change no gradient (core.trace.snapshot)
    return packed, _Residuals(tree_map(snapshot, res[1]), tree, avals)


def _custom_vjp_vjp(needs, ct, out, *xs, call: _Call, residuals: _Residuals | None = None):
    if residuals is None:  # no recorder ran fwd for this node: it runs here
        residuals = _custom_vjp_fwd(*xs, call=call)[1]
    nondiff, _ = call.split(xs)
    cts = call.bwd(*nondiff, residuals.value, _unpack(ct, residuals.out_tree, residuals.out_avals))
    return _with_cts(needs, xs, cts, call, "custom_vjp bwd")


def _custom_vjp_jvp(primals, tangents, *, call: _Call):
    live = [i for i, (d, t) in enumerate(zip(call.diff, tangents)) if d and t is not None]
    if not live:
        return _fun_on(call, primals), None
    if call.jvp is not None:  # a forward rule given beside the VJP: see _forward_rule
        return call.jvp(call, primals, tangents, live)
    # As JAX: the rule is reverse-only, and differentiating `fun` itself instead would give
    # another derivative than grad's (a clipped or scaled gradient is the point of the rule).
    # Forward mode over a reverse pass (hessian, jvp of grad) never gets here: the reverse
    # trace runs fwd and bwd, whose own operations forward mode then differentiates.
    name = _name(call.fun)
    raise FgradTypeError(
        f"can't apply forward-mode autodiff (jvp) to a custom_vjp function: {name} has only a "
        "reverse-mode rule (defvjp), and differentiating its function instead would ignore that "
        f"rule. Use reverse mode for {name} (grad, vjp, jacrev; hessian, which is forward over "
        "reverse, works), or define its derivative with fgrad.custom_jvp, which serves both "
        "modes.", doc="custom-vjp-forward-mode")


def _jvp_of_fun(call: _Call, primals: Sequence, tangents: Sequence, live: list):
    """jvp of the call's own function in the inputs `live` (the others held constant)."""

    def f(*ys):
        xs = list(primals)
        for i, y in zip(live, ys):
            xs[i] = y
        return _fun_on(call, xs)
    return jvp(f, tuple(primals[i] for i in live), tuple(tangents[i] for i in live))


custom_vjp_call_p.def_impl(_impl)
custom_vjp_call_p.def_batch(_batch_rule(custom_vjp_call_p))
custom_vjp_call_p.def_abstract_eval(_abstract_eval)
custom_vjp_call_p.def_vjp(_custom_vjp_vjp)
custom_vjp_call_p.def_vjp_fwd(_custom_vjp_fwd)
custom_vjp_call_p.def_jvp(_custom_vjp_jvp)


def with_forward_rule(f: "custom_vjp", rule: Callable) -> "custom_vjp":
    """Give the custom_vjp function `f` a forward-mode rule beside its reverse one:
    `rule(call, primals, tangents, live) -> (out, out_dot)` on the primitive's packed inputs
    (`live`: the positions whose tangents are not zero). For rules that compute the
    derivative the function has, or refuse forward mode in a caller's own words. Returns `f`."""
    f._forward_rule = rule
    return f


def forward_through_fun(f: "custom_vjp") -> "custom_vjp":
    """Let forward mode of the custom_vjp function `f` differentiate its function, for a rule
    that computes the same derivative another way (odeint's adjoint method vs the tangent of
    its solver), never for one that changes it (a clipped gradient). Returns `f`."""
    return with_forward_rule(f, _jvp_of_fun)


class custom_vjp:
    """Decorator: give a function a hand-written reverse-mode rule (JAX's API).

    >>> import fgrad
    >>> import fgrad.numpy as jnp
    >>> @fgrad.custom_vjp
    ... def f(x): return jnp.sin(x)
    >>> f.defvjp(lambda x: (jnp.sin(x), jnp.cos(x)), lambda cos_x, ct: (ct * cos_x,))
    >>> print(fgrad.grad(f)(0.0))
    1.0

    `fwd(*args) -> (output, residuals)` runs once per application under a reverse-mode
    transform; `bwd(*nondiff_args, residuals, ct) -> tuple` returns one cotangent per
    argument not in `nondiff_argnums` (None for zero). Outputs may be pytrees of arrays;
    keyword arguments are bound to positions. As in JAX, forward mode (jvp, linearize,
    jacfwd) applied to it raises a TypeError: the rule is reverse-only, and differentiating
    `fun` would ignore it. Forward over reverse (hessian, jvp of grad) differentiates bwd.
    
    Args:
        fun: the function whose derivative the rules give.
        nondiff_argnums: positions of arguments that are not differentiated; bwd receives
            them first.
    """

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = _check_nondiff_argnums(nondiff_argnums, "custom_vjp")
        self._positional = _Positional(fun, "custom_vjp")
        self.fwd: Callable | None = None
        self.bwd: Callable | None = None
        # forward mode: None refuses it; else `rule(call, primals, tangents, live) -> (out, out_dot)`
        # on the primitive's inputs, packed (forward_through_fun; autograd.Function's jvp)
        self._forward_rule: Callable | None = None

    def defvjp(self, fwd: Callable, bwd: Callable) -> None:
        """Set the forward rule (output, residuals) and the backward rule (cotangents)."""
        self.fwd, self.bwd = fwd, bwd

    def __call__(self, *args, **kwargs):
        if self.fwd is None:
            raise FgradTypeError(f"custom_vjp function {_name(self.fun)} has no rule: call "
                            f"{_name(self.fun)}.defvjp(fwd, bwd) first", doc="custom-vjp-no-rule")
        args = self._positional(args, kwargs)
        return _apply(custom_vjp_call_p, self.fun, args, self.nondiff_argnums, "custom_vjp",
                      fwd=self.fwd, bwd=self.bwd, jvp=self._forward_rule)


# --- custom_jvp ---------------------------------------------------------------------------

custom_jvp_call_p = Primitive("custom_jvp_call")


def _run_user_jvp(call: _Call, primals: Sequence, tangents: Sequence):
    """The user's rule on the primitive's inputs (tangents: None = zero): packed (out, out_dot)."""
    nondiff, diff_args = call.split(primals)
    ts = [_zeros_for(p) if t is None else t for p, t in zip(primals, tangents)]
    # tangents in the arguments' structure: static leaves (Python bools, ints, objects) get None
    static = dict(call.statics)
    it = iter(ts)
    leaves = [None if i in static else next(it) for i in range(call.in_tree.num_leaves)]
    targs = tree_unflatten(call.in_tree, leaves)
    nd = set(call.nondiff_argnums)
    diff_tangents = tuple(t for i, t in enumerate(targs) if i not in nd)
    return _pack_jvp(call, call.jvp(*nondiff, tuple(diff_args), diff_tangents), "custom_jvp rule")


def _pack_jvp(call: _Call, res, what: str):
    """A forward rule's (primal_out, tangent_out) pytrees, checked and packed: (out, out_dot)."""
    if not (isinstance(res, (tuple, list)) and len(res) == 2):
        raise FgradTypeError(f"{what} of {call!r} must return a pair (primal_out, tangent_out), got "
                        f"{_describe(res)}", doc="custom-jvp-rule-pair")
    out, out_tree, avals = _pack(call, res[0], what)
    t_leaves = _flatten_like(res[1], out_tree)
    if t_leaves is None:
        raise FgradTypeError(f"{what} of {call!r} must return primal and tangent outputs of the same "
                        f"structure, got {out_tree} and {tree_flatten(res[1])[1]}")
    fixed = []
    for t, a in zip(t_leaves, avals):
        if t is None or a.dtype.kind not in "fc":  # integer outputs have no tangent (JAX: float0)
            t = np.zeros(a.shape, a.dtype)
        t = _as_array(t, f"tangent output of the {what} of {call!r}", call.kind)
        ta = aval_of(t)
        if tuple(ta.shape) != tuple(a.shape):
            raise FgradTypeError(f"{what} of {call!r} returned a tangent of shape {tuple(ta.shape)} for "
                            f"a primal output of shape {tuple(a.shape)}; they must match", doc="custom-jvp-tangent-shape")
        fixed.append(t if ta.dtype == a.dtype else convert_element_type(t, a.dtype))
    out_dot = _pack_like(fixed, avals)
    return out, out_dot


def _pack_like(leaves, avals):
    """Pack tangent leaves exactly as `_pack` packed the outputs with these avals."""
    return leaves[0] if len(leaves) == 1 else pack_leaves(leaves, avals, zero_ints=True)


def _custom_jvp_jvp(primals, tangents, *, call: _Call):
    return _run_user_jvp(call, primals, tangents)


class _Linearized(NamedTuple):
    """custom_jvp's residuals: the rule's tangent map at one application, staged."""
    jaxpr: Any      # the tangents of the inputs `live` -> the packed tangent output
    consts: list
    live: tuple


def _custom_jvp_fwd(*xs, call: _Call):
    """The forward half a recorder runs, as JAX's linearize: the rule runs once, its tangents
    staged, giving the output (the rule's primal output; the function itself does not run)
    and its tangent map as a jaxpr in the tangents, which the VJP transposes. So the user's
    rule runs once per application and f not at all, as in JAX; arrays the rule closes over
    are frozen (snapshots) at this point."""
    live = tuple(i for i, d in enumerate(call.diff) if d and aval_of(xs[i]).dtype.kind in "fc")
    with new_trace(StagingTrace, "custom_jvp", True) as st:
        full: list = [None] * len(xs)
        for i in live:
            a = aval_of(xs[i])
            full[i] = st.new_arg(ShapedArray(a.shape, a.dtype))
        out, out_dot = _run_user_jvp(call, xs, full)
        if isinstance(out, Tracer) and getattr(out, "_trace", None) is st:
            raise FgradTypeError(f"custom_jvp rule of {call!r}: its primal output depends on the tangents; "
                                 "compute primal_out from the primals only")
        jaxpr, consts = st.to_jaxpr([out_dot])
    return out, _Linearized(jaxpr, consts, live)


def _custom_jvp_vjp(needs, ct, out, *xs, call: _Call, residuals: _Linearized | None = None):
    # The rule is linear in the tangents, so its transpose is the gradient of <ct, jvp(t)> in t.
    live = [i for i, (n, d) in enumerate(zip(needs, call.diff)) if n and d]
    if residuals is not None:
        live = [i for i in live if i in residuals.live]
    if not live:
        return [None] * len(xs)

    def pairing(*ts):
        full = [None] * len(xs)
        for i, t in zip(live, ts):
            full[i] = t
        if residuals is None:  # no recorder ran the forward half: the rule runs here
            out_dot = _run_user_jvp(call, xs, full)[1]
        else:
            out_dot = eval_jaxpr(residuals.jaxpr, residuals.consts,
                                 *[_zeros_for(xs[i]) if full[i] is None else full[i] for i in residuals.live])[0]
        return fnp.sum(fnp.multiply(out_dot, ct))
    y, f_vjp = vjp(pairing, *[_zeros_for(xs[i]) for i in live])
    cts = f_vjp(np.ones((), aval_of(y).dtype))
    result: list = [None] * len(xs)
    for i, c in zip(live, cts):
        result[i] = c
    return result


custom_jvp_call_p.def_impl(_impl)
custom_jvp_call_p.def_batch(_batch_rule(custom_jvp_call_p))
custom_jvp_call_p.def_abstract_eval(_abstract_eval)
custom_jvp_call_p.def_jvp(_custom_jvp_jvp)
custom_jvp_call_p.def_vjp(_custom_jvp_vjp)
custom_jvp_call_p.def_vjp_fwd(_custom_jvp_fwd)


class custom_jvp:
    """Decorator: give a function a hand-written forward-mode rule (JAX's API).
    Reverse mode transposes that rule, so one definition serves grad too.

    The rule is `jvp(*nondiff_args, primals, tangents) -> (primal_out, tangent_out)`, with
    `primals`/`tangents` tuples of the other arguments (`defjvp`), or one function per
    argument (`defjvps`). Outputs may be pytrees; keyword arguments are bound to positions.

    Args:
        fun: the function whose derivative the rule gives.
        nondiff_argnums: positions of arguments that are not differentiated; the rule
            receives them first.

    Example:
        >>> import fgrad
        >>> import fgrad.numpy as jnp
        >>> @fgrad.custom_jvp
        ... def softplus(x):
        ...     return jnp.logaddexp(0.0, x)
        >>> @softplus.defjvp
        ... def softplus_jvp(primals, tangents):
        ...     (x,), (t,) = primals, tangents
        ...     return softplus(x), t / (1.0 + jnp.exp(-x))
        >>> print(fgrad.grad(softplus)(0.0))
        0.5
        >>> print(fgrad.grad(fgrad.grad(softplus))(0.0))  # reverse mode transposes the rule
        0.25
    """

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = _check_nondiff_argnums(nondiff_argnums, "custom_jvp")
        self._positional = _Positional(fun, "custom_jvp")
        self.jvp: Callable | None = None

    def defjvp(self, jvp: Callable) -> Callable:
        """Set the rule `jvp(*nondiff_args, primals, tangents) -> (primal_out, tangent_out)`."""
        self.jvp = jvp
        return jvp

    def defjvps(self, *jvps: Callable | None) -> None:
        """One rule per argument, `jvp_i(tangent_i, primal_out, *primals) -> tangent_out_i`
        (None: the output does not depend on that argument); the tangent output is their sum."""
        if self.nondiff_argnums:
            raise FgradTypeError(f"custom_jvp function {_name(self.fun)}: defjvps cannot be used with "
                            "nondiff_argnums; use defjvp", doc="custom-defjvps-nondiff")

        def jvp(primals, tangents):
            if len(jvps) != len(primals):
                raise FgradTypeError(f"custom_jvp function {_name(self.fun)} was called with {len(primals)} "
                                f"argument(s) but defjvps was given {len(jvps)} rule(s); give one per "
                                "argument (None where the output does not depend on it)")
            out = self(*primals)
            total = None
            for rule, t in zip(jvps, tangents):
                if rule is None or t is None:  # t is None for Python bools/ints (no derivative)
                    continue
                term = rule(t, out, *primals)
                total = term if total is None else _tree_add(total, term)
            if total is None:
                total = tree_map(_zeros_for, out)
            return out, total
        self.jvp = jvp

    def __call__(self, *args, **kwargs):
        if self.jvp is None:
            raise FgradTypeError(f"custom_jvp function {_name(self.fun)} has no rule: decorate one with "
                            f"@{_name(self.fun)}.defjvp")
        args = self._positional(args, kwargs)
        return _apply(custom_jvp_call_p, self.fun, args, self.nondiff_argnums, "custom_jvp", jvp=self.jvp)


def _tree_add(a, b):
    return tree_map(lambda x, y: x if y is None else y if x is None else fnp.add(x, y), a, b,
                    is_leaf=lambda v: v is None)


# --- checkpoint ---------------------------------------------------------------------------

checkpoint_p = Primitive("checkpoint")


class _Saved(NamedTuple):
    """What a checkpoint's forward keeps under a saving policy: the outputs of the staged
    equations the policy names (`values`, each the output of `eqns[k]`), so the backward
    pass reads them instead of recomputing them. The arrays come first: `tree_leaves` of
    this tuple lists them in order (saved_residuals describes leaf k by `eqns[k]`)."""
    values: tuple
    eqns: tuple


def _saves(policy: Callable, eqn) -> bool:
    """Whether `policy` keeps `eqn`'s output. A primitive with a forward rule of its own (a
    nested checkpoint, custom_vjp, a loop) keeps what that rule keeps, and is recomputed."""
    prim = eqn.primitive
    if prim.vjp_fwd is not None:
        return False
    return bool(policy(prim, *[a.aval for a in eqn.invars], **eqn.params))


def _env_reader(jaxpr, consts, xs) -> tuple[dict, Callable]:
    env = {id(v): x for v, x in zip(jaxpr.constvars, consts)}
    env.update((id(v), x) for v, x in zip(jaxpr.invars, xs))
    return env, (lambda a: a.val if isinstance(a, Literal) else env[id(a)])


def _run_saving(staged: _StagedFun, xs: Sequence, policy: Callable) -> tuple:
    """Evaluate the staged function on values, keeping what `policy` saves: (packed output,
    `_Saved` or None when it saves nothing)."""
    jaxpr = staged.closed.jaxpr
    env, read = _env_reader(jaxpr, staged.closed.consts, xs)
    values, eqns = [], []
    for e in jaxpr.eqns:
        out = e.primitive.bind(*[read(a) for a in e.invars], **e.params)
        env[id(e.outvars[0])] = out
        if _saves(policy, e):
            values.append(out)
            eqns.append(e)
    out = read(jaxpr.outvars[0])
    return out, (_Saved(tuple(values), tuple(eqns)) if values else None)


def _rerun_with_saved(staged: _StagedFun, xs: Sequence, saved: _Saved):
    """Evaluate the staged function under the current trace, reading the saved outputs
    instead of recomputing them: each saved equation is still recorded (`record_known`), so
    reverse mode goes through its rule, with the saved value as its output."""
    jaxpr = staged.closed.jaxpr
    env, read = _env_reader(jaxpr, staged.closed.consts, xs)
    known = {id(e): v for e, v in zip(saved.eqns, saved.values)}
    for e in jaxpr.eqns:
        args = [read(a) for a in e.invars]
        v = known.get(id(e))
        if v is None:
            out = e.primitive.bind(*args, **e.params)
        else:
            out = record_known(e.primitive, args, e.params, v)
        env[id(e.outvars[0])] = out
    return read(jaxpr.outvars[0])


def _checkpoint_vjp(needs, ct, out, *xs, call: _Call, residuals=None):
    # Rematerialise: the inputs (and what the policy saved) were kept, so the function (its
    # staged equations) runs again under vjp here.
    live = [i for i, n in enumerate(needs) if n]
    staged = None if residuals is None else call.staged.get(
        tuple((tuple(aval_of(x).shape), aval_of(x).dtype) for x in xs))

    def f(*ys):
        full = list(xs)
        for i, y in zip(live, ys):
            full[i] = y
        if staged is not None:
            _report_out(call, staged.out_tree, staged.out_avals)
            return _rerun_with_saved(staged, full, residuals)
        return _fun_on(call, full)
    _, f_vjp = vjp(f, *[xs[i] for i in live])
    cts = f_vjp(ct)
    result: list = [None] * len(xs)
    for i, c in zip(live, cts):
        result[i] = c
    return result


def _checkpoint_fwd(*xs, call: _Call):
    """The forward half a recorder runs: checkpoint's output and its residuals, the outputs
    its policy saves (None: only the inputs are kept). Under an enclosing transform (its
    tracers among `xs`) the function runs under vjp, as JAX's linearize runs it, and the
    pullback is dropped: the custom_vjp calls inside then run their fwd, so forward mode over
    this reverse pass (hessian, jvp of grad) differentiates their rules instead of meeting
    them in forward mode, which they refuse. There the policy is not applied (the values are
    the same)."""
    live = [i for i, x in enumerate(xs) if isinstance(x, Tracer) and aval_of(x).dtype.kind in "fc"]
    if not live:  # staged here: the recomputation replays it (the Python runs once)
        if call.policy is not None:
            staged = _staged_fun(call, [aval_of(x) for x in xs])
            if staged is not None:
                _report_out(call, staged.out_tree, staged.out_avals)
                return _run_saving(staged, xs, call.policy)
        return _fun_on(call, xs), None

    def f(*ys):
        full = list(xs)
        for i, y in zip(live, ys):
            full[i] = y
        return _fun_on(call, full)
    return vjp(f, *[xs[i] for i in live])[0], None


def _checkpoint_jvp(primals, tangents, *, call: _Call):
    return _jvp_of_fun(call, primals, tangents, [i for i, t in enumerate(tangents) if t is not None])


checkpoint_p.def_impl(_impl)
checkpoint_p.def_batch(_batch_rule(checkpoint_p))
checkpoint_p.def_abstract_eval(_abstract_eval)
checkpoint_p.def_vjp(_checkpoint_vjp)
checkpoint_p.def_saves(output=False)  # the point of checkpoint: only the inputs are saved
checkpoint_p.def_jvp(_checkpoint_jvp)
checkpoint_p.def_vjp_fwd(_checkpoint_fwd)


def checkpoint(fun: Callable | None = None, *, prevent_cse: bool = True, policy: Callable | None = None,
               static_argnums: int | Sequence[int] = ()) -> Callable:
    """Rematerialise fun's intermediates in the backward pass instead of keeping them.

    Reverse mode keeps fun's inputs and, with a `policy`, the outputs of the operations
    inside fun that the policy names; everything else inside fun is recomputed from those
    when the backward pass reaches it. Values and derivatives are those of fun itself.

    Args:
        fun: the function; arguments (positional and keyword) and outputs may be pytrees of
            arrays. Without it, a decorator.
        prevent_cse: accepted; fgrad never merges a checkpointed region with its
            recomputation, so it has no effect.
        policy: a predicate ``policy(primitive, *avals, **params) -> bool`` saying which
            operations' outputs are kept (one of `checkpoint_policies`, as JAX's); None keeps
            none (``nothing_saveable``). It applies where fun's inputs are concrete (eager
            ``grad``/``vjp``); under an enclosing transform (jit, vmap, a higher order) it is
            not applied, with the same values and derivatives.
        static_argnums: positions of arguments that are Python values, not traced.
    Returns:
        The checkpointed function.
    
    Example:
        >>> import fgrad
        >>> import fgrad.numpy as jnp
        >>> f = fgrad.checkpoint(lambda x: jnp.sin(jnp.sin(x)))
        >>> print(fgrad.grad(f)(0.0))
        1.0
    """
    if fun is None:
        return functools.partial(checkpoint, prevent_cse=prevent_cse, policy=policy,
                                 static_argnums=static_argnums)
    if policy is not None and not callable(policy):
        raise FgradTypeError(f"checkpoint: policy must be a predicate (one of "
                             f"fgrad.checkpoint_policies) or None, got {policy!r:.60}")
    if policy is checkpoint_policies.nothing_saveable:
        policy = None
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        fixed = {i % len(args): args[i] for i in static if -len(args) <= i < len(args)}
        traced = tuple(a for i, a in enumerate(args) if i not in fixed)

        # the (args, kwargs) pair is the one "positional argument" structure of the call
        def positional(a, k):
            it = iter(a)
            return fun(*[fixed[i] if i in fixed else next(it) for i in range(len(args))], **k)
        positional.__name__ = _name(fun)
        return _apply(checkpoint_p, positional, (traced, kwargs), (), "checkpoint", policy=policy)
    return wrapped


remat = checkpoint


# --- checkpoint_name: a named value, for save_only_these_names ------------------------------

name_p = Primitive("name")
name_p.def_impl(lambda x, *, name, xp: x)
name_p.def_abstract_eval(lambda x, *, name: x)
def_linear(name_p, lambda ct, aval, *, name: ct)
name_p.def_batch(lambda n, vals, dims, *, name: (name_p.bind(vals[0], name=name), dims[0]))


def checkpoint_name(x: Any, name: str) -> Any:
    """x itself, each array leaf named `name` for a checkpoint policy
    (`checkpoint_policies.save_only_these_names`, `save_any_names_but_these`).

    Args:
        x: an array or a pytree of arrays.
        name: the name (a string).
    Returns:
        x's values: traced leaves go through the identity primitive `name`, which a
        policy can select; concrete ones are returned as they are.
    """
    if not isinstance(name, str):
        raise FgradTypeError(f"checkpoint_name: name must be a string, got {name!r:.60}")
    return tree_map(lambda v: name_p.bind(v, name=name) if isinstance(v, Tracer) else v, x)


def _saveable_dot(prim, *_, **params) -> bool:
    return prim.name in ("dot_general", "matmul", "dot")


def _no_batch_dot(prim, *_, **params) -> bool:
    dims = params.get("dimension_numbers")
    return _saveable_dot(prim) and not (dims and dims[1][0])


def _save_only_these_names(*names: str) -> Callable:
    return lambda prim, *_, **params: prim.name == "name" and params.get("name") in names


def _save_any_names_but_these(*names: str) -> Callable:
    return lambda prim, *_, **params: prim.name == "name" and params.get("name") not in names


def _save_anything_except_these_names(*names: str) -> Callable:
    return lambda prim, *_, **params: prim.name != "name" or params.get("name") not in names


def _save_from_both_policies(a: Callable, b: Callable) -> Callable:
    return lambda *args, **params: a(*args, **params) or b(*args, **params)


def _save_and_offload_only_these_names(*, names_which_can_be_saved, names_which_can_be_offloaded,
                                       offload_src=None, offload_dst=None) -> Callable:
    # fgrad has one memory (the host's): what JAX would offload is saved
    return _save_only_these_names(*names_which_can_be_saved, *names_which_can_be_offloaded)


def _offload_dot_with_no_batch_dims(offload_src=None, offload_dst=None) -> Callable:
    return _no_batch_dot


# JAX's jax.checkpoint_policies: predicates (primitive, *avals, **params) -> save it?
# Offloading policies save on the host, fgrad's one memory.
checkpoint_policies = types.SimpleNamespace(
    everything_saveable=lambda *_, **__: True,
    nothing_saveable=lambda *_, **__: False,
    dots_saveable=_saveable_dot,
    checkpoint_dots=_saveable_dot,
    dots_with_no_batch_dims_saveable=_no_batch_dot,
    checkpoint_dots_with_no_batch_dims=_no_batch_dot,
    save_only_these_names=_save_only_these_names,
    save_any_names_but_these=_save_any_names_but_these,
    save_anything_except_these_names=_save_anything_except_these_names,
    save_from_both_policies=_save_from_both_policies,
    save_and_offload_only_these_names=_save_and_offload_only_these_names,
    offload_dot_with_no_batch_dims=_offload_dot_with_no_batch_dims,
)
