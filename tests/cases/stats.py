"""Registry cases (format: tests/ops/test_primitives.py) for fgrad.scipy.stats against
scipy.stats, in float64 (SciPy computes in float64 whatever the input dtype; fgrad keeps the
input's, which tests/scipy/stats/test_edges.py checks). Shape parameters without a derivative in a
CDF (gamma's a, beta's a and b, t's df) are constants of the case's function."""
import numpy as np
import scipy.stats as st

import fgrad.numpy as fnp
import fgrad.scipy.stats as fst

S = (2, 3)
A = np.array([[0.8, 1.0, 2.5], [3.0, 1.5, 4.0]])
B = np.array([[1.3, 0.6, 2.0], [1.0, 4.0, 2.2]])
DF = np.array([[1.0, 2.5, 4.0], [7.0, 30.0, 1.5]])


def U(*specs):
    """args factory: one uniform array per (low, high[, shape])."""
    return lambda rng, dt: tuple(rng.uniform(lo, hi, rest[0] if rest else S).astype(dt) for lo, hi, *rest in specs)


def _fns(dist, names):
    return [(n, getattr(getattr(fst, dist), n), getattr(getattr(st, dist), n)) for n in names]


CASES = []
# density-like functions: differentiable in every argument
for _n, _f, _ref in _fns("norm", ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]):
    CASES.append((f"stats.norm.{_n}", _f, _ref, U((-3.0, 3.0), (-1.0, 1.0), (0.5, 2.0))))
for _n, _f, _ref in _fns("norm", ["ppf", "isf"]):
    CASES.append((f"stats.norm.{_n}", _f, _ref, U((0.05, 0.95), (-1.0, 1.0), (0.5, 2.0))))
for _n, _f, _ref in _fns("t", ["logpdf", "pdf"]):
    CASES.append((f"stats.t.{_n}", _f, _ref, U((-3.0, 3.0), (0.5, 9.0), (-1.0, 1.0), (0.5, 2.0))))
for _n, _f, _ref in _fns("t", ["cdf", "logcdf", "sf", "logsf"]):
    CASES.append((f"stats.t.{_n}", lambda x, loc, scale, _f=_f: _f(x, DF, loc, scale),
                  lambda x, loc, scale, _ref=_ref: _ref(x, DF, loc, scale), U((-3.0, 3.0), (-1.0, 1.0), (0.5, 2.0))))
CASES.append(("stats.t.ppf", lambda q, loc, scale: fst.t.ppf(q, DF, loc, scale),
              lambda q, loc, scale: st.t.ppf(q, DF, loc, scale), U((0.1, 0.9), (-1.0, 1.0), (0.5, 2.0)),
              {"grad_tol": 1e-4}))
for _n, _f, _ref in _fns("gamma", ["logpdf", "pdf"]):
    CASES.append((f"stats.gamma.{_n}", _f, _ref, U((0.6, 5.0), (0.5, 4.0), (-0.5, 0.4), (0.5, 2.0))))
for _n, _f, _ref in _fns("gamma", ["cdf", "sf", "logcdf", "logsf"]):
    CASES.append((f"stats.gamma.{_n}", lambda x, loc, scale, _f=_f: _f(x, A, loc, scale),
                  lambda x, loc, scale, _ref=_ref: _ref(x, A, loc, scale), U((0.6, 5.0), (-0.5, 0.4), (0.5, 2.0))))
for _n, _f, _ref in _fns("chi2", ["logpdf", "pdf"]):
    CASES.append((f"stats.chi2.{_n}", _f, _ref, U((0.6, 5.0), (1.0, 6.0), (-0.5, 0.4), (0.5, 2.0))))
for _n, _f, _ref in _fns("chi2", ["cdf", "sf", "logcdf", "logsf"]):
    CASES.append((f"stats.chi2.{_n}", lambda x, loc, scale, _f=_f: _f(x, 2 * A, loc, scale),
                  lambda x, loc, scale, _ref=_ref: _ref(x, 2 * A, loc, scale), U((0.6, 5.0), (-0.5, 0.4), (0.5, 2.0))))
for _n, _f, _ref in _fns("beta", ["logpdf", "pdf"]):
    CASES.append((f"stats.beta.{_n}", _f, _ref, U((0.15, 0.85), (0.5, 4.0), (0.5, 4.0))))
CASES.append(("stats.beta.logpdf[loc_scale]", fst.beta.logpdf, st.beta.logpdf,
              U((0.6, 1.4), (0.5, 4.0), (0.5, 4.0), (0.4, 0.5), (1.1, 1.2))))
for _n, _f, _ref in _fns("beta", ["cdf", "sf", "logcdf", "logsf"]):
    CASES.append((f"stats.beta.{_n}", lambda x, loc, scale, _f=_f: _f(x, A, B, loc, scale),
                  lambda x, loc, scale, _ref=_ref: _ref(x, A, B, loc, scale),
                  U((0.35, 0.75), (-0.1, 0.1), (0.95, 1.1)), {"grad_tol": 1e-4}))


def _counts(rng, dt):
    return rng.integers(0, 8, S), rng.uniform(0.2, 5.0, S).astype(dt)


for _n, _f, _ref in _fns("poisson", ["logpmf", "pmf", "cdf", "sf", "logcdf", "logsf"]):
    CASES.append((f"stats.poisson.{_n}", _f, _ref, _counts))
CASES.append(("stats.poisson.logpmf[loc]", lambda k, mu: fst.poisson.logpmf(k, mu, 2),
              lambda k, mu: st.poisson.logpmf(k, mu, 2),
              lambda rng, dt: (rng.integers(2, 10, S), rng.uniform(0.2, 5.0, S).astype(dt))))


def _simplex_rows(rng, dt):
    """K - 1 = 2 components of 4 points of a 3-component Dirichlet (the last one implied), and
    the concentrations: random perturbations keep the points on the simplex."""
    x = rng.dirichlet([6.0, 7.0, 8.0], 4).T[:2]  # no component near 0: finite differences stay accurate
    return x.astype(dt), rng.uniform(0.5, 4.0, (3,)).astype(dt)


CASES += [
    ("stats.dirichlet.logpdf", fst.dirichlet.logpdf, st.dirichlet.logpdf, _simplex_rows),
    ("stats.dirichlet.pdf", fst.dirichlet.pdf, st.dirichlet.pdf, _simplex_rows),
    ("stats.dirichlet.logpdf[vector]", lambda x, a: fst.dirichlet.logpdf(x[:, 0], a),
     lambda x, a: st.dirichlet.logpdf(x[:, 0], a), _simplex_rows),
]


def _spd(M, m):
    """A positive definite covariance built from any square m (check_grads perturbs m freely)."""
    return m @ M.swapaxes(m, -1, -2) + 3.0 * M.eye(m.shape[-1])


def _mvn(rng, dt):
    return tuple(a.astype(dt) for a in (rng.standard_normal((4, 3)), rng.standard_normal(3),
                                        rng.standard_normal((3, 3))))


CASES += [
    ("stats.multivariate_normal.logpdf", lambda x, m, c: fst.multivariate_normal.logpdf(x, m, _spd(fnp, c)),
     lambda x, m, c: st.multivariate_normal.logpdf(x, m, _spd(np, c)), _mvn),
    ("stats.multivariate_normal.pdf", lambda x, m, c: fst.multivariate_normal.pdf(x, m, _spd(fnp, c)),
     lambda x, m, c: st.multivariate_normal.pdf(x, m, _spd(np, c)), _mvn),
    ("stats.multivariate_normal.logpdf[diagonal]",
     lambda x, m, d: fst.multivariate_normal.logpdf(x, m, d * d + 0.5),
     lambda x, m, d: st.multivariate_normal.logpdf(x, m, d * d + 0.5), U((-2.0, 2.0, (5, 3)), (-1.0, 1.0, (3,)),
                                                                       (0.5, 2.0, (3,)))),
    ("stats.multivariate_normal.logpdf[scalar_cov]", lambda x: fst.multivariate_normal.logpdf(x, None, 2.0),
     lambda x: st.multivariate_normal.logpdf(x, None, 2.0), U((-2.0, 2.0, (5,)))),
    ("stats.multivariate_normal.entropy", lambda c: fst.multivariate_normal.entropy(None, _spd(fnp, c)),
     lambda c: st.multivariate_normal.entropy(None, _spd(np, c)), U((-1.0, 1.0, (3, 3)))),
]
