"""A bidirectional GRU classifier on variable-length sequences with pack_padded_sequence
(enforce_sorted=False), pad_packed_sequence and the final hidden states."""
import numpy as np
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence

torch.manual_seed(0)
rng = np.random.default_rng(0)
lengths = rng.integers(3, 9, size=24)
seqs = [torch.tensor(rng.normal(size=(n, 3)), dtype=torch.float32) for n in lengths]
labels = torch.tensor([int(s[:, 0].sum() > 0) for s in seqs])
padded = pad_sequence(seqs, batch_first=True)
lengths_t = torch.tensor(lengths)
print("padded:", tuple(padded.shape), "labels:", labels.tolist())


class GRUClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(3, 8, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(16, 2)

    def forward(self, x, lengths):
        packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        out, h = self.gru(packed)
        return self.fc(torch.cat([h[0], h[1]], dim=1)), out


model = GRUClassifier()
init = np.random.default_rng(1)
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.tensor(init.uniform(-0.35, 0.35, tuple(p.shape)), dtype=torch.float32))
print("gru weights:", [(n, tuple(p.shape)) for n, p in model.gru.named_parameters()][:4])
opt = torch.optim.Adam(model.parameters(), lr=0.02)
for epoch in range(25):
    logits, _ = model(padded, lengths_t)
    loss = nn.functional.cross_entropy(logits, labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if epoch % 5 == 4:
        acc = (logits.argmax(1) == labels).float().mean().item()
        print(f"epoch {epoch + 1} loss {loss.item():.5f} acc {acc:.4f}")
with torch.no_grad():
    _, packed_out = model(padded, lengths_t)
    unpacked, out_lengths = pad_packed_sequence(packed_out, batch_first=True)
print("unpacked:", tuple(unpacked.shape), "lengths:", out_lengths.tolist()[:6])
print("padding positions are zero:", unpacked[0, lengths[0]:].abs().sum().item() if lengths[0] < unpacked.shape[1] else 0.0)
print("packed batch_sizes:", pack_padded_sequence(padded, lengths_t, batch_first=True, enforce_sorted=False).batch_sizes.tolist())
