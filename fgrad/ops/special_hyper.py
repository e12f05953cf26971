"""Hypergeometric functions and the gamma-ratio family beyond special_gamma.py: hyp1f1,
hyp2f1, the Hurwitz zeta function, Owen's T, binomial coefficients (binom), the Pochhammer
symbol (poch), loggamma, the Box-Cox transforms, the Faddeeva function wofz and the
normalized spherical Legendre functions behind sph_harm_y. SciPy computes the values; the
derivatives are closed forms in these same primitives or elementary functions:

  d/dx 1F1(a; b; x) = a/b 1F1(a+1; b+1; x)     d/dx 2F1(a, b; c; x) = ab/c 2F1(a+1, b+1; c+1; x)
  d/dq zeta(s, q) = -s zeta(s+1, q)            w'(z) = -2 z w(z) + 2i / sqrt(pi)
  dT/dh = -phi(h) erf(a h / sqrt 2) / 2        dT/da = exp(-h^2 (1 + a^2) / 2) / (2 pi (1 + a^2))

Parameters with no closed-form derivative (a, b, c of the hypergeometric functions, s of
zeta, the degree and order of a Legendre function) raise DifferentiationError.

The Box-Cox transform (x^l - 1) / l is l log(x) exprel(l log x) with exprel(z) = (e^z - 1)/z
(1 at z = 0), so its derivative in l is log(x)^2 exprel_1(l log x), where
exprel_n(z) = integral_0^1 t^n e^{z t} dt and exprel_n' = exprel_{n+1}: smooth through l = 0
(no branch at the switch to log x) and exact at every order."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._special import define, no_partial
from .elementwise import (
    add,
    const,
    cos,
    div,
    erf,
    exp,
    log,
    log1p,
    mul,
    neg,
    sin,
    sub,
)
from .special_expint import host_impl
from .special_gamma import digamma


def _shift(v, k):
    return add(v, const(v, float(k)))


# --- hypergeometric functions ------------------------------------------------------------------

_HYP_WHY = "the derivative of a hypergeometric function in its parameters has no closed form"

hyp1f1_p = define(
    "hyp1f1", "hyp1f1",
    no_partial("hyp1f1", 0, "a", _HYP_WHY), no_partial("hyp1f1", 1, "b", _HYP_WHY),
    lambda a, b, x, out: mul(div(a, b), hyp1f1(_shift(a, 1), _shift(b, 1), x)))
hyp2f1_p = define(
    "hyp2f1", "hyp2f1",
    no_partial("hyp2f1", 0, "a", _HYP_WHY), no_partial("hyp2f1", 1, "b", _HYP_WHY),
    no_partial("hyp2f1", 2, "c", _HYP_WHY),
    lambda a, b, c, x, out: mul(div(mul(a, b), c), hyp2f1(_shift(a, 1), _shift(b, 1), _shift(c, 1), x)))


def hyp1f1(a: Any, b: Any, x: Any) -> Any:
    """Kummer's confluent hypergeometric function 1F1(a; b; x); differentiable in x."""
    return hyp1f1_p.bind(a, b, x)


def hyp2f1(a: Any, b: Any, c: Any, x: Any) -> Any:
    """Gauss's hypergeometric function 2F1(a, b; c; x); differentiable in x."""
    return hyp2f1_p.bind(a, b, c, x)


# --- Hurwitz zeta -----------------------------------------------------------------------------------

zeta_p = define(
    "zeta", "zeta",
    no_partial("zeta", 0, "x", "the Hurwitz zeta function's derivative in its exponent has no closed form "
               "(JAX differentiates zeta in q only too)"),
    lambda s, q, out: neg(mul(s, zeta(_shift(s, 1), q))))


# the Riemann zeta function (SciPy's zeta with q=None): its analytic continuation below s = 1,
# where the Hurwitz series (q = 1) is NaN; no derivative in s either
riemann_zeta_p = define("riemann_zeta", "zeta", no_partial(
    "zeta", 0, "x", "the Riemann zeta function's derivative has no closed form (JAX differentiates zeta in q only)"))


def riemann_zeta(s: Any) -> Any:
    """The Riemann zeta function, continued analytically to s < 1 (a pole at 1)."""
    return riemann_zeta_p.bind(s)


def zeta(s: Any, q: Any) -> Any:
    """The Hurwitz zeta function sum_k (k + q)^-s, s > 1; differentiable in q."""
    return zeta_p.bind(s, q)


# --- Owen's T --------------------------------------------------------------------------------------


def _owens_t_dh(h, a, out):
    phi = mul(const(h, 1.0 / math.sqrt(2.0 * math.pi)), exp(mul(const(h, -0.5), mul(h, h))))
    return mul(mul(const(h, -0.5), phi), erf(mul(const(h, 1.0 / math.sqrt(2.0)), mul(a, h))))


def _owens_t_da(h, a, out):
    one_a2 = add(const(a, 1.0), mul(a, a))
    return div(exp(mul(const(h, -0.5), mul(mul(h, h), one_a2))), mul(const(a, 2.0 * math.pi), one_a2))


owens_t_p = define("owens_t", "owens_t", _owens_t_dh, _owens_t_da)


def owens_t(h: Any, a: Any) -> Any:
    """Owen's T function integral_0^a exp(-h^2 (1 + x^2) / 2) / (2 pi (1 + x^2)) dx."""
    return owens_t_p.bind(h, a)


# --- binomial coefficients, Pochhammer symbol, loggamma ---------------------------------------------

binom_p = define(
    "binom", "binom",
    lambda n, k, out: mul(out, sub(digamma(_shift(n, 1)), digamma(_shift(sub(n, k), 1)))),
    lambda n, k, out: mul(out, sub(digamma(_shift(sub(n, k), 1)), digamma(_shift(k, 1)))))
poch_p = define(
    "poch", "poch",
    lambda z, m, out: mul(out, sub(digamma(add(z, m)), digamma(z))),
    lambda z, m, out: mul(out, digamma(add(z, m))))
loggamma_p = define("loggamma", "loggamma", lambda x, out: digamma(x))


def binom(n: Any, k: Any) -> Any:
    """The binomial coefficient gamma(n + 1) / (gamma(k + 1) gamma(n - k + 1)) for real n, k."""
    return binom_p.bind(n, k)


def poch(z: Any, m: Any) -> Any:
    """The Pochhammer symbol (rising factorial) gamma(z + m) / gamma(z)."""
    return poch_p.bind(z, m)


def loggamma(x: Any) -> Any:
    """The principal branch of log gamma(x) for real x: gammaln for x > 0, NaN for x < 0."""
    return loggamma_p.bind(x)


# --- exprel_n and the Box-Cox transforms -------------------------------------------------------------

_EXPREL_SERIES_TERMS = 160  # enough for z <= 40: z^k / k! falls below 1e-17 of e^z beyond k = 160


def _exprel_n(sc, n, z):
    """integral_0^1 t^n e^{z t} dt for integer n >= 0: the series sum_k z^k / (k! (n + k + 1))
    for -1 <= z <= 40 (all terms positive for z >= 0: no cancellation), gamma(n + 1) P(n + 1, -z)
    / (-z)^(n + 1) below -1, and the upward recurrence e_n = (e^z - n e_{n-1}) / z, stable
    for z >> n, above 40."""
    n, z = np.broadcast_arrays(np.asarray(n, dtype=np.float64), np.asarray(z, dtype=np.float64))
    out = np.full(z.shape, np.nan)
    ser = (z >= -1.0) & (z <= 40.0)
    if ser.any():
        zs, ns = z[ser], n[ser]
        term, total = np.ones_like(zs), 1.0 / (ns + 1.0)
        for k in range(1, _EXPREL_SERIES_TERMS):
            term = term * zs / k
            total = total + term / (ns + k + 1.0)
        out[ser] = total
    neg_ = z < -1.0
    if neg_.any():
        w, nn = -z[neg_], n[neg_]
        out[neg_] = sc.gamma(nn + 1.0) * sc.gammainc(nn + 1.0, w) / w ** (nn + 1.0)
    big = z > 40.0
    if big.any():
        zb, nb = z[big], n[big]
        e = np.expm1(zb) / zb
        res = np.where(nb == 0, e, np.nan)
        for k in range(1, int(np.max(nb)) + 1):
            e = (np.exp(zb) - k * e) / zb
            res = np.where(nb == k, e, res)
        out[big] = res
    return out


exprel_n_p = define("exprel_n", host_impl(lambda sc, n, z: _exprel_n(sc, n, z)),
                    no_partial("exprel_n", 0, "n", "the order n is an integer"),
                    lambda n, z, out: exprel_n(_shift(n, 1), z))


def exprel_n(n: Any, z: Any) -> Any:
    """integral_0^1 t^n e^{z t} dt (n a non-negative integer): exprel_0(z) = (e^z - 1) / z."""
    return exprel_n_p.bind(n, z)


def _boxcox_dlmbda(log_x):
    def partial(x, lmbda, out):
        lx = log_x(x)
        return mul(mul(lx, lx), exprel_n(const(lmbda, 1.0), mul(lmbda, lx)))
    return partial


boxcox_p = define("boxcox", "boxcox", lambda x, lmbda, out: exp(mul(sub(lmbda, const(lmbda, 1.0)), log(x))),
                  _boxcox_dlmbda(log))
boxcox1p_p = define("boxcox1p", "boxcox1p",
                    lambda x, lmbda, out: exp(mul(sub(lmbda, const(lmbda, 1.0)), log1p(x))),
                    _boxcox_dlmbda(log1p))


def boxcox(x: Any, lmbda: Any) -> Any:
    """(x^lmbda - 1) / lmbda, log(x) at lmbda = 0; differentiable in both."""
    return boxcox_p.bind(x, lmbda)


def boxcox1p(x: Any, lmbda: Any) -> Any:
    """((1 + x)^lmbda - 1) / lmbda, log1p(x) at lmbda = 0; differentiable in both."""
    return boxcox1p_p.bind(x, lmbda)


# --- the Faddeeva function ------------------------------------------------------------------------------

wofz_p = define("wofz", "wofz",
                lambda z, out: add(mul(mul(const(z, -2.0), z), out), const(z, 2j / math.sqrt(math.pi))))


def wofz(z: Any) -> Any:
    """The Faddeeva function exp(-z^2) erfc(-i z), for complex z (holomorphic)."""
    return wofz_p.bind(z)


# --- normalized spherical Legendre functions (sph_harm_y) ---------------------------------------------

_DEGREE_WHY = "the degree n and order m are integers"


def _sph_legendre(diff_n):
    def fn(sc, n, m, theta):
        # (SciPy's derivative arrays want operands of one shape)
        n, m, theta = np.broadcast_arrays(n, m, theta)
        return sc.sph_legendre_p(n.astype(np.int64), m.astype(np.int64), theta, diff_n=diff_n)[diff_n]
    fn.__name__ = f"sph_legendre_p{diff_n}"
    return fn


sph_legendre_p_p = define("sph_legendre_p", host_impl(_sph_legendre(0)),
                          no_partial("sph_harm_y", 0, "n", _DEGREE_WHY), no_partial("sph_harm_y", 1, "m", _DEGREE_WHY),
                          lambda n, m, theta, out: sph_legendre_dp(n, m, theta))
sph_legendre_dp_p = define("sph_legendre_dp", host_impl(_sph_legendre(1)),
                           no_partial("sph_harm_y", 0, "n", _DEGREE_WHY), no_partial("sph_harm_y", 1, "m", _DEGREE_WHY),
                           lambda n, m, theta, out: _legendre_d2_of(n, m, theta, out))


def _legendre_d2_of(n, m, theta, out):
    """d/dtheta of p'(theta), by the Legendre equation: p'' = -cot(theta) p' - (n (n + 1) -
    m^2 / sin^2 theta) p (singular at the poles theta = 0, pi, as cot is)."""
    s, c = sin(theta), cos(theta)
    k = sub(mul(n, _shift(n, 1)), div(mul(m, m), mul(s, s)))
    return neg(add(mul(div(c, s), out), mul(k, sph_legendre_p(n, m, theta))))


def sph_legendre_p(n: Any, m: Any, theta: Any) -> Any:
    """The normalized spherical Legendre function of degree n, order m at polar angle theta
    (scipy.special.sph_legendre_p): Y_n^m(theta, phi) = sph_legendre_p(n, m, theta) e^{i m phi}."""
    return sph_legendre_p_p.bind(n, m, theta)


def sph_legendre_dp(n: Any, m: Any, theta: Any) -> Any:
    """d/dtheta sph_legendre_p(n, m, theta)."""
    return sph_legendre_dp_p.bind(n, m, theta)
