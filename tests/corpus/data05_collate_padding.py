"""collate_fn for variable-length sequences: pad_sequence, lengths, masks, and default_collate."""
import torch
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader, Dataset, default_collate

torch.manual_seed(0)


class Sentences(Dataset):
    def __init__(self):
        self.data = [([3, 1, 4], 0), ([1, 5], 1), ([9, 2, 6, 5], 0), ([3], 1), ([5, 8, 9, 7, 9], 1)]

    def __len__(self):
        return len(self.data)

    def __getitem__(self, i):
        toks, label = self.data[i]
        return torch.tensor(toks), label


def collate(batch):
    seqs, labels = zip(*batch)
    lengths = torch.tensor([len(s) for s in seqs])
    padded = pad_sequence(seqs, batch_first=True, padding_value=0)
    mask = torch.arange(padded.size(1))[None, :] < lengths[:, None]
    return padded, lengths, mask, torch.tensor(labels)


for padded, lengths, mask, labels in DataLoader(Sentences(), batch_size=2, collate_fn=collate):
    print("padded:", padded.tolist(), "lengths:", lengths.tolist(), "labels:", labels.tolist())
    print("mask:", mask.int().tolist())

print("pad_sequence time-major:", pad_sequence([torch.ones(2), torch.ones(3)]).shape)
b = default_collate([(torch.tensor([1.0, 2.0]), 3, 0.5), (torch.tensor([3.0, 4.0]), 4, 1.5)])
print("default_collate:", b[0], b[1], b[1].dtype, b[2], b[2].dtype)
print("dicts:", default_collate([{"a": 1, "b": [1, 2]}, {"a": 2, "b": [3, 4]}]))
print("strings stay lists:", default_collate(["x", "y"]))
loader = DataLoader(list(range(5)), batch_size=2)
print("a plain list as dataset:", [b.tolist() for b in loader])
