"""Activation checkpointing with torch.utils.checkpoint gives the same gradients."""
import numpy as np
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint, checkpoint_sequential

torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc1 = nn.Linear(d, 2 * d)
        self.fc2 = nn.Linear(2 * d, d)

    def forward(self, x):
        return x + self.fc2(torch.tanh(self.fc1(x)))


rng = np.random.default_rng(1)
blocks = nn.Sequential(*[Block(4) for _ in range(3)])
with torch.no_grad():
    for p in blocks.parameters():
        p.copy_(torch.from_numpy(rng.normal(0, 0.3, tuple(p.shape)).astype(np.float32)))
x = torch.tensor(rng.normal(size=(5, 4)).astype(np.float32), requires_grad=True)

out_plain = blocks(x).pow(2).sum()
out_plain.backward()
g_plain = [p.grad.clone() for p in blocks.parameters()]
gx_plain = x.grad.clone()
blocks.zero_grad()
x.grad = None

h = x
for blk in blocks:
    h = checkpoint(blk, h, use_reentrant=False)
out_ckpt = h.pow(2).sum()
out_ckpt.backward()
print("loss plain / checkpointed:", round(out_plain.item(), 5), round(out_ckpt.item(), 5))
print("param grads equal:", all(torch.allclose(a, p.grad, atol=1e-6) for a, p in zip(g_plain, blocks.parameters())))
print("input grads equal:", torch.allclose(gx_plain, x.grad, atol=1e-6))
print("first-layer grad:", blocks[0].fc1.bias.grad)

blocks.zero_grad()
out_seq = checkpoint_sequential(blocks, 2, x, use_reentrant=False).pow(2).sum()
out_seq.backward()
print("checkpoint_sequential equal:", all(torch.allclose(a, p.grad, atol=1e-6) for a, p in zip(g_plain, blocks.parameters())))
