"""The torch door: nn.Sequential, Adam, a scheduler, functional losses, torch.func."""
import fgrad.torch as torch
from fgrad.torch import nn, optim
from fgrad.torch.nn import functional as F

net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.1), nn.Linear(8, 1))
opt = optim.Adam(net.parameters(), lr=1e-2)
sched = optim.lr_scheduler.StepLR(opt, step_size=5, gamma=0.5)
x, y = torch.rand(32, 4), torch.rand(32, 1)
for _ in range(3):
    opt.zero_grad()
    loss = F.mse_loss(net(x), y)
    loss.backward()
    nn.utils.clip_grad_norm_(net.parameters(), 1.0)
    opt.step()
    sched.step()
params = dict(net.named_parameters())
out = torch.func.functional_call(net, params, (x,))
grads = torch.autograd.grad(out.sum(), list(net.parameters()))
print(len(grads), out.shape, sum(p.numel() for p in net.parameters()))
