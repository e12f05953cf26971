"""float32 log_softmax, its backward and cross-entropy's gathered nll on the CPU
(fgrad/ops/nn/_softmax_kernels.py, _softmax_rows.py and dense._nll_picked): the kernel's exp
within 1 ulp of the exact one, log_softmax and its backward against float64 references at
every row length around the vector width, special values as NumPy's path treats them, the
same bits for every layout and vector width, and the nll that gathers at the targets against
the one-hot weights it replaces, with derivatives of orders 1 and 2 in both modes."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import fgrad
import fgrad.numpy as fnp
from fgrad.ops.nn import _softmax_rows
from fgrad.ops.nn import dense as D
from fgrad.test_util import check_grads

numba = pytest.importorskip("numba")
K = pytest.importorskip("fgrad.ops.nn._softmax_kernels")


@pytest.fixture
def every_size(monkeypatch):
    """The kernels for arrays of any size (they start at _softmax_rows.MIN_ELEMENTS)."""
    monkeypatch.setattr(_softmax_rows, "MIN_ELEMENTS", 0)


@numba.njit
def _exp_all(x, out):
    for i in range(x.size):
        out[i] = K.expf(x[i])


def _ulps(got, exact):
    """|got - exact| in units of the float32 spacing at the exact value."""
    return np.abs(got.astype(np.float64) - exact) / np.spacing(np.abs(exact).astype(np.float32)).astype(np.float64)


def test_expf_within_one_ulp_and_special_values():
    x = np.linspace(-104.0, 88.7, 400_001, dtype=np.float32)
    out = np.empty_like(x)
    _exp_all(x, out)
    exact = np.exp(x.astype(np.float64))
    assert _ulps(out, exact).max() <= 1.0
    # subnormal results are rounded once; beyond the range: 0 and inf; NaN passes
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, -87.5, -100.0, -103.97, -104.5,
                        88.72, 88.73, 100.0], np.float32)
    got = np.empty_like(special)
    _exp_all(special, got)
    with np.errstate(over="ignore"):
        want = np.exp(special.astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(got, want)


def _reference(x, axis):
    r = x.astype(np.float64)
    r = r - r.max(axis=axis, keepdims=True)
    return r - np.log(np.exp(r).sum(axis=axis, keepdims=True))


def test_small_arrays_keep_numpys_code():
    x = np.random.default_rng(0).standard_normal((4, 50)).astype(np.float32)
    assert x.size < _softmax_rows.MIN_ELEMENTS and _softmax_rows.log_softmax(x, 1) is None
    m = x.max(axis=1, keepdims=True)
    s = x - m
    np.testing.assert_array_equal(D._log_softmax_impl(x, axis=1, xp=np),
                                  s - np.log(np.exp(s).sum(axis=1, keepdims=True)))
    big = np.zeros((8, _softmax_rows.MIN_ELEMENTS // 8), np.float32)
    assert _softmax_rows.log_softmax(big, 1) is not None


@pytest.mark.parametrize("C", [1, 3, 15, 16, 17, 31, 33, 1000])
def test_log_softmax_and_backward_against_float64(C, every_size):
    rng = np.random.default_rng(C)
    x = (rng.standard_normal((9, C)) * 5).astype(np.float32)
    out = D._log_softmax_impl(x, axis=1, xp=np)
    assert out.dtype == np.float32 and out.flags.c_contiguous
    ref = _reference(x, 1)
    assert np.all(np.abs(out - ref) <= 1e-6 * (1.0 + np.abs(ref)))
    ct = rng.standard_normal(x.shape).astype(np.float32)
    g = D._log_softmax_grad_impl(ct, out, axis=1, xp=np)
    c64 = ct.astype(np.float64)
    gref = c64 - np.exp(out.astype(np.float64)) * c64.sum(axis=1, keepdims=True)
    assert np.all(np.abs(g - gref) <= 1e-6 * (np.abs(gref) + np.abs(c64).sum(axis=1, keepdims=True)))


def test_special_values_as_numpys_path(every_size):
    inf, nan = np.inf, np.nan
    rows = np.array([[1.0, -inf, 2.0, -inf] * 5,     # masked classes: -inf there, the rest finite
                     [-inf] * 20,                      # nothing left: NaN (0 / 0), as NumPy's path
                     [1.0, inf] + [0.0] * 18,          # +inf: NaN at it, -inf elsewhere
                     [nan] + [1.0] * 19,               # a NaN anywhere: the whole row
                     [1.0] * 19 + [nan],
                     [3e38, -3e38] + [0.0] * 18],     # huge finite values (x - m overflows)
                    np.float32)
    got = D._log_softmax_impl(rows, axis=1, xp=np)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):  # NumPy's path in float32
        m = rows.max(axis=1, keepdims=True)
        s = rows - np.where(np.isfinite(m), m, np.float32(0))
        want = s - np.log(np.exp(s).sum(axis=1, keepdims=True))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got) & (got < 0), np.isinf(want) & (want < 0))
    fin = np.isfinite(want)
    np.testing.assert_allclose(got[fin], want[fin], rtol=1e-6, atol=1e-6)


def test_the_same_bits_for_every_axis_and_layout(every_size):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((5, 37, 6)).astype(np.float32)
    last = D._log_softmax_impl(np.ascontiguousarray(np.moveaxis(x, 1, -1)), axis=2, xp=np)
    mid = D._log_softmax_impl(x, axis=1, xp=np)
    assert mid.flags.c_contiguous
    np.testing.assert_array_equal(np.moveaxis(last, -1, 1), mid)
    xf = np.asfortranarray(x)
    np.testing.assert_array_equal(D._log_softmax_impl(xf, axis=1, xp=np), mid)
    ct = rng.standard_normal(x.shape).astype(np.float32)
    g_mid = D._log_softmax_grad_impl(ct, mid, axis=1, xp=np)
    g_last = D._log_softmax_grad_impl(np.ascontiguousarray(np.moveaxis(ct, 1, -1)), last, axis=2, xp=np)
    np.testing.assert_array_equal(np.moveaxis(g_last, -1, 1), g_mid)
    # a broadcast cotangent (a sum's) is read as it is laid out
    ctb = np.broadcast_to(np.float32(0.5), x.shape)
    np.testing.assert_array_equal(D._log_softmax_grad_impl(ctb, mid, axis=1, xp=np),
                                  D._log_softmax_grad_impl(np.full(x.shape, 0.5, np.float32), mid, axis=1, xp=np))


def test_float32_derivatives_through_the_kernels(every_size):
    # orders 1 and 2, forward and reverse, against finite differences (float32 tolerances)
    rng = np.random.default_rng(5)
    x = rng.standard_normal((5, 19)).astype(np.float32)
    w = rng.standard_normal((5, 19)).astype(np.float32)
    check_grads(lambda v: fnp.sum(D.log_softmax(v, 1) * w), (x,), order=2, modes=("fwd", "rev"))
    check_grads(lambda v: fnp.sum(D.log_softmax(v, 0) ** 2), (x,), order=2, modes=("fwd", "rev"))
    check_grads(lambda v: D.cross_entropy(v, np.array([0, 18, 3, -100, 7])), (x,), order=2, modes=("fwd", "rev"))


_WIDTH_SCRIPT = """
import hashlib, numpy as np
from fgrad.ops.nn import _softmax_rows
from fgrad.ops.nn import dense as D
rng = np.random.default_rng(11)
x = (rng.standard_normal((13, 1003)) * 6).astype(np.float32)
out = D._log_softmax_impl(x, axis=1, xp=np)
g = D._log_softmax_grad_impl(rng.standard_normal(x.shape).astype(np.float32), out, axis=1, xp=np)
print(hashlib.sha256(out.tobytes() + g.tobytes()).hexdigest())
"""


@pytest.mark.slow
def test_bits_do_not_depend_on_the_vector_width():
    # SSE2's 4 lanes against the host's widest (Numba's cache keys on the CPU, so each compiles)
    def run(env):
        res = subprocess.run([sys.executable, "-c", _WIDTH_SCRIPT], env={**os.environ, **env},
                             capture_output=True, text=True, check=True)
        return res.stdout.strip()
    assert run({"NUMBA_CPU_NAME": "x86-64"}) == run({})


# --- nll_loss gathered at the targets --------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_picked_nll_matches_the_one_hot_weights(dtype, reduction, weighted):
    rng = np.random.default_rng(1)
    logp = D.log_softmax(rng.standard_normal((50, 7)).astype(dtype), 1)
    target = rng.integers(0, 7, 50)
    target[::6] = -100
    weight = rng.random(7).astype(dtype) + 0.5 if weighted else None
    got = np.asarray(D.nll_loss(logp, target, weight, -100, reduction))
    W = D._target_weights_np((50, 7), np.dtype(dtype), target, weight, -100, reduction, 0.0)
    want = -(np.asarray(logp) * W).sum(axis=1 if reduction == "none" else None)
    assert got.dtype == np.dtype(dtype) and got.shape == want.shape
    if reduction == "none":  # the same terms (the one-hot sum adds zeros)
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=4 * np.finfo(dtype).eps)


def test_picked_nll_edge_cases():
    logp = np.log(np.full((3, 4), 0.25))
    assert np.isnan(D.nll_loss(logp, np.array([-100, -100, -100]), reduction="mean"))  # 0 / 0
    assert D.nll_loss(logp, np.array([-100, -100, -100]), reduction="sum") == 0.0
    with pytest.raises(IndexError, match="Target 4 is out of bounds"):
        D.nll_loss(logp, np.array([0, 4, 1]))
    # -inf away from the targets (masked classes) leaves the loss finite, as PyTorch's gather
    masked = logp.copy()
    masked[:, 3] = -np.inf
    assert np.isfinite(D.nll_loss(masked, np.array([0, 1, 2])))


def test_picked_nll_derivatives():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((6, 5))
    target = np.array([0, 4, -100, 2, 2, 1])
    weight = rng.random(5) + 0.5
    for reduction in ("mean", "sum", "none"):
        def f(v, reduction=reduction):
            return D.cross_entropy(v, target, weight, -100, reduction)
        check_grads(f, (x,), order=2, modes=("fwd", "rev"))
    # under vmap and jit the targets stay concrete: the same path, the same values
    xs = np.stack([x, 2 * x])
    g = fgrad.vmap(fgrad.grad(lambda v: D.cross_entropy(v, target)))(xs)
    np.testing.assert_allclose(g, np.stack([fgrad.grad(lambda v: D.cross_entropy(v, target))(v) for v in xs]),
                               rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(fgrad.jit(fgrad.grad(lambda v: D.cross_entropy(v, target)))(x), g[0],
                               rtol=1e-12, atol=1e-15)
