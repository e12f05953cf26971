"""Modified Bessel functions of the second kind (k0, k1, kv and the scaled k0e, k1e, kve) and
the Airy functions Ai, Ai', Bi, Bi', evaluated by scipy.special.

Derivatives in x are the functions' own identities, written with these same primitives, so
every order is exact: K_0' = -K_1, K_1' = -K_0 - K_1 / x, K_v' = -(K_{v-1} + K_{v+1}) / 2, the
scaled forms K_v(x) e^x adding themselves (k0e' = k0e - k1e); Ai'' = x Ai and Bi'' = x Bi. A
derivative in the order v has no closed form: it raises DifferentiationError."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..core.avals import float_dtype
from ._special import define, no_partial, scipy_special
from .elementwise import add, const, div, mul, neg, sub

_ORDER_WHY = "the derivative of a Bessel function in its order has no closed form"


def _half_sum(f, v, x):
    """(f(v - 1, x) + f(v + 1, x)) / 2."""
    return mul(const(x, 0.5), add(f(sub(v, const(v, 1.0)), x), f(add(v, const(v, 1.0)), x)))


k0_p = define("bessel_k0", "k0", lambda x, out: neg(k1(x)))
k1_p = define("bessel_k1", "k1", lambda x, out: neg(add(k0(x), div(out, x))))
k0e_p = define("bessel_k0e", "k0e", lambda x, out: sub(out, k1e(x)))
k1e_p = define("bessel_k1e", "k1e", lambda x, out: sub(sub(out, k0e(x)), div(out, x)))
kv_p = define("bessel_kv", "kv", no_partial("kv", 0, "v", _ORDER_WHY), lambda v, x, out: neg(_half_sum(kv, v, x)))
kve_p = define("bessel_kve", "kve", no_partial("kve", 0, "v", _ORDER_WHY),
               lambda v, x, out: sub(out, _half_sum(kve, v, x)))


def _airy_part(k: int):
    """The impl of the k-th result of scipy.special.airy (Ai, Ai', Bi, Bi')."""
    def impl(x, xp):
        with np.errstate(all="ignore"):
            if hasattr(scipy_special(xp), "airy"):
                out = scipy_special(xp).airy(x)[k]
            else:  # cupyx.scipy.special lacks it: the host computes it
                out = xp.asarray(scipy_special(np).airy(xp.asnumpy(x))[k])
        dtype = float_dtype(x.dtype)
        return out if out.dtype == dtype else out.astype(dtype)
    impl.__name__ = ("ai", "aip", "bi", "bip")[k] + "_impl"
    return impl


ai_p = define("airy_ai", _airy_part(0), lambda x, out: aip(x))
aip_p = define("airy_aip", _airy_part(1), lambda x, out: mul(x, ai(x)))
bi_p = define("airy_bi", _airy_part(2), lambda x, out: bip(x))
bip_p = define("airy_bip", _airy_part(3), lambda x, out: mul(x, bi(x)))


def k0(x: Any) -> Any:
    """K_0(x), x > 0 (inf at 0, NaN below)."""
    return k0_p.bind(x)


def k1(x: Any) -> Any:
    """K_1(x), x > 0."""
    return k1_p.bind(x)


def k0e(x: Any) -> Any:
    """K_0(x) * exp(x), x > 0."""
    return k0e_p.bind(x)


def k1e(x: Any) -> Any:
    """K_1(x) * exp(x), x > 0."""
    return k1e_p.bind(x)


def kv(v: Any, x: Any) -> Any:
    """K_v(x) of real order v, x > 0; differentiable in x."""
    return kv_p.bind(v, x)


def kve(v: Any, x: Any) -> Any:
    """K_v(x) * exp(x), x > 0; differentiable in x."""
    return kve_p.bind(v, x)


def ai(x: Any) -> Any:
    """The Airy function Ai(x)."""
    return ai_p.bind(x)


def aip(x: Any) -> Any:
    """Ai'(x)."""
    return aip_p.bind(x)


def bi(x: Any) -> Any:
    """The Airy function Bi(x)."""
    return bi_p.bind(x)


def bip(x: Any) -> Any:
    """Bi'(x)."""
    return bip_p.bind(x)
