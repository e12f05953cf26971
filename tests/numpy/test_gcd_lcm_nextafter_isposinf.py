"""fgrad.numpy's gcd, lcm, nextafter, isposinf and isneginf against NumPy: values and dtypes
bit for bit (signed zeros, NaNs, infinities, subnormals, integer wrap-around), the same values
under jit and vmap, NumPy's errors for the dtypes it has no loop for."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import fgrad
import fgrad.numpy as fnp

INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


def _same(got, want):
    got = np.asarray(got)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape
    if want.dtype.kind == "f":
        assert np.array_equal(got, want, equal_nan=True), (got, want)
        assert np.array_equal(np.signbit(got), np.signbit(want)), (got, want)
    else:
        assert np.array_equal(got, want), (got, want)


def _integers(dt, rng, n=300):
    info = np.iinfo(dt)
    lo = info.min // 2 if info.min else 0
    a = rng.integers(lo, info.max // 2, n, dtype=dt)
    b = rng.integers(lo, info.max // 2, n, dtype=dt)
    a[:20], b[10:30] = 0, 0  # zeros on either side and both
    return a, b


@pytest.mark.parametrize("dt", INTS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", ["gcd", "lcm"])
def test_gcd_lcm_equal_numpys(name, dt):
    a, b = _integers(dt, np.random.default_rng(0))
    want = getattr(np, name)(a, b)  # (lcm wraps where it overflows, as NumPy's)
    _same(getattr(fnp, name)(a, b), want)
    _same(fgrad.jit(getattr(fnp, name))(a, b), want)


def test_gcd_lcm_signs_promotion_broadcasting_and_worst_case():
    a, b = np.array([[-4, 6, 0, 9, -7]]), np.array([[6], [-4], [0]])
    for name in ("gcd", "lcm"):
        _same(getattr(fnp, name)(a, b), getattr(np, name)(a, b))
        _same(getattr(fnp, name)(np.uint8(12), np.int8(-18)), getattr(np, name)(np.uint8(12), np.int8(-18)))
        _same(getattr(fnp, name)(np.int8(-128), np.int8(0)), getattr(np, name)(np.int8(-128), np.int8(0)))
        _same(fgrad.vmap(getattr(fnp, name))(a[0], a[0][::-1]), getattr(np, name)(a[0], a[0][::-1]))
    fib = [1, 2]
    while fib[-1] < 2 ** 62:  # consecutive Fibonacci numbers: Euclid's most steps for int64
        fib.append(fib[-1] + fib[-2])
    x, y = np.int64(fib[-1]), np.int64(fib[-2])
    assert int(fnp.gcd(x, y)) == 1 and int(fgrad.jit(fnp.gcd)(x, y)) == 1
    assert int(fgrad.jit(fnp.gcd)(np.int64(6 * fib[-6]), np.int64(4 * fib[-6]))) == 2 * fib[-6]


@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64], ids=lambda d: np.dtype(d).name)
def test_nextafter_equals_numpys(dt):
    info = np.finfo(dt)
    special = np.array([0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 3.0, np.inf, -np.inf, np.nan, info.tiny, info.max,
                        -info.max, info.smallest_subnormal, -info.smallest_subnormal], dt)
    x, y = np.meshgrid(special, special)
    rng = np.random.default_rng(1)
    r = rng.standard_normal((2, 200)).astype(dt)
    for a, b in ((x, y), (r[0], r[1]), (r[0], r[0])):
        with np.errstate(over="ignore"):  # (NumPy warns past the largest float)
            want = np.nextafter(a, b)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # fgrad's gives the infinity without a warning
            _same(fnp.nextafter(a, b), want)
        _same(fgrad.jit(fnp.nextafter)(a, b), want)


def test_nextafter_promotes_integers_and_has_zero_derivative():
    _same(fnp.nextafter(1, 2), np.nextafter(1, 2))
    _same(fnp.nextafter(np.float32(1), 2), np.nextafter(np.float32(1), 2))
    assert float(fgrad.grad(lambda x: fnp.nextafter(x, 2.0))(1.0)) == 0.0


def test_isposinf_isneginf_equal_numpys():
    v = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1.0, -np.finfo(np.float64).max])
    for name in ("isposinf", "isneginf"):
        for x in (v, v[:-1].astype(np.float32), np.arange(-2, 3), np.array([True, False])):
            _same(getattr(fnp, name)(x), getattr(np, name)(x))
        _same(fgrad.vmap(getattr(fnp, name))(v), getattr(np, name)(v))


@pytest.mark.parametrize("call", [lambda: fnp.gcd(1.0, 2), lambda: fnp.lcm(True, False),
                                  lambda: fnp.isposinf(np.array([1j])), lambda: fnp.isneginf(1j),
                                  lambda: fnp.nextafter(1j, 2.0)],
                         ids=["gcd float", "lcm bool", "isposinf complex", "isneginf complex", "nextafter complex"])
def test_refused_as_numpy_refuses(call):
    with pytest.raises(TypeError):
        call()
