"""custom_root and custom_linear_solve: solvers differentiated implicitly, at the solution,
never through the solver's own steps.

Each is one primitive whose operands are the constants of its staged functions (what they
closed over, see _common.stage) followed by the right-hand side (or initial guess), and whose
one output is the solution's leaves, then the solver's auxiliary leaves, packed
(fgrad._packing). The impl runs only the staged solver; no rule ever differentiates it, so a
solver with a bisection or a data-dependent while_loop still has exact derivatives.

custom_linear_solve (`linear_solve_p`): for A(p) x = b, with A(p) the staged `matvec` and p
its constants,

    dx = A^-1 (db - dA x)                  (the JVP: one more solve of the same system)
    b_bar = A^-T x_bar,  p_bar = -<b_bar, dA/dp x>   (the VJP: one solve of the transpose)

Both rules bind `linear_solve_p` again (the VJP with the roles of matvec/vecmat and
solve/transpose_solve swapped) and differentiate only `matvec`, so each rule is itself made
of primitives with rules: derivatives of every order, under jit and vmap, follow.

custom_root (`root_p`): for f(p, x*) = 0, with p the constants of the staged `f`,

    dx* = -(df/dx)^-1 (df/dp dp)           (the JVP, (df/dx)^-1 applied by tangent_solve)

and the VJP applies the transpose of that map (reverse mode through the staged
`tangent_solve`, which is linear in its right-hand side). The initial guess and the
solver's constants get no derivative, as in JAX.
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
from ..tree_util import tree_flatten
from ._common import Staged, call, cast_to, describe_avals, operand_values, runner, stage, unflatten
from ._scan import _pack_tangents, _to_front

linear_solve_p = Primitive("custom_linear_solve")
root_p = Primitive("custom_root")


def _plain(avals) -> list[ShapedArray]:
    return [ShapedArray(a.shape, a.dtype) for a in avals]


def _groups(seq: Sequence, lengths: Sequence[int]) -> tuple[list, list]:
    """(one list per constant group, the remaining operands)."""
    out, start = [], 0
    for n in lengths:
        out.append(list(seq[start:start + n]))
        start += n
    return out, list(seq[start:])


def _out_avals(solver) -> list[ShapedArray]:
    return _plain(solver.out_avals)


def _zero(a: ShapedArray):
    return np.zeros(a.shape, a.dtype)


def _tangent_leaves(dx: Sequence, out_avals: Sequence[ShapedArray]) -> list:
    """The tangents of every output leaf: `dx` for the solution, zeros for the aux floats,
    None for integers (no derivative)."""
    ts: list = []
    for k, a in enumerate(out_avals):
        if not is_float(a.dtype):
            ts.append(None)
        else:
            ts.append(dx[k] if k < len(dx) else _zero(a))
    return ts


def _differentiated(vals: Sequence, avals: Sequence[ShapedArray], keep: Sequence[bool]) -> list[int]:
    return [i for i, (a, k) in enumerate(zip(avals, keep)) if k and is_float(a.dtype)]


def _call_with(body, fixed: Sequence, idx: Sequence[int], after: Sequence) -> Callable:
    """`f(*d) = body(fixed with d at positions idx, *after)` (the staged function as a
    function of some of its constants, for jvp/vjp)."""
    def f(*d):
        full = list(fixed)
        for k, i in enumerate(idx):
            full[i] = d[k]
        return call(body, full + list(after))
    return f


# --- custom_linear_solve: the primitive --------------------------------------------------------
# operands: (*matvec_consts, *vecmat_consts, *solve_consts, *transpose_solve_consts, *b)
# params: jaxprs = (matvec, vecmat, solve, transpose_solve) bodies (vecmat and transpose_solve
# None without a transpose_solve), const_lengths (per body), num_x (the solution's leaves)

def _transposed(jaxprs: tuple, const_lengths: tuple) -> tuple[tuple, tuple]:
    mv, vm, s, ts = jaxprs
    lm, lv, ls, lt = const_lengths
    return (vm, mv, ts, s), (lv, lm, lt, ls)


def _ls_impl(*args, jaxprs, const_lengths, num_x, xp):
    (_, _, sc, _), b = _groups(args, const_lengths)
    solve = jaxprs[2]
    return pack_arrays(runner(solve, xp)(sc + b), _out_avals(solve), xp)


def _ls_abstract_eval(*avals, jaxprs, const_lengths, num_x):
    _, b = _groups(avals, const_lengths)
    mv, solve = jaxprs[0], jaxprs[2]
    want = _plain(mv.in_avals[const_lengths[0]:])
    if _plain(b) != want:
        raise FgradTypeError(f"custom_linear_solve: b is {describe_avals(b)} but matvec was staged on "
                             f"{describe_avals(want)}", doc="lax-arguments")
    return packed_aval(_out_avals(solve))


def _bind_ls(consts: Sequence, b: Sequence, jaxprs, const_lengths, num_x) -> list:
    out = linear_solve_p.bind(*consts, *b, jaxprs=jaxprs, const_lengths=const_lengths, num_x=num_x)
    return unpack_leaves(out, _out_avals(jaxprs[2]))


def _ls_jvp(primals, tangents, *, jaxprs, const_lengths, num_x):
    params = dict(jaxprs=jaxprs, const_lengths=const_lengths, num_x=num_x)
    out = linear_solve_p.bind(*primals, **params)
    nconsts = sum(const_lengths)
    (mc, _, _, _), b = _groups(primals, const_lengths)
    (tmc, _, _, _), tb = _groups(tangents, const_lengths)
    mv = jaxprs[0]
    live = _differentiated(mc, _plain(mv.in_avals[:len(mc)]), [t is not None for t in tmc])
    b_avals = _plain(mv.in_avals[len(mc):])
    if not live and all(t is None for t in tb):
        return out, None
    out_avals = _out_avals(jaxprs[2])
    x = unpack_leaves(out, out_avals)[:num_x]
    rhs = [_zero(a) if t is None else t for t, a in zip(tb, b_avals)]
    if live:  # dA x: matvec's tangent in its constants, at the solution
        _, dax = jvp(_call_with(mv, mc, live, x), tuple(mc[i] for i in live), tuple(tmc[i] for i in live))
        rhs = [fnp.subtract(r, d) for r, d in zip(rhs, dax)]
    dx = _bind_ls(primals[:nconsts], rhs, **params)[:num_x]
    return out, _pack_tangents(_tangent_leaves(dx, out_avals), out_avals)


def _ls_vjp(needs, ct, out, *primals, jaxprs, const_lengths, num_x):
    (mc, _, _, _), b = _groups(primals, const_lengths)
    (need_mc, _, _, _), need_b = _groups(needs, const_lengths)
    mv = jaxprs[0]
    live = _differentiated(mc, _plain(mv.in_avals[:len(mc)]), need_mc)
    result: list = [None] * len(primals)
    if not live and not any(need_b):
        return result
    if jaxprs[3] is None:
        raise FgradTypeError("custom_linear_solve: reverse mode (grad, vjp) needs the transposed system's solver: "
                             "pass transpose_solve=..., or symmetric=True when matvec is symmetric (then solve "
                             "serves for both); forward mode (jvp, jacfwd) needs neither", doc="lax-arguments")
    nconsts = sum(const_lengths)
    out_avals = _out_avals(jaxprs[2])
    x_ct = unpack_leaves(ct, out_avals)[:num_x]
    groups, _ = _groups(primals, const_lengths)
    t_jaxprs, t_lengths = _transposed(jaxprs, const_lengths)
    t_consts = groups[1] + groups[0] + groups[3] + groups[2]
    lam = _bind_ls(t_consts, x_ct, t_jaxprs, t_lengths, num_x)[:num_x]
    for k, n in enumerate(need_b):
        if n:
            result[nconsts + k] = lam[k]
    if live:  # -<lam, dA/dp x>, the pairing's gradient in matvec's constants
        x = unpack_leaves(out, out_avals)[:num_x]
        _, pull = vjp(_call_with(mv, mc, live, x), *[mc[i] for i in live])
        for i, c in zip(live, pull(list(lam))):
            result[i] = fnp.negative(c)
    return result


def _ls_batch(n, vals, dims, *, jaxprs, const_lengths, num_x):
    # Every solution and right-hand side leaf becomes batched (unbatched ones are broadcast):
    # the four bodies then agree on one batched layout without a fixpoint over them.
    groups, b = _groups(vals, const_lengths)
    dgroups, db = _groups(dims, const_lengths)
    b = [_to_front(n, v, d, True) for v, d in zip(b, db)]
    new_jaxprs, new_consts, new_lengths = _batched_bodies(n, jaxprs, groups, dgroups, "custom_linear_solve vmap")
    out_avals = _out_avals(jaxprs[2])
    leaves = _bind_ls(new_consts, b, tuple(new_jaxprs), tuple(new_lengths), num_x)
    return _pack_batched(n, leaves, out_avals), 0


def _batched_bodies(n: int, jaxprs, groups, dgroups, name: str) -> tuple[list, list, list]:
    """Each staged body of a solve primitive vmapped (`_batched_body`; an absent one stays
    None): the new bodies, their constants in one list, and each body's constant count."""
    new_jaxprs, new_consts, new_lengths = [], [], []
    for body, cs, ds in zip(jaxprs, groups, dgroups):
        if body is None:
            new_jaxprs.append(None)
            new_lengths.append(0)
            continue
        st, cs = _batched_body(n, body, cs, ds, name)
        new_jaxprs.append(st.body)
        new_consts += st.consts + cs
        new_lengths.append(len(st.consts) + len(cs))
    return new_jaxprs, new_consts, new_lengths


def _batched_body(n: int, body, consts: list, dims: list, name: str) -> tuple[Staged, list]:
    """`body` (consts, vectors -> outputs) vmapped: constants batched along their own axis,
    moved to the front, every vector input and output batched along axis 0. Returns the
    staged batched body and the constants it takes (after its own)."""
    consts = [_to_front(n, v, d, False) for v, d in zip(consts, dims)]
    c_axes = [None if d is None else 0 for d in dims]
    ins = _plain(body.in_avals[len(consts):])
    vec = [ShapedArray((n,) + tuple(a.shape), a.dtype) for a in ins]

    def batched(*a):
        return vmap(lambda *e: call(body, list(e)), in_axes=tuple(c_axes + [0] * len(ins)), out_axes=0,
                    axis_size=n)(*a)
    return stage(batched, _plain([aval_of(c) for c in consts]) + vec, name), consts


def _pack_batched(n: int, leaves: Sequence, avals: Sequence[ShapedArray]):
    """Batched leaves (axis 0) packed example by example: the batched form of pack."""
    return vmap(lambda *ls: pack(list(ls), list(avals)), axis_size=n)(*leaves)


linear_solve_p.def_impl(_ls_impl)
linear_solve_p.def_abstract_eval(_ls_abstract_eval)
linear_solve_p.def_jvp(_ls_jvp)
linear_solve_p.def_vjp(_ls_vjp)
linear_solve_p.def_batch(_ls_batch)


# --- custom_root: the primitive --------------------------------------------------------------
# operands: (*f_consts, *solve_consts, *tangent_solve_consts, *initial_guess)
# params: jaxprs = (f, solve, linearize_and_solve) bodies, const_lengths, num_x; the third is
# (consts, x, rhs) -> the solution t of (df/dx at x) t = rhs, by the user's tangent_solve

def _root_impl(*args, jaxprs, const_lengths, num_x, xp):
    (_, sc, _), guess = _groups(args, const_lengths)
    solve = jaxprs[1]
    return pack_arrays(runner(solve, xp)(sc + guess), _out_avals(solve), xp)


def _root_abstract_eval(*avals, jaxprs, const_lengths, num_x):
    _, guess = _groups(avals, const_lengths)
    f = jaxprs[0]
    want = _plain(f.in_avals[const_lengths[0]:])
    if _plain(guess) != want:
        raise FgradTypeError(f"custom_root: initial_guess is {describe_avals(guess)} but f was staged on "
                             f"{describe_avals(want)}", doc="lax-arguments")
    return packed_aval(_out_avals(jaxprs[1]))


def _root_jvp(primals, tangents, *, jaxprs, const_lengths, num_x):
    out = root_p.bind(*primals, jaxprs=jaxprs, const_lengths=const_lengths, num_x=num_x)
    (fc, _, lc), _ = _groups(primals, const_lengths)
    (tfc, _, _), _ = _groups(tangents, const_lengths)
    f, _, l_and_s = jaxprs
    live = _differentiated(fc, _plain(f.in_avals[:len(fc)]), [t is not None for t in tfc])
    if not live:
        return out, None
    out_avals = _out_avals(jaxprs[1])
    x = unpack_leaves(out, out_avals)[:num_x]
    # df/dp dp at the solution, then -(df/dx)^-1 of it
    _, rhs = jvp(_call_with(f, fc, live, x), tuple(fc[i] for i in live), tuple(tfc[i] for i in live))
    dx = [fnp.negative(t) for t in call(l_and_s, lc + x + list(rhs))]
    return out, _pack_tangents(_tangent_leaves(dx, out_avals), out_avals)


def _root_vjp(needs, ct, out, *primals, jaxprs, const_lengths, num_x):
    (fc, _, lc), _ = _groups(primals, const_lengths)
    (need_fc, _, _), _ = _groups(needs, const_lengths)
    f, _, l_and_s = jaxprs
    live = _differentiated(fc, _plain(f.in_avals[:len(fc)]), need_fc)
    result: list = [None] * len(primals)
    if not live:
        return result
    out_avals = _out_avals(jaxprs[1])
    x_ct = unpack_leaves(ct, out_avals)[:num_x]
    x = unpack_leaves(out, out_avals)[:num_x]
    # the transpose of rhs -> (df/dx)^-1 rhs (linear, so its VJP at zero), then of df/dp
    x_avals = out_avals[:num_x]
    _, pull_solve = vjp(lambda *r: call(l_and_s, lc + x + list(r)), *[_zero(a) for a in x_avals])
    mu = pull_solve(list(x_ct))
    _, pull_f = vjp(_call_with(f, fc, live, x), *[fc[i] for i in live])
    for i, c in zip(live, pull_f(list(mu))):
        result[i] = fnp.negative(c)
    return result


def _root_batch(n, vals, dims, *, jaxprs, const_lengths, num_x):
    groups, guess = _groups(vals, const_lengths)
    dgroups, dguess = _groups(dims, const_lengths)
    guess = [_to_front(n, v, d, True) for v, d in zip(guess, dguess)]
    new_jaxprs, new_consts, new_lengths = _batched_bodies(n, jaxprs, groups, dgroups, "custom_root vmap")
    out_avals = _out_avals(jaxprs[1])
    out = root_p.bind(*new_consts, *guess, jaxprs=tuple(new_jaxprs), const_lengths=tuple(new_lengths),
                      num_x=num_x)
    leaves = unpack_leaves(out, _out_avals(new_jaxprs[1]))
    return _pack_batched(n, leaves, out_avals), 0


root_p.def_impl(_root_impl)
root_p.def_abstract_eval(_root_abstract_eval)
root_p.def_jvp(_root_jvp)
root_p.def_vjp(_root_vjp)
root_p.def_batch(_root_batch)


# --- staging the user's functions ------------------------------------------------------------

def _check_vector(fname: str, what: str, against: str, out, tree, avals: Sequence[ShapedArray]) -> list:
    """The leaves of `out` (what a user's function returned), checked to have the structure,
    shapes and dtypes of `against` (tree, avals)."""
    leaves, t = tree_flatten(out)
    if t != tree:
        raise FgradTypeError(f"{fname}: {what} must return the structure of {against}, {tree}, but returned {t}",
                             doc="lax-arguments")
    for k, (x, a) in enumerate(zip(leaves, avals)):
        got = aval_of(x) if not isinstance(x, (int, float, complex, bool)) else None
        if got is None:
            leaves[k] = cast_to(x, a.dtype)
            continue
        if tuple(got.shape) != tuple(a.shape):
            raise FgradTypeError(
                f"{fname}: {what} returned leaf {k} with shape {tuple(got.shape)} where {against} has shape "
                f"{tuple(a.shape)}; its output must have {against}'s shapes, leaf by leaf", doc="lax-arguments")
        if got.dtype != a.dtype:
            raise FgradTypeError(
                f"{fname}: {what} returned leaf {k} as {got.dtype.name} where {against} is {a.dtype.name}; "
                f"cast it with .astype({a.dtype.name}) (or give {against} the dtype it computes in)",
                doc="lax-arguments")
    return leaves


def _split_aux(fname: str, what: str, out, has_aux: bool):
    if not has_aux:
        return out, None
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        got = f"{type(out).__name__} of length {len(out)}" if isinstance(out, (tuple, list)) else \
            aval_of(out).str_short() if hasattr(out, "shape") else type(out).__name__
        raise FgradTypeError(f"{fname}: with has_aux=True, {what} must return a pair (solution, aux), got {got}; "
                             "return (x, aux), or pass has_aux=False", doc="lax-arguments")
    return out[0], out[1]


class _Solver:
    """A user's solver staged on the vector's avals: outputs are the solution's leaves then
    the aux leaves; `aux_tree` is known once it is staged."""

    def __init__(self, fname: str, what: str, fn: Callable, tree, avals, against: str, has_aux: bool) -> None:
        self.aux_tree = None

        def flat(*ls):
            sol, aux = _split_aux(fname, what, fn(unflatten(tree, ls)), has_aux)
            leaves = _check_vector(fname, what, against, sol, tree, avals)
            if not has_aux:
                return leaves
            aux_leaves, self.aux_tree = tree_flatten(aux)
            return leaves + list(aux_leaves)
        self.staged = stage(flat, avals, fname)

    def result(self, tree, leaves: Sequence, has_aux: bool, num_x: int) -> Any:
        sol = unflatten(tree, leaves[:num_x])
        return (sol, unflatten(self.aux_tree, leaves[num_x:])) if has_aux else sol


def _vector(fname: str, what: str, value) -> tuple[list, Any, list[ShapedArray]]:
    leaves, tree = tree_flatten(value)
    ops, avals = operand_values(leaves, what, fname)
    avals = _plain(avals)
    return [cast_to(v, a.dtype) for v, a in zip(ops, avals)], tree, avals


def _vector_fn(fname: str, what: str, fn: Callable, tree, avals) -> Callable:
    """`fn` on pytrees, its input and output checked against (tree, avals)."""
    def apply(v):
        _check_vector(fname, f"the argument given to {what}", "the vector", v, tree, avals)
        return unflatten(tree, _check_vector(fname, what, "the vector", fn(v), tree, avals))
    return apply


def custom_linear_solve(matvec: Callable, b: Any, solve: Callable[[Callable, Any], Any],
                        transpose_solve: Callable[[Callable, Any], Any] | None = None,
                        symmetric: bool = False, has_aux: bool = False) -> Any:
    """Solve `matvec(x) == b` with a solver whose derivatives are taken implicitly, at the
    solution, instead of through its steps (JAX's `lax.custom_linear_solve`).

    `x = solve(matvec, b)` is assumed (not checked) to satisfy `matvec(x) == b`. Forward mode
    solves the same system again for the tangent; reverse mode solves the transposed system
    with `transpose_solve(vecmat, ct)`, where `vecmat` is matvec's transpose (computed by
    autodiff). Derivatives flow to `b` and to the arrays `matvec` closes over; those that
    `solve` and `transpose_solve` close over get none. The rules are made of primitives with
    rules, so every order of derivative works, under jit and vmap.

    Args:
        matvec: the linear map, x -> A x, on pytrees shaped like `b`; must be differentiable.
        b: the right-hand side, a pytree of arrays.
        solve: `solve(matvec, b) -> x`; need not be differentiable (a while_loop, a
            bisection, a call to a factorisation).
        transpose_solve: `transpose_solve(vecmat, b) -> x`, solving the transposed system;
            needed for reverse mode unless `symmetric`.
        symmetric: matvec is symmetric, so `solve` also solves the transposed system.
        has_aux: `solve` (and `transpose_solve`) return `(x, aux)`; aux (solver diagnostics)
            is returned unchanged and has zero derivative.

    Returns:
        `solve(matvec, b)`: x in b's structure (with its aux when has_aux).
    """
    fname = "custom_linear_solve"
    for fn, what in ((matvec, "matvec"), (solve, "solve")):
        if not callable(fn):
            raise FgradTypeError(f"{fname}: {what} must be callable: custom_linear_solve(matvec, b, solve, "
                                 f"transpose_solve=None, symmetric=False, has_aux=False)", doc="lax-arguments")
    if transpose_solve is not None and not callable(transpose_solve):
        raise FgradTypeError(f"{fname}: transpose_solve must be callable or None", doc="lax-arguments")
    if transpose_solve is None and symmetric:
        transpose_solve = solve
    ops, tree, avals = _vector(fname, "custom_linear_solve b", b)
    mv_fn = _vector_fn(fname, "matvec", matvec, tree, avals)
    mv = stage(lambda *ls: _check_vector(fname, "matvec", "b", matvec(unflatten(tree, ls)), tree, avals),
               avals, fname)
    solver = _Solver(fname, "solve", lambda v: solve(mv_fn, v), tree, avals, "b", has_aux)
    vm: Staged | None = None
    tsolver: _Solver | None = None
    if transpose_solve is solve and symmetric:  # the same staged solver serves both systems
        vm, tsolver = mv, solver
    elif transpose_solve is not None:
        if symmetric:
            vm, vm_fn = mv, mv_fn
        else:
            def transposed(*ys):
                _, pull = vjp(lambda *xs: call(mv.body, mv.consts + list(xs)), *[_zero(a) for a in avals])
                return list(pull(list(ys)))
            vm = stage(transposed, avals, fname)

            def vm_fn(v):
                leaves = _check_vector(fname, "the argument given to vecmat", "b", v, tree, avals)
                return unflatten(tree, call(vm.body, vm.consts + leaves))
        tsolver = _Solver(fname, "transpose_solve", lambda v: transpose_solve(vm_fn, v), tree, avals, "b", has_aux)
    num_x = len(avals)
    if num_x == 0:  # nothing to solve for: only the aux, which has no derivative
        return solver.result(tree, call(solver.staged.body, solver.staged.consts), has_aux, 0)
    parts = [mv, vm, solver.staged, None if tsolver is None else tsolver.staged]
    jaxprs = tuple(None if p is None else p.body for p in parts)
    consts = [c for p in parts if p is not None for c in p.consts]
    lengths = tuple(0 if p is None else len(p.consts) for p in parts)
    leaves = _bind_ls(consts, ops, jaxprs, lengths, num_x)
    return solver.result(tree, leaves, has_aux, num_x)


def custom_root(f: Callable, initial_guess: Any, solve: Callable[[Callable, Any], Any],
                tangent_solve: Callable[[Callable, Any], Any], has_aux: bool = False) -> Any:
    """Find a root of `f` with a solver whose derivatives come from the implicit function
    theorem at the root, not from its steps (JAX's `lax.custom_root`).

    `x = solve(f, initial_guess)` is assumed (not checked) to satisfy `f(x) == 0`. Derivatives
    flow to the arrays `f` closes over: for f(p, x*) = 0, dx* = -(df/dx)^-1 df/dp dp, where
    `tangent_solve(g, y)` applies (df/dx)^-1 (g is f linearised at the root). The initial
    guess and the arrays `solve` closes over get no derivative. Reverse mode transposes
    `tangent_solve` (it is linear in y), so it must be differentiable, e.g.
    `lambda g, y: y / g(1.0)` for a scalar, or a custom_linear_solve.

    Args:
        f: the function whose root is sought, x -> f(x) with f(x) shaped like x.
        initial_guess: the starting point, a pytree of arrays.
        solve: `solve(f, initial_guess) -> x`; need not be differentiable (Newton's method
            in a while_loop, a bisection).
        tangent_solve: `tangent_solve(g, y) -> x` solving the linear system `g(x) == y`.
        has_aux: `solve` returns `(x, aux)`; aux is returned unchanged, with zero derivative.

    Returns:
        `solve(f, initial_guess)` (with its aux when has_aux).
    """
    fname = "custom_root"
    for fn, what in ((f, "f"), (solve, "solve"), (tangent_solve, "tangent_solve")):
        if not callable(fn):
            raise FgradTypeError(f"{fname}: {what} must be callable: custom_root(f, initial_guess, solve, "
                                 "tangent_solve, has_aux=False)", doc="lax-arguments")
    ops, tree, avals = _vector(fname, "custom_root initial_guess", initial_guess)
    f_fn = _vector_fn(fname, "f", f, tree, avals)
    f_st = stage(lambda *ls: _check_vector(fname, "f", "initial_guess", f(unflatten(tree, ls)), tree, avals),
                 avals, fname)
    solver = _Solver(fname, "solve", lambda v: solve(f_fn, v), tree, avals, "initial_guess", has_aux)
    num_x = len(avals)

    def linearize_and_solve(*a):
        x = unflatten(tree, a[:num_x])

        def g(t):
            leaves = _check_vector(fname, "the argument given to tangent_solve's linear map", "initial_guess",
                                   t, tree, avals)
            return unflatten(tree, jvp(lambda *xs: call(f_st.body, f_st.consts + list(xs)), tuple(a[:num_x]),
                                       tuple(leaves))[1])
        out = tangent_solve(g, unflatten(tree, a[num_x:]))
        return _check_vector(fname, "tangent_solve", "initial_guess", out, tree, avals)
    ls = stage(linearize_and_solve, avals + avals, fname)
    if num_x == 0:  # nothing to solve for: only the aux, which has no derivative
        return solver.result(tree, call(solver.staged.body, solver.staged.consts), has_aux, 0)
    parts = [f_st, solver.staged, ls]
    leaves = unpack_leaves(
        root_p.bind(*[c for p in parts for c in p.consts], *ops, jaxprs=tuple(p.body for p in parts),
                    const_lengths=tuple(len(p.consts) for p in parts), num_x=num_x),
        _out_avals(solver.staged.body))
    return solver.result(tree, leaves, has_aux, num_x)
