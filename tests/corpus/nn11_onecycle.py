"""OneCycleLR stepped per batch with SGD momentum cycling; lr and momentum recorded."""
import numpy as np
import torch
import torch.nn as nn
from torch.optim.lr_scheduler import OneCycleLR

torch.manual_seed(0)
rng = np.random.default_rng(11)
X = torch.tensor(rng.normal(size=(96, 5)), dtype=torch.float32)
w_true = torch.tensor(rng.normal(size=(5, 1)), dtype=torch.float32)
y = (X @ w_true > 0).float()

model = nn.Sequential(nn.Linear(5, 10), nn.ReLU(), nn.Linear(10, 1))
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.tensor(rng.normal(0, 0.4, tuple(p.shape)), dtype=torch.float32))
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
epochs, steps_per_epoch = 4, 6
sched = OneCycleLR(opt, max_lr=0.5, epochs=epochs, steps_per_epoch=steps_per_epoch)
lrs, moms = [], []
for epoch in range(epochs):
    total = 0.0
    for b in range(steps_per_epoch):
        xb, yb = X[b * 16:(b + 1) * 16], y[b * 16:(b + 1) * 16]
        opt.zero_grad()
        loss = nn.functional.binary_cross_entropy_with_logits(model(xb), yb)
        loss.backward()
        opt.step()
        sched.step()
        lrs.append(opt.param_groups[0]["lr"])
        moms.append(opt.param_groups[0]["momentum"])
        total += loss.item()
    print(f"epoch {epoch} avg loss {total / steps_per_epoch:.5f}")
print("initial lr:", opt.param_groups[0]["initial_lr"], "max:", round(max(lrs), 6))
print("lrs:", [f"{v:.5f}" for v in lrs[::3]])
print("momentum:", [round(m, 4) for m in moms[::4]])
with torch.no_grad():
    print("accuracy:", ((model(X) > 0).float() == y).float().mean().item())
