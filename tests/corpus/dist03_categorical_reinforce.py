"""Categorical and Bernoulli distributions in a REINFORCE policy-gradient update with fixed actions."""
import torch
import torch.nn as nn
from torch.distributions import Bernoulli, Categorical

torch.manual_seed(0)
logits = torch.tensor([[1.0, 0.0, -1.0], [0.2, 0.2, 0.6]], requires_grad=True)
dist = Categorical(logits=logits)
print("probs:", dist.probs.detach())
print("entropy:", dist.entropy().detach())
actions = torch.tensor([0, 2])
print("log_prob of actions:", dist.log_prob(actions).detach())
returns = torch.tensor([1.0, -0.5])
loss = -(dist.log_prob(actions) * returns).sum() - 0.01 * dist.entropy().sum()
loss.backward()
print("policy gradient:\n", logits.grad)
print("Categorical(probs) normalises:", Categorical(probs=torch.tensor([2.0, 6.0])).probs)
print("batch_shape / event_shape:", dist.batch_shape, dist.event_shape, "sample shape:", dist.sample((5,)).shape)
print("enumerate_support:", dist.enumerate_support().squeeze(-1).tolist())

b = Bernoulli(logits=torch.tensor([0.0, 2.0]))
print("Bernoulli probs:", b.probs, "log_prob(1, 0):", b.log_prob(torch.tensor([1.0, 0.0])), "entropy:", b.entropy())

# a 2-armed bandit policy trained with REINFORCE on a fixed sequence of (action, reward) pairs
policy = nn.Linear(1, 2, bias=False)
with torch.no_grad():
    policy.weight.zero_()
opt = torch.optim.SGD(policy.parameters(), lr=0.5)
history = [(1, 1.0), (0, 0.0), (1, 1.0), (1, 0.8), (0, 0.1), (1, 1.2)] * 3
state = torch.ones(1, 1)
for step, (a, r) in enumerate(history):
    pi = Categorical(logits=policy(state))
    loss = -(pi.log_prob(torch.tensor([a])) * (r - 0.5)).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
print("learned action probs:", Categorical(logits=policy(state)).probs.detach())
