"""A map-style Dataset subclass with a transform, DataLoader batching, drop_last and len()."""
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


class SquaresDataset(Dataset):
    """x in [0, n), target x**2; returns (features, target) with an optional transform."""

    def __init__(self, n, transform=None):
        self.x = np.arange(n, dtype=np.float32)
        self.transform = transform

    def __len__(self):
        return len(self.x)

    def __getitem__(self, idx):
        x = torch.tensor([self.x[idx], self.x[idx] / 10])
        y = torch.tensor(self.x[idx] ** 2)
        if self.transform:
            x = self.transform(x)
        return x, y


torch.manual_seed(0)
ds = SquaresDataset(10, transform=lambda t: t * 2)
print("len:", len(ds))
x0, y0 = ds[3]
print("item 3:", x0, y0, x0.dtype, y0.dtype)
loader = DataLoader(ds, batch_size=4)
print("batches:", len(loader))
for i, (xb, yb) in enumerate(loader):
    print(f"batch {i}: x {tuple(xb.shape)} y {yb.tolist()}")
loader = DataLoader(ds, batch_size=4, drop_last=True)
print("drop_last batches:", len(loader), [tuple(b[0].shape) for b in loader])
print("first batch x:\n", next(iter(loader))[0])


class DictDataset(Dataset):
    def __init__(self):
        self.words = ["a", "bb", "ccc", "dddd", "eeeee"]

    def __len__(self):
        return len(self.words)

    def __getitem__(self, i):
        return {"length": len(self.words[i]), "word": self.words[i], "vec": torch.full((2,), float(i))}


for batch in DataLoader(DictDataset(), batch_size=2):
    print({k: v for k, v in batch.items()})
print("dataset concatenation:", len(ds + ds))
print("indexing a DataLoader's dataset:", loader.dataset is ds)
