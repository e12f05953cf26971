"""Train/validation loop with early stopping that keeps a deepcopy of the best state_dict."""
import copy

import numpy as np
import torch
import torch.nn as nn
from sklearn.datasets import load_iris

torch.manual_seed(0)
iris = load_iris()
rng = np.random.default_rng(1)
perm = rng.permutation(150)
X = torch.tensor(iris.data[perm], dtype=torch.float32)
y = torch.tensor(iris.target[perm])
mean, std = X[:100].mean(0), X[:100].std(0)
X = (X - mean) / std
Xtr, ytr, Xva, yva = X[:100], y[:100], X[100:], y[100:]

model = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 3))
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.tensor(rng.normal(0, 0.5, tuple(p.shape)), dtype=torch.float32))
opt = torch.optim.Adam(model.parameters(), lr=0.05)
crit = nn.CrossEntropyLoss()
best_loss, best_state, best_epoch, patience, bad = float("inf"), None, -1, 5, 0
for epoch in range(100):
    model.train()
    opt.zero_grad()
    loss = crit(model(Xtr), ytr)
    loss.backward()
    opt.step()
    model.eval()
    with torch.no_grad():
        val_loss = crit(model(Xva), yva).item()
    if val_loss < best_loss - 1e-4:
        best_loss, best_epoch, bad = val_loss, epoch, 0
        best_state = copy.deepcopy(model.state_dict())
    else:
        bad += 1
    if epoch % 5 == 0:
        print(f"epoch {epoch:2d} train {loss.item():.5f} val {val_loss:.5f}")
    if bad >= patience:
        print(f"early stop at epoch {epoch}, best epoch {best_epoch}")
        break

last_val = val_loss
model.load_state_dict(best_state)
with torch.no_grad():
    restored = crit(model(Xva), yva).item()
    acc = (model(Xva).argmax(1) == yva).float().mean().item()
print(f"best val {best_loss:.5f} restored {restored:.5f} last {last_val:.5f}")
print("val accuracy with best weights:", round(acc, 4))
print("deepcopy is independent:", best_state["0.weight"] is not model.state_dict()["0.weight"])
