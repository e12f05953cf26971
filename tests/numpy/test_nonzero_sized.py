"""fgrad.numpy.nonzero with size= and fill_value= (JAX's): the first `size` non-zero
positions padded with fill_value, staged under jit and vmap; against jax.numpy.nonzero on
several ranks, dtypes, counts below/at/above size and empty arrays, and its errors."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad
import fgrad.numpy as fnp
from fgrad.core.errors import ConcretizationError

RNG = np.random.default_rng(0)


def _jnp():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax, jax.numpy


@pytest.mark.parametrize("shape", [(7,), (3, 4), (2, 3, 2), (0,), (2, 0, 3)])
@pytest.mark.parametrize("size", [0, 3, 30])
def test_matches_jax_eager_and_under_jit(shape, size) -> None:
    _, jnp = _jnp()
    x = RNG.integers(0, 3, shape)
    for a in (x.astype(bool), x * 0.5):
        for kw in ({"size": size}, {"size": size, "fill_value": -1},
                   {"size": size, "fill_value": tuple(range(-1, -1 - len(shape), -1))}):
            want = jnp.nonzero(a, **kw)
            for got in (fnp.nonzero(a, **kw), fgrad.jit(lambda v, kw=kw: fnp.nonzero(v, **kw))(a)):
                assert len(got) == len(want)
                for g, w in zip(got, want):
                    assert np.asarray(g).dtype == np.int64
                    np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def test_vmap_matches_jax() -> None:
    jax, jnp = _jnp()
    xs = RNG.integers(0, 2, (4, 5))
    got = fgrad.vmap(lambda r: fnp.nonzero(r, size=3, fill_value=9)[0])(xs)
    want = jax.vmap(lambda r: jnp.nonzero(r, size=3, fill_value=9)[0])(xs)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_without_size_jit_still_needs_concrete_values_and_errors_are_clear() -> None:
    with pytest.raises(ConcretizationError):
        fgrad.jit(fnp.nonzero)(np.arange(3))
    with pytest.raises(ValueError, match="0d"):
        fnp.nonzero(np.float64(1.0), size=2)
    with pytest.raises(ValueError, match="non-negative int"):
        fnp.nonzero(np.arange(3), size=-1)
    with pytest.raises(ValueError, match="2 axes"):
        fnp.nonzero(np.ones((2, 2)), size=2, fill_value=(1, 2, 3))
    with pytest.raises(ValueError, match="only used with size"):
        fnp.nonzero(np.ones(2), fill_value=1)
