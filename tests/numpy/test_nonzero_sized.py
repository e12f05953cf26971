"""fgrad.numpy.nonzero with size= and fill_value= (JAX's): the first `size` non-zero
positions padded with fill_value, staged under jit and vmap; against JAX's semantics (and
jax.numpy.nonzero itself, slow) on several ranks, dtypes, counts below/at/above size and
empty arrays, and its errors."""
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


def _padded(a, size: int, fill):
    """JAX's sized nonzero from NumPy's: the first `size` positions, padded with fill_value
    (0 by default; zeros, fill_value unused, for an empty array)."""
    found = np.nonzero(a)
    fills = fill if isinstance(fill, tuple) else (0 if fill is None else fill,) * a.ndim
    if a.size == 0:
        fills = (0,) * a.ndim
    return tuple(np.concatenate([f[:size], np.full(max(size - f.size, 0), v, np.int64)]) for f, v in zip(found, fills))


@pytest.mark.parametrize("shape", [(7,), (3, 4), (2, 3, 2), (0,), (2, 0, 3)])
def test_matches_jax_semantics_eager_and_under_jit(shape) -> None:
    x = RNG.integers(0, 3, shape)
    for a in (x.astype(bool), x * 0.5):
        for size in (0, 3, 30):
            for fill in (None, -1, tuple(range(-1, -1 - len(shape), -1))):
                kw = {"size": size} if fill is None else {"size": size, "fill_value": fill}
                want = _padded(a, size, fill)
                for got in (fnp.nonzero(a, **kw), fgrad.jit(lambda v, kw=kw: fnp.nonzero(v, **kw))(a)):
                    assert len(got) == len(want)
                    for g, w in zip(got, want):
                        assert np.asarray(g).dtype == np.int64
                        np.testing.assert_array_equal(np.asarray(g), w)


@pytest.mark.slow  # (JAX compiling its nonzero for each shape and size)
@pytest.mark.parametrize("shape", [(7,), (3, 4), (2, 0, 3)])
def test_matches_jax(shape) -> None:
    _, jnp = _jnp()
    x = RNG.integers(0, 3, shape)
    for size in (0, 3, 30):
        for kw in ({"size": size}, {"size": size, "fill_value": tuple(range(-1, -1 - len(shape), -1))}):
            for g, w in zip(fnp.nonzero(x, **kw), jnp.nonzero(x, **kw)):
                np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def test_vmap_matches_a_loop() -> None:
    xs = RNG.integers(0, 2, (4, 5))
    got = fgrad.vmap(lambda r: fnp.nonzero(r, size=3, fill_value=9)[0])(xs)
    np.testing.assert_array_equal(np.asarray(got), np.stack([_padded(r, 3, 9)[0] for r in xs]))


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
