"""fgrad.numpy.unique with size= and fill_value= (JAX's, axis=None): fixed-length results
that stage under jit and vmap; values, first indices, inverse and counts against
jax.numpy.unique (padding, NaNs as one value, empty input), its gradient (to the first
occurrence, as JAX's), and its errors."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad
import fgrad.numpy as fnp

RNG = np.random.default_rng(0)
CASES = {
    "int2d": RNG.integers(0, 4, (3, 4)),
    "float": RNG.integers(0, 4, (7,)).astype(float),
    "nans": np.array([1.0, np.nan, 2.0, np.nan, 1.0]),
    "constant": np.array([3, 3, 3]),
}


def _jnp():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax, jax.numpy


def _padded(x, size: int, fill):
    """JAX's sized results from NumPy's unique: values padded with fill_value (default the
    smallest), first indices with the smallest's, counts with 0; the inverse unchanged."""
    values, index, inverse, counts = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    k = min(size, values.size)
    pad = values[0] if fill is None else fill
    return (np.concatenate([values[:k], np.full(size - k, pad, values.dtype)]),
            np.concatenate([index[:k], np.full(size - k, index[0])]), inverse.reshape(x.shape),
            np.concatenate([counts[:k], np.zeros(size - k, np.int64)]))


@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_jax_semantics_eager_and_under_jit(case: str) -> None:
    x = CASES[case]
    for size in (1, 3, 12):  # fewer, about as many and more than the unique values
        for fill in (None, -7):
            kw = {"size": size, "fill_value": fill, "return_index": True, "return_inverse": True,
                  "return_counts": True}
            want = _padded(x, size, fill)
            for got in (fnp.unique(x, **kw), fgrad.jit(lambda v, kw=kw: fnp.unique(v, **kw))(x)):
                for g, w in zip(got, want):
                    assert np.asarray(g).shape == w.shape
                    np.testing.assert_array_equal(np.asarray(g), w)


def test_vmap_matches_a_loop_and_the_gradient_reaches_first_occurrences() -> None:
    rows = np.array([[1, 2, 2, 3], [4, 4, 4, 1]])
    batched = fgrad.vmap(lambda r: fnp.unique(r, size=3, return_counts=True))(rows)
    for k, row in enumerate(rows):
        for g, w in zip(batched, fnp.unique(row, size=3, return_counts=True)):
            np.testing.assert_array_equal(np.asarray(g)[k], np.asarray(w))
    x, weights = np.array([2.0, 1.0, 2.0, 3.0, 1.0, 5.0]), np.arange(1.0, 5.0)
    got = fgrad.grad(lambda v: fnp.sum(fnp.unique(v, size=4, fill_value=0.0) * weights))(x)
    np.testing.assert_array_equal(np.asarray(got), [2.0, 1.0, 0.0, 3.0, 0.0, 4.0])  # 1, 2, 3, 5 at 1, 0, 3, 5


@pytest.mark.slow  # (JAX compiling its unique under vmap and grad)
def test_vmap_empty_input_and_gradient_match_jax() -> None:
    jax, jnp = _jnp()
    rows = np.array([[1, 2, 2, 3], [4, 4, 4, 1]])
    for g, w in zip(fgrad.vmap(lambda r: fnp.unique(r, size=3, return_counts=True))(rows),
                    jax.vmap(lambda r: jnp.unique(r, size=3, return_counts=True))(rows)):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
    kw = {"size": 3, "fill_value": 1.5, "return_index": True, "return_counts": True}
    for g, w in zip(fnp.unique(np.zeros(0), **kw), jnp.unique(np.zeros(0), **kw)):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
    x, weights = np.array([2.0, 1.0, 2.0, 3.0, 1.0, 5.0]), np.arange(1.0, 5.0)
    got = fgrad.grad(lambda v: fnp.sum(fnp.unique(v, size=4, fill_value=0.0) * weights))(x)
    want = jax.grad(lambda v: jnp.sum(jnp.unique(v, size=4, fill_value=0.0) * weights))(x)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_errors() -> None:
    with pytest.raises(ValueError, match="fill_value must be given"):
        fnp.unique(np.zeros(0), size=2)
    with pytest.raises(ValueError, match="axis=None only"):
        fnp.unique(np.ones((2, 2)), axis=0, size=2)
    with pytest.raises(ValueError, match="non-negative int"):
        fnp.unique(np.ones(3), size=1.5)
    with pytest.raises(ValueError, match="only used with size"):
        fnp.unique(np.ones(3), fill_value=0)
