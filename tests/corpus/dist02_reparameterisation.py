"""The reparameterisation trick: gradients through rsample with fixed noise, matching the
closed-form gradient of E[(z - c)^2] for z ~ N(mu, sigma)."""
import numpy as np
import torch
from torch.distributions import Normal

torch.manual_seed(0)
rng = np.random.default_rng(0)
eps = torch.tensor(rng.standard_normal(20000), dtype=torch.float64)

mu = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
log_sigma = torch.tensor(np.log(0.8), dtype=torch.float64, requires_grad=True)
c = 2.0
z = mu + log_sigma.exp() * eps  # what rsample computes, with noise we control
loss = ((z - c) ** 2).mean()
loss.backward()
print("Monte Carlo loss:", round(loss.item(), 4), "closed form:", round((0.5 - c) ** 2 + 0.8 ** 2, 4))
print("d/dmu MC:", round(mu.grad.item(), 3), "exact:", 2 * (0.5 - c))
print("d/dlog_sigma MC:", round(log_sigma.grad.item(), 3), "exact:", round(2 * 0.8 ** 2, 3))

# rsample itself: gradients exist, sample does not carry them
d = Normal(torch.tensor([0.0, 1.0], requires_grad=True), torch.tensor([1.0, 0.1], requires_grad=True))
r = d.rsample((1000,))
print("rsample grad_fn present:", r.grad_fn is not None, "shape:", tuple(r.shape))
r.mean().backward()
print("d mean(rsample) / d loc:", d.loc.grad)
print("d mean(rsample) / d scale is finite:", torch.isfinite(d.scale.grad).all().item())
with torch.no_grad():
    s = d.sample((1000,))
print("sample has no grad_fn:", s.grad_fn is None)

# fit a Normal to data by maximum likelihood through log_prob
data = torch.tensor(rng.normal(3.0, 0.5, size=500), dtype=torch.float32)
loc = torch.zeros((), requires_grad=True)
raw_scale = torch.zeros((), requires_grad=True)
opt = torch.optim.Adam([loc, raw_scale], lr=0.1)
for step in range(150):
    opt.zero_grad()
    nll = -Normal(loc, torch.nn.functional.softplus(raw_scale)).log_prob(data).mean()
    nll.backward()
    opt.step()
print("MLE loc:", round(loc.item(), 3), "scale:", round(torch.nn.functional.softplus(raw_scale).item(), 3),
      "data mean/std:", round(data.mean().item(), 3), round(data.std(unbiased=False).item(), 3))
