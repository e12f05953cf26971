"""torch.special on fgrad.scipy.special: PyTorch's names and arguments (input, dim, eps),
integer inputs computed in the default float dtype (float32) as PyTorch does. The functions
and their derivatives are fgrad.scipy.special's; each is one torch op over values
(fgrad.torch._tensor._boundary.call) named as PyTorch's grad_fn (ErfinvBackward0,
LgammaBackward0, ...), ndtr PyTorch's composition. As in PyTorch, the Bessel and Airy
functions and the orthogonal polynomials have no gradient; the polynomials take their degree
n truncated to an integer (0 for n < 0), as PyTorch's kernels do."""
from __future__ import annotations

import math

import numpy as np

from .. import numpy as fnp
from ..core.errors import FgradNotImplementedError, FgradTypeError
from ..custom import custom_vjp
from ..lax import stop_gradient
from ..extend.numpy import cast, dtype_of
from ..scipy import special as fss
from ._tensor._boundary import call
from ._tensor._policy import TORCH as P
from ._tensor._ops import (
    _operand,
    exp2,
    expm1,
    log1p,
    _round_values,
    log_softmax,
    logsumexp,
    softmax,
)
from ._tensor._ops_math import logit, xlogy
from ._tensor.grad_mode import is_grad_enabled
from ._tensor.tensor import Tensor, _make

_SQRT1_2 = math.sqrt(0.5)


def _as_float(v):
    """v in the default float dtype when it is an integer or bool value (float32)."""
    return cast(v, P.float_dtype(dtype_of(v)))


def _unary(fn, name: str, grad_fn: str | None):
    """torch.special.`name`: one op computing fn on the float input, whose node is named
    `grad_fn`; None: PyTorch gives the function no derivative (the Bessel functions), so
    the result requires no grad."""
    if grad_fn is None:
        def impl(v):
            return fn(stop_gradient(_as_float(v)))
    else:
        def impl(v):
            return fn(_as_float(v))

    def op(input):
        if not isinstance(input, Tensor):  # arrays and numbers: computed as they are, as before
            return impl(input)
        return call(grad_fn or "NotDifferentiable", impl, (input,))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"torch.special.{name}: fgrad.scipy.special.{fn.__name__} of input (integers as float32)."
    return op


def _on_device_of(x, other: Tensor, dt):
    """x as it is when a Tensor; a Python number as a 0-d tensor of dtype dt on other's device
    (a GPU operand's computation cannot mix in a host array)."""
    if isinstance(x, Tensor) or other.device.type == "cpu":
        return x
    return _make(np.asarray(x, dt)).to(other.device)


def _binary(fn, name: str, grad_fn: str, numbered: bool):
    """torch.special.`name`(input, other): one op computing fn on the promoted float
    operands, its node named grad_fn + "Backward0" ("Backward1" where input is a number,
    "Backward2" where other is, when `numbered`: PyTorch's Scalar overloads)."""
    def op(input, other):
        a, b = _operand(input), _operand(other)
        if not isinstance(a, Tensor) and not isinstance(b, Tensor):
            raise FgradTypeError(f"special.{name}(): at least one of input and other must be a Tensor")
        dt = P.float_dtype(P.result_dtype(a, b))
        k = 1 if numbered and not isinstance(a, Tensor) else 2 if numbered and not isinstance(b, Tensor) else 0
        a, b = _on_device_of(a, b, dt), _on_device_of(b, a, dt)
        return call(f"{grad_fn}Backward{k}", lambda x, y: fn(cast(x, dt), cast(y, dt)), (a, b))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"torch.special.{name}: fgrad.scipy.special.{fn.__name__} of the operands (promoted)."
    return op


# torch name: (fgrad.scipy.special function, PyTorch's grad_fn; None: not differentiable)
_UNARY = {"expit": (fss.expit, "SigmoidBackward0"), "erf": (fss.erf, "ErfBackward0"),
          "erfc": (fss.erfc, "ErfcBackward0"), "erfcx": (fss.erfcx, "SpecialErfcxBackward0"),
          "erfinv": (fss.erfinv, "ErfinvBackward0"), "gammaln": (fss.gammaln, "LgammaBackward0"),
          "digamma": (fss.digamma, "DigammaBackward0"), "psi": (fss.digamma, "DigammaBackward0"),
          "i0": (fss.i0, "I0Backward0"), "i0e": (fss.i0e, "SpecialI0EBackward0"),
          "i1": (fss.i1, "SpecialI1Backward0"), "i1e": (fss.i1e, "SpecialI1EBackward0"),
          "ndtri": (fss.ndtri, "SpecialNdtriBackward0"), "log_ndtr": (fss.log_ndtr, "SpecialLogNdtrBackward0"),
          "entr": (fss.entr, "SpecialEntrBackward0"), "bessel_j0": (fss.j0, None), "bessel_j1": (fss.j1, None),
          "bessel_y0": (fss.y0, None), "bessel_y1": (fss.y1, None),
          "modified_bessel_i0": (fss.i0, None), "modified_bessel_i1": (fss.i1, None),
          "modified_bessel_k0": (fss.k0, None), "modified_bessel_k1": (fss.k1, None),
          "scaled_modified_bessel_k0": (fss.k0e, None), "scaled_modified_bessel_k1": (fss.k1e, None),
          "airy_ai": (lambda v: fss.airy(v)[0], None), "sinc": (fnp.sinc, "SincBackward0")}
globals().update({name: _unary(fn, name, g) for name, (fn, g) in _UNARY.items()})
_BINARY = {"xlog1py": (fss.xlog1py, "SpecialXlog1Py", True), "gammainc": (fss.gammainc, "Igamma", False),
           "gammaincc": (fss.gammaincc, "Igammac", False)}
globals().update({name: _binary(fn, name, g, k) for name, (fn, g, k) in _BINARY.items()})


@custom_vjp
def _zeta_no_x_derivative(x, q):
    """zeta(x, q) whose backward raises: PyTorch defines no derivative in x, and its backward
    raises as soon as x requires grad (whatever q does)."""
    return fss.zeta(x, q)


def _zeta_fwd(x, q):
    return _zeta_no_x_derivative(x, q), None


def _zeta_bwd(res, ct):
    raise FgradNotImplementedError("the derivative for 'zeta' is not implemented (torch.special.zeta has none in "
                                   "its first argument x; pass x without requires_grad, or detach it)")


_zeta_no_x_derivative.defvjp(_zeta_fwd, _zeta_bwd)
_zeta_q = _binary(lambda x, q: fss.zeta(stop_gradient(x), q), "zeta", "SpecialZeta", True)
_zeta_x = _binary(_zeta_no_x_derivative, "zeta", "SpecialZeta", True)


def zeta(input: Tensor, other: Tensor) -> Tensor:
    """The Hurwitz zeta function sum_k (k + other) ** -input, differentiable in other
    (d/dq = -x zeta(x + 1, q)); its backward raises where input requires grad, as PyTorch's.

    Args:
        input: the exponent x (a tensor or a number).
        other: the shift q (a tensor or a number).

    Returns:
        zeta(input, other), of the promoted float dtype.
    """
    x_needs_grad = isinstance(input, Tensor) and input.requires_grad and is_grad_enabled()
    return (_zeta_x if x_needs_grad else _zeta_q)(input, other)


def ndtr(input: Tensor) -> Tensor:
    """The standard normal CDF, composed as PyTorch's: (1 + erf(input * sqrt(1/2))) * 0.5."""
    if not isinstance(input, Tensor):  # arrays and numbers: computed as they are
        return fss.ndtr(_as_float(input))
    scaled = call("MulBackward1", lambda v: _as_float(v) * _SQRT1_2, (input,))
    shifted = call("AddBackward1", lambda v: v + 1, (erf(scaled),))  # noqa: F821  (erf: from _UNARY)
    return call("MulBackward1", lambda v: v * 0.5, (shifted,))


def round(input: Tensor, *, decimals: int = 0) -> Tensor:
    """Round half to even (to `decimals` places), with a zero gradient: torch.special.round is
    the `decimals` overload of torch.round for every `decimals` (RoundBackward1); integer
    tensors come back as they are."""
    if input._value.dtype.kind not in "fc":
        return input
    return call("RoundBackward1", _round_values(decimals), (input,))


def polygamma(n: int, input: Tensor) -> Tensor:
    """The n-th derivative of the digamma function at input."""
    if not isinstance(input, Tensor):  # arrays and numbers: computed as they are
        return fss.polygamma(n, _as_float(input))
    return call("PolygammaBackward0", lambda v: fss.polygamma(n, _as_float(v)), (input,))


def multigammaln(input: Tensor, p: int) -> Tensor:
    """The log of the multivariate gamma function of dimension p."""
    if not isinstance(input, Tensor):  # arrays and numbers: computed as they are
        return fss.multigammaln(_as_float(input), p)
    return call("MvlgammaBackward0", lambda v: fss.multigammaln(_as_float(v), p), (input,))


def spherical_bessel_j0(input: Tensor) -> Tensor:
    """The spherical Bessel function of the first kind of order 0, sin(x) / x (1 at 0); as
    PyTorch's, without a gradient.

    Args:
        input: a tensor (integers computed as float32).

    Returns:
        j0(input), requiring no grad.
    """
    def fn(v):
        v = stop_gradient(_as_float(v))
        safe = fnp.where(fnp.equal(v, 0), fnp.ones_like(v), v)
        return fnp.where(fnp.equal(v, 0), fnp.ones_like(v), fnp.sin(safe) / safe)
    if not isinstance(input, Tensor):
        return fn(input)
    return call("NotDifferentiable", fn, (input,))


def _degree_poly(name: str, values, shifted: bool):
    """torch.special.`name`(input, n): values(n, x) at whole degrees n >= 0 (n truncated toward
    zero; 0 where n < 0), at 2x - 1 when `shifted`; no gradient, as PyTorch's."""
    def fn(x, n, dt):
        x, n = stop_gradient(cast(x, dt)), stop_gradient(cast(n, dt))
        k = fnp.trunc(n)
        x = 2 * x - 1 if shifted else x
        whole = fnp.maximum(k, 0)
        return fnp.where(fnp.less(k, 0), fnp.zeros_like(x * k), values(whole, x))

    def op(input, n):
        a, b = _operand(input), _operand(n)
        if not isinstance(a, Tensor) and not isinstance(b, Tensor):
            raise FgradTypeError(f"special.{name}(): at least one of input and n must be a Tensor")
        dt = P.float_dtype(P.result_dtype(a, b))
        a, b = _on_device_of(a, b, dt), _on_device_of(b, a, dt)
        return call("NotDifferentiable", lambda x, k: fn(x, k, dt), (a, b))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"torch.special.{name}(input, n): the polynomial of degree n (truncated to an integer; 0 for "
                  f"n < 0) at {'2 * input - 1' if shifted else 'input'}, without a gradient.\n\n"
                  "Args:\n    input: the points (a tensor or a number).\n"
                  "    n: the degrees (a tensor or a number).\n\n"
                  "Returns:\n    A tensor of the promoted float dtype, requiring no grad.")
    return op


def _cheb_v(n, x):
    """The Chebyshev polynomial of the third kind V_n = U_n - U_{n-1} (V_0 = 1)."""
    lower = fss.eval_chebyu(fnp.maximum(n - 1, 0), x)
    return fss.eval_chebyu(n, x) - fnp.where(fnp.equal(n, 0), fnp.zeros_like(x), lower)


def _cheb_w(n, x):
    """The Chebyshev polynomial of the fourth kind W_n = U_n + U_{n-1} (W_0 = 1)."""
    lower = fss.eval_chebyu(fnp.maximum(n - 1, 0), x)
    return fss.eval_chebyu(n, x) + fnp.where(fnp.equal(n, 0), fnp.zeros_like(x), lower)


_POLYNOMIALS = {"chebyshev_polynomial_t": (fss.eval_chebyt, False), "chebyshev_polynomial_u": (fss.eval_chebyu, False),
                "chebyshev_polynomial_v": (_cheb_v, False), "chebyshev_polynomial_w": (_cheb_w, False),
                "shifted_chebyshev_polynomial_t": (fss.eval_chebyt, True),
                "shifted_chebyshev_polynomial_u": (fss.eval_chebyu, True),
                "shifted_chebyshev_polynomial_v": (_cheb_v, True), "shifted_chebyshev_polynomial_w": (_cheb_w, True),
                "hermite_polynomial_h": (fss.eval_hermite, False),
                "hermite_polynomial_he": (fss.eval_hermitenorm, False),
                "laguerre_polynomial_l": (fss.eval_laguerre, False),
                "legendre_polynomial_p": (fss.eval_legendre, False)}
globals().update({name: _degree_poly(name, f, sh) for name, (f, sh) in _POLYNOMIALS.items()})


__all__ = ["expit", "erf", "erfc", "erfcx", "erfinv", "gammaln", "digamma", "psi", "i0", "i0e", "i1", "i1e", "ndtr",
           "ndtri", "log_ndtr", "entr", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "xlog1py", "gammainc",
           "gammaincc", "polygamma", "multigammaln", "logit", "xlogy", "logsumexp", "softmax", "log_softmax",
           "exp2", "expm1", "log1p", "round", "airy_ai", "modified_bessel_i0", "modified_bessel_i1",
           "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
           "sinc", "spherical_bessel_j0", "zeta", *_POLYNOMIALS]

# The names installed from tables above, declared for static checkers (pyright, mypy); the stub
# is generated by tools/gen_type_stubs.py and never imported at run time.
import typing as _typing  # noqa: E402
if _typing.TYPE_CHECKING:
    from ._special_names import *  # noqa: F401,F403
