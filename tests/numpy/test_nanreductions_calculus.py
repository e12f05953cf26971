"""The NaN-ignoring reductions, floating-point helpers and discrete calculus of fgrad.numpy
(_nanreductions.py, _math_extra.py, _calculus.py, _manipulation.py): NumPy's values at the
special values (NaN, infinities, signed zeros, subnormals, all-NaN slices) and the derivative
conventions at the points where a piece switches, against JAX where JAX has the same
convention. Smooth derivatives at ordinary points: tests/cases/numpy_extra.py; traced/eager
agreement: tests/numpy/test_parity.py; third-order derivatives at kinks: tests/api/test_kinks.py."""
from __future__ import annotations

import math
import warnings

import numpy as onp
import pytest

import fgrad
import fgrad.numpy as fnp

try:
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
except ImportError:  # pragma: no cover - the JAX comparisons skip
    jax = None

NAN, INF = onp.nan, onp.inf
SPECIALS = onp.array([-INF, -2.5, -1.0, -0.0, 0.0, 5e-324, 1e-310, 0.75, 3.0, INF, NAN])


def _numpy(fn, *args, **kw):
    with warnings.catch_warnings(), onp.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return fn(*args, **kw)


def _same(got, want):
    got, want = onp.asarray(got), onp.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    onp.testing.assert_array_equal(got, want)
    if want.dtype.kind == "f":  # signed zeros (a NaN's sign is not NumPy's contract)
        numbers = ~onp.isnan(want)
        onp.testing.assert_array_equal(onp.signbit(got)[numbers], onp.signbit(want)[numbers])


# --- values at special values --------------------------------------------------------------------

@pytest.mark.parametrize("name", ["fmax", "fmin", "copysign", "heaviside", "float_power", "isclose"])
def test_binary_functions_at_special_values(name):
    x, y = onp.meshgrid(SPECIALS, SPECIALS)
    _same(getattr(fnp, name)(x, y), _numpy(getattr(onp, name), x, y))
    _same(fgrad.jit(getattr(fnp, name))(x, y), _numpy(getattr(onp, name), x, y))


@pytest.mark.parametrize("name", ["sinc", "fabs", "signbit", "trunc", "fix", "rint", "deg2rad", "rad2deg",
                                  "nan_to_num", "angle"])
def test_unary_functions_at_special_values(name):
    want = _numpy(getattr(onp, name), SPECIALS)
    _same(getattr(fnp, name)(SPECIALS), want)
    _same(fgrad.vmap(getattr(fnp, name))(SPECIALS), want)


def test_frexp_and_ldexp_at_special_values():
    for x in (SPECIALS, SPECIALS.astype(onp.float32)):
        m, e = fnp.frexp(x)
        want_m, want_e = onp.frexp(x)
        _same(m, want_m)
        _same(e, want_e)
        _same(fnp.ldexp(m, e), _numpy(onp.ldexp, want_m, want_e))
    n = onp.array([0, 1, -1, 1100, -1100, 3, 2, -1074, 5, 1, 0])
    _same(fnp.ldexp(SPECIALS, n), _numpy(onp.ldexp, SPECIALS, n))
    with pytest.raises(TypeError, match="integer"):
        fnp.ldexp(1.0, 2.0)


def test_isclose_arguments_and_allclose():
    x, y = onp.meshgrid(SPECIALS, SPECIALS)
    for kw in ({"equal_nan": True}, {"rtol": 0.5}, {"atol": 1.0, "rtol": 0.0}):
        _same(fnp.isclose(x, y, **kw), _numpy(onp.isclose, x, y, **kw))
    assert fnp.allclose(x, x, equal_nan=True) is True and fnp.allclose(x, y) is False
    assert bool(fgrad.jit(lambda a: fnp.allclose(a, a + 1e-10))(onp.ones(3)))
    _same(fnp.isclose(onp.array([1 + 1e-9j, 2.0]), onp.array([1.0, 2 + 1j])),
          onp.isclose(onp.array([1 + 1e-9j, 2.0]), onp.array([1.0, 2 + 1j])))


def test_nan_reductions_of_all_nan_and_empty_slices_are_numpys():
    x = onp.array([[NAN, NAN, NAN], [1.0, NAN, -2.0], [INF, 1.0, NAN]])
    for name in ("nansum", "nanprod", "nanmean", "nanvar", "nanstd", "nanmax", "nanmin", "nancumsum",
                 "nancumprod"):
        for kw in ({"axis": 1}, {"axis": 0}, {}):
            _same(getattr(fnp, name)(x, **kw), _numpy(getattr(onp, name), x, **kw))
    _same(fnp.nanvar(x, axis=1, ddof=2), _numpy(onp.nanvar, x, axis=1, ddof=2))
    for name in ("nanargmax", "nanargmin"):
        _same(getattr(fnp, name)(x[1:], axis=1), getattr(onp, name)(x[1:], axis=1))
        with pytest.raises(ValueError, match="All-NaN slice"):
            getattr(fnp, name)(x, axis=1)
        # under jit the slice's index is -1, as in jax.numpy (an error cannot depend on values)
        want = [-1, 0, 0] if name == "nanargmax" else [-1, 2, 1]
        _same(fgrad.jit(lambda v, f=getattr(fnp, name): f(v, axis=1))(x), onp.array(want))
    ints = onp.arange(6).reshape(2, 3)
    for name in ("nansum", "nanprod", "nanmean", "nanmax", "nanargmin", "nancumsum"):
        _same(getattr(fnp, name)(ints, axis=1), getattr(onp, name)(ints, axis=1))


def test_gradient_matches_numpy():
    rng = onp.random.default_rng(0)
    f = rng.normal(size=(4, 5, 3))
    points = onp.array([0.0, 0.5, 1.5, 1.75, 3.0])
    for args, kw in [((), {}), ((0.3,), {}), ((0.3,), {"edge_order": 2}), ((points,), {"axis": 1}),
                     ((points,), {"axis": 1, "edge_order": 2}), ((2.0, points), {"axis": (0, 1)}),
                     ((onp.linspace(0, 1, 5),), {"axis": -2, "edge_order": 2}), ((), {"axis": (2, 0)})]:
        got, want = fnp.gradient(f, *args, **kw), onp.gradient(f, *args, **kw)
        for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
            onp.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
    _same(fnp.gradient(onp.array([1, 4, 9, 16])), onp.gradient(onp.array([1, 4, 9, 16])))
    with pytest.raises(ValueError, match="too small"):
        fnp.gradient(onp.ones(2), edge_order=2)


# --- derivatives where a piece switches ------------------------------------------------------------

def test_fmax_fmin_split_ties_and_ignore_nan():
    """Ties split evenly, as maximum/minimum (and HIPS autograd's fmax); where one side is NaN
    the other side takes the whole derivative (x where both are)."""
    x = onp.array([1.0, 2.0, NAN, 0.5, NAN])
    y = onp.array([1.0, 1.0, 3.0, NAN, NAN])
    for f in (fnp.fmax, fnp.fmin):
        gx, gy = fgrad.grad(lambda a, b, f=f: fnp.sum(f(a, b)), argnums=(0, 1))(x, y)
        small = f is fnp.fmin
        onp.testing.assert_array_equal(gx, [0.5, 0.0 if small else 1.0, 0.0, 1.0, 1.0])
        onp.testing.assert_array_equal(gy, [0.5, 1.0 if small else 0.0, 1.0, 0.0, 0.0])
        tangent = fgrad.jvp(f, (x, y), (onp.ones(5), 2.0 * onp.ones(5)))[1]
        onp.testing.assert_array_equal(tangent, [1.5, 2.0 if small else 1.0, 2.0, 1.0, 1.0])


def test_copysign_fabs_and_heaviside_at_zero():
    """copysign and fabs have abs's derivative, sign(x1) = 0 at x1 = 0 (fgrad's convention at
    abs's kink; jnp.copysign's is +-1 there); heaviside has none in x1 and passes x2's where
    x1 == 0, as jnp.heaviside."""
    x1 = onp.array([0.0, -0.0, 1.5, -2.0, 0.0])
    x2 = onp.array([-1.0, 2.0, -0.0, 0.0, 0.0])
    for name in ("copysign", "heaviside"):
        ours = fgrad.grad(lambda a, b, n=name: fnp.sum(getattr(fnp, n)(a, b) * onp.arange(1.0, 6.0)),
                          argnums=(0, 1))(x1, x2)
        want = {"copysign": ([0.0, 0.0, -3.0, -4.0, 0.0], [0.0] * 5),
                "heaviside": ([0.0] * 5, [1.0, 2.0, 0.0, 0.0, 5.0])}[name]
        onp.testing.assert_array_equal(ours[0], want[0])
        onp.testing.assert_array_equal(ours[1], want[1])
        if jax is not None and name == "heaviside":
            theirs = jax.grad(lambda a, b, n=name: jnp.sum(getattr(jnp, n)(a, b) * jnp.arange(1.0, 6.0)),
                              argnums=(0, 1))(x1, x2)
            onp.testing.assert_array_equal(ours[0], theirs[0])
            onp.testing.assert_array_equal(ours[1], theirs[1])
    onp.testing.assert_array_equal(fgrad.grad(lambda a: fnp.sum(fnp.fabs(a)))(x1), [0.0, 0.0, 1.0, -1.0, 0.0])


def test_sinc_derivatives_at_zero_are_exact():
    """The Taylor series of sinc at 0: 1 - (pi x)^2 / 6 + (pi x)^4 / 120 - ..., so the
    derivatives of order 1..5 are 0, -pi^2/3, 0, pi^4/5, 0 (by every mode)."""
    want = [1.0, 0.0, -math.pi ** 2 / 3, 0.0, math.pi ** 4 / 5, 0.0]
    f = fnp.sinc
    for k in range(6):
        onp.testing.assert_allclose(float(f(0.0)), want[k], rtol=1e-12, atol=1e-12)
        f = fgrad.grad(f) if k % 2 else (lambda g: lambda t: fgrad.jvp(g, (t,), (1.0,))[1])(f)
    if jax is not None:
        g = jnp.sinc
        for k in range(1, 5):
            g = jax.grad(g)
            assert abs(float(g(0.0)) - want[k]) < 1e-9


def test_frexp_and_ldexp_derivatives():
    x = onp.array([0.3, -5.0, 12.0, 1e-300])
    m, e = fnp.frexp(x)
    onp.testing.assert_array_equal(fgrad.grad(lambda v: fnp.sum(fnp.frexp(v)[0]))(x), onp.ldexp(1.0, -e))
    n = onp.array([3, -2, 0, 700])
    onp.testing.assert_array_equal(fgrad.grad(lambda v: fnp.sum(fnp.ldexp(v, n)))(x), onp.ldexp(1.0, n))
    onp.testing.assert_array_equal(fgrad.jvp(lambda v: fnp.ldexp(v, n), (x,), (onp.ones(4),))[1], onp.ldexp(1.0, n))


def test_nan_entries_get_zero_derivative():
    x = onp.array([[1.0, NAN, 2.0, 2.0], [NAN, NAN, NAN, NAN], [3.0, -1.0, 0.5, NAN]])
    finite = ~onp.isnan(x)
    for name in ("nansum", "nanprod", "nanmean", "nanvar", "nanstd", "nanmax", "nanmin", "nancumsum", "nancumprod"):
        g = fgrad.grad(lambda v, n=name: fnp.sum(fnp.nan_to_num(getattr(fnp, n)(v, axis=1))))(x)
        assert onp.all(g[~finite] == 0.0), (name, g)
        assert onp.all(onp.isfinite(g)), (name, g)
    # ties of nanmax share the derivative; the rest is the plain reduction's
    onp.testing.assert_array_equal(fgrad.grad(lambda v: fnp.nanmax(v[0]))(x), [[0, 0, 0.5, 0.5], [0] * 4, [0] * 4])
    onp.testing.assert_allclose(fgrad.grad(lambda v: fnp.nanmean(v[2]))(x)[2], [1 / 3, 1 / 3, 1 / 3, 0.0])
    # nanstd at zero spread: 0, as std's (a kink: the norm'(0) = 0 convention)
    onp.testing.assert_array_equal(fgrad.grad(lambda v: fnp.nanstd(v))(onp.array([2.0, NAN, 2.0])), [0, 0, 0])
    if jax is not None:
        y = onp.where(finite, x, 0.7) + onp.where(finite, 0.0, NAN)
        for name in ("nanmean", "nanvar", "nanprod", "nancumprod", "nanmax"):
            ours = fgrad.grad(lambda v, n=name: fnp.sum(fnp.nan_to_num(getattr(fnp, n)(v, axis=1))))(y)
            theirs = jax.grad(lambda v, n=name: jnp.sum(jnp.nan_to_num(getattr(jnp, n)(v, axis=1))))(y)
            onp.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-15)


def test_nan_to_num_derivative_passes_where_kept():
    x = onp.array([1.0, NAN, INF, -INF, -2.0])
    gx, gnan = fgrad.grad(lambda v, r: fnp.sum(fnp.nan_to_num(v, nan=r) * onp.arange(1.0, 6.0)), argnums=(0, 1))(x, 0.5)
    onp.testing.assert_array_equal(gx, [1.0, 0.0, 0.0, 0.0, 5.0])
    assert gnan == 2.0


def test_partition_and_select_route_cotangents():
    x = onp.array([3.0, -1.0, 2.0, 0.5])
    g = fgrad.grad(lambda v: fnp.partition(v, 1)[1] * 2.0 + fnp.partition(v, 3)[3])(x)
    onp.testing.assert_array_equal(g, [1.0, 0.0, 0.0, 2.0])
    g = fgrad.grad(lambda v: fnp.sum(fnp.select([v > 2.5, v < 0.0], [v * 2.0, -v], 1.0)))(x)
    onp.testing.assert_array_equal(g, [2.0, -1.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="out of bounds"):
        fnp.partition(x, 4)


def test_i0_derivatives_at_zero():
    """i0'' = i0 - i1 / x -> 1/2 at 0 (finite differences agree; jnp.i0 gives 0 there)."""
    from scipy.special import i0
    h = 1e-4
    fd = (i0(h) - 2 * i0(0.0) + i0(-h)) / h ** 2
    assert fgrad.grad(fgrad.grad(fnp.i0))(0.0) == pytest.approx(0.5, abs=1e-12)
    assert fd == pytest.approx(0.5, abs=1e-6)
    assert fgrad.grad(fnp.i0)(0.0) == 0.0


def test_modf_and_convolve_match_numpy():
    x = onp.array([-3.0, -0.5, 2.25, INF, -INF, 0.0, -0.0, NAN])
    for got, want in zip(fnp.modf(x), _numpy(onp.modf, x)):
        _same(got, want)
    a, v = onp.array([1, 2, 3, 4]), onp.array([1, -1, 2])
    for mode in ("full", "same", "valid"):
        _same(fnp.convolve(a, v, mode), onp.convolve(a, v, mode))
        _same(fnp.correlate(v, a, mode), onp.correlate(v, a, mode))
