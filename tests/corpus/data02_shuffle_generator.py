"""Seeded shuffling: DataLoader(shuffle=True, generator=Generator().manual_seed(s)) gives a
reproducible order per epoch; two loaders with the same seed agree."""
import torch
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
X = torch.arange(10, dtype=torch.float32).unsqueeze(1)
y = torch.arange(10) % 3
ds = TensorDataset(X, y)
print("dataset item 4:", ds[4])

g = torch.Generator()
g.manual_seed(42)
loader = DataLoader(ds, batch_size=4, shuffle=True, generator=g)
for epoch in range(3):
    order = [int(v) for xb, _ in loader for v in xb.squeeze(1).tolist()]
    print(f"epoch {epoch} order: {order}")

a = DataLoader(ds, batch_size=3, shuffle=True, generator=torch.Generator().manual_seed(7))
b = DataLoader(ds, batch_size=3, shuffle=True, generator=torch.Generator().manual_seed(7))
print("same seed, same batches:", all(torch.equal(p[0], q[0]) for p, q in zip(a, b)))
print("batch sizes:", [len(xb) for xb, _ in a])
c = DataLoader(ds, batch_size=5, shuffle=True, generator=torch.Generator().manual_seed(123))
print("seed 123 first batch:", next(iter(c))[0].squeeze(1).tolist())
print("every item once per epoch:", sorted(int(v) for xb, _ in c for v in xb.squeeze(1).tolist()) == list(range(10)))
