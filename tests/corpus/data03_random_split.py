"""random_split with a seeded generator: integer lengths and fractions, Subset indices, and a
train/val loop over the two parts."""
import torch
from torch.utils.data import DataLoader, Subset, TensorDataset, random_split

torch.manual_seed(0)
ds = TensorDataset(torch.arange(20, dtype=torch.float32), torch.arange(20) % 2)
train, val = random_split(ds, [15, 5], generator=torch.Generator().manual_seed(42))
print("lengths:", len(train), len(val))
print("train indices:", list(train.indices))
print("val indices:", list(val.indices))
print("val item 0:", val[0])
a, b, c = random_split(ds, [0.5, 0.3, 0.2], generator=torch.Generator().manual_seed(0))
print("fraction lengths:", len(a), len(b), len(c))
print("fraction indices:", list(a.indices), list(b.indices), list(c.indices))
parts = random_split(range(7), [0.4, 0.3, 0.3], generator=torch.Generator().manual_seed(1))
print("remainder distributed:", [len(p) for p in parts], [list(p) for p in parts])
sub = Subset(ds, [0, 5, 10])
print("Subset:", [sub[i][0].item() for i in range(len(sub))])
val_sum = sum(xb.sum().item() for xb, _ in DataLoader(val, batch_size=2))
print("sum over val loader:", val_sum, "equals:", val_sum == sum(ds[i][0].item() for i in val.indices))
