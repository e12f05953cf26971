"""Fine-tuning: freeze a backbone, per-group learning rates, add_param_group, unfreeze later."""
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
rng = np.random.default_rng(2)
backbone = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 12), nn.ReLU())
head = nn.Linear(12, 3)
model = nn.Sequential(backbone, head)
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.tensor(rng.normal(0, 0.3, tuple(p.shape)), dtype=torch.float32))
X = torch.tensor(rng.normal(size=(60, 6)), dtype=torch.float32)
y = torch.tensor(rng.integers(0, 3, 60))

for p in backbone.parameters():
    p.requires_grad = False
opt = torch.optim.SGD(filter(lambda p: p.requires_grad, model.parameters()), lr=0.1, momentum=0.9)
print("trainable:", sum(p.numel() for p in model.parameters() if p.requires_grad))
frozen_before = backbone[0].weight.clone()
for step in range(10):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(X), y)
    loss.backward()
    opt.step()
print("head-only loss:", round(loss.item(), 5))
print("backbone unchanged:", torch.equal(frozen_before, backbone[0].weight), "grad is None:", backbone[0].weight.grad is None)

for p in backbone.parameters():
    p.requires_grad = True
opt.add_param_group({"params": backbone.parameters(), "lr": 0.01, "momentum": 0.0})
print("groups:", [(len(g["params"]), g["lr"], g["momentum"]) for g in opt.param_groups])
for step in range(10):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(X), y)
    loss.backward()
    opt.step()
print("full fine-tune loss:", round(loss.item(), 5))
print("backbone moved:", not torch.equal(frozen_before, backbone[0].weight))

# discriminative learning rates from the start, with a per-group weight decay
opt2 = torch.optim.Adam([
    {"params": backbone.parameters(), "lr": 1e-4},
    {"params": head.parameters(), "lr": 1e-2, "weight_decay": 1e-3},
])
print("defaults:", opt2.defaults["lr"], "group lrs:", [g["lr"] for g in opt2.param_groups],
      "group wd:", [g["weight_decay"] for g in opt2.param_groups])
for step in range(5):
    opt2.zero_grad()
    loss = nn.functional.cross_entropy(model(X), y)
    loss.backward()
    opt2.step()
print("adam groups loss:", round(loss.item(), 5))
sd = opt2.state_dict()
print("state keys:", sorted(sd["state"].keys()), "param ids per group:", [g["params"] for g in sd["param_groups"]])
print("step count:", sd["state"][0]["step"])
