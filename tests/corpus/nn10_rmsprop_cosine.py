"""RMSprop with CosineAnnealingLR on a regression MLP; printing the lr schedule and loss."""
import numpy as np
import torch
import torch.nn as nn
from torch.optim.lr_scheduler import CosineAnnealingLR

torch.manual_seed(0)
rng = np.random.default_rng(7)
X = torch.tensor(rng.uniform(-3, 3, (200, 1)), dtype=torch.float32)
y = torch.sin(X) + 0.1 * X ** 2

model = nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 1))
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.tensor(rng.normal(0, 0.5, tuple(p.shape)), dtype=torch.float32))
optimizer = torch.optim.RMSprop(model.parameters(), lr=0.01, alpha=0.9, momentum=0.5)
scheduler = CosineAnnealingLR(optimizer, T_max=10, eta_min=1e-4)
print(optimizer)
for epoch in range(10):
    for i in range(0, 200, 50):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(X[i:i + 50]), y[i:i + 50])
        loss.backward()
        optimizer.step()
    lr = optimizer.param_groups[0]["lr"]
    scheduler.step()
    with torch.no_grad():
        full = nn.functional.mse_loss(model(X), y).item()
    print(f"epoch {epoch} lr {lr:.6f} mse {full:.5f}")
print("last lr:", scheduler.get_last_lr())
print("square_avg state shape:", optimizer.state[model[0].weight]["square_avg"].shape)
