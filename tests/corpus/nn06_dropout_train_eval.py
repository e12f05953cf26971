"""Dropout semantics: identity in eval mode, inverted scaling in train mode, and module.training flags."""
import torch
import torch.nn as nn

torch.manual_seed(0)

drop = nn.Dropout(p=0.25)
x = torch.arange(1, 2001, dtype=torch.float32).reshape(40, 50)
print("default training flag:", drop.training)
out = drop(x)
kept = out != 0
print("kept values scaled by 1/(1-p):", torch.allclose(out[kept], x[kept] / 0.75))
frac = kept.float().mean().item()
print("kept fraction near 0.75:", 0.7 < frac < 0.8)
drop.eval()
print("eval mode is identity:", torch.equal(drop(x), x))

model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.5), nn.Linear(8, 2))
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.linspace(-1, 1, p.numel()).reshape(p.shape) * (0.5 + 0.1 * i))
inp = torch.tensor([[1.0, 2.0, 3.0, 4.0], [-1.0, 0.5, 0.0, 2.0]])
model.eval()
print("all submodules in eval:", [m.training for m in model])
with torch.no_grad():
    e1, e2 = model(inp), model(inp)
print("eval outputs deterministic:", torch.equal(e1, e2))
print("eval output:", e1)
model.train()
print("train flags:", [m.training for m in model.modules()])
t1 = model(inp)
print("train output shape:", tuple(t1.shape), "requires grad:", t1.requires_grad)
print("functional dropout with training=False:", torch.equal(nn.functional.dropout(x, 0.5, training=False), x))
print("p=0 dropout is identity:", torch.equal(nn.Dropout(0.0)(x), x))
a = nn.Dropout(p=1.0)(x)
print("p=1 zeroes everything:", a.abs().sum().item())
d2 = nn.Dropout2d(0.5)
y = d2(torch.ones(4, 6, 3, 3))
per_channel = y.reshape(4, 6, 9)
print("Dropout2d drops whole channels:", bool(((per_channel == 0).all(-1) | (per_channel == 2).all(-1)).all()))
