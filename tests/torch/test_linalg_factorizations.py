"""fgrad.torch.linalg's factorizations and their solves, the _ex variants, eig, matrix_exp,
householder_product, tensorinv/tensorsolve and vander, differentially against PyTorch: values,
dtypes and shapes (float32 and float64), first and second-order gradients, LAPACK's info codes
and pivots, and PyTorch's error types."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad
from tests.torch.test_tensor_ops import R, _raises_like_torch, check

torch = pytest.importorskip("torch")


def spd(L, m):
    """A well-conditioned symmetric positive-definite matrix (stack) built from m."""
    return m @ m.mT + 3.0 * L.eye(m.shape[-1], dtype=m.dtype)


def shifted(L, m):
    """m moved away from singularity (a general, non-symmetric matrix)."""
    return m + 3.0 * L.eye(m.shape[-1], dtype=m.dtype)


def test_ex_variants_match_the_plain_functions():
    check(lambda L, m: L.linalg.cholesky_ex(spd(L, m)), R(2, 3, 3))
    check(lambda L, m: L.linalg.inv_ex(shifted(L, m)), R(3, 3))
    check(lambda L, m, b: L.linalg.solve_ex(shifted(L, m), b), R(2, 3, 3), R(2, 3, seed=1), order=1)


@pytest.mark.slow
def test_ex_variants_options():
    check(lambda L, m: L.linalg.cholesky_ex(spd(L, m), upper=True), R(3, 3))
    check(lambda L, m: L.linalg.inv_ex(shifted(L, m)), R(2, 3, 3))
    check(lambda L, m, b: L.linalg.solve_ex(shifted(L, m), b), R(2, 3, 3), R(2, 3, seed=1))
    check(lambda L, m, b: L.linalg.solve_ex(shifted(L, m), b, left=False), R(3, 3), R(2, 3, seed=1))


def test_ex_variants_report_failures():
    def cases(L):
        not_pd = L.tensor([[[1.0, 2.0], [2.0, 1.0]], [[4.0, 0.0], [0.0, 1.0]]])
        singular = L.zeros(2, 3, 3)
        singular[0] = 2.0 * L.eye(3)
        return not_pd, singular

    for L in (fgrad.torch, torch):
        not_pd, singular = cases(L)
        ch = L.linalg.cholesky_ex(not_pd)
        assert ch.info.tolist() == [2, 0] and str(ch.info.dtype) == "torch.int32"
        np.testing.assert_allclose(ch.L.numpy(), [[[1, 0], [2, -3]], [[2, 0], [0, 1]]])  # LAPACK's partial factor
        inv = L.linalg.inv_ex(singular)
        assert inv.info.tolist() == [0, 1]
        np.testing.assert_allclose(inv.inverse[0].numpy(), 0.5 * np.eye(3))
        sol = L.linalg.solve_ex(singular, L.ones(2, 3))
        assert sol.info.tolist() == [0, 1]
        np.testing.assert_allclose(sol.result[0].numpy(), [0.5, 0.5, 0.5])
        assert not np.isfinite(sol.result[1].numpy()).all()
        assert L.linalg.lu_factor_ex(singular).info.tolist() == [0, 1]
        assert L.linalg.ldl_factor_ex(L.zeros(3, 3)).info.item() == 1
    # the nonsingular matrices of a batch keep their gradients
    s = fgrad.torch.zeros(2, 3, 3)
    s[0] = 2.0 * fgrad.torch.eye(3)
    s.requires_grad_(True)
    fgrad.torch.linalg.solve_ex(s, fgrad.torch.ones(2, 3)).result[0].sum().backward()
    np.testing.assert_allclose(s.grad[0].numpy(), np.full((3, 3), -0.25))


def test_eig_and_eigvals():
    # functions of the eigenvalues and of the eigenvectors' magnitudes do not depend on their phases
    check(lambda L, m: L.view_as_real(L.linalg.eigvals(shifted(L, m))), R(2, 3, 3), order=1)
    check(lambda L, m: (L.linalg.eig(shifted(L, m)).eigenvalues.real, L.linalg.eig(shifted(L, m)).eigenvectors.abs()),
          R(3, 3), order=1)
    for L in (fgrad.torch, torch):
        w, v = L.linalg.eig(L.tensor(R(3, 3), dtype=L.float32))
        assert str(w.dtype) == "torch.complex64" and str(v.dtype) == "torch.complex64"
        assert type(L.linalg.eig(L.tensor(R(3, 3), requires_grad=True)).eigenvalues.grad_fn).__name__ == \
            "LinalgEigBackward0"


def test_matrix_exp():
    check(lambda L, m: L.linalg.matrix_exp(m), R(2, 3, 3))
    # complex matrices built from real leaves: gradients of both parts, to second order
    check(lambda L, x, y: L.view_as_real(L.linalg.matrix_exp(L.complex(x, y * 1.0))), R(3, 3), R(3, 3, seed=1),
          dtypes=("float64",))


@pytest.mark.slow
def test_matrix_exp_scaling_and_squaring():
    check(lambda L, m: L.linalg.matrix_exp(m * 3.0), R(4, 4))


def test_lu_family():
    check(lambda L, m: L.linalg.lu_factor(m), R(3, 3), order=1)
    check(lambda L, m: L.linalg.lu(m), R(3, 3), order=1)


@pytest.mark.slow
def test_lu_family_batches_rectangles_second_order():
    check(lambda L, m: L.linalg.lu_factor(m), R(2, 4, 4))
    check(lambda L, m: L.linalg.lu_factor_ex(m), R(4, 3), order=1)
    check(lambda L, m: L.linalg.lu(m), R(2, 3, 3))
    check(lambda L, m: L.linalg.lu(m), R(3, 4), order=1)


def cplx(L, x, y):
    """A complex matrix from real leaves, moved away from singularity."""
    return L.complex(x, y * 1.0) + 3.0 * L.eye(x.shape[-1], dtype=x.dtype)


def parts(y):
    """A real tensor carrying both parts of a complex result (PyTorch's may be a lazy conjugate)."""
    return y.real * 1.25 + y.imag * 0.75


@pytest.mark.slow
def test_lu_complex():
    check(lambda L, x, y: parts(L.linalg.lu_factor(cplx(L, x, y)).LU), R(2, 3, 3), R(2, 3, 3, seed=1),
          dtypes=("float64",))
    check(lambda L, x, y: [parts(f) for f in L.linalg.lu(cplx(L, x, y))[1:]], R(3, 3), R(3, 3, seed=1),
          dtypes=("float64",))
    for left in (True, False):
        for adjoint in (True, False):
            check(lambda L, x, y, b: parts(L.linalg.lu_solve(*L.linalg.lu_factor(cplx(L, x, y)),
                                                                      L.complex(b, b * 0.5), left=left,
                                                                      adjoint=adjoint)),
                  R(3, 3), R(3, 3, seed=1), R(3, 3, seed=2), dtypes=("float64",))


@pytest.mark.parametrize("left, adjoint", [
    (True, False),
    pytest.param(True, True, marks=pytest.mark.slow),
    pytest.param(False, False, marks=pytest.mark.slow),
    pytest.param(False, True, marks=pytest.mark.slow),
])
def test_lu_solve(left, adjoint):
    b = R(3, 2, seed=1) if left else R(2, 3, seed=1)
    check(lambda L, m, b: L.linalg.lu_solve(*L.linalg.lu_factor(shifted(L, m)), b, left=left, adjoint=adjoint),
          R(2, 3, 3), b, order=1 if (left, adjoint) == (True, False) else 2)


def test_householder_product():
    check(lambda L, a, t: L.linalg.householder_product(a, t), R(2, 4, 3), R(2, 2, seed=1))
    check(lambda L, a, t: L.linalg.householder_product(a, t), R(3, 3), R(3, seed=1))
    # geqrf's reflectors give qr's Q
    a = np.random.default_rng(3).standard_normal((5, 3))
    import scipy.linalg
    (qr, tau), _ = scipy.linalg.qr(a, mode="raw")
    q = fgrad.torch.linalg.householder_product(fgrad.torch.tensor(qr), fgrad.torch.tensor(tau))
    np.testing.assert_allclose(q.numpy(), np.linalg.qr(a)[0], atol=1e-12)


def test_ldl():
    check(lambda L, m: L.linalg.ldl_factor(m + m.mT), R(2, 4, 4), grad=False)
    check(lambda L, m: L.linalg.ldl_factor_ex(m + m.mT), R(4, 4), grad=False)
    check(lambda L, m, b: L.linalg.ldl_solve(*L.linalg.ldl_factor(m + m.mT), b), R(2, 4, 4), R(4, 2, seed=1),
          grad=False)
    # an indefinite matrix with a zero diagonal needs 2x2 pivots (negative pivots)
    a = np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 3.0], [2.0, 3.0, 1.0]])
    check(lambda L, m: L.linalg.ldl_factor(m), a, grad=False)
    z = (a + 1j * np.array([[0.0, 1.0, 0.5], [-1.0, 0.0, 2.0], [-0.5, -2.0, 0.0]]))
    for herm in (True, False):
        zz = z if herm else a + 1j * (a * 0.3)
        got = fgrad.torch.linalg.ldl_factor(fgrad.torch.tensor(zz), hermitian=herm)
        want = torch.linalg.ldl_factor(torch.tensor(zz), hermitian=herm)
        np.testing.assert_allclose(got.LD.numpy(), want.LD.numpy(), atol=1e-12)
        np.testing.assert_array_equal(got.pivots.numpy(), want.pivots.numpy())
        x = fgrad.torch.linalg.ldl_solve(got.LD, got.pivots, fgrad.torch.tensor(np.eye(3) + 0j), hermitian=herm)
        np.testing.assert_allclose(x.numpy(), np.linalg.inv(zz), atol=1e-12)


def test_tensorinv_tensorsolve():
    def a6(L, a):
        return a + 3.0 * L.eye(6, dtype=a.dtype).reshape(2, 3, 6)

    check(lambda L, a: L.linalg.tensorinv(a6(L, a), ind=2), R(2, 3, 6))
    check(lambda L, a: L.linalg.tensorinv(a6(L, a).reshape(6, 2, 3), ind=1), R(2, 3, 6))
    check(lambda L, a, b: L.linalg.tensorsolve(a6(L, a), b), R(2, 3, 6), R(2, 3, seed=1))
    check(lambda L, a, b: L.linalg.tensorsolve(a6(L, a).movedim(2, 0), b, dims=(0,)), R(2, 3, 6), R(2, 3, seed=1))
    for L in (fgrad.torch, torch):
        a = L.tensor(R(2, 3, 6), requires_grad=True)
        assert type(L.linalg.tensorinv(a6(L, a), ind=2).grad_fn).__name__ == "ReshapeAliasBackward0"


def test_vander():
    check(lambda L, x: L.linalg.vander(x), R(2, 4))
    check(lambda L, x: L.linalg.vander(x, N=3), R(4))
    for L in (fgrad.torch, torch):
        v = L.linalg.vander(L.tensor([1, 2, 3]), N=4)
        assert str(v.dtype) == "torch.int64" and v.tolist() == [[1, 1, 1, 1], [1, 2, 4, 8], [1, 3, 9, 27]]


@pytest.mark.parametrize("fn, args", [
    (lambda L, m: L.linalg.cholesky_ex(m), (R(2, 3),)),
    (lambda L, m: L.linalg.cholesky_ex(m * 0.0 - L.eye(2), check_errors=True), (R(2, 2),)),
    (lambda L, m: L.linalg.inv_ex(m * 0.0, check_errors=True), (R(3, 3),)),
    (lambda L, m: L.linalg.solve_ex(m * 0.0, m, check_errors=True), (R(3, 3),)),
    (lambda L, m: L.linalg.eig(m), (R(2, 3),)),
    (lambda L, m: L.linalg.eigvals(m.long()), (R(3, 3),)),
    (lambda L, m: L.linalg.matrix_exp(m), (R(2, 3),)),
    (lambda L, m: L.linalg.lu_factor(m * 0.0), (R(3, 3),)),
    (lambda L, m: L.linalg.lu_factor(m, pivot=False), (R(3, 3),)),
    (lambda L, m: L.linalg.lu(m, pivot=False), (R(3, 3),)),
    (lambda L, m: L.linalg.lu_solve(*L.linalg.lu_factor(m), m[0]), (R(3, 3),)),
    (lambda L, m: L.linalg.lu_solve(*L.linalg.lu_factor(m), m[:2]), (R(3, 3),)),
    (lambda L, m: L.linalg.householder_product(m, m[0, :2]), (R(3, 4),)),
    (lambda L, m: L.linalg.householder_product(m, L.ones(4)), (R(4, 3),)),
    (lambda L, m: L.linalg.ldl_factor(m * 0.0), (R(3, 3),)),
    (lambda L, m: L.linalg.ldl_solve(*L.linalg.ldl_factor(m + m.mT), m[:2]), (R(3, 3),)),
    (lambda L, m: L.linalg.tensorinv(m, ind=1), (R(2, 3, 4),)),
    (lambda L, m: L.linalg.tensorsolve(m, m[0]), (R(2, 3, 4),)),
    (lambda L, m: L.linalg.tensorsolve(m, m[0, 0], dims=0), (R(2, 2, 4),)),
    (lambda L, m: L.linalg.tensorsolve(m.reshape(2, 2, 4), L.ones(2, 2, dtype=L.float64)), (R(4, 4),)),
    (lambda L, x: L.linalg.vander(x, N=1), (R(3),)),
    (lambda L, x: L.linalg.vander(x > 0), (R(3),)),
])
def test_errors_have_pytorchs_types(fn, args):
    _raises_like_torch(fn, *args)
