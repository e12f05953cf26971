"""Mixed precision as written for GPUs, run on the CPU: torch.autocast with bfloat16 and a GradScaler."""
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"
print("device:", device)
rng = np.random.default_rng(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2)).to(device)
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.tensor(rng.normal(0, 0.3, tuple(p.shape)), dtype=torch.float32))
X = torch.tensor(rng.normal(size=(32, 8)), dtype=torch.float32).to(device)
y = torch.tensor(rng.integers(0, 2, 32)).to(device)

with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
    out = model(X)
    loss = nn.functional.cross_entropy(out, y)
print("autocast linear output dtype:", out.dtype, "loss dtype:", loss.dtype)
print("params stay float32:", {p.dtype for p in model.parameters()})

scaler = torch.amp.GradScaler("cpu", init_scale=1024.0)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(5):
    opt.zero_grad()
    with torch.autocast(device_type="cpu", enabled=False):
        loss = nn.functional.cross_entropy(model(X), y)
    scaler.scale(loss).backward()
    scaler.unscale_(opt)
    gnorm = nn.utils.clip_grad_norm_(model.parameters(), 5.0)
    scaler.step(opt)
    scaler.update()
    print(f"step {step} loss {loss.item():.5f} grad norm {gnorm.item():.5f} scale {scaler.get_scale()}")
print("scaler state keys:", sorted(scaler.state_dict().keys()))
