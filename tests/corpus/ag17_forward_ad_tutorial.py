"""PyTorch's forward-mode AD tutorial, cell by cell: dual tensors and their tangents, a
function of a dual and a plain tensor, a Module's parameters made dual (by attribute and through
torch.func.functional_call), a custom Function's jvp checked by gradcheck, and torch.func.jvp."""
import numpy as np
import torch
import torch.autograd.forward_ad as fwAD
import torch.nn as nn
from torch.func import functional_call, jvp

torch.manual_seed(0)
rng = np.random.default_rng(0)


def randn(*shape, dtype=torch.float32):
    return torch.tensor(rng.standard_normal(shape), dtype=dtype)


primal = randn(10, 10)
tangent = randn(10, 10)


def fn(x, y):
    return x ** 2 + y ** 2


with fwAD.dual_level():
    dual_input = fwAD.make_dual(primal, tangent)
    print("tangent kept as is:", fwAD.unpack_dual(dual_input).tangent is tangent)
    plain_tensor = randn(10, 10)
    dual_output = fn(dual_input, plain_tensor)
    jvp_out = fwAD.unpack_dual(dual_output).tangent
print("jvp of x**2 + y**2 is 2 x t:", torch.allclose(jvp_out, 2 * primal * tangent))
print("no tangent after the level:", fwAD.unpack_dual(dual_output).tangent is None)
print("jvp[0, :4]:", jvp_out[0, :4])

# a Module's parameters as dual tensors
model = nn.Linear(5, 5)
with torch.no_grad():
    model.weight.copy_(randn(5, 5))
    model.bias.copy_(randn(5))
inputs = randn(16, 5)
params = {name: p for name, p in model.named_parameters()}
tangents = {name: randn(*p.shape) for name, p in params.items()}
with fwAD.dual_level():
    for name, p in params.items():
        delattr(model, name)
        setattr(model, name, fwAD.make_dual(p, tangents[name]))
    out = model(inputs)
    jvp_attr = fwAD.unpack_dual(out).tangent
# (torch marks this tangent as requiring grad, since the weight does; fgrad records a graph only
# where the tangent depends on a tensor requiring grad: x @ tW.T + tb does not)
print("module jvp[:2]:", jvp_attr[:2].detach())

# the same through functional_call
model = nn.Linear(5, 5)
dual_params = {}
with fwAD.dual_level():
    for name, p in params.items():
        dual_params[name] = fwAD.make_dual(p, tangents[name])
    out = functional_call(model, dual_params, inputs)
    jvp_fc = fwAD.unpack_dual(out).tangent
print("functional_call gives the same jvp:", torch.allclose(jvp_attr, jvp_fc))


# a custom Function with a forward-mode rule
class Fn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, foo):
        result = torch.exp(foo)
        ctx.result = result
        return result

    @staticmethod
    def jvp(ctx, gI):
        gO = gI * ctx.result
        del ctx.result
        return gO


primal = randn(10, 10, dtype=torch.double).requires_grad_()
tangent = randn(10, 10)
with fwAD.dual_level():
    dual_output = Fn.apply(fwAD.make_dual(primal, tangent))
    jvp_fn = fwAD.unpack_dual(dual_output).tangent
print("custom jvp matches exp's:", torch.allclose(jvp_fn, tangent * primal.exp()))
print("gradcheck (forward mode):", torch.autograd.gradcheck(Fn.apply, (primal[:2, :2].detach().requires_grad_(),),
                                                            check_forward_ad=True, check_backward_ad=False,
                                                            check_undefined_grad=False, check_batched_grad=False))

# torch.func.jvp: the functional API
primal0, tangent0, primal1, tangent1 = randn(10, 10), randn(10, 10), randn(10, 10), randn(10, 10)
primal_out, tangent_out = jvp(fn, (primal0, primal1), (tangent0, tangent1))
print("func.jvp:", torch.allclose(tangent_out, 2 * primal0 * tangent0 + 2 * primal1 * tangent1))


def func(params):
    return functional_call(model, params, inputs)


_, tangent_module = jvp(func, (params,), (tangents,))
print("func.jvp over the module's parameters:", torch.allclose(tangent_module, jvp_attr, atol=1e-6))
