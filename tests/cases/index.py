"""Cases for indexing, diagonals, triangles and array creation (format: see
tests/ops/test_primitives.py)."""
import numpy as np

import fgrad.numpy as fnp


def U(*specs):
    """args factory: one uniform array per (low, high, shape)."""
    return lambda rng, dt: tuple(rng.uniform(lo, hi, shape).astype(dt) for lo, hi, shape in specs)


def item(idx):
    """x[idx] for both fgrad (through Tracer.__getitem__ under transforms) and NumPy."""
    return lambda x: x[idx] * 1.0, lambda x: x[idx] * 1.0


def getitem(idx):
    return lambda x: fnp.getitem(x, idx), lambda x: x[idx]


X = U((-2, 2, (3, 4, 5)))
M = U((-2, 2, (4, 5)))
SQ = U((-2, 2, (4, 4)))
MASK = np.array([[True, False, True, True, False], [False, False, True, False, True],
                 [True, True, False, False, False], [False, True, False, True, True]])
IDX = np.array([2, 0, 2, -1])


def _with_index(rng, dt):
    return rng.uniform(-2, 2, (4, 5)).astype(dt), np.array([[3, 0], [1, 3]])


def _with_along(rng, dt):
    return rng.uniform(-2, 2, (3, 4)).astype(dt), np.array([[0, 3, 3], [1, 1, 0], [2, 0, 1]])


CASES = [
    ("getitem[int]", *getitem(1), X, {"f32": True}),
    ("getitem[negative_int]", *item(-1), X),
    ("getitem[ints]", *item((2, -1, 3)), X),
    ("getitem[slice]", *getitem(slice(1, 3)), X, {"f32": True}),
    ("getitem[slices]", *item((slice(None), slice(1, None), slice(None, -2))), X),
    ("getitem[negative_step]", *item((slice(None, None, -1), 1)), X),
    ("getitem[negative_step_bounds]", *item((slice(None), slice(3, 0, -1))), X),
    ("getitem[stride]", *item((slice(None), slice(None), slice(None, None, 2))), X),
    ("getitem[negative_stride]", *item((slice(None, None, -2), slice(3, None, -3))), X),
    ("getitem[empty_slice]", *item(slice(2, 1)), X),
    ("getitem[none]", *getitem((None, 1, None)), X),
    ("getitem[ellipsis]", *getitem((Ellipsis, 1)), X),
    ("getitem[ellipsis_middle]", *item((0, Ellipsis, slice(1, 3), None)), X),
    ("getitem[int_array]", *getitem(IDX), M, {"f32": True}),
    ("getitem[int_array_list]", *item([0, 2, 2]), X),
    ("getitem[int_array_2d]", *item((slice(None), np.array([[1, 0], [3, 3]]))), X),
    ("getitem[int_arrays_broadcast]", *item((np.array([[0], [2]]), slice(None), np.array([1, 4, 4]))), X),
    ("getitem[int_and_array]", *item((1, slice(None), np.array([0, 4]))), X),
    ("getitem[array_adjacent]", *item((slice(1, 3), np.array([0, 3]), np.array([4, 4]))), X),
    ("getitem[array_negative_step]", *item((np.array([0, 0, 2]), slice(None, None, -1))), X),
    ("getitem[array_none]", *item((np.array([0, 1]), None, np.array([1, 2]))), X),
    ("getitem[bool_mask]", *getitem(MASK), M, {"f32": True}),
    ("getitem[bool_mask_axis]", *item((slice(None), np.array([True, False, True, False]))), X),
    ("getitem[bool_mask_and_int]", *item((np.array([True, False, True]), 2)), X),
    ("getitem[bool_mask_from_input]", lambda x: x[x > 0.5], lambda x: x[x > 0.5], M, {"jit": False}),
    ("getitem[traced_index]", lambda x, i: x[i], lambda x, i: x[i], _with_index),
    ("getitem[traced_index_and_int]", lambda x, i: x[1, i], lambda x, i: x[1, i], _with_index),
    ("getitem[scalar]", *item((1, 2, 3)), X),
    ("take", lambda x: fnp.take(x, IDX), lambda x: np.take(x, IDX), M),
    ("take[axis]", lambda x: fnp.take(x, [4, 0, 0], axis=2), lambda x: np.take(x, [4, 0, 0], axis=2), X),
    ("take[wrap]", lambda x: fnp.take(x, [7, -8], axis=0, mode="wrap"),
     lambda x: np.take(x, [7, -8], axis=0, mode="wrap"), M),
    ("take[clip]", lambda x: fnp.take(x, [7, -8, 1], axis=1, mode="clip"),
     lambda x: np.take(x, [7, -8, 1], axis=1, mode="clip"), M),
    ("take[traced]", lambda x, i: fnp.take(x, i, axis=1), lambda x, i: np.take(x, i, axis=1), _with_index),
    ("take[method]", lambda x: x.take([1, 1, 0], axis=0) * 1.0, lambda x: x.take([1, 1, 0], axis=0), M),
    ("take_along_axis", lambda x, i: fnp.take_along_axis(x, i, axis=1),
     lambda x, i: np.take_along_axis(x, i, axis=1), _with_along),
    ("take_along_axis[axis0]", lambda x, i: fnp.take_along_axis(x, i[:, :1], axis=0),
     lambda x, i: np.take_along_axis(x, i[:, :1], axis=0), _with_along),
    ("diagonal", fnp.diagonal, np.diagonal, M),
    ("diagonal[offset]", lambda x: fnp.diagonal(x, -1), lambda x: np.diagonal(x, -1), M),
    ("diagonal[axes]", lambda x: fnp.diagonal(x, 1, 2, 0), lambda x: np.diagonal(x, 1, 2, 0), X),
    ("diag", fnp.diag, np.diag, SQ, {"f32": True}),
    ("diag[1d]", fnp.diag, np.diag, U((-2, 2, (3,)))),
    ("diag[1d_offset]", lambda v: fnp.diag(v, -2), lambda v: np.diag(v, -2), U((-2, 2, (3,)))),
    ("diag[2d_offset]", lambda x: fnp.diag(x, 2), lambda x: np.diag(x, 2), M),
    ("diagflat", fnp.diagflat, np.diagflat, U((-2, 2, (2, 2)))),
    ("trace", fnp.trace, np.trace, SQ, {"f32": True}),
    ("trace[offset_axes]", lambda x: fnp.trace(x, 1, 0, 2), lambda x: np.trace(x, 1, 0, 2), X),
    ("tril", fnp.tril, np.tril, M),
    ("tril[k_batch]", lambda x: fnp.tril(x, -1), lambda x: np.tril(x, -1), X),
    ("triu", fnp.triu, np.triu, M),
    ("triu[1d]", lambda v: fnp.triu(v, -1), lambda v: np.triu(v, -1), U((-2, 2, (3,)))),
    ("triu[k]", lambda x: fnp.triu(x, 2), lambda x: np.triu(x, 2), M),
    ("at_set", lambda x, v: fnp.at_set(x, (slice(None), [0, 2]), v),
     lambda x, v: _np_set(x, (slice(None), [0, 2]), v),
     U((-2, 2, (3, 4)), (-2, 2, (3, 1)))),
    ("at_set[duplicates]", lambda x, v: fnp.at_set(x, [0, 2, 0], v), lambda x, v: _np_set(x, [0, 2, 0], v),
     U((-2, 2, (3, 4)), (-2, 2, (3, 4)))),
    ("at_set[traced_index]", lambda x, v, i: fnp.at_set(x, i, v), lambda x, v, i: _np_set(x, i, v),
     lambda rng, dt: (rng.uniform(-2, 2, (4, 3)).astype(dt), rng.uniform(-2, 2, (3,)).astype(dt),
                      np.array([2, 0]))),
    ("at_set[slice]", lambda x: fnp.at(x)[1:, ::2].set(0.0),
     lambda x: _np_set(x, (slice(1, None), slice(None, None, 2)), 0.0), M),
    ("at_add", lambda x, v: fnp.at_add(x, [1, 1, 3], v), lambda x, v: _np_add(x, [1, 1, 3], v),
     U((-2, 2, (4, 2)), (-2, 2, (3, 2)))),
    ("at_add[scalar]", lambda x, v: fnp.at(x)[2, 1].add(v), lambda x, v: _np_add(x, (2, 1), v),
     U((-2, 2, (4, 2)), (-2, 2, ()))),
    # creation: constants combined with inputs so that derivatives flow
    ("eye", lambda x: fnp.eye(3, 4, k=1) * x, lambda x: np.eye(3, 4, k=1) * x, U((-2, 2, (3, 4)))),
    ("identity", lambda x: fnp.identity(3) + x, lambda x: np.identity(3) + x, U((-2, 2, (3, 3)))),
    ("zeros_like", lambda x: fnp.zeros_like(x) + x * x, lambda x: np.zeros_like(x) + x * x, M),
    ("ones_like", lambda x: fnp.ones_like(x) * x, lambda x: np.ones_like(x) * x, M),
    ("full_like", lambda x: fnp.full_like(x, 2.5) * x, lambda x: np.full_like(x, 2.5) * x, M),
    ("full_like[traced_fill]", lambda x, c: fnp.full_like(x, c) * x, lambda x, c: np.full_like(x, c) * x,
     U((-2, 2, (2, 3)), (-2, 2, ()))),
    ("full[traced_fill]", lambda c: fnp.full((2, 3), c), lambda c: np.full((2, 3), c), U((-2, 2, ()))),
    ("zeros", lambda x: fnp.zeros((2, 3)) + x, lambda x: np.zeros((2, 3)) + x, U((-2, 2, (3,)))),
    ("ones", lambda x: fnp.ones(3) - x, lambda x: np.ones(3) - x, U((-2, 2, (3,)))),
    ("full", lambda x: fnp.full((3,), 7.0) * x, lambda x: np.full((3,), 7.0) * x, U((-2, 2, (3,)))),
    ("arange", lambda x: fnp.arange(1, 7, 2) * x, lambda x: np.arange(1, 7, 2) * x, U((-2, 2, (3,)))),
    ("linspace", lambda x: fnp.linspace(0, 1, 5) * x, lambda x: np.linspace(0, 1, 5) * x, U((-2, 2, (5,)))),
    ("linspace[traced]", lambda a, b: fnp.linspace(a, b, 4), lambda a, b: np.linspace(a, b, 4),
     U((-2, 2, ()), (-2, 2, ()))),
    ("linspace[traced_arrays]", lambda a, b: fnp.linspace(a, b, 3, endpoint=False, axis=1),
     lambda a, b: np.linspace(a, b, 3, endpoint=False, axis=1), U((-2, 2, (2,)), (-2, 2, (2,)))),
]


def _np_set(x, idx, v):
    y = np.array(x, copy=True)
    y[idx] = v
    return y


def _np_add(x, idx, v):
    y = np.array(x, copy=True)
    np.add.at(y, idx, v)
    return y
