"""LayerNorm inside a residual MLP block; manual check of the normalisation; AdamW training."""
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
rng = np.random.default_rng(3)

ln = nn.LayerNorm(5)
x = torch.tensor(rng.normal(2.0, 3.0, size=(4, 5)), dtype=torch.float32)
manual = (x - x.mean(-1, keepdim=True)) / torch.sqrt(x.var(-1, unbiased=False, keepdim=True) + ln.eps)
print(ln)
print("matches manual formula:", torch.allclose(ln(x), manual, atol=1e-5))
ln2 = nn.LayerNorm([2, 3], elementwise_affine=False)
print("normalised over last two dims:", ln2(torch.arange(12.0).reshape(2, 2, 3))[0])


class ResidualMLP(nn.Module):
    def __init__(self, d, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, hidden), nn.GELU(), nn.Linear(hidden, d))

    def forward(self, x):
        return x + self.ff(self.norm(x))


model = nn.Sequential(nn.Linear(2, 8), ResidualMLP(8, 16), ResidualMLP(8, 16), nn.LayerNorm(8), nn.Linear(8, 1))
with torch.no_grad():
    for name, p in model.named_parameters():
        if "norm" in name or (p.dim() == 1 and name.startswith("3.")):
            continue
        p.copy_(torch.tensor(rng.normal(0, 0.4, tuple(p.shape)), dtype=torch.float32))
X = torch.tensor(rng.uniform(-2, 2, size=(128, 2)), dtype=torch.float32)
y = (torch.sin(X[:, :1]) * torch.cos(X[:, 1:])).float()
opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.01)
for step in range(80):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(X), y)
    loss.backward()
    opt.step()
    if step % 20 == 19:
        print(f"step {step + 1} mse {loss.item():.5f}")
print("final layer-norm weight:", model[3].weight.detach())
