"""fgrad.scipy.special's orthogonal polynomials of integer degree n: eval_chebyt, eval_chebyu,
eval_sh_chebyt, eval_sh_chebyu, eval_legendre, eval_gegenbauer, eval_hermite, eval_hermitenorm,
eval_laguerre, eval_genlaguerre (SciPy's names and argument order). Derivatives in x of every
order; a derivative in n (an integer) or in alpha raises DifferentiationError."""
from __future__ import annotations

from typing import Any

from ..ops import special_orthopoly as so
from ._args import float_args

__all__ = ["eval_chebyt", "eval_chebyu", "eval_sh_chebyt", "eval_sh_chebyu", "eval_legendre", "eval_gegenbauer",
           "eval_hermite", "eval_hermitenorm", "eval_laguerre", "eval_genlaguerre"]


def eval_chebyt(n: Any, x: Any) -> Any:
    """The Chebyshev polynomial of the first kind T_n(x) (cos(n t) at x = cos t); T_n' = n U_{n-1}."""
    return so.eval_chebyt(*float_args("eval_chebyt", n, x))


def eval_chebyu(n: Any, x: Any) -> Any:
    """The Chebyshev polynomial of the second kind U_n(x) (sin((n + 1) t) / sin t at x = cos t)."""
    return so.eval_chebyu(*float_args("eval_chebyu", n, x))


def eval_sh_chebyt(n: Any, x: Any) -> Any:
    """The shifted Chebyshev polynomial of the first kind T_n(2x - 1), orthogonal on [0, 1]."""
    return so.eval_sh_chebyt(*float_args("eval_sh_chebyt", n, x))


def eval_sh_chebyu(n: Any, x: Any) -> Any:
    """The shifted Chebyshev polynomial of the second kind U_n(2x - 1)."""
    return so.eval_sh_chebyu(*float_args("eval_sh_chebyu", n, x))


def eval_legendre(n: Any, x: Any) -> Any:
    """The Legendre polynomial P_n(x)."""
    return so.eval_legendre(*float_args("eval_legendre", n, x))


def eval_gegenbauer(n: Any, alpha: Any, x: Any) -> Any:
    """The Gegenbauer (ultraspherical) polynomial C^(alpha)_n(x); differentiable in x."""
    return so.eval_gegenbauer(*float_args("eval_gegenbauer", n, alpha, x))


def eval_hermite(n: Any, x: Any) -> Any:
    """The physicists' Hermite polynomial H_n(x); H_n' = 2n H_{n-1}."""
    return so.eval_hermite(*float_args("eval_hermite", n, x))


def eval_hermitenorm(n: Any, x: Any) -> Any:
    """The probabilists' Hermite polynomial He_n(x); He_n' = n He_{n-1}."""
    return so.eval_hermitenorm(*float_args("eval_hermitenorm", n, x))


def eval_laguerre(n: Any, x: Any) -> Any:
    """The Laguerre polynomial L_n(x)."""
    return so.eval_laguerre(*float_args("eval_laguerre", n, x))


def eval_genlaguerre(n: Any, alpha: Any, x: Any) -> Any:
    """The generalized Laguerre polynomial L^(alpha)_n(x); differentiable in x."""
    return so.eval_genlaguerre(*float_args("eval_genlaguerre", n, alpha, x))
