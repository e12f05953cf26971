"""oneDNN's GEMM (fgrad.ops.nn.onednn.gemm) under dot_general, linear and addmm: products over
the layouts the rules pass (row-major, transposed views, rows of a wider array) against float64
NumPy, with and without a bias; bits that do not depend on the call or the buffers' alignment;
the cases it declines (dtype, size, layout, thread counts that differ from NumPy's BLAS); and the
primitives' impls giving oneDNN's values, eager and under jit alike."""
from __future__ import annotations

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

import fgrad
from fgrad.ops import linalg
from fgrad.ops.nn import dense, onednn

needs_onednn = pytest.mark.skipif(not onednn.available(),
                                  reason="oneDNN not installed (pip install onednn-cpu-gomp)")


@pytest.fixture
def one_thread():
    """oneDNN and every BLAS library on one thread: the configuration in which gemm applies
    (by default oneDNN runs one thread and OpenBLAS one per core)."""
    onednn.library()  # loaded first, so that threadpoolctl sees its OpenMP runtime
    with threadpool_limits(1):
        yield


def _layout(x: np.ndarray, kind: str) -> np.ndarray:
    """x itself, a transposed view of a row-major copy of x.T, or x as rows of a wider array."""
    if kind == "N":
        return x
    if kind == "T":
        return np.ascontiguousarray(x.T).T
    wide = np.full((x.shape[0], x.shape[1] + 3), np.float32(9))
    wide[:, :x.shape[1]] = x
    return wide[:, :x.shape[1]]


def _operands(M, K, N, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((M, K)).astype(np.float32), rng.standard_normal((K, N)).astype(np.float32),
            rng.standard_normal(N).astype(np.float32))


@needs_onednn
@pytest.mark.parametrize("M, K, N", [(256, 784, 512), (10, 256, 512), (512, 4, 512), (129, 65, 531)])
@pytest.mark.parametrize("la", ["N", "T", "W"])
@pytest.mark.parametrize("lb", ["N", "T", "W"])
@pytest.mark.parametrize("with_bias", [False, True])
def test_gemm_matches_float64(one_thread, M, K, N, la, lb, with_bias):
    a, b, bias = _operands(M, K, N)
    out = onednn.gemm(_layout(a, la), _layout(b, lb), bias if with_bias else None)
    assert out is not None and out.dtype == np.float32 and out.flags.c_contiguous
    ref = a.astype(np.float64) @ b.astype(np.float64) + (bias if with_bias else 0)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=2e-6 * np.sqrt(K) * 4)


@needs_onednn
def test_gemm_bits_do_not_depend_on_call_or_alignment(one_thread):
    a, b, bias = _operands(256, 512, 512, seed=3)
    first = onednn.gemm(a, b.T.copy().T, bias)
    for shift in (1, 3, 16):  # the same values at another address (4-byte steps)
        buf_a = np.empty(a.size + shift, np.float32)
        buf_b = np.empty(b.size + shift, np.float32)
        a2 = buf_a[shift:].reshape(a.shape)
        b2 = buf_b[shift:].reshape(b.T.shape).T
        a2[...] = a
        b2[...] = b
        out = onednn.gemm(a2, b2, bias)
        assert out.tobytes() == first.tobytes()
    assert onednn.gemm(a, b.T.copy().T, bias).tobytes() == first.tobytes()


@needs_onednn
def test_gemm_declines_what_it_does_not_run(one_thread):
    a, b, bias = _operands(256, 512, 512)
    assert onednn.gemm_eligible(a, b)
    assert onednn.gemm(a.astype(np.float64), b.astype(np.float64)) is None     # float32 only
    assert onednn.gemm(a[:8, :64], b[:64, :64]) is None                         # below GEMM_MIN_MACS_THIN
    assert onednn.gemm(a[:128, :64], b[:64, :128]) is None                      # 2^20, not thin: below GEMM_MIN_MACS
    assert onednn.gemm(a[:16, :256], b[:256, :256]) is not None                 # 2^20 and thin (16 rows)
    assert onednn.gemm(a[:, ::2], b[::2]) is None                               # no unit stride: not BLAS's layout
    assert onednn.gemm(a[::-1], b) is None                                      # negative stride
    assert onednn.gemm(a, b[:, :300].T.copy()) is None                          # K mismatch
    assert onednn.gemm(a, b, bias[:10]) is None                                 # bias of the wrong length
    assert onednn.gemm(a, b, bias.astype(np.float64)) is None


@needs_onednn
def test_gemm_needs_numpys_blas_thread_count(one_thread, monkeypatch):
    a, b, _ = _operands(256, 512, 512)

    monkeypatch.setattr(onednn, "_blas_thread_getters", lambda: [lambda: 1, lambda: 4])
    assert onednn.gemm(a, b) is None   # a BLAS library on 4 threads: OpenBLAS keeps the product
    monkeypatch.setattr(onednn, "_blas_thread_getters", lambda: [])
    assert onednn.gemm(a, b) is None   # nothing known about NumPy's BLAS
    monkeypatch.setattr(onednn, "_blas_thread_getters", lambda: [lambda: 1])
    assert onednn.gemm(a, b) is not None


@needs_onednn
def test_blas_thread_getters_follow_threadpool_limits():
    onednn.library()
    getters = onednn._blas_thread_getters()
    assert getters  # NumPy's BLAS at least
    with threadpool_limits(1):
        assert [g() for g in getters] == [1] * len(getters)
    with threadpool_limits(2):
        assert [g() for g in getters] == [2] * len(getters)


def test_gemm_without_library_is_none(monkeypatch):
    monkeypatch.setattr(onednn, "library", lambda: None)
    a, b, _ = _operands(256, 512, 512)
    assert onednn.gemm(a, b) is None
    # the primitives fall back to NumPy's BLAS
    np.testing.assert_array_equal(linalg.matmul_2d(a, b, xp=np), a @ b)


@needs_onednn
def test_impls_run_onednn_and_match_numpy(one_thread):
    """dot_general in every orientation its rules bind (and the 3-D lhs it folds), linear and
    addmm: oneDNN's bits where it applies, NumPy's float64 values within float32 rounding."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((256, 784)).astype(np.float32)
    w = rng.standard_normal((512, 784)).astype(np.float32)
    b = rng.standard_normal(512).astype(np.float32)
    g = rng.standard_normal((256, 512)).astype(np.float32)
    x64, w64, g64 = (v.astype(np.float64) for v in (x, w, g))
    cases = [  # (lhs, rhs, dimension_numbers, the product by float64 NumPy, the same operands for gemm)
        (x, w, (((1,), (1,)), ((), ())), x64 @ w64.T, (x, w.T)),         # forward x @ w.T
        (g, w, (((1,), (0,)), ((), ())), g64 @ w64, (g, w)),             # input gradient
        (g, x, (((0,), (0,)), ((), ())), g64.T @ x64, (g.T, x)),         # weight gradient
        (x.reshape(2, 128, 784), w, (((2,), (1,)), ((), ())), (x64 @ w64.T).reshape(2, 128, 512), (x, w.T)),
    ]
    for lhs, rhs, dn, ref, (a, bb) in cases:
        out = linalg._dot_general_impl(lhs, rhs, dimension_numbers=dn, xp=np)
        np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-4)
        assert out.tobytes() == onednn.gemm(a, bb).reshape(out.shape).tobytes()
    lin = dense._linear_impl(x, w, b, xp=np)
    np.testing.assert_allclose(lin, x64 @ w64.T + b, rtol=1e-5, atol=1e-4)
    assert lin.tobytes() == onednn.gemm(x, w.T, b).tobytes()
    assert dense._addmm_impl(b, x, w.T, xp=np).tobytes() == lin.tobytes()


@needs_onednn
def test_jit_and_eager_give_the_same_bits(one_thread):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((256, 512)).astype(np.float32)
    w = rng.standard_normal((512, 512)).astype(np.float32) * 0.05
    b = rng.standard_normal(512).astype(np.float32)

    def loss(w, b, x):
        h = fgrad.nn.relu(x @ w.T + b)
        return (h * h).sum()

    eager = fgrad.grad(loss, argnums=(0, 1))(w, b, x)
    jitted = fgrad.jit(fgrad.grad(loss, argnums=(0, 1)))(w, b, x)
    for e, j in zip(eager, jitted):
        assert np.asarray(e).tobytes() == np.asarray(j).tobytes()
