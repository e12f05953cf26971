"""cond and switch: apply one of several branches, chosen by a traced index.

`cond_p`'s operands are (index, *operands), where the operands start with the constants
every branch closed over (each branch ignores the others'); its one param, `branches`, a
tuple of staged bodies with equal output types. Its one output is the chosen branch's
output leaves, packed (fgrad._packing). Only the chosen branch runs, and only it is
differentiated (the JVP and VJP are conds over the branches' JVPs and VJPs). Under vmap a
batched index evaluates every branch and selects per example (as JAX does); an unbatched
one keeps a cond of batched branches.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .. import numpy as fnp
from .._packing import pack, pack_arrays, packed_aval, unpack_leaves
from ..api import jvp, vjp, vmap
from ..core.avals import ShapedArray, is_float
from ..core.errors import FgradTypeError
from ..core.primitive import Primitive
from ..core.trace import aval_of
from ..interpreters.compile import loops
from ..numpy._util import plain_value
from ..ops.elementwise import convert_element_type, select
from ..tree_util import keystr, tree_flatten
from ._common import (
    Staged,
    call,
    cast_to,
    describe_avals,
    join_consts,
    operand_values,
    runner,
    stage,
    unflatten,
)

cond_p = Primitive("cond")


def _plain(avals) -> list[ShapedArray]:
    return [ShapedArray(a.shape, a.dtype) for a in avals]


def _bind_cond(index, staged: Sequence[Staged], operands: Sequence) -> list:
    bodies, consts = join_consts(staged)
    out = cond_p.bind(index, *consts, *operands, branches=tuple(bodies))
    return unpack_leaves(out, _plain(bodies[0].out_avals))


def _cond_impl(index, *args, branches, xp):
    i = min(max(int(index), 0), len(branches) - 1)
    out = runner(branches[i], xp)(list(args))
    return pack_arrays(out, _plain(branches[0].out_avals), xp)


def _cond_jit(eqn) -> Callable:
    """jit's callable for one cond equation: the chosen branch compiled by jit's region
    compiler (on its first use), not interpreted."""
    branches = eqn.params["branches"]
    avals = _plain(branches[0].out_avals)

    def cond_compiled(index, *args):
        i = min(max(int(index), 0), len(branches) - 1)
        return pack_arrays(branches[i].region_program()(list(args)), avals, np)
    return cond_compiled


def _cond_abstract_eval(index, *avals, branches):
    if index.shape != () or index.dtype.kind not in "iu":
        raise FgradTypeError(f"cond: the branch index must be a scalar integer, got {index.str_short()}",
                             doc="cond-pred")
    outs = _plain(branches[0].out_avals)
    for k, b in enumerate(branches):
        if _plain(b.in_avals) != _plain(avals):
            raise FgradTypeError(f"cond: branch {k} takes {describe_avals(b.in_avals)}, the operands are "
                                 f"{describe_avals(avals)}", doc="cond-branch-mismatch")
        if _plain(b.out_avals) != outs:
            raise FgradTypeError(f"cond: branch {k} returns {describe_avals(b.out_avals)}, branch 0 "
                                 f"returns {describe_avals(outs)}", doc="cond-branch-mismatch")
    return packed_aval(outs)


def _cond_jvp(primals, tangents, *, branches):
    index, args, targs = primals[0], list(primals[1:]), tangents[1:]
    outs = _plain(branches[0].out_avals)
    nz = [i for i, t in enumerate(targs) if t is not None]
    if not nz or not any(is_float(a.dtype) for a in outs):
        return cond_p.bind(*primals, branches=branches), None
    n = len(args)

    def branch_jvp(br):
        def fn(*a):
            def f(*d):
                full = list(a[:n])
                for k, i in enumerate(nz):
                    full[i] = d[k]
                return call(br, full)
            _, to = jvp(f, tuple(a[i] for i in nz), tuple(a[n:]))
            t = [t if is_float(av.dtype) else None for t, av in zip(to, outs)]
            return [pack(t, outs, zero_ints=True)]
        return fn
    ins = branches[0].in_avals
    avals = list(ins) + [ShapedArray(ins[i].shape, ins[i].dtype) for i in nz]
    staged = [stage(branch_jvp(br), avals, "cond jvp") for br in branches]
    out_dot = _bind_cond(index, staged, args + [targs[i] for i in nz])[0]
    # the primal output from its own cond, independent of the tangents (see scan's jvp)
    return cond_p.bind(*primals, branches=branches), out_dot


def _cond_vjp(needs, ct, out, index, *args, branches):
    ins, outs = branches[0].in_avals, _plain(branches[0].out_avals)
    d = [i for i in range(len(args)) if needs[1 + i] and is_float(ins[i].dtype)]
    result: list = [None] * (1 + len(args))
    if not d or not any(is_float(a.dtype) for a in outs):
        return result
    n = len(args)

    def branch_vjp(br):
        def fn(*a):
            def f(*dv):
                full = list(a[:n])
                for k, i in enumerate(d):
                    full[i] = dv[k]
                return pack(call(br, full), outs)
            _, f_vjp = vjp(f, *[a[i] for i in d])
            return list(f_vjp(a[n]))
        return fn
    staged = [stage(branch_vjp(br), list(ins) + [packed_aval(outs)], "cond vjp") for br in branches]
    cts = _bind_cond(index, staged, list(args) + [ct])
    for k, i in enumerate(d):
        result[1 + i] = cts[k]
    return result


def _cond_batch(n, vals, dims, *, branches):
    index, args = vals[0], list(vals[1:])
    idim, adims = dims[0], tuple(dims[1:])
    outs = _plain(branches[0].out_avals)
    if idim is None:  # one branch for the whole batch: a cond of the branches, batched
        def batched(br):
            return lambda *a: vmap(lambda *e: pack(call(br, list(e)), outs), in_axes=adims, axis_size=n)(*a)
        avals = [aval_of(v) for v in args]
        staged = [stage(batched(br), avals, "cond vmap") for br in branches]
        bodies, consts = join_consts(staged)
        return cond_p.bind(index, *consts, *args, branches=tuple(bodies)), 0

    def selected(i, *a):  # every branch runs; each example takes its own branch's output
        results = [pack(call(br, list(a)), outs) for br in branches]
        r = results[-1]
        for k in range(len(branches) - 2, -1, -1):
            r = select(fnp.equal(i, k), results[k], r)
        return r
    return vmap(selected, in_axes=(idim,) + adims, axis_size=n)(index, *args), 0


cond_p.def_impl(_cond_impl)
cond_p.def_abstract_eval(_cond_abstract_eval)
cond_p.def_jvp(_cond_jvp)
cond_p.def_vjp(_cond_vjp)
cond_p.def_saves(output=False)  # the VJP reads the inputs and residuals, never the output
cond_p.def_batch(_cond_batch)
loops.JIT_RULES[cond_p] = _cond_jit


# --- the public functions ---------------------------------------------------------------------

def _scalar_value(x, what: str, fname: str, kinds: str, fix: str):
    v = plain_value(x, f"fgrad.lax.{fname}", f"{fname}: {what}")
    a = aval_of(v)
    if a.shape != () or a.dtype.kind not in kinds:
        raise FgradTypeError(
            f"{fname}: {what} must be a scalar {'boolean or integer' if 'b' in kinds else 'integer'}, "
            f"got {a.str_short()}. {fix}", doc="cond-pred")
    return v


def switch(index: Any, branches: Sequence[Callable], *operands: Any) -> Any:
    """`branches[index](*operands)`, with `index` a traced scalar integer (JAX's
    `lax.switch`); an out-of-range index is clamped to the first or last branch.

    Every branch is staged on the operands' types and must return the same structure, shapes
    and dtypes (a Python number returned by a branch takes the dtype of the others'). Only the
    chosen branch runs, and only it is differentiated. Under vmap with a batched index every
    branch runs and each example selects its own result, as in JAX (a branch that fails on
    some example's operands then fails for the batch)."""
    fname = "switch"
    branches = list(branches) if isinstance(branches, (list, tuple)) else branches
    if not isinstance(branches, list) or not branches or not all(callable(b) for b in branches):
        raise FgradTypeError(f"switch: branches must be a non-empty sequence of callables, got {branches!r:.80}",
                             doc="lax-arguments")
    index = _scalar_value(index, "the index", fname, "iu",
                          "Pass one integer (e.g. an int32 scalar); for a boolean use fgrad.lax.cond.")
    index = convert_element_type(fnp.clip(index, 0, len(branches) - 1), np.int32)
    return _apply(fname, index, branches, operands, [f"branch {k}" for k in range(len(branches))])


def cond(pred: Any, true_fun: Callable, false_fun: Callable, *operands: Any) -> Any:
    """`true_fun(*operands)` if `pred` else `false_fun(*operands)`, with `pred` a traced scalar
    boolean or integer (nonzero is true), JAX's `lax.cond`. Use it instead of Python `if` on
    traced values: under jit the jaxpr holds both branches in one `cond` equation.

    Both branches are staged on the operands' types and must return the same structure,
    shapes and dtypes. Only the branch taken runs and is differentiated; under vmap with a
    batched predicate both run and each example selects its own (as in JAX).

    Args:
        pred: a boolean or integer scalar.
        true_fun: the branch taken when pred is true.
        false_fun: the branch taken when pred is false.
        *operands: the branches' arguments.

    Returns:
        The output of the branch taken.

    Example:
        >>> import fgrad
        >>> import fgrad.numpy as jnp
        >>> from fgrad import lax
        >>> print(lax.cond(True, lambda x: x + 1.0, lambda x: x - 1.0, 5.0))
        6.0
        >>> print(fgrad.grad(lambda x: lax.cond(x > 0, jnp.sin, jnp.cos, x))(0.5))
        0.8775825618903728
    """
    fname = "cond"
    if not (callable(true_fun) and callable(false_fun)):
        raise FgradTypeError("cond: true_fun and false_fun must be callables; the operands come after them: "
                             "cond(pred, true_fun, false_fun, *operands)", doc="lax-arguments")
    pred = _scalar_value(pred, "the predicate", fname, "biu",
                         "Reduce it to one value (e.g. fgrad.numpy.all(p) or p[0]), or compare "
                         "(x > 0); for elementwise choices use fgrad.numpy.where.")
    index = convert_element_type(fnp.not_equal(pred, 0) if aval_of(pred).dtype.kind != "b" else pred, np.int32)
    return _apply(fname, index, [false_fun, true_fun], operands, ["false_fun", "true_fun"])


def _apply(fname: str, index, branches: list, operands: tuple, names: list):
    leaves, tree = tree_flatten(operands)
    ops, avals = operand_values(leaves, f"{fname} operand", fname)

    def fn(br):
        return lambda *ls: br(*unflatten(tree, ls))
    staged = [stage(fn(br), avals, fname) for br in branches]
    staged = _unify(fname, staged, branches, fn, avals, names)
    if not staged[0].out_avals:
        return unflatten(staged[0].out_tree, [])
    return unflatten(staged[0].out_tree, _bind_cond(index, staged, ops))


def _unify(fname, staged, branches, fn, avals, names) -> list[Staged]:
    """The branches' outputs checked to have one structure and type; a Python number
    returned by some branches takes the dtype the others give that leaf (as in JAX)."""
    first = staged[0]
    for k, s in enumerate(staged):
        if s.out_tree != first.out_tree:
            raise FgradTypeError(
                f"{fname}: the branches return different structures: {names[0]} returns {first.out_tree}, "
                f"{names[k]} returns {s.out_tree}. Return the same containers with the same number of "
                "leaves from every branch.", doc="cond-branch-mismatch")
    n = len(first.out_avals)
    casts = [[None] * n for _ in staged]
    for i in range(n):
        strong = {s.out_avals[i].dtype for s in staged if not s.out_weak[i]}
        shapes = {s.out_avals[i].shape for s in staged}
        dtypes = {s.out_avals[i].dtype for s in staged}
        if len(shapes) == 1 and len(dtypes) > 1 and len(strong) == 1:
            target = next(iter(strong))
            for k, s in enumerate(staged):
                if s.out_weak[i] and s.out_avals[i].dtype != target:
                    casts[k][i] = target
        elif len(shapes) > 1 or len(dtypes) > 1:
            where = keystr(first.out_paths[i]) or " (the output)"
            types = ", ".join(f"{names[k]} gives {s.out_avals[i].str_short()}" for k, s in enumerate(staged))
            raise FgradTypeError(
                f"{fname}: the branches return different types for output leaf{where}: {types}. Every "
                "branch must return the same shapes and dtypes; cast with .astype(...) or broadcast "
                "(e.g. fgrad.numpy.zeros_like of the other branch's value).", doc="cond-branch-mismatch")
    for k, c in enumerate(casts):
        if any(x is not None for x in c):
            def cast_fn(*ls, br=branches[k], c=c):
                out_leaves, t = tree_flatten(fn(br)(*ls))
                return unflatten(t, [x if d is None else cast_to(x, d) for x, d in zip(out_leaves, c)])
            staged[k] = stage(cast_fn, avals, fname)
    return staged
