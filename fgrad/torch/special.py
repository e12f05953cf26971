"""torch.special on fgrad.scipy.special: PyTorch's names and arguments (input, dim, eps),
integer inputs computed in the default float dtype (float32) as PyTorch does. The functions
and their derivatives are fgrad.scipy.special's."""
from __future__ import annotations

from ..core.errors import FgradTypeError
from ..numpy._policy import TORCH as P
from ..numpy._util import cast
from ..scipy import special as fss
from ._tensor._ops import (
    _float,
    _operand,
    exp2,
    expm1,
    log1p,
    log_softmax,
    logsumexp,
    round,
    softmax,
)
from ._tensor._ops_math import logit, xlogy
from ._tensor.tensor import Tensor


def _unary(fn, name: str):
    def op(input):
        return fn(_float(input))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"torch.special.{name}: fgrad.scipy.special.{fn.__name__} of input (integers as float32)."
    return op


def _binary(fn, name: str):
    def op(input, other):
        a, b = _operand(input), _operand(other)
        if not isinstance(a, Tensor) and not isinstance(b, Tensor):
            raise FgradTypeError(f"special.{name}(): at least one of input and other must be a Tensor")
        dt = P.float_dtype(P.result_dtype(a, b))
        return fn(cast(a, dt), cast(b, dt))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"torch.special.{name}: fgrad.scipy.special.{fn.__name__} of the operands (promoted)."
    return op


_UNARY = {"expit": fss.expit, "erf": fss.erf, "erfc": fss.erfc, "erfcx": fss.erfcx, "erfinv": fss.erfinv,
          "gammaln": fss.gammaln, "digamma": fss.digamma, "psi": fss.digamma, "i0": fss.i0, "i0e": fss.i0e,
          "i1": fss.i1, "i1e": fss.i1e, "ndtr": fss.ndtr, "ndtri": fss.ndtri, "log_ndtr": fss.log_ndtr,
          "entr": fss.entr, "bessel_j0": fss.j0, "bessel_j1": fss.j1, "bessel_y0": fss.y0,
          "bessel_y1": fss.y1}
globals().update({name: _unary(fn, name) for name, fn in _UNARY.items()})
_BINARY = {"xlog1py": fss.xlog1py, "gammainc": fss.gammainc, "gammaincc": fss.gammaincc}
globals().update({name: _binary(fn, name) for name, fn in _BINARY.items()})


def polygamma(n: int, input: Tensor) -> Tensor:
    """The n-th derivative of the digamma function at input."""
    return fss.polygamma(n, _float(input))


def multigammaln(input: Tensor, p: int) -> Tensor:
    """The log of the multivariate gamma function of dimension p."""
    return fss.multigammaln(_float(input), p)


__all__ = ["expit", "erf", "erfc", "erfcx", "erfinv", "gammaln", "digamma", "psi", "i0", "i0e", "i1", "i1e", "ndtr",
           "ndtri", "log_ndtr", "entr", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "xlog1py", "gammainc",
           "gammaincc", "polygamma", "multigammaln", "logit", "xlogy", "logsumexp", "softmax", "log_softmax",
           "exp2", "expm1", "log1p", "round"]
