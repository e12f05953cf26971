"""Registry cases (format: tests/ops/test_primitives.py) for the products of fgrad.numpy,
fgrad.numpy.linalg, fgrad.scipy.special and the primitives of fgrad.ops.linalg."""
import numpy as np
import scipy.special as ss

import fgrad.numpy as fnp
import fgrad.scipy.special as fs
from fgrad.ops import linalg as la


def normal(*shapes):
    """args maker: standard-normal arrays of the given shapes."""
    return lambda rng, dt: tuple(rng.standard_normal(s).astype(dt) for s in shapes)


def _well_conditioned(rng, dt, n, batch=()):
    return (rng.standard_normal(batch + (n, n)) + 2 * n ** 0.5 * np.eye(n)).astype(dt)


def _spd(rng, dt, n, batch=()):
    r = rng.standard_normal(batch + (n, n))
    return (r @ np.swapaxes(r, -1, -2) + n * np.eye(n)).astype(dt)


def square(n, batch=(), *more):
    """args maker: a well-conditioned (n, n) matrix (stack), then normal arrays of shapes `more`."""
    return lambda rng, dt: (_well_conditioned(rng, dt, n, batch),) + tuple(
        rng.standard_normal(s).astype(dt) for s in more)


def spd(n, batch=()):
    return lambda rng, dt: (_spd(rng, dt, n, batch),)


def away_from_zero(*shapes):
    """Normal entries pushed away from 0 (kinks of |x|)."""
    def make(rng, dt):
        out = []
        for s in shapes:
            x = rng.standard_normal(s)
            out.append((np.sign(x) * (np.abs(x) + 0.5)).astype(dt))
        return tuple(out)
    return make


def probabilities(*shape):
    return lambda rng, dt: (rng.uniform(0.05, 0.95, shape).astype(dt),)


F32 = {"f32": True}
LOOSE = {"rtol": 1e-8}

CASES = [
    # --- products -----------------------------------------------------------------------
    ("matmul[2d]", fnp.matmul, np.matmul, normal((3, 4), (4, 5)), F32),
    ("matmul[vec,vec]", fnp.matmul, np.matmul, normal((4,), (4,))),
    ("matmul[vec,mat]", fnp.matmul, np.matmul, normal((4,), (4, 3))),
    ("matmul[mat,vec]", fnp.matmul, np.matmul, normal((3, 4), (4,))),
    ("matmul[stack,mat]", fnp.matmul, np.matmul, normal((2, 3, 4), (4, 5)), F32),
    ("matmul[mat,stack]", fnp.matmul, np.matmul, normal((3, 4), (2, 4, 5))),
    ("matmul[broadcast_batch]", fnp.matmul, np.matmul, normal((2, 1, 3, 4), (5, 4, 2)), F32),
    ("matmul[operator]", lambda a, b: a @ b, np.matmul, normal((3, 4), (4, 2))),  # tracers' @
    ("dot[2d]", fnp.dot, np.dot, normal((3, 4), (4, 5)), F32),
    ("dot[nd,nd]", fnp.dot, np.dot, normal((2, 3, 4), (5, 4, 2))),
    ("dot[nd,vec]", fnp.dot, np.dot, normal((2, 3, 4), (4,))),
    ("dot[scalar]", fnp.dot, np.dot, normal((), (3, 2))),
    ("vdot", fnp.vdot, np.vdot, normal((2, 3), (3, 2))),
    ("inner[nd]", fnp.inner, np.inner, normal((2, 3, 4), (5, 4))),
    ("outer", fnp.outer, np.outer, normal((3,), (2, 2))),
    ("tensordot[2]", fnp.tensordot, np.tensordot, normal((3, 4, 5), (4, 5, 2)), F32),
    ("tensordot[pairs]", lambda a, b: fnp.tensordot(a, b, ([2, 0], [0, 1])),
     lambda a, b: np.tensordot(a, b, ([2, 0], [0, 1])), normal((3, 4, 5), (5, 3, 2))),
    ("einsum[ij,jk->ik]", lambda a, b: fnp.einsum("ij,jk->ik", a, b),
     lambda a, b: np.einsum("ij,jk->ik", a, b), normal((2, 3), (3, 4)), F32),
    ("einsum[implicit]", lambda a, b: fnp.einsum("ij,kj", a, b),
     lambda a, b: np.einsum("ij,kj", a, b), normal((2, 3), (4, 3))),
    ("einsum[batched_attention]", lambda a, b: fnp.einsum("bhqd,bhkd->bhqk", a, b),
     lambda a, b: np.einsum("bhqd,bhkd->bhqk", a, b), normal((2, 2, 3, 4), (2, 2, 5, 4))),
    ("einsum[ellipsis]", lambda a, b: fnp.einsum("...ij,...jk", a, b),
     lambda a, b: np.einsum("...ij,...jk", a, b), normal((2, 1, 2, 3), (4, 3, 2))),
    ("einsum[trace]", lambda a: fnp.einsum("ii->", a), lambda a: np.einsum("ii->", a), normal((3, 3))),
    ("einsum[diagonal]", lambda a: fnp.einsum("...ii->...i", a), lambda a: np.einsum("...ii->...i", a),
     normal((2, 3, 3))),
    ("einsum[sum_transpose]", lambda a: fnp.einsum("ijk->kj", a), lambda a: np.einsum("ijk->kj", a),
     normal((2, 3, 4))),
    ("einsum[three_operands]", lambda a, b, c: fnp.einsum("abc,cd,bd->a", a, b, c),
     lambda a, b, c: np.einsum("abc,cd,bd->a", a, b, c), normal((2, 3, 4), (4, 5), (3, 5))),
    ("einsum[size1_broadcast]", lambda a, b: fnp.einsum("ij,ij->ij", a, b),
     lambda a, b: np.einsum("ij,ij->ij", a, b), normal((1, 3), (2, 3))),
    # --- fgrad.numpy.linalg ---------------------------------------------------------------
    ("linalg.inv", fnp.linalg.inv, np.linalg.inv, square(4), LOOSE),
    ("linalg.inv[batched]", fnp.linalg.inv, np.linalg.inv, square(3, (2,)), LOOSE),
    ("linalg.solve[matrix]", fnp.linalg.solve, np.linalg.solve, square(4, (), (4, 2)), LOOSE),
    ("linalg.solve[vector]", fnp.linalg.solve, np.linalg.solve, square(4, (), (4,)), LOOSE),
    ("linalg.solve[broadcast]", fnp.linalg.solve, np.linalg.solve, square(3, (2,), (3, 1, 3, 2)), LOOSE),
    ("linalg.det", fnp.linalg.det, np.linalg.det, square(4), LOOSE),
    ("linalg.det[batched]", fnp.linalg.det, np.linalg.det, square(3, (2,)), LOOSE),
    ("linalg.slogdet[logabsdet]", lambda a: fnp.linalg.slogdet(a)[1], lambda a: np.linalg.slogdet(a)[1],
     square(4), LOOSE),
    ("linalg.slogdet[sign]", lambda a: fnp.linalg.slogdet(a)[0], lambda a: np.linalg.slogdet(a)[0],
     lambda rng, dt: (-_spd(rng, dt, 3),), {"grad": False}),
    ("linalg.cholesky", fnp.linalg.cholesky, np.linalg.cholesky, spd(4), LOOSE),
    ("linalg.cholesky[batched]", fnp.linalg.cholesky, np.linalg.cholesky, spd(3, (2,)), LOOSE),
    ("linalg.norm", fnp.linalg.norm, np.linalg.norm, normal((3, 4)), F32),
    ("linalg.norm[axis]", lambda x: fnp.linalg.norm(x, axis=1, keepdims=True),
     lambda x: np.linalg.norm(x, axis=1, keepdims=True), normal((3, 4))),
    ("linalg.norm[ord1]", lambda x: fnp.linalg.norm(x, 1), lambda x: np.linalg.norm(x, 1),
     away_from_zero((5,))),
    ("linalg.norm[ord_inf]", lambda x: fnp.linalg.norm(x, np.inf, axis=0),
     lambda x: np.linalg.norm(x, np.inf, axis=0), away_from_zero((3, 4))),
    ("linalg.norm[ord3]", lambda x: fnp.linalg.norm(x, 3), lambda x: np.linalg.norm(x, 3),
     away_from_zero((5,))),
    ("linalg.norm[fro]", lambda x: fnp.linalg.norm(x, "fro", axis=(2, 0)),
     lambda x: np.linalg.norm(x, "fro", axis=(2, 0)), normal((2, 3, 4))),
    ("linalg.norm[matrix_inf]", lambda x: fnp.linalg.norm(x, np.inf), lambda x: np.linalg.norm(x, np.inf),
     away_from_zero((3, 4))),
    # --- fgrad.scipy.special -----------------------------------------------------------------
    ("special.logsumexp", fs.logsumexp, ss.logsumexp, normal((3, 4)), F32),
    ("special.logsumexp[axis_b]", lambda a, b: fs.logsumexp(a, axis=1, b=b),
     lambda a, b: ss.logsumexp(a, axis=1, b=b),
     lambda rng, dt: (rng.standard_normal((3, 4)).astype(dt), rng.uniform(0.5, 2, (3, 4)).astype(dt))),
    ("special.logsumexp[large]", lambda a: fs.logsumexp(a, axis=0, keepdims=True),
     lambda a: ss.logsumexp(a, axis=0, keepdims=True),
     lambda rng, dt: ((rng.standard_normal((3, 2)) + np.array([1e4, -1e4])).astype(dt),)),
    ("special.softmax", lambda x: fs.softmax(x, axis=-1), lambda x: ss.softmax(x, axis=-1),
     normal((3, 4)), F32),
    ("special.log_softmax", lambda x: fs.log_softmax(x, axis=0), lambda x: ss.log_softmax(x, axis=0),
     normal((3, 4))),
    ("special.erf", fs.erf, ss.erf, normal((5,)), F32),
    ("special.expit", fs.expit, ss.expit, normal((5,)), F32),
    ("special.logit", fs.logit, ss.logit, probabilities(5)),
    # --- primitives of fgrad.ops.linalg not reached through a numpy-level name -----------------
    ("ops.dot_general[batch_last]", lambda a, b: la.dot_general(a, b, (((0,), (1,)), ((2,), (2,)))),
     lambda a, b: np.einsum("kmb,nkb->bmn", a, b), normal((4, 3, 2), (5, 4, 2))),
    ("ops.triangular_solve[upper_transposed]",
     lambda a, b: la.triangular_solve(a, b, lower=False, transpose_a=True),
     lambda a, b: np.linalg.solve(np.triu(a).T, b), square(4, (), (4, 3)), LOOSE),
    ("ops.triangular_solve[lower]", lambda a, b: la.triangular_solve(a, b, lower=True),
     lambda a, b: np.linalg.solve(np.tril(a), b), square(3, (2,), (2, 3, 2)), LOOSE),
    ("ops.cholesky[lower_triangle_read]", la.cholesky,
     lambda a: np.linalg.cholesky(np.tril(a) + np.tril(a, -1).T),
     lambda rng, dt: (_spd(rng, dt, 3) + np.triu(rng.standard_normal((3, 3)), 1).astype(dt),), LOOSE),
    ("ops.tril", lambda a: la.tril(a, 1), lambda a: np.tril(a, 1), normal((2, 3, 4))),
    ("ops.triu", lambda a: la.triu(a, -1), lambda a: np.triu(a, -1), normal((4, 3))),
    ("ops.logabsdet", la.logabsdet, lambda a: np.linalg.slogdet(a)[1], square(3, (2,)), LOOSE),
]
