"""Cumulative operations beyond cumsum: cumprod and diff, and the associative scan that
cumprod (and fgrad.torch's cummax, cummin and logcumsumexp) are built on.

A scan of n elements is ceil(log2 n) rounds of one combine of shifted slices
(Hillis-Steele), written with the slice, concatenate and elementwise primitives: every
derivative of a cumulative product comes from mul's rule (exact with zeros, to any order)
and the scan stages under jit and vmap like any other composition.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.errors import FgradValueError
from ..ops import elementwise as ew
from ..ops import shape as sh
from ._policy import NUMPY
from ._shape import concatenate
from ._util import (
    as_value,
    fresh,
    broadcast_to,
    cast,
    dtype_arg,
    dtype_of,
    int_arg,
    normalize_axis,
    reject_out,
    shape_of,
)


def _axis_slice(x, axis: int, lo: int, hi: int):
    shape = shape_of(x)
    start = [0] * len(shape)
    limit = list(shape)
    start[axis], limit[axis] = lo, hi
    return sh.slice(x, start, limit)


def associative_scan(fn: Callable, xs: tuple, axis: int) -> tuple:
    """The inclusive scan of the arrays `xs` (one shape) along the non-negative `axis`:
    out[i] = xs[0] (+) xs[1] (+) ... (+) xs[i] for an associative `fn(earlier, later)` that
    takes and returns tuples of arrays (several arrays scan together, e.g. values with their
    indices). Hillis-Steele: log2(n) rounds of shifted combines."""
    xs = tuple(xs)
    n = shape_of(xs[0])[axis]
    step = 1
    while step < n:
        earlier = tuple(_axis_slice(x, axis, 0, n - step) for x in xs)
        later = tuple(_axis_slice(x, axis, step, n) for x in xs)
        combined = fn(earlier, later)
        xs = tuple(sh.concatenate([_axis_slice(x, axis, 0, step), c], axis) for x, c in zip(xs, combined))
        step *= 2
    return xs


def _flat_or_axis(a, axis, name: str, policy):
    """(array, axis): axis=None works on the flattened array; a 0-d array acts as (1,)."""
    if axis is None or not shape_of(a):
        a = sh.reshape(a, (int(np.prod(shape_of(a), dtype=np.int64)),))
        axis = 0 if axis is None else axis
    return a, normalize_axis(axis, len(shape_of(a)), name, policy=policy)


def cumprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, *, policy=NUMPY) -> Any:
    """Cumulative product along `axis` (of the flattened array when axis is None), NumPy's
    signature; booleans and small integers accumulate in the policy's dtype (as sum). The
    gradient is exact where entries are zero (it is the product of the others)."""
    reject_out(out, "cumprod")
    a = x = as_value(a, "cumprod")
    a = cast(a, dtype_arg(dtype, "cumprod") if dtype is not None else policy.accumulate_dtype(dtype_of(a)))
    a, ax = _flat_or_axis(a, axis, "cumprod", policy)
    # (one element: a new array all the same)
    return fresh(associative_scan(lambda e, l: (ew.mul(e[0], l[0]),), (a,), ax)[0], x)


def _end(v, a, axis: int, name: str):
    """prepend=/append= as an array to concatenate with `a` along `axis`: a scalar broadcasts
    to a slab of size 1 along `axis`."""
    v = as_value(v, f"{name}'s prepend/append")
    if not shape_of(v):
        shape = list(shape_of(a))
        shape[axis] = 1
        v = broadcast_to(v, tuple(shape))
    return v


def diff(a: Any, n: int = 1, axis: int = -1, prepend: Any = None, append: Any = None, *,
         policy=NUMPY) -> Any:
    """The n-th discrete difference along `axis`: out[i] = a[i + 1] - a[i], applied `n` times
    (NumPy semantics: booleans differ by not_equal; prepend/append join `a` first, scalars
    broadcast across the other axes)."""
    a = as_value(a, "diff")
    n = int_arg(n, "diff", "n")
    if n < 0:
        raise FgradValueError(f"diff: order must be non-negative but got {n}")
    nd = len(shape_of(a))
    if nd == 0:
        raise FgradValueError("diff: diff requires input that is at least one dimensional")
    ax = normalize_axis(axis, nd, "diff", policy=policy)
    if n == 0:
        return a
    parts = [_end(v, a, ax, "diff") if v is not None else None for v in (prepend, append)]
    if parts[0] is not None or parts[1] is not None:
        a = concatenate([p for p in (parts[0], a, parts[1]) if p is not None], axis=ax, policy=policy)
    boolean = dtype_of(a).kind == "b"
    for _ in range(n):
        size = shape_of(a)[ax]
        if size == 0:
            break
        hi, lo = _axis_slice(a, ax, 1, size), _axis_slice(a, ax, 0, size - 1)
        a = ew.ne(hi, lo) if boolean else ew.sub(hi, lo)
    return a


__all__ = ["cumprod", "diff"]
