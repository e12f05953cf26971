"""The torch door: tensors, autograd, no_grad, tensor methods."""
import fgrad.torch as torch

x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
y = torch.ones(2, 2) * 3 + torch.zeros(2, 2)
z = (x * y).sum()
z.backward()
print(x.grad, z.item(), x.shape, x.dtype)
assert x.grad is not None  # Tensor | None, as in PyTorch's annotations
with torch.no_grad():
    x -= 0.1 * x.grad
w = torch.randn(3, 4, dtype=torch.float32)
v = torch.matmul(w, torch.arange(4.0)).relu().mean(dim=0)
print(v.detach().numpy(), w.view(4, 3)[0], w.t().reshape(-1).tolist())
print(torch.cat([w, w], dim=0).size(), torch.exp(w).max(), torch.manual_seed(0))
