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
    """PyTorch's torch.nn.SELU: the module form of `fgrad.torch.nn.functional.selu`, with PyTorch's
    constructor arguments, defaults and parameters."""

    fn = staticmethod(F.selu)


class SiLU(_Stateless):
    """PyTorch's torch.nn.SiLU: the module form of `fgrad.torch.nn.functional.silu`, with PyTorch's
    constructor arguments, defaults and parameters."""

    fn = staticmethod(F.silu)


class Mish(_Stateless):
    """PyTorch's torch.nn.Mish: the module form of `fgrad.torch.nn.functional.mish`, with PyTorch's
    constructor arguments, defaults and parameters."""

    fn = staticmethod(F.mish)


class Hardsigmoid(_Stateless):
    """PyTorch's torch.nn.Hardsigmoid: the module form of `fgrad.torch.nn.functional.hardsigmoid`, with PyTorch's
    constructor arguments, defaults and parameters."""

    fn = staticmethod(F.hardsigmoid)


class Hardswish(_Stateless):
    """PyTorch's torch.nn.Hardswish: the module form of `fgrad.torch.nn.functional.hardswish`, with PyTorch's
    constructor arguments, defaults and parameters."""

    fn = staticmethod(F.hardswish)


class LogSigmoid(Module):
    """PyTorch's torch.nn.LogSigmoid: the module form of `fgrad.torch.nn.functional.logsigmoid`, with PyTorch's
    constructor arguments, defaults and parameters."""

    def forward(self, input):
        return F.logsigmoid(input)


class Softsign(Module):
    """PyTorch's torch.nn.Softsign: the module form of `fgrad.torch.nn.functional.softsign`, with PyTorch's
    constructor arguments, defaults and parameters."""

    def forward(self, input):
        return F.softsign(input)


class Tanhshrink(Module):
    """PyTorch's torch.nn.Tanhshrink: the module form of `fgrad.torch.nn.functional.tanhshrink`, with PyTorch's
    constructor arguments, defaults and parameters."""

    def forward(self, input):
        return F.tanhshrink(input)


class ELU(Module):
    """PyTorch's torch.nn.ELU: the module form of `fgrad.torch.nn.functional.elu`, with PyTorch's
    constructor arguments, defaults and parameters."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):
        return F.elu(input, self.alpha)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace, f"alpha={self.alpha}")


class CELU(ELU):
    """PyTorch's torch.nn.CELU: the module form of `fgrad.torch.nn.functional.celu`, with PyTorch's
    constructor arguments, defaults and parameters."""

    def forward(self, input):
        return F.celu(input, self.alpha)


class GELU(Module):
    """PyTorch's torch.nn.GELU: the module form of `fgrad.torch.nn.functional.gelu`, with PyTorch's
    constructor arguments, defaults and parameters."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Hardtanh(Module):
    """PyTorch's torch.nn.Hardtanh: the module form of `fgrad.torch.nn.functional.hardtanh`, with PyTorch's
    constructor arguments, defaults and parameters."""

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
    """PyTorch's torch.nn.ReLU6: the module form of `fgrad.torch.nn.functional.relu6`, with PyTorch's
    constructor arguments, defaults and parameters."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace)


class Softplus(Module):
    """PyTorch's torch.nn.Softplus: the module form of `fgrad.torch.nn.functional.softplus`, with PyTorch's
    constructor arguments, defaults and parameters."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Softshrink(Module):
    """PyTorch's torch.nn.Softshrink: the module form of `fgrad.torch.nn.functional.softshrink`, with PyTorch's
    constructor arguments, defaults and parameters."""

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.softshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return str(self.lambd)


class Hardshrink(Softshrink):
    """PyTorch's torch.nn.Hardshrink: the module form of `fgrad.torch.nn.functional.hardshrink`, with PyTorch's
    constructor arguments, defaults and parameters."""

    def forward(self, input):
        return F.hardshrink(input, self.lambd)


class Threshold(Module):
    """PyTorch's torch.nn.Threshold: the module form of `fgrad.torch.nn.functional.threshold`, with PyTorch's
    constructor arguments, defaults and parameters."""

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
    """PyTorch's torch.nn.RReLU: the module form of `fgrad.torch.nn.functional.rrelu`, with PyTorch's
    constructor arguments, defaults and parameters."""

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False) -> None:
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace, f"lower={self.lower}, upper={self.upper}")


class GLU(Module):
    """PyTorch's torch.nn.GLU: the module form of `fgrad.torch.nn.functional.glu`, with PyTorch's
    constructor arguments, defaults and parameters."""

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmin(Module):
    """PyTorch's torch.nn.Softmin: the module form of `fgrad.torch.nn.functional.softmin`, with PyTorch's
    constructor arguments, defaults and parameters."""

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
