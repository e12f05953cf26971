"""Custom torch.autograd.Function: save_for_backward, needs_input_grad, a straight-through
estimator, once_differentiable-free double backward, and gradcheck in float64."""
import torch
from torch.autograd import Function, gradcheck

torch.manual_seed(0)


class MyExp(Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        (y,) = ctx.saved_tensors
        return grad_output * y


class LinearFn(Function):
    @staticmethod
    def forward(ctx, inp, weight, bias=None):
        ctx.save_for_backward(inp, weight, bias)
        out = inp.mm(weight.t())
        if bias is not None:
            out = out + bias.unsqueeze(0).expand_as(out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        inp, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(inp)
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)
        return grad_input, grad_weight, grad_bias


class RoundSTE(Function):
    @staticmethod
    def forward(ctx, x):
        return torch.round(x)

    @staticmethod
    def backward(ctx, g):
        return g


class ScaledSquare(Function):
    """Takes a non-tensor argument, whose gradient is None."""
    @staticmethod
    def forward(ctx, x, scale):
        ctx.scale = scale
        ctx.save_for_backward(x)
        return scale * x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 2 * ctx.scale * x, None


x = torch.tensor([0.0, 0.5, 1.0], requires_grad=True)
y = MyExp.apply(x)
y.sum().backward()
print("MyExp:", y.detach(), "grad:", x.grad)
print("grad_fn name:", type(y.grad_fn).__name__)

inp = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], requires_grad=True)
weight = torch.tensor([[0.1, 0.2], [0.3, -0.4]], requires_grad=True)
bias = torch.tensor([0.5, -0.5], requires_grad=True)
out = LinearFn.apply(inp, weight, bias)
(out ** 2).sum().backward()
print("LinearFn out:", out.detach())
print("grad input:", inp.grad)
print("grad weight:", weight.grad)
print("grad bias:", bias.grad)

q = torch.tensor([0.2, 1.7, -2.6], requires_grad=True)
r = RoundSTE.apply(q)
(r * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
print("rounded:", r.detach(), "straight-through grad:", q.grad)

s = torch.tensor([1.0, -2.0], requires_grad=True)
ScaledSquare.apply(s, 3.0).sum().backward()
print("ScaledSquare grad:", s.grad)

args = (torch.randn(4, 2, dtype=torch.double, requires_grad=True),
        torch.randn(3, 2, dtype=torch.double, requires_grad=True),
        torch.randn(3, dtype=torch.double, requires_grad=True))
print("gradcheck LinearFn:", gradcheck(LinearFn.apply, args, eps=1e-6, atol=1e-4))
print("gradcheck MyExp:", gradcheck(MyExp.apply, (torch.randn(5, dtype=torch.double, requires_grad=True),)))
