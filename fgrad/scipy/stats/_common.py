"""What the distributions of fgrad.scipy.stats share: SciPy's location-scale standardisation,
its NaN for invalid parameters, and quiet evaluation (SciPy returns inf, -inf and NaN at the
edges of a support without warnings, and so do these functions)."""
from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from ... import numpy as fnp
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
