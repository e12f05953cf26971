"""The PyTorch-style Tensor facade (`import fgrad.torch as torch`), on the same primitives and
derivative rules as the functional API.

This package is also callable: `fgrad.torch.tensor(data, dtype=None, device=None,
requires_grad=False)` builds a Tensor, as `torch.tensor` does, while `fgrad.torch._tensor.Tensor`,
`fgrad.torch._tensor.autograd`, ... stay importable submodule paths.
"""
import sys as _sys
import types as _types

from ...core.errors import FgradTypeError
from . import (  # noqa: F401
    _dtypes,
    tensor,  # first: building the Tensor class imports the ops (_methods.py's table)
    _ops,
    autograd,
    cuda,
)
from . import creation as _creation
from ._device import device
from ._dtypes import (  # noqa: F401
    bool,
    cdouble,
    cfloat,
    complex64,
    complex128,
    double,
    dtype,
    float,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    int,
    int8,
    int16,
    int32,
    int64,
    long,
    promote_types,
    set_default_dtype,
    short,
    uint8,
    bfloat16,
    chalf,
    complex32,
    float8_e4m3fn,
    float8_e4m3fnuz,
    float8_e5m2,
    float8_e5m2fnuz,
    float8_e8m0fnu,
    uint16,
    uint32,
    uint64,
)
from ._format import set_printoptions
from ._methods import SHARED_NAMES
from ._out import torch_function as _torch_function
from .creation import tensor as _tensor_fn
from .grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)
from .tensor import Size, Tensor
from .tensor import Tensor as _Tensor

FUNCTIONS = SHARED_NAMES + ("where", "broadcast_shapes", "cat", "concat", "concatenate", "stack",
                            "hstack", "vstack", "einsum", "numel", "meshgrid", "cartesian_prod", "block_diag",
                            "searchsorted", "bucketize", "cdist", "std_mean", "var_mean", "tril_indices",
                            "triu_indices", "real", "imag", "view_as_real", "view_as_complex", "complex", "polar")
# Functions whose first argument is not a single input tensor.
_NOT_INPUT_FIRST = {"where", "broadcast_shapes", "cat", "concat", "concatenate", "stack", "hstack",
                    "vstack", "einsum", "meshgrid", "cartesian_prod", "block_diag", "tril_indices", "triu_indices",
                    "bucketize", "xlogy"}


# Functions whose first two arguments must both be tensors.
_TWO_TENSORS = {"mm", "bmm", "mv", "dot", "inner", "outer", "ger", "matmul", "cross", "kron", "tensordot",
                "vdot", "cdist", "dist", "complex", "polar"}


def _check_args(name):
    """PyTorch's argument check at the API boundary for torch.`name`: `input` must be a
    Tensor (and the second operand of the two-tensor products)."""
    first = name not in _NOT_INPUT_FIRST
    second = name in _TWO_TENSORS

    def check(args):
        if first and args and not isinstance(args[0], _Tensor) \
                and not getattr(args[0], "is_sparse", False):  # (a sparse tensor: mm, matmul)
            raise FgradTypeError(f"torch.{name}(): argument 'input' (position 1) must be Tensor, not "
                                 f"{type(args[0]).__name__}. Wrap data with fgrad.torch.tensor(...) first.")
        if second and len(args) > 1 and not isinstance(args[1], _Tensor) \
                and not getattr(args[1], "is_sparse", False):
            raise FgradTypeError(f"torch.{name}(): argument (position 2) must be Tensor, not "
                                 f"{type(args[1]).__name__}. Wrap data with fgrad.torch.tensor(...) first.")
    return check


for _name in FUNCTIONS:
    globals()[_name] = _torch_function(_name, getattr(_ops, _name), _check_args(_name))
# creation functions, except `tensor`: that name is the submodule tensor.py here, and in the
# fgrad namespace it is this (callable) package
_creation_all = [n for n in _creation.__all__ if n != "tensor"]
for _name in _creation_all:
    _obj = getattr(_creation, _name)
    globals()[_name] = _torch_function(_name, _obj, creation=True) if isinstance(_obj, _types.FunctionType) \
        else _obj

__all__ = (["Tensor", "Size", "dtype", "device", "autograd", "cuda", "no_grad", "enable_grad",
            "set_grad_enabled", "is_grad_enabled", "inference_mode", "set_printoptions", "get_default_dtype",
            "set_default_dtype", "promote_types"]
           + [d.name for d in _dtypes.ALL]
           + ["float", "double", "half", "long", "int", "short", "bool", "cfloat", "cdouble", "chalf"]
           + list(_creation_all) + list(FUNCTIONS))


class _CallableModule(_types.ModuleType):
    """`fgrad.torch.tensor(...)` builds a Tensor; `fgrad.torch._tensor.X` is this package's attribute X."""

    def __call__(self, data, dtype=None, device=None, requires_grad=False, pin_memory=False):
        return _tensor_fn(data, dtype=dtype, device=device, requires_grad=requires_grad)


_sys.modules[__name__].__class__ = _CallableModule

# The names installed from tables above, declared for static checkers (pyright, mypy); the stub
# is generated by tools/gen_type_stubs.py and never imported at run time.
import typing as _typing  # noqa: E402
if _typing.TYPE_CHECKING:
    from ._tensor_names import *  # noqa: F401,F403
