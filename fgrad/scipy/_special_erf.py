"""fgrad.scipy.special's error-function family and the normal distribution: erfc, erfcx,
erfinv, erfcinv, ndtr, log_ndtr and ndtri, plus Student's t CDF stdtr and quantile stdtrit.
Each is accurate in its tails, and its derivatives are too (see fgrad/ops/special_erf.py)."""
from __future__ import annotations

import math
from typing import Any

from ..ops import elementwise as ew
from ..ops import special_erf as se
from ..ops import special_gamma as sg
from ._args import float_args

__all__ = ["erfc", "erfcx", "erfinv", "erfcinv", "ndtr", "log_ndtr", "ndtri", "stdtr", "stdtrit"]


def erfc(x: Any) -> Any:
    """1 - erf(x), accurate where erf(x) is near 1 (erfc(10) = 2e-45)."""
    (x,) = float_args("erfc", x)
    return se.erfc(x)


def erfcx(x: Any) -> Any:
    """The scaled complementary error function exp(x**2) erfc(x), finite for large x."""
    (x,) = float_args("erfcx", x)
    return se.erfcx(x)


def erfinv(y: Any) -> Any:
    """The inverse error function on [-1, 1] (+-inf at +-1, NaN outside); its derivative is
    sqrt(pi)/2 exp(erfinv(y)**2), accurate up to |y| = 1 - 1e-16."""
    (y,) = float_args("erfinv", y)
    return se.erfinv(y)


def erfcinv(y: Any) -> Any:
    """The inverse of erfc on [0, 2] (+inf at 0, -inf at 2, NaN outside)."""
    (y,) = float_args("erfcinv", y)
    return se.erfcinv(y)


def ndtr(x: Any) -> Any:
    """The standard normal CDF, erfc(-x / sqrt(2)) / 2 (accurate in both tails)."""
    (x,) = float_args("ndtr", x)
    return ew.mul(ew.const(x, 0.5), se.erfc(ew.mul(ew.const(x, -1.0 / math.sqrt(2.0)), x)))


def log_ndtr(x: Any) -> Any:
    """log of the standard normal CDF, finite far into the lower tail (log_ndtr(-1e5) = -5e9);
    its derivative, pdf / CDF, is computed without under- or overflow."""
    (x,) = float_args("log_ndtr", x)
    return se.log_ndtr(x)


def ndtri(p: Any) -> Any:
    """The standard normal quantile (inverse of ndtr) on [0, 1]; -inf at 0, inf at 1."""
    (p,) = float_args("ndtri", p)
    return se.ndtri(p)


def stdtr(df: Any, t: Any) -> Any:
    """Student's t CDF with `df` degrees of freedom at t. Differentiable in t (the density);
    a derivative in df raises DifferentiationError."""
    df, t = float_args("stdtr", df, t)
    return sg.stdtr(df, t)


def stdtrit(df: Any, p: Any) -> Any:
    """Student's t quantile: the t with stdtr(df, t) == p. Differentiable in p; a derivative
    in df raises DifferentiationError."""
    df, p = float_args("stdtrit", df, p)
    return sg.stdtrit(df, p)
