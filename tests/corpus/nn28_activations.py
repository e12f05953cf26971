"""Activation functions and their gradients: ReLU, LeakyReLU, ELU, SELU, GELU (exact and tanh),
SiLU, Mish, Softplus(beta), Hardtanh, Hardswish, Sigmoid, Tanh, Softsign, PReLU learning its slope."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
x = torch.tensor([-3.0, -1.0, -0.1, 0.0, 0.5, 2.0], requires_grad=True)
acts = [nn.ReLU(), nn.LeakyReLU(0.1), nn.ELU(alpha=1.0), nn.SELU(), nn.GELU(), nn.GELU(approximate="tanh"),
        nn.SiLU(), nn.Mish(), nn.Softplus(beta=2.0), nn.Hardtanh(-1.0, 1.0), nn.Hardswish(), nn.Hardsigmoid(),
        nn.Sigmoid(), nn.Tanh(), nn.Softsign(), nn.ReLU6(), nn.CELU(0.5), nn.LogSigmoid(), nn.Tanhshrink()]
for act in acts:
    x.grad = None
    y = act(x)
    y.sum().backward()
    print(f"{str(act):38s} {[round(v, 5) for v in y.tolist()]} grad {[round(v, 5) for v in x.grad.tolist()]}")
print("softmax dim=0:", F.softmax(x.detach(), dim=0))
print("softmin:", nn.Softmin(dim=0)(x.detach()))
print("glu:", F.glu(torch.tensor([[1.0, 2.0, 0.5, -1.0]]), dim=-1))
print("threshold:", F.threshold(x.detach(), 0.2, -5.0))

prelu = nn.PReLU(num_parameters=1, init=0.25)
opt = torch.optim.SGD(prelu.parameters(), lr=0.1)
inp = torch.tensor([-2.0, -1.0, 1.0, 2.0])
target = torch.tensor([-1.0, -0.5, 1.0, 2.0])  # slope 0.5 on the negative side
for _ in range(30):
    opt.zero_grad()
    F.mse_loss(prelu(inp), target).backward()
    opt.step()
print("PReLU learned slope:", round(prelu.weight.item(), 5))
print("inplace ReLU:", nn.ReLU(inplace=True)(torch.tensor([-1.0, 1.0])))
