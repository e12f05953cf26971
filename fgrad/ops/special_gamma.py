"""The gamma family and the functions built on it: gamma, lgamma (log|gamma|), digamma,
polygamma, rgamma (1/gamma), gammasgn; beta and betaln; the regularized incomplete gamma
(igamma, igammac) and beta (betainc) functions; Student's t CDF (stdtr) and quantile (stdtrit).

Derivatives are closed forms in these same functions, so every order is exact: lgamma' =
digamma, digamma' = polygamma(1, .), polygamma(n, .)' = polygamma(n + 1, .), and the
incomplete functions' derivatives in x are the densities, computed in log space with xlogy so
that they are right at the ends of the support. Their derivatives in the shape parameters (a,
b, df) have no closed form: asking for them raises DifferentiationError (see _special.py)."""
from __future__ import annotations

import math
from typing import Any

from ._special import define, no_partial
from .elementwise import (
    add,
    const,
    cos,
    div,
    exp,
    log,
    log1p,
    lt,
    mul,
    neg,
    select,
    sin,
    sub,
)
from .special_xlogy import xlog1py, xlogy


def _one(x):
    return const(x, 1.0)


def _half(x):
    return const(x, 0.5)


# --- gamma, lgamma, digamma, polygamma ----------------------------------------------------------

lgamma_p = define("lgamma", "gammaln", lambda x, out: digamma(x))
digamma_p = define("digamma", "digamma", lambda x, out: polygamma(_one(x), x))
polygamma_p = define(
    "polygamma", "polygamma",
    no_partial("polygamma", 0, "n", "the order n is an integer"),
    lambda n, x, out: polygamma(add(n, _one(n)), x))
gamma_p = define("gamma", "gamma", lambda x, out: mul(out, digamma(x)))
gammasgn_p = define("gammasgn", "gammasgn")


def _rgamma_deriv(x, out):
    """d/dx 1/gamma(x). Right of 1/2 it is -digamma(x) / gamma(x); left of it, that is 0 * inf at
    the poles of digamma (0, -1, -2, ...) where 1/gamma is smooth, so there the derivative is
    taken of the reflection formula 1/gamma(x) = sin(pi x) gamma(1 - x) / pi, whose factors are
    finite: gamma(1 - x) (cos(pi x) - sin(pi x) digamma(1 - x) / pi). Each branch gets a point
    where it is finite in place of the other branch's x, so neither makes NaN."""
    left = lt(x, _half(x))
    xl = select(left, x, const(x, 0.0))
    xr = select(left, _one(x), x)
    one_minus = sub(_one(x), xl)
    pi_x = mul(const(x, math.pi), xl)
    d_left = mul(gamma(one_minus),
                 sub(cos(pi_x), div(mul(sin(pi_x), digamma(one_minus)), const(x, math.pi))))
    d_right = neg(mul(digamma(xr), rgamma(xr)))
    return select(left, d_left, d_right)


rgamma_p = define("rgamma", "rgamma", _rgamma_deriv)


def lgamma(x: Any) -> Any:
    """log|gamma(x)| (SciPy's gammaln); +inf at the poles 0, -1, -2, ..."""
    return lgamma_p.bind(x)


def digamma(x: Any) -> Any:
    """The digamma function, d/dx log gamma(x)."""
    return digamma_p.bind(x)


def polygamma(n: Any, x: Any) -> Any:
    """The n-th derivative of digamma, for integer-valued n >= 0 (in x's float dtype)."""
    return polygamma_p.bind(n, x)


def gamma(x: Any) -> Any:
    """The gamma function (inf or NaN at its poles 0, -1, -2, ..., inf beyond 171.6)."""
    return gamma_p.bind(x)


def rgamma(x: Any) -> Any:
    """1 / gamma(x), an entire function: 0 at the poles of gamma."""
    return rgamma_p.bind(x)


def gammasgn(x: Any) -> Any:
    """The sign of gamma(x), +-1 (piecewise constant: no derivative)."""
    return gammasgn_p.bind(x)


# --- beta, betaln, betainc ------------------------------------------------------------------------

def _log_beta_partial(a, b, wrt):
    """d/da log|B(a, b)| = digamma(a) - digamma(a + b) for wrt = a, likewise for b (and
    d/da B = B times that)."""
    return sub(digamma(wrt), digamma(add(a, b)))


beta_p = define("beta", "beta", lambda a, b, out: mul(out, _log_beta_partial(a, b, a)),
                lambda a, b, out: mul(out, _log_beta_partial(a, b, b)))
betaln_p = define("betaln", "betaln", lambda a, b, out: _log_beta_partial(a, b, a),
                  lambda a, b, out: _log_beta_partial(a, b, b))

_BETAINC_WHY = ("the regularized incomplete beta function's derivatives in its shape parameters have "
                "no closed form (fgrad.scipy.stats.beta.cdf and sf in a and b go through them)")


def _betainc_dx(a, b, x, out):
    # the Beta(a, b) density x^(a-1) (1-x)^(b-1) / B(a, b), in log space: xlogy gives 0 * log 0
    # = 0 at the ends of [0, 1] for a == 1 (b == 1), and +-inf otherwise, as the density does
    return exp(sub(add(xlogy(sub(a, _one(a)), x), xlog1py(sub(b, _one(b)), neg(x))), betaln(a, b)))


betainc_p = define("betainc", "betainc", no_partial("betainc", 0, "a", _BETAINC_WHY),
                   no_partial("betainc", 1, "b", _BETAINC_WHY), _betainc_dx)


def beta(a: Any, b: Any) -> Any:
    """The beta function gamma(a) gamma(b) / gamma(a + b)."""
    return beta_p.bind(a, b)


def betaln(a: Any, b: Any) -> Any:
    """log|beta(a, b)|, without overflow for large a and b."""
    return betaln_p.bind(a, b)


def betainc(a: Any, b: Any, x: Any) -> Any:
    """The regularized incomplete beta function I_x(a, b), for a, b > 0 and x in [0, 1];
    differentiable in x only."""
    return betainc_p.bind(a, b, x)


# --- the regularized incomplete gamma functions ------------------------------------------------------

_IGAMMA_WHY = ("the regularized incomplete gamma function's derivative in its shape parameter has "
               "no closed form (fgrad.scipy.stats' gamma and chi2 CDFs in a and df go through it)")


def _igamma_dx(sign):
    def partial(a, x, out):
        # the Gamma(a) density x^(a-1) exp(-x) / gamma(a), in log space (xlogy: right at x = 0)
        d = exp(sub(sub(xlogy(sub(a, _one(a)), x), x), lgamma(a)))
        return d if sign > 0 else neg(d)
    return partial


igamma_p = define("igamma", "gammainc", no_partial("gammainc", 0, "a", _IGAMMA_WHY), _igamma_dx(1))
igammac_p = define("igammac", "gammaincc", no_partial("gammaincc", 0, "a", _IGAMMA_WHY), _igamma_dx(-1))


def igamma(a: Any, x: Any) -> Any:
    """The regularized lower incomplete gamma function P(a, x) (SciPy's gammainc), for a > 0 and
    x >= 0; differentiable in x only."""
    return igamma_p.bind(a, x)


def igammac(a: Any, x: Any) -> Any:
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x) (SciPy's
    gammaincc); differentiable in x only."""
    return igammac_p.bind(a, x)


# --- Student's t distribution -------------------------------------------------------------------

def t_logpdf(df: Any, t: Any) -> Any:
    """log of Student's t density with `df` degrees of freedom (standard location and scale)."""
    half_df = mul(_half(df), df)
    return sub(sub(sub(lgamma(add(half_df, _half(df))), lgamma(half_df)),
                   mul(_half(df), log(mul(df, const(df, math.pi))))),
               mul(add(half_df, _half(df)), log1p(div(mul(t, t), df))))


_STDTR_WHY = "Student's t CDF has no closed-form derivative in its degrees of freedom"

# the t CDF as its own primitive: composing it from betainc(df/2, 1/2, df / (df + t^2)) makes
# its derivative inf * 0 = NaN at t = 0 (the density of betainc at 1 times d(t^2)/dt)
stdtr_p = define("stdtr", "stdtr", no_partial("stdtr", 0, "df", _STDTR_WHY),
                 lambda df, t, out: exp(t_logpdf(df, t)))
stdtrit_p = define("stdtrit", "stdtrit", no_partial("stdtrit", 0, "df", _STDTR_WHY),
                   lambda df, p, out: exp(neg(t_logpdf(df, out))))


def stdtr(df: Any, t: Any) -> Any:
    """Student's t CDF at t with df degrees of freedom; differentiable in t only."""
    return stdtr_p.bind(df, t)


def stdtrit(df: Any, p: Any) -> Any:
    """Student's t quantile: t with stdtr(df, t) == p; differentiable in p only."""
    return stdtrit_p.bind(df, p)
