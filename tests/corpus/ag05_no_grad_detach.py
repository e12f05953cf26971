"""no_grad, enable_grad, set_grad_enabled, inference_mode, detach and requires_grad_."""
import torch

torch.manual_seed(0)

x = torch.tensor([1.0, 2.0], requires_grad=True)
with torch.no_grad():
    y = x * 2
print("inside no_grad: requires_grad", y.requires_grad, "grad_fn", y.grad_fn)

with torch.no_grad():
    with torch.enable_grad():
        z = x * 2
print("enable_grad inside no_grad:", z.requires_grad)

for mode in (True, False):
    with torch.set_grad_enabled(mode):
        w = x ** 2
    print(f"set_grad_enabled({mode}):", w.requires_grad, torch.is_grad_enabled())


@torch.no_grad()
def evaluate(t):
    return (t * 3).sum()


r = evaluate(x)
print("decorated no_grad:", r.requires_grad, r.item())

with torch.inference_mode():
    q = x + 1
print("inference_mode:", q.requires_grad)

d = (x * 5).detach()
print("detached:", d, d.requires_grad, d.is_leaf)
d2 = d.requires_grad_()
print("requires_grad_ returns self:", d2 is d, d.requires_grad)

# detach shares storage with the original
a = torch.ones(3, requires_grad=True)
b = a.detach()
b.zero_()
print("a after zeroing the detached view:", a)

# stop gradient through one branch
u = torch.tensor(3.0, requires_grad=True)
f = u * u.detach() + u
f.backward()
print("u.grad with a detached factor:", u.grad)

# .data gives the value without history (old style)
p = torch.tensor([1.0, -1.0], requires_grad=True)
p.data.mul_(2)
print("p after p.data.mul_(2):", p)
print("item / tolist:", x.sum().item(), x.tolist())
