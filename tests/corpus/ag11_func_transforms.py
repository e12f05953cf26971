"""torch.func: grad, vmap, jacrev, jacfwd, hessian and functional_call for per-sample gradients."""
import numpy as np
import torch
import torch.nn as nn
from torch.func import functional_call, grad, hessian, jacfwd, jacrev, vmap

torch.manual_seed(0)


def f(x):
    return torch.sin(x).sum() + (x ** 2).sum()


x = torch.tensor([0.0, 1.0, 2.0])
print("grad:", grad(f)(x))
print("jacrev:", jacrev(torch.sin)(x))
print("jacfwd equals jacrev:", torch.allclose(jacfwd(torch.sin)(x), jacrev(torch.sin)(x)))
print("hessian diag:", torch.diagonal(hessian(f)(x)))

batch = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
w = torch.tensor([0.5, -1.0])
print("vmap dot:", vmap(torch.dot, in_dims=(0, None))(batch, w))
print("vmap grad:", vmap(grad(lambda r: (r ** 3).sum()))(batch))

model = nn.Linear(2, 1)
rng = np.random.default_rng(0)
with torch.no_grad():
    model.weight.copy_(torch.tensor(rng.normal(size=(1, 2)), dtype=torch.float32))
    model.bias.fill_(0.1)
params = {k: v.detach() for k, v in model.named_parameters()}
targets = torch.tensor([1.0, 0.0, -1.0])


def loss_fn(p, xb, yb):
    pred = functional_call(model, p, (xb.unsqueeze(0),)).squeeze()
    return (pred - yb) ** 2


per_sample = vmap(grad(loss_fn), in_dims=(None, 0, 0))(params, batch, targets)
print("per-sample weight grads:\n", per_sample["weight"])
print("per-sample bias grads:", per_sample["bias"])
mean_grad = per_sample["weight"].mean(0)
full = torch.autograd.grad(((model(batch).squeeze() - targets) ** 2).mean(), model.weight)[0]
print("mean of per-sample grads equals batch grad:", torch.allclose(mean_grad, full, atol=1e-6))
