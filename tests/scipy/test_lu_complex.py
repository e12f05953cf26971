"""fgrad.scipy.linalg's LU functions on complex matrices: lu, lu_factor and lu_solve (trans 0, 1
and 2: the conjugate transpose) against scipy.linalg, stacks, and derivatives at orders 1-2 in
both modes (LU is holomorphic in the matrix; the pivots are held fixed)."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad.scipy.linalg as fsl
from fgrad.test_util import check_grads

sl = pytest.importorskip("scipy.linalg")

RNG = np.random.default_rng(0)
A = RNG.standard_normal((2, 3, 3)) + 1j * RNG.standard_normal((2, 3, 3))
B = RNG.standard_normal((3, 2)) + 1j * RNG.standard_normal((3, 2))


def test_values_match_scipy():
    for a in A:
        lu, piv = fsl.lu_factor(a)
        want_lu, want_piv = sl.lu_factor(a)
        np.testing.assert_allclose(np.asarray(lu), want_lu, atol=1e-14)
        np.testing.assert_array_equal(np.asarray(piv), want_piv)
        for trans in (0, 1, 2):
            np.testing.assert_allclose(np.asarray(fsl.lu_solve((lu, piv), B, trans=trans)),
                                       sl.lu_solve((want_lu, want_piv), B, trans=trans), atol=1e-12)
        p, low, up = fsl.lu(a)
        np.testing.assert_allclose(np.asarray(p @ low @ up), a, atol=1e-14)
    p, low, up = fsl.lu(A)  # a stack
    assert low.dtype == np.complex128 and np.allclose(np.asarray(p @ low @ up), A)
    assert fsl.lu_factor(A[0].astype(np.complex64))[0].dtype == np.complex64


@pytest.mark.parametrize("trans", [0, 1, 2])
def test_check_grads(trans):
    piv = fsl.lu_factor(A[0])[1]
    check_grads(lambda a, b: fsl.lu_solve((fsl.lu_factor(a)[0], piv), b, trans=trans), (A[0], B), order=2)


def test_factor_check_grads():
    check_grads(lambda a: fsl.lu_factor(a)[0], (A[1],), order=2)
    check_grads(lambda a: fsl.lu(a)[2], (A[1],), order=2)
