"""A small GAN on 2-D points on a ring: generator and discriminator MLPs, BCEWithLogits, Adam
with betas=(0.5, 0.999), alternating updates with detach(), noise from NumPy."""
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
rng = np.random.default_rng(0)


def real_batch(n):
    angles = rng.uniform(0, 2 * np.pi, n)
    pts = np.stack([np.cos(angles), np.sin(angles)], 1) * 2 + 0.05 * rng.normal(size=(n, 2))
    return torch.tensor(pts, dtype=torch.float32)


G = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 16), nn.LeakyReLU(0.2), nn.Linear(16, 2))
D = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
init = np.random.default_rng(1)
with torch.no_grad():
    for p in list(G.parameters()) + list(D.parameters()):
        fan_in = p.shape[1] if p.dim() == 2 else p.shape[0]
        p.copy_(torch.tensor(init.normal(0, 1 / np.sqrt(fan_in), tuple(p.shape)), dtype=torch.float32))
opt_g = torch.optim.Adam(G.parameters(), lr=2e-3, betas=(0.5, 0.999))
opt_d = torch.optim.Adam(D.parameters(), lr=2e-3, betas=(0.5, 0.999))
criterion = nn.BCEWithLogitsLoss()
batch = 64
ones, zeros = torch.ones(batch, 1), torch.zeros(batch, 1)
for step in range(60):
    real = real_batch(batch)
    z = torch.tensor(rng.normal(size=(batch, 2)), dtype=torch.float32)
    fake = G(z)
    d_loss = criterion(D(real), ones) + criterion(D(fake.detach()), zeros)
    opt_d.zero_grad()
    d_loss.backward()
    opt_d.step()

    g_loss = criterion(D(fake), ones)
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
    if step % 10 == 9:
        with torch.no_grad():
            radius = G(z).norm(dim=1).mean().item()
        print(f"step {step + 1} D loss {d_loss.item():.4f} G loss {g_loss.item():.4f} mean radius {radius:.4f}")
print("the G step also left grads in D:", all(p.grad is not None for p in D.parameters()))
with torch.no_grad():
    zs = torch.tensor([[0.0, 0.0], [1.0, -1.0], [-0.5, 2.0]])
    print("generated points:\n", G(zs))
