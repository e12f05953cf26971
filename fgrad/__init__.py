"""fgrad: composable automatic differentiation (JAX-style transforms over a typed IR)
with a PyTorch-style Tensor facade on the same primitives and rules."""
import sys as _sys

from . import numpy, scipy, test_util, tree_util  # noqa: F401
from .api import (grad, hessian, jacfwd, jacrev, jit, jvp, linearize, make_jaxpr,  # noqa: F401
                  stop_gradient, value_and_grad, vjp, vmap)
from .core.trace import debug_nans  # noqa: F401
from .custom import checkpoint, custom_jvp, custom_vjp, remat  # noqa: F401
from . import lax  # noqa: F401
from . import random  # noqa: F401,E402  (JAX's jax.random: keys are values)

# The Tensor facade: `import fgrad as torch`. `fgrad.tensor` is the facade's package and, being
# callable, also `torch.tensor(data, ...)`; `fgrad.autograd` and `fgrad.cuda` are importable.
from . import tensor  # noqa: E402
from .tensor import *  # noqa: F401,F403,E402
from .tensor import autograd, cuda  # noqa: F401,E402
# torch.linalg, torch.sparse, torch.special: namespaces over Tensor (like nn), beside the facade
from . import linalg, sparse, special  # noqa: F401,E402
from .sparse import sparse_coo, sparse_coo_tensor, strided  # noqa: F401,E402
from .tensor._ops_math import nan_to_num  # noqa: E402,F401
from .tensor.anomaly_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled  # noqa: E402,F401

# torch.det & co: the torch.linalg functions under their older top-level names, also as methods
det, inverse, slogdet, logdet = linalg.det, linalg.inv, linalg.slogdet, linalg.logdet
for _name, _fn in (("det", det), ("inverse", inverse), ("slogdet", slogdet), ("logdet", logdet),
                   ("nan_to_num", nan_to_num)):
    setattr(Tensor, _name, _fn)

_sys.modules[__name__ + ".autograd"] = autograd
_sys.modules[__name__ + ".cuda"] = cuda

__version__ = "0.1.0"

# The training-script layer comes last: it is written on the facade imported above.
from . import nn, optim, data, func, utils  # noqa: E402,F401
from .serialization import save, load  # noqa: E402,F401
from .utils.dlpack import from_dlpack  # noqa: E402,F401  (torch.from_dlpack)
# Pictures of graphs and IR (fgrad.viz.draw); Graphviz is imported only when one is rendered.
from . import viz  # noqa: E402,F401
from . import amp, backends, distributions, onnx, serialization  # noqa: E402,F401
from .amp import autocast  # noqa: E402,F401
from .legacy_tensors import *  # noqa: E402,F401,F403
from .runtime import (accelerator, are_deterministic_algorithms_enabled, compile,  # noqa: E402,F401
                      get_float32_matmul_precision, get_num_interop_threads, get_num_threads,
                      is_deterministic_algorithms_warn_only_enabled, set_float32_matmul_precision,
                      set_num_interop_threads, set_num_threads, use_deterministic_algorithms)

# torch.cuda.amp / torch.cpu.amp: the same autocast and GradScaler
cuda.amp = amp
# torch.autograd.functional, gradcheck and gradgradcheck (written on the transforms above)
from . import autograd_functional as _autograd_functional, gradcheck as _gradcheck  # noqa: E402
autograd.functional = _autograd_functional
autograd.gradcheck, autograd.gradgradcheck = _gradcheck.gradcheck, _gradcheck.gradgradcheck
autograd.GradcheckError = _gradcheck.GradcheckError
_sys.modules.setdefault(__name__ + ".autograd.functional", _autograd_functional)
for _name in ("distributions", "onnx", "amp", "backends", "accelerator"):
    _sys.modules.setdefault(__name__ + "." + _name, globals()[_name])
