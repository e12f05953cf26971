"""fgrad.scipy.special's modified Bessel functions of the second kind (k0, k1, kv and the scaled
k0e, k1e, kve) and the Airy functions (airy: Ai, Ai', Bi, Bi'). Derivatives in x of every
order; a derivative in the order v raises DifferentiationError."""
from __future__ import annotations

from typing import Any

from ..ops import special_kairy as sk
from ._args import float_args

__all__ = ["k0", "k1", "k0e", "k1e", "kv", "kn", "kve", "airy"]


def k0(x: Any) -> Any:
    """The modified Bessel function of the second kind of order 0, x > 0; k0' = -k1."""
    (x,) = float_args("k0", x)
    return sk.k0(x)


def k1(x: Any) -> Any:
    """The modified Bessel function of the second kind of order 1, x > 0."""
    (x,) = float_args("k1", x)
    return sk.k1(x)


def k0e(x: Any) -> Any:
    """k0(x) * exp(x), finite for large x."""
    (x,) = float_args("k0e", x)
    return sk.k0e(x)


def k1e(x: Any) -> Any:
    """k1(x) * exp(x), finite for large x."""
    (x,) = float_args("k1e", x)
    return sk.k1e(x)


def kv(v: Any, x: Any) -> Any:
    """The modified Bessel function of the second kind of real order v, x > 0; differentiable in x."""
    v, x = float_args("kv", v, x)
    return sk.kv(v, x)


def kn(n: Any, x: Any) -> Any:
    """kv of integer order n (SciPy's kn)."""
    n, x = float_args("kn", n, x)
    return sk.kv(n, x)


def kve(v: Any, x: Any) -> Any:
    """kv(v, x) * exp(x), finite for large x; differentiable in x."""
    v, x = float_args("kve", v, x)
    return sk.kve(v, x)


def airy(x: Any) -> tuple:
    """The Airy functions and their derivatives at x: (Ai, Ai', Bi, Bi'), each differentiable
    (Ai'' = x Ai, Bi'' = x Bi)."""
    (x,) = float_args("airy", x)
    return sk.ai(x), sk.aip(x), sk.bi(x), sk.bip(x)
