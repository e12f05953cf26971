"""fgrad.numpy.fft's Hermitian transforms over several axes (scipy.fft's hfft2/hfftn/ihfft2/ihfftn):
values and dtypes against scipy.fft for each norm, s and axes; derivatives at orders 1-2 in
both modes (check_grads), for real and complex input."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad.numpy as fnp
from fgrad.test_util import check_grads

sfft = pytest.importorskip("scipy.fft")

RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4, 5))
Z = X + 1j * RNG.standard_normal((3, 4, 5))


@pytest.mark.parametrize("norm", [None, "backward", "forward", "ortho"])
@pytest.mark.parametrize("kw", [{}, {"s": (3, 6)}, {"axes": (0, 2)}, {"s": (2, 4), "axes": (2, 0)}])
def test_values_match_scipy(norm, kw):
    for name, x in (("hfftn", Z), ("hfftn", X), ("ihfftn", X)):
        got = getattr(fnp.fft, name)(x, norm=norm, **kw)
        want = getattr(sfft, name)(x, norm=norm, **kw)
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-10, atol=1e-10)
    for name, x in (("hfft2", Z), ("ihfft2", X)):
        kw2 = {k: v for k, v in kw.items() if len(v) == 2}
        got = getattr(fnp.fft, name)(x, norm=norm, **kw2)
        np.testing.assert_allclose(np.asarray(got), getattr(sfft, name)(x, norm=norm, **kw2), rtol=1e-10,
                                   atol=1e-10)


def test_float32_stays_single():
    assert fnp.fft.hfftn(Z.astype(np.complex64)).dtype == np.float32
    assert fnp.fft.ihfft2(X.astype(np.float32)).dtype == np.complex64


@pytest.mark.parametrize("name, x", [("hfftn", Z[0]), ("hfftn", X[0]), ("ihfftn", X[0]),
                                     ("hfft2", Z[0]), ("ihfft2", X[0])])
def test_check_grads(name, x):
    f = getattr(fnp.fft, name)
    check_grads(lambda a: f(a * a, norm="ortho"), (x,), order=2)
    check_grads(lambda a: f(a, s=(3, 4), axes=(1, 0)), (x,), order=1)
