"""Samplers: SequentialSampler, RandomSampler with a generator, SubsetRandomSampler,
WeightedRandomSampler for class balance, BatchSampler, and a custom sampler."""
import torch
from torch.utils.data import (BatchSampler, DataLoader, RandomSampler, Sampler, SequentialSampler,
                              SubsetRandomSampler, TensorDataset, WeightedRandomSampler)

torch.manual_seed(0)
ds = TensorDataset(torch.arange(8.0))
print("sequential:", list(SequentialSampler(ds)))
print("random (seeded):", list(RandomSampler(ds, generator=torch.Generator().manual_seed(3))))
print("random with replacement length:", len(list(RandomSampler(ds, replacement=True, num_samples=5,
                                                                  generator=torch.Generator().manual_seed(3)))))
print("subset random:", sorted(SubsetRandomSampler([1, 3, 5], generator=torch.Generator().manual_seed(0))))
print("batch sampler:", list(BatchSampler(SequentialSampler(range(7)), batch_size=3, drop_last=False)))
print("batch sampler drop_last:", list(BatchSampler(range(7), batch_size=3, drop_last=True)))

labels = torch.tensor([0] * 90 + [1] * 10)
class_counts = torch.bincount(labels)
weights = 1.0 / class_counts[labels].float()
sampler = WeightedRandomSampler(weights, num_samples=2000, replacement=True, generator=torch.Generator().manual_seed(0))
drawn = labels[torch.tensor(list(sampler))]
frac = drawn.float().mean().item()
print("class counts:", class_counts.tolist(), "balanced after weighting:", 0.45 < frac < 0.55, "num drawn:", len(drawn))


class EvenFirstSampler(Sampler):
    def __init__(self, data_source):
        self.n = len(data_source)

    def __iter__(self):
        return iter(list(range(0, self.n, 2)) + list(range(1, self.n, 2)))

    def __len__(self):
        return self.n


loader = DataLoader(ds, batch_size=3, sampler=EvenFirstSampler(ds))
print("custom sampler batches:", [b[0].tolist() for b in loader])
loader = DataLoader(ds, batch_sampler=BatchSampler(SequentialSampler(ds), 4, False))
print("batch_sampler loader:", [b[0].tolist() for b in loader])
try:
    DataLoader(ds, sampler=SequentialSampler(ds), shuffle=True)
except ValueError as e:
    print("sampler and shuffle:", type(e).__name__)
