"""fgrad: composable automatic differentiation (JAX-style transforms over a typed IR)
with a PyTorch-style Tensor facade on the same primitives and rules."""
from . import numpy, tree_util  # noqa: F401
from .api import (grad, hessian, jacfwd, jacrev, jit, jvp, linearize, make_jaxpr,  # noqa: F401
                  stop_gradient, value_and_grad, vjp, vmap)
from .core.trace import debug_nans  # noqa: F401
from .custom import checkpoint, custom_jvp, custom_vjp, remat  # noqa: F401

__version__ = "0.1.0"
