"""torch.linalg: solve, inv, det, cholesky, qr, eigh, svd, lstsq and norms, with a gradient."""
import numpy as np
import torch

torch.manual_seed(0)
rng = np.random.default_rng(0)
M = rng.normal(size=(4, 4))
A = torch.tensor(M @ M.T + 4 * np.eye(4), dtype=torch.float64)
b = torch.tensor(rng.normal(size=(4,)), dtype=torch.float64)

x = torch.linalg.solve(A, b)
print("solve:", x)
print("residual small:", torch.allclose(A @ x, b))
print("inv @ A = I:", torch.allclose(torch.linalg.inv(A) @ A, torch.eye(4, dtype=torch.float64)))
print("det:", torch.linalg.det(A).item(), "slogdet:", torch.linalg.slogdet(A))
L = torch.linalg.cholesky(A)
print("cholesky lower:", torch.allclose(L, torch.tril(L)), torch.allclose(L @ L.T, A))
Q, R = torch.linalg.qr(A)
print("qr:", torch.allclose(Q @ R, A), torch.allclose(Q.T @ Q, torch.eye(4, dtype=torch.float64)))
evals, evecs = torch.linalg.eigh(A)
print("eigh eigenvalues:", evals)
S = torch.linalg.svdvals(A)
print("svd values:", S)
U, S2, Vh = torch.linalg.svd(A)
print("svd reconstructs:", torch.allclose(U @ torch.diag(S2) @ Vh, A))
X = torch.tensor(rng.normal(size=(10, 3)), dtype=torch.float64)
y = X @ torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64) + 0.01 * torch.tensor(rng.normal(size=10))
print("lstsq:", torch.linalg.lstsq(X, y.unsqueeze(1)).solution.squeeze())
print("norms:", torch.linalg.norm(A), torch.linalg.vector_norm(b, ord=1), torch.linalg.matrix_norm(A, ord="fro"))

# gradient of a log-determinant (= inverse transpose)
P = A.clone().requires_grad_()
torch.logdet(P).backward()
print("d logdet / dA = A^-T:", torch.allclose(P.grad, torch.linalg.inv(A).T))
