"""Weight parametrizations: nn.utils.parametrizations.weight_norm and spectral_norm, a custom
parametrization (symmetric matrix) with register_parametrization, and parameters_to_vector."""
import torch
import torch.nn as nn
import torch.nn.utils.parametrize as parametrize
from torch.nn.utils import parameters_to_vector, vector_to_parameters
from torch.nn.utils.parametrizations import spectral_norm, weight_norm

torch.manual_seed(0)
lin = nn.Linear(3, 2)
with torch.no_grad():
    lin.weight.copy_(torch.tensor([[3.0, 0.0, 4.0], [1.0, 2.0, 2.0]]))
    lin.bias.zero_()
vec = parameters_to_vector(lin.parameters())
print("flattened parameters:", vec)
vector_to_parameters(vec * 2, lin.parameters())
print("after vector_to_parameters:", lin.weight.data)

wn = weight_norm(nn.Linear(3, 2), name="weight")
with torch.no_grad():
    wn.parametrizations.weight.original0.copy_(torch.tensor([[2.0], [1.0]]))
    wn.parametrizations.weight.original1.copy_(torch.tensor([[3.0, 0.0, 4.0], [1.0, 2.0, 2.0]]))
print("weight_norm weight:", wn.weight)
print("row norms equal g:", wn.weight.norm(dim=1))


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)


layer = nn.Linear(3, 3)
with torch.no_grad():
    layer.weight.copy_(torch.arange(9.0).reshape(3, 3))
parametrize.register_parametrization(layer, "weight", Symmetric())
print("symmetric:", torch.equal(layer.weight, layer.weight.T), layer.weight)
print("is_parametrized:", parametrize.is_parametrized(layer), [n for n, _ in layer.named_parameters()])
layer(torch.ones(1, 3)).sum().backward()
print("grad on the original:", layer.parametrizations.weight.original.grad)

sn = spectral_norm(nn.Linear(4, 4))
with torch.no_grad():
    sn.parametrizations.weight.original.copy_(torch.diag(torch.tensor([4.0, 2.0, 1.0, 0.5])))
for _ in range(5):
    sn(torch.ones(1, 4))
print("spectral norm ~1:", round(torch.linalg.matrix_norm(sn.weight, ord=2).item(), 3))
