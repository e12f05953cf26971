"""Cases for the sparse COO matrix product (format: see tests/ops/test_primitives.py)."""
import numpy as np

from fgrad.ops.sparse import coo_matmul

# a 4 x 3 matrix with a repeated position ((1, 2) twice: they add up) and an empty row
ROWS = np.array([0, 1, 1, 3, 1, 0])
COLS = np.array([2, 0, 2, 1, 2, 0])
SHAPE = (4, 3)


def _dense(a):
    out = np.zeros(SHAPE, a.dtype)
    np.add.at(out, (ROWS, COLS), a)
    return out


def U(*specs):
    """args factory: one uniform array per (low, high, shape)."""
    return lambda rng, dt: tuple(rng.uniform(lo, hi, shape).astype(dt) for lo, hi, shape in specs)


FIXED = np.linspace(-1.0, 1.5, 6)

CASES = [
    ("coo_matmul[matrix]", lambda v, d: coo_matmul(v, d, ROWS, COLS, SHAPE), lambda v, d: _dense(v) @ d,
     U((-2, 2, (6,)), (-2, 2, (3, 2))), {"f32": True}),
    ("coo_matmul[vector]", lambda v, d: coo_matmul(v, d, ROWS, COLS, SHAPE), lambda v, d: _dense(v) @ d,
     U((-2, 2, (6,)), (-2, 2, (3,)))),
    # constant values: vmap batches the dense operand alone (one product, the batch among its columns)
    ("coo_matmul[dense_only]", lambda d: coo_matmul(FIXED.astype(d.dtype), d, ROWS, COLS, SHAPE),
     lambda d: _dense(FIXED.astype(d.dtype)) @ d, U((-2, 2, (3, 2)))),
    ("coo_matmul[squared]", lambda v, d: coo_matmul(v * v, coo_matmul(v, d, COLS, ROWS, SHAPE[::-1]), ROWS, COLS,
                                                     SHAPE),
     lambda v, d: _dense(v * v) @ (_dense(v).T @ d), U((-2, 2, (6,)), (-2, 2, (4, 2)))),
]
