"""A small VAE on sklearn digits: encoder to (mu, logvar), the reparameterisation trick with
noise drawn from a seeded NumPy generator, BCE + KL loss, and decoding a latent grid."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.datasets import load_digits

torch.manual_seed(0)
X = torch.tensor(load_digits().data[:512] / 16.0, dtype=torch.float32)


class VAE(nn.Module):
    def __init__(self, d_in=64, hidden=32, latent=2):
        super().__init__()
        self.fc1 = nn.Linear(d_in, hidden)
        self.fc_mu = nn.Linear(hidden, latent)
        self.fc_logvar = nn.Linear(hidden, latent)
        self.fc3 = nn.Linear(latent, hidden)
        self.fc4 = nn.Linear(hidden, d_in)

    def encode(self, x):
        h = F.relu(self.fc1(x))
        return self.fc_mu(h), self.fc_logvar(h)

    def reparameterize(self, mu, logvar, eps=None):
        std = torch.exp(0.5 * logvar)
        if eps is None:
            eps = torch.randn_like(std)
        return mu + eps * std

    def decode(self, z):
        return torch.sigmoid(self.fc4(F.relu(self.fc3(z))))

    def forward(self, x, eps=None):
        mu, logvar = self.encode(x)
        z = self.reparameterize(mu, logvar, eps)
        return self.decode(z), mu, logvar


def loss_function(recon_x, x, mu, logvar):
    bce = F.binary_cross_entropy(recon_x, x, reduction="sum")
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return bce, kld


model = VAE()
rng = np.random.default_rng(0)
with torch.no_grad():
    for p in model.parameters():
        fan_in = p.shape[1] if p.dim() == 2 else p.shape[0]
        p.copy_(torch.tensor(rng.uniform(-1, 1, tuple(p.shape)) / np.sqrt(fan_in), dtype=torch.float32))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
noise = np.random.default_rng(1)
for epoch in range(6):
    model.train()
    tot_bce = tot_kld = 0.0
    for i in range(0, len(X), 128):
        xb = X[i:i + 128]
        eps = torch.from_numpy(noise.standard_normal((len(xb), 2)).astype(np.float32))
        recon, mu, logvar = model(xb, eps)
        bce, kld = loss_function(recon, xb, mu, logvar)
        loss = (bce + kld) / len(xb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        tot_bce += bce.item()
        tot_kld += kld.item()
    print(f"epoch {epoch} bce/img {tot_bce / len(X):.4f} kld/img {tot_kld / len(X):.4f}")

model.eval()
with torch.no_grad():
    mu, logvar = model.encode(X[:4])
    print("posterior means:\n", mu)
    print("posterior std:\n", torch.exp(0.5 * logvar))
    grid = torch.tensor([[a, b] for a in (-1.0, 0.0, 1.0) for b in (-1.0, 1.0)])
    samples = model.decode(grid)
    print("decoded grid shape:", tuple(samples.shape), "mean intensity:", samples.mean(dim=1))
    print("eval path is deterministic given mu:", torch.equal(model.decode(mu), model.decode(mu)))
