"""fgrad.scipy.special's gamma family: gamma, gammaln, rgamma, gammasgn, digamma (psi),
polygamma, multigammaln, beta, betaln and the regularized incomplete functions betainc,
gammainc and gammaincc. Derivatives of every order in x; the incomplete functions have none in
their shape parameters a and b (DifferentiationError names the argument, as JAX raises)."""
from __future__ import annotations

import math
from typing import Any

from .. import numpy as fnp
from ..core.errors import FgradValueError
from ..numpy._util import int_arg
from ..ops import special_gamma as sg
from ._args import float_args

__all__ = ["gamma", "gammaln", "rgamma", "gammasgn", "digamma", "psi", "polygamma", "multigammaln",
           "beta", "betaln", "betainc", "gammainc", "gammaincc"]


def gamma(x: Any) -> Any:
    """The gamma function; inf or NaN at the poles 0, -1, -2, ..., inf above 171.6."""
    (x,) = float_args("gamma", x)
    return sg.gamma(x)


def gammaln(x: Any) -> Any:
    """log|gamma(x)|, finite far beyond where gamma overflows; +inf at the poles."""
    (x,) = float_args("gammaln", x)
    return sg.lgamma(x)


def rgamma(x: Any) -> Any:
    """1 / gamma(x): 0 at the poles of gamma, and smooth there (its derivatives too)."""
    (x,) = float_args("rgamma", x)
    return sg.rgamma(x)


def gammasgn(x: Any) -> Any:
    """The sign of gamma(x) (+1 or -1; piecewise constant, so its derivative is 0)."""
    (x,) = float_args("gammasgn", x)
    return sg.gammasgn(x)


def digamma(x: Any) -> Any:
    """The digamma function psi(x) = d/dx log gamma(x); its derivative is polygamma(1, x)."""
    (x,) = float_args("digamma", x)
    return sg.digamma(x)


psi = digamma


def polygamma(n: Any, x: Any) -> Any:
    """The n-th derivative of digamma at x (n: non-negative integers, an array or a number).
    Differentiable in x (polygamma(n + 1, x)); n is an order, with no derivative."""
    n, x = float_args("polygamma", n, x)
    return sg.polygamma(n, x)


def multigammaln(a: Any, d: int) -> Any:
    """log of the multivariate gamma function of dimension `d` (a Python int):
    d (d - 1) / 4 log(pi) + sum_{j < d} gammaln(a - j / 2). Unlike SciPy, a <= (d - 1) / 2 is
    not an error (a traced `a` cannot be checked): the sum is returned as it is."""
    d = int_arg(d, "multigammaln", "d")
    if d < 1:
        raise FgradValueError(f"multigammaln: the dimension d must be a positive integer, got {d}")
    (a,) = float_args("multigammaln", a)
    halves = fnp.arange(d, dtype=a.dtype) * 0.5
    terms = sg.lgamma(fnp.subtract(fnp.expand_dims(a, -1), halves))
    return fnp.add(fnp.sum(terms, axis=-1), d * (d - 1) / 4.0 * math.log(math.pi))


def beta(a: Any, b: Any) -> Any:
    """The beta function gamma(a) gamma(b) / gamma(a + b)."""
    a, b = float_args("beta", a, b)
    return sg.beta(a, b)


def betaln(a: Any, b: Any) -> Any:
    """log|beta(a, b)|, finite where beta(a, b) under- or overflows."""
    a, b = float_args("betaln", a, b)
    return sg.betaln(a, b)


def betainc(a: Any, b: Any, x: Any) -> Any:
    """The regularized incomplete beta function I_x(a, b) (a, b > 0, x in [0, 1]).
    Differentiable in x (the Beta(a, b) density), to any order; asking for a derivative in a
    or b raises DifferentiationError."""
    a, b, x = float_args("betainc", a, b, x)
    return sg.betainc(a, b, x)


def gammainc(a: Any, x: Any) -> Any:
    """The regularized lower incomplete gamma function P(a, x) (a > 0, x >= 0).
    Differentiable in x (the Gamma(a) density); a derivative in a raises
    DifferentiationError."""
    a, x = float_args("gammainc", a, x)
    return sg.igamma(a, x)


def gammaincc(a: Any, x: Any) -> Any:
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x), accurate where
    P is near 1. Differentiable in x; a derivative in a raises DifferentiationError."""
    a, x = float_args("gammaincc", a, x)
    return sg.igammac(a, x)
