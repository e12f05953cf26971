"""lax.conv_general_dilated over 1, 2 and 3 spatial axes (issue 25): JAX's values for its
layouts, paddings, strides, dilations and groups, and derivatives of orders 1 and 2."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad
from fgrad import lax
from fgrad.test_util import check_grads

# name -> (lhs shape, rhs shape, keyword arguments)
CASES = {
    "1d full (numpy.convolve's padding)": ((1, 1, 3), (1, 1, 10), dict(window_strides=(1,), padding=[(9, 9)])),
    "1d same, stride, dilation, groups": ((2, 4, 9), (6, 2, 3), dict(window_strides=(2,), padding="SAME",
                                                                      rhs_dilation=(2,), feature_group_count=2)),
    "1d NWC, lhs dilation": ((2, 7, 3), (3, 3, 4), dict(window_strides=(1,), padding=[(2, 1)], lhs_dilation=(2,),
                                                         dimension_numbers=("NWC", "WIO", "NWC"))),
    "2d NHWC same": ((2, 5, 6, 3), (3, 2, 3, 4), dict(window_strides=(1, 1), padding="SAME",
                                                       dimension_numbers=("NHWC", "HWIO", "NHWC"))),
    "2d transposed": ((2, 3, 6, 6), (4, 3, 3, 3), dict(window_strides=(2, 2), padding=[(2, 2), (1, 1)],
                                                        lhs_dilation=(2, 2))),
    "3d valid": ((2, 3, 5, 6, 7), (4, 3, 2, 3, 2), dict(window_strides=(1, 2, 1), padding="VALID")),
    "3d cropped, dilated": ((2, 3, 5, 6, 7), (4, 3, 2, 3, 2), dict(window_strides=(2, 1, 3),
                                                                    padding=[(1, 0), (2, 1), (0, -1)],
                                                                    rhs_dilation=(2, 1, 2), lhs_dilation=(1, 2, 1))),
    "3d NDHWC to NCDHW, groups": ((2, 5, 3, 6, 4), (2, 3, 3, 2, 6), dict(
        window_strides=(1, 2, 1), padding="SAME", feature_group_count=2,
        dimension_numbers=("NDHWC", "DHWIO", "NCDHW"))),
    "3d as axis tuples": ((2, 3, 4, 4, 3), (2, 3, 2, 2, 2), dict(
        window_strides=(1, 1, 1), padding="SAME_LOWER",
        dimension_numbers=((0, 1, 2, 3, 4), (0, 1, 2, 3, 4), (0, 1, 2, 3, 4)))),
}


def _operands(name):
    xs, ws, kw = CASES[name]
    rng = np.random.default_rng(len(name))
    return rng.normal(size=xs), rng.normal(size=ws), kw


@pytest.mark.slow  # (JAX's compiles)
@pytest.mark.parametrize("name", list(CASES))
def test_values_are_jaxs(name):
    jax = pytest.importorskip("jax")
    x, w, kw = _operands(name)
    was = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    dn = kw.get("dimension_numbers")
    if dn is not None and not isinstance(dn[0], str):  # JAX takes axis tuples as its named tuple
        kw = {**kw, "dimension_numbers": jax.lax.ConvDimensionNumbers(*dn)}
    try:
        want = np.asarray(jax.lax.conv_general_dilated(x, w, **kw))
    finally:
        jax.config.update("jax_enable_x64", was)
    got = np.asarray(lax.conv_general_dilated(x, w, **kw))
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_numpy_convolve_full():
    """key_concepts' cell: a 1-d convolution with full padding is np.convolve's (the kernel
    flipped: lax's is a cross-correlation)."""
    x, y = np.array([1.0, 2.0, 1.0]), np.ones(10)
    got = lax.conv_general_dilated(x.reshape(1, 1, 3), y.reshape(1, 1, 10), window_strides=(1,),
                                   padding=[(9, 9)])
    np.testing.assert_allclose(got[0, 0], np.convolve(x, y, mode="full"))


@pytest.mark.parametrize("name", ["1d same, stride, dilation, groups", "1d NWC, lhs dilation",
                                  "3d cropped, dilated"])
def test_derivatives_orders_1_and_2(name):
    x, w, kw = _operands(name)
    x, w = x[:1], w  # one example keeps the second order's loops short
    check_grads(lambda a, b: lax.conv_general_dilated(a, b, **kw), (x, w), order=2, modes=("fwd", "rev"))


def test_conv_and_general_padding_wrappers():
    x, w, _ = _operands("3d valid")
    np.testing.assert_allclose(lax.conv(x, w, (1, 1, 1), "SAME"),
                               lax.conv_general_dilated(x, w, (1, 1, 1), "SAME"))
    np.testing.assert_allclose(lax.conv_with_general_padding(x, w, (1, 1, 1), [(1, 1)] * 3, (1, 2, 1), None),
                               lax.conv_general_dilated(x, w, (1, 1, 1), [(1, 1)] * 3, (1, 2, 1)))


def test_conv_dimension_numbers():
    dn = lax.conv_dimension_numbers((1, 5, 6, 3), (3, 2, 3, 4), ("NHWC", "HWIO", "NHWC"))
    assert dn == ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2)) and dn.rhs_spec == (3, 2, 0, 1)
    x, w, _ = _operands("2d NHWC same")
    np.testing.assert_allclose(lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=dn),
                               lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                                        dimension_numbers=("NHWC", "HWIO", "NHWC")))


def test_errors_name_the_fix():
    x, w, _ = _operands("1d NWC, lhs dilation")
    with pytest.raises(ValueError, match="transposed convolution"):
        lax.conv_general_dilated(np.ones((1, 2, 5)), np.ones((1, 2, 3)), (1,), "SAME", lhs_dilation=(2,))
    with pytest.raises(ValueError, match="one positive int per spatial axis"):
        lax.conv_general_dilated(np.ones((1, 2, 5)), np.ones((1, 2, 3)), (1, 1), "SAME")
    with pytest.raises(ValueError, match="same rank"):
        lax.conv_general_dilated(np.ones((1, 2, 5)), np.ones((1, 2, 3, 3)), (1,), "SAME")
    with pytest.raises(ValueError, match="features"):
        lax.conv_general_dilated(np.ones((1, 3, 5)), np.ones((1, 2, 3)), (1,), "SAME")
    with pytest.raises(ValueError, match="do not describe"):
        lax.conv_general_dilated(np.ones((1, 3, 5)), np.ones((1, 3, 3)), (1,), "SAME",
                                 dimension_numbers=("NCH", "OIW", "NCH"))


def test_under_jit_and_vmap():
    x, w, kw = _operands("1d same, stride, dilation, groups")
    f = lambda a: lax.conv_general_dilated(a, w, **kw)  # noqa: E731
    np.testing.assert_allclose(fgrad.jit(f)(x), f(x), rtol=1e-13)
    np.testing.assert_allclose(fgrad.vmap(f)(x[:, None]), np.stack([f(x[i:i + 1]) for i in range(2)]),
                               rtol=1e-13)
