"""while_loop (and fori_loop, built on scan or on it): a loop whose trip count depends on
the values.

`while_p`'s operands are (*cond_consts, *body_consts, *init); its params the staged
`cond_jaxpr` (cond_consts, carry -> scalar bool) and `body_jaxpr` (body_consts, carry ->
carry), `cond_nconsts`, `body_nconsts`, and `checkpoint` (reverse mode's segment length).
Its one output is the final carry, packed (fgrad._packing).

Reverse mode, which JAX refuses: fgrad records on concrete values, so the forward half
(`_while_vjp_fwd`) can count the trips, n, and then rerun the loop as scans of known
length: an outer scan over n // s segments of s steps (keeping only the carry entering each
segment, s ~ sqrt(n) by default), then the n % s remaining steps. The VJP recomputes one
segment at a time from its snapshot and runs scan's VJP over it, so memory is O(sqrt(n))
carries for one extra forward pass. Under vmap the lanes' trip counts differ: the loop is
rerun for the largest, each lane's step masked by its own predicate. When the values are
abstract (grad inside jit, or a while_loop inside a scan or cond body, whose VJP is staged),
the VJP is one `deferred` equation (fgrad.lax._defer) that runs when the values are known.
"""
from __future__ import annotations

import math
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from .. import numpy as fnp
from .._packing import pack, pack_arrays, packed_aval, unpack_leaves
from ..api import jvp, vmap
from ..core.avals import PY_NUMBERS, ShapedArray, is_float, weak_aval
from ..core.errors import ConcretizationError, FgradTypeError, FgradValueError
from ..core.primitive import Primitive
from ..core.trace import Tracer, aval_of
from ..interpreters.batching import BatchTracer
from ..interpreters.compile import loops
from ..numpy._util import as_value, plain_value
from ..ops.elementwise import select, stop_gradient
from ..ops.shape import broadcast_in_dim
from ..tree_util import tree_flatten
from ._common import (
    Body,
    CarryView,
    Staged,
    add_invars,
    batched_outputs,
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
from ._defer import defer
from ._scan import (
    _batched_aval,
    _pack_tangents,
    _to_front,
    bind_scan,
    carries_body,
    scan,
    scan_transpose,
)

while_p = Primitive("while")


def _plain(avals) -> list[ShapedArray]:
    return [ShapedArray(a.shape, a.dtype) for a in avals]


def _split(seq: Sequence, ncc: int, nbc: int) -> tuple[list, list, list]:
    return list(seq[:ncc]), list(seq[ncc:ncc + nbc]), list(seq[ncc + nbc:])


def _carry_avals(body_jaxpr: Body, nbc: int) -> list[ShapedArray]:
    return _plain(body_jaxpr.in_avals[nbc:])


def bind_while(cond: Staged, body: Staged, cond_consts: Sequence, body_consts: Sequence, init: Sequence,
               checkpoint: int | None = None) -> list:
    """Bind while_p on staged functions and unpack its output (the final carry's leaves)."""
    cc, bc = list(cond.consts) + list(cond_consts), list(body.consts) + list(body_consts)
    out = while_p.bind(*cc, *bc, *init, cond_jaxpr=cond.body, body_jaxpr=body.body, cond_nconsts=len(cc),
                       body_nconsts=len(bc), checkpoint=checkpoint)
    return unpack_leaves(out, _carry_avals(body.body, len(bc)))


def _body_only(body: Body) -> Staged:
    return Staged(body, [], None, tuple(body.out_avals), (), ())


# --- rules ----------------------------------------------------------------------------------

def _compiled_while(cond_jaxpr: Body, body_jaxpr: Body, ncc: int, nbc: int):
    """The whole loop compiled into one Numba function (cached on the body), or None."""
    made = body_jaxpr.compiled(("while", id(cond_jaxpr), ncc, nbc),
                               lambda: (cond_jaxpr, loops.while_loop(cond_jaxpr, body_jaxpr, ncc, nbc)))
    return made[1]  # (the cond kept alive with its loop: its id is in the key)


def _while_impl(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts, checkpoint, xp):
    # Outside jit the trip count is unknown: the loop is interpreted until it has run
    # loops.EAGER_MIN_WORK equations, then compiled for the trips that remain.
    eqns = max(1, len(cond_jaxpr.jaxpr.eqns) + len(body_jaxpr.jaxpr.eqns))
    budget = -(-loops.EAGER_MIN_WORK // eqns) if compile_eagerly(xp, math.inf) else None
    return _run_while(args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts, budget,
                      runner(cond_jaxpr, xp), runner(body_jaxpr, xp), xp)


def _while_jit(eqn) -> Callable:
    """jit's callable for one while equation: a Python loop over the cond and body compiled
    by jit's region compiler until the equation has run loops.JIT_MIN_WORK body equations
    over its calls, then (mid-loop, as eagerly) the compiled loop; the Python loop for good
    when the loop has no lowering."""
    p = eqn.params
    cond, body, ncc, nbc = p["cond_jaxpr"], p["body_jaxpr"], p["cond_nconsts"], p["body_nconsts"]
    tier = loops.JitLoopTier(len(cond.jaxpr.eqns) + len(body.jaxpr.eqns))

    def while_compiled(*args):
        budget = tier.budget()
        # (with no budget, _run_while builds the region programs only if there is no loop)
        test, step = (cond.region_program(), body.region_program()) if budget else (None, None)
        return _run_while(args, cond, body, ncc, nbc, budget, test, step, np, tier)
    return while_compiled


def _run_while(args, cond_jaxpr, body_jaxpr, ncc, nbc, budget, test, step, xp, tier=None):
    """The loop's packed output: `test` and `step` (args -> outputs) run per trip; after
    `budget` trips (None: never) the rest runs compiled when the loop has a lowering. The
    trips run by `test` and `step` are counted in `tier` (a loops.JitLoopTier) if given."""
    cc, bc, carry = _split(args, ncc, nbc)
    trips = 0
    while True:
        if trips == budget:
            loop = _compiled_while(cond_jaxpr, body_jaxpr, ncc, nbc)
            if loop is not None:
                carry = loop(cc, bc, carry)
                break
            test, step = cond_jaxpr.region_program(), body_jaxpr.region_program()
        if not bool(test(cc + carry)[0]):
            break
        carry = step(bc + carry)
        trips += 1
    if tier is not None:
        tier.count(min(trips, budget))
    return pack_arrays(carry, _carry_avals(body_jaxpr, nbc), xp)


def _while_abstract_eval(*avals, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts, checkpoint):
    cc, bc, carry = _split(avals, cond_nconsts, body_nconsts)
    carry_in = _carry_avals(body_jaxpr, body_nconsts)
    if _plain(body_jaxpr.in_avals) != _plain(bc + carry) or _plain(cond_jaxpr.in_avals) != _plain(cc + carry):
        raise FgradTypeError(f"while_loop: operands {describe_avals(avals)} do not match the staged cond and "
                             "body", doc="loop-carry-type")
    if _plain(body_jaxpr.out_avals) != carry_in:
        raise FgradTypeError(f"while_loop: the body takes the carry as {describe_avals(carry_in)} but returns "
                             f"{describe_avals(body_jaxpr.out_avals)}", doc="loop-carry-type")
    pred = cond_jaxpr.out_avals
    if len(pred) != 1 or pred[0].shape != () or pred[0].dtype != np.bool_:
        raise FgradTypeError(f"while_loop: cond returns {describe_avals(pred)}, not one boolean scalar",
                             doc="while-cond-output")
    return packed_aval(carry_in)


def _while_jvp(primals, tangents, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts, checkpoint):
    ncc, nbc = cond_nconsts, body_nconsts
    cc, bc, init = _split(primals, ncc, nbc)
    _, tbc, tinit = _split(tangents, ncc, nbc)
    K = len(init)
    avals = _carry_avals(body_jaxpr, nbc)
    b_nz = [i for i, t in enumerate(tbc) if t is not None]
    carry_f = [i for i in range(K) if is_float(avals[i].dtype)]
    params = dict(cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr, cond_nconsts=ncc, body_nconsts=nbc,
                  checkpoint=checkpoint)
    if not carry_f or (not b_nz and all(tinit[i] is None for i in carry_f)):
        return while_p.bind(*primals, **params), None
    n_t = len(b_nz)

    def body_jvp(*a):
        bv, tbv, carv, tcarv = a[:nbc], a[nbc:nbc + n_t], a[nbc + n_t:nbc + n_t + K], a[nbc + n_t + K:]

        def f(*d):
            b, c = list(bv), list(carv)
            for k, i in enumerate(b_nz):
                b[i] = d[k]
            for k, i in enumerate(carry_f):
                c[i] = d[n_t + k]
            return call(body_jaxpr, b + c)
        o, to = jvp(f, tuple([bv[i] for i in b_nz] + [carv[i] for i in carry_f]), tuple(tbv) + tuple(tcarv))
        return [*o, *[to[i] for i in carry_f]]
    ins = body_jaxpr.in_avals
    t_avals = [avals[i] for i in carry_f]
    st = stage(body_jvp, list(ins[:nbc]) + _plain([ins[i] for i in b_nz]) + list(ins[nbc:]) + t_avals, "while jvp")
    cond = _body_only(add_invars(cond_jaxpr, ncc + K, t_avals))
    leaves = bind_while(cond, st, cc, bc + [tbc[i] for i in b_nz],
                        init + [np.zeros(avals[i].shape, avals[i].dtype) if tinit[i] is None else tinit[i]
                                for i in carry_f], checkpoint)
    t_all: list = [None] * K
    for k, i in enumerate(carry_f):
        t_all[i] = leaves[K + k]
    # the primal output from its own loop, independent of the tangents (see scan's jvp)
    return while_p.bind(*primals, **params), _pack_tangents(t_all, avals)


def _while_batch(n, vals, dims, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts, checkpoint):
    ncc, nbc = cond_nconsts, body_nconsts
    cc, bc, init = _split(vals, ncc, nbc)
    dcc, dbc, dinit = _split(dims, ncc, nbc)
    K = len(init)
    carry_b, _ = carry_fixpoint(body_jaxpr.jaxpr, nbc, K, [d is not None for d in dbc + dinit])
    pred_b = batched_outputs(cond_jaxpr.jaxpr, [d is not None for d in dcc] + carry_b)[0]
    if pred_b:  # lanes finish at different times: every carry is selected per lane
        carry_b = [True] * K
    cc = [_to_front(n, v, d, False) for v, d in zip(cc, dcc)]
    bc = [_to_front(n, v, d, False) for v, d in zip(bc, dbc)]
    init = [_to_front(n, v, d, b) for v, d, b in zip(init, dinit, carry_b)]
    c_axes = [None if d is None else 0 for d in dcc]
    b_axes = [None if d is None else 0 for d in dbc]
    k_axes = [0 if b else None for b in carry_b]
    cavals = [_batched_aval(n, a, ax) for a, ax in zip(cond_jaxpr.in_avals[:ncc], c_axes)]
    bavals = [_batched_aval(n, a, ax) for a, ax in zip(body_jaxpr.in_avals[:nbc], b_axes)]
    kavals = [_batched_aval(n, a, ax) for a, ax in zip(body_jaxpr.in_avals[nbc:], k_axes)]

    def body_v(*a):
        return vmap(lambda *e: call(body_jaxpr, list(e)), in_axes=tuple(b_axes + k_axes), out_axes=k_axes,
                    axis_size=n)(*a)

    def cond_v(*a):
        return vmap(lambda *e: call(cond_jaxpr, list(e))[0], in_axes=tuple(c_axes + k_axes),
                    out_axes=0 if pred_b else None, axis_size=n)(*a)
    if not pred_b:
        leaves = bind_while(stage(cond_v, cavals + kavals, "while vmap"), stage(body_v, bavals + kavals, "while vmap"),
                            cc, bc, init, checkpoint)
    else:
        def masked(*a):
            cv, bv, c = a[:ncc], a[ncc:ncc + nbc], a[ncc + nbc:]
            pred = cond_v(*cv, *c)
            return [select(broadcast_in_dim(pred, tuple(fnp.shape(x)), (0,)), x, y)
                    for x, y in zip(body_v(*bv, *c), c)]
        leaves = bind_while(stage(lambda *a: fnp.any(cond_v(*a)), cavals + kavals, "while vmap"),
                            stage(masked, cavals + bavals + kavals, "while vmap"), cc, cc + bc, init, checkpoint)
    front = [_to_front(n, v, 0 if b else None, True) for v, b in zip(leaves, carry_b)]
    return pack_batched(n, front, _carry_avals(body_jaxpr, nbc)), 0


# --- reverse mode ---------------------------------------------------------------------------

class _Residuals(NamedTuple):
    """What the forward half keeps for one application's VJP."""
    trips: int           # the trip count (the largest over vmap's lanes)
    segment: int         # steps between snapshots
    masked: bool         # lanes with fewer trips: each step is masked by the lane's predicate
    snapshots: list      # the carry entering each full segment, stacked (one array per leaf)
    last: list           # the carry entering the remaining trips % segment steps


def _concrete(x):
    """The concrete array behind `x` through every trace, all of vmap's lanes included;
    ConcretizationError when it is abstract (staged)."""
    while isinstance(x, Tracer):
        x = x.val if isinstance(x, BatchTracer) else x._trace.concrete(x)
    return x


def _abstract(values: Sequence) -> bool:
    for v in values:
        try:
            _concrete(v)
        except ConcretizationError:
            return True
    return False


def _trip_count(cond_jaxpr, body_jaxpr, ncc, nbc, cc, bc, init) -> tuple[int, bool]:
    """(the most trips any lane makes, whether lanes differ): the loop rerun with a counter,
    on the operands without their derivatives (so it costs one forward pass)."""
    counter = ShapedArray((), np.int64)
    cond = _body_only(add_invars(cond_jaxpr, ncc, [counter]))
    ins = body_jaxpr.in_avals
    body = stage(lambda *a: [fnp.add(a[nbc], 1), *call(body_jaxpr, list(a[:nbc]) + list(a[nbc + 1:]))],
                 list(ins[:nbc]) + [counter] + list(ins[nbc:]), "while vjp")
    sg = [stop_gradient(x) for x in list(cc) + list(bc) + list(init)]
    count = bind_while(cond, body, sg[:ncc], sg[ncc:ncc + nbc], [np.zeros((), np.int64)] + sg[ncc + nbc:])[0]
    counts = _concrete(count)
    most, least = int(counts.max()), int(counts.min())
    return most, least != most


def _step(cond_jaxpr, body_jaxpr, ncc, nbc, masked, cc, bc, needs_bc) -> tuple[Body, list, list]:
    """One trip as a scan body (consts, carry -> carry), its consts, and which consts need a
    cotangent. Masked, a lane whose predicate is false keeps its carry."""
    if not masked:
        return body_jaxpr, list(bc), list(needs_bc)
    ins = list(cond_jaxpr.in_avals[:ncc]) + list(body_jaxpr.in_avals)

    def step(*a):
        cv, bv, c = a[:ncc], a[ncc:ncc + nbc], a[ncc + nbc:]
        pred = call(cond_jaxpr, list(cv) + list(c))[0]
        return [select(pred, x, y) for x, y in zip(call(body_jaxpr, list(bv) + list(c)), c)]
    st = stage(step, ins, "while vjp")
    consts = st.consts + list(cc) + list(bc)
    return st.body, consts, [False] * (len(st.consts) + ncc) + list(needs_bc)


def _segment(trips: int, checkpoint: int | None) -> int:
    if checkpoint is not None:
        return checkpoint
    return math.isqrt(trips - 1) + 1 if trips > 1 else 1  # ceil(sqrt(trips))


def _while_vjp_fwd(*primals, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts, checkpoint):
    ncc, nbc = cond_nconsts, body_nconsts
    if _abstract(primals):  # the trip count is known only when the program runs: see _while_vjp
        return while_p.bind(*primals, cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr, cond_nconsts=ncc,
                            body_nconsts=nbc, checkpoint=checkpoint), None
    cc, bc, init = _split(primals, ncc, nbc)
    K = len(init)
    avals = _carry_avals(body_jaxpr, nbc)
    trips, masked = _trip_count(cond_jaxpr, body_jaxpr, ncc, nbc, cc, bc, init)
    step, consts, _ = _step(cond_jaxpr, body_jaxpr, ncc, nbc, masked, cc, bc, [False] * nbc)
    s = _segment(trips, checkpoint)
    m, r = divmod(trips, s)
    carry, snapshots = list(init), []
    if m:  # m segments of s steps, keeping the carry entering each
        nc = len(consts)
        outer = stage(lambda *a: [*bind_scan(step, a[:nc], a[nc:], [], s), *a[nc:]],
                      _plain(step.in_avals), "while vjp")
        leaves = bind_scan(outer.body, outer.consts + consts, carry, [], m)
        carry, snapshots = leaves[:K], leaves[K:]
    last = carry
    if r:
        carry = bind_scan(step, consts, carry, [], r)
    return pack(carry, avals), _Residuals(trips, s, masked, snapshots, last)


def _while_vjp(needs, ct, out, *primals, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts, checkpoint,
               residuals=None):
    ncc, nbc = cond_nconsts, body_nconsts
    params = dict(cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr, cond_nconsts=ncc, body_nconsts=nbc,
                  checkpoint=checkpoint)
    if residuals is None:  # no recorder ran the forward half for this node: it runs here
        if _abstract(primals):
            return _deferred_vjp(needs, ct, primals, params)
        residuals = _while_vjp_fwd(*primals, **params)[1]
    cc, bc, init = _split(primals, ncc, nbc)
    _, needs_bc, needs_init = _split(needs, ncc, nbc)
    K = len(init)
    avals = _carry_avals(body_jaxpr, nbc)
    carry_f = [i for i in range(K) if is_float(avals[i].dtype)]
    result: list = [None] * len(primals)
    if not carry_f:
        return result
    step, consts, needs_c = _step(cond_jaxpr, body_jaxpr, ncc, nbc, residuals.masked, cc, bc, needs_bc)
    nc = len(consts)
    c_avals = _plain(step.in_avals[:nc])
    const_d = [i for i in range(nc) if needs_c[i] and is_float(c_avals[i].dtype)]
    ct_c: list = unpack_leaves(ct, avals)
    acc: dict = {}
    s = residuals.segment
    m, r = divmod(residuals.trips, s)
    if r:  # the last, partial segment first
        carries = bind_scan(carries_body(step, nc, K), consts, residuals.last, [], r)[K:]
        d_c, ct_c, _ = scan_transpose(step, nc, K, r, False, consts, [], carries, ct_c, [], needs_c, [])
        acc = {i: d_c[i] for i in const_d}
    if m:  # then the full segments, last to first: a reverse scan over their snapshots
        n_d, n_f = len(const_d), len(carry_f)

        def segment_vjp(*a):
            cv, accv, ctc, snap = a[:nc], a[nc:nc + n_d], a[nc + n_d:nc + n_d + n_f], a[nc + n_d + n_f:]
            seg = bind_scan(carries_body(step, nc, K), cv, snap, [], s)[K:]
            full: list = [None] * K
            for k, i in enumerate(carry_f):
                full[i] = ctc[k]
            dc, di, _ = scan_transpose(step, nc, K, s, False, cv, [], seg, full, [], needs_c, [])
            return [*[fnp.add(x, dc[i]) for x, i in zip(accv, const_d)], *[di[i] for i in carry_f]]
        st = stage(segment_vjp, c_avals + [c_avals[i] for i in const_d] + [avals[i] for i in carry_f] + avals,
                   "while vjp")
        leaves = bind_scan(st.body, st.consts + consts,
                           [acc.get(i, np.zeros(c_avals[i].shape, c_avals[i].dtype)) for i in const_d]
                           + [ct_c[i] for i in carry_f], residuals.snapshots, m, reverse=True)
        acc = dict(zip(const_d, leaves[:n_d]))
        ct_c = [None] * K
        for k, i in enumerate(carry_f):
            ct_c[i] = leaves[n_d + k]
    offset = nc - nbc  # the body's consts are the step's last ones
    for i in range(nbc):
        if i + offset in acc:
            result[ncc + i] = acc[i + offset]
    for i in carry_f:
        if needs_init[i]:
            result[ncc + nbc + i] = ct_c[i]
    return result


def _deferred_vjp(needs, ct, primals: Sequence, params: dict) -> list:
    """The VJP on abstract values (grad inside jit, or of a while_loop in a staged body): one
    `deferred` equation, which runs this rule when the program runs on concrete values."""
    idx = [i for i, n in enumerate(needs) if n and is_float(aval_of(primals[i]).dtype)]
    result: list = [None] * len(primals)
    if not idx:
        return result

    def fn(*a):
        cts = _while_vjp(needs, a[-1], None, *a[:-1], **params)
        return [cts[i] for i in idx]
    for i, c in zip(idx, defer(fn, list(primals) + [ct], [aval_of(primals[i]) for i in idx], "while_loop vjp")):
        result[i] = c
    return result


while_p.def_impl(_while_impl)
while_p.def_abstract_eval(_while_abstract_eval)
while_p.def_jvp(_while_jvp)
while_p.def_vjp_fwd(_while_vjp_fwd)
while_p.def_vjp(_while_vjp)
while_p.def_saves(output=False)  # the VJP reads the inputs and residuals, never the output
while_p.def_batch(_while_batch)
loops.JIT_RULES[while_p] = _while_jit


# --- the public functions ---------------------------------------------------------------------

def _check_checkpoint(checkpoint) -> int | None:
    if checkpoint is None:
        return None
    if isinstance(checkpoint, (bool, np.bool_)) or not isinstance(checkpoint, (int, np.integer)) or checkpoint < 1:
        raise FgradValueError(f"while_loop: checkpoint must be None (about sqrt(trips) steps per segment) or a "
                              f"positive int (the steps per segment), got {checkpoint!r:.40}",
                              doc="lax-arguments")
    return int(checkpoint)


def while_loop(cond_fun: Callable, body_fun: Callable, init_val: Any, *, checkpoint: int | None = None) -> Any:
    """Repeat `val = body_fun(val)` while `cond_fun(val)` is true, from `init_val` (JAX's
    `lax.while_loop`)::

        def while_loop(cond_fun, body_fun, init_val):
            val = init_val
            while cond_fun(val):
                val = body_fun(val)
            return val

    `cond_fun` returns a boolean scalar; the carry is a pytree of arrays that keeps its
    structure, shapes and dtypes. Under jit the loop is one `while` equation with both
    functions nested; under vmap a batched predicate runs until every example is done (the
    finished ones keep their values).

    Unlike JAX, reverse mode works (fgrad.grad of a Newton solver written with while_loop):
    the trip count is counted when the loop runs, then the loop is rerun as segments of
    known length. `checkpoint` is the number of steps between saved carries: None (about
    sqrt(trips), so memory is O(sqrt(trips)) carries for one extra forward pass), or an int
    (1 saves every carry). Where the values are abstract (jit(grad(f)), or a while_loop in
    the body of a scan or cond under grad) the VJP is staged as one `deferred` equation
    that counts and differentiates when the program runs; its derivatives are deferred the
    same way, so every transform still composes. Under vmap, reverse mode reruns every lane
    for the largest trip count with finished lanes masked: as with jnp.where, a body that is
    NaN or infinite on a finished lane's values gives NaN cotangents.
    
    Args:
        cond_fun: ``cond_fun(val) -> bool scalar``.
        body_fun: ``body_fun(val) -> val``, keeping the carry's structure, shapes and dtypes.
        init_val: the initial carry.
        checkpoint: steps between saved carries in reverse mode (see above).

    Returns:
        The final carry.

    Example:
        >>> import fgrad
        >>> import fgrad.numpy as jnp
        >>> from fgrad import lax
        >>> print(lax.while_loop(lambda i: i < 10, lambda i: i * 2, 1))
        16
        >>> def sqrt(a):  # Newton's method; grad goes through the loop
        ...     step = lambda y: y - (y * y - a) / (2 * y)
        ...     return lax.while_loop(lambda y: jnp.abs(y * y - a) > 1e-12, step, a)
        >>> print(round(float(fgrad.grad(sqrt)(4.0)), 6))
        0.25
    """
    fname = "while_loop"
    if not (callable(cond_fun) and callable(body_fun)):
        raise FgradTypeError("while_loop: cond_fun and body_fun must be callables: "
                             "while_loop(cond_fun, body_fun, init_val)", doc="lax-arguments")
    checkpoint = _check_checkpoint(checkpoint)
    leaves, tree = tree_flatten(init_val)
    ops, avals = operand_values(leaves, "while_loop init_val", fname)
    K = len(avals)

    def make(out_casts):
        def body(*ls):
            out = body_fun(unflatten(tree, ls))
            out_leaves, t = tree_flatten(out)
            return unflatten(t, cast_leaves(out_leaves, out_casts)) if len(out_leaves) == K else out
        return body
    body, avals = stage_carry_body(fname, "body_fun", make, avals, tree,
                                   lambda st: CarryView(st.out_tree, st.out_avals, st.out_weak, st.out_paths))
    ops = [cast_to(v, a.dtype) for v, a in zip(ops, avals)]
    cond = stage(lambda *ls: cond_fun(unflatten(tree, ls)), avals, fname)
    if len(cond.out_avals) != 1 or cond.out_avals[0].shape != () or cond.out_avals[0].dtype != np.bool_:
        got = describe_avals(cond.out_avals) if len(cond.out_avals) != 1 else cond.out_avals[0].str_short()
        raise FgradTypeError(
            f"while_loop: cond_fun must return one boolean scalar, got {got}. Compare to get one "
            "(e.g. `i < n`, `fgrad.numpy.linalg.norm(r) > tol`), reducing arrays with "
            "fgrad.numpy.any/all.", doc="while-cond-output")
    if K == 0:
        return unflatten(tree, [])
    return unflatten(tree, bind_while(cond, body, [], [], ops, checkpoint))


def _concrete_bound(x):
    """A bound's Python int when it is known now (not traced), else None."""
    if isinstance(x, Tracer):
        return None
    if isinstance(x, (bool, np.bool_)):
        return None
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, np.ndarray) and x.shape == () and x.dtype.kind in "iu":
        return int(x)
    return None


def _checked_body(body_fun: Callable, counter: ShapedArray, init_val: Any) -> tuple:
    """(init_val, body): `init_val` once `body_fun(i, val)` is checked to keep the carry's
    types, its Python numbers cast to the dtypes the body gives them (as in JAX): the loop's
    own checks would name the (i, val) carry fori_loop builds, not the user's. `body(i, val)`
    replays the body staged for that check, so the user's Python runs once, as in JAX."""
    leaves, tree = tree_flatten(init_val)
    ops, avals = operand_values(leaves, "fori_loop init_val", "fori_loop")
    K = len(avals)

    def make(out_casts):
        def body(*ls):
            out_leaves, t = tree_flatten(body_fun(ls[K], unflatten(tree, ls[:K])))
            return unflatten(t, cast_leaves(out_leaves, out_casts) if len(out_leaves) == K else out_leaves)
        return body
    staged, new = stage_carry_body("fori_loop", "body_fun", make, avals + [counter],
                                   tree, lambda st: CarryView(st.out_tree, st.out_avals, st.out_weak, st.out_paths))

    def body(i, val):
        out = call(staged.body, list(staged.consts) + tree_flatten(val)[0] + [i])
        return unflatten(staged.out_tree, out)
    if all(a.dtype == b.dtype for a, b in zip(avals, new)):
        return init_val, body
    return unflatten(tree, [cast_to(v, a.dtype) for v, a in zip(ops, new)]), body


def fori_loop(lower: Any, upper: Any, body_fun: Callable, init_val: Any, *, unroll: int | bool | None = None) -> Any:
    """`val = body_fun(i, val)` for i in range(lower, upper), from `init_val` (JAX's
    `lax.fori_loop`).

    With concrete integer bounds (Python ints, or NumPy integers) the loop is a scan of
    upper - lower steps, so every transform, reverse mode included, sees a loop of static
    length (as in JAX); `unroll` is passed to that scan. With traced bounds it is a
    while_loop (reverse mode then needs concrete values, see while_loop). `i` has the bounds'
    dtype; Python-int bounds give a weakly typed int64, which combines with float32 arrays
    as a Python int would.

    Args:
        lower: the first index (int).
        upper: one past the last index (int).
        body_fun: ``body_fun(i, val) -> val``.
        init_val: the initial carry.
        unroll: passed to scan for concrete bounds.

    Returns:
        The final carry.

    Example:
        >>> from fgrad import lax
        >>> print(lax.fori_loop(0, 4, lambda i, acc: acc + i, 0))
        6
    """
    if not callable(body_fun):
        raise FgradTypeError("fori_loop: body_fun must be callable: fori_loop(lower, upper, body_fun, init_val)",
                             doc="lax-arguments")
    lo, hi = _concrete_bound(lower), _concrete_bound(upper)
    raw = [plain_value(b, "fgrad.lax.fori_loop", f"fori_loop {w}") if type(b) not in PY_NUMBERS else b
           for b, w in ((lower, "lower"), (upper, "upper"))]
    typed = [aval_of(b).dtype for b in raw if type(b) not in PY_NUMBERS]
    counter = ShapedArray((), np.result_type(*typed)) if typed else weak_aval(ShapedArray((), np.int64))
    init_val, body_fun = _checked_body(body_fun, counter, init_val)
    if lo is not None and hi is not None:
        # Python-int bounds: a Python int counter (weakly typed, as in a Python loop)
        start = np.asarray(lo, np.result_type(*typed)) if typed else lo

        def step(carry, _):
            i, val = carry
            return (i + 1, body_fun(i, val)), None
        (_, out), _ = scan(step, (start, init_val), None, length=max(hi - lo, 0),
                           unroll=1 if unroll is None else unroll)
        return out
    if unroll is not None:
        raise FgradValueError("fori_loop: unroll needs concrete bounds (Python ints): with traced bounds the "
                              "loop is a while_loop, which has no fixed length to unroll", doc="lax-arguments")
    lo_v = as_value(lower, "fori_loop lower")
    hi_v = as_value(upper, "fori_loop upper")
    for v, what in ((lo_v, "lower"), (hi_v, "upper")):
        a = aval_of(v)
        if a.shape != () or a.dtype.kind not in "iu":
            raise FgradTypeError(f"fori_loop: {what} must be a scalar integer, got {a.str_short()}",
                                 doc="lax-arguments")
    dtype = np.result_type(*typed) if typed else np.dtype(np.int64)
    lo_v, hi_v = cast_to(lo_v, dtype), cast_to(hi_v, dtype)

    def body(carry):
        i, val = carry
        return i + 1, body_fun(i, val)
    return while_loop(lambda c: c[0] < hi_v, body, (lo_v, init_val))[1]
