"""nn.init: deterministic initialisers, calculate_gain, fan computation, and a custom init via apply."""
import math

import torch
import torch.nn as nn

torch.manual_seed(0)
print("gains:", nn.init.calculate_gain("relu"), nn.init.calculate_gain("tanh"),
      round(nn.init.calculate_gain("leaky_relu", 0.2), 6), nn.init.calculate_gain("sigmoid"),
      nn.init.calculate_gain("selu"))
w = torch.empty(3, 5)
nn.init.constant_(w, 0.3)
print("constant:", w[0])
nn.init.ones_(w)
print("ones sum:", w.sum().item())
nn.init.eye_(w)
print("eye:\n", w)
conv_w = torch.empty(4, 2, 3, 3)
nn.init.dirac_(conv_w)
print("dirac centre taps:", conv_w[:, :, 1, 1])
nn.init.zeros_(conv_w)
print("zeros:", conv_w.abs().sum().item())

big = torch.empty(400, 300)
nn.init.kaiming_uniform_(big, a=math.sqrt(5))
bound = 1 / math.sqrt(300)
print("kaiming_uniform_(a=sqrt 5) within Linear's bound:", big.abs().max().item() <= bound + 1e-7)
nn.init.xavier_uniform_(big)
xb = math.sqrt(6 / (400 + 300))
print("xavier_uniform_ within bound:", big.abs().max().item() <= xb + 1e-7, "spread ok:", big.abs().max().item() > 0.9 * xb)
nn.init.kaiming_normal_(big, mode="fan_out", nonlinearity="relu")
print("kaiming_normal_ std near sqrt(2/400):", abs(big.std().item() - math.sqrt(2 / 400)) < 0.003)
nn.init.normal_(big, mean=1.0, std=0.01)
print("normal_ mean:", round(big.mean().item(), 2))
nn.init.uniform_(big, -0.5, 0.5)
print("uniform_ range:", big.min().item() >= -0.5, big.max().item() <= 0.5)
nn.init.trunc_normal_(big, std=1.0, a=-2.0, b=2.0)
print("trunc_normal_ range:", big.abs().max().item() <= 2.0)
nn.init.orthogonal_(big[:300])
q = big[:300]
print("orthogonal_ rows:", torch.allclose(q @ q.T, torch.eye(300), atol=1e-4))


def init_weights(m):
    if isinstance(m, nn.Linear):
        with torch.no_grad():
            m.weight.copy_(torch.arange(m.weight.numel(), dtype=torch.float32).reshape(m.weight.shape) / 10)
            m.bias.fill_(-0.5)


net = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
net.apply(init_weights)
print("custom init output:", net(torch.tensor([[1.0, -1.0], [0.5, 2.0]])))
