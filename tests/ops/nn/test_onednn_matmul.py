"""oneDNN's matmul primitive (fgrad.ops.nn.onednn.matmul_primitive), used by rnn_scan's loops
for the per-step GEMMs: products over shapes and strides (transposed views, rows of a wider
array) against float64 NumPy, the cases it declines, and the cache."""
from __future__ import annotations

import numpy as np
import pytest

from fgrad.ops.nn import onednn

needs_onednn = pytest.mark.skipif(not onednn.available(),
                                  reason="oneDNN not installed (pip install onednn-cpu-gomp)")


def _operands(M, K, N, b_transposed, out_cols, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((N, K)).astype(np.float32).T if b_transposed else \
        rng.standard_normal((K, N)).astype(np.float32)
    wide = np.full((M, out_cols), np.float32(7))
    return a, b, wide


@needs_onednn
@pytest.mark.parametrize("M, K, N", [(20, 256, 1024), (20, 1024, 256), (1, 1, 1), (3, 5, 7), (17, 33, 9)])
@pytest.mark.parametrize("b_transposed", [False, True])
@pytest.mark.parametrize("extra_cols", [0, 5])
@pytest.mark.parametrize("packed", [False, True])
def test_matmul_matches_numpy(M, K, N, b_transposed, extra_cols, packed):
    a, b, wide = _operands(M, K, N, b_transposed, N + extra_cols)
    out = wide[:, :N]
    prim = onednn.matmul_primitive(a, b, out, packed=packed)
    assert prim is not None and prim.fits(a, b, out)
    with onednn.running():
        prim.set_b(b)
        prim(a.ctypes.data, out.ctypes.data)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5 * np.sqrt(K))
    assert (wide[:, N:] == 7).all()  # columns beyond out untouched
    assert onednn.matmul_primitive(a, b, out, packed=packed) is prim  # cached per geometry


@needs_onednn
def test_packed_b_is_a_copy_made_by_set_b():
    a, b, out = _operands(6, 16, 32, True, 32)
    prim = onednn.matmul_primitive(a, b, out, packed=True)
    owner = object()
    with onednn.running():
        prim.set_b(b, owner)
        prim(a.ctypes.data, out.ctypes.data)
        first = out.copy()
        b2 = b * 2
        prim.set_b(b2, None)
        prim(a.ctypes.data, out.ctypes.data)
    assert prim.b_owner is None
    np.testing.assert_allclose(out, 2 * first, rtol=1e-5, atol=1e-5)


@needs_onednn
def test_matmul_declines_what_it_does_not_run():
    a, b, out = _operands(4, 3, 2, False, 2)
    assert onednn.matmul_primitive(a.astype(np.float64), b.astype(np.float64), out.astype(np.float64)) is None
    assert onednn.matmul_primitive(a, b[:2], out) is None             # K mismatch
    assert onednn.matmul_primitive(a, b, np.empty((4, 3), np.float32)) is None
    assert onednn.matmul_primitive(a[::-1], b, out) is None            # negative stride
    assert onednn.matmul_primitive(a, b, out[:, :1].reshape(4, 1)[:0]) is None


def test_matmul_without_library_is_none(monkeypatch):
    monkeypatch.setattr(onednn, "library", lambda: None)
    a, b, out = _operands(4, 3, 2, False, 2)
    assert onednn.matmul_primitive(a, b, out) is None
    with onednn.running():  # a no-op without the library
        pass
