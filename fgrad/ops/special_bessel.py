"""Bessel functions: of the first kind (j0, j1, jv), the second kind (y0, y1, yn, yv), and the
modified first kind (i0, i1, iv) with their exponentially scaled forms (i0e, i1e, ive).

Derivatives in x are the recurrences, written with these same functions, so every order is
exact: J_v' = (J_{v-1} - J_{v+1}) / 2, Y likewise, I_v' = (I_{v-1} + I_{v+1}) / 2; at x = 0
they give the limits (I_1'(0) = 1/2) without the 0/0 of the forms with v/x. The scaled forms
are I_v(x) exp(-|x|): their derivatives take -sign(x) times the function, so i0e and ive have a
kink at x = 0, where the derivative is the mean of the two sides (sign(0) = 0). A derivative in
the order v has no closed form: it raises DifferentiationError."""
from __future__ import annotations

from typing import Any

from ._special import define, no_partial
from .elementwise import add, const, mul, neg, sign, sub

_ORDER_WHY = "the derivative of a Bessel function in its order has no closed form"
_INT_ORDER_WHY = "the order n is an integer"


def _half(x):
    return const(x, 0.5)


def _shift(v, k):
    return add(v, const(v, float(k)))


def _first_kind_recurrence(f, plus):
    """d/dx f(v, x) = (f(v - 1, x) -+ f(v + 1, x)) / 2 (minus for J and Y, plus for I)."""
    def partial(v, x, out):
        lo, hi = f(_shift(v, -1), x), f(_shift(v, 1), x)
        return mul(_half(x), add(lo, hi) if plus else sub(lo, hi))
    return partial


def _ive_dx(v, x, out):
    # d/dx [I_v(x) exp(-|x|)] = (ive(v-1, x) + ive(v+1, x)) / 2 - sign(x) ive(v, x)
    return sub(_first_kind_recurrence(lambda w, z: ive(w, z), True)(v, x, out), mul(sign(x), out))


jv_p = define("bessel_jv", "jv", no_partial("jv", 0, "v", _ORDER_WHY),
              _first_kind_recurrence(lambda v, x: jv(v, x), False))
yv_p = define("bessel_yv", "yv", no_partial("yv", 0, "v", _ORDER_WHY),
              _first_kind_recurrence(lambda v, x: yv(v, x), False))
yn_p = define("bessel_yn", "yn", no_partial("yn", 0, "n", _INT_ORDER_WHY),
              _first_kind_recurrence(lambda n, x: yn(n, x), False))
iv_p = define("bessel_iv", "iv", no_partial("iv", 0, "v", _ORDER_WHY),
              _first_kind_recurrence(lambda v, x: iv(v, x), True))
ive_p = define("bessel_ive", "ive", no_partial("ive", 0, "v", _ORDER_WHY), _ive_dx)


def _two(x):
    return const(x, 2.0)


j0_p = define("bessel_j0", "j0", lambda x, out: neg(j1(x)))
j1_p = define("bessel_j1", "j1", lambda x, out: mul(_half(x), sub(j0(x), jv(_two(x), x))))
y0_p = define("bessel_y0", "y0", lambda x, out: neg(y1(x)))
y1_p = define("bessel_y1", "y1", lambda x, out: mul(_half(x), sub(y0(x), yn(_two(x), x))))
i0_p = define("bessel_i0", "i0", lambda x, out: i1(x))
i1_p = define("bessel_i1", "i1", lambda x, out: mul(_half(x), add(i0(x), iv(_two(x), x))))
i0e_p = define("bessel_i0e", "i0e", lambda x, out: sub(i1e(x), mul(sign(x), out)))
i1e_p = define("bessel_i1e", "i1e",
               lambda x, out: sub(mul(_half(x), add(i0e(x), ive(_two(x), x))), mul(sign(x), out)))


def jv(v: Any, x: Any) -> Any:
    """The Bessel function of the first kind J_v(x), real order v (NaN for x < 0 and v not an
    integer); differentiable in x."""
    return jv_p.bind(v, x)


def yv(v: Any, x: Any) -> Any:
    """The Bessel function of the second kind Y_v(x), real order v, x > 0; differentiable in x."""
    return yv_p.bind(v, x)


def yn(n: Any, x: Any) -> Any:
    """The Bessel function of the second kind Y_n(x) of integer order n (in x's float dtype)."""
    return yn_p.bind(n, x)


def iv(v: Any, x: Any) -> Any:
    """The modified Bessel function of the first kind I_v(x), real order v; differentiable in x."""
    return iv_p.bind(v, x)


def ive(v: Any, x: Any) -> Any:
    """I_v(x) * exp(-|x|), without overflow for large |x|; differentiable in x (a kink at 0)."""
    return ive_p.bind(v, x)


def j0(x: Any) -> Any:
    """J_0(x)."""
    return j0_p.bind(x)


def j1(x: Any) -> Any:
    """J_1(x)."""
    return j1_p.bind(x)


def y0(x: Any) -> Any:
    """Y_0(x), for x > 0 (-inf at 0)."""
    return y0_p.bind(x)


def y1(x: Any) -> Any:
    """Y_1(x), for x > 0 (-inf at 0)."""
    return y1_p.bind(x)


def i0(x: Any) -> Any:
    """I_0(x)."""
    return i0_p.bind(x)


def i1(x: Any) -> Any:
    """I_1(x)."""
    return i1_p.bind(x)


def i0e(x: Any) -> Any:
    """I_0(x) * exp(-|x|) (a kink at 0)."""
    return i0e_p.bind(x)


def i1e(x: Any) -> Any:
    """I_1(x) * exp(-|x|)."""
    return i1e_p.bind(x)
