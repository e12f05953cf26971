"""Training with gradient accumulation over micro-batches (loss / accum_steps) matches large-batch
training step for step."""
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
rng = np.random.default_rng(0)
X = torch.tensor(rng.normal(size=(64, 6)), dtype=torch.float32)
y = torch.tensor(rng.integers(0, 2, 64)).float().unsqueeze(1)
init = [rng.normal(0, 0.3, s) for s in [(8, 6), (8,), (1, 8), (1,)]]


def build():
    m = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 1))
    with torch.no_grad():
        for p, a in zip(m.parameters(), init):
            p.copy_(torch.tensor(a, dtype=torch.float32))
    return m, torch.optim.SGD(m.parameters(), lr=0.5, momentum=0.9)


crit = nn.BCEWithLogitsLoss()
big, big_opt = build()
small, small_opt = build()
accum_steps = 4
for epoch in range(3):
    for i in range(0, 64, 32):
        big_opt.zero_grad()
        loss_big = crit(big(X[i:i + 32]), y[i:i + 32])
        loss_big.backward()
        big_opt.step()

        small_opt.zero_grad()
        total = 0.0
        for j in range(accum_steps):
            lo = i + j * 8
            loss = crit(small(X[lo:lo + 8]), y[lo:lo + 8]) / accum_steps
            loss.backward()
            total += loss.item()
        small_opt.step()
    print(f"epoch {epoch} big-batch loss {loss_big.item():.6f} accumulated loss {total:.6f}")
print("parameters agree:", all(torch.allclose(a, b, atol=1e-6) for a, b in zip(big.parameters(), small.parameters())))
print("final weights:", small[2].weight.detach())
