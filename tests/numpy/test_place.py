"""fgrad.numpy.place, the array algorithm under fgrad.torch's masked_scatter: values against
NumPy's in-place place (cyclic values, non-boolean masks, every dtype family), against
jax.numpy.place with a traced mask under jit and vmap, its errors, and its derivatives
(against JAX's, and numerically to order 2 in both modes)."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad
import fgrad.numpy as fnp
from fgrad.test_util import check_grads

RNG = np.random.default_rng(0)
X = RNG.normal(size=(3, 4))
MASK = np.array([[1, 0, 1, 1], [0, 0, 0, 1], [1, 1, 0, 0]], bool)


def _numpy_place(arr, mask, vals):
    out = np.array(arr, copy=True)
    np.place(out, mask, vals)
    return out


@pytest.mark.parametrize(("arr", "mask", "vals"), [
    (X, MASK, np.arange(6.0)),                                 # one value per masked position
    (X, MASK, np.array([7.0, 8.0])),                          # fewer: repeated cyclically
    (X, MASK, np.arange(20.0)),                               # more: the leading ones
    (np.arange(12).reshape(3, 4), MASK.astype(np.int64) * 3, [9]),  # a nonzero int mask
    (np.zeros(6, bool), MASK.ravel()[:6], [True]),
    (X.astype(np.complex128), MASK.reshape(4, 3), np.array([1j, 2.0])),  # any mask shape of arr's size
    (np.float32(2.5) * np.ones(()), np.array(True), [4.0]),   # 0-d
    (X, np.zeros((3, 4), bool), []),                          # nothing masked: no values needed
])
def test_values_match_numpy(arr, mask, vals) -> None:
    got = np.asarray(fnp.place(arr, mask, vals))
    want = _numpy_place(arr, mask, vals)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_traced_mask_under_jit_and_vmap_matches_numpy() -> None:
    vals = np.array([10.0, 20.0, 30.0])
    want = _numpy_place(X, X > 0, vals)
    np.testing.assert_array_equal(np.asarray(fgrad.jit(fnp.place)(X, X > 0, vals)), want)
    rows = fgrad.vmap(lambda x, m: fnp.place(x, m, vals))(X, MASK)
    np.testing.assert_array_equal(np.asarray(rows), np.stack([_numpy_place(a, m, vals) for a, m in zip(X, MASK)]))


def test_matches_jax_under_jit_with_gradients() -> None:
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    vals = np.array([0.3, -1.2, 2.0, 0.7])  # fewer than the masked positions: each fills several

    def f(x, m, v):
        return fnp.sum(fnp.sin(fnp.place(x, m, v, inplace=False)) * x)

    def g(x, m, v):
        return jnp.sum(jnp.sin(jnp.place(x, m, v, inplace=False)) * x)
    got = fgrad.jit(fgrad.grad(f, (0, 2)))(X, X > -0.5, vals)
    want = jax.jit(jax.grad(g, (0, 2)))(X, X > -0.5, vals)
    for a, b in zip(got, want):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12, atol=1e-12)


def test_derivatives_numerically() -> None:
    vals = np.array([0.5, -0.25, 1.5])
    check_grads(lambda x, v: fnp.place(x, MASK, v) ** 2, (X, vals), order=2, modes=("fwd", "rev"))


def test_errors_name_the_sizes() -> None:
    with pytest.raises(ValueError, match=r"same size .*12 elements.*has 5"):
        fnp.place(X, np.ones(5, bool), [1.0])
    with pytest.raises(ValueError, match="empty array"):
        fnp.place(X, MASK, [])
    with pytest.raises(ValueError, match="empty array"):  # a traced mask may select: as JAX, refused
        fgrad.jit(lambda m: fnp.place(X, m, np.zeros(0)))(MASK)
    with pytest.raises(ValueError, match="inplace=False"):
        fnp.place(X, MASK, [1.0], inplace=True)
