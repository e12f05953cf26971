"""fgrad: composable automatic differentiation (JAX-style transforms over a typed IR).

Two doors on one core:
- `fgrad` is the functional namespace, with JAX's names and semantics: `fgrad.grad`, `vjp`,
  `jvp`, `vmap(in_axes=)`, `jit`, `fgrad.numpy`, `fgrad.lax`, `fgrad.scipy`, `fgrad.random`, `fgrad.nn`,
  `fgrad.tree_util`;
- `fgrad.torch` is the PyTorch namespace: `import fgrad.torch as torch`.
"""
import importlib as _importlib

from . import numpy, scipy, test_util, tree_util  # noqa: F401
from .api import (grad, hessian, jacfwd, jacrev, jit, jvp, linearize, make_jaxpr,  # noqa: F401
                  stop_gradient, value_and_grad, vjp, vmap)
from .api import (Array, ShapeDtypeStruct, block_until_ready, config, disable_jit,  # noqa: F401
                  eval_shape, jacobian, linear_transpose)
from .core.trace import debug_nans  # noqa: F401
from .custom import checkpoint, checkpoint_policies, custom_jvp, custom_vjp, remat  # noqa: F401
from . import debug, tree  # noqa: F401,E402 (jax.debug.print/callback; jax.tree.map, ...)
from . import lax  # noqa: F401
from . import random  # noqa: F401,E402  (JAX's jax.random: keys are values)
from . import nn  # noqa: F401,E402  (JAX's jax.nn; the PyTorch-style nn is fgrad.torch.nn)
from .experimental.jet import derivatives, jet  # noqa: F401,E402  (Taylor mode; JAX's path fgrad.experimental.jet stays)

__version__ = "0.1.0"

# Loaded on first use: the PyTorch door (a JAX-style program never pays for importing it),
# graph pictures (which draw both doors' graphs), MPI data parallelism and JAX's
# jax.experimental names (fgrad.experimental.jet).
_LAZY = ("torch", "viz", "distributed", "experimental")

# Names that were the facade's at fgrad's top level before the two doors: each now lives in
# fgrad.torch, and reaching for it here says so instead of a bare AttributeError.
_MOVED_TO_TORCH = frozenset("""
Tensor Size tensor autograd cuda optim data utils func linalg sparse special amp backends
distributions onnx serialization legacy_tensors runtime autograd_functional gradcheck
no_grad enable_grad set_grad_enabled is_grad_enabled inference_mode manual_seed seed
randn rand randint randperm zeros ones empty full arange linspace eye from_numpy as_tensor
save load compile cat stack dtype device float32 float64 int64 long
""".split())


# Former top-level names whose PyTorch path differs (fgrad.data was torch.utils.data).
_TORCH_PATH = {"data": "utils.data"}


def install_as_torch() -> None:
    """Make `import torch` and `import torch.<sub>` import fgrad.torch in this process, so
    that code written for PyTorch runs unmodified (as `python -m fgrad.run script.py` does).

    Call it before anything imports torch. It raises RuntimeError when the real PyTorch is
    already imported: one process cannot hold both under one name.

    Example:
        >>> import fgrad
        >>> fgrad.install_as_torch()
        >>> import torch, torch.nn as nn  # fgrad.torch and fgrad.torch.nn
    """
    _importlib.import_module(f"{__name__}.torch._alias").install()


def __getattr__(name: str):
    if name == "print_environment_info":  # (jax.print_environment_info; its imports load on first use)
        return _importlib.import_module(f"{__name__}._environment").print_environment_info
    if name in _LAZY:
        return _importlib.import_module(f"{__name__}.{name}")
    # (dunder and private look-ups, which tools make all the time, never load the torch door)
    if name in _MOVED_TO_TORCH or (not name.startswith("_")
                                   and hasattr(_importlib.import_module(f"{__name__}.torch"), name)):
        raise AttributeError(
            f"module 'fgrad' has no attribute {name!r}: fgrad is the functional (JAX-style) namespace; "
            f"the PyTorch-style API is fgrad.torch: `import fgrad.torch as torch`, then "
            f"torch.{_TORCH_PATH.get(name, name)}")
    raise AttributeError(f"module 'fgrad' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY) | {"print_environment_info"})
