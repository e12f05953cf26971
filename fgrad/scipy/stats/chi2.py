"""fgrad.scipy.stats.chi2: the chi-squared distribution with SciPy's signatures (df, loc,
scale): a gamma distribution of shape df / 2 and scale 2. Differentiable in x, loc and scale;
the CDFs have no derivative in df (DifferentiationError)."""
from __future__ import annotations

import math
from typing import Any

from ... import numpy as fnp
from ._common import nan_unless, positive, quiet, standardize
from .gamma import standard_cdf, standard_logpdf

__all__ = ["logpdf", "pdf", "cdf", "sf", "logcdf", "logsf"]


@quiet
def logpdf(x: Any, df: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """log of the chi-squared density at x."""
    y, scale, df = standardize("chi2.logpdf", x, loc, scale, df)
    return nan_unless(positive(df, scale),
                      standard_logpdf(y * 0.5, df * 0.5) - math.log(2.0) - fnp.log(scale))


@quiet
def pdf(x: Any, df: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """The chi-squared density at x."""
    return fnp.exp(logpdf(x, df, loc, scale))


@quiet
def cdf(x: Any, df: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """P(X <= x) = gammainc(df / 2, (x - loc) / (2 scale))."""
    y, scale, df = standardize("chi2.cdf", x, loc, scale, df)
    return nan_unless(positive(df, scale), standard_cdf(y * 0.5, df * 0.5))


@quiet
def sf(x: Any, df: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """P(X > x) = gammaincc(df / 2, (x - loc) / (2 scale))."""
    y, scale, df = standardize("chi2.sf", x, loc, scale, df)
    return nan_unless(positive(df, scale), standard_cdf(y * 0.5, df * 0.5, upper=True))


@quiet
def logcdf(x: Any, df: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """log P(X <= x)."""
    y, scale, df = standardize("chi2.logcdf", x, loc, scale, df)
    return nan_unless(positive(df, scale), standard_cdf(y * 0.5, df * 0.5, log=True))


@quiet
def logsf(x: Any, df: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """log P(X > x)."""
    y, scale, df = standardize("chi2.logsf", x, loc, scale, df)
    return nan_unless(positive(df, scale), standard_cdf(y * 0.5, df * 0.5, upper=True, log=True))
