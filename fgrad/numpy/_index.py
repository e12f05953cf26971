"""Indexing in fgrad.numpy: x[...] with NumPy's full semantics (ints, slices, None,
Ellipsis, integer arrays, boolean masks), take, take_along_axis, diagonals, triangles,
cumsum/prod, and functional updates (at_set / at_add, or x.at[idx].set(v) on traced values).

Basic indexing (ints and slices of step +-1) lowers to the `slice`, `rev` and `reshape`
primitives; anything else binds `getitem` (fgrad/ops/index.py), whose transpose is
`scatter_add`. Boolean masks are turned into integer index arrays with np.nonzero, which
needs the mask's value: under make_jaxpr/jit/vmap a traced mask raises
NonConcreteBooleanIndexError (use fgrad.numpy.where instead).
"""
from __future__ import annotations

import builtins
import operator
from typing import Any

import numpy as np

from ..core.errors import (
    ConcretizationError,
    FgradIndexError,
    FgradValueError,
    NonConcreteBooleanIndexError,
)
from ..core.trace import Tracer
from ..ops import cumulative
from ..ops import elementwise as ew
from ..ops import index as ix
from ..ops import linalg as la  # the tril/triu primitives (linear, self-adjoint masks)
from ..ops import shape as sh
from ..ops.index import ARRAY, Slice, normalize_slice
from ._policy import NUMPY
from ._reductions import normalize_axes, prod  # noqa: F401  (prod is exported from here, as before)
from ._reductions import sum as _sum
from ._util import (
    as_value,
    aval_of,
    broadcast_to,
    cast,
    dtype_arg,
    dtype_of,
    index_arg,
    int_arg,
    is_traced,
    reject_out,
    shape_arg,
)

_MASK_MESSAGE = (
    "{what} needs a concrete value, but got a traced value of type {aval} while staging with "
    "make_jaxpr/jit/vmap: the size of the result depends on how many entries are True, which is "
    "not known until the function runs.\n"
    "Fixes: use fgrad.numpy.where(mask, x, 0) (or a reduction such as sum(where(mask, x, 0))) "
    "to keep the shape fixed, pass the mask as a concrete (non-traced) array, or run without "
    "jit/vmap/make_jaxpr (grad, vjp and jvp keep values concrete).")


def _concrete(x, what: str):
    """The concrete array behind `x` (a tracer under grad/jvp), or a clear error."""
    if isinstance(x, Tracer):
        try:
            x = x._concrete(what)
        except ConcretizationError:
            raise NonConcreteBooleanIndexError(_MASK_MESSAGE.format(what=what, aval=x.aval), doc="bool-mask-jit") from None
    return x


def _static_int(v, what: str):
    if v is None:
        return None
    try:
        return operator.index(v)
    except ConcretizationError:
        raise
    except TypeError:
        raise FgradIndexError(f"getitem: {what} must be an integer or None, got {type(v).__name__} {v!r:.40}. "
                         "Slices take Python ints; use an integer index array for data-dependent "
                         "positions.") from None


def _is_cupy(x) -> bool:
    return type(x).__module__.startswith("cupy")


def _host(x):
    """A concrete array for a boolean mask on the host side (cupy masks stay on the device)."""
    return x if _is_cupy(x) else np.asarray(x)


def _classify(item):
    """One entry of an index: ('none'|'ellipsis'|'int'|'slice'|'array'|'mask', value)."""
    if item is None:
        return "none", None
    if item is Ellipsis:
        return "ellipsis", None
    if isinstance(item, slice):
        return "slice", slice(_static_int(item.start, "a slice start"),
                              _static_int(item.stop, "a slice stop"),
                              _static_int(item.step, "a slice step"))
    if isinstance(item, (bool, np.bool_)):
        raise FgradIndexError("getitem: a scalar boolean index (x[True]) is not supported; use x[None] to "
                         "add an axis or fgrad.numpy.where to choose values.")
    if isinstance(item, (int, np.integer)):
        return "int", int(item)
    if isinstance(item, Tracer):
        kind = item.aval.dtype.kind
        if kind == "b":
            return "mask", _host(_concrete(item, "Indexing with a boolean mask (x[mask])"))
        if kind in "iu":
            return "array", item
        raise FgradIndexError(f"getitem: arrays used as indices must be of integer (or boolean) type, "
                         f"got a traced {item.aval}")
    arr = item if _is_cupy(item) else np.asarray(item)
    if arr.dtype.kind == "b":
        return "mask", arr
    if arr.dtype.kind in "iu" or arr.size == 0:
        return "array", arr if arr.dtype.kind in "iu" else arr.astype(np.intp)
    raise FgradIndexError(f"getitem: arrays used as indices must be of integer (or boolean) type, got "
                     f"{arr.dtype} ({type(item).__name__} {item!r:.60})")


def index_plan(shape: tuple, idx):
    """Normalise a NumPy index for an array of `shape`.

    Returns (expanded_shape, entries): `expanded_shape` is `shape` with a 1 inserted where
    the index has None, and `entries` has one item per axis of it: an in-bounds non-negative
    int, a Slice, or an integer index array (NumPy array or traced value).
    """
    items = [_classify(i) for i in (idx if isinstance(idx, tuple) else (idx,))]
    consumed = 0
    for kind, v in items:
        if kind == "mask":
            if v.ndim == 0:
                raise FgradIndexError("getitem: a 0-d boolean index is not supported; use fgrad.numpy.where.")
            consumed += v.ndim
        elif kind in ("int", "slice", "array"):
            consumed += 1
    if sum(kind == "ellipsis" for kind, _ in items) > 1:
        raise FgradIndexError("getitem: an index can only have a single ellipsis ('...')")
    if consumed > len(shape):
        raise FgradIndexError(f"too many indices for array: array is {len(shape)}-dimensional, but "
                         f"{consumed} were indexed")
    expanded, entries, d = [], [], 0

    def keep_axis(entry):
        nonlocal d
        expanded.append(shape[d])
        entries.append(entry)
        d += 1

    for kind, v in items:
        if kind == "none":
            expanded.append(1)
            entries.append(Slice(0, 1, 1))
        elif kind == "ellipsis":
            for _ in range(len(shape) - consumed):
                keep_axis(Slice(0, shape[d], 1))
        elif kind == "int":
            if not -shape[d] <= v < shape[d]:
                raise FgradIndexError(f"index {v} is out of bounds for axis {d} with size {shape[d]}")
            keep_axis(v % shape[d])
        elif kind == "slice":
            keep_axis(normalize_slice(v, shape[d]))
        elif kind == "array":
            keep_axis(v)
        else:  # mask
            k = v.ndim
            for j in range(k):
                if v.shape[j] != shape[d + j]:
                    raise FgradIndexError(f"boolean index did not match indexed array along axis {d + j}; "
                                     f"size of axis is {shape[d + j]} but size of corresponding "
                                     f"boolean axis is {v.shape[j]}")
            for a in v.nonzero():
                keep_axis(a)
    while d < len(shape):
        keep_axis(Slice(0, shape[d], 1))
    return tuple(expanded), entries


def _is_array(e) -> bool:
    return not isinstance(e, (int, Slice))


def _spec(shape, entries):
    """The static spec and operand list for getitem_p/scatter_add_p (trailing ':' dropped)."""
    entries = list(entries)
    while entries and isinstance(entries[-1], Slice) and \
            entries[-1] == normalize_slice(slice(None), shape[len(entries) - 1]):
        entries.pop()
    arrays = [e for e in entries if _is_array(e)]
    spec = tuple(ARRAY if _is_array(e) else e for e in entries)
    return spec, arrays


def _basic(x, shape, entries):
    """x[entries] for ints and unit-step slices: slice, rev, reshape. None if not applicable."""
    starts, limits, flips, out_shape = [], [], [], []
    for axis, (e, n) in enumerate(zip(entries, shape)):
        if isinstance(e, int):
            starts.append(e)
            limits.append(e + 1)
            continue
        if not isinstance(e, Slice) or e.step not in (1, -1):
            return None
        length = e.length(n)
        if e.step == 1:
            lo = e.start if length else 0
        else:
            lo = e.start - length + 1 if length else 0
            if length > 1:
                flips.append(axis)
        starts.append(lo)
        limits.append(lo + length)
        out_shape.append(length)
    if starts != [0] * len(shape) or limits != list(shape):
        x = sh.slice(x, starts, limits)
    x = ix.rev(x, flips)
    return sh.reshape(x, out_shape)


def getitem(x, idx):
    """x[idx] with NumPy semantics; differentiable in x (index arrays are not)."""
    x = as_value(x, "getitem")
    shape = aval_of(x).shape
    expanded, entries = index_plan(shape, idx)
    if expanded != shape:
        x = sh.reshape(x, expanded)
    out = _basic(x, expanded, entries)
    if out is not None:
        return out
    spec, arrays = _spec(expanded, entries)
    return ix.getitem(x, arrays, spec)


# --- functional updates --------------------------------------------------------------------

def _update_plan(x, idx, v, name):
    x = as_value(x, name)
    shape = aval_of(x).shape
    expanded, entries = index_plan(shape, idx)
    spec, arrays = _spec(expanded, entries)
    sel = ix.gather_shape(expanded, spec, [aval_of(a).shape for a in arrays])
    v = as_value(v, name)
    v = cast(v, dtype_of(x))
    vs = aval_of(v).shape
    if vs != sel:
        # NumPy assignment broadcasts the value (leading size-1 axes may be dropped)
        while len(vs) > len(sel) and vs[0] == 1:
            v = sh.reshape(v, vs[1:])
            vs = vs[1:]
        v = broadcast_to(v, sel)
    return x, shape, expanded, spec, arrays, sel, v


def at_add(x, idx, v):
    """x with v added at x[idx] (repeated indices accumulate, like np.add.at); a new array."""
    x, shape, expanded, spec, arrays, sel, v = _update_plan(x, idx, v, "at_add")
    delta = sh.reshape(ix.scatter_add(v, arrays, spec, expanded), shape)
    return ew.add(x, delta)


def at_set(x, idx, v):
    """x with x[idx] replaced by v; a new array (x itself is unchanged).

    Where an index repeats a position, the last update wins when the index arrays are
    concrete (as NumPy does in practice); under jit with traced index arrays the repeated
    updates are averaged. NumPy and JAX leave this case unspecified."""
    x, shape, expanded, spec, arrays, sel, v = _update_plan(x, idx, v, "at_set")
    dt = dtype_of(x)
    if not any(is_traced(a) for a in arrays):
        xp = __import__("cupy") if any(_is_cupy(a) for a in arrays) else np
        ids = xp.arange(int(np.prod(sel)), dtype=np.int64).reshape(sel)
        winner = xp.full(expanded, -1, dtype=np.int64)
        index = ix.build_index(spec, arrays)
        winner[index] = ids
        keep = winner[index] == ids
        if not keep.all():
            v = ew.select(keep, v, ew.const(v, 0))
        covered = winner >= 0
        new = ix.scatter_add(v, arrays, spec, expanded)
    else:
        count = ix.scatter_add(broadcast_to(np.ones((), dt), sel), arrays, spec, expanded)
        covered = ew.gt(count, ew.const(count, 0))
        new = ix.scatter_add(v, arrays, spec, expanded)
        safe = ew.select(covered, count, ew.const(count, 1))
        new = ew.div(new, safe) if dt.kind in "fc" else ew.floor_divide(new, safe)
    out = ew.select(covered, new, sh.reshape(x, expanded))
    return sh.reshape(out, shape)


def _at_combine(x, idx, v, name: str, combine):
    """x with x[idx] replaced by combine(x[idx], v), where a repeated position combines every
    update aimed at it in turn (JAX's .at[].mul/.min/.max accumulate). With concrete index
    arrays the updates go in rounds, each round touching distinct positions (one round unless
    positions repeat); with traced index arrays positions are assumed distinct."""
    x, shape, expanded, spec, arrays, sel, v = _update_plan(x, idx, v, name)
    size = int(np.prod(expanded))
    flat = sh.reshape(x, (size,))
    if any(is_traced(a) for a in arrays) or any(_is_cupy(a) for a in arrays):
        return at_set(x, idx, combine(getitem(x, idx), v))
    targets = np.arange(size, dtype=np.int64).reshape(expanded)[ix.build_index(spec, arrays)].reshape(-1)
    v = sh.reshape(v, (targets.size,))
    order = np.argsort(targets, kind="stable")
    sorted_t = targets[order]
    first = np.searchsorted(sorted_t, sorted_t, side="left")
    occurrence = np.empty_like(order)
    occurrence[order] = np.arange(order.size) - first  # how many earlier updates hit the position
    for r in range(int(occurrence.max()) + 1 if occurrence.size else 0):
        which = np.nonzero(occurrence == r)[0]
        pos = targets[which]
        flat = at_set(flat, pos, combine(getitem(flat, pos), getitem(v, which)))
    return sh.reshape(flat, shape)


def at_mul(x, idx, v):
    """x with x[idx] multiplied by v (repeated positions multiply by every update); a new array."""
    return _at_combine(x, idx, v, "at_mul", ew.mul)


def _at_extreme(x, idx, v, name: str, combine):
    """_at_combine with minimum/maximum, its derivative JAX's (and PyTorch's scatter_reduce
    amax/amin's): each position's derivative is split evenly between every operand equal to
    its result, x's element and the updates aimed at it alike. (Combining in rounds would
    halve the share at each tie, so three tied operands would get 1/4, 1/4, 1/2.)

    The value is the rounds' result r itself; the derivative rides on zero-valued carriers
    (stop_gradient(e) - e for each tied finite operand e, which is +0 in value), summed per
    position, divided by the tie count and subtracted from r, so r keeps every bit (-0.0 too).
    Where r is infinite (no finite carrier exists) the result is the mean of the tied
    operands, each of them r. Integers and untraced operands take the rounds' result as is."""
    out = _at_combine(x, idx, v, name, combine)
    if dtype_of(out).kind != "f" or not (isinstance(x, Tracer) or isinstance(v, Tracer)):
        return out
    x, _, _, _, _, _, v = _update_plan(x, idx, v, name)
    r = ew.stop_gradient(out)
    x_tie, v_tie = ew.eq(x, r), ew.eq(v, getitem(r, idx))
    dt = dtype_of(out)
    count = ew.maximum(at_add(cast(x_tie, dt), idx, cast(v_tie, dt)), ew.const(r, 1))

    def carrier(e, tie):  # (selecting before subtracting: no inf - inf to warn about)
        e = ew.select(ew.logical_and(tie, ew.isfinite(e)), e, ew.const(e, 0))
        return ew.sub(ew.stop_gradient(e), e)
    finite = ew.sub(r, ew.div(at_add(carrier(x, x_tie), idx, carrier(v, v_tie)), count))
    tied_sum = at_add(ew.select(x_tie, x, ew.const(x, 0)), idx, ew.select(v_tie, v, ew.const(v, 0)))
    return ew.select(ew.isinf(r), ew.div(tied_sum, count), finite)


def at_min(x, idx, v):
    """x with x[idx] replaced by minimum(x[idx], v) (repeated positions take every update);
    the derivative at a tie is shared evenly by the tied operands, as JAX's."""
    return _at_extreme(x, idx, v, "at_min", ew.minimum)


def at_max(x, idx, v):
    """x with x[idx] replaced by maximum(x[idx], v) (repeated positions take every update);
    the derivative at a tie is shared evenly by the tied operands, as JAX's."""
    return _at_extreme(x, idx, v, "at_max", ew.maximum)


def at_get(x, idx):
    """x[idx] (JAX's x.at[idx].get())."""
    return getitem(x, idx)


class _IndexUpdateRef:
    __slots__ = ("x", "idx")

    def __init__(self, x, idx) -> None:
        self.x, self.idx = x, idx

    def get(self, *, indices_are_sorted: bool = False, unique_indices: bool = False,
            mode: str | None = None, fill_value: Any = None):
        """x[idx], JAX's ``x.at[idx].get``.

        Args:
            indices_are_sorted, unique_indices: hints, accepted and unused (as JAX on CPU).
            mode: None or "promise_in_bounds" (fgrad's indexing: an out-of-bounds integer
                raises IndexError), "clip" (out-of-bounds integer indices are clamped to the
                axis) or "fill" (their entries are ``fill_value``).
            fill_value: the value of out-of-bounds entries in "fill" mode; by default NaN for
                inexact dtypes, the most negative integer for signed ones, the largest for
                unsigned ones and True for booleans (JAX's defaults).
        Returns:
            The gathered values, differentiable in x.
        """
        if mode is None:
            return jax_getitem(self.x, self.idx)
        if mode == "promise_in_bounds":
            return getitem(self.x, self.idx)
        return _get_with_mode(self.x, self.idx, mode, fill_value)

    def _update(self, update, v, mode):
        x, idx, shape = _scatter_plan(self.x, self.idx, mode)
        out = update(x, idx, v)
        return out if shape is None else getitem(out, tuple(slice(0, n) for n in shape))

    def set(self, v, *, indices_are_sorted: bool = False, unique_indices: bool = False,
            mode: str | None = None):
        """x with x[idx] replaced by v (JAX's ``x.at[idx].set``); a new array.

        Args:
            v: the values, broadcast to x[idx]'s shape.
            indices_are_sorted, unique_indices: hints, accepted and unused.
            mode: None or "drop" (JAX's default: updates at out-of-bounds integer indices are
                dropped), "clip" (those indices are clamped to the axis) or
                "promise_in_bounds" (fgrad's indexing: out of bounds raises IndexError).
        Returns:
            The updated array.
        """
        return self._update(at_set, v, mode)

    def add(self, v, *, indices_are_sorted: bool = False, unique_indices: bool = False,
            mode: str | None = None):
        """x with v added at x[idx] (repeated indices accumulate); modes as `set`."""
        return self._update(at_add, v, mode)

    def mul(self, v, *, indices_are_sorted: bool = False, unique_indices: bool = False,
            mode: str | None = None):
        """x with x[idx] multiplied by v; modes as `set`."""
        return self._update(at_mul, v, mode)

    multiply = mul

    def min(self, v, *, indices_are_sorted: bool = False, unique_indices: bool = False,
            mode: str | None = None):
        """x with x[idx] replaced by its minimum with v; modes as `set`."""
        return self._update(at_min, v, mode)

    def max(self, v, *, indices_are_sorted: bool = False, unique_indices: bool = False,
            mode: str | None = None):
        """x with x[idx] replaced by its maximum with v; modes as `set`."""
        return self._update(at_max, v, mode)


def _default_fill(dtype: np.dtype):
    if dtype.kind in "fc":
        return np.nan
    if dtype.kind == "i":
        return np.iinfo(dtype).min
    if dtype.kind == "u":
        return np.iinfo(dtype).max
    return True


def _get_with_mode(x, idx, mode: str, fill_value: Any):
    """x.at[idx].get(mode="clip" | "fill"): each integer index is clamped to its axis, or
    pointed at one extra entry of fill_value appended to that axis (so NumPy's rules for where
    the indexed axes land hold unchanged)."""
    from .. import numpy as fnp  # the package's functions, imported once it is loaded

    if mode not in ("clip", "fill"):
        raise FgradValueError(f"at[...].get: mode must be None, 'promise_in_bounds', 'clip' or "
                              f"'fill', got {mode!r}")
    x = as_value(x, "at[...].get")
    shape = aval_of(x).shape
    raw = list(idx) if isinstance(idx, tuple) else [idx]
    kinds = [_classify(i) for i in raw]
    if any(kind == "mask" for kind, _ in kinds):
        raise FgradIndexError(f"at[...].get(mode={mode!r}): a boolean mask cannot be out of bounds; "
                              "index without a mode (x[mask] or x.at[mask].get()).")
    consumed = sum(kind in ("int", "slice", "array") for kind, _ in kinds)
    if consumed > len(shape):
        raise FgradIndexError(f"too many indices for array: array is {len(shape)}-dimensional, but "
                              f"{consumed} were indexed")
    new, filled, d = [], [], 0
    for (kind, v), item in zip(kinds, raw):
        if kind == "ellipsis":
            d += len(shape) - consumed
        elif kind in ("int", "array"):
            n = shape[d]
            i = fnp.asarray(v)
            i = fnp.where(i < 0, i + n, i)
            if mode == "clip":
                i = fnp.clip(i, 0, n - 1)
            else:
                i = fnp.where((i >= 0) & (i < n), i, n)
                filled.append(d)
            new.append(i)
            d += 1
            continue
        elif kind == "slice":
            d += 1
        new.append(item)
    for axis in filled:
        xshape = aval_of(x).shape
        dtype = np.dtype(dtype_of(x))
        fill = _default_fill(dtype) if fill_value is None else fill_value
        pad = fnp.full(xshape[:axis] + (1,) + xshape[axis + 1:], fill, dtype=dtype)
        x = fnp.concatenate([x, pad], axis=axis)
    return getitem(x, tuple(new))


def _has_traced_index(idx) -> bool:
    items = idx if isinstance(idx, tuple) else (idx,)
    return any(isinstance(i, Tracer) and i.aval.dtype.kind in "iu" for i in items)


def jax_getitem(x, idx):
    """x[idx] with JAX's semantics, what `x[idx]` and `x.at[idx].get()` mean on fgrad.numpy's
    arrays and traced values: NumPy's indexing, except that an out-of-bounds integer index
    (a Python int, or an entry of an index array) is clamped to its axis after negative
    indices count from the end (x[11] of 10 entries is x[9], x[-11] is x[0]), where NumPy
    raises IndexError. fgrad.numpy.getitem, which fgrad.torch indexes with, raises.

    Args:
        x: the array.
        idx: a NumPy index.
    Returns:
        The selected values, differentiable in x.
    """
    if _has_traced_index(idx):  # its values are unknown here: clamped in the program
        return _get_with_mode(x, idx, "clip", None)
    try:
        return getitem(x, idx)
    except IndexError as e:
        try:
            return _get_with_mode(x, idx, "clip", None)
        except Exception:
            raise e from None  # not an out-of-bounds index: the first error says what is wrong


def _scatter_plan(x, idx, mode):
    """(x, idx, shape) to run an update of x at idx with JAX's scatter `mode` (None: "drop").
    "drop": an out-of-bounds integer index points at one extra entry appended to its axis
    (the update lands there), and `shape` is x's shape to slice the result back to (None
    when no entry can be out of bounds). "clip": indices clamped. "promise_in_bounds": as is."""
    from .. import numpy as fnp  # the package's functions, imported once it is loaded

    if mode == "promise_in_bounds":
        return x, idx, None
    if mode not in (None, "drop", "clip", "fill"):
        raise FgradValueError(f"at[...] update: mode must be None, 'drop', 'clip' or "
                              f"'promise_in_bounds', got {mode!r}")
    x = as_value(x, "at[...]")
    shape = aval_of(x).shape
    raw = list(idx) if isinstance(idx, tuple) else [idx]
    kinds = [_classify(i) for i in raw]
    consumed = sum(kind in ("int", "slice", "array") for kind, _ in kinds)
    if any(kind == "mask" for kind, _ in kinds) or consumed > len(shape):
        return x, idx, None  # (masks are in bounds by shape; too many indices raises later)
    new, padded, d = [], [], 0
    for (kind, v), item in zip(kinds, raw):
        if kind == "ellipsis":
            d += len(shape) - consumed
        elif kind in ("int", "array"):
            n = shape[d]
            if not is_traced(v) and not _is_cupy(v):
                a = np.asarray(v)
                if a.size == 0 or bool(((a >= -n) & (a < n)).all()):
                    new.append(item)
                    d += 1
                    continue
            i = fnp.asarray(v)
            i = fnp.where(i < 0, i + n, i)
            if mode == "clip":
                i = fnp.clip(i, 0, max(n - 1, 0))
            else:
                i = fnp.where((i >= 0) & (i < n), i, n)
                padded.append(d)
            new.append(i)
            d += 1
            continue
        elif kind == "slice":
            d += 1
        new.append(item)
    for axis in padded:
        xshape = aval_of(x).shape
        pad = fnp.zeros(xshape[:axis] + (1,) + xshape[axis + 1:], dtype=dtype_of(x))
        x = fnp.concatenate([x, pad], axis=axis)
    return x, tuple(new), (shape if padded else None)


class _IndexUpdateHelper:
    """`at(x)[idx].set(v)` / `.add(v)` / `.mul(v)` / `.min(v)` / `.max(v)` / `.get()` (JAX's
    x.at[idx] API, which traced values and fgrad.numpy Arrays also offer as `x.at`)."""

    __slots__ = ("x",)

    def __init__(self, x) -> None:
        self.x = x

    def __getitem__(self, idx):
        return _IndexUpdateRef(self.x, idx)


def at(x):
    """JAX's functional index update, as a function: `at(x)[idx].set(v)` is x with x[idx] = v,
    without writing into x (also `.add`, `.multiply`, `.min`, `.max`, `.get`).

    Args:
        x: an array.

    Returns:
        A helper indexed like x, whose methods return updated copies.
    """
    return _IndexUpdateHelper(x)


# --- take, nonzero, diagonals --------------------------------------------------------------

def _index_array(indices, name):
    kind, v = _classify(indices)
    if kind == "int":
        return np.asarray(index_arg(v, name), dtype=np.int64)
    if kind != "array":
        raise FgradIndexError(f"{name}: indices must be integers, got {type(indices).__name__}")
    return v


def _wrap_mode(ind, n, mode, name):
    if mode in (None, "raise"):
        return ind
    if mode not in ("wrap", "clip"):
        raise FgradValueError(f"{name}: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    if n == 0:
        raise FgradIndexError(f"{name}: cannot do a non-empty take from an empty axis")
    if not is_traced(ind):
        return np.mod(ind, n) if mode == "wrap" else np.clip(ind, 0, n - 1)
    if mode == "clip":
        return ew.minimum(ew.maximum(ind, ew.const(ind, 0)), ew.const(ind, n - 1))
    r = ew.fmod(ind, ew.const(ind, n))
    return ew.fmod(ew.add(r, ew.const(ind, n)), ew.const(ind, n))


def take(a, indices, axis=None, out=None, mode=None):
    """Elements of `a` at `indices` along `axis` (of the flattened array when axis is None);
    NumPy's signature (out= must be None)."""
    reject_out(out, "take")
    a = as_value(a, "take")
    if axis is None:
        a = sh.reshape(a, (aval_of(a).size,))
        axis = 0
    shape = aval_of(a).shape
    (ax,) = normalize_axes(axis, len(shape), "take")
    ind = _wrap_mode(_index_array(indices, "take"), shape[ax], mode, "take")
    return getitem(a, (slice(None),) * ax + (ind,))


def take_along_axis(arr, indices, axis):
    """out[..., i, ...] = arr[..., indices[..., i, ...], ...] along `axis` (NumPy semantics)."""
    arr = as_value(arr, "take_along_axis")
    ind = _index_array(indices, "take_along_axis")
    if axis is None:
        arr = sh.reshape(arr, (aval_of(arr).size,))
        axis = 0
        if aval_of(ind).ndim != 1:
            raise FgradValueError("take_along_axis: with axis=None, indices must be 1-D")
    shape = aval_of(arr).shape
    ishape = aval_of(ind).shape
    if len(ishape) != len(shape):
        raise FgradValueError(f"take_along_axis: indices of shape {ishape} and arr of shape {shape} must "
                         "have the same number of dimensions")
    (ax,) = normalize_axes(axis, len(shape), "take_along_axis")
    idx = []
    for d, n in enumerate(shape):
        if d == ax:
            idx.append(ind)
        else:
            idx.append(np.arange(n).reshape([n if k == d else 1 for k in range(len(shape))]))
    return getitem(arr, tuple(idx))


def nonzero(a, *, size: int | None = None, fill_value: Any = None):
    """Indices of the non-zero entries, one array per axis, in row-major order (JAX's
    signature).

    Without `size` the count depends on the values, so `a` must be concrete (under jit or
    vmap: ConcretizationError; pass size=). With `size` each index array has exactly `size`
    entries, the first `size` non-zero positions, padded with `fill_value`: this stages under
    jit and vmap (the k-th non-zero entry's flat position is scattered to slot k, k counted by
    a running sum of the mask).

    Args:
      a: an array of rank >= 1.
      size: the fixed length of the results (a non-negative int), or None.
      fill_value: with size, the padding: one int for every axis or a tuple of one per axis
        (default 0).

    Returns:
      A tuple of int64 index arrays, one per axis of `a`.
    """
    if size is not None:
        return _nonzero_sized(a, size, fill_value)
    if fill_value is not None:
        raise FgradValueError("nonzero: fill_value is only used with size=; pass size= as well (or drop fill_value)")
    v = _concrete(as_value(a, "nonzero"), "nonzero")
    v = v if _is_cupy(v) else np.asarray(v)
    if v.ndim == 0:
        raise FgradValueError("nonzero: calling nonzero on 0d arrays is not allowed; use atleast_1d first")
    return tuple(v.nonzero())


def _nonzero_sized(a, size: Any, fill_value: Any):
    """nonzero with a fixed result length (see nonzero), from staged primitives only."""
    x = as_value(a, "nonzero")
    shape = tuple(aval_of(x).shape)
    if not shape:
        raise FgradValueError("nonzero: calling nonzero on 0d arrays is not allowed; use atleast_1d first")
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 0:
        raise FgradValueError(f"nonzero: size must be a non-negative int (the results' fixed length), got {size!r}")
    size = int(size)
    fills = tuple(fill_value) if isinstance(fill_value, (tuple, list)) else (fill_value,) * len(shape)
    if len(fills) != len(shape):
        raise FgradValueError(f"nonzero: fill_value has {len(fills)} entries for an array of {len(shape)} axes; pass "
                              "one int, or one per axis")
    n = int(np.prod(shape, dtype=np.int64))
    i64 = np.dtype(np.int64)
    if n == 0 or size == 0:  # (JAX's: zeros, fill_value unused, when there is nothing to find or keep)
        return tuple(np.zeros(size, i64) for _ in shape)
    hit = sh.reshape(x, (n,))
    hit = hit if dtype_of(hit) == np.bool_ else ew.ne(hit, ew.const(hit, 0))
    # the k-th non-zero entry (k from 0) goes to slot k; the rest, and entries beyond `size`,
    # to a spare slot `size` dropped at the end
    k = ew.sub(cumulative.cumsum(cast(hit, i64), 0), np.ones((), i64))
    slot = ew.select(ew.logical_and(hit, ew.lt(k, np.asarray(size, i64))), k, np.full((n,), size, i64))
    flat = sh.slice(ix.scatter_add(np.arange(n, dtype=np.int64), [slot], (ARRAY,), (size + 1,)), (0,), (size,))
    filled = ew.lt(np.arange(size, dtype=np.int64), _sum(cast(hit, i64)))
    out = []
    for axis, (dim, fill) in enumerate(zip(shape, fills)):
        stride = int(np.prod(shape[axis + 1:], dtype=np.int64))
        idx = ew.mod(ew.floor_divide(flat, np.asarray(stride, i64)), np.asarray(dim, i64)) if n else flat
        out.append(ew.select(filled, idx, np.full((size,), 0 if fill is None else fill, i64)))
    return tuple(out)


def flatnonzero(a):
    """The indices of the non-zero elements of `a` flattened (NumPy's flatnonzero). The
    result's size depends on the values, so `a` must be concrete (not under jit or vmap).

    Args:
        a: an array.

    Returns:
        A 1-D int64 array.
    """
    v = _concrete(as_value(a, "flatnonzero"), "flatnonzero")
    return (v if _is_cupy(v) else np.asarray(v)).ravel().nonzero()[0]


def argwhere(a):
    """The indices of the non-zero elements of `a`, one row per element (NumPy's argwhere).
    The result's size depends on the values, so `a` must be concrete (not under jit or vmap).

    Args:
        a: an array.

    Returns:
        An int64 array of shape (count, a.ndim).
    """
    v = _concrete(as_value(a, "argwhere"), "argwhere")
    v = v if _is_cupy(v) else np.asarray(v)
    xp = np if not _is_cupy(v) else __import__("cupy")
    return xp.argwhere(v)


def _diag_indices(n1, n2, offset):
    if offset >= 0:
        length = builtins.max(0, builtins.min(n1, n2 - offset))
        return np.arange(length), np.arange(length) + offset
    length = builtins.max(0, builtins.min(n1 + offset, n2))
    return np.arange(length) - offset, np.arange(length)


def diagonal(a, offset: int = 0, axis1: int = 0, axis2: int = 1):
    """The diagonal of the axis1 x axis2 planes, as the last axis (NumPy semantics)."""
    a = as_value(a, "diagonal")
    nd = aval_of(a).ndim
    if nd < 2:
        raise FgradValueError(f"diagonal: array must be at least 2-d, got shape {aval_of(a).shape}")
    (ax1,), (ax2,) = normalize_axes(axis1, nd, "diagonal"), normalize_axes(axis2, nd, "diagonal")
    if ax1 == ax2:
        raise FgradValueError("diagonal: axis1 and axis2 cannot be the same")
    rest = [d for d in range(nd) if d not in (ax1, ax2)]
    moved = sh.transpose(a, rest + [ax1, ax2])
    n1, n2 = aval_of(moved).shape[-2:]
    offset = int_arg(offset, "diagonal", "offset", bounded=False)
    rows, cols = _diag_indices(n1, n2, min(max(offset, -n1), n2))  # beyond: the same empty diagonal
    return getitem(moved, (Ellipsis, rows, cols))


def diag(v, k: int = 0):
    """A 2-D array with v on diagonal k (v 1-D), or the k-th diagonal of v (v 2-D)."""
    v = as_value(v, "diag")
    shape = aval_of(v).shape
    if len(shape) == 2:
        return diagonal(v, k)
    if len(shape) != 1:
        raise FgradValueError(f"diag: input must be 1-d or 2-d, got shape {shape}")
    k = int_arg(k, "diag", "k")
    n = shape[0] + builtins.abs(k)
    shape_arg((n, n), "diag", "result shape")
    rows, cols = _diag_indices(n, n, k)
    return ix.scatter_add(v, [rows, cols], (ARRAY, ARRAY), (n, n))


def diagflat(v, k: int = 0):
    """A 2-D array with `v` flattened on diagonal k (NumPy's diagflat).

    Args:
        v: an array; it is flattened.
        k: the diagonal (0 the main one, > 0 above it).

    Returns:
        A square 2-D array.
    """
    v = as_value(v, "diagflat")
    return diag(sh.reshape(v, (aval_of(v).size,)), k)


def trace(a, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype=None, out=None):
    """Sum along a diagonal (of the axis1 x axis2 planes)."""
    reject_out(out, "trace")
    dtype = dtype_arg(dtype, "trace")
    return _sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


def _triangle(m, k, lower, name):
    m = as_value(m, name)
    shape = aval_of(m).shape
    if len(shape) == 0:
        raise FgradValueError(f"{name}: input must be at least 1-d, got a 0-d array")
    k = int_arg(k, name, "k", bounded=False)
    if len(shape) == 1:  # NumPy treats a vector as the rows of a square matrix
        m = broadcast_to(m, (shape[0], shape[0]))
        shape = (shape[0], shape[0])
    # beyond [-rows, cols] the mask no longer changes: clamp, so any integer k works
    return (la.tril if lower else la.triu)(m, min(max(k, -shape[-2]), shape[-1]))


def tril(m, k: int = 0):
    """Lower triangle of the last two axes (elements above diagonal k zeroed)."""
    return _triangle(m, k, True, "tril")


def triu(m, k: int = 0):
    """Upper triangle of the last two axes (elements below diagonal k zeroed)."""
    return _triangle(m, k, False, "triu")


# --- cumulative sums and products ----------------------------------------------------------

def cumsum(a, axis=None, dtype=None, out=None, *, policy=NUMPY):
    """Cumulative sum along `axis` (of the flattened array when axis is None)."""
    reject_out(out, "cumsum")
    a = as_value(a, "cumsum")
    a = cast(a, dtype_arg(dtype, "cumsum") if dtype is not None else policy.accumulate_dtype(dtype_of(a)))
    if axis is None or aval_of(a).ndim == 0:
        a = sh.reshape(a, (aval_of(a).size,))
        axis = 0 if axis is None else axis
    (ax,) = normalize_axes(axis, aval_of(a).ndim, "cumsum", policy=policy)
    return cumulative.cumsum(a, ax)


__all__ = ["getitem", "at_set", "at_add", "at_mul", "at_min", "at_max", "at_get", "at", "take", "take_along_axis", "nonzero",
           "flatnonzero", "argwhere", "diagonal", "diag", "diagflat", "trace", "tril", "triu",
           "cumsum", "prod", "NonConcreteBooleanIndexError"]
