"""Indexing primitives: gather by a NumPy index (getitem), its transpose (scatter_add),
and reversal along axes (rev).

`getitem_p(x, *index_arrays, spec=...)` is `x[index]`, where `spec` is a hashable static
description of the index, one entry per indexed axis of `x` (trailing axes may be left
out, meaning `:`):
  * an `int` (non-negative, in bounds),
  * a `Slice(start, stop, step)`,
  * `ARRAY`, standing for the next integer index array among the operands.
NumPy's rules apply unchanged, including where advanced-index dimensions go (first when
the advanced entries are not adjacent) and that an int beside an array index counts as an
advanced entry. `None`, `Ellipsis` and boolean masks are removed by fgrad.numpy.getitem
before binding. Both primitives are linear in their first operand and each is the other's
transpose, so every derivative of any order is again a gather or a scatter.
"""
from __future__ import annotations

import numpy as np

from ..core.avals import ShapedArray
from ..core.errors import FgradIndexError, ShapeError
from ..core.primitive import Primitive
from ..core.rules import def_linear
from ._batching import loop_batch
from .shape import move_axis, move_to_front


class Slice:
    """A hashable, printable slice with normalised bounds (`stop` may be None)."""

    __slots__ = ("start", "stop", "step")

    def __init__(self, start, stop, step) -> None:
        self.start, self.stop, self.step = start, stop, step

    def to_slice(self):
        return slice(self.start, self.stop, self.step)

    def length(self, size: int) -> int:
        return len(range(*self.to_slice().indices(size)))

    def __eq__(self, other) -> bool:
        return isinstance(other, Slice) and (self.start, self.stop, self.step) == (
            other.start, other.stop, other.step)

    def __hash__(self) -> int:
        return hash(("Slice", self.start, self.stop, self.step))

    def __repr__(self) -> str:
        s = "" if self.start is None else str(self.start)
        e = "" if self.stop is None else str(self.stop)
        return f"{s}:{e}" if self.step == 1 else f"{s}:{e}:{self.step}"


class _ArrayEntry:
    """Placeholder in a spec for the next integer index array operand."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "[]"

    def __reduce__(self):
        return "ARRAY"


ARRAY = _ArrayEntry()


def normalize_slice(s: slice, size: int) -> Slice:
    """`s` on an axis of `size` as a Slice with explicit in-range bounds (an empty
    selection becomes 0:0; a negative step running to the front has stop None)."""
    start, stop, step = s.indices(size)
    if not len(range(start, stop, step)):
        return Slice(0, 0, 1)
    if step < 0 and stop < 0:
        stop = None
    return Slice(start, stop, step)


def build_index(spec, arrays):
    """The NumPy index tuple that `spec` with these index arrays stands for."""
    it = iter(arrays)
    return tuple(next(it) if e is ARRAY else e.to_slice() if isinstance(e, Slice) else e for e in spec)


def gather_shape(shape, spec, array_shapes) -> tuple:
    """The shape of x[index] for x of `shape` (NumPy's basic and advanced indexing rules)."""
    if len(spec) > len(shape):
        raise ShapeError(f"getitem: {len(spec)} indices for an array of shape {shape}")
    array_shapes = list(array_shapes)
    if array_shapes:
        advanced = [i for i, e in enumerate(spec) if e is ARRAY or isinstance(e, int)]
        try:
            bshape = tuple(np.broadcast_shapes(*array_shapes))
        except ValueError:
            raise FgradIndexError("shape mismatch: indexing arrays could not be broadcast together with "
                             f"shapes {' '.join(str(tuple(s)) for s in array_shapes)}") from None
    basic = []
    for i, d in enumerate(shape):
        e = spec[i] if i < len(spec) else Slice(None, None, 1)
        if isinstance(e, Slice):
            basic.append((i, e.length(d)))
        elif isinstance(e, int) and not -d <= e < d:
            raise FgradIndexError(f"index {e} is out of bounds for axis {i} with size {d}")
    if not array_shapes:
        return tuple(n for _, n in basic)
    if advanced == list(range(advanced[0], advanced[-1] + 1)):
        before = tuple(n for i, n in basic if i < advanced[0])
        after = tuple(n for i, n in basic if i > advanced[-1])
        return before + bshape + after
    return bshape + tuple(n for _, n in basic)


def _check_arrays(name, avals):
    for a in avals:
        if a.dtype.kind not in "iu":
            raise FgradIndexError(f"{name}: index arrays must be integers, got {a.dtype}")


# --- getitem (gather) ---------------------------------------------------------------------

getitem_p = Primitive("getitem", view=True)


def _getitem_impl(x, *arrays, spec, xp):
    if xp is not np:
        arrays = [xp.asarray(a) for a in arrays]
    return x[build_index(spec, arrays)]


def _getitem_aval(x, *arrays, spec):
    _check_arrays("getitem", arrays)
    return ShapedArray(gather_shape(x.shape, spec, [a.shape for a in arrays]), x.dtype)


getitem_p.def_impl(_getitem_impl)
getitem_p.def_abstract_eval(_getitem_aval)
def_linear(getitem_p, lambda ct, x_aval, *arrays, spec: scatter_add(ct, arrays, spec, x_aval.shape))


def _batched_spec(spec, array_shapes):
    """The spec with a leading ':' for a batch axis in front, and where the per-example
    result's axes land in the batched result: (spec, batch axis of the result)."""
    new = (Slice(None, None, 1),) + tuple(spec)
    advanced = [i for i, e in enumerate(spec) if e is ARRAY or isinstance(e, int)] if array_shapes else []
    if not advanced or advanced == list(range(advanced[0], advanced[-1] + 1)):
        return new, 0
    return new, len(np.broadcast_shapes(*array_shapes))


def _getitem_batch(n, vals, dims, *, spec):
    if any(d is not None for d in dims[1:]):
        return loop_batch(getitem_p, n, vals, dims, spec=spec)
    x, *arrays = vals
    new, out_dim = _batched_spec(spec, [a.shape for a in arrays])
    return getitem(move_to_front(x, dims[0]), arrays, new), out_dim


getitem_p.def_batch(_getitem_batch)


def getitem(x, arrays, spec):
    """x[index] for a normalised `spec` (see the module docstring) and its index arrays."""
    return getitem_p.bind(x, *arrays, spec=tuple(spec))


# --- scatter_add (the transpose of getitem) ----------------------------------------------

scatter_add_p = Primitive("scatter_add")


def _one_axis_take(spec, arrays, shape) -> int | None:
    """The axis that `spec` selects along when it is one integer array on one axis with every
    other axis whole (x[:, idx] and the like: an embedding's or take's cotangent); else None."""
    if len(arrays) != 1 or arrays[0].dtype.kind not in "iu":
        return None
    axis = None
    for i, e in enumerate(spec):
        if e is ARRAY:
            axis = i
        elif not (isinstance(e, Slice) and e.to_slice().indices(shape[i]) == (0, shape[i], 1)):
            return None
    return axis


# np.add.at costs a few nanoseconds per element added; a round costs a few microseconds and
# its fancy-index add. Below _ROUNDS_MIN_ELEMENTS elements np.add.at is quick either way, and
# the rounds are worth it while there are at most one per _ELEMENTS_PER_ROUND elements.
_ROUNDS_MIN_ELEMENTS = 8192
_ELEMENTS_PER_ROUND = 2048


def _scatter_add_rows(out, idx, updates, axis: int) -> bool:
    """out[..., idx[k], ...] += updates[..., k, ...] for k in index order, as np.add.at does it,
    in rounds: round r adds every row's r-th update, so a round never names a row twice (one
    buffered fancy-index add) and each element still sums its updates from zero in index order,
    which keeps the result bit for bit np.add.at's. Returns False, having written nothing, where
    np.add.at is expected to be faster (one row repeated many times) or an index is out of
    bounds (np.add.at then raises its IndexError)."""
    n = out.shape[axis]
    idx = idx.reshape(-1)
    m = idx.size
    if m == 0:
        return True
    elements = updates.size
    if elements < _ROUNDS_MIN_ELEMENTS:
        return False
    if idx.dtype.kind == "i":
        if idx.min() < -n:
            return False
        idx = np.where(idx < 0, idx + n, idx)
    if idx.max() >= n:
        return False
    order = np.argsort(idx, kind="stable")
    rows = idx[order]
    # rank of each update among those to its row: its position less that of its row's first
    starts = np.flatnonzero(np.concatenate(([True], rows[1:] != rows[:-1])))
    counts = np.diff(np.append(starts, m))
    rounds = int(counts.max())
    if rounds == 1:
        out_v, upd_v = np.moveaxis(out, axis, 0), np.moveaxis(updates.reshape(
            out.shape[:axis] + (m,) + out.shape[axis + 1:]), axis, 0)
        out_v[idx] = upd_v + out.dtype.type(0)  # every row once: u + 0 (-0.0 becomes +0.0)
        return True
    if rounds * _ELEMENTS_PER_ROUND > elements:
        return False
    rank = np.arange(m) - np.repeat(starts, counts)
    by_round = np.argsort(rank, kind="stable")
    sizes = np.bincount(rank, minlength=rounds)
    src, dst = order[by_round], rows[by_round]
    out_v = np.moveaxis(out, axis, 0)
    upd_v = np.moveaxis(updates.reshape(out.shape[:axis] + (m,) + out.shape[axis + 1:]), axis, 0)
    lo = 0
    for size in sizes.tolist():
        rows_r = dst[lo:lo + size]
        # update + partial sum, the operand order np.add.at's loop gives NaN + NaN here (the
        # CPU returns the first operand's payload); every other value is the same either way
        part = upd_v[src[lo:lo + size]]
        np.add(part, out_v[rows_r], out=part)
        out_v[rows_r] = part
        lo += size
    return True


def _scatter_add_impl(updates, *arrays, spec, shape, xp):
    out = xp.zeros(shape, dtype=updates.dtype)
    if xp is not np:
        arrays = [xp.asarray(a) for a in arrays]
    index = build_index(spec, arrays)
    if not arrays:
        out[index] = updates  # basic indexing never repeats an element
    elif xp is np:
        axis = _one_axis_take(spec, arrays, shape)
        if axis is None or not _scatter_add_rows(out, arrays[0], updates, axis):
            np.add.at(out, index, updates)
    else:
        import cupyx  # CuPy is optional: imported only when an impl runs on a CuPy array
        cupyx.scatter_add(out, index, updates)
    return out


def _scatter_add_aval(updates, *arrays, spec, shape):
    _check_arrays("scatter_add", arrays)
    want = gather_shape(shape, spec, [a.shape for a in arrays])
    if updates.shape != want:
        raise ShapeError(f"scatter_add: updates of shape {updates.shape} for an index that selects "
                         f"shape {want} from shape {tuple(shape)}")
    return ShapedArray(shape, updates.dtype)


scatter_add_p.def_impl(_scatter_add_impl)
scatter_add_p.def_abstract_eval(_scatter_add_aval)
def_linear(scatter_add_p, lambda ct, u_aval, *arrays, spec, shape: getitem(ct, arrays, spec))


def _scatter_add_batch(n, vals, dims, *, spec, shape):
    if any(d is not None for d in dims[1:]):
        return loop_batch(scatter_add_p, n, vals, dims, spec=spec, shape=shape)
    u, *arrays = vals
    new, u_dim = _batched_spec(spec, [a.shape for a in arrays])
    if dims[0] != u_dim:
        u = move_axis(u, dims[0], u_dim)
    return scatter_add(u, arrays, new, (n,) + tuple(shape)), 0


scatter_add_p.def_batch(_scatter_add_batch)


def scatter_add(updates, arrays, spec, shape):
    """zeros(shape) with `updates` added at [index]; repeated positions accumulate."""
    return scatter_add_p.bind(updates, *arrays, spec=tuple(spec), shape=tuple(int(d) for d in shape))


# --- rev (flip) ---------------------------------------------------------------------------

rev_p = Primitive("rev", view=True)
rev_p.def_impl(lambda x, *, dimensions, xp: xp.flip(x, axis=dimensions))


def _rev_aval(x, *, dimensions):
    if any(not 0 <= d < x.ndim for d in dimensions):
        raise ShapeError(f"rev: dimensions {dimensions} out of range for shape {x.shape}")
    return ShapedArray(x.shape, x.dtype)


rev_p.def_abstract_eval(_rev_aval)
def_linear(rev_p, lambda ct, x_aval, *, dimensions: rev(ct, dimensions))


def _rev_batch(n, vals, dims, *, dimensions):
    return rev(move_to_front(vals[0], dims[0]), tuple(d + 1 for d in dimensions)), 0


rev_p.def_batch(_rev_batch)


def rev(x, dimensions):
    """Reverse `x` along each axis in `dimensions`."""
    dimensions = tuple(sorted(int(d) for d in dimensions))
    if not dimensions:
        return x
    return rev_p.bind(x, dimensions=dimensions)
