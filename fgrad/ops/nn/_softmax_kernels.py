"""Numba kernels of float32 log_softmax and its backward along the last axis of a C-contiguous
[N, C] array (fgrad/ops/nn/dense.py imports this module on a float32 input's first call, so
programs without one do not import Numba).

NumPy makes five whole-array passes for the forward (max, subtract, exp, sum, subtract) and
four for the backward, each a separate loop over memory; these make two over each row while it
is in L1. The exp is this module's own (`expf`), written without calls so that LLVM vectorises
the loop around it: NumPy's exp is a call per array, Numba's math.exp a call per element.

Sums and maxima along a row go into LANES partial results (element j into lane j % LANES,
combined at the end in a fixed tree), which a vector loop computes without reassociating
anything; the order of every operation is in this source, so the bits depend on neither the
machine's vector width nor timing. No fastmath and no FMA contraction, for the same reason.
"""
from __future__ import annotations

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core.extending import intrinsic

LANES = 16

# Cody-Waite reduction x = k ln2 + r (_LN2_HI has few enough bits that k * _LN2_HI is exact for
# |k| < 2^9) and Cephes' degree-7 minimax polynomial of exp on |r| <= ln2 / 2 (within 2 float32
# ulp of exp over the whole float32 range, subnormal results included).
_LOG2E = np.float32(1.44269504088896341)
_SHIFT = np.float32(12582912.0)  # 1.5 * 2^23: (v + _SHIFT) - _SHIFT rounds v to an integer
_LN2_HI = np.float32(0.693359375)
_LN2_LO = np.float32(-2.12194440e-4)
_P0, _P1, _P2 = np.float32(1.9875691500e-4), np.float32(1.3981999507e-3), np.float32(8.3334519073e-3)
_P3, _P4, _P5 = np.float32(4.1665795894e-2), np.float32(1.6666665459e-1), np.float32(5.0000001201e-1)
_LO, _HI = np.float32(-104.0), np.float32(89.0)  # exp rounds to 0 below _LO, to inf above _HI
_ONE = np.float32(1.0)
_ZERO = np.float32(0.0)


@intrinsic
def _scale(typingctx, p, k):
    """p 2^k for a float32 p and an integral float32 -150 <= k <= 128, as two factors 2^(k >> 1)
    and 2^(k - (k >> 1)) (each a normal float32 made by setting its exponent field with a bit
    cast: vectorisable, unlike ldexp), so that a subnormal result is rounded once. In 32-bit
    integers throughout: a 64-bit detour would halve the vector lanes."""
    def codegen(context, builder, sig, args):
        i32 = ir.IntType(32)
        ki = builder.fptosi(args[1], i32)
        k1 = builder.ashr(ki, ir.Constant(i32, 1))
        k2 = builder.sub(ki, k1)

        def pow2(e):
            e = builder.shl(builder.add(e, ir.Constant(i32, 127)), ir.Constant(i32, 23))
            return builder.bitcast(e, ir.FloatType())
        return builder.fmul(builder.fmul(args[0], pow2(k1)), pow2(k2))
    return types.float32(types.float32, types.float32), codegen


@numba.njit(inline="always", error_model="numpy", cache=True)
def expf(x):
    """exp of a float32: 2^k p(r), the power of two applied as two factors so that a
    subnormal result is rounded once, and a NaN passes through."""
    c = x if x > _LO else _LO  # (a NaN too: restored below)
    c = c if c < _HI else _HI
    k = (c * _LOG2E + _SHIFT) - _SHIFT
    r = (c - k * _LN2_HI) - k * _LN2_LO
    p = ((((_P0 * r + _P1) * r + _P2) * r + _P3) * r + _P4) * r + _P5
    p = (p * (r * r) + r) + _ONE
    res = _scale(p, k)
    return res if x == x else x


def _lane_reduction(name, combine, init):
    """An intrinsic f(v) -> float32 reducing a 1-D C-contiguous float32 array: element j goes
    into lane j % LANES of a <LANES x float> accumulator (one vector operation per block of
    LANES elements), the lanes are combined as a pairwise tree (lane i with lane i + h for h =
    LANES / 2, ..., 1), then the elements after the last whole block, in order. Written as
    vector IR because LLVM neither vectorises a scalar loop's reduction without reassociating
    it nor keeps an array of lanes in registers; a machine with narrower vectors splits these
    into several registers and computes the same lanes, so the bits do not depend on the
    vector width. `combine(builder, acc, v)` is the lane operation, `init` the accumulator's
    first value."""
    def impl(typingctx, v):
        if not (isinstance(v, types.Array) and v.dtype == types.float32 and v.ndim == 1 and v.layout == "C"):
            return None

        def codegen(context, builder, sig, args):
            f32, i32, i64 = ir.FloatType(), ir.IntType(32), ir.IntType(64)
            vec = ir.VectorType(f32, LANES)
            arr = context.make_array(sig.args[0])(context, builder, args[0])
            data, n = arr.data, arr.nitems
            nb = builder.udiv(n, ir.Constant(i64, LANES))
            fn, pre = builder.function, builder.block
            loop, lanes_bb = fn.append_basic_block(f"{name}.blocks"), fn.append_basic_block(f"{name}.lanes")
            acc0 = ir.Constant(vec, [init] * LANES)
            builder.cbranch(builder.icmp_unsigned(">", nb, ir.Constant(i64, 0)), loop, lanes_bb)
            builder.position_at_end(loop)
            b, acc = builder.phi(i64), builder.phi(vec)
            ptr = builder.bitcast(builder.gep(data, [builder.mul(b, ir.Constant(i64, LANES))]), vec.as_pointer())
            acc_next = combine(builder, acc, builder.load(ptr, align=4))
            b_next = builder.add(b, ir.Constant(i64, 1))
            b.add_incoming(ir.Constant(i64, 0), pre)
            b.add_incoming(b_next, loop)
            acc.add_incoming(acc0, pre)
            acc.add_incoming(acc_next, loop)
            builder.cbranch(builder.icmp_unsigned("<", b_next, nb), loop, lanes_bb)
            builder.position_at_end(lanes_bb)
            cur = builder.phi(vec)
            cur.add_incoming(acc0, pre)
            cur.add_incoming(acc_next, loop)
            h = LANES
            while h > 1:
                h //= 2
                lo = builder.shuffle_vector(cur, cur, ir.Constant(ir.VectorType(i32, h), list(range(h))))
                hi = builder.shuffle_vector(cur, cur, ir.Constant(ir.VectorType(i32, h), list(range(h, 2 * h))))
                cur = combine(builder, lo, hi)
            total = builder.extract_element(cur, ir.Constant(i32, 0))
            start = builder.mul(nb, ir.Constant(i64, LANES))
            tail_pre = builder.block
            tail, done = fn.append_basic_block(f"{name}.tail"), fn.append_basic_block(f"{name}.done")
            builder.cbranch(builder.icmp_unsigned("<", start, n), tail, done)
            builder.position_at_end(tail)
            j, t = builder.phi(i64), builder.phi(f32)
            t_next = combine(builder, t, builder.load(builder.gep(data, [j]), align=4))
            j_next = builder.add(j, ir.Constant(i64, 1))
            j.add_incoming(start, tail_pre)
            j.add_incoming(j_next, tail)
            t.add_incoming(total, tail_pre)
            t.add_incoming(t_next, tail)
            builder.cbranch(builder.icmp_unsigned("<", j_next, n), tail, done)
            builder.position_at_end(done)
            result = builder.phi(f32)
            result.add_incoming(total, tail_pre)
            result.add_incoming(t_next, tail)
            return result
        return types.float32(v), codegen
    impl.__name__ = name
    return intrinsic(impl)


def _add(builder, a, b):
    return builder.fadd(a, b)


def _max(builder, a, b):
    # a NaN may be skipped (the comparison is false): callers let it reach a sum instead
    return builder.select(builder.fcmp_ordered(">", b, a), b, a)


row_sum = _lane_reduction("row_sum", _add, 0.0)
row_max = _lane_reduction("row_max", _max, float("-inf"))


@numba.njit(cache=True, nogil=True, error_model="numpy")
def log_softmax_rows(x, out):
    """out[i] = log_softmax(x[i]) for each row of float32 x [N, C] (C >= 1): s = x - m with m
    the row's maximum (0 where that is not finite), then s - log(sum(exp(s)))."""
    N, C = x.shape
    e = np.empty(C, np.float32)
    for n in range(N):
        xr, orow = x[n], out[n]
        m = row_max(xr)
        if not (m - m == _ZERO):  # an infinite maximum (or none: all NaN): subtract 0, as NumPy's path
            m = _ZERO
        for j in range(C):
            s = xr[j] - m
            orow[j] = s
            e[j] = expf(s)
        # (a NaN that the maximum skipped is in e, so the row is NaN; log 0 = -inf, so a row of
        # -inf is NaN too, as in NumPy's path)
        lse = np.log(row_sum(e))
        for j in range(C):
            orow[j] = orow[j] - lse


@numba.njit(cache=True, nogil=True, error_model="numpy")
def log_softmax_grad_rows(ct, out, g):
    """g[i] = ct[i] - exp(out[i]) * sum(ct[i]) for each row of float32 [N, C] arrays (the
    transpose of log_softmax's derivative at output `out`)."""
    N, C = ct.shape
    for n in range(N):
        cr, orow, grow = ct[n], out[n], g[n]
        total = row_sum(cr)
        for j in range(C):
            grow[j] = cr[j] - expf(orow[j]) * total
