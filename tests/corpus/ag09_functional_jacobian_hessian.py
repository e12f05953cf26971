"""torch.autograd.functional: jacobian, hessian, vjp, jvp, hvp, vhp, and a batched jacobian."""
import torch
from torch.autograd.functional import hessian, hvp, jacobian, jvp, vhp, vjp

torch.manual_seed(0)


def f(x):
    return torch.stack([x[0] ** 2 * x[1], 5 * x[0] + torch.sin(x[1]), x[1] * x[2]])


def scalar(x):
    return (x ** 3).sum() + x[0] * x[1] * x[2]


x = torch.tensor([1.0, 2.0, 3.0])
J = jacobian(f, x)
print("jacobian:\n", J)
H = hessian(scalar, x)
print("hessian:\n", H)

v = torch.tensor([1.0, 0.0, -1.0])
out, vj = vjp(f, x, v)
print("vjp:", out, vj)
out, jv = jvp(f, x, v)
print("jvp:", jv)
val, hv = hvp(scalar, x, v)
print("hvp:", val, hv)
val, vh = vhp(scalar, x, v)
print("vhp:", vh)


def two_inputs(a, b):
    return (a * b).sum(dim=-1)


A = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
B = torch.tensor([[0.5, -1.0], [2.0, 0.0]])
ja, jb = jacobian(two_inputs, (A, B))
print("jacobian wrt a, shape", tuple(ja.shape), "\n", ja)
print("jacobian wrt b:\n", jb)
Jv = jacobian(f, x, vectorize=True)
print("vectorized equals:", torch.allclose(J, Jv))
Hc = hessian(lambda t: torch.log1p(t.pow(2)).sum(), x, create_graph=False)
print("hessian diag:", torch.diagonal(Hc))

# the Gauss-Newton matrix J^T J of a residual function
def residuals(p):
    t = torch.linspace(0, 1, 5)
    return p[0] * torch.exp(p[1] * t) - (1 + t)


p = torch.tensor([1.0, 0.5])
Jr = jacobian(residuals, p)
print("J^T J:\n", Jr.T @ Jr)
