"""Numba kernels of one LSTM step's element-wise part, for rnn_scan's fused loops
(fgrad/torch/nn/_rnn_ops.py imports this module on first use, so programs without an LSTM do
not import Numba). Each computes what the NumPy path around it computes, in the operands'
dtype, on C-contiguous arrays (the layout they are compiled for).

Loops index per-gate slices (gate_i[j], not a[H + j]): with a computed offset Numba cannot
prove an index non-negative, and the wraparound check it inserts keeps LLVM from vectorising
the loop. error_model="numpy" for the same reason (no zero-division check on p / q).
No fastmath: without contraction into FMAs the bits do not depend on the machine's
instruction set, only the vector width, which element-wise loops do not see.
"""
from __future__ import annotations

import numba
import numpy as np
from numba.extending import overload

# tanh on [-_LIM, _LIM] as x p(x^2) / q(x^2), the minimax fit Eigen uses for float tanh;
# beyond _LIM tanh is +-1 to float32 precision. Within 6 float32 ulp of tanh.
_LIM = np.float32(7.90531110763549805)
_P0, _P1, _P2 = np.float32(4.89352455891786e-03), np.float32(6.37261928875436e-04), np.float32(1.48572235717979e-05)
_P3, _P4 = np.float32(5.12229709037114e-08), np.float32(-8.60467152213735e-11)
_P5, _P6 = np.float32(2.00018790482477e-13), np.float32(-2.76076847742355e-16)
_Q0, _Q1 = np.float32(4.89352518554385e-03), np.float32(2.26843463243900e-03)
_Q2, _Q3 = np.float32(1.18534705686654e-04), np.float32(1.19825839466702e-06)


@numba.njit(inline="always", error_model="numpy", cache=True)
def tanh_f32(x):
    """float32 tanh that LLVM vectorises (NumPy's is a call per array, libm's a call per
    element, ~5x slower than the whole NumPy step). The clamp is written as comparisons so a
    NaN passes through (a NaN gate stays NaN, as in PyTorch)."""
    x = -_LIM if x < -_LIM else x
    x = _LIM if x > _LIM else x
    x2 = x * x
    p = ((((((_P6 * x2 + _P5) * x2 + _P4) * x2 + _P3) * x2 + _P2) * x2 + _P1) * x2 + _P0) * x
    q = ((_Q3 * x2 + _Q2) * x2 + _Q1) * x2 + _Q0
    return p / q


@numba.njit(cache=True, nogil=True, error_model="numpy")
def lstm_cell_fwd(gates, xb, bh, c, row, Hr, m, h_in_row, scale, shift):
    """One float32 LSTM step after its GEMM. gates = h W_hh^T, xb = x W_ih^T + b_ih ([B, 4H],
    gate blocks i, f, g, o) and bh = b_hh [4H] (zeros without bias) sum to the
    pre-activations gates + (xb + bh); c [B, H] is updated in place to c'. Writes the output row's c'
    (columns Hr:Hr+H) and activations (from Hr+H), and m = o tanh(c') into m [B, H] and, when
    h_in_row, into the row's first H columns. Activation of gate column j: scale[j] *
    tanh(scale[j] * x) + shift[j], so (1 + tanh(x / 2)) / 2 = sigmoid(x) for i, f, o (scale
    and shift 1/2) and tanh for g (1 and 0), as in the NumPy path. (Two loops, each with one
    tanh, vectorise as well as one loop with five and compile in half the time.)"""
    B, H = c.shape
    S = Hr + H
    G = 4 * H
    for b in range(B):
        gb, xr, rb, cb, mb = gates[b], xb[b], row[b], c[b], m[b]
        acts = rb[S:S + G]
        for j in range(G):
            s = scale[j]
            acts[j] = s * tanh_f32(s * (gb[j] + (xr[j] + bh[j]))) + shift[j]
        ri, rf, rg, ro = rb[S:S + H], rb[S + H:S + 2 * H], rb[S + 2 * H:S + 3 * H], rb[S + 3 * H:S + 4 * H]
        rc = rb[Hr:S]
        for j in range(H):
            cn = rf[j] * cb[j] + ri[j] * rg[j]
            cb[j] = cn
            rc[j] = cn
            mb[j] = ro[j] * tanh_f32(cn)
        if h_in_row:
            rb[:H] = mb


def _tanh(x):
    """tanh in the kernels: tanh_f32 for float32 (what the forward kernel computed c's tanh
    with), NumPy's for float64 (resolved by Numba per argument type, see _tanh_impl)."""
    return np.tanh(x)


@overload(_tanh, inline="always")
def _tanh_impl(x):
    if x == numba.float32:
        return lambda x: tanh_f32(x)
    return lambda x: np.tanh(x)


@numba.njit(cache=True, nogil=True, error_model="numpy")
def lstm_cell_grad(dm, dc, c_prev, cp_off, row, Hr, ct_row, has_act, da, one):
    """One LSTM step's element-wise backward (float32 or float64). dm is the cotangent of
    m = o tanh(c), dc that of c from the step after (updated in place to that of c_prev);
    row is the step's output row [B, W] (c in columns Hr:Hr+H, activations i, f, g, o from
    Hr+H) and ct_row its cotangent, whose c columns are added to dc (and activation columns
    to the gates' when has_act); c_prev holds the previous c in columns cp_off:cp_off+H (the
    previous row, or c0). Writes the gate pre-activation cotangents da [B, 4H]; `one` has
    the arrays' dtype (float32 stays float32)."""
    B, H = dm.shape
    S = Hr + H
    for b in range(B):
        rb, cb, db = row[b], ct_row[b], da[b]
        ai, af, ag, ao = rb[S:S + H], rb[S + H:S + 2 * H], rb[S + 2 * H:S + 3 * H], rb[S + 3 * H:S + 4 * H]
        ci, cf, cg, co = cb[S:S + H], cb[S + H:S + 2 * H], cb[S + 2 * H:S + 3 * H], cb[S + 3 * H:S + 4 * H]
        di_, df_, dg_, do_ = db[:H], db[H:2 * H], db[2 * H:3 * H], db[3 * H:4 * H]
        dmb, dcb, cnb, ctc = dm[b], dc[b], rb[Hr:S], cb[Hr:S]
        cpb = c_prev[b][cp_off:cp_off + H]
        for j in range(H):
            i, f, g, o = ai[j], af[j], ag[j], ao[j]
            t, d = _tanh(cnb[j]), dmb[j]
            dcv = (dcb[j] + ctc[j]) + d * o * (one - t * t)
            di, df, dg, do = dcv * g, dcv * cpb[j], dcv * i, d * t
            if has_act:
                di += ci[j]
                df += cf[j]
                dg += cg[j]
                do += co[j]
            di_[j] = di * i * (one - i)
            df_[j] = df * f * (one - f)
            dg_[j] = dg * (one - g * g)
            do_[j] = do * o * (one - o)
            dcb[j] = dcv * f
