"""GroupNorm and InstanceNorm2d against manual formulas, inside a small conv net trained a few steps."""
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
rng = np.random.default_rng(0)
x = torch.tensor(rng.normal(1.0, 2.0, size=(2, 6, 3, 3)), dtype=torch.float32)
gn = nn.GroupNorm(num_groups=3, num_channels=6)
g = x.reshape(2, 3, -1)
manual = ((g - g.mean(-1, keepdim=True)) / torch.sqrt(g.var(-1, unbiased=False, keepdim=True) + 1e-5)).reshape_as(x)
print(gn)
print("GroupNorm matches:", torch.allclose(gn(x), manual, atol=1e-5))
inorm = nn.InstanceNorm2d(6)
m = x.reshape(2, 6, -1)
manual_i = ((m - m.mean(-1, keepdim=True)) / torch.sqrt(m.var(-1, unbiased=False, keepdim=True) + 1e-5)).reshape_as(x)
print(inorm)
print("InstanceNorm matches:", torch.allclose(inorm(x), manual_i, atol=1e-5))
print("GroupNorm(1) == LayerNorm over C,H,W:", torch.allclose(nn.GroupNorm(1, 6)(x), nn.LayerNorm([6, 3, 3])(x), atol=1e-5))

net = nn.Sequential(nn.Conv2d(6, 8, 3, padding=1), nn.GroupNorm(4, 8), nn.SiLU(), nn.Conv2d(8, 2, 1),
                    nn.AdaptiveAvgPool2d(1), nn.Flatten())
with torch.no_grad():
    for n, p in net.named_parameters():
        if n.startswith("1."):
            continue
        p.copy_(torch.tensor(rng.normal(0, 0.3, tuple(p.shape)), dtype=torch.float32))
target = torch.tensor([[1.0, -1.0], [0.5, 0.0]])
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for step in range(5):
    opt.zero_grad()
    loss = nn.functional.mse_loss(net(x), target)
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.6f}")
print("group norm affine after training:", net[1].weight.detach(), net[1].bias.detach())
print("GroupNorm has no running stats:", [n for n, _ in net[1].named_buffers()])
