"""A convolutional autoencoder as tutorials write it: Conv2d encoder, nn.Flatten / nn.Unflatten
bottleneck, ConvTranspose2d decoder, trained on digits."""
import numpy as np
import torch
import torch.nn as nn
from sklearn.datasets import load_digits

torch.manual_seed(0)
imgs = torch.tensor(load_digits().images[:256] / 16.0, dtype=torch.float32).unsqueeze(1)
model = nn.Sequential(
    nn.Conv2d(1, 4, 3, stride=2, padding=1), nn.ReLU(),          # 4 x 4 x 4
    nn.Flatten(), nn.Linear(64, 8), nn.ReLU(),                      # bottleneck
    nn.Linear(8, 64), nn.ReLU(), nn.Unflatten(1, (4, 4, 4)),
    nn.ConvTranspose2d(4, 1, 4, stride=2, padding=1), nn.Sigmoid())
rng = np.random.default_rng(0)
with torch.no_grad():
    for p in model.parameters():
        fan = int(np.prod(p.shape[1:])) if p.dim() > 1 else 8
        p.copy_(torch.tensor(rng.normal(0, 1 / np.sqrt(fan), tuple(p.shape)), dtype=torch.float32))
print(model[7])
print("output shape:", model(imgs[:2]).shape)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(6):
    for i in range(0, 256, 64):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(imgs[i:i + 64]), imgs[i:i + 64])
        loss.backward()
        opt.step()
    print(f"epoch {epoch} mse {loss.item():.5f}")
