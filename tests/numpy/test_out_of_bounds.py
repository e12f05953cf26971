"""Out-of-bounds indices on the functional door follow JAX (issue 25): gathers clamp (x[11]
of 10 entries is x[9]), `.at[]` updates drop what falls outside, eagerly and under jit;
fgrad.numpy.getitem and the torch door keep raising IndexError."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad
import fgrad.numpy as fnp

X = np.arange(10.0)
M = np.arange(12.0).reshape(3, 4)
IDX = np.array([3, 12, -1, -13])

# (name, function of (x, m)) -> what JAX gives (checked against jax below when installed)
GETS = {
    "int past the end": lambda x, m: x[11],
    "negative past the start": lambda x, m: x[-11],
    "index array": lambda x, m: x[IDX],
    "second axis": lambda x, m: m[1, 9],
    "array and int": lambda x, m: m[np.array([0, 7]), 2],
    "row past the end": lambda x, m: m[5],
    "at get": lambda x, m: x.at[11].get(),
}
UPDATES = {
    "set past the end": lambda x, m: x.at[11].set(5.0),
    "add with an array": lambda x, m: x.at[np.array([1, 12])].add(1.0),
    "set negative past the start": lambda x, m: x.at[-11].set(7.0),
    "mul on a row": lambda x, m: m.at[np.array([2, 3])].mul(2.0),
    "max in a column": lambda x, m: m.at[:, np.array([0, 9])].max(100.0),
    "clip mode": lambda x, m: x.at[12].set(-1.0, mode="clip"),
}
WANT = {
    "int past the end": 9.0, "negative past the start": 0.0, "index array": [3.0, 9.0, 9.0, 0.0],
    "second axis": 7.0, "array and int": [2.0, 10.0], "row past the end": [8.0, 9.0, 10.0, 11.0],
    "at get": 9.0,
}


def _fgrad(fn):
    return fn(fnp.asarray(X), fnp.asarray(M))


@pytest.mark.parametrize("name", list(GETS))
def test_gathers_clamp(name):
    np.testing.assert_array_equal(_fgrad(GETS[name]), WANT[name])


@pytest.mark.slow  # (JAX's compiles)
@pytest.mark.parametrize("name", list(GETS) + list(UPDATES))
def test_as_jax(name):
    jnp = pytest.importorskip("jax.numpy")
    fn = {**GETS, **UPDATES}[name]
    want = np.asarray(fn(jnp.asarray(X, dtype=jnp.float32), jnp.asarray(M, dtype=jnp.float32)))
    np.testing.assert_array_equal(_fgrad(fn), want)


def test_updates_drop_out_of_bounds():
    np.testing.assert_array_equal(_fgrad(UPDATES["set past the end"]), X)
    np.testing.assert_array_equal(_fgrad(UPDATES["add with an array"]), X + (np.arange(10) == 1))
    got = _fgrad(UPDATES["max in a column"])
    assert got.shape == (3, 4) and (got[:, 0] == 100.0).all() and (got[:, 1:] == M[:, 1:]).all()


def test_traced_indices_clamp_and_drop_under_jit():
    get = fgrad.jit(lambda x, i: x[i])
    put = fgrad.jit(lambda x, i: x.at[i].set(100.0))
    assert float(get(X, 14)) == 9.0 and float(get(X, -14)) == 0.0
    np.testing.assert_array_equal(put(X, 14), X)
    np.testing.assert_array_equal(put(X, 3), np.where(np.arange(10) == 3, 100.0, X))
    np.testing.assert_array_equal(get(X, np.array([1, 40])), [1.0, 9.0])


def test_derivatives_go_to_the_clamped_entry():
    g = fgrad.grad(lambda x: x[11] * 2.0 + x.at[15].set(3.0).sum())(fnp.asarray(X))
    np.testing.assert_array_equal(g, np.ones(10) + 2.0 * (np.arange(10) == 9))


def test_other_index_errors_still_raise():
    with pytest.raises(IndexError, match="too many indices"):
        fnp.asarray(X)[1, 2]
    with pytest.raises(IndexError, match="integer"):
        fnp.asarray(X)[1.5]
    with pytest.raises(ValueError, match="mode must be"):
        fnp.asarray(X).at[1].set(0.0, mode="wrap")


def test_numpy_getitem_and_the_torch_door_raise():
    with pytest.raises(IndexError, match="out of bounds"):
        fnp.getitem(X, 11)
    torch = pytest.importorskip("fgrad.torch")
    t = torch.arange(10.0, requires_grad=True)
    with pytest.raises(IndexError):
        t[11]
    with pytest.raises(IndexError):
        t[torch.tensor([1, 12])]
    with pytest.raises(IndexError):
        torch.zeros(10).index_put_((torch.tensor([12]),), torch.tensor([1.0]))
