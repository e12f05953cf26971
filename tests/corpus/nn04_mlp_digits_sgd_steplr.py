"""MLP on sklearn digits: SGD with momentum and Nesterov, StepLR, weight decay, a DataLoader."""
import numpy as np
import torch
import torch.nn as nn
from sklearn.datasets import load_digits
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
digits = load_digits()
X = torch.tensor(digits.data / 16.0, dtype=torch.float32)
y = torch.tensor(digits.target, dtype=torch.long)
train_ds = TensorDataset(X[:1400], y[:1400])
test_X, test_y = X[1400:], y[1400:]
loader = DataLoader(train_ds, batch_size=64, shuffle=True, generator=torch.Generator().manual_seed(0))

model = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))
rng = np.random.default_rng(0)
with torch.no_grad():
    for p in model.parameters():
        bound = 1 / np.sqrt(p.shape[-1] if p.dim() > 1 else 32)
        p.copy_(torch.tensor(rng.uniform(-bound, bound, tuple(p.shape)), dtype=torch.float32))

optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-4)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
criterion = nn.CrossEntropyLoss()
for epoch in range(5):
    model.train()
    running, n = 0.0, 0
    for xb, yb in loader:
        optimizer.zero_grad()
        loss = criterion(model(xb), yb)
        loss.backward()
        optimizer.step()
        running += loss.item() * xb.size(0)
        n += xb.size(0)
    scheduler.step()
    model.eval()
    with torch.no_grad():
        acc = (model(test_X).argmax(1) == test_y).float().mean().item()
    print(f"epoch {epoch} lr {scheduler.get_last_lr()[0]:.4f} loss {running / n:.4f} test acc {acc:.4f}")
print("batches per epoch:", len(loader))
