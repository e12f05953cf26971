"""lax's cumulative reductions beyond cumsum: cummax, cummin, cumlogsumexp and cumprod, with
jax.lax's signatures (operand, axis=0, reverse=False) and rules (a non-negative axis of an
array of rank >= 1; booleans refused).

Each is the parallel prefix scan JAX differentiates its own cumulative primitives through
(`jax.lax.associative_scan`'s odd/even recursion, Blelloch's), written here on fgrad's
slice, reshape, concatenate and elementwise primitives with the combine JAX uses (max, min,
logaddexp, mul). So every derivative comes from those primitives' rules, to any order and in
both modes, and where a derivative depends on how the scan groups its operands (ties of
cummax/cummin, whose max/min split the derivative evenly between equal operands) fgrad's
is JAX's: at x = [1, 1, 1, 1, 1], grad(sum(cummax(x))) is [2.125, 1.125, 0.875, 0.375, 0.5]
in both. Values: max and min are exact in any grouping; cumprod and cumlogsumexp round as
the scan groups them, which may differ from JAX's reduce_window values in the last bits.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import numpy as fnp
from ..core.errors import FgradTypeError, FgradValueError
from ..core.trace import aval_of
from ..numpy._util import as_value
from ..ops import elementwise as ew
from ..ops import shape as sh

__all__ = ["cummax", "cummin", "cumlogsumexp", "cumprod"]


def _part(x, axis: int, lo: int, hi: int):
    """x[lo:hi] along `axis`."""
    shape = aval_of(x).shape
    start = [0] * len(shape)
    limit = list(shape)
    start[axis], limit[axis] = lo, hi
    return sh.slice(x, start, limit)


def _every_other(x, axis: int, start: int):
    """x[start::2] along `axis`: the pairs from `start` reshaped to (pairs, 2), their first
    column, and the last element when one is left over (contiguous primitives only)."""
    shape = aval_of(x).shape
    n = shape[axis]
    pairs = max(n - start, 0) // 2
    parts = []
    if pairs:
        y = sh.reshape(_part(x, axis, start, start + 2 * pairs), shape[:axis] + (pairs, 2) + shape[axis + 1:])
        y = _part(y, axis + 1, 0, 1)
        parts.append(sh.reshape(y, shape[:axis] + (pairs,) + shape[axis + 1:]))
    if n > start and (n - start) % 2:
        parts.append(_part(x, axis, n - 1, n))
    return parts[0] if len(parts) == 1 else sh.concatenate(parts, axis)


def _interleave(even, odd, axis: int):
    """even[0], odd[0], even[1], odd[1], ... along `axis` (even may have one more element):
    stacked in a new axis and reshaped, so values pass unchanged (JAX pads with zeros and
    adds, which turns -0.0 into 0.0)."""
    shape = aval_of(odd).shape
    m = shape[axis]
    inner = shape[:axis + 1] + (1,) + shape[axis + 1:]
    both = sh.concatenate([sh.reshape(_part(even, axis, 0, m), inner), sh.reshape(odd, inner)], axis + 1)
    out = sh.reshape(both, shape[:axis] + (2 * m,) + shape[axis + 1:])
    if aval_of(even).shape[axis] > m:
        out = sh.concatenate([out, _part(even, axis, m, m + 1)], axis)
    return out


def _scan(combine: Callable, x, axis: int):
    """The inclusive scan of x along `axis` with the associative `combine(earlier, later)`,
    grouped as jax.lax.associative_scan groups it: the odd positions are the scan of adjacent
    pairs (by recursion), each even position its odd predecessor combined with its element."""
    n = aval_of(x).shape[axis]
    if n < 2:
        return x
    m = n // 2
    # x[0:2m:2] (+) x[1::2], scanned: the odd positions
    odd = _scan(combine, combine(_every_other(_part(x, axis, 0, 2 * m), axis, 0), _every_other(x, axis, 1)), axis)
    if n == 2:
        even = _part(x, axis, 0, 1)
    else:  # x[0], then odd[k] (+) x[2k + 2]
        before = odd if n % 2 else _part(odd, axis, 0, m - 1)
        even = sh.concatenate([_part(x, axis, 0, 1), combine(before, _every_other(x, axis, 2))], axis)
    return _interleave(even, odd, axis)


def _cumulative(name: str, combine: Callable, kinds: str, operand: Any, axis: int, reverse: bool) -> Any:
    x = as_value(operand, f"lax.{name}")
    aval = aval_of(x)
    if aval.dtype.kind not in kinds:
        raise FgradTypeError(f"{name} does not accept dtype {aval.dtype.name}. Accepted dtypes are subtypes of "
                             f"{'number' if 'i' in kinds else 'floating'}.")
    axis = int(axis)
    if axis < 0:  # (jax.lax's rule: lax's functions take non-negative axes only)
        raise FgradValueError("XLA operations do not allow negative axes")
    if axis >= len(aval.shape):
        raise FgradValueError(f"axis {axis} is out of bounds for array of shape {aval.shape}")
    if reverse:
        return fnp.flip(_scan(combine, fnp.flip(x, axis), axis), axis)
    return _scan(combine, x, axis)


def cummax(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    """The running maximum along `axis` (from the end when reverse); NaN propagates. Its
    derivative follows max's: equal operands of one combine share it evenly, as in JAX."""
    return _cumulative("cummax", ew.maximum, "iufc", operand, axis, reverse)


def cummin(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    """The running minimum along `axis` (from the end when reverse), as cummax."""
    return _cumulative("cummin", ew.minimum, "iufc", operand, axis, reverse)


def cumlogsumexp(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    """log(cumsum(exp(operand))) along `axis`, without overflow: a scan of logaddexp, whose
    derivatives are smooth at ties (floating point only: JAX's fails on integers)."""
    return _cumulative("cumlogsumexp", ew.logaddexp, "f", operand, axis, reverse)


def cumprod(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    """The cumulative product along `axis` (from the end when reverse), in operand's dtype;
    its derivatives are mul's, exact where entries are zero."""
    return _cumulative("cumprod", ew.mul, "iufc", operand, axis, reverse)
