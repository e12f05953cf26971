"""ReduceLROnPlateau on a validation loss, with patience, factor, cooldown and min_lr."""
import numpy as np
import torch
import torch.nn as nn
from torch.optim.lr_scheduler import ReduceLROnPlateau

torch.manual_seed(0)
rng = np.random.default_rng(5)
X = torch.tensor(rng.normal(size=(64, 4)), dtype=torch.float32)
y = X @ torch.tensor([[1.0], [-1.0], [0.5], [2.0]]) + 0.3 * torch.tensor(rng.normal(size=(64, 1)), dtype=torch.float32)
Xv, yv = X[48:], y[48:]
X, y = X[:48], y[:48]

model = nn.Linear(4, 1)
with torch.no_grad():
    model.weight.fill_(0.0)
    model.bias.fill_(0.0)
opt = torch.optim.Adam(model.parameters(), lr=0.5)
sched = ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=2, cooldown=1, min_lr=1e-3)
for epoch in range(25):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(X), y)
    loss.backward()
    opt.step()
    with torch.no_grad():
        val = nn.functional.mse_loss(model(Xv), yv).item()
    sched.step(val)
    print(f"epoch {epoch:2d} val {val:.5f} lr {opt.param_groups[0]['lr']:.5f} bad epochs {sched.num_bad_epochs}")
print("best:", round(sched.best, 5))
