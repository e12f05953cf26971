"""A computation deferred until its operands are concrete: the `deferred` primitive.

while_loop's reverse mode needs the trip count, known only once the loop runs. Where the
values are abstract (grad inside jit, or a while_loop inside a scan or cond body, whose VJP is
staged) its VJP is bound as one `deferred` equation instead: the staged program keeps it,
and its impl runs the VJP when the program runs on concrete values. Its own rules defer the
same way (the jvp, vjp and vmap of the function, run at that time), so it composes with
every transform like any primitive.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from .._packing import pack, pack_arrays, packed_aval, unpack_leaves
from ..api import jvp, vjp, vmap
from ..core.avals import ShapedArray, is_float
from ..core.primitive import Primitive
from ..core.trace import EVAL_TRACE, aval_of

deferred_p = Primitive("deferred")


class Deferred:
    """The param of one deferred computation: `fn(*operands) -> list of arrays` (None for
    zeros) with output avals `out_avals`. Immutable; compares by identity."""

    __slots__ = ("fn", "out_avals", "name")

    def __init__(self, fn: Callable, out_avals: Sequence[ShapedArray], name: str) -> None:
        object.__setattr__(self, "fn", fn)
        object.__setattr__(self, "out_avals", tuple(ShapedArray(a.shape, a.dtype) for a in out_avals))
        object.__setattr__(self, "name", name)

    def __setattr__(self, name: str, value) -> None:
        raise AttributeError("a deferred computation is immutable: jit replays it")

    def __repr__(self) -> str:
        return self.name

    def outputs(self, args: Sequence) -> list:
        """fn's outputs, zeros for None."""
        outs = list(self.fn(*args))
        return [np.zeros(a.shape, a.dtype) if o is None else o for o, a in zip(outs, self.out_avals)]


def defer(fn: Callable, args: Sequence, out_avals: Sequence[ShapedArray], name: str) -> list:
    """`fn(*args)` (a list of arrays of `out_avals`, None for zeros), bound as one `deferred`
    equation: run now if the values are concrete, else when the staged program runs."""
    call = Deferred(fn, out_avals, name)
    return unpack_leaves(deferred_p.bind(*args, call=call), call.out_avals)


def _impl(*args, call: Deferred, xp):
    return pack_arrays(EVAL_TRACE.run(call.outputs, (args,)), call.out_avals, xp)


def _abstract_eval(*avals, call: Deferred):
    return packed_aval(call.out_avals)


def _jvp(primals, tangents, *, call: Deferred):
    n = len(primals)
    nz = [i for i, t in enumerate(tangents) if t is not None and is_float(aval_of(primals[i]).dtype)]
    float_out = [k for k, a in enumerate(call.out_avals) if is_float(a.dtype)]
    out = deferred_p.bind(*primals, call=call)
    if not nz or not float_out:
        return out, None

    def fn_jvp(*a):
        def f(*d):
            full = list(a[:n])
            for k, i in enumerate(nz):
                full[i] = d[k]
            return call.outputs(full)
        _, t_out = jvp(f, tuple(a[i] for i in nz), tuple(a[n:]))
        return [t_out[k] for k in float_out]
    tangents_out = defer(fn_jvp, list(primals) + [tangents[i] for i in nz],
                         [call.out_avals[k] for k in float_out], f"jvp of {call.name}")
    if len(call.out_avals) == 1:
        return out, tangents_out[0]
    t_all: list = [None] * len(call.out_avals)
    for k, t in zip(float_out, tangents_out):
        t_all[k] = t
    return out, pack(t_all, call.out_avals, zero_ints=True)


def _vjp(needs, ct, out, *primals, call: Deferred):
    n = len(primals)
    d = [i for i in range(n) if needs[i] and is_float(aval_of(primals[i]).dtype)]
    if not d or not any(is_float(a.dtype) for a in call.out_avals):
        return [None] * n

    def fn_vjp(*a):
        def f(*dv):
            full = list(a[:n])
            for k, i in enumerate(d):
                full[i] = dv[k]
            return pack(call.outputs(full), call.out_avals)
        _, f_vjp = vjp(f, *[a[i] for i in d])
        return list(f_vjp(a[n]))
    cts = defer(fn_vjp, list(primals) + [ct], [aval_of(primals[i]) for i in d], f"vjp of {call.name}")
    result: list = [None] * n
    for i, c in zip(d, cts):
        result[i] = c
    return result


def _batch(n, vals, dims, *, call: Deferred):
    packed = packed_aval(call.out_avals)

    def fn_vmap(*a):
        return [vmap(lambda *e: pack(call.outputs(e), call.out_avals), in_axes=tuple(dims), axis_size=n)(*a)]
    (out,) = defer(fn_vmap, vals, [ShapedArray((n,) + tuple(packed.shape), packed.dtype)], f"vmap of {call.name}")
    return out, 0


deferred_p.def_impl(_impl)
deferred_p.def_abstract_eval(_abstract_eval)
deferred_p.def_jvp(_jvp)
deferred_p.def_vjp(_vjp)
deferred_p.def_batch(_batch)
