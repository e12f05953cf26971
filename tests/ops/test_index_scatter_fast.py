"""scatter_add's one-axis fast path (fgrad.ops.index._scatter_add_rows, the cotangent of an
embedding or a take) against np.add.at: the same bits, since each output element must sum its
updates from zero in index order, on repeated and negative indices, NaN, infinities and signed
zeros, float32 and float64, any axis, index arrays of any shape, and empty ones (a NaN's
payload aside, see _bits)."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad
import fgrad.numpy as fnp
from fgrad.ops import index as I


def _awkward(rng, shape, dtype):
    """Normal values with NaNs, +-0, +-inf and huge magnitudes, so that order changes bits."""
    u = (rng.standard_normal(shape) * 10.0 ** rng.integers(-8, 9, shape)).astype(dtype)
    flat = u.reshape(-1)
    for value, share in ((np.nan, 0.01), (-0.0, 0.05), (np.inf, 0.01), (-np.inf, 0.01)):
        flat[rng.choice(flat.size, max(1, int(share * flat.size)), replace=False)] = value
    return u


def _ref(u, idx, shape, axis):
    out = np.zeros(shape, u.dtype)
    np.add.at(out, (slice(None),) * axis + (idx,), u)
    return out


def _bits(a):
    """a's bits, with every NaN as one NaN: which payload a sum of two different NaNs keeps is
    the CPU's choice of operand (IEEE 754 leaves it open), so only NaN-ness is compared."""
    a = np.where(np.isnan(a), a.dtype.type(np.nan), a)
    return a.view(np.uint32 if a.dtype == np.float32 else np.uint64)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,idx_shape,axis,high", [
    ((1000, 64), (700,), 0, 1000),      # an embedding's rows: few repeats
    ((300, 64), (35, 20), 0, 40),       # a 2-D index array, rows repeated ~17 times
    ((16, 500, 3), (300,), 1, 500),     # a middle axis
    ((40, 700), (400,), 1, 700),        # the last axis
])
def test_rows_match_add_at_bit_for_bit(dtype, shape, idx_shape, axis, high):
    rng = np.random.default_rng(0)
    idx = rng.integers(-high, high, idx_shape)  # negative ones count from the end
    u_shape = shape[:axis] + idx_shape + shape[axis + 1:]
    u = _awkward(rng, u_shape, dtype)
    out = np.zeros(shape, dtype)
    assert I._scatter_add_rows(out, idx, u, axis)  # the fast path ran
    np.testing.assert_array_equal(_bits(out), _bits(_ref(u, idx, shape, axis)))


def test_negative_zero_updates_give_positive_zero():
    # np.add.at starts from +0, and +0 + -0 is +0: a row updated once must not copy -0.0 in
    idx = np.arange(100)
    u = np.full((100, 128), -0.0, np.float32)
    out = I._scatter_add_impl(u, idx, spec=(I.ARRAY,), shape=(100, 128), xp=np)
    np.testing.assert_array_equal(_bits(out), _bits(_ref(u, idx, (100, 128), 0)))
    assert not np.signbit(out).any()


def test_fallbacks_keep_add_at_semantics():
    rng = np.random.default_rng(1)
    u = rng.standard_normal((700, 256)).astype(np.float32)
    one_row = np.zeros(700, np.int64)  # 700 rounds: np.add.at's single pass instead
    assert not I._scatter_add_rows(np.zeros((10, 256), np.float32), one_row, u, 0)
    out = I._scatter_add_impl(u, one_row, spec=(I.ARRAY,), shape=(10, 256), xp=np)
    np.testing.assert_array_equal(_bits(out), _bits(_ref(u, one_row, (10, 256), 0)))
    bad = rng.integers(0, 10, 700)
    bad[5] = 10
    with pytest.raises(IndexError):
        I._scatter_add_impl(u, bad, spec=(I.ARRAY,), shape=(10, 256), xp=np)
    empty = I._scatter_add_impl(np.zeros((0, 256), np.float32), np.zeros(0, np.int64), spec=(I.ARRAY,),
                                shape=(10, 256), xp=np)
    assert empty.shape == (10, 256) and not empty.any()


def test_only_one_array_with_whole_other_axes_takes_the_fast_path():
    idx = np.zeros(3, np.int64)
    assert I._one_axis_take((I.ARRAY,), [idx], (5, 4)) == 0
    assert I._one_axis_take((I.Slice(0, 5, 1), I.ARRAY), [idx], (5, 4)) == 1
    assert I._one_axis_take((I.Slice(1, 5, 1), I.ARRAY), [idx], (5, 4)) is None  # a part of axis 0
    assert I._one_axis_take((I.ARRAY, I.ARRAY), [idx, idx], (5, 4)) is None
    assert I._one_axis_take((I.ARRAY, 2), [idx], (5, 4)) is None  # an int beside it is advanced


def test_gradient_of_a_gather_uses_the_same_sums():
    rng = np.random.default_rng(2)
    table = rng.standard_normal((200, 64)).astype(np.float32)
    idx = rng.integers(0, 50, 300)
    w = _awkward(rng, (300, 64), np.float32)
    g = fgrad.grad(lambda t: fnp.sum(t[idx] * w))(table)
    np.testing.assert_array_equal(_bits(np.asarray(g)), _bits(_ref(w, idx, (200, 64), 0)))
