"""torch.autograd.grad with several inputs and outputs, grad_outputs, allow_unused, and
torch.autograd.backward with explicit gradients."""
import torch

torch.manual_seed(0)

a = torch.tensor([1.0, 2.0], requires_grad=True)
b = torch.tensor([3.0, -1.0], requires_grad=True)
c = torch.tensor([0.5], requires_grad=True)

out = (a * b).sum() + (a ** 2).sum()
ga, gb = torch.autograd.grad(out, (a, b), retain_graph=True)
print("d out/da:", ga)
print("d out/db:", gb)

gc = torch.autograd.grad(out, [a, c], allow_unused=True, retain_graph=True)
print("unused input gives:", gc[1])
gz = torch.autograd.grad(out, [a, c], allow_unused=True, materialize_grads=True)
print("materialized:", gz[1])

vec_out = a * b
(g,) = torch.autograd.grad(vec_out, a, grad_outputs=torch.tensor([1.0, 10.0]))
print("vector-Jacobian product:", g)

y1 = a.sum() * 2
y2 = (b * b).sum()
grads = torch.autograd.grad([y1, y2], [a, b])
print("sum of two outputs' grads:", grads)

torch.autograd.backward([y1.detach().requires_grad_() * 1, (a * c).sum()], [torch.tensor(1.0), torch.tensor(2.0)])
print("a.grad via autograd.backward:", a.grad)
print("c.grad via autograd.backward:", c.grad)

try:
    torch.autograd.grad((a * 2), a)
except RuntimeError as e:
    print("non-scalar without grad_outputs:", str(e).startswith("grad can be implicitly created only for scalar outputs"))

# gradient of a loss with respect to an intermediate activation
h = torch.tanh(a * 3)
loss = (h - 0.5).pow(2).sum()
gh, ga2 = torch.autograd.grad(loss, [h, a])
print("dL/dh:", gh)
print("dL/da:", ga2)
print("a.grad untouched by autograd.grad:", a.grad)
