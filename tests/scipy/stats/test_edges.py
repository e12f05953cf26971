"""fgrad.scipy.stats against scipy.stats at the edges the registry cases (tests/cases/stats.py)
stay away from: the ends of each support, invalid parameters (NaN, as SciPy), far tails, the
argument conventions of dirichlet and multivariate_normal; derivatives against closed forms
and JAX; the CDF derivatives that raise (shape parameters); dtypes."""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats as st

import fgrad
import fgrad.scipy.stats as fst
from fgrad.core.errors import DifferentiationError, ShapeError

X = np.array([-1.5, -0.0, 0.0, 1e-300, 0.25, 0.5, 1.0, 1.0 + 1e-12, 2.0, 40.0])


def _close(got, want, rtol=1e-12, what=""):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape}, SciPy {want.shape}"
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-300, equal_nan=True, err_msg=what)


_CONTINUOUS = [  # (distribution, functions, parameter sets)
    ("norm", ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"), [(), (0.5, 2.0), (0.0, -1.0), (0.0, 0.0)]),
    ("t", ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"), [(1.0,), (3.5, 0.5, 2.0), (0.0,), (2.0, 0.0, -1.0)]),
    ("gamma", ("logpdf", "pdf", "cdf", "sf", "logcdf", "logsf"),
     [(0.5,), (1.0,), (2.5, 0.25, 0.5), (-1.0,), (2.0, 0.0, 0.0)]),
    ("chi2", ("logpdf", "pdf", "cdf", "sf", "logcdf", "logsf"), [(1.0,), (2.0,), (5.0, 0.1, 3.0), (0.0,)]),
    ("beta", ("logpdf", "pdf", "cdf", "sf", "logcdf", "logsf"),
     [(1.0, 1.0), (0.5, 0.5), (2.0, 3.0), (1.0, 4.0, 0.25, 0.5), (3.0, 1.0), (-1.0, 2.0), (2.0, 2.0, 0.0, -1.0)]),
]


@pytest.mark.parametrize("dist,names,params", _CONTINUOUS, ids=[c[0] for c in _CONTINUOUS])
def test_values_at_the_edges_match_scipy(dist, names, params):
    """Ends of the support, points outside it, and invalid parameters (NaN, as SciPy)."""
    for name in names:
        for p in params:
            with np.errstate(all="ignore"):  # SciPy warns about its own scale = 0 division
                want = getattr(getattr(st, dist), name)(X, *p)
            _close(getattr(getattr(fst, dist), name)(X, *p), want, rtol=1e-11, what=f"{dist}.{name}{p}")


def test_quantiles_match_scipy():
    q = np.array([0.0, 1e-300, 1e-10, 0.3, 0.5, 1 - 1e-10, 1.0, -0.5, 1.5])
    _close(fst.norm.ppf(q, 1.0, 2.0), st.norm.ppf(q, 1.0, 2.0), what="norm.ppf")
    _close(fst.norm.isf(q, 1.0, 2.0), st.norm.isf(q, 1.0, 2.0), what="norm.isf")
    inner = q[2:7]  # (SciPy's stdtrit gives +inf for p < 1e-300; t.ppf special-cases only 0)
    _close(fst.t.ppf(inner, 2.5, 1.0, 2.0), st.t.ppf(inner, 2.5, 1.0, 2.0), rtol=1e-9, what="t.ppf")
    assert fst.t.ppf(0.0, 3.0) == -np.inf and fst.t.ppf(1.0, 3.0) == np.inf


def test_poisson_edges():
    k = np.array([-1, 0, 1, 3, 10, 2.5, 200])
    for mu in (0.0, 0.5, 4.0, 150.0, -1.0):
        for name in ("logpmf", "pmf", "cdf", "sf"):
            _close(getattr(fst.poisson, name)(k, mu), getattr(st.poisson, name)(k, mu), rtol=1e-11,
                   what=f"poisson.{name}(mu={mu})")
        for name in ("logcdf", "logsf"):  # SciPy's log(cdf) loses the digits of a cdf near 1
            np.testing.assert_allclose(getattr(fst.poisson, name)(k, mu), getattr(st.poisson, name)(k, mu),
                                       rtol=1e-11, atol=1e-15, err_msg=f"poisson.{name}(mu={mu})")
    # log P(K <= 10) for mu = 0.5 is log1p(-P(K > 10)) = -7.7408407392582e-12 (mpmath)
    assert fst.poisson.logcdf(10, 0.5) == pytest.approx(-7.740840739258e-12, rel=1e-12)
    _close(fst.poisson.pmf(k, 3.0, loc=2), st.poisson.pmf(k, 3.0, loc=2), what="loc")


def test_tails_have_finite_derivatives():
    g = fgrad.grad
    # log_ndtr-based: the derivative of log cdf at -40 is pdf/cdf ~ 40, not inf/NaN
    assert g(fst.norm.logcdf)(-40.0) == pytest.approx(40.02498, rel=1e-6)
    assert g(fst.norm.logsf)(40.0) == pytest.approx(-40.02498, rel=1e-6)
    # t.cdf at 0 (its composition from betainc would be inf * 0 there)
    for df in (1.0, 4.0):
        assert g(lambda x: fst.t.cdf(x, df))(0.0) == pytest.approx(st.t.pdf(0.0, df), rel=1e-14)
    # CDFs at the start of their support: the right-hand derivative, the density there
    assert g(lambda x: fst.gamma.cdf(x, 1.0))(0.0) == pytest.approx(1.0, rel=1e-15)
    assert g(lambda x: fst.beta.cdf(x, 1.0, 3.0))(0.0) == pytest.approx(3.0, rel=1e-14)
    assert g(lambda x: fst.beta.cdf(x, 3.0, 1.0))(1.0) == pytest.approx(3.0, rel=1e-14)
    assert g(lambda x: fst.chi2.cdf(x, 2.0))(0.0) == pytest.approx(0.5, rel=1e-15)
    # outside the support the value is a constant: derivative 0, not NaN
    for f in (lambda x: fst.gamma.logpdf(x, 2.0), lambda x: fst.gamma.logcdf(x, 2.0),
              lambda x: fst.beta.logpdf(x, 2.0, 3.0), lambda x: fst.beta.logsf(x, 2.0, 3.0),
              lambda x: fst.chi2.logcdf(x, 3.0)):
        assert g(f)(-0.5) == 0.0
    assert g(lambda m: fst.poisson.logcdf(-1.0, m))(2.0) == 0.0


def test_derivatives_match_closed_forms():
    g = fgrad.grad
    x, loc, scale = 0.7, -0.2, 1.6
    z = (x - loc) / scale
    gx, gl, gs = g(fst.norm.logpdf, argnums=(0, 1, 2))(x, loc, scale)
    np.testing.assert_allclose([gx, gl, gs], [-z / scale, z / scale, (z * z - 1) / scale], rtol=1e-14)
    a, s = 2.5, 1.3
    np.testing.assert_allclose(g(lambda t: fst.gamma.cdf(t, a, 0.0, s))(x), st.gamma.pdf(x, a, 0.0, s), rtol=1e-13)
    np.testing.assert_allclose(g(lambda q: fst.gamma.logpdf(x, q, 0.0, s))(a),
                               math.log(x / s) - __import__("scipy.special").special.digamma(a), rtol=1e-13)
    k, mu = 3.0, 2.2
    np.testing.assert_allclose(g(lambda m: fst.poisson.logpmf(k, m))(mu), k / mu - 1.0, rtol=1e-14)
    np.testing.assert_allclose(g(lambda m: fst.poisson.cdf(k, m))(mu), -st.poisson.pmf(k, mu), rtol=1e-13)
    # the count is not differentiable: zero derivative (a step function)
    assert g(lambda kk: fst.poisson.logpmf(kk, mu))(k) == 0.0
    np.testing.assert_allclose(g(lambda t: fst.t.ppf(t, 3.0))(0.8), 1 / st.t.pdf(st.t.ppf(0.8, 3.0), 3.0), rtol=1e-9)


@pytest.mark.parametrize("call,arg", [
    (lambda a: fst.gamma.cdf(1.0, a), "a"), (lambda a: fst.gamma.sf(1.0, a), "a"),
    (lambda df: fst.chi2.cdf(1.0, df), "a"), (lambda a: fst.beta.cdf(0.3, a, 2.0), "a"),
    (lambda b: fst.beta.sf(0.3, 2.0, b), "a"), (lambda df: fst.t.cdf(0.3, df), "df"),
    (lambda df: fst.t.ppf(0.3, df), "df"),
])
def test_cdf_shape_parameters_raise(call, arg):
    """No closed form: DifferentiationError naming the special function's argument."""
    with pytest.raises(DifferentiationError, match=f"respect to {arg} "):
        fgrad.grad(call)(2.0)
    # the densities are differentiable in every parameter
    assert np.isfinite(fgrad.grad(lambda a: fst.beta.logpdf(0.3, a, 2.0) + fst.gamma.logpdf(1.0, a)
                                  + fst.t.logpdf(0.3, a) + fst.chi2.logpdf(1.0, a))(2.0))


# --- dirichlet --------------------------------------------------------------------------------------

def test_dirichlet_matches_scipy_and_conventions():
    alpha = np.array([0.7, 2.0, 3.5])
    x = np.random.default_rng(0).dirichlet([2.0, 3.0, 4.0], 5).T  # (K, N): components first
    _close(fst.dirichlet.logpdf(x, alpha), st.dirichlet.logpdf(x, alpha), what="(K, N)")
    _close(fst.dirichlet.logpdf(x[:2], alpha), st.dirichlet.logpdf(x[:2], alpha), what="(K - 1, N)")
    _close(fst.dirichlet.pdf(x[:, 0], alpha), st.dirichlet.pdf(x[:, 0], alpha), what="(K,)")
    assert fst.dirichlet.logpdf(x[:, 0], alpha).shape == ()
    # off the simplex: density 0, where SciPy raises (a traced x cannot be checked)
    assert fst.dirichlet.logpdf(np.array([0.5, 0.6, -0.1]), alpha) == -np.inf
    assert fst.dirichlet.logpdf(np.array([0.5, 0.6, 0.1]), alpha) == -np.inf
    assert np.isnan(fst.dirichlet.logpdf(x[:, 0], np.array([1.0, -1.0, 2.0])))
    with pytest.raises(ShapeError, match=r"one-dimensional"):
        fst.dirichlet.logpdf(x, alpha[None])
    with pytest.raises(ShapeError, match=r"3 \(or 2\) components"):
        fst.dirichlet.logpdf(x[:1], alpha)


def test_dirichlet_gradient_in_alpha_and_x():
    import scipy.special as ss
    alpha = np.array([0.7, 2.0, 3.5])
    x = np.array([0.2, 0.3, 0.5])
    ga = fgrad.grad(lambda a: fst.dirichlet.logpdf(x, a))(alpha)
    np.testing.assert_allclose(ga, np.log(x) + ss.digamma(alpha.sum()) - ss.digamma(alpha), rtol=1e-13)
    # with the last component implied, d/dx_i = (a_i - 1)/x_i - (a_K - 1)/x_K
    gx = fgrad.grad(lambda v: fst.dirichlet.logpdf(v, alpha))(x[:2])
    np.testing.assert_allclose(gx, (alpha[:2] - 1) / x[:2] - (alpha[2] - 1) / x[2], rtol=1e-13)


# --- multivariate_normal ---------------------------------------------------------------------------

def _spd(rng, n):
    a = rng.standard_normal((n, n))
    return a @ a.T + n * np.eye(n)


def test_multivariate_normal_conventions_match_scipy():
    rng = np.random.default_rng(1)
    cov, mean = _spd(rng, 3), rng.standard_normal(3)
    for x in (rng.standard_normal(3), rng.standard_normal((1, 3)), rng.standard_normal((4, 3)),
              rng.standard_normal((2, 5, 3))):
        for fn in ("logpdf", "pdf"):
            _close(getattr(fst.multivariate_normal, fn)(x, mean, cov),
                   getattr(st.multivariate_normal, fn)(x, mean, cov), what=f"{fn} x{x.shape}")
        _close(fst.multivariate_normal.logpdf(x, cov=cov), st.multivariate_normal.logpdf(x, cov=cov), what="no mean")
        _close(fst.multivariate_normal.logpdf(x, mean, np.diag(cov)),
               st.multivariate_normal.logpdf(x, mean, np.diag(cov)), what="diagonal cov")
        _close(fst.multivariate_normal.logpdf(x, mean, 2.5), st.multivariate_normal.logpdf(x, mean, 2.5),
               what="scalar cov")
    for x in (0.3, np.array([0.3, -1.0, 2.0])):  # dimension 1: every entry is a point
        _close(fst.multivariate_normal.logpdf(x, 0.5, 2.0), st.multivariate_normal.logpdf(x, 0.5, 2.0), what="1d")
    _close(fst.multivariate_normal.entropy(mean, cov), st.multivariate_normal.entropy(mean, cov))
    _close(fst.multivariate_normal.entropy(cov=2.0), st.multivariate_normal.entropy(cov=2.0))
    with pytest.raises(ShapeError, match=r"last axis of length 3"):
        fst.multivariate_normal.logpdf(np.zeros((2, 4)), mean, cov)
    with pytest.raises(ShapeError, match=r"does not fit a mean of length 3"):
        fst.multivariate_normal.logpdf(np.zeros(3), mean, np.eye(2))
    with pytest.raises(ValueError, match="allow_singular"):
        fst.multivariate_normal.logpdf(np.zeros(3), mean, cov, allow_singular=True)


def test_multivariate_normal_derivatives():
    rng = np.random.default_rng(2)
    cov, mean, x = _spd(rng, 3), rng.standard_normal(3), rng.standard_normal(3)
    inv = np.linalg.inv(cov)
    dev = x - mean
    gx, gm = fgrad.grad(fst.multivariate_normal.logpdf, argnums=(0, 1))(x, mean, cov)
    np.testing.assert_allclose(gx, -inv @ dev, rtol=1e-12)
    np.testing.assert_allclose(gm, inv @ dev, rtol=1e-12)
    # d logpdf = tr(G dC) with G = (inv dev dev^T inv - inv) / 2, for symmetric directions dC
    sym = rng.standard_normal((3, 3))
    sym = sym + sym.T
    G = 0.5 * (inv @ np.outer(dev, dev) @ inv - inv)
    _, t = fgrad.jvp(lambda c: fst.multivariate_normal.logpdf(x, mean, c), (cov,), (sym,))
    np.testing.assert_allclose(t, np.sum(G * sym), rtol=1e-12)
    _, t = fgrad.jvp(lambda c: fst.multivariate_normal.entropy(mean, c), (cov,), (sym,))
    np.testing.assert_allclose(t, 0.5 * np.sum(inv * sym), rtol=1e-12)
    # the Hessian in x is -inv(cov)
    np.testing.assert_allclose(fgrad.hessian(lambda v: fst.multivariate_normal.logpdf(v, mean, cov))(x), -inv,
                               rtol=1e-12)


@pytest.mark.slow  # (XLA's compiles for each JAX reference dominate; CI's slow step runs it)
def test_gradients_match_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.scipy.stats as jst
    x = np.array([-3.0, -0.2, 0.4, 2.5])
    cases = [
        (lambda M, v: M.norm.logcdf(v, 0.3, 1.7), None), (lambda M, v: M.norm.logpdf(v, 0.3, 1.7), None),
        (lambda M, v: M.t.logpdf(v, 2.5, 0.1, 1.2), None), (lambda M, v: M.gamma.logpdf(v + 4.0, 2.5, 0.2, 1.4), None),
        (lambda M, v: M.beta.logpdf((v + 4.0) / 8.0, 2.5, 1.5), None), (lambda M, v: M.chi2.logpdf(v + 4.0, 3.0), None),
        (lambda M, v: M.gamma.cdf(v + 4.0, 2.5), None), (lambda M, v: M.beta.cdf((v + 4.0) / 8.0, 2.5, 1.5), None),
        (lambda M, v: M.poisson.logpmf(3.0, v + 4.0), None),
    ]
    for f, _ in cases:
        want = jax.grad(lambda v: f(jst, v).sum())(x)
        got = fgrad.grad(lambda v: f(fst, v).sum())(x)
        np.testing.assert_allclose(got, np.asarray(want), rtol=1e-11)


def test_dtypes():
    x32 = np.array([0.2, 0.4], np.float32)
    for f in (fst.norm.logpdf, fst.norm.cdf, fst.norm.logcdf, lambda v: fst.t.cdf(v, 3.0),
              lambda v: fst.gamma.logpdf(v, 2.0), lambda v: fst.beta.cdf(v, 2.0, 3.0),
              lambda v: fst.chi2.sf(v, 2.0), lambda v: fst.poisson.logpmf(1.0, v),
              lambda v: fst.multivariate_normal.logpdf(v, None, 2.0)):
        assert f(x32).dtype == np.float32
    assert fst.dirichlet.logpdf(x32, np.array([1.0, 2.0, 3.0], np.float32)).dtype == np.float32
    assert fst.norm.pdf(np.array([1, 2])).dtype == np.float64


def test_log_cdfs_at_their_switch_match_mpmath():
    """logcdf/logsf take log(p) below p = 1/2 and log1p(-q) above: both exact, so derivatives
    of every order agree at the switch (t at 0, gamma at its median) with mpmath's."""
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 40
    df = 3.5

    def t_cdf(x):  # analytic at 0: 1/2 + x c 2F1(1/2, (df+1)/2; 3/2; -x^2/df)
        c = mp.gamma((df + 1) / 2) / (mp.sqrt(df * mp.pi) * mp.gamma(df / 2))
        return 0.5 + x * c * mp.hyp2f1(0.5, (df + 1) / 2, 1.5, -x * x / df)

    a, median = 2.5, st.gamma.median(2.5)
    checks = [(lambda x: fst.t.logcdf(x, df), lambda x: mp.log(t_cdf(x)), 0.0),
              (lambda x: fst.t.logsf(x, df), lambda x: mp.log(1 - t_cdf(x)), 0.0),
              (lambda x: fst.gamma.logcdf(x, a), lambda x: mp.log(mp.gammainc(a, 0, x, regularized=True)), median),
              (lambda x: fst.gamma.logsf(x, a), lambda x: mp.log(mp.gammainc(a, x, mp.inf, regularized=True)), median)]
    for f, ref, x0 in checks:
        want = [float(mp.diff(ref, mp.mpf(x0), k)) for k in range(4)]
        fns = [f]
        for _ in range(3):
            fns.append(fgrad.grad(fns[-1]))
        np.testing.assert_allclose([float(h(x0)) for h in fns], want, rtol=1e-10, atol=1e-13)
