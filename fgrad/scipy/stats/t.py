"""fgrad.scipy.stats.t: Student's t distribution with SciPy's signatures (df, loc, scale).
The CDF is one primitive (stdtr): differentiable in x, loc and scale to any order, with no
derivative in df (DifferentiationError). df <= 0 or scale <= 0 give NaN, as in SciPy."""
from __future__ import annotations

from typing import Any

from ... import numpy as fnp
from ...ops.special_gamma import t_logpdf
from .. import special
from .._args import float_args
from ._common import log_probability, nan_unless, positive, quiet, standardize

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]


@quiet
def logpdf(x: Any, df: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """log of the t density: lgamma((df+1)/2) - lgamma(df/2) - log(df pi)/2 - log(scale)
    - (df+1)/2 log(1 + z**2/df), z = (x - loc) / scale."""
    z, scale, df = standardize("t.logpdf", x, loc, scale, df)
    return nan_unless(positive(df, scale), t_logpdf(df, z) - fnp.log(scale))


@quiet
def pdf(x: Any, df: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """The t density at x."""
    return fnp.exp(logpdf(x, df, loc, scale))


@quiet
def cdf(x: Any, df: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """P(X <= x) (scipy.special.stdtr); differentiable in x, loc and scale, not in df."""
    z, scale, df = standardize("t.cdf", x, loc, scale, df)
    return nan_unless(positive(df, scale), special.stdtr(df, z))


@quiet
def logcdf(x: Any, df: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """log P(X <= x), accurate also where the CDF is near 1."""
    z, scale, df = standardize("t.logcdf", x, loc, scale, df)
    out = log_probability(special.stdtr(df, z), special.stdtr(df, -z))
    return nan_unless(positive(df, scale), out)


@quiet
def sf(x: Any, df: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """P(X > x) = cdf(-x) by symmetry, accurate in the upper tail."""
    z, scale, df = standardize("t.sf", x, loc, scale, df)
    return nan_unless(positive(df, scale), special.stdtr(df, -z))


@quiet
def logsf(x: Any, df: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """log P(X > x), accurate also where the survival function is near 1."""
    z, scale, df = standardize("t.logsf", x, loc, scale, df)
    out = log_probability(special.stdtr(df, -z), special.stdtr(df, z))
    return nan_unless(positive(df, scale), out)


@quiet
def ppf(q: Any, df: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """The quantile function loc + scale * stdtrit(df, q); differentiable in q, loc, scale."""
    q, df, loc, scale = float_args("t.ppf", q, df, loc, scale)
    out = loc + scale * special.stdtrit(df, q)
    # scipy.special.stdtrit(df, 0) is +inf; the quantile at 0 is -inf (SciPy's t.ppf says so too)
    out = fnp.where(fnp.equal(q, 0.0), -fnp.inf, out)
    return nan_unless(positive(df, scale), out)
