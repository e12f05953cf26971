"""fgrad.scipy.special: SciPy's special functions, differentiable to any order.

The gamma family, incomplete gamma and beta functions, error-function inverses and the normal
distribution's functions, Bessel and Airy functions, the orthogonal polynomials and the x log y
helpers live in _special_*.py (by family) over the primitives of fgrad/ops/special_*.py.
Derivatives that have no closed form -- in the shape parameters of betainc, gammainc, gammaincc
and stdtr, in the order of a Bessel function or a polynomial's degree -- raise
DifferentiationError naming the argument.

logsumexp, softmax and log_softmax subtract the (gradient-stopped) maximum, so they are
finite, with finite derivatives, for inputs of any magnitude."""
from __future__ import annotations

from ..core.avals import float_dtype
from ..numpy._reductions import normalize_axes
from ..numpy._util import as_value, aval_of, broadcast_to, cast, dtype_of, promote
from ..ops import elementwise as ew
from ..ops import reduce as red
from ..ops import shape as sh
from ._special_bessel import *  # noqa: F401,F403
from ._special_bessel import __all__ as _bessel
from ._special_erf import *  # noqa: F401,F403
from ._special_erf import __all__ as _erf
from ._special_gamma import *  # noqa: F401,F403
from ._special_gamma import __all__ as _gamma
from ._special_expint import *  # noqa: F401,F403
from ._special_expint import __all__ as _expint
from ._special_hyper import *  # noqa: F401,F403
from ._special_hyper import __all__ as _hyper
from ._special_log import *  # noqa: F401,F403
from ._special_log import __all__ as _log
from ._special_kairy import *  # noqa: F401,F403
from ._special_kairy import __all__ as _kairy
from ._special_orthopoly import *  # noqa: F401,F403
from ._special_orthopoly import __all__ as _orthopoly

__all__ = ["logsumexp", "softmax", "log_softmax", "erf", "expit", "logit", *_gamma, *_erf, *_bessel, *_log,
           *_expint, *_hyper, *_kairy, *_orthopoly]


def _float(x, name):
    x = as_value(x, name)
    return cast(x, float_dtype(dtype_of(x)))


def erf(x):
    """The error function, 2/sqrt(pi) * integral_0^x exp(-t^2) dt."""
    return ew.erf(_float(x, "erf"))


def expit(x):
    """The logistic sigmoid 1 / (1 + exp(-x)), computed without overflow."""
    return ew.logistic(_float(x, "expit"))


def logit(p):
    """log(p / (1 - p)), the inverse of expit."""
    p = _float(p, "logit")
    return ew.sub(ew.log(p), ew.log1p(ew.neg(p)))


def _keepdims_shape(shape, axes):
    return tuple(1 if i in axes else d for i, d in enumerate(shape))


def _shifted_max(a, axes):
    """max over `axes` (kept as size-1 axes), gradient-stopped, and 0 where it is not finite
    (all -inf, or inf) so that a - max never makes inf - inf."""
    shape = aval_of(a).shape
    m = red.reduce_max(a, axes) if axes else a
    m = ew.stop_gradient(m)
    m = ew.select(ew.isfinite(m), m, ew.const(m, 0.0))
    return sh.reshape(m, _keepdims_shape(shape, axes))


def _expand(x, shape):
    """Broadcast x (shape with size-1 reduced axes) back to `shape`."""
    return broadcast_to(x, shape)


def logsumexp(a, axis=None, b=None, keepdims: bool = False, return_sign: bool = False):
    """log(sum(b * exp(a))) over `axis` (all axes by default), computed stably.
    With return_sign=True, returns (log|sum|, sign(sum)) as SciPy does."""
    a = _float(a, "logsumexp")
    if b is not None:
        a, b = promote("logsumexp", a, b)
        a = cast(a, float_dtype(dtype_of(a)))
        b = cast(b, dtype_of(a))
        if aval_of(b).shape == () and aval_of(a).shape != ():
            b = broadcast_to(b, aval_of(a).shape)
    shape = aval_of(a).shape
    axes = normalize_axes(axis, len(shape), "logsumexp")
    m = _shifted_max(a, axes)
    e = ew.exp(ew.sub(a, _expand(m, shape)))
    if b is not None:
        e = ew.mul(b, e)
    s = red.reduce_sum(e, axes)
    m = sh.reshape(m, tuple(d for i, d in enumerate(aval_of(m).shape) if i not in axes))
    if return_sign:
        sign = ew.sign(s)
        out = ew.add(ew.log(ew.abs(s)), m)
    else:
        out = ew.add(ew.log(s), m)
    if keepdims:
        out = sh.reshape(out, _keepdims_shape(shape, axes))
        if return_sign:
            sign = sh.reshape(sign, _keepdims_shape(shape, axes))
    return (out, sign) if return_sign else out


def softmax(x, axis=None):
    """exp(x) / sum(exp(x)) over `axis` (all axes by default, as in SciPy)."""
    x = _float(x, "softmax")
    shape = aval_of(x).shape
    axes = normalize_axes(axis, len(shape), "softmax")
    e = ew.exp(ew.sub(x, _expand(_shifted_max(x, axes), shape)))
    s = sh.reshape(red.reduce_sum(e, axes), _keepdims_shape(shape, axes))
    return ew.div(e, _expand(s, shape))


def log_softmax(x, axis=None):
    """x - logsumexp(x) over `axis` (all axes by default, as in SciPy)."""
    x = _float(x, "log_softmax")
    shape = aval_of(x).shape
    axes = normalize_axes(axis, len(shape), "log_softmax")
    return ew.sub(x, _expand(logsumexp(x, axis=axes, keepdims=True), shape))
