"""fgrad.nn: JAX's `jax.nn` on the functional door -- activations, softmax-like reductions,
one_hot, dot_product_attention, and `fgrad.nn.initializers` (JAX's initializer factories over fgrad.random keys).

Every function is written on fgrad.numpy / fgrad.scipy.special, so it differentiates to any
order and traces under jit and vmap; derivative conventions at kinks are JAX's (relu'(0) = 0
and softmax's custom derivative among them). The PyTorch-style nn is `fgrad.torch.nn`.

Not provided: jax.nn's low-precision matmul helpers (`scaled_matmul`, `scaled_dot_general`,
`get_scaled_dot_general_config`: block-scaled fp8/fp4 GEMMs for GPUs), and
dot_product_attention's `implementation="cudnn"`.
"""
from . import initializers  # noqa: F401
from .activations import (celu, elu, gelu, glu, hard_sigmoid, hard_silu, hard_swish, hard_tanh,  # noqa: F401
                          identity, leaky_relu, log1mexp, log_sigmoid, mish, relu, relu6, selu,
                          sigmoid, silu, soft_sign, softplus, sparse_plus, sparse_sigmoid, squareplus,
                          swish, tanh)
from .attention import dot_product_attention  # noqa: F401
from .encoding import one_hot  # noqa: F401
from .reductions import log_softmax, logmeanexp, logsumexp, softmax, standardize  # noqa: F401

__all__ = sorted(n for n in dir() if not n.startswith("_"))

# torch.nn's names that are not jax.nn's: its Module classes (CamelCase) and subpackages
_TORCH_NN_SUBMODULES = frozenset({"functional", "init", "utils", "parameter", "modules"})


def __getattr__(name: str):
    if (name[:1].isupper() and not name.startswith("_")) or name in _TORCH_NN_SUBMODULES:
        raise AttributeError(
            f"module 'fgrad.nn' has no attribute {name!r}: fgrad.nn is JAX's jax.nn (functions and "
            f"initializers); the PyTorch-style nn is fgrad.torch.nn: `import fgrad.torch as torch`, "
            f"then torch.nn.{name}")
    raise AttributeError(f"module 'fgrad.nn' has no attribute {name!r}")
