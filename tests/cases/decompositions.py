"""Registry cases (format: tests/ops/test_primitives.py) for the decompositions and the other
matrix functions of fgrad.numpy.linalg added with them: eigh, eigvalsh, svd, svdvals, qr,
eig, eigvals, pinv, lstsq, matrix_power, matrix_rank, cond, multi_dot, the spectral norms
and NumPy 2's array-API functions.

Eigen- and singular vectors are unique up to sign, so the cases differentiate functions that
do not depend on the sign (squares of entries, reconstructions, projectors, v diag(f(w)) v^T);
the complement columns of full_matrices/'complete' enter through their projector only.
The inputs have well separated eigenvalues / singular values: tests/numpy/test_decompositions.py
covers the degenerate ones."""
import numpy as np

import fgrad.numpy as fnp
from tests.cases.linalg import LOOSE, normal, square


def _sym(x, M=np):
    return (x + M.swapaxes(x, -1, -2)) / 2


def separated(shape):
    """args maker: a matrix (stack) with singular values / eigenvalues well apart (random
    orthogonal factors around a spread diagonal)."""
    def make(rng, dt):
        *batch, m, n = shape
        k = min(m, n)
        u = np.linalg.qr(rng.standard_normal(tuple(batch) + (m, m)))[0]
        v = np.linalg.qr(rng.standard_normal(tuple(batch) + (n, n)))[0]
        s = np.zeros(tuple(batch) + (m, n))
        idx = np.arange(k)
        s[..., idx, idx] = 1.0 + 0.8 * idx[::-1] + 0.1 * rng.uniform(size=tuple(batch) + (k,))
        return ((u @ s @ v).astype(dt),)
    return make


def symmetric(shape):
    """args maker: a symmetric matrix (stack) with eigenvalues well apart, signs mixed."""
    def make(rng, dt):
        *batch, n, _ = shape
        q = np.linalg.qr(rng.standard_normal(tuple(batch) + (n, n)))[0]
        w = np.linspace(-1.5, 2.0, n) + 0.05 * rng.uniform(size=tuple(batch) + (n,))
        return (((q * w[..., None, :]) @ np.swapaxes(q, -1, -2)).astype(dt),)
    return make


def _weights(n):
    return np.arange(1.0, n + 1.0)


def _eigh_summary(M, a):
    w, v = M.linalg.eigh(a)
    n = a.shape[-1]
    return M.concatenate([w * _weights(n), M.sum(v * v * _weights(n), axis=-1)], axis=-1)


def _eigh_expm(M, a):
    w, v = M.linalg.eigh(a)
    return (v * M.exp(w)[..., None, :]) @ M.swapaxes(v, -1, -2)


def _svd_summary(M, a):
    u, s, vh = M.linalg.svd(a, full_matrices=False)
    rec = (u * s[..., None, :]) @ vh
    return M.concatenate([M.ravel(rec), M.ravel(u * u), M.ravel(vh * vh), M.ravel(s ** 3)], axis=0)


def _svd_full_projectors(M, a):
    u, s, vh = M.linalg.svd(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    up, vp = u[..., :, k:], vh[..., k:, :]
    return M.concatenate([M.ravel(up @ M.swapaxes(up, -1, -2)), M.ravel(M.swapaxes(vp, -1, -2) @ vp),
                          M.ravel(u[..., :, :k] * u[..., :, :k]), M.ravel(s)], axis=0)


def _qr_factors(M, a, mode="reduced"):
    q, r = M.linalg.qr(a, mode)
    return M.concatenate([M.ravel(q), M.ravel(r)], axis=0)


def _qr_complete(M, a):
    q, r = M.linalg.qr(a, "complete")
    n = a.shape[-1]
    qp = q[..., :, n:]
    return M.concatenate([M.ravel(q[..., :, :n]), M.ravel(qp @ M.swapaxes(qp, -1, -2)), M.ravel(r)], axis=0)


def _lstsq_all(M, a, b):
    x, resid, rank, s = M.linalg.lstsq(a, b)
    return M.concatenate([M.ravel(x), resid, s], axis=0)


CASES = [
    ("linalg.eigh[weighted]", lambda a: _eigh_summary(fnp, a), lambda a: _eigh_summary(np, _sym(a)),
     symmetric((4, 4)), LOOSE),
    ("linalg.eigh[batched_expm]", lambda a: _eigh_expm(fnp, a), lambda a: _eigh_expm(np, _sym(a)),
     symmetric((2, 3, 3)), LOOSE),
    ("linalg.eigh[nonsymmetric_input]", lambda a: _eigh_summary(fnp, a), lambda a: _eigh_summary(np, _sym(a)),
     lambda rng, dt: (symmetric((3, 3))(rng, dt)[0] + np.triu(0.1 * rng.standard_normal((3, 3)), 1).astype(dt),),
     LOOSE),
    ("linalg.eigh[upper_unsymmetrized]",
     lambda a: fnp.linalg.eigh(a, "U", symmetrize_input=False).eigenvalues,
     lambda a: np.linalg.eigh(a, "U").eigenvalues,
     lambda rng, dt: (symmetric((3, 3))(rng, dt)[0] + np.tril(rng.standard_normal((3, 3)), -1).astype(dt),),
     LOOSE),
    ("linalg.eigvalsh", fnp.linalg.eigvalsh, lambda a: np.linalg.eigvalsh(_sym(a)), symmetric((2, 4, 4)),
     {"rtol": 1e-8, "f32": True}),
    ("linalg.svd[tall]", lambda a: _svd_summary(fnp, a), lambda a: _svd_summary(np, a), separated((4, 3)), LOOSE),
    ("linalg.svd[wide_batched]", lambda a: _svd_summary(fnp, a), lambda a: _svd_summary(np, a),
     separated((2, 2, 4)), LOOSE),
    ("linalg.svd[full_tall]", lambda a: _svd_full_projectors(fnp, a), lambda a: _svd_full_projectors(np, a),
     separated((4, 2)), LOOSE),
    ("linalg.svd[full_wide]", lambda a: _svd_full_projectors(fnp, a), lambda a: _svd_full_projectors(np, a),
     separated((2, 4)), LOOSE),
    ("linalg.svd[compute_uv=False]", lambda a: fnp.linalg.svd(a, compute_uv=False),
     lambda a: np.linalg.svd(a, compute_uv=False), separated((3, 5)), {"rtol": 1e-8, "f32": True}),
    ("linalg.svdvals", fnp.linalg.svdvals, np.linalg.svdvals, separated((2, 4, 3)), LOOSE),
    ("linalg.qr[tall]", lambda a: _qr_factors(fnp, a), lambda a: _qr_factors(np, a), normal((4, 3)), LOOSE),
    ("linalg.qr[wide]", lambda a: _qr_factors(fnp, a), lambda a: _qr_factors(np, a), normal((3, 5)), LOOSE),
    ("linalg.qr[square_batched]", lambda a: _qr_factors(fnp, a), lambda a: _qr_factors(np, a),
     normal((2, 3, 3)), LOOSE),
    ("linalg.qr[complete]", lambda a: _qr_complete(fnp, a), lambda a: _qr_complete(np, a), normal((4, 2)), LOOSE),
    ("linalg.qr[r]", lambda a: fnp.linalg.qr(a, "r"), lambda a: np.linalg.qr(a, "r"), normal((5, 3)), LOOSE),
    ("linalg.eig[eigenvalues]", lambda a: fnp.linalg.eig(a).eigenvalues,
     lambda a: np.linalg.eig(a).eigenvalues.astype(complex), separated((3, 3)), {"grad": False, "rtol": 1e-8}),
    ("linalg.eigvals[complex_pairs]", fnp.linalg.eigvals, lambda a: np.linalg.eigvals(a).astype(complex),
     normal((2, 4, 4)), {"grad": False, "rtol": 1e-8}),
    ("linalg.pinv[tall]", fnp.linalg.pinv, np.linalg.pinv, separated((4, 3)), LOOSE),
    ("linalg.pinv[wide_batched]", fnp.linalg.pinv, np.linalg.pinv, separated((2, 2, 3)), LOOSE),
    ("linalg.lstsq[overdetermined]", lambda a, b: _lstsq_all(fnp, a, b), lambda a, b: _lstsq_all(np, a, b),
     lambda rng, dt: separated((5, 3))(rng, dt) + (rng.standard_normal((5, 2)).astype(dt),), LOOSE),
    ("linalg.lstsq[vector]", lambda a, b: _lstsq_all(fnp, a, b), lambda a, b: _lstsq_all(np, a, b),
     lambda rng, dt: separated((4, 2))(rng, dt) + (rng.standard_normal(4).astype(dt),), LOOSE),
    ("linalg.lstsq[underdetermined]", lambda a, b: fnp.linalg.lstsq(a, b)[0], lambda a, b: np.linalg.lstsq(a, b)[0],
     lambda rng, dt: separated((2, 4))(rng, dt) + (rng.standard_normal((2, 3)).astype(dt),), LOOSE),
    ("linalg.matrix_power[5]", lambda a: fnp.linalg.matrix_power(a, 5), lambda a: np.linalg.matrix_power(a, 5),
     lambda rng, dt: (0.5 * rng.standard_normal((2, 3, 3)).astype(dt),), LOOSE),
    ("linalg.matrix_power[-2]", lambda a: fnp.linalg.matrix_power(a, -2), lambda a: np.linalg.matrix_power(a, -2),
     square(3), LOOSE),
    ("linalg.matrix_power[0]", lambda a: fnp.linalg.matrix_power(a, 0), lambda a: np.linalg.matrix_power(a, 0),
     normal((3, 3)), {"grad": False}),
    ("linalg.matrix_rank", fnp.linalg.matrix_rank, np.linalg.matrix_rank,
     lambda rng, dt: (np.stack([separated((4, 3))(rng, dt)[0], np.outer(np.ones(4), np.arange(3.0)).astype(dt)]),),
     {"grad": False}),
    ("linalg.cond", fnp.linalg.cond, np.linalg.cond, separated((2, 3, 3)), LOOSE),
    ("linalg.cond[fro]", lambda a: fnp.linalg.cond(a, "fro"), lambda a: np.linalg.cond(a, "fro"), square(3), LOOSE),
    ("linalg.norm[2]", lambda a: fnp.linalg.norm(a, 2), lambda a: np.linalg.norm(a, 2), separated((4, 3)), LOOSE),
    ("linalg.norm[-2_axes]", lambda a: fnp.linalg.norm(a, -2, axis=(2, 0), keepdims=True),
     lambda a: np.linalg.norm(a, -2, axis=(2, 0), keepdims=True),
     lambda rng, dt: (np.moveaxis(separated((2, 3, 4))(rng, dt)[0], 1, 0),), LOOSE),
    ("linalg.norm[nuc]", lambda a: fnp.linalg.norm(a, "nuc"), lambda a: np.linalg.norm(a, "nuc"),
     separated((3, 5)), LOOSE),
    ("linalg.multi_dot", lambda a, b, c, d: fnp.linalg.multi_dot([a, b, c, d]),
     lambda a, b, c, d: np.linalg.multi_dot([a, b, c, d]), normal((3,), (3, 5), (5, 2), (2, 4)), LOOSE),
    ("linalg.vector_norm", lambda x: fnp.linalg.vector_norm(x, axis=(0, 2), ord=3),
     lambda x: np.linalg.vector_norm(x, axis=(0, 2), ord=3),
     lambda rng, dt: (rng.uniform(0.5, 2, (2, 3, 4)).astype(dt),)),
    ("linalg.matrix_norm", lambda x: fnp.linalg.matrix_norm(x, keepdims=True),
     lambda x: np.linalg.matrix_norm(x, keepdims=True), normal((2, 3, 4))),
    ("linalg.trace", lambda x: fnp.linalg.trace(x, offset=1), lambda x: np.linalg.trace(x, offset=1),
     normal((2, 3, 4))),
    ("linalg.diagonal", lambda x: fnp.linalg.diagonal(x, offset=-1), lambda x: np.linalg.diagonal(x, offset=-1),
     normal((2, 4, 3))),
    ("linalg.cross", lambda a, b: fnp.linalg.cross(a, b), lambda a, b: np.linalg.cross(a, b), normal((2, 3), (3,))),
    ("linalg.vecdot", lambda a, b: fnp.linalg.vecdot(a, b, axis=0), lambda a, b: np.linalg.vecdot(a, b, axis=0),
     normal((3, 4), (3, 1))),
    ("linalg.tensorinv", lambda a: fnp.linalg.tensorinv(a, 1), lambda a: np.linalg.tensorinv(a, 1),
     lambda rng, dt: (np.reshape(square(6)(rng, dt)[0], (6, 2, 3)),), LOOSE),
    ("linalg.tensorsolve", fnp.linalg.tensorsolve, np.linalg.tensorsolve,
     lambda rng, dt: (np.reshape(square(6)(rng, dt)[0], (2, 3, 6)), rng.standard_normal((2, 3)).astype(dt)), LOOSE),
]
