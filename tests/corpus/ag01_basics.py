"""Autograd basics: leaves, grad_fn, backward on a scalar, gradients of a small expression."""
import torch

torch.manual_seed(0)

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
b = torch.tensor(0.25, requires_grad=True)

print("x is leaf:", x.is_leaf, "requires_grad:", x.requires_grad)
y = (w * x).sum() + b
z = y ** 2 + torch.sin(y)
print("y:", y)
print("z:", z)
print("y is leaf:", y.is_leaf, "grad_fn:", type(y.grad_fn).__name__)
print("z grad_fn:", z.grad_fn.name())

z.backward()
print("x.grad:", x.grad)
print("w.grad:", w.grad)
print("b.grad:", b.grad)

# integer tensors cannot require grad, floating tensors can
a = torch.arange(4, dtype=torch.float32).requires_grad_()
print("a:", a, a.dtype)
loss = (a.exp() * a).mean()
loss.backward()
print("loss:", round(loss.item(), 5))
print("a.grad:", a.grad)
print("grad shape equals param shape:", a.grad.shape == a.shape)

# matrix-vector example
A = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
v = torch.tensor([1.0, -1.0])
out = (A @ v).pow(2).sum()
out.backward()
print("A.grad:\n", A.grad)
