"""fgrad.scipy.stats.wrapcauchy: the wrapped Cauchy distribution with SciPy's signatures (c,
loc, scale): density (1 - c**2) / (2 pi (1 + c**2 - 2 c cos(y))) on 0 <= y <= 2 pi, 0 outside
(logpdf -inf). The denominator is written (1 - c)**2 + 4 c sin(y / 2)**2, which keeps its
digits as c approaches 1. Differentiable in x, c, loc and scale to any order on the support;
c outside (0, 1) or scale <= 0 give NaN, as in SciPy."""
from __future__ import annotations

import math
from typing import Any

from ... import numpy as fnp
from ._common import inside, location_scale, quiet

__all__ = ["logpdf", "pdf"]

_LOG_2PI = math.log(2.0 * math.pi)


def _valid(c: Any) -> Any:
    return fnp.logical_and(fnp.greater(c, 0.0), fnp.less(c, 1.0))


def _logpdf(y: Any, c: Any) -> Any:
    supported = fnp.logical_and(fnp.greater_equal(y, 0.0), fnp.less_equal(y, 2.0 * math.pi))
    s = fnp.sin(0.5 * inside(supported, y, 1.0))
    out = fnp.log1p(-c) + fnp.log1p(c) - _LOG_2PI - fnp.log(fnp.square(1.0 - c) + 4.0 * c * s * s)
    return fnp.where(supported, out, -fnp.inf)


@quiet
def logpdf(x: Any, c: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """log of the density: log(1 - c**2) - log(2 pi) - log(1 + c**2 - 2 c cos(y)) - log(scale)
    on the support."""
    return location_scale("wrapcauchy.logpdf", _logpdf, x, loc, scale, c, valid=_valid, density=True)


@quiet
def pdf(x: Any, c: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """The wrapped Cauchy density."""
    return fnp.exp(logpdf(x, c, loc, scale))
