"""In-place ops and views under autograd: gradients through slices, the version-counter error,
and the leaf in-place error."""
import torch

torch.manual_seed(0)

base = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
y = base * 1
v = y[1:3]
v.mul_(10)
print("y after in-place on a view:", y)
y.sum().backward()
print("base.grad:", base.grad)

a = torch.tensor([0.5, 1.0, 2.0], requires_grad=True)
b = a.exp()
b.add_(1)  # exp saves its output; modifying it breaks backward
try:
    b.sum().backward()
    print("no error")
except RuntimeError as e:
    print("RuntimeError:", "modified by an inplace operation" in str(e))

leaf = torch.zeros(3, requires_grad=True)
try:
    leaf.add_(1)
except RuntimeError as e:
    print("leaf in-place RuntimeError:", "leaf Variable that requires grad" in str(e))

with torch.no_grad():
    leaf.add_(1)
print("in-place on a leaf under no_grad:", leaf)

# views
m = torch.arange(12.0).reshape(3, 4)
t = m.t()
print("transpose is contiguous:", t.is_contiguous(), "shape", tuple(t.shape))
print("view after contiguous:", t.contiguous().view(-1)[:5])
col = m[:, 1]
col.fill_(-1)
print("m after writing a column view:\n", m)

# masked in-place and clamp_ in a graph
s = torch.tensor([-2.0, 0.5, 3.0], requires_grad=True)
h = s * 2
h.clamp_(min=0, max=4)
h.sum().backward()
print("grad through clamp_:", s.grad)

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
z = x.clone()
z[0] = 0.0
z[2] = z[2] * 5
(z * z).sum().backward()
print("grad after index assignment:", x.grad)

# views share storage with their base
u = m.unsqueeze(0)
print("unsqueeze shape:", tuple(u.shape), "shares storage:", u.data_ptr() == m.data_ptr())
print("reshape of a transpose copies:", t.reshape(-1).data_ptr() != m.data_ptr())
