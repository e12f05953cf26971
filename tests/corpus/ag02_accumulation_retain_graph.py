"""Gradient accumulation across backward calls, zeroing, retain_graph and the error without it."""
import torch

torch.manual_seed(0)

w = torch.tensor([1.0], requires_grad=True)
x = torch.tensor([2.0], requires_grad=True)

for i in range(3):
    a = torch.add(w, x)
    b = torch.add(w, 1)
    y = torch.mul(a, b)
    y.backward()
    print(f"step {i}: w.grad = {w.grad.item()}")

w.grad.zero_()
print("after zero_:", w.grad)

y = (w * x) ** 2
y.backward(retain_graph=True)
print("first backward:", w.grad.item(), x.grad.item())
y.backward()
print("second backward (accumulated):", w.grad.item(), x.grad.item())

try:
    y.backward()
except RuntimeError as e:
    print("third backward raises RuntimeError:", str(e).startswith("Trying to backward through the graph a second time"))

# setting grads to None, as optimizer.zero_grad() does by default
w.grad = None
(3 * w).sum().backward()
print("fresh grad:", w.grad)

# accumulation over micro-batches equals the full-batch gradient (with the mean scaled)
data = torch.linspace(-1, 1, 8)
target = 3 * data + 0.5
p = torch.tensor([0.0, 0.0], requires_grad=True)
loss_full = ((p[0] * data + p[1] - target) ** 2).mean()
g_full = torch.autograd.grad(loss_full, p)[0]
for chunk_x, chunk_t in zip(data.chunk(4), target.chunk(4)):
    loss = ((p[0] * chunk_x + p[1] - chunk_t) ** 2).mean() / 4
    loss.backward()
print("full-batch grad:", g_full)
print("accumulated grad:", p.grad)
print("close:", torch.allclose(g_full, p.grad))
