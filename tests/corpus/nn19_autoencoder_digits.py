"""A dense autoencoder on digits with a 2-D bottleneck; reconstruction MSE and embedding stats."""
import numpy as np
import torch
import torch.nn as nn
from sklearn.datasets import load_digits
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
X = torch.tensor(load_digits().data[:600] / 16.0, dtype=torch.float32)


class AutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 2))
        self.decoder = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 64), nn.Sigmoid())

    def forward(self, x):
        return self.decoder(self.encoder(x))


ae = AutoEncoder()
rng = np.random.default_rng(0)
with torch.no_grad():
    for p in ae.parameters():
        fan_in = p.shape[1] if p.dim() == 2 else p.shape[0]
        p.copy_(torch.tensor(rng.uniform(-1, 1, tuple(p.shape)) / np.sqrt(fan_in), dtype=torch.float32))
loader = DataLoader(TensorDataset(X), batch_size=100, shuffle=False)
opt = torch.optim.Adam(ae.parameters(), lr=5e-3)
for epoch in range(8):
    total = 0.0
    for (xb,) in loader:
        recon = ae(xb)
        loss = nn.functional.mse_loss(recon, xb, reduction="sum") / xb.size(0)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item()
    print(f"epoch {epoch} recon loss per image {total / len(loader):.4f}")
ae.eval()
with torch.no_grad():
    z = ae.encoder(X)
    err = ((ae(X) - X) ** 2).mean(dim=1)
print("latent shape:", tuple(z.shape), "latent mean:", z.mean(0), "latent std:", z.std(0))
print("best / worst reconstruction:", round(err.min().item(), 5), round(err.max().item(), 5))
