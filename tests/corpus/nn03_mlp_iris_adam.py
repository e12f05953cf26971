"""A two-layer MLP on iris with CrossEntropyLoss, Adam, mini-batches and argmax accuracy."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.datasets import load_iris

torch.manual_seed(0)
iris = load_iris()
X = torch.tensor(iris.data, dtype=torch.float32)
y = torch.tensor(iris.target)
X = (X - X.mean(dim=0)) / X.std(dim=0)
perm = np.random.default_rng(0).permutation(150)
train_idx, test_idx = torch.from_numpy(perm[:120]), torch.from_numpy(perm[120:])


class MLP(nn.Module):
    def __init__(self, hidden=16):
        super().__init__()
        self.fc1 = nn.Linear(4, hidden)
        self.fc2 = nn.Linear(hidden, 3)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


model = MLP()
rng = np.random.default_rng(42)
with torch.no_grad():
    for name, p in model.named_parameters():
        fan_in = p.shape[1] if p.dim() == 2 else p.shape[0]
        p.copy_(torch.tensor(rng.uniform(-1, 1, p.shape) / np.sqrt(fan_in), dtype=torch.float32))

optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
loss_fn = nn.CrossEntropyLoss()
for epoch in range(30):
    model.train()
    total = 0.0
    for start in range(0, 120, 30):
        idx = train_idx[start:start + 30]
        optimizer.zero_grad()
        loss = loss_fn(model(X[idx]), y[idx])
        loss.backward()
        optimizer.step()
        total += loss.item() * len(idx)
    if epoch % 5 == 4:
        model.eval()
        with torch.no_grad():
            acc = (model(X[test_idx]).argmax(dim=1) == y[test_idx]).float().mean()
        print(f"epoch {epoch + 1:2d} train loss {total / 120:.5f} test acc {acc.item():.4f}")

with torch.no_grad():
    probs = F.softmax(model(X[test_idx[:3]]), dim=1)
print("probabilities:", probs)
print("predicted classes:", probs.argmax(1).tolist(), "true:", y[test_idx[:3]].tolist())
