"""Cases for the recurrence primitives rnn_scan and rnn_scan_bwd of fgrad.torch.nn._rnn_ops (format:
see tests/ops/test_primitives.py). The NumPy reference writes PyTorch's cell equations out step by
step and lays the output out as the primitive does: per step and row the state (h, and c for
LSTM) then the gate activations (LSTM i, f, g, o; GRU r, z, n and W_hn h + b_hn); rows past
their length carry their state and have zero activations."""
import numpy as np

from fgrad.torch.nn import _rnn_ops as R


def _sig(x):
    return 1 / (1 + np.exp(-x))


def np_scan(mode, xw, h0, c0, w, b, w_hr=None, reverse=False, lengths=None):
    T, B, G = xw.shape
    H = G // R.gate_count(mode)
    h, c = h0, c0
    rows = [None] * T
    for s in range(T):
        t = T - 1 - s if reverse else s
        hh = h @ w.T + (0 if b is None else b)
        if mode == "LSTM":
            a = xw[t] + hh
            i, f, g, o = _sig(a[:, :H]), _sig(a[:, H:2 * H]), np.tanh(a[:, 2 * H:3 * H]), _sig(a[:, 3 * H:])
            c_new = f * c + i * g
            h_new = o * np.tanh(c_new)
            if w_hr is not None:
                h_new = h_new @ w_hr.T
            acts = [i, f, g, o]
        elif mode == "GRU":
            r = _sig(xw[t][:, :H] + hh[:, :H])
            z = _sig(xw[t][:, H:2 * H] + hh[:, H:2 * H])
            n = np.tanh(xw[t][:, 2 * H:] + r * hh[:, 2 * H:])
            h_new, c_new, acts = (1 - z) * n + z * h, None, [r, z, n, hh[:, 2 * H:]]
        else:
            a = xw[t] + hh
            h_new, c_new, acts = (np.tanh(a) if mode == "RNN_TANH" else np.maximum(a, 0)), None, []
        if lengths is not None:
            run = (np.asarray(lengths) > t)[:, None]
            h_new = np.where(run, h_new, h)
            c_new = None if c_new is None else np.where(run, c_new, c)
            acts = [np.where(run, a, 0) for a in acts]
        h, c = h_new, c_new
        rows[t] = np.concatenate([h] + ([c] if c is not None else []) + acts, 1)
    return np.stack(rows)


def _inputs(mode, T=3, B=2, H=3, I_proj=None, bias=True):
    """(xw, h0[, c0], w_hh[, b_hh][, w_hr]) as the primitive takes them."""
    G = R.gate_count(mode) * H
    Hr = I_proj or H

    def make(rng, dt):
        arrs = [rng.uniform(-1, 1, (T, B, G)), rng.uniform(-1, 1, (B, Hr))]
        if mode == "LSTM":
            arrs.append(rng.uniform(-1, 1, (B, H)))
        arrs.append(rng.uniform(-0.7, 0.7, (G, Hr)))
        if bias:
            arrs.append(rng.uniform(-0.5, 0.5, (G,)))
        if I_proj:
            arrs.append(rng.uniform(-0.7, 0.7, (Hr, H)))
        return tuple(a.astype(dt) for a in arrs)
    return make


def _case(mode, reverse=False, lengths=None, proj=None, bias=True):
    def fn(*xs):
        xw, h0, c0, w, b, w_hr = R._split(xs, mode, bias, proj is not None)
        return R.rnn_scan(mode, xw, h0, c0, w, b, w_hr, reverse=reverse, lengths=lengths)

    def np_fn(*xs):
        xw, h0, c0, w, b, w_hr = R._split(xs, mode, bias, proj is not None)
        return np_scan(mode, xw, h0, c0, w, b, w_hr, reverse, lengths)
    tag = ",".join([mode] + (["reverse"] if reverse else []) + (["lengths"] if lengths else [])
                   + (["proj"] if proj else []) + ([] if bias else ["nobias"]))
    # the VJP binds rnn_scan_bwd (seen in the vjp's jaxpr); its own derivatives run through
    # check_grads' second order
    return (f"rnn_scan[{tag}]", fn, np_fn, _inputs(mode, I_proj=proj, bias=bias),
            {"f32": True, "prims": ("rnn_scan_bwd",)})


CASES = [
    _case("LSTM"),
    _case("LSTM", reverse=True, lengths=(3, 1)),
    _case("LSTM", proj=2, lengths=(2, 3)),
    _case("GRU"),
    _case("GRU", reverse=True, lengths=(1, 3), bias=False),
    _case("RNN_TANH", lengths=(3, 2)),
    _case("RNN_RELU", reverse=True),
]
