"""fgrad.scipy.special's Bessel functions: j0, j1, jv (and its alias jn), y0, y1, yv, yn, i0,
i1, iv and the scaled i0e, i1e, ive. Derivatives in x of every order (the recurrences, exact
at x = 0 as well); a derivative in the order raises DifferentiationError."""
from __future__ import annotations

from typing import Any

from ..ops import special_bessel as sb
from ._args import float_args

__all__ = ["j0", "j1", "jv", "jn", "y0", "y1", "yv", "yn", "i0", "i1", "i0e", "i1e", "iv", "ive"]


def j0(x: Any) -> Any:
    """The Bessel function of the first kind of order 0; j0' = -j1."""
    (x,) = float_args("j0", x)
    return sb.j0(x)


def j1(x: Any) -> Any:
    """The Bessel function of the first kind of order 1."""
    (x,) = float_args("j1", x)
    return sb.j1(x)


def jv(v: Any, x: Any) -> Any:
    """The Bessel function of the first kind of real order v (NaN for x < 0 unless v is an
    integer). Differentiable in x; a derivative in v raises DifferentiationError."""
    v, x = float_args("jv", v, x)
    return sb.jv(v, x)


def jn(n: Any, x: Any) -> Any:
    """The Bessel function of the first kind of integer order n (SciPy's jn, an alias of jv)."""
    n, x = float_args("jn", n, x)
    return sb.jv(n, x)


def y0(x: Any) -> Any:
    """The Bessel function of the second kind of order 0 (x > 0; -inf at 0); y0' = -y1."""
    (x,) = float_args("y0", x)
    return sb.y0(x)


def y1(x: Any) -> Any:
    """The Bessel function of the second kind of order 1 (x > 0; -inf at 0)."""
    (x,) = float_args("y1", x)
    return sb.y1(x)


def yv(v: Any, x: Any) -> Any:
    """The Bessel function of the second kind of real order v (x > 0). Differentiable in x;
    a derivative in v raises DifferentiationError."""
    v, x = float_args("yv", v, x)
    return sb.yv(v, x)


def yn(n: Any, x: Any) -> Any:
    """The Bessel function of the second kind of integer order n (x > 0)."""
    n, x = float_args("yn", n, x)
    return sb.yn(n, x)


def i0(x: Any) -> Any:
    """The modified Bessel function of the first kind of order 0; i0' = i1."""
    (x,) = float_args("i0", x)
    return sb.i0(x)


def i1(x: Any) -> Any:
    """The modified Bessel function of the first kind of order 1."""
    (x,) = float_args("i1", x)
    return sb.i1(x)


def i0e(x: Any) -> Any:
    """i0(x) * exp(-|x|), finite for large |x|; a kink at 0 (derivative 0 there, the mean of
    the two sides)."""
    (x,) = float_args("i0e", x)
    return sb.i0e(x)


def i1e(x: Any) -> Any:
    """i1(x) * exp(-|x|), finite for large |x|."""
    (x,) = float_args("i1e", x)
    return sb.i1e(x)


def iv(v: Any, x: Any) -> Any:
    """The modified Bessel function of the first kind of real order v. Differentiable in x;
    a derivative in v raises DifferentiationError."""
    v, x = float_args("iv", v, x)
    return sb.iv(v, x)


def ive(v: Any, x: Any) -> Any:
    """iv(v, x) * exp(-|x|), finite for large |x|. Differentiable in x (a kink at 0); a
    derivative in v raises DifferentiationError."""
    v, x = float_args("ive", v, x)
    return sb.ive(v, x)
