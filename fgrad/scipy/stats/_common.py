"""What the distributions of fgrad.scipy.stats share: SciPy's location-scale standardisation,
its NaN for invalid parameters, and quiet evaluation (SciPy returns inf, -inf and NaN at the
edges of a support without warnings, and so do these functions)."""
from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from ... import numpy as fnp
from ...ops.elementwise import stop_gradient
from .. import special
from .._args import float_args


def quiet(fn: Callable) -> Callable:
    """`fn` evaluated without NumPy's floating-point warnings (eager operands are NumPy arrays,
    whose operators would warn about log(0) and inf - inf where SciPy does not)."""
    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        with np.errstate(all="ignore"):
            return fn(*args, **kwargs)
    return run


def standardize(name: str, x: Any, loc: Any, scale: Any, *shapes: Any) -> list:
    """[(x - loc) / scale, scale, *shapes], all in one float dtype and broadcast together."""
    x, loc, scale, *shapes = float_args(name, x, loc, scale, *shapes)
    return [fnp.divide(fnp.subtract(x, loc), scale), scale, *shapes]


def nan_unless(valid: Any, value: Any) -> Any:
    """`value` where `valid`, NaN elsewhere: SciPy's answer for invalid parameters (a scale or
    shape parameter that is not positive)."""
    return fnp.where(valid, value, fnp.nan)


def positive(*params: Any) -> Any:
    """True where every parameter is > 0."""
    out = fnp.greater(params[0], 0.0)
    for p in params[1:]:
        out = fnp.logical_and(out, fnp.greater(p, 0.0))
    return out


def inside(valid: Any, x: Any, fill: float) -> Any:
    """x where `valid`, else `fill`: the operand a formula sees outside its support, so that the
    formula's NaN there does not reach the derivatives of the value that replaces it."""
    return fnp.where(valid, x, fill)


def log_probability(p: Any, q: Any) -> Any:
    """log(p) for a probability p whose complement q = 1 - p is computed separately (a CDF and
    its survival function): log(p) where p < 1/2, log1p(-q) where p is near 1, so that the tail
    where p rounds to 1 keeps its digits (log P(X <= x) = -3.7e-19, not 0). Each branch runs on
    a safe value where it is not taken, so that its inf reaches no derivative."""
    small = fnp.less(p, 0.5)
    return fnp.where(small, fnp.log(fnp.where(small, p, 0.25)), fnp.log1p(-fnp.where(small, 0.25, q)))


_LN2 = 0.6931471805599453


def log1mexp(t: Any) -> Any:
    """log(1 - exp(-t)) for t >= 0 (-inf at t = 0): log(-expm1(-t)) below t = log 2, where
    1 - exp(-t) would lose its digits, log1p(-exp(-t)) above, where expm1 would; two exact forms
    of one function (Maechler's log1mexp), each run on a safe value where it is not taken."""
    small = fnp.less(t, _LN2)
    return fnp.where(small, fnp.log(-fnp.expm1(-fnp.where(small, t, 1.0))),
                     fnp.log1p(-fnp.exp(-fnp.where(small, 1.0, t))))


def in_unit_interval(q: Any) -> Any:
    """True where 0 <= q <= 1: a probability (SciPy's quantile functions give NaN elsewhere)."""
    return fnp.logical_and(fnp.greater_equal(q, 0.0), fnp.less_equal(q, 1.0))


def location_scale(name: str, standard: Callable, x: Any, loc: Any, scale: Any, *shapes: Any,
                   valid: Callable | None = None, density: bool = False) -> Any:
    """A location-scale family's function at x: standard((x - loc) / scale, *shapes), less
    log(scale) for a log density; NaN where scale <= 0 or where `valid(*shapes)` is False."""
    z, scale, *shapes = standardize(name, x, loc, scale, *shapes)
    out = standard(z, *shapes)
    if density:
        out = out - fnp.log(scale)
    ok = fnp.greater(scale, 0.0)
    if valid is not None:
        ok = fnp.logical_and(ok, valid(*shapes))
    return nan_unless(ok, out)


def quantile(name: str, standard: Callable, q: Any, loc: Any, scale: Any, *shapes: Any,
             valid: Callable | None = None) -> Any:
    """A location-scale family's quantile: loc + scale * standard(q, *shapes); NaN for q outside
    [0, 1] (the formula runs on 1/2 there, so that its NaN reaches no derivative), for
    scale <= 0 and where `valid(*shapes)` is False."""
    q, loc, scale, *shapes = float_args(name, q, loc, scale, *shapes)
    probability = in_unit_interval(q)
    out = loc + scale * standard(inside(probability, q, 0.5), *shapes)
    ok = fnp.logical_and(probability, fnp.greater(scale, 0.0))
    if valid is not None:
        ok = fnp.logical_and(ok, valid(*shapes))
    return nan_unless(ok, out)


def count(k: Any, loc: Any) -> tuple:
    """(k - loc as a count, True where it is in {0, 1, 2, ...}). A count has no derivative:
    it is cut from the graph (its derivative is 0, as floor's), as in poisson."""
    k = stop_gradient(fnp.subtract(k, loc))
    return k, fnp.logical_and(fnp.greater_equal(k, 0.0), fnp.equal(k, fnp.floor(k)))


def whole(n: Any) -> Any:
    """True where n is in {0, 1, 2, ...} (a number of trials: SciPy's NaN elsewhere)."""
    return fnp.logical_and(fnp.greater_equal(n, 0.0), fnp.equal(n, fnp.floor(n)))


def log_comb(n: Any, k: Any) -> Any:
    """log(n choose k) = gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1), SciPy's and JAX's
    form (exactly 0 at k = 0 and k = n; differentiable in n)."""
    return special.gammaln(n + 1.0) - special.gammaln(k + 1.0) - special.gammaln(n - k + 1.0)
