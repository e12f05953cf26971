"""Curve fitting with optim.LBFGS and a closure (strong Wolfe line search), compared with Adam."""
import numpy as np
import torch

torch.manual_seed(0)
rng = np.random.default_rng(0)
t = torch.linspace(0, 4, 50, dtype=torch.float64)
y = 2.5 * torch.exp(-1.3 * t) + 0.4 + 0.01 * torch.tensor(rng.normal(size=50))


def model(params, t):
    a, k, c = params
    return a * torch.exp(-k * t) + c


params = torch.tensor([1.0, 0.5, 0.0], dtype=torch.float64, requires_grad=True)
opt = torch.optim.LBFGS([params], lr=1, max_iter=50, history_size=10, line_search_fn="strong_wolfe")
evals = []


def closure():
    opt.zero_grad()
    loss = ((model(params, t) - y) ** 2).mean()
    loss.backward()
    evals.append(loss.item())
    return loss


for outer in range(3):
    loss = opt.step(closure)
    print(f"outer step {outer}: loss {loss.item():.8f} params {[round(v, 5) for v in params.tolist()]}")
print("closure evaluations:", len(evals) > 3, "final loss < 1e-3:", evals[-1] < 1e-3)

p2 = torch.tensor([1.0, 0.5, 0.0], dtype=torch.float64, requires_grad=True)
adam = torch.optim.Adam([p2], lr=0.05)
for step in range(300):
    adam.zero_grad()
    loss = ((model(p2, t) - y) ** 2).mean()
    loss.backward()
    adam.step()
print(f"Adam after 300 steps: loss {loss.item():.8f} params {[round(v, 4) for v in p2.tolist()]}")
