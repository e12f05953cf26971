"""fgrad.torch.linalg (torch.linalg) differentially against PyTorch: for float32 and float64, values,
dtypes and shapes of every result, gradients and second-order gradients (create_graph); the
named results; PyTorch's error types (RuntimeError for shapes and dtypes, LinAlgError for
singular and non-positive-definite matrices)."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad
from tests.torch.test_tensor_ops import R, _raises_like_torch, check

torch = pytest.importorskip("torch")


def spd(L, m):
    """A well-conditioned symmetric positive-definite matrix (stack) built from m."""
    return m @ m.mT + 3.0 * L.eye(m.shape[-1], dtype=m.dtype)


def sym(L, m):
    return (m + m.mT) / 2


# --- norms ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("ord", [2, 1, 3, 0.5, float("inf"), float("-inf")])
def test_vector_norm(ord):
    check(lambda L, x: L.linalg.vector_norm(x, ord), R(3, 4))
    check(lambda L, x: L.linalg.vector_norm(x, ord, dim=(0, 2), keepdim=True), R(2, 3, 4))
    check(lambda L, x: L.linalg.vector_norm(x, ord, dim=-1, dtype=L.float64), R(3, 4))


def test_vector_norm_zero_order_and_zero_vector():
    check(lambda L, x: L.linalg.vector_norm(x, 0, dim=1), np.array([[0.0, 1.0, -2.0], [0.0, 0.0, 3.0]]), grad=False)
    check(lambda L, x: L.linalg.vector_norm(x * 0.0, dim=1), R(2, 3), order=1)  # 2-norm'(0) = 0


@pytest.mark.parametrize("ord", ["fro", "nuc", 1, -1, 2, -2, float("inf"), float("-inf")])
def test_matrix_norm(ord):
    check(lambda L, x: L.linalg.matrix_norm(x, ord), R(2, 3, 4))
    check(lambda L, x: L.linalg.matrix_norm(x, ord, dim=(0, 2), keepdim=True), R(3, 2, 4))


def test_norm():
    check(lambda L, x: L.linalg.norm(x), R(2, 3, 4))
    check(lambda L, x: L.linalg.norm(x, 3), R(5))
    check(lambda L, x: L.linalg.norm(x, "nuc"), R(3, 4))
    check(lambda L, x: L.linalg.norm(x, dim=1, keepdim=True), R(3, 4))
    check(lambda L, x: L.linalg.norm(x, float("inf"), dim=(1, 2)), R(2, 3, 4))
    check(lambda L, x: (L.norm(x, "nuc", dim=(1, 2)), L.norm(x[0], "nuc")), R(2, 3, 4))  # torch.norm too


# --- inverses, determinants, solves -------------------------------------------------------------------

def test_inv_det_slogdet():
    check(lambda L, m: L.linalg.inv(spd(L, m)), R(3, 3))
    check(lambda L, m: L.linalg.inv(m + 3.0 * L.eye(3, dtype=m.dtype)), R(2, 3, 3))
    check(lambda L, m: L.linalg.det(m), R(2, 3, 3))
    check(lambda L, m: L.linalg.slogdet(m), R(2, 3, 3))
    r = fgrad.torch.linalg.slogdet(fgrad.torch.tensor([[2.0, 0.0], [0.0, -3.0]]))
    assert float(r.sign) == -1.0 and float(r.logabsdet) == pytest.approx(np.log(6.0))
    assert repr(r).startswith("torch.return_types.linalg_slogdet(\nsign=")


def test_solve():
    check(lambda L, m, b: L.linalg.solve(spd(L, m), b), R(3, 3), R(3, seed=1))
    check(lambda L, m, b: L.linalg.solve(spd(L, m), b), R(2, 3, 3), R(2, 3, seed=1))       # batch of vectors
    check(lambda L, m, b: L.linalg.solve(spd(L, m), b), R(2, 3, 3), R(3, 2, seed=1))       # broadcast matrix
    check(lambda L, m, b: L.linalg.solve(spd(L, m), b, left=False), R(3, 3), R(2, 3, seed=1))


@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unitriangular", [True, False])
def test_solve_triangular(upper, left, unitriangular):
    def fn(L, m, b):
        a = m + 3.0 * L.eye(3, dtype=m.dtype)
        a = a.triu() if upper else a.tril()
        return L.linalg.solve_triangular(a, b if left else b.mT, upper=upper, left=left,
                                         unitriangular=unitriangular)
    check(fn, R(3, 3), R(3, 2, seed=1))


def test_cholesky():
    check(lambda L, m: L.linalg.cholesky(spd(L, m)), R(3, 3))
    check(lambda L, m: L.linalg.cholesky(spd(L, m), upper=True), R(2, 3, 3))


# --- decompositions -------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (2, 3, 3)])
def test_qr(shape):
    check(lambda L, a: L.linalg.qr(a), R(*shape))
    check(lambda L, a: L.linalg.qr(a, mode="r").R, R(*shape), grad=False)  # PyTorch: no derivative without Q
    assert fgrad.torch.linalg.qr(fgrad.torch.ones(3, 2), mode="r").Q.shape == (0,)
    if shape[-2] >= shape[-1]:
        check(lambda L, a: L.linalg.qr(a, mode="complete").Q.shape[-1], R(*shape), grad=False)


@pytest.mark.parametrize("full_matrices", [True, False])
def test_svd(full_matrices):
    def fn(L, a):  # invariant to the singular vectors' signs
        U, S, Vh = L.linalg.svd(a, full_matrices=full_matrices)
        k = S.shape[-1]  # (the columns of U and rows of Vh beyond k are any orthonormal completion)
        return S, (U[..., :k] * S.unsqueeze(-2)) @ Vh[..., :k, :], U[..., :k].abs(), Vh[..., :k, :].abs(), U.shape
    check(fn, R(4, 3), order=1)
    check(fn, R(2, 3, 5), order=1)
    check(lambda L, a: L.linalg.svdvals(a), R(2, 4, 3))


def test_eigh_eigvalsh():
    def fn(L, m, uplo="L"):
        w, V = L.linalg.eigh(sym(L, m), UPLO=uplo)
        return w, V * V  # squared eigenvectors: invariant to their signs
    check(fn, R(4, 4))
    check(lambda L, m: fn(L, m, "U"), R(2, 3, 3))
    check(lambda L, m: L.linalg.eigvalsh(sym(L, m)), R(2, 4, 4))
    # only the named triangle is read
    check(lambda L, m: L.linalg.eigvalsh(m, UPLO="U"), R(3, 3), order=1)


# --- pseudo-inverse, least squares, rank --------------------------------------------------------------

def test_pinv():
    check(lambda L, a: L.linalg.pinv(a), R(4, 3))
    check(lambda L, a: L.linalg.pinv(a, rtol=0.05), R(2, 3, 4))
    check(lambda L, m: L.linalg.pinv(spd(L, m), hermitian=True), R(3, 3))
    rank1 = np.outer([1.0, 2.0, 3.0], [1.0, -1.0]) + 1e-3 * R(3, 2)
    check(lambda L, a: L.linalg.pinv(a, atol=0.01), rank1, order=1)


@pytest.mark.parametrize("driver", [None, "gels", "gelsy", "gelsd", "gelss"])
def test_lstsq(driver):
    check(lambda L, a, b: L.linalg.lstsq(a, b, driver=driver), R(5, 3), R(5, 2, seed=1), order=1)
    check(lambda L, a, b: L.linalg.lstsq(a, b, driver=driver).solution, R(2, 5, 3), R(2, 5, seed=1), order=1)


def test_matrix_rank():
    low = np.outer([1.0, 2.0, 3.0], [1.0, -1.0, 0.5])
    stack = np.stack([low, R(3, 3)])
    check(lambda L, a: L.linalg.matrix_rank(a), stack, grad=False)
    check(lambda L, a: L.linalg.matrix_rank(a, atol=1.0, rtol=0.0), stack, grad=False)
    check(lambda L, a: L.linalg.matrix_rank(a, hermitian=True), spd_np(), grad=False)


def spd_np():
    m = R(3, 3)
    return m @ m.T + 3 * np.eye(3)


# --- products, powers, condition --------------------------------------------------------------------

@pytest.mark.parametrize("n", [0, 1, 3, -2])
def test_matrix_power(n):
    check(lambda L, m: L.linalg.matrix_power(spd(L, m), n), R(2, 3, 3))


def test_multi_dot_cross_vecdot_diagonal():
    check(lambda L, a, b, c: L.linalg.multi_dot([a, b, c]), R(3), R(3, 4, seed=1), R(4, 2, seed=2))
    check(lambda L, a, b, c, d: L.linalg.multi_dot((a, b, c, d)), R(2, 5), R(5, 3, seed=1), R(3, 4, seed=2),
          R(4, seed=3))
    check(lambda L, a, b: L.linalg.cross(a, b), R(4, 3), R(1, 3, seed=1))
    check(lambda L, a, b: L.linalg.cross(a, b, dim=0), R(3, 2), R(3, 2, seed=1))
    check(lambda L, a, b: L.linalg.vecdot(a, b), R(3, 4), R(4, seed=1))
    check(lambda L, a: L.linalg.diagonal(a, offset=1), R(2, 3, 4))
    check(lambda L, a, b: L.linalg.matmul(a, b), R(2, 3), R(3, 4, seed=1))


@pytest.mark.parametrize("p", [None, 2, -2, "fro", "nuc", 1, -1, float("inf"), float("-inf")])
def test_cond(p):
    # PyTorch's own backward of cond fails for the norms other than 2 (an in-place write in its
    # inv_ex): values there, and the gradient checked against norm(A) * norm(inv(A))
    svd_based = p in (None, 2, -2)
    check(lambda L, m: L.linalg.cond(spd(L, m), p), R(2, 3, 3), order=1, grad=svd_based)
    if not svd_based:
        check(lambda L, m: L.linalg.cond(spd(L, m), p) if L is fgrad.torch else
              L.linalg.matrix_norm(spd(L, m), p) * L.linalg.matrix_norm(L.linalg.inv(spd(L, m)), p),
              R(2, 3, 3), order=1)


# --- errors -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("fn, args", [
    (lambda L, a: L.linalg.inv(a.long()), (R(2, 2),)),
    (lambda L, a: L.linalg.inv(a), (R(2, 3),)),
    (lambda L, a: L.linalg.inv(a * 0), (R(2, 2),)),
    (lambda L, a: L.linalg.det(a), (R(3),)),
    (lambda L, a, b: L.linalg.solve(a * 0, b), (R(2, 2), R(2, seed=1))),
    (lambda L, a, b: L.linalg.solve(a, b), (R(2, 2), R(3, seed=1))),
    (lambda L, a: L.linalg.cholesky(-a @ a.mT), (R(3, 3),)),
    (lambda L, a: L.linalg.cholesky(a), (R(2, 3),)),
    (lambda L, a: L.linalg.qr(a, mode="full"), (R(3, 3),)),
    (lambda L, a: L.linalg.eigh(a, UPLO="X"), (R(3, 3),)),
    (lambda L, a: L.linalg.norm(a, 2), (R(2, 2, 2),)),
    (lambda L, a: L.linalg.matrix_norm(a, 3), (R(2, 2),)),
    (lambda L, a: L.linalg.vector_norm(a.long()), (R(2, 2),)),
    (lambda L, a: L.linalg.vector_norm(a, "fro"), (R(2, 2),)),
    (lambda L, a, b: L.linalg.lstsq(a, b), (R(3, 2), R(4, seed=1))),
    (lambda L, a, b: L.linalg.lstsq(a, b, driver="qr"), (R(3, 2), R(3, seed=1))),
    (lambda L, a, b: L.linalg.cross(a, b), (R(2, 2), R(2, 2, seed=1))),
    (lambda L, a: L.linalg.multi_dot([a]), (R(2, 2),)),
    (lambda L, a: L.linalg.matrix_power(a, 2), (R(2, 3),)),
    (lambda L, a, b: L.linalg.solve_triangular(a, b, upper=True), (R(3, 3), R(2, 2, seed=1))),
])
def test_errors_have_pytorchs_types(fn, args):
    _raises_like_torch(fn, *args)


def test_numerical_failures_are_linalg_errors():
    with pytest.raises(fgrad.torch.linalg.LinAlgError, match="singular"):
        fgrad.torch.linalg.inv(fgrad.torch.zeros(2, 2))
    with pytest.raises(RuntimeError):
        fgrad.torch.linalg.cholesky(-fgrad.torch.eye(2))
    assert issubclass(fgrad.torch.linalg.LinAlgError, RuntimeError)
