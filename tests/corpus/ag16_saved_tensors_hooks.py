"""Hooks for autograd's saved tensors, as PyTorch's tutorial walks through them: what grad_fn
saves (_saved_self, _saved_result), hooks on one saved tensor, saved_tensors_hooks around a
model (counting and logging packs), saving to disk, and hooks that change what backward reads."""
import os
import tempfile
import uuid

import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)

# what a node keeps for backward
x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
y = x.pow(2)
print("pow saves its input:", x.equal(y.grad_fn._saved_self), x is y.grad_fn._saved_self)
y = x.exp()
print("exp saves its result:", y.equal(y.grad_fn._saved_result), y is y.grad_fn._saved_result)

# hooks on one saved tensor
log = []


def pack_hook(t):
    log.append(f"pack {tuple(t.shape)}")
    return t


def unpack_hook(t):
    log.append(f"unpack {tuple(t.shape)}")
    return t


a = torch.ones(5, requires_grad=True)
b = torch.ones(5, requires_grad=True) * 2
y = a * b
y.grad_fn._raw_saved_self.register_hooks(pack_hook, unpack_hook)
y.sum().backward()
print("one saved tensor:", log)
print("a.grad:", a.grad)

# every saved tensor of a model's forward pass
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3), nn.Sigmoid())
rng = np.random.default_rng(0)
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.tensor(rng.normal(0, 0.5, tuple(p.shape)), dtype=torch.float32))
inputs = torch.tensor(rng.normal(size=(2, 4)), dtype=torch.float32)
log.clear()
with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
    out = model(inputs)
packs = len(log)
out.sum().backward()
print("model: packs", packs, "unpacks", len(log) - packs)
reference = [p.grad.clone() for p in model.parameters()]

# saving to disk, as the tutorial's SelfDeletingTempFile
tmp_dir = tempfile.mkdtemp()


def save_to_disk(t):
    name = os.path.join(tmp_dir, str(uuid.uuid4()))
    torch.save(t, name)
    return name


def load_from_disk(name):
    t = torch.load(name, weights_only=True)
    os.remove(name)
    return t


model.zero_grad()
with torch.autograd.graph.saved_tensors_hooks(save_to_disk, load_from_disk):
    out = model(inputs)
print("files while the graph lives:", len(os.listdir(tmp_dir)))
out.sum().backward()
print("files after backward:", len(os.listdir(tmp_dir)))
print("same gradients from disk:", all(torch.allclose(p.grad, r) for p, r in zip(model.parameters(), reference)))

# backward reads whatever the unpack hook returns
x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t * 10):
    y = x.sin()
y.sum().backward()
print("cos(x) * 10 from a scaling unpack hook:", x.grad)

# save_on_cpu keeps the values on the CPU (a no-op for CPU tensors) and gives the same gradients
model.zero_grad()
with torch.autograd.graph.save_on_cpu():
    out = model(inputs)
out.sum().backward()
print("save_on_cpu, same gradients:", all(torch.allclose(p.grad, r) for p, r in zip(model.parameters(), reference)))
