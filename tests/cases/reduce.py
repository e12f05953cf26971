"""Cases for reductions and scans (format: see tests/ops/test_primitives.py)."""
import numpy as np

import fgrad.numpy as fnp


def U(*specs):
    """args factory: one uniform array per (low, high, shape)."""
    return lambda rng, dt: tuple(rng.uniform(lo, hi, shape).astype(dt) for lo, hi, shape in specs)


def _with_zeros(rng, dt):
    x = rng.uniform(0.5, 1.5, (3, 4)).astype(dt)
    x[0, 1] = 0.0           # one zero in a row
    x[2, 0] = x[2, 3] = 0.0  # two zeros in a row
    return (x,)


def _f(fn, **kw):
    return lambda x: fn(x, **kw)


X = U((-2, 2, (3, 4)))
X3 = U((-2, 2, (2, 3, 4)))
NODIFF = {"grad": False}

CASES = [
    ("sum", fnp.sum, np.sum, X, {"f32": True}),
    ("sum[axis]", _f(fnp.sum, axis=1), _f(np.sum, axis=1), X3),
    ("sum[axes_keepdims]", _f(fnp.sum, axis=(0, 2), keepdims=True), _f(np.sum, axis=(0, 2), keepdims=True), X3),
    ("sum[int32]", lambda x: fnp.sum(fnp.astype(x, np.int32), axis=0),
     lambda x: np.sum(x.astype(np.int32), axis=0), U((-5, 5, (3, 4))), NODIFF),
    ("sum[uint8_bool]", lambda x: fnp.sum(fnp.astype(x, np.uint8)) + fnp.sum(x > 2),
     lambda x: np.sum(x.astype(np.uint8)) + np.sum(x > 2), U((0, 5, (3, 4))), NODIFF),
    ("sum[method]", lambda x: x.sum(axis=-1), lambda x: x.sum(axis=-1), X),
    ("prod", fnp.prod, np.prod, U((0.5, 1.5, (3, 4))), {"f32": True}),
    ("prod[axis]", _f(fnp.prod, axis=1), _f(np.prod, axis=1), U((-1.5, 1.5, (2, 5, 3)))),
    ("prod[axes_keepdims]", _f(fnp.prod, axis=(0, 2), keepdims=True),
     _f(np.prod, axis=(0, 2), keepdims=True), U((0.5, 1.5, (2, 3, 4)))),
    ("prod[zeros]", _f(fnp.prod, axis=1), _f(np.prod, axis=1), _with_zeros),
    ("prod[zeros_all]", fnp.prod, np.prod, _with_zeros),
    ("prod[odd_length]", _f(fnp.prod, axis=0), _f(np.prod, axis=0), U((0.5, 1.5, (7, 2)))),
    ("prod[int]", lambda x: fnp.prod(fnp.astype(x, np.int32), axis=0),
     lambda x: np.prod(x.astype(np.int32), axis=0), U((1, 5, (3, 4))), NODIFF),
    ("mean", fnp.mean, np.mean, X, {"f32": True}),
    ("mean[axis]", _f(fnp.mean, axis=(0, 2)), _f(np.mean, axis=(0, 2)), X3),
    ("var", fnp.var, np.var, X, {"f32": True}),
    ("var[axis_ddof]", _f(fnp.var, axis=1, ddof=1), _f(np.var, axis=1, ddof=1), X3),
    ("std", fnp.std, np.std, X, {"f32": True}),
    ("std[axis_keepdims]", _f(fnp.std, axis=0, keepdims=True), _f(np.std, axis=0, keepdims=True), X3),
    ("max", fnp.max, np.max, X, {"f32": True}),
    ("max[axis]", _f(fnp.max, axis=1), _f(np.max, axis=1), X3),
    ("max[ties]", _f(fnp.max, axis=1), _f(np.max, axis=1),
     lambda rng, dt: (np.array([[1.0, 3.0, 3.0], [2.0, 0.0, -1.0]], dt),), {"grad": False}),
    ("min", fnp.min, np.min, X, {"f32": True}),
    ("min[axis_keepdims]", _f(fnp.min, axis=-1, keepdims=True), _f(np.min, axis=-1, keepdims=True), X3),
    ("argmax", fnp.argmax, np.argmax, X, NODIFF),
    ("argmax[axis]", _f(fnp.argmax, axis=1), _f(np.argmax, axis=1), X3, NODIFF),
    ("argmin", fnp.argmin, np.argmin, X, NODIFF),
    ("argmin[axis_keepdims]", _f(fnp.argmin, axis=0, keepdims=True), _f(np.argmin, axis=0, keepdims=True),
     X3, NODIFF),
    ("sort", fnp.sort, np.sort, X, {"f32": True}),
    ("sort[axis0]", _f(fnp.sort, axis=0), _f(np.sort, axis=0), X3),
    ("sort[flat]", _f(fnp.sort, axis=None), _f(np.sort, axis=None), X3),
    ("sort[descending]", _f(fnp.sort, axis=1, descending=True), lambda x: -np.sort(-x, axis=1), X3),
    ("argsort", fnp.argsort, np.argsort, X, NODIFF),
    ("argsort[ties_int]", lambda x: fnp.argsort(fnp.astype(x, np.int8), axis=0, descending=True),
     lambda x: np.argsort(~x.astype(np.int8), axis=0, kind="stable"), U((-3, 3, (6, 4))), NODIFF),
    ("cumsum", fnp.cumsum, np.cumsum, X, {"f32": True}),
    ("cumsum[axis]", _f(fnp.cumsum, axis=1), _f(np.cumsum, axis=1), X3),
    ("cumsum[negative_axis]", _f(fnp.cumsum, axis=-1), _f(np.cumsum, axis=-1), X3),
    ("cumsum[int]", lambda x: fnp.cumsum(fnp.astype(x, np.int32), axis=0),
     lambda x: np.cumsum(x.astype(np.int32), axis=0), U((-5, 5, (3, 4))), NODIFF),
    ("cumsum[method]", lambda x: x.cumsum(axis=0) * 1.0, lambda x: x.cumsum(axis=0), X),
]
