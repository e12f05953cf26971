"""The meta device's value, MetaArray: its shape attributes agree with a NumPy array of its
shape and dtype, and it stays a value, not an aval: it equals only itself, and `==` with an
array is NumPy's elementwise comparison (a meta result)."""
from __future__ import annotations

import numpy as np
import pytest

from fgrad.torch._tensor._meta import MetaArray


@pytest.mark.parametrize("shape", [(), (0,), (2, 3), (4, 1, 5)])
def test_shape_attributes_as_numpy(shape):
    m, a = MetaArray(shape, np.float32), np.zeros(shape, np.float32)
    assert (m.shape, m.ndim, m.size, m.itemsize, m.nbytes) == (a.shape, a.ndim, a.size, a.itemsize, a.nbytes)
    if a.size:  # (NumPy gives an empty array zero strides; a meta tensor keeps contiguous ones, as PyTorch's)
        assert m.strides == a.strides


def test_equality_is_a_value_s_identity():
    m, twin = MetaArray((2, 3), np.float32), MetaArray((2, 3), np.float32)
    assert m == m and m != twin and len({m, twin}) == 2
    out = m == np.zeros((2, 3))
    assert type(out) is MetaArray and out.shape == (2, 3) and out.dtype == np.bool_
