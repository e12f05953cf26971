"""1-D convolutions for next-value forecasting on a noisy sine: Conv1d with dilation, padding and
channels-first reshaping, Huber loss."""
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
rng = np.random.default_rng(4)
t = np.arange(400) * 0.1
series = np.sin(t) + 0.5 * np.sin(3 * t) + 0.05 * rng.normal(size=t.shape)
window = 24
Xs = np.stack([series[i:i + window] for i in range(len(series) - window)])
ys = series[window:]
X = torch.tensor(Xs, dtype=torch.float32).unsqueeze(1)  # (N, 1, window)
y = torch.tensor(ys, dtype=torch.float32).unsqueeze(1)
print("inputs:", X.shape, "targets:", y.shape)

model = nn.Sequential(
    nn.Conv1d(1, 8, kernel_size=3, padding=1), nn.ReLU(),
    nn.Conv1d(8, 8, kernel_size=3, padding=2, dilation=2), nn.ReLU(),
    nn.Conv1d(8, 4, kernel_size=5, stride=2), nn.ReLU(),
    nn.Flatten(), nn.Linear(4 * 10, 1))
with torch.no_grad():
    for p in model.parameters():
        fan_in = int(np.prod(p.shape[1:])) if p.dim() > 1 else 8
        p.copy_(torch.tensor(rng.uniform(-1, 1, tuple(p.shape)) / np.sqrt(fan_in), dtype=torch.float32))
print("conv output lengths:", [tuple(model[:i](X[:1]).shape) for i in (2, 4, 6)])
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
loss_fn = nn.HuberLoss(delta=0.5)
train_n = 300
for epoch in range(15):
    for i in range(0, train_n, 60):
        opt.zero_grad()
        loss = loss_fn(model(X[i:i + 60]), y[i:i + 60])
        loss.backward()
        opt.step()
    if epoch % 3 == 2:
        with torch.no_grad():
            val = nn.functional.mse_loss(model(X[train_n:]), y[train_n:]).item()
        print(f"epoch {epoch + 1} train huber {loss.item():.5f} val mse {val:.5f}")
with torch.no_grad():
    print("forecast vs truth:", model(X[-3:]).squeeze(), y[-3:].squeeze())
