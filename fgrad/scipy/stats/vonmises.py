"""fgrad.scipy.stats.vonmises: the von Mises (circular normal) distribution with SciPy's
signatures (kappa, loc, scale): density exp(kappa cos(y)) / (2 pi I0(kappa)), periodic in y as
SciPy's. Written with i0e, exp(-kappa) I0(kappa), so that large kappa does not overflow;
differentiable in x, kappa, loc and scale to any order. kappa < 0 or scale <= 0 give NaN, as
in SciPy (kappa = 0 is the uniform density 1 / (2 pi))."""
from __future__ import annotations

import math
from typing import Any

from ... import numpy as fnp
from .. import special
from ._common import location_scale, quiet

__all__ = ["logpdf", "pdf"]

_LOG_2PI = math.log(2.0 * math.pi)


def _logpdf(y: Any, kappa: Any) -> Any:
    # log(2 pi I0(kappa)) = log(2 pi i0e(kappa)) + kappa
    return kappa * (fnp.cos(y) - 1.0) - _LOG_2PI - fnp.log(special.i0e(kappa))


@quiet
def logpdf(x: Any, kappa: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """log of the density: kappa (cos(y) - 1) - log(2 pi i0e(kappa)) - log(scale)."""
    return location_scale("vonmises.logpdf", _logpdf, x, loc, scale, kappa,
                          valid=lambda k: fnp.greater_equal(k, 0.0), density=True)


@quiet
def pdf(x: Any, kappa: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """The density exp(kappa cos(y)) / (2 pi scale I0(kappa))."""
    return fnp.exp(logpdf(x, kappa, loc, scale))
