"""fgrad.ad_checkpoint: JAX's jax.ad_checkpoint (checkpoint, checkpoint_name,
checkpoint_policies, print_saved_residuals, saved_residuals); see fgrad.custom.checkpoint
for what fgrad saves."""
from __future__ import annotations

import inspect
import os
import sys
from typing import Any, Callable

from .api import _residual_slots, _vjp
from .core.trace import aval_of
from .custom import _Saved, checkpoint, checkpoint_name, checkpoint_p, checkpoint_policies, name_p, remat  # noqa: F401
from .interpreters import staging
from .interpreters.record import RecordTrace
from .tree_util import keystr, tree_flatten_with_path

__all__ = ["checkpoint", "checkpoint_name", "checkpoint_policies", "print_saved_residuals",
           "remat", "saved_residuals"]

_FGRAD_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _user_frame() -> str:
    """Where the user's code called into fgrad: ``file:line:column (function)`` of the
    innermost frame outside the fgrad package (the column is 0-based, as JAX prints it)."""
    frame = sys._getframe(2)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_FGRAD_DIR):
        frame = frame.f_back
    if frame is None:
        return "an unknown place"
    code = frame.f_code
    line, col = frame.f_lineno, None
    positions = getattr(code, "co_positions", None)
    if positions is not None and frame.f_lasti >= 0:
        pos = list(positions())[frame.f_lasti // 2]
        line = pos[0] if pos[0] is not None else line
        col = pos[2]
    name = getattr(code, "co_qualname", code.co_name)
    where = f"{code.co_filename}:{line}" + ("" if col is None else f":{col}")
    return f"{where} ({name})"


def _argument_names(f: Callable, args: tuple) -> list[str]:
    """One name per flattened leaf of `args`: the parameter's name (``args[i]`` where f's
    signature does not name it) followed by the leaf's path in that argument (JAX's
    ``params[0]``)."""
    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = []
    for i, a in enumerate(args):
        if i < len(params) and params[i].kind in (params[i].POSITIONAL_ONLY,
                                                  params[i].POSITIONAL_OR_KEYWORD):
            base = params[i].name
        elif params and params[min(i, len(params) - 1)].kind == params[0].VAR_POSITIONAL:
            base = f"{params[min(i, len(params) - 1)].name}[{i}]"
        else:
            base = f"args[{i}]"
        for path, _ in tree_flatten_with_path(a)[0]:
            names.append(base + keystr(path))
    return names


def _staged_of(node):
    """The staged jaxpr of a recorded checkpoint application, or None."""
    staged = list(node.params["call"].staged.values())
    return staged[0].closed.jaxpr if len(staged) == 1 and staged[0] is not None else None


def _describe_eqn(eqn, where: dict) -> str | None:
    """Where a value an equation computed came from, as JAX words it: ``named 'a' from
    <place>`` for checkpoint_name, the innermost producer for a nested checkpoint, ``output of
    <primitive> from <place>`` otherwise; None where the place is unknown."""
    prim = eqn.primitive
    if prim is checkpoint_p:
        staged = list(eqn.params["call"].staged.values())
        if len(staged) == 1 and staged[0] is not None:
            inner = _producer(staged[0].closed.jaxpr)
            if inner is not None:
                return _describe_eqn(inner, where)
    place = where.get(id(eqn))
    if place is None:
        return None
    if prim is name_p:
        return f"named {eqn.params['name']!r} from {place[1]}"
    return f"output of {prim.name} from {place[1]}"


def _producer(jaxpr):
    """The equation that computes a one-output jaxpr's output, or None (an input, a constant)."""
    target = jaxpr.outvars[0]
    for e in reversed(jaxpr.eqns):
        if e.outvars[0] is target:
            return e
    return None


def saved_residuals(f: Callable, *args: Any, **kwargs: Any) -> list[tuple[Any, str]]:
    """What fgrad keeps from the forward pass of ``vjp(f, *args, **kwargs)`` for the
    backward pass: one entry per array its recorded graph holds (each once, arguments
    first, then in recording order), as JAX's jax.ad_checkpoint.saved_residuals.

    The values are fgrad's: each primitive's VJP rule declares what it reads
    (Primitive.def_saves), so they need not be JAX's (fgrad's sin keeps its input where
    JAX keeps cos of it). A ``checkpoint`` keeps its inputs and what its policy saves
    (the outputs of the operations it names inside the function).

    Args:
        f: the function, of arrays (pytrees of them) and Python numbers.
        *args, **kwargs: its arguments; keyword arguments are held fixed.
    Returns:
        A list of ``(aval, description)``: the residual's shape and dtype, and where it
        came from (``from the argument x``, ``output of sin from file:line:col (func)``,
        ``named 'a' from ...``, ``a constant``, ``saved by scan's forward from ...``).
    """
    where: dict = {}
    staged_at: dict = {}

    class _Locating(RecordTrace):
        # (the one place every recorded node passes through: see RecordTrace._tracer)
        def _tracer(self, out, node):
            where[node] = _user_frame()
            return super()._tracer(out, node)

    def locate(eqn):  # (the equation is held, so that its id is not reused meanwhile)
        staged_at[id(eqn)] = (eqn, _user_frame())

    staging.EQN_HOOKS.append(locate)
    try:
        _, fn = _vjp(lambda *a: f(*a, **kwargs), args, False, "saved_residuals", trace_type=_Locating)
    finally:
        staging.EQN_HOOKS.remove(locate)
    names = _argument_names(f, args)
    argument = {id(v): k for k, v in enumerate(fn.vals)}
    values, slots = _residual_slots(fn)
    args_first, others = [], []
    for v, places in zip(values, slots):
        aval = aval_of(v)
        k = argument.get(id(v))
        if k is not None:
            args_first.append((k, (aval, f"from the argument {names[k]}")))
            continue
        node, kind, i = places[0]
        if kind == "o":
            made = node
        elif kind == "p":
            made = node.parents[i]
        else:
            made = None
        if made is None and kind == "p":
            others.append((aval, "a constant"))
        elif made is None:
            res = node.residuals
            inner = (_describe_eqn(res.eqns[i], staged_at)
                     if node.prim is checkpoint_p and isinstance(res, _Saved) else None)
            others.append((aval, inner or f"saved by {node.prim.name}'s forward from "
                                          f"{where.get(node, 'an unknown place')}"))
        else:
            inner = None
            if made.prim is checkpoint_p:  # the value inside the function that it returns
                jaxpr = _staged_of(made)
                producer = None if jaxpr is None else _producer(jaxpr)
                inner = None if producer is None else _describe_eqn(producer, staged_at)
            others.append((aval, inner or f"output of {made.prim.name} from "
                                          f"{where.get(made, 'an unknown place')}"))
    return [e for _, e in sorted(args_first, key=lambda t: t[0])] + others


def print_saved_residuals(f: Callable, *args: Any, **kwargs: Any) -> None:
    """Print `saved_residuals(f, *args, **kwargs)`, one residual a line, as JAX's
    jax.ad_checkpoint.print_saved_residuals: ``f64[5,4] from the argument W1``.

    Args:
        f: the function.
        *args, **kwargs: its arguments.
    Returns:
        None.
    """
    for aval, description in saved_residuals(f, *args, **kwargs):
        print(f"{aval.str_short()} {description}")
