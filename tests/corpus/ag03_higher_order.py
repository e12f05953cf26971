"""Higher-order derivatives with create_graph=True and torch.autograd.grad."""
import torch

torch.manual_seed(0)

x = torch.tensor([3.0], requires_grad=True)
y = torch.pow(x, 3)
(g1,) = torch.autograd.grad(y, x, create_graph=True)
(g2,) = torch.autograd.grad(g1, x, create_graph=True)
(g3,) = torch.autograd.grad(g2, x)
print("dy/dx:", g1)
print("d2y/dx2:", g2)
print("d3y/dx3:", g3)

# derivatives of sin up to order 4 at a few points
t = torch.linspace(0, 3, 5, requires_grad=True)
f = torch.sin(t).sum()
derivs = []
cur = f
for k in range(4):
    (g,) = torch.autograd.grad(cur, t, create_graph=True)
    derivs.append(g.detach())
    cur = g.sum()
for k, d in enumerate(derivs, 1):
    print(f"order {k}:", [round(v, 4) for v in d.tolist()])

# gradient penalty: d/dw of ||d loss / d x||^2
w = torch.tensor([[1.0, -2.0], [0.5, 1.5]], requires_grad=True)
inp = torch.tensor([[0.3, -0.7]], requires_grad=True)
out = torch.tanh(inp @ w).sum()
(gx,) = torch.autograd.grad(out, inp, create_graph=True)
penalty = gx.pow(2).sum()
penalty.backward()
print("grad wrt input:", gx.detach())
print("penalty:", round(penalty.item(), 6))
print("w.grad from penalty:", w.grad)

# backward with create_graph then differentiate the .grad
z = torch.tensor(2.0, requires_grad=True)
(z ** 4).backward(create_graph=True)
first = z.grad.clone()
z.grad = None
first.backward()
print("4 z^3 at 2:", first.item(), " 12 z^2 at 2:", z.grad.item())
