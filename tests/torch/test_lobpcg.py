"""torch.lobpcg against torch 2.13: the k largest/smallest eigenpairs (standard and generalized,
batched), the eigenvalues' gradients, and the errors."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad.torch as ftorch

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
M_ = 12


def _spd(seed, batch=()):
    rng = np.random.default_rng(seed)
    m = rng.standard_normal(batch + (M_, M_))
    return m @ np.swapaxes(m, -1, -2) + M_ * np.eye(M_)


@pytest.mark.parametrize("largest,generalized", [(True, False), (False, True)])
def test_eigenpairs(largest, generalized):
    A = _spd(0)
    B = _spd(1) if generalized else None
    kw = {"k": 2, "largest": largest}
    fE, fX = ftorch.lobpcg(ftorch.tensor(A), B=None if B is None else ftorch.tensor(B), **kw)
    tE, tX = torch.lobpcg(torch.tensor(A), B=None if B is None else torch.tensor(B), **kw)
    np.testing.assert_allclose(fE.numpy(), tE.numpy(), rtol=1e-7)
    Bm = np.eye(M_) if B is None else B
    # eigenvectors agree up to sign: X_f^T B X_t is diagonal with entries +-1
    np.testing.assert_allclose(np.abs(fX.numpy().T @ Bm @ tX.numpy()), np.eye(2), atol=1e-6)
    np.testing.assert_allclose(fX.numpy().T @ Bm @ fX.numpy(), np.eye(2), atol=1e-10)


def test_batched_and_eigenvalue_gradients():
    A = _spd(2, (2,))
    f = ftorch.tensor(A, requires_grad=True)
    t = torch.tensor(A, requires_grad=True)
    fE, _ = ftorch.lobpcg(f, k=2)
    tE, _ = torch.lobpcg(t, k=2)
    np.testing.assert_allclose(fE.detach().numpy(), tE.detach().numpy(), rtol=1e-7)
    w = np.array([1.0, -0.5])
    (fE * ftorch.tensor(w)).sum().backward()
    (tE * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(f.grad.numpy(), t.grad.numpy(), atol=1e-6)


def test_initial_guess_sets_k_and_errors():
    A = _spd(3)
    X0 = np.random.default_rng(4).standard_normal((M_, 3))
    fE, fX = ftorch.lobpcg(ftorch.tensor(A), X=ftorch.tensor(X0))
    tE, _ = torch.lobpcg(torch.tensor(A), X=torch.tensor(X0))
    assert tuple(fX.shape) == (M_, 3)
    np.testing.assert_allclose(fE.numpy(), tE.numpy(), rtol=1e-6)
    for lib in (ftorch, torch):
        with pytest.raises(ValueError, match="smaller than 3 x the number of requested eigenpairs"):
            lib.lobpcg(lib.tensor(A), k=5)
    with pytest.raises(ValueError, match="square"):
        ftorch.lobpcg(ftorch.ones(3, 4))
    with pytest.raises(ValueError, match="B must have A's shape"):
        ftorch.lobpcg(ftorch.tensor(A), B=ftorch.eye(3, dtype=ftorch.float64))
