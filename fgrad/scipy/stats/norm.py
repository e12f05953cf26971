"""fgrad.scipy.stats.norm: the normal distribution with SciPy's signatures (loc, scale).
The CDFs and their logs go through ndtr and log_ndtr, accurate in both tails; a scale <= 0
gives NaN, as in SciPy."""
from __future__ import annotations

import math
from typing import Any

from ... import numpy as fnp
from .. import special
from .._args import float_args
from ._common import nan_unless, quiet, standardize

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]

_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


@quiet
def logpdf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """log of the normal density at x: -((x - loc) / scale)**2 / 2 - log(scale) - log(2 pi) / 2."""
    z, scale = standardize("norm.logpdf", x, loc, scale)
    return nan_unless(scale > 0, -0.5 * z * z - fnp.log(scale) - _HALF_LOG_2PI)


@quiet
def pdf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """The normal density at x."""
    return fnp.exp(logpdf(x, loc, scale))


@quiet
def cdf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """P(X <= x)."""
    z, scale = standardize("norm.cdf", x, loc, scale)
    return nan_unless(scale > 0, special.ndtr(z))


@quiet
def logcdf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """log P(X <= x), finite far into the lower tail."""
    z, scale = standardize("norm.logcdf", x, loc, scale)
    return nan_unless(scale > 0, special.log_ndtr(z))


@quiet
def sf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """The survival function P(X > x) = 1 - cdf(x), accurate in the upper tail."""
    z, scale = standardize("norm.sf", x, loc, scale)
    return nan_unless(scale > 0, special.ndtr(-z))


@quiet
def logsf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """log P(X > x), finite far into the upper tail."""
    z, scale = standardize("norm.logsf", x, loc, scale)
    return nan_unless(scale > 0, special.log_ndtr(-z))


@quiet
def ppf(q: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """The quantile function, the inverse of cdf: loc + scale * ndtri(q), q in [0, 1]."""
    q, loc, scale = float_args("norm.ppf", q, loc, scale)
    return nan_unless(scale > 0, loc + scale * special.ndtri(q))


@quiet
def isf(q: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """The inverse of sf: loc - scale * ndtri(q)."""
    q, loc, scale = float_args("norm.isf", q, loc, scale)
    return nan_unless(scale > 0, loc - scale * special.ndtri(q))
