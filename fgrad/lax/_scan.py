"""scan (and map, built on it): a loop of static length over a carry and the leading axis
of its inputs, stacking the per-step outputs.

`scan_p`'s operands are (*consts, *init, *xs); its params the staged body (`jaxpr`:
consts, carry, one slice of each xs -> new carry, one slice of each ys), `num_consts`,
`num_carry`, `length`, `reverse` and `unroll`. Its one output is the final carry and the
stacked ys, packed (fgrad._packing). Reverse mode saves the carry entering every step
(the forward half, `_scan_vjp_fwd`) and runs a reverse scan over the VJP of the body,
which recomputes each step's forward from its saved carry (`scan_transpose`, also what
while_loop's reverse mode runs on its checkpointed segments).
"""
from __future__ import annotations

import operator
from typing import Any, Callable, Sequence

import numpy as np

from .. import numpy as fnp
from .._packing import pack, pack_arrays, packed_aval, unpack_leaves
from ..api import jvp, vjp, vmap
from ..core.avals import ShapedArray, is_float
from ..core.errors import FgradTypeError, FgradValueError
from ..core.primitive import Primitive
from ..core.trace import Tracer, aval_of
from ..interpreters.compile import loops
from ..numpy._util import is_array, refuse_foreign
from ..ops.shape import concatenate, move_axis, reshape
from ..ops.shape import slice as slice_array
from ..tree_util import keystr, tree_flatten, tree_flatten_with_path
from ._common import (
    Body,
    CarryView,
    call,
    carry_fixpoint,
    cast_leaves,
    cast_to,
    compile_eagerly,
    describe_avals,
    operand_values,
    pack_batched,
    runner,
    stage,
    stage_carry_body,
    unflatten,
)

scan_p = Primitive("scan")


def _plain(a: ShapedArray) -> ShapedArray:
    return ShapedArray(a.shape, a.dtype)


def _stacked(length: int, a: ShapedArray) -> ShapedArray:
    return ShapedArray((length,) + tuple(a.shape), a.dtype)


def scan_out_avals(jaxpr: Body, num_carry: int, length: int) -> list[ShapedArray]:
    """The avals of scan's output leaves: the carry, then each ys stacked `length` times."""
    outs = jaxpr.out_avals
    return [_plain(a) for a in outs[:num_carry]] + [_stacked(length, a) for a in outs[num_carry:]]


def _split(seq: Sequence, num_consts: int, num_carry: int) -> tuple[list, list, list]:
    return list(seq[:num_consts]), list(seq[num_consts:num_consts + num_carry]), list(seq[num_consts + num_carry:])


def bind_scan(body: Body, consts: Sequence, init: Sequence, xs: Sequence, length: int,
              reverse: bool = False, unroll: Any = 1) -> list:
    """Bind scan_p and unpack its output: the final carry's leaves, then the stacked ys'."""
    out = scan_p.bind(*consts, *init, *xs, jaxpr=body, num_consts=len(consts), num_carry=len(init),
                      length=length, reverse=reverse, unroll=unroll)
    return unpack_leaves(out, scan_out_avals(body, len(init), length))


# --- rules ----------------------------------------------------------------------------------

def _compiled_scan(jaxpr: Body, num_consts, num_carry, length, reverse, unroll):
    """The whole scan compiled into one Numba function (cached on the body), or None."""
    return jaxpr.compiled(("scan", num_consts, num_carry, length, reverse, unroll),
                          lambda: loops.scan_loop(jaxpr, num_consts, num_carry, length, reverse, unroll))


def _scan_impl(*args, jaxpr, num_consts, num_carry, length, reverse, unroll, xp):
    loop, run = None, None
    if compile_eagerly(xp, length * len(jaxpr.jaxpr.eqns)):
        loop = _compiled_scan(jaxpr, num_consts, num_carry, length, reverse, unroll)
        run = None if loop is not None else jaxpr.region_program()
    return _run_scan(args, jaxpr, num_consts, num_carry, length, reverse, loop, run or runner(jaxpr, xp), xp)


def _scan_jit(eqn) -> Callable:
    """jit's callable for one scan equation: a Python loop over the body compiled by jit's
    region compiler for its first calls (loops.JIT_MIN_WORK), then the compiled loop; the
    Python loop for good when the body has no loop lowering."""
    p = dict(eqn.params)
    body, nc, K, length, reverse = p["jaxpr"], p["num_consts"], p["num_carry"], p["length"], p["reverse"]
    tier = loops.JitLoopTier(len(body.jaxpr.eqns))

    def scan_compiled(*args):
        loop = _compiled_scan(body, nc, K, length, reverse, p["unroll"]) if tier.compiled(length) else None
        # (the region program is built on first use and kept on the body)
        run = body.region_program() if loop is None else None
        return _run_scan(args, body, nc, K, length, reverse, loop, run, np)
    return scan_compiled


def _run_scan(args, jaxpr, num_consts, num_carry, length, reverse, loop, run, xp):
    """The scan's packed output: by `loop` (a compiled loop) if given, else by calling
    `run(args) -> outputs` per step."""
    consts, carry, xs = _split(args, num_consts, num_carry)
    out_avals = scan_out_avals(jaxpr, num_carry, length)
    if loop is not None:
        carry, ys = loop(consts, carry, xs)
        return pack_arrays(carry + ys, out_avals, xp)
    ys = [xp.empty(a.shape, a.dtype) for a in out_avals[num_carry:]]
    for i in (range(length - 1, -1, -1) if reverse else range(length)):
        outs = run(consts + carry + [x[i, ...] for x in xs])
        carry = outs[:num_carry]
        for buf, y in zip(ys, outs[num_carry:]):
            buf[i] = y
    return pack_arrays(carry + ys, out_avals, xp)


def _scan_abstract_eval(*avals, jaxpr, num_consts, num_carry, length, reverse, unroll):
    ins = jaxpr.in_avals
    if len(avals) != len(ins):
        raise FgradTypeError(f"scan: {len(avals)} operands for a body of {len(ins)} inputs")
    for k, (a, b) in enumerate(zip(avals, ins)):
        want = b if k < num_consts + num_carry else _stacked(length, b)
        if a != want:
            raise FgradTypeError(f"scan: operand {k} has type {a.str_short()}, the body expects "
                                 f"{want.str_short()}", doc="loop-carry-type")
    carry_in = [_plain(a) for a in ins[num_consts:num_consts + num_carry]]
    carry_out = [_plain(a) for a in jaxpr.out_avals[:num_carry]]
    if carry_in != carry_out:
        raise FgradTypeError(f"scan: the body takes the carry as {describe_avals(carry_in)} but returns "
                             f"{describe_avals(carry_out)}", doc="loop-carry-type")
    return packed_aval(scan_out_avals(jaxpr, num_carry, length))


def _instantiate(t, aval: ShapedArray):
    return np.zeros(aval.shape, aval.dtype) if t is None else t


def _pack_tangents(leaves: list, avals: list):
    """The tangent of a packed output from its leaves' (None where the leaf is an integer)."""
    if len(avals) == 1:
        return leaves[0] if is_float(avals[0].dtype) else None
    return pack(leaves, avals, zero_ints=True)


def _scan_jvp(primals, tangents, *, jaxpr, num_consts, num_carry, length, reverse, unroll):
    nc, K = num_consts, num_carry
    ins, outs = jaxpr.in_avals, jaxpr.out_avals
    consts, init, xs = _split(primals, nc, K)
    tc, ti, tx = _split(tangents, nc, K)
    ny = len(outs) - K
    c_nz = [i for i, t in enumerate(tc) if t is not None]
    x_nz = [i for i, t in enumerate(tx) if t is not None]
    carry_f = [i for i in range(K) if is_float(ins[nc + i].dtype)]
    y_f = [j for j in range(ny) if is_float(outs[K + j].dtype)]
    params = dict(jaxpr=jaxpr, num_consts=nc, num_carry=K, length=length, reverse=reverse, unroll=unroll)
    if (not c_nz and not x_nz and all(ti[i] is None for i in carry_f)) or not (carry_f or y_f):
        return scan_p.bind(*primals, **params), None
    n_tc, n_tcar = len(c_nz), len(carry_f)

    def body_jvp(*a):
        cv, tcv = a[:nc], a[nc:nc + n_tc]
        a = a[nc + n_tc:]
        carv, tcarv = a[:K], a[K:K + n_tcar]
        a = a[K + n_tcar:]
        xv, txv = a[:len(xs)], a[len(xs):]

        def f(*d):
            cs, car, xx = list(cv), list(carv), list(xv)
            for k, i in enumerate(c_nz):
                cs[i] = d[k]
            for k, i in enumerate(carry_f):
                car[i] = d[n_tc + k]
            for k, i in enumerate(x_nz):
                xx[i] = d[n_tc + n_tcar + k]
            return call(jaxpr, cs + car + xx)
        primal_in = [cv[i] for i in c_nz] + [carv[i] for i in carry_f] + [xv[i] for i in x_nz]
        o, to = jvp(f, tuple(primal_in), tuple(tcv) + tuple(tcarv) + tuple(txv))
        return [*o[:K], *[to[i] for i in carry_f], *[to[K + j] for j in y_f]]
    avals = (list(ins[:nc]) + [_plain(ins[i]) for i in c_nz] + list(ins[nc:nc + K])
             + [_plain(ins[nc + i]) for i in carry_f] + list(ins[nc + K:])
             + [_plain(ins[nc + K + i]) for i in x_nz])
    st = stage(body_jvp, avals, "scan jvp")
    leaves = bind_scan(st.body, st.consts + consts + [tc[i] for i in c_nz],
                       init + [_instantiate(ti[i], ins[nc + i]) for i in carry_f],
                       xs + [tx[i] for i in x_nz], length, reverse, unroll)
    t_all: list = [None] * (K + ny)
    for k, i in enumerate(carry_f):
        t_all[i] = leaves[K + k]
    for k, j in enumerate(y_f):
        t_all[K + j] = leaves[K + n_tcar + k]
    # The primal output comes from its own scan: from the one above it would depend on the
    # tangents, and vmap over tangents (jacfwd) must find the primal unbatched.
    return scan_p.bind(*primals, **params), _pack_tangents(t_all, scan_out_avals(jaxpr, K, length))


def carries_body(jaxpr: Body, num_consts: int, num_carry: int) -> Body:
    """The body that also outputs the carry it received, as an extra ys: scanning it saves
    the carry entering every step."""
    j = jaxpr.jaxpr
    return jaxpr.with_outputs(list(j.outvars) + list(j.invars[num_consts:num_consts + num_carry]))


def _scan_vjp_fwd(*primals, jaxpr, num_consts, num_carry, length, reverse, unroll):
    """The forward half of reverse mode: (output, the carries entering each step, stacked)."""
    consts, init, xs = _split(primals, num_consts, num_carry)
    leaves = bind_scan(carries_body(jaxpr, num_consts, num_carry), consts, init, xs, length, reverse, unroll)
    n_out = len(jaxpr.out_avals)
    return pack(leaves[:n_out], scan_out_avals(jaxpr, num_carry, length)), leaves[n_out:]


def scan_transpose(body: Body, num_consts: int, num_carry: int, length: int, reverse: bool,
                   consts: Sequence, xs: Sequence, carries: Sequence, ct_carry: Sequence,
                   ct_ys: Sequence, needs_consts: Sequence[bool], needs_xs: Sequence[bool]):
    """The VJP of a scan of `body`, given the carries entering each step (stacked): a reverse
    scan whose step recomputes the body's forward from its saved carry and applies the body's
    VJP. Returns (cts of consts, of the initial carry, of xs), None where zero or not needed;
    integer leaves get none (entries of ct_carry/ct_ys for them are ignored)."""
    nc, K = num_consts, num_carry
    ins, outs = body.in_avals, body.out_avals
    nx, ny = len(xs), len(outs) - K
    const_d = [i for i in range(nc) if needs_consts[i] and is_float(ins[i].dtype)]
    carry_f = [i for i in range(K) if is_float(ins[nc + i].dtype)]
    x_d = [i for i in range(nx) if needs_xs[i] and is_float(ins[nc + K + i].dtype)]
    y_f = [j for j in range(ny) if is_float(outs[K + j].dtype)]
    none = ([None] * nc, [None] * K, [None] * nx)
    if not (carry_f or y_f) or not (const_d or carry_f or x_d):
        return none
    n_d, n_f = len(const_d), len(carry_f)

    def bwd(*a):
        cv, acc, ctc = a[:nc], a[nc:nc + n_d], a[nc + n_d:nc + n_d + n_f]
        a = a[nc + n_d + n_f:]
        xv, carv, cty = a[:nx], a[nx:nx + K], a[nx + K:]

        def f(*d):
            cs, car, xx = list(cv), list(carv), list(xv)
            for k, i in enumerate(const_d):
                cs[i] = d[k]
            for k, i in enumerate(carry_f):
                car[i] = d[n_d + k]
            for k, i in enumerate(x_d):
                xx[i] = d[n_d + n_f + k]
            o = call(body, cs + car + xx)
            return [o[i] for i in carry_f], [o[K + j] for j in y_f]
        _, f_vjp = vjp(f, *[cv[i] for i in const_d], *[carv[i] for i in carry_f], *[xv[i] for i in x_d])
        g = f_vjp((list(ctc), list(cty)))
        return [*[fnp.add(s, d) for s, d in zip(acc, g[:n_d])], *g[n_d:]]
    avals = (list(ins[:nc]) + [_plain(ins[i]) for i in const_d] + [_plain(ins[nc + i]) for i in carry_f]
             + list(ins[nc + K:]) + list(ins[nc:nc + K]) + [_plain(outs[K + j]) for j in y_f])
    st = stage(bwd, avals, "scan vjp")
    leaves = bind_scan(st.body, st.consts + list(consts),
                       [np.zeros(ins[i].shape, ins[i].dtype) for i in const_d] + [ct_carry[i] for i in carry_f],
                       list(xs) + list(carries) + [ct_ys[j] for j in y_f], length, not reverse)
    ct_consts, ct_init, ct_xs = none
    ct_consts, ct_init, ct_xs = list(ct_consts), list(ct_init), list(ct_xs)
    for k, i in enumerate(const_d):
        ct_consts[i] = leaves[k]
    for k, i in enumerate(carry_f):
        ct_init[i] = leaves[n_d + k]
    for k, i in enumerate(x_d):
        ct_xs[i] = leaves[n_d + n_f + k]
    return ct_consts, ct_init, ct_xs


def _scan_vjp(needs, ct, out, *primals, jaxpr, num_consts, num_carry, length, reverse, unroll,
              residuals=None):
    nc, K = num_consts, num_carry
    if residuals is None:  # no recorder ran the forward half for this node: it runs here
        residuals = _scan_vjp_fwd(*primals, jaxpr=jaxpr, num_consts=nc, num_carry=K, length=length,
                                  reverse=reverse, unroll=unroll)[1]
    cts = unpack_leaves(ct, scan_out_avals(jaxpr, K, length))
    consts, _, xs = _split(primals, nc, K)
    n_c, n_i, n_x = _split(needs, nc, K)
    ct_consts, ct_init, ct_xs = scan_transpose(jaxpr, nc, K, length, reverse, consts, xs, residuals,
                                               cts[:K], cts[K:], n_c, n_x)
    return [*ct_consts, *[c if n else None for c, n in zip(ct_init, n_i)], *ct_xs]


def _scan_batch(n, vals, dims, *, jaxpr, num_consts, num_carry, length, reverse, unroll):
    nc, K = num_consts, num_carry
    consts, init, xs = _split(vals, nc, K)
    dc, di, dx = _split(dims, nc, K)
    flags = [d is not None for d in dims]
    carry_b, y_b = carry_fixpoint(jaxpr.jaxpr, nc, K, flags)
    # batch axes: consts and carries first (or unbatched); xs second, after the scanned axis
    consts = [_to_front(n, v, d, False) for v, d in zip(consts, dc)]
    init = [_to_front(n, v, d, b) for v, d, b in zip(init, di, carry_b)]
    xs = [v if d is None or d == 1 else move_axis(v, d, 1) for v, d in zip(xs, dx)]
    in_axes = ([None if d is None else 0 for d in dc] + [0 if b else None for b in carry_b]
               + [None if d is None else 0 for d in dx])
    out_axes = [0 if b else None for b in carry_b] + [0 if b else None for b in y_b]

    def batched_body(*a):
        return vmap(lambda *e: call(jaxpr, list(e)), in_axes=tuple(in_axes), out_axes=out_axes,
                    axis_size=n)(*a)
    ins = jaxpr.in_avals
    avals = [_batched_aval(n, a, ax) for a, ax in zip(ins, in_axes)]
    st = stage(batched_body, avals, "scan vmap")
    leaves = bind_scan(st.body, st.consts + consts, init, xs, length, reverse, unroll)
    outs = scan_out_avals(jaxpr, K, length)
    front = [_to_front(n, v, 0 if b else None, True) for v, b in zip(leaves[:K], carry_b)]
    front += [_to_front(n, move_axis(v, 1, 0) if b else v, 0 if b else None, True)
              for v, b in zip(leaves[K:], y_b)]
    return pack_batched(n, front, outs), 0


def _batched_aval(n: int, a: ShapedArray, axis) -> ShapedArray:
    return a if axis is None else ShapedArray((n,) + tuple(a.shape), a.dtype)


def _to_front(n: int, v, d, batched: bool):
    """`v` with its batch axis `d` first; an unbatched `v` broadcast to the batch when
    `batched` (a carry that becomes batched on some iteration)."""
    if d is not None:
        return move_axis(v, d, 0) if d else v
    if not batched:
        return v
    return fnp.broadcast_to(v, (n,) + tuple(fnp.shape(v)))


scan_p.def_impl(_scan_impl)
scan_p.def_abstract_eval(_scan_abstract_eval)
scan_p.def_jvp(_scan_jvp)
scan_p.def_vjp_fwd(_scan_vjp_fwd)
scan_p.def_vjp(_scan_vjp)
scan_p.def_saves(output=False)  # the VJP reads the inputs and residuals, never the output
scan_p.def_batch(_scan_batch)
loops.JIT_RULES[scan_p] = _scan_jit


# --- the public functions ---------------------------------------------------------------------

def _static_int(value, what: str, fname: str, doc: str) -> int:
    try:
        if isinstance(value, (bool, np.bool_)):
            raise TypeError
        return operator.index(value)
    except Exception:  # noqa: BLE001  (a tracer, a float, an object: the same message)
        kind = value.aval.str_short() if isinstance(value, Tracer) else f"{type(value).__name__} {value!r:.40}"
        raise FgradTypeError(
            f"{fname}: {what} must be a concrete Python int (the number of steps is part of the "
            f"staged program), got {kind}. Pass an int; a trip count known only at run time needs "
            "fgrad.lax.while_loop (or fori_loop with traced bounds).", doc=doc) from None


def _scan_length(length, x_avals: list, x_paths: list, fname: str) -> int:
    sizes = {}
    for a, p in zip(x_avals, x_paths):
        if not a.shape:
            raise FgradValueError(
                f"{fname}: xs leaf{keystr(p) or ''} is a scalar ({a.str_short()}); every leaf of xs is "
                "scanned along its leading axis, so it needs one. Give it a leading axis (x[None]) or "
                "close over it in the body instead.", doc="scan-length")
        sizes.setdefault(a.shape[0], keystr(p) or " (xs)")
    if length is not None:
        length = _static_int(length, "length", fname, "scan-length")
        if length < 0:
            raise FgradValueError(f"{fname}: length must be non-negative, got {length}", doc="scan-length")
    if len(sizes) > 1 or (length is not None and sizes and set(sizes) != {length}):
        detail = ", ".join(f"leaf{p} has {s}" for s, p in sizes.items())
        given = f"length={length} but " if length is not None else ""
        raise FgradValueError(
            f"{fname}: the leaves of xs must all have the same leading axis size (the number of steps): "
            f"{given}{detail}. Slice them to one length, or pass the matching length=.", doc="scan-length")
    if sizes:
        return next(iter(sizes))
    if length is None:
        raise FgradValueError(
            f"{fname}: there are no xs to scan over, so the number of steps is unknown: pass length=n.",
            doc="scan-length")
    return length


def _check_unroll(unroll, fname: str):
    if isinstance(unroll, (bool, np.bool_)):
        return bool(unroll)
    n = _static_int(unroll, "unroll", fname, "lax-arguments")
    if n < 1:
        raise FgradValueError(f"{fname}: unroll must be a positive int or a bool, got {unroll}",
                              doc="lax-arguments")
    return n


def scan(f: Callable, init: Any, xs: Any = None, length: int | None = None, reverse: bool = False,
         unroll: int | bool = 1) -> tuple[Any, Any]:
    """Loop `f` over the leading axis of `xs`, carrying state (JAX's `lax.scan`)::

        def scan(f, init, xs, length=None):
            carry, ys = init, []
            for x in xs:
                carry, y = f(carry, x)
                ys.append(y)
            return carry, stack(ys)

    `f(carry, x) -> (carry, y)`; `init`, `xs` and the outputs are pytrees of arrays, and the
    carry keeps its structure, shapes and dtypes (a Python number given in `init` takes the
    dtype the body gives it, as in JAX). `xs=None` needs `length`. With `reverse=True` the
    loop runs from the last index to the first (ys keep xs' order). `unroll=k` runs k copies
    of the body per iteration of the compiled loop (True: all `length`), as in JAX; the
    values do not depend on it.

    `f` is staged once; under jit and make_jaxpr the loop is one `scan` equation with the body
    nested, whatever the length; jit compiles the whole loop, body included, into one Numba
    function (fgrad.interpreters.compile.loops), as it does eagerly for long loops. Every
    transform composes with it; reverse mode saves the
    carry entering each step (length x the carry's size) and recomputes the rest of the body
    in the backward loop.
    
    Args:
        f: the body, ``f(carry, x) -> (carry, y)``.
        init: the initial carry.
        xs: the values to loop over (their leading axis), or None with `length`.
        length: the number of steps; checked against xs' leading axis when both are given.
        reverse: run from the last index to the first.
        unroll: body copies per compiled iteration (no effect on values).

    Returns:
        (final carry, ys stacked along a new leading axis).

    Example:
        >>> import fgrad.numpy as jnp
        >>> from fgrad import lax
        >>> lax.scan(lambda c, x: (c + x, c * x), 0.0, jnp.array([1.0, 2.0, 3.0]))
        (array(6.), array([0., 2., 9.]))
    """
    fname = "scan"
    if not callable(f):
        raise FgradTypeError(f"scan: f must be callable, got {type(f).__name__}", doc="lax-arguments")
    init_leaves, init_tree = tree_flatten(init)
    x_pairs, xs_tree = tree_flatten_with_path(xs)
    c_ops, c_avals = operand_values(init_leaves, "scan init", fname)
    x_ops, x_full = operand_values([x for _, x in x_pairs], "scan xs", fname)
    length = _scan_length(length, x_full, [p for p, _ in x_pairs], fname)
    unroll = _check_unroll(unroll, fname)
    K = len(c_avals)

    def make(out_casts):
        def body(*leaves):
            out = f(unflatten(init_tree, leaves[:K]), unflatten(xs_tree, leaves[K:]))
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                got = (f"a {type(out).__name__} of length {len(out)}" if isinstance(out, (tuple, list)) else
                       f"an array of type {aval_of(out).str_short()}" if is_array(out) else
                       f"a {type(out).__name__}")
                raise FgradTypeError(f"scan: f must return a pair (new_carry, y), got {got}. Return `carry, y` "
                                     "(y may be None).", doc="scan-body-output")
            new, y = out
            leaves_c, tree_c = tree_flatten(new)
            if len(leaves_c) == len(out_casts):
                new = unflatten(tree_c, cast_leaves(leaves_c, out_casts))
            return new, y
        return body

    def carry_of(st):
        tree = st.out_tree.children[0]
        k = tree.num_leaves
        return CarryView(tree, st.out_avals[:k], st.out_weak[:k], tuple(p[1:] for p in st.out_paths[:k]))
    x_avals = [ShapedArray(a.shape[1:], a.dtype) for a in x_full]
    st, avals = stage_carry_body(fname, "f", make, c_avals + x_avals, init_tree, carry_of)
    c_ops = [cast_to(v, a.dtype) for v, a in zip(c_ops, avals[:K])]
    y_tree = st.out_tree.children[1]
    if K + y_tree.num_leaves == 0:
        return unflatten(init_tree, []), unflatten(y_tree, [])
    leaves = bind_scan(st.body, st.consts, c_ops, x_ops, length, bool(reverse), unroll)
    return unflatten(init_tree, leaves[:K]), unflatten(y_tree, leaves[K:])


def map(f: Callable, xs: Any, *, batch_size: int | None = None) -> Any:  # noqa: A001 (JAX's name)
    """`f` applied to each slice of `xs` along its leading axis, the results stacked (JAX's
    `lax.map`): a scan with no carry, so under jit it stays one loop. With `batch_size`, `f`
    is vmapped over blocks of that many slices (the last, shorter block separately)."""
    for x in tree_flatten(xs)[0]:
        refuse_foreign(x, "fgrad.lax.map")
    if batch_size is None:
        return scan(lambda _, x: ((), f(x)), (), xs)[1]
    b = _static_int(batch_size, "batch_size", "map", "lax-arguments")
    if b < 1:
        raise FgradValueError(f"map: batch_size must be a positive int, got {batch_size}", doc="lax-arguments")
    pairs, tree = tree_flatten_with_path(xs)
    leaves = [x for _, x in pairs]
    _, avals = operand_values(leaves, "map xs", "map")
    n = _scan_length(None, avals, [p for p, _ in pairs], "map")
    nb, rem = divmod(n, b)
    outs = None
    if nb:
        blocks = [reshape(slice_array(x, (0,) * len(a.shape), (nb * b,) + a.shape[1:]), (nb, b) + a.shape[1:])
                  for x, a in zip(leaves, avals)]
        ys = scan(lambda _, x: ((), vmap(f)(x)), (), unflatten(tree, blocks))[1]
        y_leaves, y_tree = tree_flatten(ys)
        outs = [reshape(y, (nb * b,) + tuple(fnp.shape(y))[2:]) for y in y_leaves]
    if rem:
        tail = [slice_array(x, (nb * b,) + (0,) * (len(a.shape) - 1), a.shape) for x, a in zip(leaves, avals)]
        t_leaves, y_tree = tree_flatten(vmap(f)(unflatten(tree, tail)))
        outs = t_leaves if outs is None else [concatenate([o, t], 0) for o, t in zip(outs, t_leaves)]
    if outs is None:  # no slices at all: f's output structure comes from a scan of length 0
        return scan(lambda _, x: ((), f(x)), (), xs)[1]
    return unflatten(y_tree, outs)
