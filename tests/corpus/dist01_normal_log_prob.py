"""torch.distributions.Normal: log_prob, entropy, cdf/icdf, batch/event shapes, sampling shapes,
and gradients of log_prob with respect to the parameters."""
import torch
from torch.distributions import Normal

torch.manual_seed(0)
mu = torch.tensor([0.0, 1.0, -2.0], requires_grad=True)
sigma = torch.tensor([1.0, 0.5, 2.0], requires_grad=True)
d = Normal(mu, sigma)
print(d)
print("batch_shape:", d.batch_shape, "event_shape:", d.event_shape)
x = torch.tensor([0.5, 1.0, 0.0])
lp = d.log_prob(x)
print("log_prob:", lp.detach())
print("entropy:", d.entropy().detach())
print("mean / stddev / variance:", d.mean.detach(), d.stddev.detach(), d.variance.detach())
print("cdf:", d.cdf(x).detach())
print("icdf(0.975):", d.icdf(torch.tensor(0.975)).detach())
lp.sum().backward()
print("d log_prob / d mu:", mu.grad)
print("d log_prob / d sigma:", sigma.grad)

scalar = Normal(0.0, 1.0)
print("scalar params broadcast:", scalar.batch_shape, scalar.log_prob(torch.tensor([0.0, 1.0])))
wide = Normal(torch.zeros(2, 1), torch.ones(3))
print("broadcast batch shape:", wide.batch_shape)
s = d.sample((4,))
print("sample shape:", s.shape, "rsample requires grad:", d.rsample().requires_grad, "sample requires grad:", s.requires_grad)
print("has_rsample:", d.has_rsample)
