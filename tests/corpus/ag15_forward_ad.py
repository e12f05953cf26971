"""Forward-mode AD as in PyTorch's tutorial: torch.autograd.forward_ad dual tensors, jvp of a
function, and a directional derivative checked against reverse mode."""
import torch
import torch.autograd.forward_ad as fwAD

torch.manual_seed(0)
primal = torch.tensor([0.5, 1.0, 2.0])
tangent = torch.tensor([1.0, 0.0, -1.0])


def fn(x, y):
    return x ** 2 + torch.sin(y) * x


with fwAD.dual_level():
    dual_input = fwAD.make_dual(primal, tangent)
    print("is dual:", fwAD.unpack_dual(dual_input).tangent is not None)
    dual_output = fn(dual_input, primal)
    jvp = fwAD.unpack_dual(dual_output).tangent
    value = fwAD.unpack_dual(dual_output).primal
print("value:", value)
print("jvp:", jvp)
x = primal.clone().requires_grad_()
(J,) = torch.autograd.grad(fn(x, primal).sum(), x)
print("matches reverse mode (diagonal Jacobian):", torch.allclose(jvp, J * tangent))

model = torch.nn.Linear(3, 2)
with torch.no_grad():
    model.weight.copy_(torch.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 0.0]]))
    model.bias.zero_()
with fwAD.dual_level():
    out = model(fwAD.make_dual(primal, tangent))
    print("jvp through nn.Linear:", fwAD.unpack_dual(out).tangent)
