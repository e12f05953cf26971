"""Regression losses: MSE, L1, SmoothL1 (beta), Huber (delta) with their gradients, plus
GaussianNLLLoss and PoissonNLLLoss."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
pred = torch.tensor([0.0, 0.4, 1.5, 3.0, -2.0], requires_grad=True)
target = torch.tensor([0.1, 0.0, 1.0, 0.5, -2.2])

for name, fn in [("MSE", nn.MSELoss()), ("L1", nn.L1Loss()), ("SmoothL1 beta=1", nn.SmoothL1Loss()),
                 ("SmoothL1 beta=0.5", nn.SmoothL1Loss(beta=0.5)), ("Huber delta=1", nn.HuberLoss()),
                 ("Huber delta=2", nn.HuberLoss(delta=2.0))]:
    pred.grad = None
    loss = fn(pred, target)
    loss.backward()
    print(f"{name:18s} {loss.item():.6f} grad {[round(g, 5) for g in pred.grad.tolist()]}")
print("mse sum:", F.mse_loss(pred, target, reduction="sum").item())
print("l1 none:", F.l1_loss(pred, target, reduction="none"))
print("huber == delta * smoothl1(beta=delta):", torch.allclose(F.huber_loss(pred, target, delta=2.0), 2.0 * F.smooth_l1_loss(pred, target, beta=2.0)))

mean = torch.tensor([[0.0], [1.0], [2.0]])
var = torch.tensor([[1.0], [0.5], [2.0]])
obs = torch.tensor([[0.2], [1.5], [1.0]])
print("GaussianNLL:", nn.GaussianNLLLoss()(mean, obs, var).item(), "full:", nn.GaussianNLLLoss(full=True)(mean, obs, var).item())
rates = torch.tensor([0.5, 1.0, 2.0])
counts = torch.tensor([0.0, 2.0, 1.0])
print("PoissonNLL log_input:", nn.PoissonNLLLoss()(rates, counts).item())
print("PoissonNLL rate input:", nn.PoissonNLLLoss(log_input=False, full=True)(rates.exp(), counts).item())
print("broadcast warning-free shapes:", F.mse_loss(torch.zeros(3, 1), torch.ones(3, 1)).item())
