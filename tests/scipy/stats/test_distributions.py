"""The distributions of fgrad.scipy.stats added for issue 12 (expon, cauchy, laplace, logistic,
gumbel_r/l, pareto, uniform, gennorm, truncnorm, vonmises, wrapcauchy, bernoulli, binom,
nbinom, geom, betabinom, multinomial, poisson.entropy, sem): values against SciPy at ordinary
points, at the ends of the supports, in far tails and for invalid parameters (NaN, as SciPy);
against jax.scipy.stats; derivatives of orders 1-2 in both modes (check_grads), under jit and
vmap; the kinks' one-sided conventions; the counts' zero derivative; dtypes."""
from __future__ import annotations

import mpmath
import numpy as np
import pytest
import scipy.stats as st

import fgrad
import fgrad.scipy.stats as fst
from fgrad.core.errors import DifferentiationError, FgradValueError, ShapeError
from fgrad.test_util import check_grads

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.scipy.stats as jst  # noqa: E402
from tests import sampled  # noqa: E402

X = np.array([-50.0, -3.0, -1.0, -1e-20, 0.0, 1e-20, 0.3, 1.0, 2.5, 6.2, 40.0, 800.0, np.inf, -np.inf])
Q = np.array([0.0, 1e-300, 1e-12, 0.1, 0.25, 0.3, 0.5, 0.7, 0.75, 0.9, 1 - 1e-12, 1.0, -0.1, 1.1])


def _close(got, want, rtol=1e-12, what=""):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape}, SciPy {want.shape}"
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-300, equal_nan=True, err_msg=what)


_CONTINUOUS = [  # (distribution, parameter sets: shapes, loc, scale), every function checked
    ("expon", [(), (0.2, 1.5), (0.0, 0.0), (0.0, -1.0)]),
    ("cauchy", [(), (0.2, 1.5), (0.0, -1.0)]),
    ("laplace", [(), (0.2, 1.5), (0.0, 0.0)]),
    ("logistic", [(), (0.2, 1.5), (0.0, -1.0)]),
    ("gumbel_r", [(), (0.2, 1.5), (0.0, 0.0)]),
    ("gumbel_l", [(), (0.2, 1.5), (0.0, -2.0)]),
    ("pareto", [(2.5,), (0.5, 0.2, 1.5), (1.0,), (0.0,), (-1.0,), (2.0, 0.0, -1.0)]),
    ("uniform", [(), (0.2, 1.5), (-1.0, 3.0), (0.0, 0.0)]),
    ("gennorm", [(1.5,), (0.5, 0.2, 1.5), (1.0,), (2.0,), (8.0,), (0.0,), (-1.0,), (2.0, 0.0, 0.0)]),
    ("truncnorm", [(-1.0, 2.0), (-np.inf, 1.0, 0.2, 1.5), (0.5, np.inf), (-3.0, -2.0), (39.0, 41.0),
                   (-41.0, -39.0), (-np.inf, np.inf), (2.0, 1.0), (0.0, 0.0), (-1.0, 1.0, 0.0, -1.0)]),
    ("vonmises", [(2.0,), (0.0,), (0.5, 0.2, 1.5), (500.0,), (-1.0,), (1.0, 0.0, 0.0)]),
    ("wrapcauchy", [(0.3,), (0.99, 0.2, 1.5), (0.0,), (1.0,), (-0.5,), (0.5, 0.0, -1.0)]),
]


@pytest.mark.parametrize("dist,params", _CONTINUOUS, ids=[c[0] for c in _CONTINUOUS])
def test_continuous_values_match_scipy(dist, params):
    """Every function of the module at points inside, at the ends of and outside the support,
    far in both tails, and for invalid parameters (NaN), against SciPy."""
    mod = getattr(fst, dist)
    for name in mod.__all__:
        points = Q if name in ("ppf", "isf") else X
        for p in params:
            with np.errstate(all="ignore"):
                want = getattr(getattr(st, dist), name)(points, *p)
            if dist == "laplace" and name in ("logpdf", "logsf"):  # (SciPy: the log of an underflowed value)
                loc, scale = p if p else (0.0, 1.0)
                if scale > 0:
                    exact = -(800.0 - loc) / scale - np.log(2.0) - (np.log(scale) if name == "logpdf" else 0.0)
                    want = np.where(points == 800.0, exact, want)
            _close(getattr(mod, name)(points, *p), want, rtol=1e-11, what=f"{dist}.{name}{p}")


def test_wrapcauchy_support_ends_and_periodic_vonmises():
    two_pi = 2 * np.pi
    x = np.array([-1e-12, 0.0, two_pi, two_pi + 1e-9])
    _close(fst.wrapcauchy.logpdf(x, 0.5), st.wrapcauchy.logpdf(x, 0.5), rtol=1e-12)
    _close(fst.vonmises.logpdf(np.array([4.0, 4.0 - two_pi]), 1.5), np.full(2, st.vonmises.logpdf(4.0, 1.5)),
           rtol=1e-12)


def test_tails_against_mpmath():
    """Far tails where a naive formula returns 0 or 1 (or log 0)."""
    mpmath.mp.dps = 50
    assert fst.truncnorm.logcdf(39.5, 39.0, 41.0) == pytest.approx(-2.96104811476793e-09, rel=1e-12)
    assert fst.expon.logcdf(1e-20) == pytest.approx(float(mpmath.log(-mpmath.expm1(-mpmath.mpf("1e-20")))), rel=1e-14)
    assert fst.expon.logcdf(50.0) == pytest.approx(float(mpmath.log1p(-mpmath.exp(-50))), rel=1e-14)
    assert fst.cauchy.cdf(-1e10) == pytest.approx(float(mpmath.atan2(1, mpmath.mpf("1e10")) / mpmath.pi), rel=1e-14)
    assert fst.cauchy.ppf(1e-12) == pytest.approx(float(-mpmath.cot(mpmath.pi * mpmath.mpf("1e-12"))), rel=1e-14)
    assert fst.gumbel_r.logsf(40.0) == pytest.approx(float(mpmath.log(-mpmath.expm1(-mpmath.exp(-40)))), rel=1e-14)
    assert fst.pareto.logcdf(1.0 + 1e-15, 2.0) == pytest.approx(
        float(mpmath.log(1 - mpmath.mpf(1.0 + 1e-15) ** -2)), rel=1e-14)


def test_poisson_entropy_against_mpmath_and_scipy():
    mpmath.mp.dps = 30

    def exact(mu):
        mu, s, lp = mpmath.mpf(mu), mpmath.mpf(0), -mpmath.mpf(mu)
        for k in range(int(mu + 40 * mpmath.sqrt(mu) + 60)):
            if k:
                lp += mpmath.log(mu) - mpmath.log(k)
            s -= mpmath.exp(lp) * lp
        return float(s)
    mus = [1e-3, 0.5, 4.0, 60.0, 199.9, 200.0, 350.0, 5000.0]
    got = fst.poisson.entropy(np.array(mus))
    for g, mu in zip(got, mus):
        assert g == pytest.approx(exact(mu), rel=1e-12), mu
    _close(fst.poisson.entropy(np.array([0.0, -1.0, 2.0]), loc=3), st.poisson.entropy([0.0, -1.0, 2.0], loc=3))
    # the derivative on both sides of the switch to the asymptotic series, against mpmath's
    for mu in (199.0, 201.0):
        want = float(mpmath.diff(lambda m: sum(-mpmath.exp(k * mpmath.log(m) - m - mpmath.loggamma(k + 1))
                                               * (k * mpmath.log(m) - m - mpmath.loggamma(k + 1))
                                               for k in range(600)), mu))
        assert fgrad.grad(fst.poisson.entropy)(mu) == pytest.approx(want, rel=1e-9)


_K = np.array([-1.0, 0.0, 1.0, 2.0, 3.0, 3.5, 4.0, 10.0, 200.0])


@pytest.mark.parametrize("n", [0.0, 1.0, 3.0, 10.0, 200.0, 3.5, -1.0])
@pytest.mark.parametrize("p", [0.0, 0.3, 1.0, 1.2, -0.1])
def test_discrete_values_match_scipy(n, p):
    with np.errstate(all="ignore"):
        for name in ("logpmf", "pmf"):
            _close(getattr(fst.binom, name)(_K, n, p), getattr(st.binom, name)(_K, n, p), 1e-11, f"binom.{name}")
            _close(getattr(fst.nbinom, name)(_K, n, p), getattr(st.nbinom, name)(_K, n, p), 1e-11, f"nbinom.{name}")
            _close(getattr(fst.betabinom, name)(_K, n, p + 0.5, 1.5), getattr(st.betabinom, name)(_K, n, p + 0.5, 1.5),
                   1e-11, f"betabinom.{name}")
            _close(getattr(fst.geom, name)(_K, p, n), getattr(st.geom, name)(_K, p, n), 1e-11, f"geom.{name}")
        _close(fst.betabinom.logpmf(_K, n, -p, 1.5), st.betabinom.logpmf(_K, n, -p, 1.5), 1e-11)


@pytest.mark.parametrize("p", [0.0, 0.3, 1.0, 1.2, -0.1])
def test_bernoulli_matches_scipy(p):
    k = np.array([-1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0])
    q = np.array([0.0, 1e-9, 0.3, 0.7, 0.71, 1.0, -0.1, 1.1])
    with np.errstate(all="ignore"):
        for name in fst.bernoulli.__all__:
            arg = q if name in ("ppf", "isf") else k
            for loc in (0.0, 1.0):
                want = getattr(st.bernoulli, name)(arg, p, loc)
                if name == "logcdf" and not 0 <= p <= 1:
                    want = np.full_like(want, np.nan)  # (SciPy's logcdf gives 0 above the support here; cdf NaN)
                _close(getattr(fst.bernoulli, name)(arg, p, loc), want, what=f"bernoulli.{name}(p={p}, loc={loc})")


def test_multinomial_matches_scipy_and_checks_shapes():
    p = np.array([0.2, 0.3, 0.5])
    for x, n in [([1, 1, 1], 3), ([0, 0, 3], 3), ([1, 1, 1], 4), ([1, -1, 3], 3), ([1, 1, 1.5], 3), ([1, 1, 1], -3),
                 ([0, 0, 0], 0)]:
        _close(fst.multinomial.logpmf(x, n, p), st.multinomial.logpmf(x, n, p), what=f"{x}, {n}")
    xs = np.array([[1, 1, 1], [0, 3, 0]])
    ps = np.array([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]])
    _close(fst.multinomial.pmf(xs, 3, ps), st.multinomial.pmf(xs, 3, ps))
    assert np.isnan(fst.multinomial.logpmf([1, 1, 1], 3, [0.2, 0.3, 0.6]))  # p off the simplex (SciPy 1.18)
    assert np.isnan(fst.multinomial.logpmf([1, 1, 1], 3, [0.2, -0.3, 1.1]))
    with pytest.raises(ShapeError, match="last axis"):
        fst.multinomial.logpmf([1, 2], 3, p)
    with pytest.raises(ShapeError):
        fst.multinomial.logpmf(3, 3, p)


def test_sem_matches_scipy():
    a = np.random.default_rng(0).normal(size=(4, 5))
    a[1, 2] = np.nan
    for kw in ({}, {"axis": 1}, {"axis": None}, {"ddof": 0, "axis": -1}, {"nan_policy": "omit"},
               {"nan_policy": "omit", "axis": 1, "keepdims": True}, {"keepdims": True}):
        _close(fst.sem(a, **kw), st.sem(a, **kw), rtol=1e-13, what=str(kw))
        np.testing.assert_allclose(fst.sem(a[:, [0, 1, 3]], **kw), jst.sem(a[:, [0, 1, 3]], **kw), rtol=1e-13)
    assert fst.sem(np.arange(5)).dtype == np.float64 and fst.sem(np.float32([1, 2, 4])).dtype == np.float32
    with pytest.raises(FgradValueError, match="nan_policy='raise'"):
        fst.sem(a, nan_policy="raise")
    with pytest.raises(FgradValueError, match="not one of"):
        fst.sem(a, nan_policy="skip")
    check_grads(lambda v: fst.sem(v, axis=1), (a[:, [0, 1, 3]],), order=2)
    check_grads(lambda v: fst.sem(v, axis=0, nan_policy="omit"), (a[:, [0, 1, 3]],), order=2)


# --- derivatives, transforms and JAX ---------------------------------------------------------

_GRADS = [  # (name, fn of arrays, arrays): every parameter with a derivative, orders 1-2
    ("expon", lambda f, x, m, s: f(x, m, s), "logpdf pdf cdf logcdf sf logsf", (np.array([1.5, 2.5]), 0.2, 1.3)),
    ("expon", lambda f, q, m, s: f(q, m, s), "ppf isf", (np.array([0.2, 0.7]), 0.2, 1.3)),
    ("cauchy", lambda f, x, m, s: f(x, m, s), "logpdf pdf cdf logcdf sf logsf", (np.array([-2.0, 0.5, 3.0]), 0.2, 1.3)),
    ("cauchy", lambda f, q, m, s: f(q, m, s), "ppf isf", (np.array([0.1, 0.4, 0.9]), 0.2, 1.3)),
    ("laplace", lambda f, x, m, s: f(x, m, s), "logpdf pdf cdf logcdf sf logsf", (np.array([-2.0, 1.0]), 0.2, 1.3)),
    ("laplace", lambda f, q, m, s: f(q, m, s), "ppf isf", (np.array([0.2, 0.7]), 0.2, 1.3)),
    ("logistic", lambda f, x, m, s: f(x, m, s), "logpdf pdf cdf logcdf sf logsf", (np.array([-2.0, 1.0]), 0.2, 1.3)),
    ("logistic", lambda f, q, m, s: f(q, m, s), "ppf isf", (np.array([0.2, 0.7]), 0.2, 1.3)),
    ("gumbel_r", lambda f, x, m, s: f(x, m, s), "logpdf pdf cdf logcdf sf logsf", (np.array([-1.0, 1.0]), 0.2, 1.3)),
    ("gumbel_r", lambda f, q, m, s: f(q, m, s), "ppf isf", (np.array([0.2, 0.7]), 0.2, 1.3)),
    ("gumbel_l", lambda f, x, m, s: f(x, m, s), "logpdf pdf cdf logcdf sf logsf", (np.array([-1.0, 1.0]), 0.2, 1.3)),
    ("gumbel_l", lambda f, q, m, s: f(q, m, s), "ppf isf", (np.array([0.2, 0.7]), 0.2, 1.3)),
    ("pareto", lambda f, x, b, m, s: f(x, b, m, s), "logpdf pdf cdf logcdf sf logsf", (np.array([2.0, 4.0]), 2.5, 0.2, 1.3)),
    ("pareto", lambda f, q, b, m, s: f(q, b, m, s), "ppf isf", (np.array([0.2, 0.7]), 2.5, 0.2, 1.3)),
    ("uniform", lambda f, x, m, s: f(x, m, s), "logpdf pdf cdf logcdf sf logsf", (np.array([0.5, 1.0]), 0.2, 1.3)),
    ("uniform", lambda f, q, m, s: f(q, m, s), "ppf isf", (np.array([0.2, 0.7]), 0.2, 1.3)),
    ("gennorm", lambda f, x, b, m, s: f(x, b, m, s), "logpdf pdf", (np.array([-1.0, 0.7]), 1.5, 0.2, 1.3)),
    ("gennorm", lambda f, x, m, s: f(x, 1.5, m, s), "cdf sf logcdf logsf", (np.array([-1.0, 0.7]), 0.2, 1.3)),
    ("truncnorm", lambda f, x, a, b, m, s: f(x, a, b, m, s), "logpdf pdf cdf logcdf sf logsf",
     (np.array([-0.5, 0.9]), -1.0, 1.5, 0.1, 1.2)),
    ("vonmises", lambda f, x, k, m, s: f(x, k, m, s), "logpdf pdf", (np.array([-1.0, 2.0]), 1.5, 0.2, 1.3)),
    ("wrapcauchy", lambda f, x, c, m, s: f(x, c, m, s), "logpdf pdf", (np.array([1.0, 5.0]), 0.4, 0.2, 1.3)),
    ("bernoulli", lambda f, p: f(np.array([0.0, 1.0]), p), "logpmf pmf", (np.array([0.3, 0.6]),)),
    ("bernoulli", lambda f, p: f(np.array([0.0, 0.5]), p), "cdf sf logcdf logsf", (np.array([0.3, 0.6]),)),
    # (n is a whole number: a finite difference in it leaves the distribution; JAX checks d/dn below)
    ("binom", lambda f, p: f(np.array([0.0, 2.0, 5.0]), 6.0, p), "logpmf pmf", (np.array([0.3, 0.6, 0.8]),)),
    ("nbinom", lambda f, n, p: f(np.array([0.0, 2.0]), n, p), "logpmf pmf", (2.5, np.array([0.3, 0.6]))),
    ("geom", lambda f, p: f(np.array([1.0, 3.0]), p), "logpmf pmf", (np.array([0.3, 0.6]),)),
    ("betabinom", lambda f, a, b: f(np.array([0.0, 2.0]), 6.0, a, b), "logpmf pmf", (1.5, 0.7)),
    ("multinomial", lambda f, p: f(np.array([1.0, 0.0, 2.0]), 3.0, p / fgrad.numpy.sum(p)), "logpmf pmf",
     (np.array([0.2, 0.3, 0.5]),)),
    ("poisson", lambda f, mu: f(mu), "entropy", (np.array([0.5, 3.0, 250.0]),)),
]
_GRAD_IDS = [f"{d}.{n.split()[0]}" for d, _, n, _ in _GRADS]


@pytest.mark.parametrize("dist,call,names,args", _GRADS, ids=_GRAD_IDS)
def test_derivatives_orders_1_2_both_modes(dist, call, names, args):
    for name in names.split():
        f = getattr(getattr(fst, dist), name)
        check_grads(lambda *a, f=f: call(f, *a), args, order=2)


@pytest.mark.parametrize("dist,call,names,args", _GRADS, ids=_GRAD_IDS)
def test_jit_and_vmap_agree_with_eager(dist, call, names, args):
    for name in names.split():
        f = getattr(getattr(fst, dist), name)
        g = lambda *a, f=f: call(f, *a)  # noqa: E731
        want = g(*args)
        np.testing.assert_allclose(fgrad.jit(g)(*args), want, rtol=1e-13, err_msg=f"{dist}.{name} jit")
        grad = fgrad.grad(lambda *a: fgrad.numpy.sum(g(*a)))
        np.testing.assert_allclose(fgrad.jit(grad)(*args), grad(*args), rtol=1e-13, err_msg=f"{dist}.{name} jit grad")
        batch = tuple(np.stack([a, a * 1.01]) for a in map(np.asarray, args))
        got = fgrad.vmap(g)(*batch)
        for i in range(2):
            np.testing.assert_allclose(got[i], g(*(b[i] for b in batch)), rtol=1e-13, err_msg=f"{dist}.{name} vmap")


_JAX = [  # (distribution, function names JAX has, point args)
    ("expon", "logpdf pdf cdf logcdf sf logsf", (X[1:11], 0.2, 1.5)), ("expon", "ppf", (Q[:12], 0.2, 1.5)),
    ("cauchy", "logpdf pdf cdf logcdf sf logsf", (X[:11], 0.2, 1.5)), ("cauchy", "ppf isf", (Q[3:10], 0.2, 1.5)),  # (JAX's tan loses q's digits in the tails)
    ("laplace", "logpdf pdf cdf", (X[:11], 0.2, 1.5)),
    ("logistic", "logpdf pdf cdf sf", (X[1:11], 0.2, 1.5)), ("logistic", "ppf isf", (Q[:12], 0.2, 1.5)),
    ("gumbel_r", "logpdf pdf cdf logcdf sf logsf", (X[1:10], 0.2, 1.5)), ("gumbel_r", "ppf", (Q[2:11], 0.2, 1.5)),
    ("gumbel_l", "logpdf pdf cdf logcdf sf logsf", (X[1:10], 0.2, 1.5)), ("gumbel_l", "ppf", (Q[2:11], 0.2, 1.5)),
    ("pareto", "logpdf pdf cdf logcdf sf logsf", (X[:12], 2.5, 0.2, 1.5)), ("pareto", "ppf", (Q[:12], 2.5, 0.2, 1.5)),
    ("uniform", "logpdf pdf cdf", (X[:12], 0.2, 1.5)), ("uniform", "ppf", (Q[:12], 0.2, 1.5)),
    ("gennorm", "logpdf pdf cdf", (X[1:11], 1.5)),
    ("truncnorm", "logpdf pdf cdf logcdf sf logsf", (X[1:10], -1.0, 2.0, 0.1, 1.2)),
    ("vonmises", "logpdf pdf", (X[1:10], 2.0)), ("wrapcauchy", "logpdf pdf", (X[4:10], 0.3)),
    ("bernoulli", "logpmf pmf cdf", (np.array([-1, 0, 1, 2]), 0.3)), ("bernoulli", "ppf", (np.array([0.1, 0.7, 0.8]), 0.3)),
    ("binom", "logpmf pmf", (np.array([-1, 0, 2, 6, 7]), 6, 0.3)),
    ("nbinom", "logpmf pmf", (np.array([-1, 0, 2, 6]), 2.5, 0.3)), ("geom", "logpmf pmf", (np.array([0, 1, 4]), 0.3)),
    ("betabinom", "logpmf pmf", (np.array([-1, 0, 2, 6, 7]), 6, 1.5, 0.7)),
    ("multinomial", "logpmf pmf", (np.array([1, 0, 2]), 3, np.array([0.2, 0.3, 0.5]))),  # (JAX's x: one vector)
]


@pytest.mark.parametrize("dist,names,args", sampled(_JAX, 2, unpack=True), ids=[f"{d}.{n.split()[0]}" for d, n, _ in _JAX])
def test_values_match_jax(dist, names, args):
    for name in names.split():
        want = np.asarray(getattr(getattr(jst, dist), name)(*args))
        got = np.asarray(getattr(getattr(fst, dist), name)(*args))
        # (atol: fgrad keeps the digits of log probabilities near 0, -2e-24, that JAX rounds to 0)
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-20, equal_nan=True, err_msg=f"{dist}.{name}")


@pytest.mark.slow  # (XLA's compiles for each JAX reference dominate; CI's slow step runs it)
def test_gradients_match_jax_in_parameters():
    """Derivatives in every parameter against jax.grad (the discrete ones in p, n, a, b)."""
    cases = [
        ("expon", "logcdf", (1.3, 0.2, 1.5)), ("cauchy", "logsf", (2.0, 0.2, 1.5)), ("pareto", "logpdf", (3.0, 2.5, 0.2, 1.5)),
        ("gumbel_r", "logsf", (1.0, 0.2, 1.5)), ("logistic", "pdf", (1.0, 0.2, 1.5)),
        ("truncnorm", "logcdf", (0.3, -1.0, 2.0, 0.1, 1.2)), ("truncnorm", "logpdf", (1.0, 0.5, 2.0, 0.1, 1.2)),
        ("vonmises", "logpdf", (1.0, 2.0)), ("wrapcauchy", "logpdf", (1.0, 0.3)), ("gennorm", "logpdf", (0.8, 1.5)),
        ("nbinom", "logpmf", (2.0, 2.5, 0.3)), ("betabinom", "logpmf", (2.0, 6.0, 1.5, 0.7)),
        ("binom", "logpmf", (2.0, 6.0, 0.3)), ("geom", "logpmf", (3.0, 0.3)), ("bernoulli", "logpmf", (1.0, 0.3)),
    ]
    for dist, name, args in cases:
        f, j = getattr(getattr(fst, dist), name), getattr(getattr(jst, dist), name)
        for i in range(1, len(args)):
            want = jax.grad(lambda v: j(*args[:i], v, *args[i + 1:]))(args[i])
            got = fgrad.grad(lambda v: f(*args[:i], v, *args[i + 1:]))(args[i])
            assert got == pytest.approx(float(want), rel=1e-9, abs=1e-14), f"{dist}.{name} d/d arg {i}"


# --- conventions ------------------------------------------------------------------------------

def test_counts_have_zero_derivative_and_cdf_shapes_raise():
    assert fgrad.grad(lambda k: fst.binom.logpmf(k, 6, 0.3))(2.0) == 0.0
    assert fgrad.grad(lambda k: fst.geom.pmf(k, 0.3))(2.0) == 0.0
    assert fgrad.grad(lambda k: fst.bernoulli.cdf(k, 0.3))(0.5) == 0.0
    assert fgrad.grad(lambda q: fst.bernoulli.ppf(q, 0.3))(0.5) == 0.0
    with pytest.raises(DifferentiationError):
        fgrad.grad(lambda b: fst.gennorm.cdf(0.5, b))(1.5)


def test_kinks_take_their_documented_sides():
    g = fgrad.grad
    # laplace: logpdf's derivative at loc is 0 (sign(0)), the CDF's is the density 1/2
    assert g(fst.laplace.logpdf)(0.0) == 0.0
    assert g(fst.laplace.cdf)(0.0) == pytest.approx(0.5, rel=1e-15)
    assert g(fst.laplace.sf)(0.0) == pytest.approx(-0.5, rel=1e-15)
    # gennorm's CDF at 0: the density there, for beta below and above 1 (gammaincc's 0 * inf avoided)
    for beta in (0.5, 1.0, 1.5, 3.0):
        assert g(lambda x: fst.gennorm.cdf(x, beta))(0.0) == pytest.approx(st.gennorm.pdf(0.0, beta), rel=1e-14)
        assert g(lambda x: fst.gennorm.logsf(x, beta))(0.0) == pytest.approx(-2 * st.gennorm.pdf(0.0, beta), rel=1e-14)
    # uniform's CDF at the ends of the support: the inside piece's slope
    assert g(lambda x: fst.uniform.cdf(x, 0.0, 2.0))(0.0) == 0.5
    assert g(lambda x: fst.uniform.cdf(x, 0.0, 2.0))(2.0) == 0.5
    assert g(lambda x: fst.uniform.cdf(x, 0.0, 2.0))(3.0) == 0.0
    # support edges: the right-hand derivative, no NaN from the side not taken
    assert g(fst.expon.cdf)(0.0) == pytest.approx(1.0)
    assert g(fst.expon.cdf)(-1.0) == 0.0 and g(fst.expon.sf)(-1e300) == 0.0
    assert g(lambda x: fst.pareto.sf(x, 2.0))(0.5) == 0.0
    assert np.isfinite(g(lambda x: fst.truncnorm.logpdf(x, -1.0, 1.0))(3.0))


@pytest.mark.parametrize("dist,params", [("expon", ()), ("cauchy", ()), ("laplace", ()), ("logistic", ()),
                                          ("gumbel_r", ()), ("gumbel_l", ()), ("pareto", (2.5,)), ("uniform", ()),
                                          ("gennorm", (1.5,)), ("truncnorm", (-1.0, 2.0)), ("vonmises", (2.0,)),
                                          ("wrapcauchy", (0.3,))])
def test_float32_stays_float32(dist, params):
    mod = getattr(fst, dist)
    for name in mod.__all__:
        x = np.float32([0.3, 0.6]) if name in ("ppf", "isf") else np.float32([1.5, 2.5])
        out = getattr(mod, name)(x, *params)
        assert out.dtype == np.float32, f"{dist}.{name}"
        want = getattr(getattr(st, dist), name)(x.astype(np.float64), *params)
        np.testing.assert_allclose(out, want, rtol=2e-5, err_msg=f"{dist}.{name}")
