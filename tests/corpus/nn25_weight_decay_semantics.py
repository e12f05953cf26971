"""Weight decay semantics: SGD weight_decay equals an explicit L2 term; Adam's L2 differs from
AdamW's decoupled decay; excluding biases and norms from decay."""
import torch
import torch.nn as nn

torch.manual_seed(0)
x = torch.tensor([[1.0, 2.0], [-1.0, 0.5], [0.3, -0.7]])
y = torch.tensor([[1.0], [0.0], [0.5]])


def make():
    m = nn.Linear(2, 1)
    with torch.no_grad():
        m.weight.copy_(torch.tensor([[0.4, -0.3]]))
        m.bias.fill_(0.1)
    return m


a, b = make(), make()
opt_a = torch.optim.SGD(a.parameters(), lr=0.1, weight_decay=0.01)
opt_b = torch.optim.SGD(b.parameters(), lr=0.1)
for _ in range(5):
    opt_a.zero_grad()
    nn.functional.mse_loss(a(x), y).backward()
    opt_a.step()
    opt_b.zero_grad()
    (nn.functional.mse_loss(b(x), y) + 0.005 * sum((p ** 2).sum() for p in b.parameters())).backward()
    opt_b.step()
print("SGD weight_decay == explicit L2:", torch.allclose(a.weight, b.weight), torch.allclose(a.bias, b.bias))
print("weights:", a.weight.data, b.weight.data)

results = {}
for name, cls in (("Adam", torch.optim.Adam), ("AdamW", torch.optim.AdamW)):
    m = make()
    opt = cls(m.parameters(), lr=0.05, weight_decay=0.1)
    for _ in range(20):
        opt.zero_grad()
        nn.functional.mse_loss(m(x), y).backward()
        opt.step()
    results[name] = m.weight.detach().clone()
    print(f"{name}: weight {m.weight.data} bias {m.bias.item():.6f}")
print("Adam and AdamW differ:", not torch.allclose(results["Adam"], results["AdamW"]))

net = nn.Sequential(nn.Linear(2, 4), nn.LayerNorm(4), nn.Linear(4, 1))
decay, no_decay = [], []
for n, p in net.named_parameters():
    (no_decay if p.ndim == 1 else decay).append(n)
print("decay:", decay)
print("no decay:", no_decay)
params = dict(net.named_parameters())
opt = torch.optim.AdamW([{"params": [params[n] for n in decay], "weight_decay": 0.05},
                         {"params": [params[n] for n in no_decay], "weight_decay": 0.0}], lr=1e-3)
print("group decays:", [g["weight_decay"] for g in opt.param_groups], "amsgrad:", opt.defaults["amsgrad"])
