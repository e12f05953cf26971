"""Elementwise primitives that take floats apart or build them from parts: signbit, the
exponent of frexp, ldexp (x * 2 ** n), and the Maclaurin coefficients of sin(x) / x that make
sinc exact at 0 to every order. fgrad.numpy composes copysign, frexp, ldexp and sinc from them.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..core.avals import ShapedArray
from ..core.primitive import Primitive
from ..core.rules import (
    bool_result,
    def_linear,
    def_nondiff,
    elementwise_shape,
    same_dtype,
)
from ._batching import def_vectorized
from .elementwise import def_elementwise, mul, sum_to_shape

# --- signbit: is the sign bit set (also for -0.0 and NaNs with the bit set), as np.signbit --------

signbit_p = Primitive("signbit")
def_elementwise(signbit_p, "signbit", bool_result)
def_nondiff(signbit_p)


def signbit(x: Any) -> Any:
    """Element-wise: whether the sign bit of `x` is set (True for -0.0, which x < 0 misses)."""
    return signbit_p.bind(x)


# --- the binary exponent frexp returns: x == m * 2 ** e with 0.5 <= |m| < 1 (e = 0 for 0, inf, NaN) --

frexp_exponent_p = Primitive("frexp_exponent")
def_elementwise(frexp_exponent_p, lambda x, *, xp: xp.frexp(x)[1].astype(np.int32, copy=False),
                lambda *avals: np.dtype(np.int32))  # NumPy's frexp gives C ints
def_nondiff(frexp_exponent_p)


def frexp_exponent(x: Any) -> Any:
    """Element-wise int32 exponent e of x == m * 2 ** e, 0.5 <= |m| < 1 (0 for 0, inf and NaN);
    piecewise constant, so it has no derivative."""
    return frexp_exponent_p.bind(x)


# --- ldexp: x * 2 ** n for an integer n, exact (no rounding unless the result over/underflows) --

ldexp_p = Primitive("ldexp")
ldexp_p.def_impl(lambda x, n, *, xp: xp.ldexp(x, n).astype(x.dtype, copy=False))
ldexp_p.def_abstract_eval(lambda x, n: ShapedArray(elementwise_shape("ldexp", (x, n)), same_dtype(x, n)))
def_vectorized(ldexp_p)
# Linear in x (a scaling by 2 ** n, its own transpose); n is an integer and only selects the scale.
# A 0-d x beside a full-shape n is summed back to its shape.
def_linear(ldexp_p, lambda ct, x_aval, n: sum_to_shape(ldexp(ct, n), x_aval.shape))


def ldexp(x: Any, n: Any) -> Any:
    """Element-wise x * 2 ** n, for a float x and an integer n (shapes equal, or one 0-d);
    differentiable in x (the derivative is 2 ** n)."""
    return ldexp_p.bind(x, n)


# --- the Maclaurin coefficients of sin(x) / x -----------------------------------------------------
# sinc = sin(pi x) / (pi x) needs a separate branch at 0, and the derivatives of a select between
# branches are those of the branch taken: a constant 1 there would make every derivative at 0 zero.
# This primitive is that branch as a function of x whose k-th derivative is the k-th Taylor
# coefficient times k!, i.e. d^k/dx^k (sin x / x) at 0: (-1)^(k/2) / (k + 1) for even k, 0 for odd
# k. Its value is that constant (broadcast like x); its derivative is the primitive with k + 1, so
# every order is exact at 0 (JAX's _sinc_maclaurin, as one primitive).

sinc_maclaurin_p = Primitive("sinc_maclaurin")


def _maclaurin_coefficient(k: int) -> float:
    return 0.0 if k % 2 else (-1.0) ** (k // 2) / (k + 1)


sinc_maclaurin_p.def_impl(
    lambda x, *, xp, k: xp.full(x.shape, _maclaurin_coefficient(k), dtype=x.dtype))
sinc_maclaurin_p.def_abstract_eval(lambda x, *, k: ShapedArray(x.shape, x.dtype))
def_vectorized(sinc_maclaurin_p)


def sinc_maclaurin(x: Any, k: int) -> Any:
    """d^k/dx^k of sin(x) / x at x = 0, shaped like `x` (float); its derivative in x is
    sinc_maclaurin(x, k + 1), so it stands in for sin(x) / x at 0 under every derivative order."""
    return sinc_maclaurin_p.bind(x, k=int(k))


def _sinc_maclaurin_jvp(primals, tangents, *, k):
    (x,), (t,) = primals, tangents
    return sinc_maclaurin(x, k), None if t is None else mul(sinc_maclaurin(x, k + 1), t)


def _sinc_maclaurin_vjp(needs, ct, out, x, *, k):
    return [mul(ct, sinc_maclaurin(x, k + 1)) if needs[0] else None]


sinc_maclaurin_p.def_jvp(_sinc_maclaurin_jvp)
sinc_maclaurin_p.def_vjp(_sinc_maclaurin_vjp)
# the rule binds the primitive on x again (so that its own derivative continues the series); the
# output is never read
sinc_maclaurin_p.def_saves(inputs=True, output=False)

__all__ = ["signbit", "frexp_exponent", "ldexp", "sinc_maclaurin", "signbit_p", "frexp_exponent_p", "ldexp_p",
           "sinc_maclaurin_p"]
