"""IterableDataset streaming: a generator-backed dataset, batching, and chaining datasets."""
import math

import torch
from torch.utils.data import ChainDataset, ConcatDataset, DataLoader, IterableDataset, TensorDataset

torch.manual_seed(0)


class Countdown(IterableDataset):
    def __init__(self, start, end):
        super().__init__()
        self.start, self.end = start, end

    def __iter__(self):
        for i in range(self.start, self.end):
            yield torch.tensor([float(i), math.sqrt(i)]), i % 2


stream = Countdown(1, 8)
for xb, yb in DataLoader(stream, batch_size=3):
    print("stream batch:", xb[:, 0].tolist(), yb.tolist())
chained = ChainDataset([Countdown(0, 2), Countdown(10, 12)])
print("chained:", [int(x[0].item()) for x, _ in chained])
print("no batching:", [x[0].item() for x, _ in DataLoader(Countdown(3, 5), batch_size=None)])

a = TensorDataset(torch.arange(3.0))
b = TensorDataset(torch.arange(10.0, 14.0))
cat = ConcatDataset([a, b])
print("ConcatDataset:", len(cat), cat[2], cat[3], cat.cumulative_sizes)
print("loader over ConcatDataset:", [x[0].tolist() for x in DataLoader(cat, batch_size=4)])
