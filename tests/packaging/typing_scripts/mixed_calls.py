"""Both doors, the calls a checker tripped on: out=, dtype/device keywords, jvp/vjp unpacking."""
import numpy as np
import fgrad
import fgrad.torch as torch
import fgrad.numpy as jnp
from fgrad import random

a = torch.zeros(2, 3, dtype=torch.float64)
b = torch.randn(2, 3, requires_grad=True)
c = torch.empty(2, 3, dtype=torch.float64)
torch.add(a, a, out=c)
d = torch.stack([a, a]).to("cpu").numpy()
e = torch.from_numpy(np.ones(3))
f = torch.nn.functional.cross_entropy(torch.randn(4, 3), torch.tensor([0, 1, 2, 0]))
g = b.exp().sum(dim=1, keepdim=True)
h = b @ b.T + 1.0
i = b[0, 1:].clone()
dev = torch.device("cpu")
k = torch.linspace(0, 1, 5, device=dev)
print(len(b), b.requires_grad, b.is_leaf, b.grad_fn, b.shape[0], b.size(0), b.dtype == torch.float32)
m = torch.where(a > 0, a, -a)
key = random.PRNGKey(1)
n = random.normal(key, (3,))
o = fgrad.jit(lambda x: x * 2, static_argnums=())(n)
p = jnp.where(n > 0, n, 0.0)
q, r = fgrad.jvp(jnp.sin, (n,), (jnp.ones(3),))
s, vjp_fn = fgrad.vjp(jnp.cos, n)
print(vjp_fn(jnp.ones(3)), fgrad.lax.fori_loop(0, 3, lambda i, v: v + 1, 0.0))
t = torch.manual_seed(3)
u = torch.arange(10).view(2, 5).float().mean()
print(float(u), int(torch.tensor(3)), u.item() + 1)
