"""Activation layers (PyTorch's torch.nn activation modules beyond ReLU, LeakyReLU, Tanh,
Sigmoid, Softmax and LogSoftmax), each a thin Module over fgrad.torch.nn.functional."""
from __future__ import annotations

from .. import _tensor as T  # the facade namespace: T.empty, ...
from ...core.errors import FgradValueError
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter


def _inplace_repr(inplace: bool, lead: str = "") -> str:
    return lead + (", inplace=True" if lead and inplace else "inplace=True" if inplace else "")


class _Stateless(Module):
    """An activation without arguments other than `inplace` (accepted: results are new tensors)."""

    fn = None

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return type(self).fn(input)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace)


class SELU(_Stateless):
    fn = staticmethod(F.selu)


class SiLU(_Stateless):
    fn = staticmethod(F.silu)


class Mish(_Stateless):
    fn = staticmethod(F.mish)


class Hardsigmoid(_Stateless):
    fn = staticmethod(F.hardsigmoid)


class Hardswish(_Stateless):
    fn = staticmethod(F.hardswish)


class LogSigmoid(Module):
    def forward(self, input):
        return F.logsigmoid(input)


class Softsign(Module):
    def forward(self, input):
        return F.softsign(input)


class Tanhshrink(Module):
    def forward(self, input):
        return F.tanhshrink(input)


class ELU(Module):
    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):
        return F.elu(input, self.alpha)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace, f"alpha={self.alpha}")


class CELU(ELU):
    def forward(self, input):
        return F.celu(input, self.alpha)


class GELU(Module):
    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Hardtanh(Module):
    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        if min_val > max_val:
            raise FgradValueError("min_val cannot be greater than max_val")
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace, f"min_val={self.min_val}, max_val={self.max_val}")


class ReLU6(Hardtanh):
    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace)


class Softplus(Module):
    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Softshrink(Module):
    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.softshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return str(self.lambd)


class Hardshrink(Softshrink):
    def forward(self, input):
        return F.hardshrink(input, self.lambd)


class Threshold(Module):
    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace, f"threshold={self.threshold}, value={self.value}")


class PReLU(Module):
    """x for x > 0, a * x otherwise, with a learned slope `a` (one, or one per channel)."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None, dtype=None) -> None:
        super().__init__()
        self.num_parameters, self.init = int(num_parameters), float(init)
        self.weight = Parameter(T.empty(self.num_parameters, dtype=dtype, device=device))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class RReLU(Module):
    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False) -> None:
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace, f"lower={self.lower}, upper={self.upper}")


class GLU(Module):
    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmin(Module):
    def __init__(self, dim=None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmin(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


__all__ = ["ELU", "SELU", "CELU", "GELU", "SiLU", "Mish", "Hardtanh", "ReLU6", "Hardsigmoid", "Hardswish",
           "LogSigmoid", "Softsign", "Tanhshrink", "Softplus", "Softshrink", "Hardshrink", "Threshold", "PReLU",
           "RReLU", "GLU", "Softmin"]
