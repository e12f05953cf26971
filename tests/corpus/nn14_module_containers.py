"""Module API: Sequential with OrderedDict, ModuleList, ModuleDict, ParameterList, named_*,
apply(), children vs modules, parameter counting and repr."""
from collections import OrderedDict

import torch
import torch.nn as nn

torch.manual_seed(0)


class Tower(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(OrderedDict([("fc", nn.Linear(4, 8)), ("act", nn.ReLU())]))
        self.heads = nn.ModuleDict({"cls": nn.Linear(8, 3), "reg": nn.Linear(8, 1)})
        self.blocks = nn.ModuleList([nn.Linear(8, 8) for _ in range(2)])
        self.scales = nn.ParameterList([nn.Parameter(torch.ones(8) * (i + 1)) for i in range(2)])
        self.temperature = nn.Parameter(torch.tensor(1.5))
        self.register_buffer("counter", torch.zeros(1, dtype=torch.long))

    def forward(self, x):
        h = self.encoder(x)
        for blk, s in zip(self.blocks, self.scales):
            h = torch.relu(blk(h)) * s
        self.counter += 1
        return {k: head(h) / self.temperature for k, head in self.heads.items()}


m = Tower()
print(m)
print("named parameters:")
for name, p in m.named_parameters():
    print(f"  {name:20s} {tuple(p.shape)}")
print("buffers:", [n for n, _ in m.named_buffers()])
print("children:", [n for n, _ in m.named_children()])
print("module count:", len(list(m.modules())), "named modules:", [n for n, _ in m.named_modules()][:6])
print("total params:", sum(p.numel() for p in m.parameters()))
print("trainable params:", sum(p.numel() for p in m.parameters() if p.requires_grad))


def init(mod):
    if isinstance(mod, nn.Linear):
        nn.init.constant_(mod.weight, 0.05)
        nn.init.zeros_(mod.bias)


m.apply(init)
out = m(torch.ones(2, 4))
print({k: v.detach() for k, v in out.items()})
print("counter buffer:", m.counter)
print("encoder.fc via getattr:", m.encoder.fc.out_features, m.encoder[0] is m.encoder.fc)
print("get_submodule:", m.get_submodule("heads.cls"))
print("get_parameter:", m.get_parameter("scales.1")[:3])
seq = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1))
print("slicing a Sequential:", seq[:2], len(seq))
seq.append(nn.Sigmoid())
print("after append:", len(seq), type(seq[-1]).__name__)
m.blocks.append(nn.Linear(8, 8))
print("ModuleList len:", len(m.blocks), "ModuleDict keys:", list(m.heads.keys()))
m.requires_grad_(False)
print("all frozen:", not any(p.requires_grad for p in m.parameters()))
print("zero_grad sets None:", m.zero_grad() is None and all(p.grad is None for p in m.parameters()))
print("extra_repr:", nn.Linear(3, 2, bias=False).extra_repr())
