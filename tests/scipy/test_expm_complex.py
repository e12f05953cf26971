"""fgrad.scipy.linalg.expm of complex matrices: values and dtypes against scipy.linalg.expm
(complex64 stays complex64, stacks), and derivatives at orders 1-2 in both modes."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad.scipy.linalg as fsl
from fgrad.test_util import check_grads

sl = pytest.importorskip("scipy.linalg")

RNG = np.random.default_rng(0)
A = RNG.standard_normal((2, 3, 3)) + 1j * RNG.standard_normal((2, 3, 3))


def test_values_and_dtypes():
    np.testing.assert_allclose(np.asarray(fsl.expm(A)), sl.expm(A), rtol=1e-12, atol=1e-12)
    got = fsl.expm(A[0].astype(np.complex64))
    assert got.dtype == np.complex64
    np.testing.assert_allclose(np.asarray(got), sl.expm(A[0]), rtol=1e-5, atol=1e-5)


def test_check_grads():
    check_grads(fsl.expm, (A[0],), order=2)
    check_grads(lambda a: fsl.expm(a * 2.5), (A[1],), order=1)  # scaling and squaring
