"""fgrad.scipy.stats.gennorm: the generalized normal distribution with SciPy's signatures
(beta, loc, scale): density beta / (2 Gamma(1/beta)) exp(-|y|**beta). beta = 2 is a normal
distribution and beta = 1 a Laplace one. |y|**beta is not smooth at y = 0 (unless beta is an
even integer): there its derivatives are taken as 0 (|y|'s convention) and the CDFs take their
first derivative, the density, exactly. logpdf is differentiable in beta; the CDFs, built on
gammaincc, have no derivative in beta (DifferentiationError). beta <= 0 or scale <= 0 give NaN,
as in SciPy."""
from __future__ import annotations

import math
from typing import Any

from ... import numpy as fnp
from .. import special
from ._common import inside, location_scale, log_probability, quiet

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]

_LN2 = math.log(2.0)


def _positive(beta: Any) -> Any:
    return fnp.greater(beta, 0.0)


def _log_density_at_0(beta: Any) -> Any:
    return fnp.log(beta) - _LN2 - special.gammaln(1.0 / beta)


def _logpdf(y: Any, beta: Any) -> Any:
    return _log_density_at_0(beta) - fnp.power(fnp.abs(y), beta)


def _tails(y: Any, beta: Any) -> tuple:
    """(P(Y <= y), P(Y > y)): the far side is gammaincc(1/beta, |y|**beta) / 2, each accurate in
    its own tail. At y = 0 the composition would be 0 * inf in its derivative (gammaincc's
    derivative at 0): there it is 1/2 + y * density(0), exact to first order (and the density's
    derivative there is 0 for beta > 1, infinite otherwise)."""
    zero = fnp.equal(y, 0.0)
    ys = inside(zero, 1.0, y)
    far = 0.5 * special.gammaincc(1.0 / beta, fnp.power(fnp.abs(ys), beta))
    near = 1.0 - far
    negative = fnp.less(ys, 0.0)
    centre = 0.5 + y * fnp.exp(_log_density_at_0(beta))
    lower = fnp.where(zero, centre, fnp.where(negative, far, near))
    upper = fnp.where(zero, 1.0 - centre, fnp.where(negative, near, far))
    return lower, upper


@quiet
def logpdf(x: Any, beta: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """log of the density: log(beta / (2 Gamma(1/beta))) - |y|**beta - log(scale)."""
    return location_scale("gennorm.logpdf", _logpdf, x, loc, scale, beta, valid=_positive, density=True)


@quiet
def pdf(x: Any, beta: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """The density beta / (2 scale Gamma(1/beta)) exp(-|y|**beta)."""
    return fnp.exp(logpdf(x, beta, loc, scale))


@quiet
def cdf(x: Any, beta: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """P(X <= x) = 1/2 + sign(y) gammainc(1/beta, |y|**beta) / 2."""
    return location_scale("gennorm.cdf", lambda y, b: _tails(y, b)[0], x, loc, scale, beta, valid=_positive)


@quiet
def sf(x: Any, beta: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """P(X > x), accurate in the upper tail."""
    return location_scale("gennorm.sf", lambda y, b: _tails(y, b)[1], x, loc, scale, beta, valid=_positive)


@quiet
def logcdf(x: Any, beta: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """log P(X <= x), accurate in both tails."""
    return location_scale("gennorm.logcdf", lambda y, b: log_probability(*_tails(y, b)), x, loc, scale, beta,
                          valid=_positive)


@quiet
def logsf(x: Any, beta: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """log P(X > x), accurate in both tails."""
    return location_scale("gennorm.logsf", lambda y, b: log_probability(*_tails(y, b)[::-1]), x, loc, scale,
                          beta, valid=_positive)
