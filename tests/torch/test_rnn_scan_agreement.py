"""rnn_scan's recurrence is written twice in fgrad/torch/nn/_rnn_ops.py: fused NumPy loops
(`_scan_impl`, the forward, and `_bwd_impl`, its BPTT vector-Jacobian product) that run every
ordinary forward and backward pass, and the same recurrence in fgrad ops (`_scan_composite`,
each step through `cell_math`) that every higher derivative differentiates. This file proves
that the two are one function, to order 2, for every configuration the primitive has: each
mode (RNN_TANH, RNN_RELU, LSTM, GRU), with and without b_hh, LSTM with and without a
projection, with and without lengths (rows idle from the start, midway, never), forwards and
reversed, with cotangents on the state columns only and on the activation columns as well:

  order 0  _scan_impl(xs)            == _scan_composite(xs)
  order 1  _bwd_impl(ct, Y, xs)      == the VJP of _scan_composite (exactly: _bwd_composite)
           finite differences of _scan_impl along v == the JVP of _scan_composite along v
  order 2  finite differences of _bwd_impl along (dct, v) == the JVP of _bwd_composite
           <u, finite differences of _bwd_impl along (dct, v)> == <VJP of _bwd_composite (u), (dct, v)>

so a change to either copy that the other does not follow fails here, whichever order it
touches. (The order-2 rows compare the fused first derivative's own derivative, taken
numerically, with the composite's second derivative, which is what `hessian`, `jvp` and
`create_graph` through a layer compute.)"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import fgrad
from fgrad.torch.nn import _rnn_ops as R

T, B, H = 4, 3, 3
PROJ = 2
EPS = 1e-6


def _configs():
    for mode in R.MODES:
        for reverse, lengths, bias in itertools.product((False, True), (None, (4, 0, 2)), (True, False)):
            for proj in ((None, PROJ) if mode == "LSTM" else (None,)):
                yield mode, reverse, lengths, bias, proj


CONFIGS = list(_configs())


def _id(config) -> str:
    mode, reverse, lengths, bias, proj = config
    return ",".join([mode] + (["reverse"] if reverse else []) + (["lengths"] if lengths else [])
                    + ([] if bias else ["nobias"]) + (["proj"] if proj else []))


def _inputs(mode, bias, proj, dtype, seed=0):
    rng = np.random.default_rng(seed)
    G = R.gate_count(mode) * H
    Hr = proj or H

    def draw(*shape, scale=0.6):
        return (scale * rng.standard_normal(shape)).astype(dtype)
    xs = R.scan_inputs(mode, draw(T, B, G), draw(B, Hr), draw(B, H) if mode == "LSTM" else None,
                       draw(G, Hr), draw(G) if bias else None, draw(Hr, H) if proj else None)
    return tuple(xs)


def _params(mode, reverse, lengths, bias, proj) -> dict:
    return dict(mode=mode, reverse=reverse, lengths=lengths, has_bias=bias, has_proj=proj is not None)


def _fused_scan(xs, params):
    return R._scan_impl(*xs, xp=np, **params)


def _fused_bwd(ct, xs, params):
    return R._bwd_impl(ct, _fused_scan(xs, params), *xs, xp=np, **params)


def _ct(Y, params, act, rng):
    """A cotangent of the scan's output: on every column (act) or on the state columns only."""
    ct = rng.standard_normal(Y.shape).astype(Y.dtype)
    if not act:
        ct[:, :, _state_width(params):] = 0
    return ct


def _state_width(params) -> int:
    return R.state_width(params["mode"], H, PROJ if params["has_proj"] else H)


def _shift(arrays, directions, eps):
    return tuple(a + eps * d for a, d in zip(arrays, directions))


@pytest.mark.parametrize("config", CONFIGS, ids=_id)
@pytest.mark.parametrize("act", [False, True], ids=["state_ct", "all_ct"])
def test_fused_and_composite_agree_to_order_2(config, act):
    params = _params(*config)
    rng = np.random.default_rng(1)
    xs = _inputs(config[0], config[3], config[4], np.float64)
    # order 0
    Y = _fused_scan(xs, params)
    np.testing.assert_allclose(Y, np.asarray(R._scan_composite(xs, **params)), rtol=1e-13, atol=1e-13)
    if params["lengths"] is not None:  # the idle rows really are idle (the test covers that path)
        assert np.all(Y[:, 1, _state_width(params):] == 0)
    # order 1, reverse mode: the fused BPTT against the composite's VJP
    ct = _ct(Y, params, act, rng)
    g_fused = _fused_bwd(ct, xs, params)
    g_comp = np.asarray(R._bwd_composite(ct, xs, params))
    assert g_fused.shape == g_comp.shape
    np.testing.assert_allclose(g_fused, g_comp, rtol=1e-12, atol=1e-12)
    # order 1, forward mode: finite differences of the fused scan against the composite's JVP
    v = tuple(rng.standard_normal(x.shape) for x in xs)
    fd1 = (_fused_scan(_shift(xs, v, EPS), params) - _fused_scan(_shift(xs, v, -EPS), params)) / (2 * EPS)
    _, jvp1 = fgrad.jvp(lambda *ys: R._scan_composite(ys, **params), xs, v)
    np.testing.assert_allclose(fd1, np.asarray(jvp1), rtol=1e-6, atol=1e-7)
    # order 2: the fused BPTT's own derivative (finite differences in ct and every input)
    # against the composite's second derivative, forwards and in reverse
    args, dirs = (ct,) + xs, (_ct(Y, params, act, rng),) + v
    fd2 = (_fused_bwd(*_split_ct(_shift(args, dirs, EPS)), params)
           - _fused_bwd(*_split_ct(_shift(args, dirs, -EPS)), params)) / (2 * EPS)

    def comp_bwd(c, *ys):
        return R._bwd_composite(c, ys, params)
    _, jvp2 = fgrad.jvp(comp_bwd, args, dirs)
    np.testing.assert_allclose(fd2, np.asarray(jvp2), rtol=1e-6, atol=1e-7)
    u = rng.standard_normal(g_fused.shape)
    _, f_vjp = fgrad.vjp(comp_bwd, *args)
    lhs = sum(float(np.vdot(np.asarray(a), d)) for a, d in zip(f_vjp(u), dirs))
    assert np.isclose(lhs, float(np.vdot(u, fd2)), rtol=1e-6, atol=1e-7)


def _split_ct(args):
    return args[0], args[1:]


@pytest.mark.parametrize("mode", R.MODES)
def test_fused_and_composite_agree_in_float32(mode):
    """float32 takes other fused paths (the LSTM step's Numba kernel is compiled per dtype,
    the sigmoid is (1 + tanh(x / 2)) / 2): orders 0 and 1 agree to float32 precision."""
    proj = PROJ if mode == "LSTM" else None
    params = _params(mode, True, (4, 1, 3), True, proj)
    xs = _inputs(mode, True, proj, np.float32)
    Y = _fused_scan(xs, params)
    assert Y.dtype == np.float32
    np.testing.assert_allclose(Y, np.asarray(R._scan_composite(xs, **params)), rtol=2e-6, atol=2e-6)
    ct = _ct(Y, params, True, np.random.default_rng(2))
    g = _fused_bwd(ct, xs, params)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, np.asarray(R._bwd_composite(ct, xs, params)), rtol=2e-5, atol=2e-5)


def test_the_primitive_runs_the_fused_loops():
    """The agreement above is about the code that runs: rnn_scan's impl and its VJP's impl are
    the fused loops (def_impl keeps the function as raw_impl)."""
    assert R.rnn_scan_p.raw_impl is R._scan_impl
    assert R.rnn_scan_bwd_p.raw_impl is R._bwd_impl


LSTM_CONFIGS = [c for c in CONFIGS if c[0] == "LSTM"]


@pytest.mark.parametrize("config", LSTM_CONFIGS, ids=_id)
def test_float32_lstm_kernel_agrees_over_saturating_gates(config):
    """The float32 LSTM forward step is one Numba kernel with its own tanh (a rational fit,
    clamped beyond +-7.9): over pre-activations out to +-20 (both saturated ends, and the
    clamp) it agrees with the composite, reversed, packed and projected alike."""
    mode, reverse, lengths, bias, proj = config
    params = _params(mode, reverse, lengths, bias, proj)
    xs = list(_inputs(mode, bias, proj, np.float32, seed=3))
    xs[0] = (np.random.default_rng(4).uniform(-20, 20, xs[0].shape)).astype(np.float32)
    Y = _fused_scan(tuple(xs), params)
    assert Y.dtype == np.float32
    np.testing.assert_allclose(Y, np.asarray(R._scan_composite(tuple(xs), **params)), rtol=2e-6, atol=2e-6)


def test_float32_lstm_kernel_passes_nan_on():
    """A NaN in one gate pre-activation makes that row's state NaN from that step on, as the
    composite (and PyTorch) do: the kernel's clamp must not turn NaN into +-1."""
    params = _params("LSTM", False, None, True, None)
    xs = list(_inputs("LSTM", True, None, np.float32))
    xs[0] = xs[0].copy()
    xs[0][1, 0, 0] = np.nan          # step 1, row 0, input gate of unit 0
    Y = _fused_scan(tuple(xs), params)
    ref = np.asarray(R._scan_composite(tuple(xs), **params))
    np.testing.assert_array_equal(np.isnan(Y), np.isnan(ref))
    assert np.isnan(Y[1, 0, 0]) and not np.isnan(Y[0]).any() and not np.isnan(Y[:, 1:]).any()
