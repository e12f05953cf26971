"""xlogy and xlog1py: x * log(y) and x * log1p(y) that are 0 where x is 0 (also at y = 0 and
y = -1, where the log is -inf), as SciPy defines them. Primitives rather than compositions:
x * log(y) would give 0 * -inf = NaN there, and a select around it would cut the mixed
derivative d2/dx dy = 1/y at x = 0."""
from __future__ import annotations

from typing import Any

from ._special import define
from .elementwise import add, const, div, eq, log, log1p, logical_and, select


def _masked_ratio(x, d):
    """x / d, but 0 where x == 0 and d == 0 (xlogy at y = 0, xlog1py at y = -1): the function
    is 0 for every y when x is 0, so its y-derivative is 0 there. Only that point is masked,
    with a safe denominator, so the x-derivative of this partial (1 / d) survives at x == 0."""
    both_zero = logical_and(eq(x, const(x, 0.0)), eq(d, const(d, 0.0)))
    return select(both_zero, const(x, 0.0), div(x, select(both_zero, const(d, 1.0), d)))


xlogy_p = define("xlogy", "xlogy",
                 lambda x, y, out: log(y),
                 lambda x, y, out: _masked_ratio(x, y))
xlog1py_p = define("xlog1py", "xlog1py",
                   lambda x, y, out: log1p(y),
                   lambda x, y, out: _masked_ratio(x, add(const(y, 1.0), y)))


def xlogy(x: Any, y: Any) -> Any:
    """x * log(y), and 0 where x == 0 (NaN y propagates); operands of one float dtype."""
    return xlogy_p.bind(x, y)


def xlog1py(x: Any, y: Any) -> Any:
    """x * log1p(y), and 0 where x == 0 (NaN y propagates); operands of one float dtype."""
    return xlog1py_p.bind(x, y)
