"""fgrad.numpy's copy, array and asarray honour NumPy's `order` (the result's contiguity
flags and strides) and its treatment of ndarray subclasses, compared with NumPy itself."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad
import fgrad.numpy as fnp


def _sources():
    base = np.arange(24.0).reshape(2, 3, 4)
    return {
        "c": base,
        "f": np.asfortranarray(base),
        "permuted": base.transpose(2, 0, 1),
        "strided": base[:, :, ::2],
    }


def _layout(x):
    return x.flags.c_contiguous, x.flags.f_contiguous, x.strides


@pytest.mark.parametrize("order", ["C", "F", "A", "K", "f", None])
@pytest.mark.parametrize("src", list(_sources()))
def test_copy_order_matches_numpy(src, order):
    a = _sources()[src]
    got, want = fnp.copy(a, order=order), np.copy(a, order=order)
    assert _layout(got) == _layout(want)
    np.testing.assert_array_equal(got, want)
    assert not np.shares_memory(got, a)


@pytest.mark.parametrize("order", ["C", "F", "A", "K"])
@pytest.mark.parametrize("src", list(_sources()))
@pytest.mark.parametrize("dtype", [None, np.float32])
def test_array_and_asarray_order_match_numpy(src, order, dtype):
    a = _sources()[src]
    for name, copy in (("array", True), ("asarray", None)):
        got = getattr(fnp, name)(a, dtype=dtype, order=order, copy=copy)
        want = getattr(np, name)(a, dtype=dtype, order=order, copy=copy)
        assert _layout(got) == _layout(want), name
        assert np.shares_memory(got, a) == np.shares_memory(want, a), name
        np.testing.assert_array_equal(got, want)


def test_asarray_keeps_its_argument_when_the_layout_is_already_right():
    x = fnp.asarray(np.asfortranarray(np.ones((2, 3))))
    assert fnp.asarray(x) is x and fnp.asarray(x, order="F") is x
    assert fnp.asarray(x, order="C") is not x


def test_list_input_in_fortran_order():
    got = fnp.array([[1.0, 2.0], [3.0, 4.0]], order="F")
    assert got.flags.f_contiguous and not got.flags.c_contiguous


def test_bad_order_is_a_value_error_naming_it():
    a = np.ones((2, 2))
    for fn in (lambda: fnp.copy(a, order="X"), lambda: fnp.asarray(a, order="X"), lambda: fnp.array(a, order=3)):
        with pytest.raises(ValueError, match="order must be one of 'C', 'F', 'A', or 'K'"):
            fn()


@pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")
def test_subclasses_as_numpy():
    m = np.matrix([[1.0, 2.0], [3.0, 4.0]])
    assert type(fnp.copy(m)) is np.ndarray  # (NumPy's subok=False)
    assert type(fnp.copy(m, subok=True)) is np.matrix
    for fn in (fnp.asarray, fnp.array):
        v = fn(m)
        assert not isinstance(v, np.matrix)
        np.testing.assert_array_equal(v * v, np.asarray(m) * np.asarray(m))  # elementwise, not matmul
    masked = np.ma.masked_array([1.0, 2.0, 3.0], mask=[0, 1, 0])
    np.testing.assert_array_equal(fnp.asarray(masked), np.asarray(masked))
    assert type(fnp.copy(masked)) is np.ndarray
    own = fnp.asarray(np.ones(3))
    assert type(fnp.copy(own)) is type(own)  # (fgrad's own arrays stay fgrad arrays, with .at)
    assert type(fnp.copy(np.float64(2.0))) is np.ndarray  # (a 0-d array, as np.copy of a scalar)


def test_copy_under_jit_ignores_layout():
    f = fgrad.jit(lambda x: fnp.copy(x, order="F") * 2)
    np.testing.assert_array_equal(f(np.ones((2, 3))), 2 * np.ones((2, 3)))
