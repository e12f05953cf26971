"""fgrad.scipy.special's logarithmic helpers: xlogy, xlog1py, entr, rel_entr, kl_div and
log_expit, with SciPy's values at the edges of their domains (0 * log 0 = 0, -inf or inf
outside) and derivatives that are exact there as well (see fgrad/ops/special_xlogy.py)."""
from __future__ import annotations

from typing import Any

from .. import numpy as fnp
from ..ops import elementwise as ew
from ..ops import special_xlogy as sx
from ._args import float_args

__all__ = ["xlogy", "xlog1py", "entr", "rel_entr", "kl_div", "log_expit"]


def xlogy(x: Any, y: Any) -> Any:
    """x * log(y), 0 where x == 0 (even at y == 0); NaN in y propagates."""
    x, y = float_args("xlogy", x, y)
    return sx.xlogy(x, y)


def xlog1py(x: Any, y: Any) -> Any:
    """x * log1p(y), 0 where x == 0 (even at y == -1); NaN in y propagates."""
    x, y = float_args("xlog1py", x, y)
    return sx.xlog1py(x, y)


def entr(x: Any) -> Any:
    """-x log(x) for x > 0, 0 at 0, -inf below; the derivative -(log(x) + 1) is +inf at 0."""
    (x,) = float_args("entr", x)
    negative = fnp.less(x, 0.0)
    safe = fnp.where(negative, 1.0, x)  # no NaN below 0, where the derivative is 0, not NaN
    return fnp.where(negative, -fnp.inf, ew.neg(sx.xlogy(safe, safe)))


def _relative_entropy(name: str, x: Any, y: Any, linear: bool) -> Any:
    """x log(x / y) (+ y - x when `linear`) for x >= 0, y > 0; 0 at x == y == 0; inf for a
    negative x or y, and for y == 0 < x. x == 0 < y stays on the formula (xlogy gives 0, or y),
    so the derivative in x there is its limit, -inf. Outside x >= 0, y > 0 the formula runs on
    (1, 1), so that its NaN does not reach the derivative, which is 0 there."""
    x, y = float_args(name, x, y)
    inside = fnp.logical_and(fnp.greater_equal(x, 0.0), fnp.greater(y, 0.0))
    xs, ys = fnp.where(inside, x, 1.0), fnp.where(inside, y, 1.0)
    out = sx.xlogy(xs, ew.div(xs, ys))
    if linear:
        out = ew.add(ew.sub(out, xs), ys)
    # NaN operands fail every comparison: they get NaN, not the inf of the outside
    nan = fnp.logical_or(fnp.isnan(x), fnp.isnan(y))
    out = fnp.where(fnp.logical_or(inside, nan), fnp.where(nan, fnp.nan, out), fnp.inf)
    return fnp.where(fnp.logical_and(fnp.equal(x, 0.0), fnp.equal(y, 0.0)), 0.0, out)


def rel_entr(x: Any, y: Any) -> Any:
    """The relative-entropy term x log(x / y): 0 at x == 0 <= y, inf outside x >= 0, y > 0."""
    return _relative_entropy("rel_entr", x, y, linear=False)


def kl_div(x: Any, y: Any) -> Any:
    """The Kullback-Leibler term x log(x / y) - x + y: y at x == 0 <= y, inf outside x >= 0,
    y > 0."""
    return _relative_entropy("kl_div", x, y, linear=True)


def log_expit(x: Any) -> Any:
    """log(expit(x)) = -log(1 + exp(-x)), without overflow or loss for large |x| (one smooth
    logaddexp, so its derivatives are exact at every x)."""
    (x,) = float_args("log_expit", x)
    return ew.neg(ew.logaddexp(ew.const(x, 0.0), ew.neg(x)))
