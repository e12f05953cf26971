"""fgrad.torch: the PyTorch-style door, laid out like `torch` (`import fgrad.torch as torch`).

Tensors with `requires_grad`, `.grad`, `.grad_fn` and `.backward()`, `torch.nn`, `torch.optim`,
`torch.utils.data`, `torch.func`, `torch.autograd`, `torch.linalg`, ... on the same primitives,
derivative rules and backward engine as the functional door, `fgrad` (JAX's names)."""
import importlib as _importlib
import sys as _sys

from .. import __version__  # noqa: F401  (torch.__version__: fgrad's)
from . import _tensor  # noqa: F401
from ._tensor import *  # noqa: F401,F403
from ._tensor import autograd, cuda  # noqa: F401
from ._tensor.creation import tensor  # noqa: F401  (torch.tensor: a function here)
# torch.fft, torch.linalg, torch.sparse, torch.special: namespaces over Tensor (like nn), beside the facade
from . import fft, linalg, sparse, special  # noqa: F401,E402
from .sparse import sparse_coo, sparse_coo_tensor, strided  # noqa: F401,E402
from ._tensor._layout import (channels_last, channels_last_3d, contiguous_format,  # noqa: F401,E402
                              layout, legacy_contiguous_format, memory_format, preserve_format)
from ._tensor._ops_math import nan_to_num  # noqa: E402,F401
from ._tensor._ops_hash import hash_tensor  # noqa: E402,F401
from ._tensor._ops_breadth import *  # noqa: E402,F401,F403  (more of torch's top-level functions)
from ._tensor import _ops_breadth as _ops_breadth_module  # noqa: E402
from ._tensor._out import argument_check as _argument_check  # noqa: E402
from ._tensor._out import torch_function as _torch_function  # noqa: E402

# PyTorch's out= (and the table rows' input check) on these too, by the same generated wrapper
# as _tensor's functions
for _name in _ops_breadth_module.__all__:
    globals()[_name] = _torch_function(_name, getattr(_ops_breadth_module, _name),
                                       _argument_check(_name) if _name in _ops_breadth_module.TABLE_NAMES else None)
from ._tensor.anomaly_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled  # noqa: E402,F401

# torch.det & co: the torch.linalg functions under their older top-level names (also Tensor
# methods: _tensor/_methods.py's table)
det, inverse, slogdet, logdet = linalg.det, linalg.inv, linalg.slogdet, linalg.logdet

_sys.modules[__name__ + ".autograd"] = autograd
_sys.modules[__name__ + ".cuda"] = cuda

# The training-script layer comes last: it is written on the facade imported above.
from . import nn, optim, func, utils  # noqa: E402,F401
from .serialization import save, load  # noqa: E402,F401
from .serialization._container import PyTorchFileReader, PyTorchFileWriter  # noqa: E402,F401
from .utils.dlpack import from_dlpack  # noqa: E402,F401  (torch.from_dlpack)
from . import amp, backends, distributions, onnx, serialization  # noqa: E402,F401
from .distributions._samplers import binomial, poisson  # noqa: E402,F401  (torch.poisson/binomial: its kernels)
from . import random  # noqa: E402,F401  (torch.random: seeding, states, fork_rng)
from . import testing  # noqa: E402,F401  (torch.testing.assert_close)
from .amp import (autocast, get_autocast_cpu_dtype, get_autocast_dtype,  # noqa: E402,F401
                  get_autocast_gpu_dtype, is_autocast_cpu_enabled, set_autocast_cpu_dtype,
                  set_autocast_cpu_enabled, set_autocast_dtype, set_autocast_enabled, set_autocast_gpu_dtype)
from .legacy_tensors import *  # noqa: E402,F401,F403
from ._compile import compile  # noqa: E402,F401  (torch.compile: functions and Modules)
from .runtime import (accelerator, are_deterministic_algorithms_enabled, get_device_module,  # noqa: E402,F401
                      get_float32_matmul_precision, get_num_interop_threads, get_num_threads,
                      is_deterministic_algorithms_warn_only_enabled, set_float32_matmul_precision,
                      set_num_interop_threads, set_num_threads, use_deterministic_algorithms)
from .func import vmap  # noqa: E402,F401  (torch.vmap: in_dims, out_dims)
from ._default_device import get_default_device, set_default_device  # noqa: E402,F401
from ._toplevel import e, inf, nan, newaxis, pi, typename  # noqa: E402,F401

# torch.cuda.amp / torch.cpu.amp: the same autocast and GradScaler
cuda.amp = amp
# torch.autograd.functional, gradcheck and gradgradcheck (written on the transforms above)
from . import autograd_functional as _autograd_functional, gradcheck as _gradcheck  # noqa: E402
autograd.functional = _autograd_functional
autograd.gradcheck, autograd.gradgradcheck = _gradcheck.gradcheck, _gradcheck.gradgradcheck
autograd.GradcheckError = _gradcheck.GradcheckError
_sys.modules.setdefault(__name__ + ".autograd.functional", _autograd_functional)
# torch.autograd.Variable, PyTorch's deprecated alias, in its module torch.autograd.variable (whose
# name, as an attribute of torch.autograd, is the removed function `variable`, as in PyTorch)
from . import autograd_variable as _autograd_variable  # noqa: E402
autograd.Variable, autograd.variable = _autograd_variable.Variable, _autograd_variable.variable
_sys.modules.setdefault(__name__ + ".autograd.variable", _autograd_variable)
# torch.profiler, also torch.autograd.profiler (PyTorch's older home of profile / record_function)
from . import profiler  # noqa: E402
autograd.profiler = profiler
_sys.modules.setdefault(__name__ + ".autograd.profiler", profiler)
# torch.cpu (the CPU's device module) and the device-generic Stream and Event, on the CPU
from . import cpu  # noqa: E402,F401
# torch.ops.aten.<op>.<overload> and torch.ops.profiler: PyTorch's op registry by name
from . import ops  # noqa: E402,F401
from .cpu import Event, Stream  # noqa: E402,F401
from ._throughput import BenchmarkConfig, BenchmarkExecutionStats, ThroughputBenchmark  # noqa: E402,F401
from ._future import Future  # noqa: E402,F401
from ._lobpcg import lobpcg  # noqa: E402,F401
from ._symbolic import SymBool, SymFloat, SymInt  # noqa: E402,F401
cpu.amp = amp
for _name in ("distributions", "onnx", "amp", "backends", "accelerator", "cpu"):
    _sys.modules.setdefault(__name__ + "." + _name, globals()[_name])
# nn/linalg functions under torch's top-level names, eager control flow, runtime queries
from ._breadth import *  # noqa: E402,F401,F403
# nn.functional's names for some of them (pdist, conv_tbc, max_pool3d, ctc_loss, ...)
from . import _functional_aliases  # noqa: E402,F401
# torch.functional: aliases of the top-level functions PyTorch defines there (reads the names above)
from . import functional  # noqa: E402,F401
# torch.utils.benchmark (Timer, Measurement): written on the package and runtime, so it sits above both
from . import _benchmark  # noqa: E402
utils.benchmark = _benchmark
_sys.modules[__name__ + ".utils.benchmark"] = _benchmark


def __getattr__(name: str):
    """`torch.fx` after a plain `import torch`: imported on first use (it costs tens of ms)."""
    if name == "fx":
        return _importlib.import_module(__name__ + ".fx")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
