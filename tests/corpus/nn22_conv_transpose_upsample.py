"""Encoder-decoder with Conv2d / ConvTranspose2d, Upsample and interpolate; shape arithmetic and a
denoising step."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
rng = np.random.default_rng(6)

ct = nn.ConvTranspose2d(4, 2, kernel_size=3, stride=2, padding=1, output_padding=1)
print(ct, "weight shape:", ct.weight.shape)
print("transpose conv doubles 5x5 ->", ct(torch.zeros(1, 4, 5, 5)).shape)
print("Upsample nearest:", nn.Upsample(scale_factor=2, mode="nearest")(torch.arange(4.0).reshape(1, 1, 2, 2)))
print("interpolate bilinear:", F.interpolate(torch.arange(4.0).reshape(1, 1, 2, 2), size=(3, 3), mode="bilinear", align_corners=True))


class DenoiseNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(1, 6, 3, stride=2, padding=1), nn.ReLU())
        self.dec = nn.Sequential(nn.ConvTranspose2d(6, 6, 4, stride=2, padding=1), nn.ReLU(), nn.Conv2d(6, 1, 3, padding=1))

    def forward(self, x):
        return self.dec(self.enc(x))


net = DenoiseNet()
with torch.no_grad():
    for p in net.parameters():
        fan = int(np.prod(p.shape[1:])) if p.dim() > 1 else 6
        p.copy_(torch.tensor(rng.normal(0, 1 / np.sqrt(fan), tuple(p.shape)), dtype=torch.float32))
yy, xx = np.mgrid[0:8, 0:8]
clean = np.stack([np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / 6.0) for cy, cx in [(2, 3), (5, 5), (3, 6), (4, 1)]])
clean_t = torch.tensor(clean, dtype=torch.float32).unsqueeze(1)
noisy = clean_t + torch.tensor(0.2 * rng.normal(size=clean_t.shape), dtype=torch.float32)
print("encoded:", net.enc(noisy).shape, "decoded:", net(noisy).shape)
opt = torch.optim.Adam(net.parameters(), lr=1e-2)
for step in range(40):
    opt.zero_grad()
    loss = F.mse_loss(net(noisy), clean_t)
    loss.backward()
    opt.step()
    if step % 10 == 9:
        print(f"step {step + 1} mse {loss.item():.6f}")
print("noisy mse:", round(F.mse_loss(noisy, clean_t).item(), 6))
print("grad of transpose-conv weight shape:", net.dec[0].weight.grad.shape)
