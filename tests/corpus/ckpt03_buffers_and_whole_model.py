"""Buffers in state_dict (persistent and not), BatchNorm running stats survive a round trip,
and saving a whole model with pickle (weights_only=False)."""
import os
import tempfile

import torch
import torch.nn as nn

torch.manual_seed(0)


class Normaliser(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.register_buffer("mean", torch.zeros(n))
        self.register_buffer("scratch", torch.ones(n), persistent=False)
        self.linear = nn.Linear(n, 1)
        self.bn = nn.BatchNorm1d(n)

    def forward(self, x):
        return self.linear(self.bn(x - self.mean))


m = Normaliser(3)
with torch.no_grad():
    m.linear.weight.copy_(torch.tensor([[0.5, -0.5, 1.0]]))
    m.linear.bias.fill_(0.2)
    m.mean.copy_(torch.tensor([1.0, 2.0, 3.0]))
print("state_dict keys:", list(m.state_dict().keys()))
print("buffers:", [n for n, _ in m.named_buffers()])
m.train()
for k in range(3):
    m(torch.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 1.0], [k * 1.0, 0.0, 5.0]]))
print("running_mean after training:", m.bn.running_mean)

with tempfile.TemporaryDirectory() as tmp:
    torch.save(m.state_dict(), os.path.join(tmp, "sd.pt"))
    m2 = Normaliser(3)
    m2.load_state_dict(torch.load(os.path.join(tmp, "sd.pt")))
    print("running stats restored:", torch.equal(m2.bn.running_mean, m.bn.running_mean),
          torch.equal(m2.bn.running_var, m.bn.running_var), m2.bn.num_batches_tracked.item())
    print("custom buffer restored:", m2.mean)
    m.eval(); m2.eval()
    x = torch.tensor([[0.0, 1.0, 2.0]])
    print("eval outputs equal:", torch.equal(m(x), m2(x)), m(x).item())

    torch.save(m, os.path.join(tmp, "whole.pt"))
    whole = torch.load(os.path.join(tmp, "whole.pt"), weights_only=False)
    print("whole model type:", type(whole).__name__, "eval output:", whole(x).item())
    print("whole model in eval mode:", not whole.training)
