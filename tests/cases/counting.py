"""Cases for counting, searching, cumulative products, differences, order statistics and
pair products (format: see tests/ops/test_primitives.py)."""
import numpy as np

import fgrad.numpy as fnp
from fgrad.ops import search


def U(*specs):
    """args factory: one uniform array per (low, high, shape)."""
    return lambda rng, dt: tuple(rng.uniform(lo, hi, shape).astype(dt) for lo, hi, shape in specs)


def _with_zeros(rng, dt):
    x = rng.uniform(0.5, 1.5, (3, 4)).astype(dt)
    x[0, 1] = 0.0
    x[2, 0] = x[2, 3] = 0.0
    return (x,)


def _sorted_rows(rng, dt):
    return np.sort(rng.uniform(-2, 2, (2, 5)), axis=-1).astype(dt), rng.uniform(-2, 2, (2, 3)).astype(dt)


def _counts(rng, dt):
    return rng.uniform(0.5, 1.5, (7,)).astype(dt), np.array([1, 4, 1, 0, 4, 4, 2])


X = U((-2, 2, (3, 4)))
X3 = U((-2, 2, (2, 3, 4)))
NODIFF = {"grad": False}
EDGES = np.array([-1.5, -0.5, 0.0, 0.5, 1.5])

CASES = [
    ("searchsorted[1d]", lambda x: search.searchsorted(EDGES, x), lambda x: np.searchsorted(EDGES, x), X, NODIFF),
    ("searchsorted[rows_right]", lambda s, v: search.searchsorted(s, v, "right"),
     lambda s, v: np.stack([np.searchsorted(a, b, "right") for a, b in zip(s, v)]), _sorted_rows, NODIFF),
    ("fnp.searchsorted", lambda x: fnp.searchsorted(EDGES, x, "right"), lambda x: np.searchsorted(EDGES, x, "right"),
     X, NODIFF),
    ("digitize", lambda x: fnp.digitize(x, EDGES), lambda x: np.digitize(x, EDGES), X, NODIFF),
    ("histogram[weights]", lambda x, w: fnp.histogram(x, 4, range=(-2, 2), weights=w)[0],
     lambda x, w: np.histogram(x, 4, range=(-2, 2), weights=w)[0], U((-2, 2, (9,)), (0.5, 1.5, (9,)))),
    ("bincount[weights]", lambda w, i: fnp.bincount(i, w, length=6), lambda w, i: np.bincount(i, w, 6), _counts),
    ("cumprod[zeros]", lambda x: fnp.cumprod(x, axis=1), lambda x: np.cumprod(x, axis=1), _with_zeros, {"f32": True}),
    ("cumprod[flat]", fnp.cumprod, np.cumprod, X3),
    ("diff[n2_prepend]", lambda x: fnp.diff(x, 2, axis=0, prepend=0.5), lambda x: np.diff(x, 2, axis=0, prepend=0.5),
     X),
    ("quantile[linear]", lambda x: fnp.quantile(x, [0.2, 0.7], axis=1), lambda x: np.quantile(x, [0.2, 0.7], axis=1),
     X3, {"f32": True}),
    ("quantile[midpoint_keepdims]", lambda x: fnp.quantile(x, 0.3, axis=(0, 2), method="midpoint", keepdims=True),
     lambda x: np.quantile(x, 0.3, axis=(0, 2), method="midpoint", keepdims=True), X3),
    ("nanquantile", lambda x: fnp.nanquantile(fnp.where(x > 1.5, fnp.nan, x), 0.4, axis=-1),
     lambda x: np.nanquantile(np.where(x > 1.5, np.nan, x), 0.4, axis=-1), X3),
    ("median", lambda x: fnp.median(x, axis=0), lambda x: np.median(x, axis=0), X),
    ("nanmedian", lambda x: fnp.nanmedian(fnp.where(x > 1.5, fnp.nan, x), axis=1),
     lambda x: np.nanmedian(np.where(x > 1.5, np.nan, x), axis=1), X3),
    ("kron", fnp.kron, np.kron, U((-2, 2, (2, 3)), (-2, 2, (2, 2)))),
    ("cross", lambda a, b: fnp.cross(a, b, axisa=0, axisc=0), lambda a, b: np.cross(a, b, axisa=0, axisc=0),
     U((-2, 2, (3, 2)), (-2, 2, (2, 3)))),
    ("hypot", fnp.hypot, np.hypot, U((-2, 2, (3, 4)), (-2, 2, (4,))), {"f32": True}),
    ("unique[values]", lambda x: fnp.unique(fnp.round(x)), lambda x: np.unique(np.round(x)), X, {"jit": False}),
]
