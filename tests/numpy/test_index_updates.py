"""fgrad.numpy's extremal index updates (at_min, at_max: JAX's x.at[idx].min/.max), the
array algorithm under fgrad.torch's scatter_reduce amax/amin: values against NumPy's
minimum.at/maximum.at, and derivatives against JAX's, whose rule splits a position's
derivative evenly between every operand tied at its result (PyTorch's scatter_reduce does the
same) - also with repeated indices, infinities and under jit and vmap; numerically to order 2
where nothing ties."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import fgrad
import fgrad.numpy as fnp
from fgrad.test_util import check_grads

IDX = np.array([0, 0, 2, 2, 4, 4, 1])
X = np.array([1.0, 2.0, 0.0, 3.0, 2.0])
V = np.array([5.0, 1.0, 0.0, 2.0, 2.0, 2.0, 7.0])   # ties: x[0] with V[1]; x[2] with V[2]; x[4] with V[4], V[5]
W = np.arange(1.0, 6.0)
UPDATES = {"min": (fnp.at_min, np.minimum), "max": (fnp.at_max, np.maximum)}


def _jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax


def _pair(name: str):
    jax = _jax()
    at = UPDATES[name][0]

    def f(x, v):
        return fnp.sum(at(x, (IDX,), v) * W)

    def g(x, v):
        return (getattr(jax.numpy.asarray(x).at[IDX], name)(v) * W).sum()
    return jax, f, g


@pytest.mark.parametrize("name", sorted(UPDATES))
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_values_match_numpy(name: str, dtype) -> None:
    at, ufunc = UPDATES[name]
    x, v = X.astype(dtype), V.astype(dtype)
    want = x.copy()
    ufunc.at(want, IDX, v)
    got = np.asarray(at(x, (IDX,), v))
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.asarray(fgrad.jit(lambda x, v: at(x, (IDX,), v))(x, v)), want)
    if x.dtype.kind == "f":  # traced for a derivative: the value comes through the carriers unchanged
        np.testing.assert_array_equal(np.asarray(fgrad.jvp(lambda x: at(x, (IDX,), v), (x,), (np.ones_like(x),))[0]),
                                      want)


@pytest.mark.parametrize("name", sorted(UPDATES))
def test_tie_derivatives_match_jax_in_both_modes(name: str) -> None:
    jax, f, g = _pair(name)
    for got, want in zip(fgrad.grad(f, (0, 1))(X, V), jax.grad(g, (0, 1))(X, V)):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-14)
    tx, tv = np.linspace(-1, 1, 5), np.linspace(0.5, 2, 7)
    got = fgrad.jvp(f, (X, V), (tx, tv))[1]
    np.testing.assert_allclose(float(got), float(jax.jvp(g, (X, V), (tx, tv))[1]), rtol=1e-14)
    for got, want in zip(fgrad.jit(fgrad.grad(f, (0, 1)))(X, V), jax.grad(g, (0, 1))(X, V)):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-14)


@pytest.mark.parametrize("name", sorted(UPDATES))
def test_infinite_and_signed_zero_ties(name: str) -> None:
    jax, f, g = _pair(name)
    x = np.array([np.inf, -0.0, -np.inf, 3.0, 2.0])
    v = np.array([np.inf, 1.0, -np.inf, -0.0, 2.0, 2.0, -0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no inf - inf along the way
        got = fgrad.grad(f, (0, 1))(x, v)
    for a, b in zip(got, jax.grad(g, (0, 1))(x, v)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-14)
    at, ufunc = UPDATES[name]
    want = x.copy()
    ufunc.at(want, IDX, v)
    out = fgrad.jvp(lambda x: at(x, (IDX,), v), (x,), (np.ones(5),))[0]  # traced: the carriers' value path
    np.testing.assert_array_equal(np.asarray(out), want)


@pytest.mark.parametrize("name", sorted(UPDATES))
def test_vmap_matches_a_loop(name: str) -> None:
    at = UPDATES[name][0]
    xs, vs = np.stack([X, X[::-1]]), np.stack([V, V + 1.0])
    f = fgrad.grad(lambda x, v: fnp.sum(at(x, (IDX,), v) * W), (0, 1))
    got = fgrad.vmap(f)(xs, vs)
    for k in range(2):
        for a, b in zip(got, f(xs[k], vs[k])):
            np.testing.assert_allclose(np.asarray(a)[k], np.asarray(b), rtol=1e-14)


@pytest.mark.parametrize("name", sorted(UPDATES))
def test_derivatives_numerically_without_ties(name: str) -> None:
    at = UPDATES[name][0]
    x = np.array([1.3, 2.1, 0.4, 3.2, 2.5])
    v = np.array([5.1, 0.9, 0.2, 2.2, 2.7, 1.6, 7.3])
    check_grads(lambda x, v: at(x, (IDX,), v) ** 2, (x, v), order=2, modes=("fwd", "rev"))
