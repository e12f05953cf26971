"""Registry cases (format: tests/ops/test_primitives.py) for fgrad.scipy.linalg and
fgrad.scipy.signal, against SciPy."""
import numpy as np
import scipy.linalg as sl
import scipy.signal as ssig

import fgrad.scipy.linalg as fl
import fgrad.scipy.signal as fsig
from fgrad.ops import matrix_functions as mf
from tests.cases.linalg import LOOSE, _spd, normal, spd, square


def banded(lower, upper, n, k=None):
    """args maker: banded storage (l + u + 1, n) of a diagonally dominant matrix, and b."""
    def make(rng, dt):
        ab = rng.standard_normal((lower + upper + 1, n))
        ab[upper] += 2.0 * (lower + upper + 1)
        b = rng.standard_normal((n,) if k is None else (n, k))
        return ab.astype(dt), b.astype(dt)
    return make


def _sylvester_args(rng, dt):
    a = rng.standard_normal((3, 3)) + 3 * np.eye(3)
    b = rng.standard_normal((2, 2)) + 3 * np.eye(2)
    return a.astype(dt), b.astype(dt), rng.standard_normal((3, 2)).astype(dt)


def _dense_from_banded(lower, upper, ab):
    n = ab.shape[1]
    out = np.zeros((n, n), ab.dtype)
    for j in range(n):
        for i in range(max(0, j - upper), min(n, j + lower + 1)):
            out[i, j] = ab[upper + i - j, j]
    return out


CASES = [
    ("scipy.linalg.solve_triangular[lower]", lambda a, b: fl.solve_triangular(a, b, lower=True),
     lambda a, b: sl.solve_triangular(a, b, lower=True), square(4, (), (4, 2)), LOOSE),
    ("scipy.linalg.solve_triangular[upper_trans_unit]",
     lambda a, b: fl.solve_triangular(a, b, trans="T", unit_diagonal=True),
     lambda a, b: sl.solve_triangular(a, b, trans="T", unit_diagonal=True),
     lambda rng, dt: ((0.3 * rng.standard_normal((4, 4))).astype(dt), rng.standard_normal(4).astype(dt)), LOOSE),
    ("scipy.linalg.solve_banded[matrix_rhs]", lambda ab, b: fl.solve_banded((1, 2), ab, b),
     lambda ab, b: sl.solve_banded((1, 2), ab, b), banded(1, 2, 5, 2), LOOSE),
    ("scipy.linalg.solve_banded[vector]", lambda ab, b: fl.solve_banded((2, 0), ab, b),
     lambda ab, b: sl.solve_banded((2, 0), ab, b), banded(2, 0, 4), LOOSE),
    ("ops.banded_solve[transposed]", lambda ab, b: mf.banded_solve(ab, b, lower=1, upper=1, transpose_a=True),
     lambda ab, b: np.linalg.solve(_dense_from_banded(1, 1, ab).T, b), banded(1, 1, 4, 3), LOOSE),
    ("scipy.linalg.solve_sylvester", fl.solve_sylvester, sl.solve_sylvester, _sylvester_args, LOOSE),
    ("scipy.linalg.sqrtm", fl.sqrtm, sl.sqrtm, spd(3), {"rtol": 1e-8}),
    ("scipy.linalg.sqrtm[batched_nonsymmetric]", fl.sqrtm, lambda a: np.stack([sl.sqrtm(x) for x in a]),
     lambda rng, dt: ((np.eye(3) * 2 + 0.3 * rng.standard_normal((2, 3, 3))).astype(dt),), {"rtol": 1e-8}),
    ("scipy.linalg.expm", fl.expm, sl.expm, lambda rng, dt: ((0.5 * rng.standard_normal((2, 3, 3))).astype(dt),),
     {"rtol": 1e-8, "f32": True}),
    ("scipy.linalg.expm_frechet", lambda a, e: fl.expm_frechet(a, e, compute_expm=False),
     lambda a, e: sl.expm_frechet(a, e, compute_expm=False),
     lambda rng, dt: tuple((0.5 * rng.standard_normal((3, 3))).astype(dt) for _ in range(2)), {"rtol": 1e-8}),
    ("scipy.linalg.cholesky[upper]", fl.cholesky, sl.cholesky, spd(3), LOOSE),
    ("scipy.linalg.cho_solve", lambda a, b: fl.cho_solve(fl.cho_factor(a, lower=True), b),
     lambda a, b: sl.cho_solve(sl.cho_factor(a, lower=True), b),
     lambda rng, dt: (_spd(rng, dt, 3), rng.standard_normal((3, 2)).astype(dt)), LOOSE),
    ("scipy.linalg.eigh[eigvals_only]", lambda a: fl.eigh(a, eigvals_only=True),
     lambda a: sl.eigh(a, eigvals_only=True), spd(4), LOOSE),
    ("scipy.linalg.solve[transposed]", lambda a, b: fl.solve(a, b, transposed=True),
     lambda a, b: sl.solve(a, b, transposed=True), square(3, (), (3,)), LOOSE),
    ("scipy.linalg.inv", fl.inv, sl.inv, square(3), LOOSE),
    ("scipy.linalg.det", fl.det, sl.det, square(3), LOOSE),
    ("scipy.signal.convolve[full_1d]", fsig.convolve, ssig.convolve, normal((7,), (3,))),
    ("scipy.signal.convolve[same_2d]", lambda a, b: fsig.convolve(a, b, mode="same"),
     lambda a, b: ssig.convolve(a, b, mode="same"), normal((4, 5), (2, 3))),
    ("scipy.signal.convolve[valid_3d]", lambda a, b: fsig.convolve(a, b, mode="valid"),
     lambda a, b: ssig.convolve(a, b, mode="valid"), normal((3, 4, 5), (2, 2, 3))),
    ("scipy.signal.convolve[valid_swapped]", lambda a, b: fsig.convolve(a, b, mode="valid"),
     lambda a, b: ssig.convolve(a, b, mode="valid"), normal((2, 3), (4, 4))),
    ("scipy.signal.correlate[same]", lambda a, b: fsig.correlate(a, b, mode="same"),
     lambda a, b: ssig.correlate(a, b, mode="same"), normal((6, 3), (3, 2))),
    ("scipy.signal.correlate[valid_swapped]", lambda a, b: fsig.correlate(a, b, mode="valid"),
     lambda a, b: ssig.correlate(a, b, mode="valid"), normal((3,), (5,))),
]

# --- LU, Schur, Hessenberg (fgrad/ops/linalg_lu.py) ------------------------------------------
# LU on well-conditioned matrices with well-separated pivots (no ties in the pivot choice, so
# the finite differences never switch permutation). Schur and Hessenberg have values only (no
# derivative, as in JAX). These primitives factorize on the host with SciPy and refuse CuPy
# arrays by design (see "gpu" in tests/ops/test_primitives.py).
HOST_ONLY = {"gpu": False}


def _lu_args(m, n, batch=(), *more):
    def make(rng, dt):
        a = rng.standard_normal(batch + (m, n))
        k = min(m, n)
        a[..., range(k), range(k)] += 3.0 * np.sign(a[..., range(k), range(k)] + 1e-3)
        return (a.astype(dt),) + tuple(rng.standard_normal(s).astype(dt) for s in more)
    return make


def _lu_solve_args(rng, dt):
    a = _lu_args(4, 4)(rng, np.float64)[0]
    lu_, piv = sl.lu_factor(a)
    return lu_.astype(dt), piv, rng.standard_normal((4, 2)).astype(dt)


def _stack(fn):
    return lambda a: np.stack([fn(x) for x in a])


CASES += [
    ("scipy.linalg.lu[L]", lambda a: fl.lu(a)[1], lambda a: sl.lu(a)[1], _lu_args(4, 4), {**LOOSE, **HOST_ONLY}),
    ("scipy.linalg.lu[U]", lambda a: fl.lu(a)[2], lambda a: sl.lu(a)[2], _lu_args(4, 4), {**LOOSE, **HOST_ONLY}),
    ("scipy.linalg.lu[P]", lambda a: fl.lu(a)[0], lambda a: sl.lu(a)[0], _lu_args(4, 4), {"grad": False, **HOST_ONLY}),
    ("scipy.linalg.lu[wide_U]", lambda a: fl.lu(a)[2], lambda a: sl.lu(a)[2], _lu_args(3, 5), {**LOOSE, **HOST_ONLY}),
    ("scipy.linalg.lu[tall_L]", lambda a: fl.lu(a)[1], lambda a: sl.lu(a)[1], _lu_args(5, 3), {**LOOSE, **HOST_ONLY}),
    ("scipy.linalg.lu[permute_l_batched]", lambda a: fl.lu(a, permute_l=True)[0],
     _stack(lambda x: sl.lu(x, permute_l=True)[0]), _lu_args(3, 3, (2,)), {**LOOSE, **HOST_ONLY}),
    ("scipy.linalg.lu_factor", lambda a: fl.lu_factor(a)[0], lambda a: sl.lu_factor(a)[0], _lu_args(4, 4),
     {**LOOSE, **HOST_ONLY, "f32": True}),
    ("scipy.linalg.lu_factor[piv]", lambda a: fl.lu_factor(a)[1], lambda a: sl.lu_factor(a)[1], _lu_args(4, 4),
     {"grad": False, **HOST_ONLY}),
    ("scipy.linalg.lu_solve", lambda lu_, piv, b: fl.lu_solve((lu_, piv), b),
     lambda lu_, piv, b: sl.lu_solve((lu_, piv), b), _lu_solve_args, LOOSE),
    ("scipy.linalg.lu_solve[trans]", lambda lu_, piv, b: fl.lu_solve((lu_, piv), b, trans=1),
     lambda lu_, piv, b: sl.lu_solve((lu_, piv), b, trans=1), _lu_solve_args, LOOSE),
    ("scipy.linalg.lu_factor+lu_solve", lambda a, b: fl.lu_solve(fl.lu_factor(a), b),
     lambda a, b: sl.lu_solve(sl.lu_factor(a), b), _lu_args(4, 4, (), (4,)), {**LOOSE, **HOST_ONLY}),
    ("scipy.linalg.schur[T]", lambda a: fl.schur(a)[0], lambda a: sl.schur(a)[0], square(4),
     {"grad": False, **LOOSE, **HOST_ONLY}),
    ("scipy.linalg.schur[Z]", lambda a: fl.schur(a)[1], lambda a: sl.schur(a)[1], square(4),
     {"grad": False, **LOOSE, **HOST_ONLY}),
    ("scipy.linalg.schur[complex]", lambda a: fl.schur(a, output="complex")[0],
     lambda a: sl.schur(a, output="complex")[0], square(3), {"grad": False, **LOOSE, **HOST_ONLY}),
    ("scipy.linalg.hessenberg", fl.hessenberg, sl.hessenberg, normal((4, 4)), {"grad": False, **LOOSE, **HOST_ONLY}),
    ("scipy.linalg.hessenberg[Q]", lambda a: fl.hessenberg(a, calc_q=True)[1],
     lambda a: sl.hessenberg(a, calc_q=True)[1], normal((4, 4)), {"grad": False, **LOOSE, **HOST_ONLY}),
]
