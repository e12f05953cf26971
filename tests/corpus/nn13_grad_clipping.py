"""Gradient clipping: clip_grad_norm_ returns the total norm; clip_grad_value_; an exploding RNN-like loop."""
import numpy as np
import torch
import torch.nn as nn
from torch.nn.utils import clip_grad_norm_, clip_grad_value_

torch.manual_seed(0)
rng = np.random.default_rng(0)
model = nn.Sequential(nn.Linear(3, 3), nn.Tanh(), nn.Linear(3, 1))
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.tensor(rng.normal(0, 2.0, tuple(p.shape)), dtype=torch.float32))
x = torch.tensor(rng.normal(size=(8, 3)), dtype=torch.float32)
loss = (model(x) ** 2).sum() * 100
loss.backward()
norms = [p.grad.norm().item() for p in model.parameters()]
print("grad norms before:", [round(n, 3) for n in norms])
total = clip_grad_norm_(model.parameters(), max_norm=1.0)
print("returned total norm:", round(total.item(), 3))
after = torch.sqrt(sum(p.grad.pow(2).sum() for p in model.parameters()))
print("total norm after clipping:", round(after.item(), 5))
inf_norm = clip_grad_norm_(model.parameters(), max_norm=0.5, norm_type=float("inf"))
print("inf norm:", round(inf_norm.item(), 5), "max abs after:", round(max(p.grad.abs().max().item() for p in model.parameters()), 5))
for p in model.parameters():
    p.grad = torch.full_like(p, 3.0) * torch.sign(torch.randn_like(p)).abs()
clip_grad_value_(model.parameters(), clip_value=0.25)
print("after clip_grad_value_:", sorted({round(v, 4) for p in model.parameters() for v in p.grad.flatten().tolist()}))

# a recurrent loop trained with clipped gradients
W = torch.tensor([[1.5]], requires_grad=True)
opt = torch.optim.SGD([W], lr=0.5)
seq = torch.ones(20, 1)
for step in range(5):
    h = torch.zeros(1, 1)
    for t in range(20):
        h = torch.tanh(h @ W + seq[t])
    loss = (h - 0.1).pow(2).sum()
    opt.zero_grad()
    loss.backward()
    n = clip_grad_norm_([W], 0.1)
    opt.step()
    print(f"step {step} loss {loss.item():.6f} grad norm {n.item():.6f} W {W.item():.6f}")
