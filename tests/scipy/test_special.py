"""fgrad.scipy.special at its hard points: values against SciPy and derivatives (to third
order, in reverse and forward mode) against mpmath, near the poles of gamma, at the ends of the
domains of erfinv, betainc and the incomplete gamma function, and for Bessel functions at 0 and
at large arguments; the derivatives that raise (shape parameters, orders); dtypes. The
registry cases (tests/cases/special.py) check every function against finite differences,
vmap, jit and abstract_eval in the interior of its domain."""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.special as ss

import fgrad
import fgrad.scipy.special as fs
from fgrad.core.errors import DifferentiationError

mp = pytest.importorskip("mpmath")
mp.mp.dps = 40


def _derivatives(f, x, order=3, mode="rev"):
    """[f(x), f'(x), ..., f^(order)(x)] at a float x, by nested grad (rev) or jvp (fwd)."""
    fns = [f]
    for _ in range(order):
        h = fns[-1]
        if mode == "rev":
            fns.append(fgrad.grad(h))
        else:
            fns.append(lambda t, h=h: fgrad.jvp(h, (t,), (np.float64(1.0),))[1])
    return [float(g(np.float64(x))) for g in fns]


def _mp_derivatives(f, x, order=3):
    return [float(f(mp.mpf(x)))] + [float(mp.diff(f, mp.mpf(x), k)) for k in range(1, order + 1)]


def _assert_derivatives(f, mp_f, x, rtol, order=3, atol=0.0):
    want = _mp_derivatives(mp_f, x, order)
    for mode in ("rev", "fwd"):
        got = _derivatives(f, x, order, mode)
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=f"x = {x!r} ({mode})")


# --- the gamma family ------------------------------------------------------------------------

@pytest.mark.parametrize("x", [-1 + 1e-6, -2.5, -0.5, 1e-8, 0.5, 3.7, 170.0])
def test_gamma_near_poles_and_overflow(x):
    assert fs.gamma(x) == ss.gamma(x)
    # near a pole the value itself is ill-conditioned in x (relative error ~ 1e-16 / (x + 1))
    _assert_derivatives(fs.gamma, mp.gamma, x, rtol=1e-10 if x == -1 + 1e-6 else 1e-13)


@pytest.mark.parametrize("x", [0.0, -1.0, -2.0, -3.0, -2.5, 0.5, 2.0, 10.0])
def test_rgamma_is_smooth_through_the_poles_of_gamma(x):
    """1/gamma is entire: at 0, -1, -2, ... its derivatives are finite ((-1)^n n! first)."""
    assert fs.rgamma(x) == ss.rgamma(x)
    _assert_derivatives(fs.rgamma, mp.rgamma, x, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("x", [-2.5, -0.5, 0.3, 5.0, 1e3])
def test_gammaln_digamma_polygamma_chain(x):
    _assert_derivatives(fs.gammaln, mp.loggamma if x > 0 else (lambda t: mp.log(abs(mp.gamma(t)))), x,
                        rtol=1e-12)
    for n in range(3):  # d/dx polygamma(n, x) = polygamma(n + 1, x)
        got = fgrad.grad(lambda t: fs.polygamma(n, t))(x)
        np.testing.assert_allclose(got, float(mp.polygamma(n + 1, x)), rtol=1e-12)
    np.testing.assert_allclose(fgrad.grad(fs.psi)(x), ss.polygamma(1, x), rtol=1e-14)


def test_gammasgn_and_multigammaln():
    x = np.array([-2.5, -1.5, -0.5, 0.5, 3.0])
    np.testing.assert_array_equal(fs.gammasgn(x), ss.gammasgn(x))
    np.testing.assert_array_equal(fgrad.grad(lambda t: fs.gammasgn(t).sum())(x), np.zeros(5))
    a = np.array([2.5, 4.0])
    np.testing.assert_allclose(fs.multigammaln(a, 4), ss.multigammaln(a, 4), rtol=1e-14)
    want = sum(ss.digamma(a - j / 2) for j in range(4))
    np.testing.assert_allclose(fgrad.grad(lambda t: fs.multigammaln(t, 4).sum())(a), want, rtol=1e-14)
    with pytest.raises(ValueError, match="positive integer"):
        fs.multigammaln(a, 0)


def test_beta_and_betaln_derivatives():
    for a, b in [(0.5, 2.0), (3.0, 4.5), (-0.5, 2.0), (200.0, 300.0)]:
        _assert_derivatives(lambda t: fs.betaln(t, b), lambda t: mp.log(abs(mp.beta(t, b))), a, rtol=1e-11,
                            order=2, atol=1e-15)
        if a < 100:
            _assert_derivatives(lambda t: fs.beta(a, t), lambda t: mp.beta(a, t), b, rtol=1e-12, order=2)


# --- incomplete gamma and beta functions: derivatives in x at the ends of the domain -----------

@pytest.mark.parametrize("a,b", [(1.0, 1.0), (1.0, 3.0), (2.0, 1.0), (0.5, 0.5), (2.5, 4.0), (30.0, 0.7)])
def test_betainc_at_the_ends_and_inside(a, b):
    xs = np.array([0.0, 1e-12, 0.3, 1 - 1e-12, 1.0])
    np.testing.assert_array_equal(fs.betainc(a, b, xs), ss.betainc(a, b, xs))
    density = lambda t: t ** (a - 1) * (1 - t) ** (b - 1) / mp.beta(a, b)  # noqa: E731
    for x in xs:
        d1, d2 = (fgrad.grad(lambda t: fs.betainc(a, b, t)), fgrad.grad(fgrad.grad(lambda t: fs.betainc(a, b, t))))
        want1 = density(mp.mpf(x)) if 0 < x < 1 or (a >= 1 if x == 0 else b >= 1) else mp.inf
        np.testing.assert_allclose(d1(x), float(want1), rtol=1e-12, err_msg=f"x = {x}")
        if 0 < x < 1:
            np.testing.assert_allclose(d2(x), float(mp.diff(density, mp.mpf(x))), rtol=1e-9)
    # at an end where the density is finite and constant (a == 1 at 0, b == 1 at 1)
    if a == 1.0:
        assert fgrad.grad(lambda t: fs.betainc(a, b, t))(0.0) == pytest.approx(b, rel=1e-14)
    if b == 1.0:
        assert fgrad.grad(lambda t: fs.betainc(a, b, t))(1.0) == pytest.approx(a, rel=1e-14)


@pytest.mark.parametrize("a", [0.5, 1.0, 2.0, 7.5, 300.0])
def test_gammainc_derivatives(a):
    xs = [0.0, 1e-10, 0.5, a, 3 * a + 10]
    for x in xs:
        for f, sign in ((fs.gammainc, 1.0), (fs.gammaincc, -1.0)):
            got = fgrad.grad(lambda t: f(a, t))(x)
            want = mp.inf if (x == 0 and a < 1) else mp.exp(-x) * mp.mpf(x) ** (a - 1) / mp.gamma(a)
            np.testing.assert_allclose(got, sign * float(want), rtol=1e-11, err_msg=f"{f.__name__}({a}, {x})")
    for x in [x for x in xs if x > 0]:  # the density's derivative, density * ((a - 1) / x - 1)
        want2 = mp.exp(-x) * mp.mpf(x) ** (a - 1) / mp.gamma(a) * ((a - 1) / mp.mpf(x) - 1)
        np.testing.assert_allclose(fgrad.grad(fgrad.grad(lambda t: fs.gammainc(a, t)))(x), float(want2),
                                   rtol=1e-11, atol=1e-300)


def test_stdtr_is_differentiable_at_zero():
    """t.cdf composed from betainc(df/2, 1/2, df/(df+t^2)) would be inf * 0 = NaN at t = 0."""
    for df in (0.5, 1.0, 3.0, 40.0):
        got = _derivatives(lambda t: fs.stdtr(df, t), 0.0, order=2)
        norm = mp.gamma((df + 1) / 2) / (mp.sqrt(df * mp.pi) * mp.gamma(df / 2))
        pdf = lambda t: norm * (1 + t * t / df) ** (-(df + 1) / 2)  # noqa: E731
        np.testing.assert_allclose(got, [0.5, float(pdf(0)), 0.0], rtol=1e-13, atol=1e-15)
        p = 0.8
        q = fs.stdtrit(df, p)
        np.testing.assert_allclose(fgrad.grad(lambda u: fs.stdtrit(df, u))(p), 1 / float(pdf(mp.mpf(float(q)))),
                                   rtol=1e-9)


# --- the error-function family -----------------------------------------------------------------

@pytest.mark.parametrize("y", [1 - 1e-12, -(1 - 1e-12), 1 - 2.0 ** -52, 0.5, 0.0])
def test_erfinv_near_one(y):
    assert fs.erfinv(y) == ss.erfinv(y)
    t = mp.erfinv(mp.mpf(y))
    d1 = mp.sqrt(mp.pi) / 2 * mp.exp(t * t)  # 1 / erf'(t); then d/dy (d1) = 2 t d1^2
    np.testing.assert_allclose(_derivatives(fs.erfinv, y, order=2), [float(t), float(d1), float(2 * t * d1 ** 2)],
                               rtol=1e-13, atol=1e-300)
    assert fgrad.grad(fs.erfinv)(1.0) == np.inf
    z = 1 - y  # (rounded: erfcinv's own reference)
    want = -mp.sqrt(mp.pi) / 2 * mp.exp(mp.erfinv(1 - mp.mpf(z)) ** 2)
    np.testing.assert_allclose(fgrad.grad(fs.erfcinv)(z), float(want), rtol=1e-13)


@pytest.mark.parametrize("x", [-1e3, -40.0, -5.0, 0.0, 5.0, 30.0])
def test_log_ndtr_tails(x):
    """The derivative pdf / cdf is sqrt(2/pi) / erfcx(-x/sqrt2): no under- or overflow. Its own
    derivative goes through erfcx' = 2 u erfcx(u) - 2/sqrt(pi), which cancels to ~1/u^2: a
    relative error ~ x^2 eps (5e-11 at x = -1000), and at x = 30 it underflows (1e-195)."""
    assert fs.log_ndtr(x) == ss.log_ndtr(x)
    ratio = lambda t: mp.npdf(t) / mp.ncdf(t)  # noqa: E731
    want = [float(ratio(mp.mpf(x))), float(mp.diff(ratio, mp.mpf(x)))]
    for mode in ("rev", "fwd"):
        got = _derivatives(fs.log_ndtr, x, order=2, mode=mode)[1:]
        # (erfcx(-x/sqrt2) = 2 exp(x^2/2) - erfcx(x/sqrt2) above 0: exp's relative error ~ x^2 eps)
        np.testing.assert_allclose(got[0], want[0], rtol=max(1e-13, x * x * 1e-15), atol=1e-300)
        np.testing.assert_allclose(got[1], want[1], rtol=max(1e-12, x * x * 1e-16), atol=1e-180)
    np.testing.assert_allclose(fgrad.grad(fs.ndtr)(x), float(mp.npdf(x)), rtol=max(1e-13, x * x * 1e-15), atol=1e-300)


def test_log_ndtr_third_derivative_in_the_tail():
    """Against mpmath (JAX's asymptotic series is 6% off here at third order)."""
    want = float(mp.diff(lambda t: mp.log(mp.ncdf(t)), mp.mpf(-30.0), 3))
    assert _derivatives(fs.log_ndtr, -30.0)[3] == pytest.approx(want, rel=1e-7)


@pytest.mark.parametrize("p", [1e-300, 1e-10, 0.3, 1 - 1e-10])
def test_ndtri_tails(p):
    assert fs.ndtri(p) == ss.ndtri(p)
    x = mp.sqrt(2) * mp.erfinv(2 * mp.mpf(p) - 1) if p > 1e-100 else mp.mpf(float(ss.ndtri(p)))
    np.testing.assert_allclose(fgrad.grad(fs.ndtri)(p), float(1 / mp.npdf(x)), rtol=1e-9)


def test_erfc_erfcx_tails():
    x = np.array([-3.0, 0.0, 5.0, 10.0, 26.0])
    np.testing.assert_array_equal(fs.erfc(x), ss.erfc(x))
    np.testing.assert_array_equal(fs.erfcx(x), ss.erfcx(x))
    for t in x:
        _assert_derivatives(fs.erfc, mp.erfc, t, rtol=1e-13, order=2, atol=1e-300)
        # erfcx' = 2 x erfcx - 2/sqrt(pi) cancels like log_ndtr's (see above), and erfcx'' twice:
        # a relative error ~ x^4 eps in the second derivative
        _assert_derivatives(fs.erfcx, lambda u: mp.exp(u * u) * mp.erfc(u), t, rtol=max(1e-13, t ** 4 * 1e-15),
                            order=2)


@pytest.mark.parametrize("x", [-40.0, -1.0, 0.0, 5.0, 40.0])
def test_log_expit_and_erfcinv_derivatives(x):
    # (logistic's derivative out * (1 - out) is 0 where out rounds to 1: absolute error < 1e-16)
    _assert_derivatives(fs.log_expit, lambda t: -mp.log1p(mp.exp(-t)), x, rtol=1e-13, atol=1e-16)
    y = 1.0 / (1.0 + math.exp(-x / 10.0))  # in (0, 2) for erfcinv
    _assert_derivatives(fs.erfcinv, lambda t: mp.erfinv(1 - t), y, rtol=1e-10, order=2)


# --- Bessel functions at 0 and at large arguments --------------------------------------------------

_BESSEL = {  # name: (fgrad function of x, mpmath function of x, points)
    "j0": (fs.j0, lambda z: mp.besselj(0, z), [0.0, 2.0, 50.0, 500.0]),
    "j1": (fs.j1, lambda z: mp.besselj(1, z), [0.0, 2.0, 50.0, 500.0]),
    "jn3": (lambda x: fs.jn(3, x), lambda z: mp.besselj(3, z), [2.0, 50.0, 500.0]),
    "jv2.5": (lambda x: fs.jv(2.5, x), lambda z: mp.besselj(2.5, z), [1e-3, 50.0, 500.0]),
    "y0": (fs.y0, lambda z: mp.bessely(0, z), [1e-3, 2.0, 50.0, 500.0]),
    "y1": (fs.y1, lambda z: mp.bessely(1, z), [1e-3, 2.0, 50.0, 500.0]),
    "yn3": (lambda x: fs.yn(3, x), lambda z: mp.bessely(3, z), [0.5, 50.0, 500.0]),
    "yv0.5": (lambda x: fs.yv(0.5, x), lambda z: mp.bessely(0.5, z), [0.5, 50.0, 500.0]),
    "i0": (fs.i0, lambda z: mp.besseli(0, z), [0.0, -2.0, 50.0, 500.0]),
    "i1": (fs.i1, lambda z: mp.besseli(1, z), [0.0, -2.0, 50.0, 500.0]),
    "iv1.5": (lambda x: fs.iv(1.5, x), lambda z: mp.besseli(1.5, z), [1e-3, 50.0, 500.0]),
    "i0e": (fs.i0e, lambda z: mp.besseli(0, z) * mp.exp(-abs(z)), [-2.0, 2.0, 50.0, 500.0]),
    "i1e": (fs.i1e, lambda z: mp.besseli(1, z) * mp.exp(-abs(z)), [0.0, -2.0, 50.0, 500.0]),
    "ive1.5": (lambda x: fs.ive(1.5, x), lambda z: mp.besseli(1.5, z) * mp.exp(-abs(z)), [1e-3, 50.0, 500.0]),
}


@pytest.mark.parametrize("name", sorted(_BESSEL))
def test_bessel_at_zero_and_large_arguments(name):
    f, mp_f, points = _BESSEL[name]
    for x in points:
        # the scaled functions' second derivatives at 500 cancel O(1) terms to O(1/x^2): 1e-10
        rtol = 1e-9 if name.endswith("e") or name.startswith("ive") else 1e-12
        _assert_derivatives(f, mp_f, x, rtol=rtol, order=2, atol=1e-14)


def test_bessel_values_at_zero_and_large_arguments():
    x = np.array([0.0, 1e-300, 50.0, 500.0])
    for name in ("j0", "j1", "i0", "i1", "i0e", "i1e"):
        np.testing.assert_array_equal(getattr(fs, name)(x), getattr(ss, name)(x), err_msg=name)
    for name in ("jv", "iv", "ive", "yv"):
        np.testing.assert_array_equal(getattr(fs, name)(1.5, x), getattr(ss, name)(1.5, x), err_msg=name)
    np.testing.assert_array_equal(fs.yn(2, x), ss.yn(2, x))
    np.testing.assert_array_equal(fs.y0(x), ss.y0(x))
    # I1'(0) = 1/2 exactly (the recurrence, not I1(x)/x); i0e has its kink at 0 (derivative 0 there)
    assert fgrad.grad(fs.i1)(0.0) == 0.5
    assert fgrad.grad(fs.i0e)(0.0) == 0.0
    assert fgrad.grad(fs.i0e)(1e-12) == pytest.approx(-1.0, rel=1e-9)


# --- xlogy, xlog1py, entr ----------------------------------------------------------------------------

def test_xlogy_at_zero():
    g, h = fgrad.grad, fgrad.hessian
    assert fs.xlogy(0.0, 0.0) == 0.0 and fs.xlog1py(0.0, -1.0) == 0.0
    assert np.isnan(fs.xlogy(0.0, np.nan))
    # d/dy = x/y is 0 at x == 0 (also at y == 0: the function is 0 for all y); d/dx = log(y)
    assert g(lambda y: fs.xlogy(0.0, y))(0.0) == 0.0
    assert g(lambda x: fs.xlogy(x, 2.0))(0.0) == pytest.approx(math.log(2.0), rel=1e-15)
    # the mixed derivative d2/dx dy = 1/y survives at x == 0
    hess = h(lambda v: fs.xlogy(v[0], v[1]))(np.array([0.0, 2.0]))
    np.testing.assert_allclose(hess, [[0.0, 0.5], [0.5, 0.0]], rtol=1e-15)
    hess = h(lambda v: fs.xlog1py(v[0], v[1]))(np.array([0.0, 1.0]))
    np.testing.assert_allclose(hess, [[0.0, 0.5], [0.5, 0.0]], rtol=1e-15)
    assert g(lambda y: fs.xlog1py(0.0, y))(-1.0) == 0.0


def test_entr_rel_entr_kl_div_edges():
    x = np.array([-1.0, 0.0, 0.5, 2.0, np.nan])
    np.testing.assert_array_equal(fs.entr(x), ss.entr(x))
    grads = fgrad.grad(lambda t: fs.entr(t).sum())(x)
    np.testing.assert_allclose(grads, [0.0, np.inf, -(math.log(0.5) + 1), -(math.log(2.0) + 1), np.nan])
    xs = np.array([0.0, 0.0, 1.0, -1.0, 1.0, 2.0, np.nan, 0.0])
    ys = np.array([0.0, 1.0, 0.0, 1.0, -1.0, 3.0, 1.0, -1.0])
    np.testing.assert_allclose(fs.rel_entr(xs, ys), ss.rel_entr(xs, ys), rtol=1e-15)  # x log(x/y): 1 ulp
    np.testing.assert_allclose(fs.kl_div(xs, ys), ss.kl_div(xs, ys), rtol=1e-15)
    gx, gy = fgrad.grad(lambda a, b: fs.kl_div(a, b).sum(), argnums=(0, 1))(xs[5:6], ys[5:6])
    np.testing.assert_allclose([gx[0], gy[0]], [math.log(2 / 3), 1 - 2 / 3], rtol=1e-15)
    far = np.array([-800.0, 0.0, 800.0])
    np.testing.assert_allclose(fs.log_expit(far), ss.log_expit(far), rtol=1e-15)


# --- derivatives that do not exist raise, naming the argument ----------------------------------------

_NO_DERIVATIVE = [  # (call, the argument differentiated, its name in the message)
    (lambda a: fs.betainc(a, 2.0, 0.3), "a"), (lambda b: fs.betainc(2.0, b, 0.3), "b"),
    (lambda a: fs.gammainc(a, 0.3), "a"), (lambda a: fs.gammaincc(a, 0.3), "a"),
    (lambda v: fs.iv(v, 2.0), "v"), (lambda v: fs.ive(v, 2.0), "v"), (lambda v: fs.jv(v, 2.0), "v"),
    (lambda v: fs.jn(v, 2.0), "v"), (lambda v: fs.yv(v, 2.0), "v"), (lambda n: fs.yn(n, 2.0), "n"),
    (lambda n: fs.polygamma(n, 2.0), "n"), (lambda df: fs.stdtr(df, 0.3), "df"),
    (lambda df: fs.stdtrit(df, 0.3), "df"),
]


@pytest.mark.parametrize("k", range(len(_NO_DERIVATIVE)))
def test_derivatives_without_closed_form_raise(k):
    f, arg = _NO_DERIVATIVE[k]
    for transform in (fgrad.grad(f), lambda p: fgrad.jvp(f, (p,), (1.0,))):
        with pytest.raises(DifferentiationError, match=f"no derivative with respect to {arg} "):
            transform(2.0)
    # the value is fine, and stop_gradient marks the argument a constant
    assert np.isfinite(f(2.0))
    assert fgrad.grad(lambda p: f(fgrad.stop_gradient(p)))(2.0) == 0.0


def test_other_arguments_still_differentiate():
    g = fgrad.grad(lambda x, a: fs.betainc(a, 2.0, x) + fs.gammainc(a, x) + fs.iv(a, x))(0.3, 1.5)
    want = ss.beta(1.5, 2.0) ** -1 * 0.3 ** 0.5 * 0.7 + math.exp(-0.3) * 0.3 ** 0.5 / ss.gamma(1.5) \
        + (ss.iv(0.5, 0.3) + ss.iv(2.5, 0.3)) / 2
    assert g == pytest.approx(want, rel=1e-13)


# --- dtypes and argument handling ------------------------------------------------------------------------

def test_dtypes_follow_numpy_promotion():
    x32 = np.array([0.5, 1.5], np.float32)
    for name in ("gamma", "gammaln", "digamma", "erfc", "erfinv", "ndtr", "log_ndtr", "i0e", "j1", "entr"):
        assert getattr(fs, name)(x32 * 0.5).dtype == np.float32, name
    assert fs.jv(1, x32).dtype == np.float32  # a Python int is weak
    assert fs.jv(np.int64(1), x32).dtype == np.float64  # a NumPy one is not (NumPy's rule)
    assert fs.gamma(np.array([1, 2, 3])).dtype == np.float64
    assert fs.betainc(2, 3, np.float32(0.5)).dtype == np.float32
    np.testing.assert_array_equal(fs.beta(np.array([[1.0], [2.0]]), np.array([1.0, 2.0, 3.0])),
                                  ss.beta(np.array([[1.0], [2.0]]), np.array([1.0, 2.0, 3.0])))
    g = fgrad.grad(lambda t: fs.gammaln(t).sum())(x32)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, ss.digamma(x32), rtol=1e-6)


def test_jit_vmap_and_higher_order_together():
    f = fgrad.jit(fgrad.vmap(fgrad.grad(fgrad.grad(lambda x: fs.gammaln(x) + fs.i1(x) + fs.erfinv(x / 10)))))
    x = np.array([0.5, 1.5, 4.0])
    want = [_mp_derivatives(lambda t: mp.loggamma(t) + mp.besseli(1, t) + mp.erfinv(t / 10), v, 2)[2] for v in x]
    np.testing.assert_allclose(f(x), want, rtol=1e-12)
