"""state_dict round trips: keys and shapes, load_state_dict(strict=False) reports, saving tensors,
lists and dicts, map_location, weights_only, and saving into a BytesIO buffer."""
import io
import os
import tempfile

import torch
import torch.nn as nn

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self, extra=False):
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 3)
        self.bn = nn.BatchNorm2d(2)
        self.fc = nn.Linear(16, 2)
        if extra:
            self.head = nn.Linear(2, 1)


net = Net()
with torch.no_grad():
    for i, p in enumerate(net.parameters()):
        p.copy_(torch.linspace(-1, 1, p.numel()).reshape(p.shape) * (i + 1))
sd = net.state_dict()
for k, v in sd.items():
    print(f"{k:24s} {tuple(v.shape)} {v.dtype}")
print("state_dict tensors are detached:", all(not v.requires_grad for v in sd.values()))

other = Net(extra=True)
result = other.load_state_dict(sd, strict=False)
print("missing:", result.missing_keys, "unexpected:", result.unexpected_keys)
print("conv weights copied:", torch.equal(other.conv.weight, net.conv.weight))
try:
    other.load_state_dict(sd)
except RuntimeError as e:
    print("strict load fails:", "Missing key(s)" in str(e))
sd_bad = dict(sd)
sd_bad["fc.weight"] = torch.zeros(3, 8)
try:
    Net().load_state_dict(sd_bad)
except RuntimeError as e:
    print("shape mismatch fails:", "size mismatch" in str(e))

with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "model.pth")
    torch.save(net.state_dict(), path)
    loaded = torch.load(path, map_location="cpu", weights_only=True)
    print("loaded keys equal:", list(loaded.keys()) == list(sd.keys()))
    fresh = Net()
    fresh.load_state_dict(loaded)
    x = torch.linspace(0, 1, 2 * 1 * 4 * 6).reshape(2, 1, 4, 6)
    fresh.eval(); net.eval()
    print("same outputs:", torch.equal(fresh.fc(fresh.conv(x).flatten(1)), net.fc(net.conv(x).flatten(1))))
    obj = {"tensor": torch.arange(3), "list": [torch.ones(2), 5], "nested": {"lr": 0.1, "name": "run1"}}
    torch.save(obj, os.path.join(tmp, "obj.pt"))
    back = torch.load(os.path.join(tmp, "obj.pt"))
    print("objects:", back["tensor"], back["list"], back["nested"])
buf = io.BytesIO()
torch.save(torch.tensor([1.5, 2.5], dtype=torch.float64), buf)
buf.seek(0)
t = torch.load(buf)
print("from BytesIO:", t, t.dtype)
