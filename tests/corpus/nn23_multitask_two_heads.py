"""A shared trunk with a classification and a regression head, a weighted sum of two losses,
and per-head gradient norms."""
import numpy as np
import torch
import torch.nn as nn
from sklearn.datasets import load_digits

torch.manual_seed(0)
d = load_digits()
X = torch.tensor(d.data[:500] / 16.0, dtype=torch.float32)
cls = torch.tensor(d.target[:500])
ink = X.mean(dim=1, keepdim=True)  # regression target: mean ink


class MultiTask(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(64, 24), nn.ReLU())
        self.cls_head = nn.Linear(24, 10)
        self.reg_head = nn.Linear(24, 1)

    def forward(self, x):
        h = self.trunk(x)
        return self.cls_head(h), self.reg_head(h)


model = MultiTask()
rng = np.random.default_rng(9)
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.tensor(rng.normal(0, 0.2, tuple(p.shape)), dtype=torch.float32))
opt = torch.optim.Adam(model.parameters(), lr=5e-3)
ce, mse = nn.CrossEntropyLoss(), nn.MSELoss()
for epoch in range(12):
    logits, reg = model(X)
    l1, l2 = ce(logits, cls), mse(reg, ink)
    loss = l1 + 5.0 * l2
    opt.zero_grad()
    loss.backward()
    gn_cls = model.cls_head.weight.grad.norm().item()
    gn_reg = model.reg_head.weight.grad.norm().item()
    opt.step()
    if epoch % 3 == 2:
        acc = (logits.argmax(1) == cls).float().mean().item()
        print(f"epoch {epoch + 1}: ce {l1.item():.4f} mse {l2.item():.6f} acc {acc:.3f} |g_cls| {gn_cls:.4f} |g_reg| {gn_reg:.4f}")
with torch.no_grad():
    _, reg = model(X[:3])
print("predicted ink:", reg.squeeze(), "true:", ink[:3].squeeze())
