"""torch.lobpcg: the k largest (or smallest) eigenpairs of a symmetric positive definite matrix,
optionally of the generalized problem A x = lambda B x.

PyTorch iterates LOBPCG (sparse-friendly, converged to `tol`); fgrad solves the same problem
densely (B's Cholesky factor reduces it to a standard one, torch.linalg.eigh solves that), so
the eigenpairs are exact to rounding, `niter`/`tol`/`tracker`/`method` have nothing to tune,
and gradients flow through eigh to A and B (the eigenvalues' derivatives are PyTorch's; an
eigenvector is defined up to sign, as in PyTorch)."""
from __future__ import annotations

from typing import Any

from ..core.errors import FgradValueError
from . import linalg
from ._tensor.tensor import Tensor


def _dense(M: Any) -> Tensor:
    return M.to_dense() if getattr(M, "is_sparse", False) else M


def lobpcg(A: Tensor, k: int | None = None, B: Tensor | None = None, X: Tensor | None = None,
           n: int | None = None, iK: Tensor | None = None, niter: int | None = None, tol: float | None = None,
           largest: bool | None = None, method: str | None = None, tracker: Any = None,
           ortho_iparams: dict | None = None, ortho_fparams: dict | None = None,
           ortho_bparams: dict | None = None) -> tuple:
    """The extreme eigenpairs of the symmetric positive definite A (batched over leading dims),
    of A x = lambda B x when B is given (see the module docstring for how fgrad solves it).

    Args:
        A: (..., m, m) symmetric positive definite, dense or sparse COO.
        k: the number of eigenpairs (1 by default; X's column count when X is given).
        B: (..., m, m) symmetric positive definite, or None (the identity).
        X: an initial guess (..., m, n); its column count sets how many pairs are returned.
        n: the size of the guess PyTorch would generate (k by default).
        iK: a preconditioner (accepted: the dense solve needs none).
        niter, tol, method, tracker, ortho_iparams, ortho_fparams, ortho_bparams: PyTorch's
            iteration settings (the dense solve is exact; accepted for its signature).
        largest: the largest eigenvalues (default) or, when False, the smallest.

    Returns:
        (E, X): E (..., k) the eigenvalues (descending when largest, else ascending), X
        (..., m, k) the eigenvectors, B-orthonormal.

    Raises:
        ValueError: A (or B) is not square, B's shape differs from A's, or m < 3 * n (as
        PyTorch, which needs room for its search subspace).
    """
    A = _dense(A)
    shape = tuple(A.shape)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise FgradValueError(f"lobpcg: A must be square, got shape {shape}")
    m = shape[-1]
    k = 1 if k is None else int(k)
    n = (k if n is None else int(n)) if X is None else int(X.shape[-1])
    if m < 3 * n:
        raise FgradValueError(f"LOBPCG algorithm is not applicable when the number of A rows (={m}) is smaller "
                              f"than 3 x the number of requested eigenpairs (={n})")
    largest = True if largest is None else bool(largest)
    if B is None:
        w, V = linalg.eigh(A)
    else:
        B = _dense(B)
        if tuple(B.shape) != shape:
            raise FgradValueError(f"lobpcg: B must have A's shape {shape}, got {tuple(B.shape)}")
        L = linalg.cholesky(B)
        # C = L^-1 A L^-T has A's eigenvalues relative to B; x = L^-T y
        left = linalg.solve_triangular(L, A, upper=False)
        C = linalg.solve_triangular(L, left.mT, upper=False)
        w, Y = linalg.eigh(C)
        V = linalg.solve_triangular(L.mT, Y, upper=True)
    if largest:
        idx = list(range(m - 1, m - 1 - n, -1))
    else:
        idx = list(range(n))
    return w[..., idx], V[..., idx]
