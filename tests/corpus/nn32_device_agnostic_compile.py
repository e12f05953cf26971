"""Device-agnostic training code as tutorials write it: torch.device, .to(device), cuda checks,
pin_memory / non_blocking, torch.compile on the model, and deterministic switches."""
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
torch.backends.cudnn.deterministic = True
torch.backends.cudnn.benchmark = False
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
print("device:", device, "cuda available:", torch.cuda.is_available(), "device count:", torch.cuda.device_count())
rng = np.random.default_rng(0)
X = torch.tensor(rng.normal(size=(40, 3)), dtype=torch.float32)
y = X.sum(1, keepdim=True) ** 2
loader = DataLoader(TensorDataset(X, y), batch_size=10, pin_memory=torch.cuda.is_available())
model = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 1)).to(device)
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.tensor(rng.normal(0, 0.5, tuple(p.shape)), dtype=torch.float32))
print("parameter device:", next(model.parameters()).device)
compiled = torch.compile(model, backend="eager")  # skip the C++ toolchain on CPU-only machines
opt = torch.optim.Adam(model.parameters(), lr=0.02)
for epoch in range(5):
    total = 0.0
    for xb, yb in loader:
        xb, yb = xb.to(device, non_blocking=True), yb.to(device, non_blocking=True)
        opt.zero_grad(set_to_none=True)
        loss = nn.functional.mse_loss(compiled(xb), yb)
        loss.backward()
        opt.step()
        total += loss.item()
    print(f"epoch {epoch} loss {total / len(loader):.5f}")
with torch.no_grad():
    out = compiled(X[:2].to(device)).cpu()
print("compiled equals eager:", torch.allclose(out, model(X[:2])), "output:", out.squeeze().tolist() == model(X[:2]).squeeze().tolist())
t = torch.ones(2, device=device, dtype=torch.float64)
print("created on device:", t.device, t.dtype, t.cpu().numpy().tolist())
print("is_cuda:", t.is_cuda)
