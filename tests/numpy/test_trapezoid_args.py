"""fgrad.numpy.trapezoid with a number where the sample points go: NumPy refuses a 0-d x
(ValueError, it is no spacing); points and dx= agree with NumPy."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad.numpy as fnp

Y = np.array([1.0, 2.0, 4.0, 7.0])


@pytest.mark.parametrize("x", [2.0, 3, np.float64(2.0), np.array(2.0)])
def test_numpy_refuses_a_zero_d_x_as_numpy_does(x):
    with pytest.raises(ValueError):
        np.trapezoid(Y, x)
    with pytest.raises(ValueError, match="dx="):
        fnp.trapezoid(Y, x)
    with pytest.raises(ValueError):  # (also with fewer than two samples, as NumPy)
        fnp.trapezoid(Y[:1], x)


def test_numpy_points_and_spacing_still_integrate():
    pts = np.array([0.0, 1.0, 3.0, 4.0])
    assert fnp.trapezoid(Y, pts) == np.trapezoid(Y, pts)
    assert fnp.trapezoid(Y, [0, 1, 3, 4]) == np.trapezoid(Y, [0, 1, 3, 4])
    assert fnp.trapezoid(Y, dx=2.0) == np.trapezoid(Y, dx=2.0)
