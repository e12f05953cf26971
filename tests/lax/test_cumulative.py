"""fgrad.lax's cumulative reductions (cummax, cummin, cumlogsumexp, cumprod) against jax.lax:
values, dtypes and errors, and gradients (fgrad scans in the grouping JAX differentiates its
cumulative primitives through, so derivatives agree even where they depend on it: ties of
cummax/cummin); numerical derivative checks of orders 1-2 in both modes; jit and vmap."""
from __future__ import annotations

import jax
import numpy as np
import pytest

import fgrad
import fgrad.lax as fl
import fgrad.numpy as fnp
from fgrad.test_util import check_grads

jax.config.update("jax_enable_x64", True)

NAMES = ["cummax", "cummin", "cumlogsumexp", "cumprod"]
INF, NAN = np.inf, np.nan
RNG = np.random.default_rng(0)


def _both(name: str, x, axis: int = 0, reverse: bool = False):
    return (np.asarray(getattr(fl, name)(x, axis, reverse)),
            np.asarray(getattr(jax.lax, name)(x, axis=axis, reverse=reverse)))


def _grads(name: str, x, axis: int = 0, reverse: bool = False):
    return (np.asarray(fgrad.grad(lambda v: fnp.sum(getattr(fl, name)(v, axis, reverse)))(x)),
            np.asarray(jax.grad(lambda v: getattr(jax.lax, name)(v, axis=axis, reverse=reverse).sum())(x)))


@pytest.mark.parametrize("name", NAMES)
# float64 in CI's slow step (the comparison with JAX takes seconds a case); float32 by default
@pytest.mark.parametrize("dtype", [np.float32, pytest.param(np.float64, marks=pytest.mark.slow)])
@pytest.mark.parametrize("reverse", [False, True])
def test_values_and_gradients_match_jax_with_ties(name: str, dtype, reverse: bool) -> None:
    # small integers: many ties; lengths 1-7 and 11 take odd and even steps at every level of
    # the recursion (each length and axis costs JAX a compilation: a few of them)
    for n in (1, 2, 3, 4, 5, 6, 7, 11):
        x = RNG.integers(-2, 3, size=(2, n)).astype(dtype)
        for x, axis in [(x, 1)] + ([(x.T, 0)] if n == 7 else []):
            ours, theirs = _both(name, x, axis, reverse)
            assert ours.dtype == theirs.dtype == dtype
            np.testing.assert_allclose(ours, theirs, rtol=2e-6 if dtype == np.float32 else 1e-13)
            g, jg = _grads(name, x, axis, reverse)
            assert g.dtype == jg.dtype
            np.testing.assert_allclose(g, jg, rtol=2e-6 if dtype == np.float32 else 1e-12, atol=1e-12)


def test_cummax_tie_split_is_jaxs() -> None:
    # max splits the derivative of equal operands evenly, so the gradient at ties depends on
    # the scan's grouping: JAX's (odd/even recursion) gives these weights; a sequential scan
    # would give [2.5, 1.25, ...] or a Hillis-Steele one others
    x = np.ones(5)
    np.testing.assert_array_equal(fgrad.grad(lambda v: fnp.sum(fl.cummax(v)))(x),
                                  [2.125, 1.125, 0.875, 0.375, 0.5])
    np.testing.assert_array_equal(fgrad.grad(lambda v: fnp.sum(fl.cummin(v, 0, True)))(x),
                                  [0.5, 0.375, 0.875, 1.125, 2.125])


@pytest.mark.parametrize("name", ["cummax", "cummin", "cumprod"])
@pytest.mark.parametrize("x", [[1.0, 3.0, NAN, 2.0, 5.0], [NAN, 1.0, 2.0], [INF, -INF, 1.0, -INF],
                               [0.0, 2.0, 0.0, -3.0]])
def test_nan_and_infinities_match_jax(name: str, x) -> None:
    # NaN propagates; max/min give NaN operands (and the other operand of a NaN) derivative 0
    x = np.array(x)
    ours, theirs = _both(name, x)
    np.testing.assert_array_equal(ours, theirs)
    with np.errstate(all="ignore"):
        g, jg = _grads(name, x)
    np.testing.assert_array_equal(g, jg)


def test_cumlogsumexp_at_infinities() -> None:
    # values agree; derivatives differ where JAX's logaddexp rule fails: JAX gives NaN at
    # equal -inf operands (exp(-inf - -inf)) and, past +inf, exp(x) of the finite entries
    # (its rule replaces the infinite output by 0). fgrad's logaddexp primitive splits equal
    # infinities evenly and gives entries beside +inf derivative 0 (the limits);
    # docs/jax-differences.md lists this
    for x, grad in [([-INF, -INF, 0.0], [1.5, 0.5, 1.0]), ([INF, -INF, 1.0], [3.0, 0.0, 0.0])]:
        x = np.array(x)
        ours, theirs = _both("cumlogsumexp", x)
        np.testing.assert_array_equal(ours, theirs)
        with np.errstate(all="ignore"):
            g, jg = _grads("cumlogsumexp", x)
        np.testing.assert_array_equal(g, grad)
        assert not np.array_equal(jg, grad, equal_nan=True)


def test_signed_zeros_compare_equal() -> None:
    # max and min are NumPy's maximum/minimum (the second operand when equal), so cummax of
    # [0.0, -0.0] may end in -0.0 where JAX's reduce_window gives 0.0: equal values (==),
    # different sign bits; docs/jax-differences.md lists this
    x = np.array([0.0, -0.0, 0.0])
    for name in ("cummax", "cummin"):
        ours, theirs = _both(name, x)
        np.testing.assert_array_equal(ours, theirs)
    assert np.signbit(np.asarray(fl.cummax(x))[1]) and not np.signbit(np.asarray(jax.lax.cummax(x))[1])


@pytest.mark.parametrize("name,dtype", [("cummax", np.int32), ("cummin", np.int64), ("cumprod", np.int32),
                                        ("cummax", np.complex64), ("cumprod", np.complex128)])
def test_integer_and_complex_dtypes_match_jax(name: str, dtype) -> None:
    x = (RNG.integers(-3, 4, size=(2, 6)) + (1j * RNG.integers(-3, 4, size=(2, 6)) if dtype().dtype.kind == "c"
                                              else 0)).astype(dtype)
    ours, theirs = _both(name, x, 1)
    assert ours.dtype == theirs.dtype == dtype
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("name", NAMES)
def test_errors_as_jax(name: str) -> None:
    for bad, error in [(lambda f: f(np.array([True, False])), TypeError),   # booleans: not numbers
                       (lambda f: f(np.ones((2, 3)), -1), ValueError),        # lax takes axes >= 0
                       (lambda f: f(np.ones((2, 3)), 2), ValueError),
                       (lambda f: f(np.float64(1.0)), ValueError)]:          # rank 0: no axis 0
        with pytest.raises(error):
            bad(getattr(jax.lax, name))
        with pytest.raises(error):
            bad(getattr(fl, name))


def test_cumlogsumexp_refuses_integers() -> None:
    # JAX's fails on integers too (an OverflowError from its -inf identity); fgrad says why
    with pytest.raises(Exception):
        jax.lax.cumlogsumexp(np.arange(3))
    with pytest.raises(TypeError, match="does not accept dtype int64"):
        fl.cumlogsumexp(np.arange(3))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("reverse", [False, True])
def test_check_grads_orders_1_2_both_modes(name: str, reverse: bool) -> None:
    # distinct values (no ties, where max's derivative jumps): finite differences hold
    x = RNG.permutation(np.linspace(-1.5, 1.5, 15)).reshape(3, 5)
    check_grads(lambda v: getattr(fl, name)(v, 1, reverse), (x,), order=2, modes=("fwd", "rev"))
    check_grads(lambda v: getattr(fl, name)(v, 0, reverse), (x,), order=2, modes=("fwd", "rev"))


@pytest.mark.slow
def test_cumprod_through_zeros_to_second_order() -> None:
    # mul's rules are exact where entries are zero (the product of the others)
    x = np.array([[1.5, 0.0, 2.0, 0.0, -0.5], [0.0, 0.0, 3.0, -1.0, 2.0]])
    check_grads(lambda v: fl.cumprod(v, 1), (x,), order=2, modes=("fwd", "rev"))
    h = fgrad.hessian(lambda v: fnp.sum(fl.cumprod(v, 1)))(x)
    jh = jax.hessian(lambda v: jax.lax.cumprod(v, axis=1).sum())(x)
    np.testing.assert_allclose(h, jh, atol=1e-12)


@pytest.mark.parametrize("name", NAMES)
def test_jit_and_vmap(name: str) -> None:
    x = RNG.normal(size=(4, 6))
    f = getattr(fl, name)
    np.testing.assert_allclose(fgrad.jit(lambda v: f(v, 1, True))(x), f(x, 1, True), rtol=1e-14)
    np.testing.assert_allclose(fgrad.vmap(lambda v: f(v, 0))(x), f(x, 1), rtol=1e-14)
    np.testing.assert_allclose(fgrad.vmap(lambda v: f(v, 0), in_axes=1, out_axes=1)(x), f(x, 0), rtol=1e-14)


def test_length_zero_and_one() -> None:
    for name in NAMES:
        for shape in [(0,), (1,), (2, 0), (3, 1)]:
            x = np.ones(shape)
            ours, theirs = _both(name, x, len(shape) - 1)
            assert ours.shape == theirs.shape == shape
            np.testing.assert_array_equal(ours, theirs)


def test_count_nonzero_matches_numpy_and_jax() -> None:
    x = np.array([[0.0, 1.0, NAN], [-0.0, 2.0, 0.0]])
    for kwargs in [{}, {"axis": 0}, {"axis": -1, "keepdims": True}, {"axis": (0, 1)}, {"keepdims": True}]:
        ours = np.asarray(fnp.count_nonzero(x, **kwargs))
        np.testing.assert_array_equal(ours, np.count_nonzero(x, **kwargs))
        np.testing.assert_array_equal(ours, jax.numpy.count_nonzero(x, **kwargs))
        assert ours.dtype == np.int64
    assert int(fnp.count_nonzero(np.array([1j, 0j, True]))) == 2
    assert int(fnp.count_nonzero(np.array([True, False, True]))) == 2
    with pytest.raises(ValueError, match="count_nonzero: axis 2 is out of bounds"):
        fnp.count_nonzero(x, axis=2)


# --- the facade computes with these ---------------------------------------------------------------

@pytest.mark.parametrize("name", ["cummax", "cummin"])
@pytest.mark.parametrize("values,dtype", [
    ([[1.0, 3.0, 3.0, 2.0, NAN, 5.0, NAN, 0.0]], "float32"), ([[0.0, -0.0, 0.0, -0.0]], "float64"),
    ([[-INF, -INF, 0.0, INF, INF, 1.0]], "float64"), ([[2.0, 2.0, 2.0], [1.0, 5.0, 1.0]], "float32"),
    ([[3, 1, 3, 3, 0, 4]], "int64"), ([[True, False, True, True]], "bool")])
def test_facade_cummax_cummin_indices_and_gradient_are_pytorchs(name: str, values, dtype: str) -> None:
    # PyTorch's convention, kept by the facade over fgrad.lax's scans: the latest position among
    # equal values (NaN wins), and the whole gradient to that index (where fgrad.lax.cummax
    # splits it between ties, as JAX)
    import torch as real
    import fgrad.torch as ft
    grad = dtype.startswith("float")
    outs = []
    for lib in (real, ft):
        x = lib.tensor(values, dtype=getattr(lib, dtype), requires_grad=grad)
        v, i = getattr(lib, name)(x, 1)
        with np.errstate(invalid="ignore"):  # (the loss sums -inf and inf: NaN, unused)
            g = lib.autograd.grad((v * (lib.arange(v.shape[1], dtype=v.dtype) + 1)).sum(), x)[0] if grad else None
        outs.append((v.detach().numpy(), i.numpy(), None if g is None else g.numpy(),
                     None if v.grad_fn is None else type(v.grad_fn).__name__))
    (v, i, g, node), (fv, fi, fg, fnode) = outs
    np.testing.assert_array_equal(fv, v)
    assert fv.dtype == v.dtype and np.array_equal(np.signbit(fv), np.signbit(v))
    np.testing.assert_array_equal(fi, i)
    assert fi.dtype == np.int64 and fnode == node
    if grad:
        np.testing.assert_array_equal(fg, g)


def test_facade_logcumsumexp_is_lax_cumlogsumexp() -> None:
    import fgrad.torch as ft
    x = RNG.normal(size=(3, 6))
    out = ft.logcumsumexp(ft.tensor(x, requires_grad=True), 1)
    assert type(out.grad_fn).__name__ == "LogcumsumexpBackward0"
    np.testing.assert_array_equal(out.detach().numpy(), fl.cumlogsumexp(x, 1))


@pytest.mark.parametrize("dim", [None, 0, -1, (0, 1)])
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "complex64"])
def test_facade_count_nonzero_is_pytorchs(dim, dtype: str) -> None:
    import torch as real
    import fgrad.torch as ft
    values = [[0.0, 1.0, NAN], [-0.0, 2.0, 0.0]] if dtype.startswith("float") else [[0, 1, 1], [0, 2, 0]]
    ours, theirs = (lib.count_nonzero(lib.tensor(values, dtype=getattr(lib, dtype)), dim) for lib in (ft, real))
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert ours.numpy().dtype == np.int64 and ours.grad_fn is None
    with pytest.raises(IndexError, match="Dimension out of range"):
        ft.count_nonzero(ft.tensor(values), 2)
