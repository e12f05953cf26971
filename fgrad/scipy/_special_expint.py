"""fgrad.scipy.special's exponential and trigonometric integrals: exp1, expi, expn, sici,
fresnel, dawsn and spence. Values are SciPy's; derivatives of every order are closed forms
(see fgrad/ops/special_expint.py); expn has none in its integer order n."""
from __future__ import annotations

from typing import Any

from .. import numpy as fnp
from ..ops import special_expint as se
from ._args import float_args

__all__ = ["exp1", "expi", "expn", "sici", "fresnel", "dawsn", "spence"]


def exp1(x: Any) -> Any:
    """The exponential integral E_1(x) = integral_x^inf exp(-t) / t dt (x > 0; inf at 0, NaN
    below, as SciPy's real exp1); exp1' = -exp(-x) / x."""
    (x,) = float_args("exp1", x)
    return se.exp1(x)


def expi(x: Any) -> Any:
    """The exponential integral Ei(x), the principal value of integral_-inf^x exp(t) / t dt
    (-inf at 0); expi' = exp(x) / x."""
    (x,) = float_args("expi", x)
    return se.expi(x)


def expn(n: Any, x: Any) -> Any:
    """The generalized exponential integral E_n(x) = integral_1^inf exp(-x t) / t^n dt for
    integer n >= 0 (NaN for n < 0, as SciPy). Differentiable in x (-expn(n - 1, x)); n is an
    order, with no derivative (DifferentiationError)."""
    n, x = float_args("expn", n, x)
    # the primitive extends E_n below n = 0 (its own derivatives need E_-1, E_-2, ...); SciPy
    # defines no negative order. n is never differentiated, so this select is no kink in x.
    return fnp.where(fnp.less(n, 0), fnp.nan, se.expn(n, x))


def sici(x: Any) -> tuple:
    """(Si(x), Ci(x)), the sine and cosine integrals; Ci is SciPy's real one (Ci(|x|) for
    x < 0, -inf at 0). Si' = sin(x) / x (exact at 0), Ci' = cos(x) / x."""
    (x,) = float_args("sici", x)
    return se.sici(x)


def fresnel(z: Any) -> tuple:
    """(S(z), C(z)), the Fresnel integrals of sin(pi t^2 / 2) and cos(pi t^2 / 2) over [0, z]."""
    (z,) = float_args("fresnel", z)
    return se.fresnel(z)


def dawsn(x: Any) -> Any:
    """Dawson's integral exp(-x^2) integral_0^x exp(t^2) dt; dawsn' = 1 - 2 x dawsn(x)."""
    (x,) = float_args("dawsn", x)
    return se.dawsn(x)


def spence(z: Any) -> Any:
    """Spence's function integral_1^z log(t) / (1 - t) dt for real z >= 0 (NaN below);
    spence'(z) = log(z) / (1 - z), -1 at z = 1 (smooth there to every order)."""
    (z,) = float_args("spence", z)
    return se.spence(z)
