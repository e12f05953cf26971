"""fgrad.torch.nn: PyTorch's torch.nn (Module, Parameter, layers, losses, functional, init) on
fgrad Tensors. Layers are written with fgrad.torch.nn.functional, whose kernels are primitives
(fgrad.ops.nn), so models also run under fgrad.grad/jvp/hessian via fgrad.torch.func.functional_call."""
from . import functional, init, utils  # noqa: F401
from .layers import (  # noqa: F401
                     AvgPool2d,
                     BatchNorm1d,
                     BatchNorm2d,
                     Conv2d,
                     CrossEntropyLoss,
                     Dropout,
                     Flatten,
                     Unflatten,
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
from . import activation, containers, loss, normalization, sparse  # noqa: F401
from .containers import ParameterDict, ParameterList  # noqa: F401
from .activation import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .normalization import *  # noqa: F401,F403
from .sparse import *  # noqa: F401,F403
from . import rnn  # noqa: F401
from .rnn import *  # noqa: F401,F403
from . import attention, transformer  # noqa: F401
from .attention import *  # noqa: F401,F403
from .transformer import *  # noqa: F401,F403
from . import conv, dropout, padding, pooling, upsampling  # noqa: F401
from .conv import *  # noqa: F401,F403
from .dropout import *  # noqa: F401,F403
from .padding import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .upsampling import *  # noqa: F401,F403
from .module import Module, ModuleDict, ModuleList, Sequential  # noqa: F401
from . import _modules_more  # noqa: E402
from ._modules_more import *  # noqa: E402,F401,F403
from . import _lazy  # noqa: E402
from ._lazy import *  # noqa: E402,F401,F403
from . import _adaptive  # noqa: E402
from ._adaptive import *  # noqa: E402,F401,F403
from .parameter import Buffer, Parameter  # noqa: F401
from . import parametrizations, parametrize, prune  # noqa: E402

# torch.nn.utils.parametrize / parametrizations / prune: `utils` is a module, so its submodules are registered under
# their PyTorch paths for `import torch.nn.utils.prune` (as utils registers its `rnn`)
for _sub in (parametrize, parametrizations, prune):
    _name = _sub.__name__.rpartition(".")[2]
    setattr(utils, _name, _sub)
    __import__("sys").modules[f"{utils.__name__}.{_name}"] = _sub

__all__ = ["Module", "Sequential", "ModuleList", "ModuleDict", "Parameter", "Buffer", "functional", "init", "utils",
           "Identity", "Linear", "ReLU", "LeakyReLU", "Tanh",
           "Sigmoid", "Softmax", "LogSoftmax", "Dropout", "BatchNorm1d", "BatchNorm2d", "Flatten", "Unflatten",
           "CrossEntropyLoss", "NLLLoss", "MSELoss", "L1Loss"]
__all__ += activation.__all__ + containers.__all__ + loss.__all__ + normalization.__all__ + sparse.__all__
__all__ += rnn.__all__ + attention.__all__ + transformer.__all__
__all__ += conv.__all__ + dropout.__all__ + padding.__all__ + pooling.__all__ + upsampling.__all__
__all__ += _modules_more.__all__ + _lazy.__all__ + _adaptive.__all__

# torch.nn.modules.<file>: PyTorch's import paths for the classes above (aliases; reads nn's names)
from . import modules  # noqa: E402,F401
