"""oneDNN's convolutions (fgrad.ops.nn.onednn), used by conv.py's impls when the optional
library is installed: each product in both layouts against im2col + GEMM over strides,
paddings, dilations, groups, batch 1 and odd sizes; the layout decision; derivatives through
the primitives; eager against jit, bit for bit; threads; the cache bound; and the fallback
when a library exists but does not load (that one runs without oneDNN too)."""
from __future__ import annotations

import itertools
import threading
import warnings

import numpy as np
import pytest

import fgrad
from fgrad.ops.nn import conv as C
from fgrad.ops.nn import onednn
from fgrad.test_util import check_grads

needs_onednn = pytest.mark.skipif(not onednn.available(),
                                  reason="oneDNN not installed (pip install onednn-cpu-gomp)")

# (N, C, H, W, O, kh, kw, stride, padding ((lo, hi), (lo, hi)), dilation, groups)
GEOMETRIES = [
    (2, 3, 7, 6, 4, 3, 3, (1, 1), ((1, 1), (1, 1)), (1, 1), 1),
    (1, 16, 9, 11, 8, 3, 5, (2, 1), ((0, 1), (2, 2)), (1, 1), 1),      # batch 1, odd, asymmetric
    (3, 8, 10, 9, 12, 3, 3, (2, 2), ((1, 1), (1, 1)), (2, 1), 2),      # dilation, groups
    (2, 6, 8, 8, 6, 3, 3, (1, 1), ((1, 1), (1, 1)), (1, 1), 6),        # depthwise
    (2, 4, 13, 5, 3, 4, 2, (3, 1), ((0, 0), (1, 0)), (1, 2), 1),       # even kernel, stride 3
    (2, 1, 12, 12, 16, 5, 5, (1, 1), ((2, 2), (2, 2)), (1, 1), 1),     # a first layer (C = 1)
    (2, 32, 6, 6, 16, 1, 1, (1, 1), ((0, 0), (0, 0)), (1, 1), 1),      # 1x1
    (2, 16, 5, 7, 32, 5, 5, (1, 1), ((4, 4), (4, 4)), (1, 1), 1),      # padding k - 1 ('full')
    (2, 3, 5, 5, 4, 3, 3, (1, 1), ((4, 4), (4, 4)), (1, 1), 1),        # padding beyond the kernel
    (2, 16, 5, 5, 16, 3, 3, (2, 2), ((5, 0), (0, 6)), (1, 1), 1),      # one-sided padding, stride 2
    (1, 1, 1, 1, 1, 1, 1, (1, 1), ((0, 0), (0, 0)), (1, 1), 1),        # one element
]


def _data(geometry, dtype=np.float32, seed=0):
    N, Cin, H, W, O, kh, kw, stride, padding, dilation, groups = geometry
    rng = np.random.default_rng(seed)
    hw = C._conv_out_hw((H, W), (kh, kw), stride, padding, dilation)
    x = rng.standard_normal((N, Cin, H, W)).astype(dtype)
    w = rng.standard_normal((O, Cin // groups, kh, kw)).astype(dtype)
    b = rng.standard_normal(O).astype(dtype)
    g = rng.standard_normal((N, O) + hw).astype(dtype)
    params = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
    return x, w, b, g, hw, params


def _reference(monkeypatch, x, w, b, g, params):
    """The three products by im2col + GEMM, in float64 (then float32 rounding is the only
    difference left to a correct oneDNN result)."""
    monkeypatch.setattr(C, "conv_algorithm", "gemm")
    x, w, b, g = (a.astype(np.float64) for a in (x, w, b, g))
    out = (C._conv_impl(x, w, b, xp=np, **params),
           C._input_grad_impl(g, w, x_hw=x.shape[2:], xp=np, **params),
           C._weight_grad_impl(x, g, k_hw=w.shape[2:], xp=np, **params))
    monkeypatch.setattr(C, "conv_algorithm", "auto")
    return out


def _close(got, want, name):
    assert got is not None, f"{name}: oneDNN returned no result (no kernel for this geometry)"
    assert got.dtype == np.float32 and got.shape == want.shape, (name, got.dtype, got.shape, want.shape)
    scale = max(1.0, float(np.abs(want).max()))
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-5 * scale, err_msg=name)


@needs_onednn
@pytest.mark.parametrize("layout", onednn.LAYOUTS)
@pytest.mark.parametrize("geometry", GEOMETRIES, ids=[f"g{i}" for i in range(len(GEOMETRIES))])
def test_each_product_matches_im2col(monkeypatch, geometry, layout):
    x, w, b, g, hw, p = _data(geometry)
    want_y, want_dx, want_dw = _reference(monkeypatch, x, w, b, g, p)
    geo = (p["stride"], p["padding"], p["dilation"], p["groups"])
    _close(onednn.conv_forward(x, w, b, *geo, hw, layout), want_y, "forward")
    _close(onednn.conv_forward(x, w, None, *geo, hw, layout), want_y - b.reshape(1, -1, 1, 1), "forward, no bias")
    _close(onednn.conv_backward_data(g, w, x.shape[2:], *geo, layout), want_dx, "input gradient")
    _close(onednn.conv_backward_weights(x, g, w.shape[2:], *geo, layout), want_dw, "weight gradient")


@needs_onednn
@pytest.mark.parametrize("geometry", GEOMETRIES[:4], ids=[f"g{i}" for i in range(4)])
def test_the_impls_take_onednn_and_match_im2col(monkeypatch, geometry):
    x, w, b, g, hw, p = _data(geometry, seed=1)
    want = _reference(monkeypatch, x, w, b, g, p)
    onednn._cache.entries.clear()
    got = (C._conv_impl(x, w, b, xp=np, **p), C._input_grad_impl(g, w, x_hw=x.shape[2:], xp=np, **p),
           C._weight_grad_impl(x, g, k_hw=w.shape[2:], xp=np, **p))
    for name, a, e in zip(("forward", "input gradient", "weight gradient"), got, want):
        _close(a, e, name)
    kinds = sorted(k[0] for k, v in onednn._cache.entries.items() if v is not onednn._UNSUPPORTED)
    assert kinds == ["backward_data", "backward_weights", "forward"]


@needs_onednn
def test_non_contiguous_operands():
    x, w, b, g, hw, p = _data(GEOMETRIES[1])
    geo = (p["stride"], p["padding"], p["dilation"], p["groups"])
    xt = np.asfortranarray(x)
    wt = np.ascontiguousarray(w.transpose(1, 0, 2, 3)).transpose(1, 0, 2, 3)
    gt = g[:, ::-1][:, ::-1]
    assert not (xt.flags.c_contiguous or wt.flags.c_contiguous)
    np.testing.assert_array_equal(onednn.conv_forward(xt, wt, b, *geo, hw), onednn.conv_forward(x, w, b, *geo, hw))
    np.testing.assert_array_equal(onednn.conv_backward_data(gt, wt, x.shape[2:], *geo),
                                  onednn.conv_backward_data(g, w, x.shape[2:], *geo))
    np.testing.assert_array_equal(onednn.conv_backward_weights(xt, g, w.shape[2:], *geo),
                                  onednn.conv_backward_weights(x, g, w.shape[2:], *geo))


def test_the_decision_is_a_function_of_shapes_dtype_and_availability(monkeypatch):
    lay = C._onednn_layout
    on = onednn.available()
    any_ = "any" if on else None
    assert lay(np, "forward", (8, 1, 28, 28), (16, 1, 5, 5), 1, np.float32) == any_
    assert lay(np, "backward_weights", (8, 1, 28, 28), (16, 1, 5, 5), 1, np.float32) == any_
    # the input gradient of a layer with few input channels: oneDNN's plain-layout kernel
    assert lay(np, "backward_data", (8, 3, 28, 28), (16, 3, 5, 5), 1, np.float32) == ("plain" if on else None)
    assert lay(np, "backward_data", (8, 16, 14, 14), (32, 16, 5, 5), 1, np.float32) == any_
    assert lay(np, "backward_data", (8, 4, 14, 14), (4, 1, 3, 3), 4, np.float32) == any_  # depthwise
    # no float64 convolutions on oneDNN's CPU engine; empty arrays stay on fgrad's paths
    assert not onednn.supports_dtype(np.float64)
    assert lay(np, "forward", (8, 16, 14, 14), (32, 16, 5, 5), 1, np.float64) is None
    assert lay(np, "forward", (0, 16, 14, 14), (32, 16, 5, 5), 1, np.float32) is None
    for forced in ("gemm", "fft"):
        monkeypatch.setattr(C, "conv_algorithm", forced)
        assert lay(np, "forward", (8, 16, 14, 14), (32, 16, 5, 5), 1, np.float32) is None


def _cnn_loss(params, x):
    w1, b1, w2, b2 = params
    h = fgrad.nn.relu(C.conv2d(x, w1, padding=1, bias=b1))
    h = C.conv2d(h, w2, stride=2, padding=((0, 1), (1, 0)), bias=b2, groups=2)
    return (h * h).sum()


def _cnn(dtype=np.float32):
    rng = np.random.default_rng(3)
    params = tuple(a.astype(dtype) for a in (rng.standard_normal((8, 3, 3, 3)) * 0.3, rng.standard_normal(8),
                                             rng.standard_normal((4, 4, 3, 3)) * 0.3, rng.standard_normal(4)))
    return params, rng.standard_normal((2, 3, 9, 8)).astype(dtype)


@needs_onednn
def test_eager_and_jit_are_bit_identical():
    params, x = _cnn()
    onednn._cache.entries.clear()
    eager = fgrad.grad(_cnn_loss)(params, x)
    staged = fgrad.jit(fgrad.grad(_cnn_loss))(params, x)
    assert any(v is not onednn._UNSUPPORTED for v in onednn._cache.entries.values())
    for e, s in zip(eager, staged):
        assert e.dtype == np.float32
        np.testing.assert_array_equal(np.asarray(s), e)


@needs_onednn
def test_check_grads_through_the_conv_primitives():
    # float32: every derivative (of every order) is one of the three oneDNN products
    x, w, b, g, hw, p = _data(GEOMETRIES[2], seed=4)
    x, w = x[:, :, :6, :7] * 0.5, w * 0.5
    f = lambda x, w: C.conv2d(x, w, stride=p["stride"], padding=p["padding"],  # noqa: E731
                              dilation=p["dilation"], groups=p["groups"])
    onednn._cache.entries.clear()
    check_grads(f, (x, w), order=2, modes=("fwd", "rev"))
    assert len([v for v in onednn._cache.entries.values() if v is not onednn._UNSUPPORTED]) >= 3


@needs_onednn
def test_threads_get_their_own_primitives():
    x, w, b, g, hw, p = _data(GEOMETRIES[0])
    geo = (p["stride"], p["padding"], p["dilation"], p["groups"])
    want = onednn.conv_forward(x, w, b, *geo, hw)
    bad = []

    def work(seed):
        xi = x * (1 + seed)
        for _ in range(20):
            y = onednn.conv_forward(xi, w, b * (1 + seed), *geo, hw)
            if not np.allclose(y, want * (1 + seed), rtol=1e-5, atol=1e-4):
                bad.append(seed)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not bad


@needs_onednn
def test_the_primitive_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(onednn._cache, "max_items", 4)
    onednn._cache.entries.clear()
    w = np.ones((2, 1, 3, 3), np.float32)
    for n in range(1, 8):
        onednn.conv_forward(np.ones((n, 1, 5, 5), np.float32), w, None, (1, 1), ((0, 0), (0, 0)),
                            (1, 1), 1, (3, 3))
    keys = list(onednn._cache.entries)
    assert len(keys) == 4 and [k[1][0] for k in keys] == [4, 5, 6, 7]  # the most recent kept


@needs_onednn
def test_an_unknown_layout_is_refused():
    x, w, b, g, hw, p = _data(GEOMETRIES[0])
    with pytest.raises(ValueError, match="layout must be one of"):
        onednn.conv_forward(x, w, b, p["stride"], p["padding"], p["dilation"], p["groups"], hw, "nhwc")


@pytest.mark.parametrize("what", ["not a library", "a library without oneDNN"])
def test_a_library_that_fails_to_load_warns_once_and_falls_back(monkeypatch, tmp_path, what):
    if what == "not a library":
        path = tmp_path / "libdnnl.so.3"
        path.write_bytes(b"\x7fELF truncated")
    else:
        import _ctypes  # a shared library that loads, but has no oneDNN symbols
        path = _ctypes.__file__
    monkeypatch.setenv("FGRAD_ONEDNN_LIBRARY", str(path))
    monkeypatch.delenv("FGRAD_ONEDNN", raising=False)  # a user's FGRAD_ONEDNN=0 would skip the load tested
    monkeypatch.setattr(onednn, "_lib_state", {})
    onednn._cache.entries.clear()
    x, w, b, g, hw, p = _data(GEOMETRIES[0])
    with pytest.warns(RuntimeWarning, match="could not be loaded") as record:
        y = C._conv_impl(x, w, b, xp=np, **p)
    assert len(record) == 1 and str(path) in str(record[0].message)
    assert not onednn.available() and str(path) in onednn.load_error()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once: the second call is silent
        y2 = C._conv_impl(x, w, b, xp=np, **p)
    want = _reference(monkeypatch, x, w, b, g, p)[0]
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(y2, y)


def test_fgrad_onednn_0_keeps_fgrad_kernels(monkeypatch):
    monkeypatch.setenv("FGRAD_ONEDNN", "0")
    monkeypatch.setattr(onednn, "_lib_state", {})
    assert not onednn.available() and onednn.load_error() is None
    assert C._onednn_layout(np, "forward", (8, 16, 14, 14), (32, 16, 5, 5), 1, np.float32) is None


@needs_onednn
def test_float64_keeps_fgrads_paths(monkeypatch):
    x, w, b, g, hw, p = _data(GEOMETRIES[0], dtype=np.float64)
    onednn._cache.entries.clear()
    y = C._conv_impl(x, w, b, xp=np, **p)
    assert y.dtype == np.float64 and not onednn._cache.entries
    monkeypatch.setattr(C, "conv_algorithm", "gemm")
    np.testing.assert_allclose(y, C._conv_impl(x, w, b, xp=np, **p), rtol=1e-12, atol=1e-12)


def test_geometries_cover_the_parameters():
    # strides, paddings, dilations, groups, batch 1 and odd sizes all appear above
    strides = {s for g in GEOMETRIES for s in g[7]}
    assert {1, 2, 3} <= strides
    assert any(g[8][0] != g[8][1] or g[8][0][0] != g[8][0][1] for g in GEOMETRIES)
    assert {1, 2} <= {d for g in GEOMETRIES for d in g[9]}
    assert {g[10] for g in GEOMETRIES} >= {1, 2, 6} and any(g[0] == 1 for g in GEOMETRIES)
    assert any(h % 2 for g in GEOMETRIES for h in g[2:4])
    assert list(itertools.chain(onednn.LAYOUTS)) == ["plain", "any"]


@needs_onednn
def test_a_failing_execution_warns_once_and_falls_back(monkeypatch):
    x, w, b, g, hw, p = _data(GEOMETRIES[0])
    monkeypatch.setattr(onednn, "_lib_state", dict(onednn._lib_state))
    onednn._cache.entries.clear()

    def fail(self, args):
        raise onednn.OneDNNError("oneDNN: dnnl_primitive_execute failed with status 5")
    monkeypatch.setattr(onednn._Primitive, "run", fail)
    with pytest.warns(RuntimeWarning, match="failed") as record:
        y = C._conv_impl(x, w, b, xp=np, **p)
        dw = C._weight_grad_impl(x, g, k_hw=w.shape[2:], xp=np, **p)
    assert len(record) == 1
    assert all(v is onednn._UNSUPPORTED for v in onednn._cache.entries.values())
    want = _reference(monkeypatch, x, w, b, g, p)
    np.testing.assert_allclose(y, want[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(dw, want[2], rtol=1e-5, atol=1e-5)


@needs_onednn
def test_one_openmp_thread_unless_asked_and_the_setting_is_put_back(monkeypatch):
    lib = onednn.library()
    if lib.gomp is None:
        pytest.skip("oneDNN runs on an OpenMP runtime other than libgomp")
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr(lib, "default_threads", lib.gomp.omp_get_max_threads())
    before = lib.gomp.omp_get_max_threads()
    assert lib.threads() == (before, 1)
    x, w, b, g, hw, p = _data(GEOMETRIES[1])
    onednn._cache.entries.clear()
    onednn.conv_forward(x, w, b, p["stride"], p["padding"], p["dilation"], p["groups"], hw)
    assert lib.gomp.omp_get_max_threads() == before  # restored after building and running
    assert [k[-1] for k in onednn._cache.entries] == [1]
    # a count set since oneDNN loaded (threadpoolctl does this) is respected, and keyed
    lib.gomp.omp_set_num_threads(before + 1)
    try:
        assert lib.threads() == (before + 1, before + 1)
        y = onednn.conv_forward(x, w, b, p["stride"], p["padding"], p["dilation"], p["groups"], hw)
        assert [k[-1] for k in onednn._cache.entries] == [1, before + 1]
        assert lib.gomp.omp_get_max_threads() == before + 1
    finally:
        lib.gomp.omp_set_num_threads(before)
    want = _reference(monkeypatch, x, w, b, g, p)[0]
    _close(y, want, "forward on more threads")
    monkeypatch.setenv("OMP_NUM_THREADS", str(before))
    assert lib.threads() == (before, before)
