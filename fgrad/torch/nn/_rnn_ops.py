"""The recurrence of RNN, LSTM and GRU layers as two primitives: `rnn_scan` (a whole layer
direction over time) and `rnn_scan_bwd` (its vector-Jacobian product).

Why primitives: composed of per-step ops, a layer costs ~15 bound ops per time step, and
every step's slice of the input projection xw[t] pulls back to a zero-padded array of all of
xw, so the backward pass of T steps moved O(T^2) memory. The scan's impl runs the loop in
NumPy (one GEMM and a few in-place ufuncs per step, as PyTorch's native kernels do) and its
VJP is another such loop (BPTT) whose weight gradients are one GEMM over all steps.

Derivatives of every order: `rnn_scan`'s VJP is `rnn_scan_bwd`, and everything else -- the
JVP of `rnn_scan`, both derivatives of `rnn_scan_bwd` -- differentiates `_scan_composite`,
the same recurrence written with fgrad ops (each step through `cell_math`, which RNNCell,
LSTMCell and GRUCell use too). So `create_graph`, `hessian` and `jvp` work through a layer,
at the cost of the unrolled graph only where a second derivative is asked for.

The output holds, per step and row, the new state and the gate activations the backward pass
reads (they are outputs, not hidden residuals, so every trace keeps them, and their cotangents
are honoured):
    RNN_TANH/RNN_RELU  [h]                      width H
    LSTM               [h, c, i, f, g, o]       width Hr + 5H (Hr = proj_size or H)
    GRU                [h, r, z, n, hn]         width 5H (hn = W_hn h_prev + b_hn)
Rows with `lengths[b] <= t` (packed sequences) are idle at step t: their state is carried
unchanged and their activations are 0, so the last processed step holds every row's final
state, in both directions.

Inputs, in order: xw [T, B, G] (x @ W_ih^T + b_ih), h0 [B, Hr], c0 [B, H] (LSTM), w_hh [G, Hr],
b_hh [G] (has_bias), w_hr [Hr, H] (LSTM with has_proj). G = H, 4H or 3H by mode.

vmap folds the mapped axis into the rows B (rows are independent) unless the weights are
mapped too; rnn_scan_bwd loops (per-example weight gradients). On the CPU the element-wise
part of an LSTM step's backward is one Numba kernel (~25 ufunc calls otherwise), and in
float32 so is its forward (_lstm_kernels.py). The per-step GEMMs (h W_hh^T, da W_hh and the
projection's) are oneDNN's matmul primitive in float32 when its wheel is installed, NumPy's
matmul otherwise (`_times`).

These primitives sit in fgrad.torch.nn, not fgrad.ops, because their higher derivatives are
fgrad.api's jvp/vjp of the composite, and fgrad.ops is below fgrad.api in the layering.
"""
from __future__ import annotations

import warnings
from typing import Any, Sequence

import numpy as np

from ... import numpy as fnp
from ...api import jvp as _api_jvp
from ...api import vjp as _api_vjp
from ...core.avals import ShapedArray, is_float
from ...core.errors import FgradTypeError, FgradValueError, ShapeError
from ...core.primitive import Primitive
from ...core.rules import shape_of
from ...core.trace import aval_of
from ...interpreters.compile.kernels import prefer_wide_vectors
from ...extend import lax as xlax
from ...extend import nn as nnops
from ...extend.nn import onednn
from ...extend.batching import loop_batch
from ...extend.lax import broadcast_in_dim, concatenate, dot_general, move_axis, reshape
from ...extend.lax import slice as _slice

MODES = ("RNN_TANH", "RNN_RELU", "LSTM", "GRU")
_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def gate_count(mode: str) -> int:
    """Gate blocks per hidden unit: the rows of W_ih are gate_count * hidden_size."""
    return _GATES[mode]


def _width(mode: str, H: int, Hr: int) -> int:
    if mode == "LSTM":
        return Hr + 5 * H
    if mode == "GRU":
        return 5 * H
    return H


def state_width(mode: str, H: int, Hr: int) -> int:
    """Columns of an output row that hold state (h, and c for LSTM); the rest are activations."""
    return Hr + H if mode == "LSTM" else H


def _split(xs: Sequence, mode: str, has_bias: bool, has_proj: bool) -> tuple:
    """(xw, h0, c0, w_hh, b_hh, w_hr), None for those this configuration has not."""
    xs = list(xs)
    xw, h0 = xs[0], xs[1]
    k = 2
    c0 = None
    if mode == "LSTM":
        c0, k = xs[2], 3
    w_hh = xs[k]
    k += 1
    b_hh = None
    if has_bias:
        b_hh, k = xs[k], k + 1
    w_hr = xs[k] if has_proj else None
    return xw, h0, c0, w_hh, b_hh, w_hr


def scan_inputs(mode: str, xw, h0, c0, w_hh, b_hh, w_hr) -> tuple:
    """The primitive's inputs, in order, for this configuration (the inverse of _split)."""
    xs = [xw, h0]
    if mode == "LSTM":
        xs.append(c0)
    xs.append(w_hh)
    if b_hh is not None:
        xs.append(b_hh)
    if w_hr is not None:
        xs.append(w_hr)
    return tuple(xs)


def _idle_rows(lengths, T: int, xp=np) -> list:
    """Per time step, the rows idle at that step (an index array of xp), or None where all run."""
    if lengths is None:
        return [None] * T
    lens = np.asarray(lengths)
    out = []
    for t in range(T):
        idle = np.nonzero(lens <= t)[0]
        out.append((idle if xp is np else xp.asarray(idle)) if idle.size else None)
    return out


# --- shape rule -----------------------------------------------------------------------------------

def _scan_aval(*avals, mode, reverse, lengths, has_bias, has_proj):
    xw, h0, c0, w_hh, b_hh, w_hr = _split(avals, mode, has_bias, has_proj)
    if xw.ndim != 3 or h0.ndim != 2 or w_hh.ndim != 2:
        raise ShapeError(f"rnn_scan: expected xw [T, B, G], h0 [B, H] and w_hh [G, H], got shapes "
                         f"{xw.shape}, {h0.shape} and {w_hh.shape}")
    T, B, G = xw.shape
    Hr = h0.shape[1]
    k = _GATES[mode]
    H = G // k
    if G % k or w_hh.shape != (G, Hr) or h0.shape[0] != B:
        raise ShapeError(f"rnn_scan ({mode}): xw {xw.shape}, h0 {h0.shape} and w_hh {w_hh.shape} do "
                         f"not fit (expected [T, B, {k}*H], [B, Hr], [{k}*H, Hr])")
    if c0 is not None and c0.shape != (B, H):
        raise ShapeError(f"rnn_scan (LSTM): c0 has shape {c0.shape}, expected {(B, H)}")
    if b_hh is not None and b_hh.shape != (G,):
        raise ShapeError(f"rnn_scan: b_hh has shape {b_hh.shape}, expected {(G,)}")
    if w_hr is not None and w_hr.shape != (Hr, H):
        raise ShapeError(f"rnn_scan (LSTM): w_hr has shape {w_hr.shape}, expected {(Hr, H)}")
    if w_hr is None and Hr != H:
        raise ShapeError(f"rnn_scan: h0 has {Hr} columns but the hidden size is {H}")
    if lengths is not None and len(lengths) != B:
        raise ShapeError(f"rnn_scan: {len(lengths)} lengths for a batch of {B}")
    dts = {a.dtype for a in avals}
    if len(dts) != 1 or not is_float(xw.dtype):
        raise FgradTypeError(f"rnn_scan: expected operands of one floating-point dtype, got "
                        f"{', '.join(sorted(str(d) for d in dts))}")
    return ShapedArray((T, B, _width(mode, H, Hr)), xw.dtype)


# --- forward impl -----------------------------------------------------------------------------------

def _sigmoid_into(x, out, xp):
    """out = sigmoid(x) = (1 + tanh(x / 2)) / 2: a third of the time of 1 / (1 + exp(-x)) (one
    vectorised tanh, no division), within an ulp of 1 absolutely (below 1e-7 in float32 the
    result is ~0 instead of tiny, which no gate notices); never overflows."""
    xp.multiply(x, 0.5, out=out)
    xp.tanh(out, out=out)
    out *= 0.5
    out += 0.5


_WARNED: dict = {}

# Steps from which a loop reorders b into oneDNN's blocked layout: the reorder costs about
# as much as two products, and each product on the blocked b saves a fraction of one.
_PACK_FROM_STEPS = 8


def _times(b, xp, steps: int):
    """mm(a, out): out = a @ b for the recurrent GEMMs of a loop of `steps` steps (b fixed, a
    and out changing).

    float32 NumPy arrays with oneDNN installed: oneDNN's matmul primitive, built once per
    geometry (shapes and strides) and reused every step, with b reordered once per loop into
    the blocked layout oneDNN picks (its few-row kernels read that faster than OpenBLAS reads
    a plain matrix) when the loop has _PACK_FROM_STEPS steps or more. Otherwise NumPy's
    matmul, with b copied once to row-major: OpenBLAS multiplies a few rows by a transposed
    view ~1.6x slower than by a contiguous matrix. The choice depends on the dtype, the
    shapes and the library alone, so every run of a program (eager, jit, replayed) computes
    the same bits. Should oneDNN report a failure while running, NumPy takes over for the
    rest of the loop (after one RuntimeWarning per process)."""
    if xp is np and b.dtype == np.float32 and onednn.available():
        plans: dict = {}
        owner = object()  # this loop's b (a cached primitive may serve another b meanwhile)
        packed = steps >= _PACK_FROM_STEPS

        def mm(a, out):
            key = (a.strides, out.strides)
            plan = plans.get(key)
            if plan is None:  # per stride pattern (a step's h may be a row of Y or a buffer)
                plan = plans[key] = onednn.matmul_primitive(a, b, out, packed=packed) or False
            if not plan:
                return np.matmul(a, b, out=out)
            try:
                if plan.b_owner is not owner:
                    plan.set_b(b, owner)
                plan(a.ctypes.data, out.ctypes.data)
            except onednn.OneDNNError as e:
                plans[key] = False
                if not _WARNED.get("onednn"):
                    _WARNED["onednn"] = True
                    warnings.warn(f"fgrad: oneDNN's matmul failed in a recurrent layer ({e}); NumPy's "
                                  "matmul computes it", RuntimeWarning, stacklevel=2)
                return np.matmul(a, b, out=out)
            return out
        return mm
    bc = xp.ascontiguousarray(b)

    def mm(a, out):
        return xp.matmul(a, bc, out=out)
    return mm


def _scan_impl(*xs, mode, reverse, lengths, has_bias, has_proj, xp):
    with onednn.running():
        return _scan_loop(*xs, mode=mode, reverse=reverse, lengths=lengths, has_bias=has_bias,
                          has_proj=has_proj, xp=xp)


def _scan_loop(*xs, mode, reverse, lengths, has_bias, has_proj, xp):
    xw, h0, c0, w_hh, b_hh, w_hr = _split(xs, mode, has_bias, has_proj)
    T, B, G = xw.shape
    Hr = h0.shape[1]
    H = G // _GATES[mode]
    S = state_width(mode, H, Hr)
    Y = xp.empty((T, B, _width(mode, H, Hr)), xw.dtype)
    if T == 0:
        return Y
    kern = _lstm_kernels()[0] if mode == "LSTM" and xp is np and xw.dtype == np.float32 else None
    # LSTM and plain RNNs add b_hh to the gates: folded into the input projection once (the
    # LSTM kernel adds it per step, (xw + b_hh) as here, without the [T, B, G] temporary)
    xwb = xw + b_hh if has_bias and mode != "GRU" and kern is None else xw
    times_w = _times(w_hh.T, xp, T)                          # h -> h W_hh^T
    times_wr = _times(w_hr.T, xp, T) if has_proj else None    # m -> m W_hr^T
    idle = _idle_rows(lengths, T, xp)
    gates = xp.empty((B, G), xw.dtype)
    if mode == "LSTM":  # per gate column: x -> x/2 (sigmoid) or x (tanh); t -> t/2 + 1/2 or t
        half = xp.full(G, 0.5, xw.dtype)
        half[2 * H:3 * H] = 1
        half_shift = xp.full(G, 0.5, xw.dtype)
        half_shift[2 * H:3 * H] = 0
    h, c = h0, c0
    if kern is not None:  # C-contiguous operands: the kernel is compiled for that one layout
        xwb = np.ascontiguousarray(xwb)
        bh = np.ascontiguousarray(b_hh) if has_bias else np.zeros(G, xw.dtype)
        c = np.array(c0, order="C")                           # updated in place, step by step
        h = np.array(h0, order="C")
        # the state h in contiguous buffers (a GEMM reads a block faster than rows of Y),
        # two in turn: idle rows copy the previous step's h while the new one is written
        m_bufs = (np.empty((B, H), xw.dtype), np.empty((B, H), xw.dtype))
        h_bufs = (np.empty((B, Hr), xw.dtype), np.empty((B, Hr), xw.dtype)) if has_proj else m_bufs
    for s in range(T):
        t = T - 1 - s if reverse else s
        row = Y[t]
        times_w(h, gates)
        if kern is not None:  # the element-wise part of the step in one pass (Numba)
            rows = idle[t]
            keep_c = None if rows is None else c[rows]
            m_buf, h_new = m_bufs[s % 2], h_bufs[s % 2]
            kern(gates, xwb[t], bh, c, row, Hr, m_buf, not has_proj, half, half_shift)
            if has_proj:
                times_wr(m_buf, h_new)
                row[:, :Hr] = h_new
            if rows is not None:
                row[rows, :Hr] = h[rows]
                h_new[rows] = h[rows]
                row[rows, Hr:S] = keep_c
                row[rows, S:] = 0
                c[rows] = keep_c
            h = h_new
            continue
        if mode == "LSTM":
            # in the contiguous gates buffer (ufuncs on strided rows of Y take ~2x longer):
            # sigmoid(x) = (1 + tanh(x / 2)) / 2 for i, f, o and tanh for g, one tanh call
            gates += xwb[t]
            gates *= half
            xp.tanh(gates, out=gates)
            gates *= half
            gates += half_shift
            i, f, g, o = gates[:, :H], gates[:, H:2 * H], gates[:, 2 * H:3 * H], gates[:, 3 * H:]
            cn = f * c
            cn += i * g
            m = xp.tanh(cn)
            m *= o
            row[:, S:] = gates
            row[:, Hr:S] = cn
            if has_proj:
                times_wr(m, row[:, :Hr])
            else:
                row[:, :H] = m
        elif mode == "GRU":
            if has_bias:
                gates += b_hh
            x_t = xwb[t]
            a = row[:, H:4 * H]
            xp.add(x_t[:, :2 * H], gates[:, :2 * H], out=a[:, :2 * H])
            _sigmoid_into(a[:, :2 * H], a[:, :2 * H], xp)
            r, z, n = a[:, :H], a[:, H:2 * H], a[:, 2 * H:]
            hn = row[:, 4 * H:]
            hn[...] = gates[:, 2 * H:]
            xp.multiply(r, hn, out=n)
            n += x_t[:, 2 * H:]
            xp.tanh(n, out=n)
            hout = row[:, :H]
            xp.subtract(h, n, out=hout)                  # h' = n + z (h - n)
            hout *= z
            hout += n
        else:
            gates += xwb[t]
            if mode == "RNN_TANH":
                xp.tanh(gates, out=row)
            else:
                xp.maximum(gates, 0, out=row)
        rows = idle[t]
        if rows is not None:
            row[rows, :Hr] = h[rows]
            if c is not None:
                row[rows, Hr:S] = c[rows]
            row[rows, S:] = 0
        h = row[:, :Hr]
        if mode == "LSTM":
            c = cn if rows is None else row[:, Hr:S]   # (the contiguous copy reads faster)
    return Y


# --- backward impl (BPTT) --------------------------------------------------------------------------

def _bwd_impl(ct, Y, *xs, mode, reverse, lengths, has_bias, has_proj, xp):
    """The cotangents of every input, raveled and concatenated in input order."""
    with onednn.running():
        return _bwd_loop(ct, Y, *xs, mode=mode, reverse=reverse, lengths=lengths, has_bias=has_bias,
                         has_proj=has_proj, xp=xp)


def _bwd_loop(ct, Y, *xs, mode, reverse, lengths, has_bias, has_proj, xp):
    xw, h0, c0, w_hh, b_hh, w_hr = _split(xs, mode, has_bias, has_proj)
    T, B, G = xw.shape
    Hr = h0.shape[1]
    H = G // _GATES[mode]
    S = state_width(mode, H, Hr)
    dt = xw.dtype
    # the result is one flat vector: each input's cotangent is written into its view of it
    out = xp.empty(sum(int(np.prod(x.shape, dtype=np.int64)) for x in xs), dt)
    views, start = [], 0
    for x in xs:
        n = int(np.prod(x.shape, dtype=np.int64))
        views.append(out[start:start + n].reshape(x.shape))
        start += n
    g_xw, g_h0, g_c0, g_whh, g_bhh, g_whr = _split(views, mode, has_bias, has_proj)
    dxw = g_xw                                                    # every step writes all of dxw[t]
    dhh_all = xp.empty((T, B, G), dt) if mode == "GRU" else dxw   # cotangent of h W_hh^T + b_hh
    dhp_all = xp.zeros((T, B, Hr), dt) if has_proj else None     # cotangent of each m W_hr^T
    m_all = xp.zeros((T, B, H), dt) if has_proj else None
    dh = xp.zeros((B, Hr), dt)
    # the state cotangent alternates between two buffers: a step reads the old one (idle rows)
    # while the GEMM writes the new one
    dh_bufs = (xp.empty((B, Hr), dt), xp.empty((B, Hr), dt))
    times_w = _times(w_hh, xp, T)                                    # da -> da W_hh
    times_wr = _times(w_hr, xp, T) if has_proj else None             # dh -> dh W_hr
    dm_buf = xp.empty((B, H), dt) if has_proj else None
    dc = xp.zeros((B, H), dt) if mode == "LSTM" else None
    kern = _lstm_kernels()[1] if mode == "LSTM" and xp is np and dt in (np.float32, np.float64) else None
    if kern is not None:  # C-contiguous operands: the kernel is compiled for that one layout
        ct, Y, one = np.ascontiguousarray(ct), np.ascontiguousarray(Y), dt.type(1)
        c0 = np.ascontiguousarray(c0)
    # cotangents on the activation columns (zero unless someone reads them): skipped when zero,
    # except by the LSTM kernel, which reads them in its one pass (cheaper than testing)
    act_ct = T > 0 and ct.shape[2] > S and (kern is not None or bool(xp.any(ct[:, :, S:])))
    idle = _idle_rows(lengths, T, xp)
    for s in reversed(range(T)):
        t = T - 1 - s if reverse else s
        tp = None if s == 0 else (t + 1 if reverse else t - 1)   # the step that ran before t
        ct_t, row, rows = ct[t], Y[t], idle[t]
        dh += ct_t[:, :Hr]
        da = dxw[t]
        if mode == "LSTM" and kern is not None:  # the element-wise part in one pass (Numba)
            # idle rows pass dc on unchanged (the kernel adds the c columns of ct_t to dc)
            keep_dc = None if rows is None else dc[rows] + ct_t[rows, Hr:S]
            if has_proj:
                dhp_all[t] = dh
                m_all[t] = row[:, S + 3 * H:] * xp.tanh(row[:, Hr:S])
                if rows is not None:
                    dhp_all[t, rows] = 0
                dm = times_wr(dh, dm_buf)
            else:
                dm = dh
            kern(dm, dc, c0 if tp is None else Y[tp], 0 if tp is None else Hr, row, Hr, ct_t, act_ct, da, one)
            if rows is not None:
                dc[rows] = keep_dc
                da[rows] = 0
            dh = _step_back(times_w(da, dh_bufs[s % 2]), dh, rows)
            continue
        if mode == "LSTM":
            dc += ct_t[:, Hr:S]
            keep_dc = None if rows is None else dc[rows]   # idle rows pass dc on unchanged
            c_prev = c0 if tp is None else Y[tp][:, Hr:S]
            a = row[:, S:]
            i, f, g, o = a[:, :H], a[:, H:2 * H], a[:, 2 * H:3 * H], a[:, 3 * H:]
            tc = xp.tanh(row[:, Hr:S])
            if has_proj:
                dhp_all[t] = dh
                m_all[t] = o * tc
                if rows is not None:
                    dhp_all[t, rows] = 0
                dm = times_wr(dh, dm_buf)
            else:
                dm = dh
            d_i, d_f, d_g, d_o = da[:, :H], da[:, H:2 * H], da[:, 2 * H:3 * H], da[:, 3 * H:]
            xp.multiply(dm, tc, out=d_o)
            tc *= tc
            xp.subtract(1, tc, out=tc)                    # 1 - tanh(c)^2
            tc *= o
            tc *= dm
            dc += tc
            xp.multiply(dc, g, out=d_i)
            xp.multiply(dc, c_prev, out=d_f)
            xp.multiply(dc, i, out=d_g)
            if act_ct:
                da += ct_t[:, S:]
            for blk, sg in ((d_i, i), (d_f, f), (d_o, o)):   # sigmoid' = s (1 - s)
                blk *= sg
                blk *= 1 - sg
            d_g *= 1 - g * g                                  # tanh' = 1 - t^2
            dc *= f
            if rows is not None:
                dc[rows] = keep_dc
                da[rows] = 0
            dh_new = times_w(da, dh_bufs[s % 2])
        elif mode == "GRU":
            h_prev = h0 if tp is None else Y[tp][:, :H]
            a = row[:, H:4 * H]
            r, z, n = a[:, :H], a[:, H:2 * H], a[:, 2 * H:]
            hn = row[:, 4 * H:]
            dhh = dhh_all[t]
            dar, daz, dan = da[:, :H], da[:, H:2 * H], da[:, 2 * H:]
            xp.multiply(dh, 1 - z, out=dan)                   # dn  (h' = (1 - z) n + z h)
            xp.subtract(h_prev, n, out=daz)
            daz *= dh                                         # dz
            if act_ct:
                da += ct_t[:, H:4 * H]
            dan *= 1 - n * n                                  # through tanh
            xp.multiply(dan, r, out=dhh[:, 2 * H:])           # d hn
            xp.multiply(dan, hn, out=dar)                     # dr
            if act_ct:
                dhh[:, 2 * H:] += ct_t[:, 4 * H:]
                dar += ct_t[:, H:2 * H]
            dar *= r * (1 - r)
            daz *= z * (1 - z)
            dhh[:, :2 * H] = da[:, :2 * H]
            if rows is not None:
                da[rows] = 0
                dhh[rows] = 0
            dh_new = times_w(dhh, dh_bufs[s % 2])
            dh_new += dh * z
        else:
            if mode == "RNN_TANH":
                xp.multiply(dh, 1 - row * row, out=da)
            else:
                xp.multiply(dh, row > 0, out=da)
            if rows is not None:
                da[rows] = 0
            dh_new = times_w(da, dh_bufs[s % 2])
        dh = _step_back(dh_new, dh, rows)
    # the weight gradients: one GEMM over all steps (idle rows contribute 0)
    if T:
        h_prev_all = xp.concatenate([Y[1:, :, :Hr], h0[None]] if reverse else [h0[None], Y[:-1, :, :Hr]], 0)
        xp.matmul(dhh_all.reshape(T * B, G).T, h_prev_all.reshape(T * B, Hr), out=g_whh)
    else:
        g_whh[...] = 0
    g_h0[...] = dh
    if c0 is not None:
        g_c0[...] = dc
    if has_bias:
        dhh_all.sum(axis=(0, 1), out=g_bhh)
    if has_proj:
        xp.matmul(dhp_all.reshape(T * B, Hr).T, m_all.reshape(T * B, H), out=g_whr)
    return out


def _step_back(dh_new, dh, rows):
    """The state cotangent passed to the previous step: idle rows pass theirs on unchanged."""
    if rows is not None:
        dh_new[rows] = dh[rows]
    return dh_new


_KERNELS = None


def _lstm_kernels():
    """The Numba kernels of an LSTM step's element-wise part, (forward, backward), from
    _lstm_kernels.py (forward float32 only), or (None, None) without Numba. Imported on first
    use: importing Numba costs ~0.1 s that programs without an LSTM skip."""
    global _KERNELS
    if _KERNELS is None:
        prefer_wide_vectors()  # (before Numba first compiles in the process)
        try:
            from . import _lstm_kernels as K  # imports Numba: only programs with an LSTM pay for it
        except ImportError:  # pragma: no cover - numba is a dependency
            _KERNELS = (None, None)
        else:
            _KERNELS = (K.lstm_cell_fwd, K.lstm_cell_grad)
    return _KERNELS


def _bwd_aval(ct, Y, *avals, mode, reverse, lengths, has_bias, has_proj):
    out = _scan_aval(*avals, mode=mode, reverse=reverse, lengths=lengths, has_bias=has_bias,
                     has_proj=has_proj)
    if ct.shape != out.shape or Y.shape != out.shape:
        raise ShapeError(f"rnn_scan_bwd: cotangent {ct.shape} and output {Y.shape} must have the "
                         f"scan's output shape {out.shape}")
    return ShapedArray((sum(int(np.prod(a.shape, dtype=np.int64)) for a in avals),), out.dtype)


# --- the same recurrence in fgrad ops (derivatives of every order) ----------------------------------
# Why the recurrence is written twice, and why neither copy can be derived from the other:
# - _scan_impl/_bwd_impl are what every forward and backward pass runs: in-place ufuncs on
#   preallocated buffers, b_hh folded into xw once, one GEMM per step, the weight gradients as
#   one GEMM over all steps, a Numba kernel for the LSTM step. Written with fgrad ops (bound
#   primitives, new arrays per op) a step costs ~15 binds and the backward of T steps O(T^2)
#   memory (see the module docstring), so the fused loops cannot be the composite evaluated.
# - _scan_composite is what higher derivatives differentiate: the fused loops overwrite their
#   buffers and call NumPy directly, so no transformation can trace them.
# tests/torch/test_rnn_scan_agreement.py holds them together: values, first derivatives (fused BPTT
# against the composite's VJP, finite differences of the fused scan against its JVP) and second
# derivatives (finite differences of the fused BPTT against the composite's) agree for every
# mode, with and without bias, projection and lengths, in both directions.

def _cols(x, a: int, b: int):
    n = shape_of(x)[0]
    return _slice(x, (0, a), (n, b))


def cell_math(mode: str, xg, hh, h, c=None, w_hr=None) -> tuple:
    """One step in fgrad ops: xg = x W_ih^T + b_ih, hh = h W_hh^T + b_hh (both [B, G]).
    Returns (h', c' or None, [activations in output order]) -- PyTorch's cell equations:
      RNN   h' = tanh(xg + hh) (or relu)
      LSTM  i, f, g, o = sig, sig, tanh, sig of (xg + hh); c' = f c + i g; h' = o tanh(c') (W_hr)
      GRU   r, z = sig(xg + hh); n = tanh(xg_n + r hh_n); h' = (1 - z) n + z h."""
    if mode in ("RNN_TANH", "RNN_RELU"):
        a = xlax.add(xg, hh)
        return (xlax.tanh(a) if mode == "RNN_TANH" else nnops.relu(a)), None, []
    G = shape_of(xg)[1]
    if mode == "LSTM":
        H = G // 4
        gates = xlax.add(xg, hh)
        i, f = xlax.logistic(_cols(gates, 0, H)), xlax.logistic(_cols(gates, H, 2 * H))
        g, o = xlax.tanh(_cols(gates, 2 * H, 3 * H)), xlax.logistic(_cols(gates, 3 * H, 4 * H))
        c_new = xlax.add(xlax.mul(f, c), xlax.mul(i, g))
        m = xlax.mul(o, xlax.tanh(c_new))
        h_new = m if w_hr is None else dot_general(m, w_hr, (((1,), (1,)), ((), ())))
        return h_new, c_new, [i, f, g, o]
    H = G // 3
    r = xlax.logistic(xlax.add(_cols(xg, 0, H), _cols(hh, 0, H)))
    z = xlax.logistic(xlax.add(_cols(xg, H, 2 * H), _cols(hh, H, 2 * H)))
    hn = _cols(hh, 2 * H, 3 * H)
    n = xlax.tanh(xlax.add(_cols(xg, 2 * H, 3 * H), xlax.mul(r, hn)))
    h_new = xlax.add(n, xlax.mul(z, xlax.sub(h, n)))
    return h_new, None, [r, z, n, hn]


def hidden_projection(h, w_hh, b_hh):
    """h W_hh^T (+ b_hh) in fgrad ops."""
    if b_hh is None:
        return dot_general(h, w_hh, (((1,), (1,)), ((), ())))
    return nnops.linear(h, w_hh, b_hh)


def _scan_composite(xs, mode, reverse, lengths, has_bias, has_proj):
    """rnn_scan's output computed step by step with fgrad ops."""
    xw, h0, c0, w_hh, b_hh, w_hr = _split(xs, mode, has_bias, has_proj)
    T, B, G = shape_of(xw)
    idle = _idle_rows(lengths, T)
    h, c = h0, c0
    rows: list = [None] * T
    for s in range(T):
        t = T - 1 - s if reverse else s
        xg = reshape(_slice(xw, (t, 0, 0), (t + 1, B, G)), (B, G))
        h_new, c_new, acts = cell_math(mode, xg, hidden_projection(h, w_hh, b_hh), h, c, w_hr)
        if idle[t] is not None:
            run = np.ones(B, bool)
            run[idle[t]] = False
            keep = lambda new, old: xlax.select(  # noqa: E731
                np.broadcast_to(run[:, None], shape_of(new)), new, old)
            h_new = keep(h_new, h)
            if c_new is not None:
                c_new = keep(c_new, c)
            acts = [keep(a, xlax.const(a, 0.0)) for a in acts]
        h, c = h_new, c_new
        parts = [h] + ([c] if c is not None else []) + acts
        row = concatenate(parts, 1)
        rows[t] = reshape(row, (1,) + shape_of(row))
    return concatenate(rows, 0)


def _zeros(x):
    a = aval_of(x)
    return np.zeros(a.shape, a.dtype)


def _bwd_composite(ct, xs, params):
    """rnn_scan_bwd's output (the packed cotangents) as the VJP of _scan_composite. The
    operands are values (arrays or tracers): the facade runs a layer as one torch op over
    values (fgrad.torch._tensor._boundary.call), also when create_graph differentiates it
    again, so no Tensor reaches these rules."""
    _, f_vjp = _api_vjp(lambda *ys: _scan_composite(ys, **params), *xs)
    grads = f_vjp(ct)
    flat = [fnp.ravel(_zeros(x) if gr is None else gr) for x, gr in zip(xs, grads)]
    return fnp.concatenate(flat, axis=0)


def _substituted(primals, live, fn):
    """fn(full argument list) as a function of the arguments at positions `live`."""
    def f(*ys):
        full = list(primals)
        for k, y in zip(live, ys):
            full[k] = y
        return fn(full)
    return f


# --- rnn_scan ---------------------------------------------------------------------------------------

rnn_scan_p = Primitive("rnn_scan")
rnn_scan_bwd_p = Primitive("rnn_scan_bwd")


def _scan_jvp(primals, tangents, **params):
    out = rnn_scan_p.bind(*primals, **params)
    live = [k for k, t in enumerate(tangents) if t is not None]
    if not live:
        return out, None
    f = _substituted(primals, live, lambda full: _scan_composite(full, **params))
    _, out_dot = _api_jvp(f, tuple(primals[k] for k in live), tuple(tangents[k] for k in live))
    return out, out_dot


def _unpack_grads(flat, xs, needs) -> list:
    res, start = [], 0
    for x, need in zip(xs, needs):
        shape = shape_of(x)
        size = int(np.prod(shape, dtype=np.int64))
        res.append(reshape(_slice(flat, (start,), (start + size,)), shape) if need else None)
        start += size
    return res


def _scan_vjp(needs, ct, out, *xs, **params):
    flat = rnn_scan_bwd_p.bind(ct, out, *xs, **params)
    return _unpack_grads(flat, xs, needs)


def _scan_batch(n, vals, dims, **params):
    xw, h0, c0, w_hh, b_hh, w_hr = _split(dims, params["mode"], params["has_bias"], params["has_proj"])
    if any(d is not None for d in (w_hh, b_hh, w_hr)):  # per-example weights: one scan each
        return loop_batch(rnn_scan_p, n, vals, dims, **params)
    # rows are independent: the vmapped axis folds into the batch axis B
    v_xw, v_h0, v_c0, *_ = _split(vals, params["mode"], params["has_bias"], params["has_proj"])
    T, B = shape_of(v_xw)[:2] if xw is None else \
        tuple(d for k, d in enumerate(shape_of(v_xw)) if k != xw)[:2]

    def fold_seq(v, d):  # [T, B, G] with the vmapped axis at d -> [T, n*B, G]
        if d is None:
            s = shape_of(v)
            v = broadcast_in_dim(v, (s[0], n) + s[1:], (0, 2, 3))
        else:
            v = move_axis(v, d, 1)
        s = shape_of(v)
        return reshape(v, (s[0], s[1] * s[2], s[3]))

    def fold_state(v, d):  # [B, H] -> [n*B, H]
        if d is None:
            s = shape_of(v)
            v = broadcast_in_dim(v, (n,) + s, (1, 2))
        else:
            v = move_axis(v, d, 0)
        s = shape_of(v)
        return reshape(v, (s[0] * s[1], s[2]))

    new = list(vals)
    new[0] = fold_seq(v_xw, xw)
    new[1] = fold_state(vals[1], h0)
    if params["mode"] == "LSTM":
        new[2] = fold_state(vals[2], c0)
    lengths = params["lengths"]
    out = rnn_scan_p.bind(*new, **dict(params, lengths=None if lengths is None else tuple(lengths) * n))
    s = shape_of(out)
    return reshape(out, (s[0], n, B, s[2])), 1


rnn_scan_p.def_impl(_scan_impl)
rnn_scan_p.def_abstract_eval(_scan_aval)
rnn_scan_p.def_jvp(_scan_jvp)
rnn_scan_p.def_vjp(_scan_vjp)
rnn_scan_p.def_batch(_scan_batch)


# --- rnn_scan_bwd: (ct, Y, *xs) -> packed cotangents of xs -------------------------------------------
# Y is rnn_scan(*xs), passed so the impl need not recompute the activations; the function is
# one of (ct, xs) alone, so Y gets no derivative and the rules below differentiate the
# composite VJP in (ct, xs).

def _bwd_jvp(primals, tangents, **params):
    out = rnn_scan_bwd_p.bind(*primals, **params)
    live = [k for k, t in enumerate(tangents) if t is not None and k != 1]
    if not live:
        return out, None
    f = _substituted(primals, live, lambda full: _bwd_composite(full[0], full[2:], params))
    _, out_dot = _api_jvp(f, tuple(primals[k] for k in live), tuple(tangents[k] for k in live))
    return out, out_dot


def _bwd_vjp(needs, ct2, out, *primals, **params):
    live = [k for k, need in enumerate(needs) if need and k != 1]
    res: list = [None] * len(primals)
    if not live:
        return res
    f = _substituted(primals, live, lambda full: _bwd_composite(full[0], full[2:], params))
    _, f_vjp = _api_vjp(f, *[primals[k] for k in live])
    cts = f_vjp(ct2)
    for k, c in zip(live, cts):
        res[k] = c
    return res


rnn_scan_bwd_p.def_impl(_bwd_impl)
rnn_scan_bwd_p.def_abstract_eval(_bwd_aval)
rnn_scan_bwd_p.def_jvp(_bwd_jvp)
rnn_scan_bwd_p.def_vjp(_bwd_vjp)
# what the rules read: ct and the scan's inputs (at most 6), not Y, nor the output
rnn_scan_bwd_p.def_saves(inputs=frozenset({0, 2, 3, 4, 5, 6, 7}), output=False)
rnn_scan_bwd_p.def_batch(lambda n, vals, dims, **params: loop_batch(rnn_scan_bwd_p, n, vals, dims, **params))


def rnn_scan(mode: str, xw: Any, h0: Any, c0: Any, w_hh: Any, b_hh: Any = None, w_hr: Any = None, *,
             reverse: bool = False, lengths: Sequence[int] | None = None) -> Any:
    """One direction of one recurrent layer over a time-major sequence: the output [T, B, W]
    described in the module docstring (states first, then activations). `lengths[b]` steps
    of row b run (packed sequences); the others carry the state."""
    if mode not in MODES:
        raise FgradValueError(f"rnn_scan: unknown mode {mode!r}; expected one of {MODES}")
    T = shape_of(xw)[0]
    if lengths is not None:
        lengths = tuple(int(v) for v in lengths)
        if all(v >= T for v in lengths):
            lengths = None
    xs = scan_inputs(mode, xw, h0, c0, w_hh, b_hh, w_hr)
    params = dict(mode=mode, reverse=bool(reverse), lengths=lengths, has_bias=b_hh is not None,
                  has_proj=w_hr is not None)
    _scan_aval(*[aval_of(x) for x in xs], **params)  # eager shape errors, naming the shapes
    return rnn_scan_p.bind(*xs, **params)
