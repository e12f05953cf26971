"""The Numba kernels against the NumPy code they override (fgrad.ops.numba_kernels): each
kernel must give the fallback's values bit for bit, on the awkward inputs too (ties, NaN,
signed zeros, infinities, odd spatial sizes whose last row or column no window covers,
non-contiguous operands)."""
from __future__ import annotations

import numpy as np
import pytest

from fgrad.ops import numba_kernels
from fgrad.ops.nn import pool

pytestmark = pytest.mark.skipif(numba_kernels.kernels() is None, reason="Numba is not installed")

POOL22 = dict(window=(2, 2), strides=(2, 2), padding=(0, 0), dilation=(1, 1), ceil_mode=False)


def _awkward(rng, shape, dtype):
    """Values with many ties (a small integer grid), NaNs, +-0 and +-inf."""
    x = rng.integers(-2, 3, shape).astype(dtype)
    flat = x.reshape(-1)
    k = flat.size
    for value, share in ((np.nan, 0.05), (-0.0, 0.1), (np.inf, 0.02), (-np.inf, 0.02)):
        flat[rng.choice(k, max(1, int(share * k)), replace=False)] = value
    return x


def _fallback(monkeypatch, fn, *args):
    """`fn` with the Numba kernels switched off (pool's NumPy path)."""
    with monkeypatch.context() as m:
        m.setattr(pool, "_numba", lambda: None)
        return fn(*args)


def _fwd(x):
    return pool._max_pool_impl(x, xp=np, **POOL22)


def _grad(ct, x, y):
    return pool._max_pool_grad_impl(ct, x, y, xp=np, **POOL22)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(2, 3, 4, 6), (1, 2, 5, 7), (3, 1, 9, 8), (1, 1, 3, 3)])
def test_max_pool22_kernels_equal_numpy_path(monkeypatch, shape, dtype):
    rng = np.random.default_rng(hash(shape) % 2**32)
    x = _awkward(rng, shape, dtype)
    y = _fwd(x)
    y_ref = _fallback(monkeypatch, _fwd, x)
    np.testing.assert_array_equal(y, y_ref)
    ct = rng.standard_normal(y.shape).astype(dtype)
    ct.reshape(-1)[::7] = np.nan  # a NaN cotangent goes to the arg-max like any other value
    g = _grad(ct, x, y)
    g_ref = _fallback(monkeypatch, _grad, ct, x, y)
    assert g.shape == x.shape and g.dtype == x.dtype
    # bitwise: -0.0 and NaN must come out where the NumPy path puts them
    np.testing.assert_array_equal(g.view(np.uint8), g_ref.view(np.uint8))


def test_max_pool22_grad_kernel_reads_strided_operands(monkeypatch):
    rng = np.random.default_rng(3)
    x = _awkward(rng, (2, 3, 10, 12), np.float32)[:, :, ::1, ::2]   # (2, 3, 10, 6), strided
    y = _fwd(np.ascontiguousarray(x))
    ct = rng.standard_normal((2, 3, 3, 5)).astype(np.float32).transpose(0, 1, 3, 2)  # (2, 3, 5, 3)
    assert not x.flags.c_contiguous and not ct.flags.c_contiguous
    g = _grad(ct, x, y)
    g_ref = _fallback(monkeypatch, _grad, ct, x, y)
    np.testing.assert_array_equal(g.view(np.uint8), g_ref.view(np.uint8))
