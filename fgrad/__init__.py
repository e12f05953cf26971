"""fgrad: composable automatic differentiation (JAX-style transforms over a typed IR)
with a PyTorch-style Tensor facade on the same primitives and rules."""
import sys as _sys

from . import numpy, scipy, test_util, tree_util  # noqa: F401
from .api import (grad, hessian, jacfwd, jacrev, jit, jvp, linearize, make_jaxpr,  # noqa: F401
                  stop_gradient, value_and_grad, vjp, vmap)
from .core.trace import debug_nans  # noqa: F401
from .custom import checkpoint, custom_jvp, custom_vjp, remat  # noqa: F401

# The Tensor facade: `import fgrad as torch`. `fgrad.tensor` is the facade's package and, being
# callable, also `torch.tensor(data, ...)`; `fgrad.autograd` and `fgrad.cuda` are importable.
from . import tensor  # noqa: E402
from .tensor import *  # noqa: F401,F403,E402
from .tensor import autograd, cuda  # noqa: F401,E402

_sys.modules[__name__ + ".autograd"] = autograd
_sys.modules[__name__ + ".cuda"] = cuda

__version__ = "0.1.0"

# The training-script layer comes last: it is written on the facade imported above.
from . import nn, optim, data, func, utils  # noqa: E402,F401
from .serialization import save, load  # noqa: E402,F401
