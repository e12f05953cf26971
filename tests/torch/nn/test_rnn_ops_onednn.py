"""rnn_scan's loops with oneDNN's matmul primitive for the per-step GEMMs (float32, when the
optional library is installed) against the same loops on NumPy's matmul (FGRAD_ONEDNN=0's
path): forward and backward of every mode, with bias, projection, reverse direction and
packed lengths; eager against jit bit for bit; and that the loops run without the library."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad
from fgrad.ops.nn import onednn
from fgrad.torch.nn import _rnn_ops as R

needs_onednn = pytest.mark.skipif(not onednn.available(),
                                  reason="oneDNN not installed (pip install onednn-cpu-gomp)")

# (mode, has_bias, proj_size, reverse, lengths, steps): from R._PACK_FROM_STEPS steps the
# loops multiply by W_hh (W_hr) reordered into oneDNN's blocked layout, below by W_hh as it is
CONFIGS = [
    ("LSTM", True, 0, False, None, 5),
    ("LSTM", True, 0, True, None, 9),
    ("LSTM", False, 3, False, None, 9),
    ("LSTM", True, 3, True, (5, 2, 4), 5),
    ("LSTM", True, 3, False, (9, 2, 4), 9),
    ("LSTM", True, 0, False, (5, 1, 3), 5),
    ("LSTM", False, 0, True, (8, 9, 3), 9),
    ("GRU", True, 0, True, (4, 5, 2), 5),
    ("GRU", False, 0, False, None, 9),
    ("RNN_TANH", True, 0, False, (3, 9, 9), 9),
    ("RNN_RELU", True, 0, True, None, 5),
]


def _inputs(mode, has_bias, proj, T=5, B=3, H=6, seed=0):
    rng = np.random.default_rng(seed)
    G = R.gate_count(mode) * H
    Hr = proj or H
    f = lambda *s: rng.uniform(-1, 1, s).astype(np.float32)  # noqa: E731
    return R.scan_inputs(mode, f(T, B, G), f(B, Hr), f(B, H) if mode == "LSTM" else None, f(G, Hr),
                         f(G) if has_bias else None, f(Hr, H) if proj else None)


def _run(xs, ct, params):
    Y = R._scan_impl(*xs, xp=np, **params)
    return Y, R._bwd_impl(ct, Y, *xs, xp=np, **params)


@needs_onednn
@pytest.mark.parametrize("mode, has_bias, proj, reverse, lengths, steps", CONFIGS)
def test_scan_and_bptt_with_onednn_match_numpy(monkeypatch, mode, has_bias, proj, reverse, lengths, steps):
    xs = _inputs(mode, has_bias, proj, T=steps)
    params = dict(mode=mode, reverse=reverse, lengths=lengths, has_bias=has_bias, has_proj=bool(proj))
    Y_on = R._scan_impl(*xs, xp=np, **params)
    ct = np.random.default_rng(1).uniform(-1, 1, Y_on.shape).astype(np.float32)
    Y_on, g_on = _run(xs, ct, params)
    monkeypatch.setattr(onednn, "available", lambda: False)
    Y_off, g_off = _run(xs, ct, params)
    np.testing.assert_allclose(Y_on, Y_off, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g_on, g_off, rtol=1e-4, atol=1e-5)


@needs_onednn
def test_lstm_steps_use_the_cached_primitive():
    """The forward GEMM reads h from contiguous buffers (h0 copied into one): one packed
    primitive, built once and found again on the next call."""
    xs = _inputs("LSTM", True, 0, T=R._PACK_FROM_STEPS, B=2, H=5)
    params = dict(mode="LSTM", reverse=False, lengths=None, has_bias=True, has_proj=False)
    R._scan_impl(*xs, xp=np, **params)
    keys = {k for k in onednn._cache.entries if k[0] == "matmul" and k[1:4] == (2, 5, 20)}
    assert len(keys) == 1 and next(iter(keys))[6] is True
    prims = [onednn._cache.entries[k] for k in keys]
    R._scan_impl(*xs, xp=np, **params)
    assert [onednn._cache.entries[k] for k in keys] == prims


@pytest.mark.parametrize("reverse", [False, True])
def test_float32_lstm_scan_eager_and_jit_agree_bit_for_bit(reverse):
    """jit runs the same impls as eager (the GEMM's kernel is a function of shapes, dtype and
    the library), so the scan and its VJP give the same bits, with or without oneDNN."""
    xs = _inputs("LSTM", True, 0, T=6, B=3, H=8)
    ct = np.random.default_rng(2).uniform(-1, 1, (6, 3, 48)).astype(np.float32)

    def f(*xs):
        y, pull = fgrad.vjp(lambda *a: R.rnn_scan("LSTM", *a, reverse=reverse), *xs)
        return (y,) + tuple(pull(ct))
    eager, jitted = f(*xs), fgrad.jit(f)(*xs)
    for k, (a, b) in enumerate(zip(eager, jitted)):
        assert np.array_equal(np.asarray(a), np.asarray(b)), k


def test_loops_run_without_onednn(monkeypatch):
    monkeypatch.setattr(onednn, "available", lambda: False)
    xs = _inputs("LSTM", True, 3)
    params = dict(mode="LSTM", reverse=True, lengths=(5, 2, 4), has_bias=True, has_proj=True)
    ref = R._scan_composite(tuple(x.astype(np.float64) for x in xs), **params)
    np.testing.assert_allclose(R._scan_impl(*xs, xp=np, **params), np.asarray(ref), rtol=1e-4, atol=1e-5)


@needs_onednn
def test_a_failing_onednn_product_falls_back_to_numpy(monkeypatch):
    """oneDNN reporting a failure while running (not expected once a primitive exists): the
    loop finishes with NumPy's matmul, warning once, and the result is the NumPy path's."""
    xs = _inputs("LSTM", True, 0, T=9)
    params = dict(mode="LSTM", reverse=False, lengths=None, has_bias=True, has_proj=False)

    def fail(self, a_ptr, out_ptr):
        raise onednn.OneDNNError("oneDNN: dnnl_primitive_execute (matmul) failed with status 5 (runtime error)")
    monkeypatch.setattr(onednn.Matmul, "__call__", fail)
    monkeypatch.setattr(R, "_WARNED", {})
    with pytest.warns(RuntimeWarning, match="NumPy's matmul computes it"):
        Y = R._scan_impl(*xs, xp=np, **params)
    monkeypatch.setattr(onednn, "available", lambda: False)
    np.testing.assert_array_equal(Y, R._scan_impl(*xs, xp=np, **params))


@needs_onednn
def test_threads_run_their_own_primitives():
    """Primitives are cached per thread (their memory objects carry the call's buffers), so
    LSTM loops running at once in several threads give the single-thread results."""
    import threading
    xs = _inputs("LSTM", True, 0, T=9, B=4, H=8)
    params = dict(mode="LSTM", reverse=False, lengths=None, has_bias=True, has_proj=False)
    ref = R._scan_impl(*xs, xp=np, **params)
    results, errors = [], []

    def work():
        try:
            for _ in range(5):
                results.append(R._scan_impl(*xs, xp=np, **params))
        except Exception as e:  # surfaced below: an assertion in a thread would be lost
            errors.append(e)
    threads = [threading.Thread(target=work) for _ in range(3)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors and len(results) == 15
    for Y in results:
        np.testing.assert_array_equal(Y, ref)
