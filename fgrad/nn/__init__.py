"""fgrad.nn: PyTorch's torch.nn (Module, Parameter, layers, losses, functional, init) on
fgrad Tensors. Layers are written with fgrad.nn.functional, whose kernels are primitives
(fgrad.ops.nn), so models also run under fgrad.grad/jvp/hessian via fgrad.func.functional_call."""
from . import functional, init, utils  # noqa: F401
from .layers import (  # noqa: F401
                     AvgPool2d,
                     BatchNorm1d,
                     BatchNorm2d,
                     Conv2d,
                     CrossEntropyLoss,
                     Dropout,
                     Flatten,
                     Identity,
                     L1Loss,
                     LeakyReLU,
                     Linear,
                     LogSoftmax,
                     MaxPool2d,
                     MSELoss,
                     NLLLoss,
                     ReLU,
                     Sigmoid,
                     Softmax,
                     Tanh,
)
from .module import Module, ModuleDict, ModuleList, Sequential  # noqa: F401
from .parameter import Parameter  # noqa: F401

__all__ = ["Module", "Sequential", "ModuleList", "ModuleDict", "Parameter", "functional", "init", "utils",
           "Identity", "Linear", "Conv2d", "MaxPool2d", "AvgPool2d", "ReLU", "LeakyReLU", "Tanh",
           "Sigmoid", "Softmax", "LogSoftmax", "Dropout", "BatchNorm1d", "BatchNorm2d", "Flatten",
           "CrossEntropyLoss", "NLLLoss", "MSELoss", "L1Loss"]
