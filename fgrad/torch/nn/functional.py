"""fgrad.torch.nn.functional: PyTorch's torch.nn.functional on fgrad's primitives.

Every function accepts Tensors (results are Tensors with a grad_fn when an input requires
grad) and plain arrays or tracers (results are arrays or tracers), so the same model code
runs under `loss.backward()` and under `fgrad.grad`/`jvp`/`hessian`/`vmap`.
"""
from __future__ import annotations

import warnings

import numpy as np

from ... import numpy as fnp
from ...core.errors import FgradRuntimeError, FgradValueError
from ...core.trace import Tracer, facade, is_tensor
from ...numpy._util import cast
from ...ops import elementwise as ew
from ...ops import nn as nnops
from ...ops.shape import reshape
from .._tensor._ops import named
from ._util import (
    arr,
    dtype,
    float_input,
    grad_fn,
    reduce_loss,
    reduction_mode,
    same_dtype,
    shape,
    softmax_dim,
    update_running,
    val,
)

__all__ = ["relu", "softplus", "sigmoid", "tanh", "softmax", "log_softmax", "cross_entropy", "nll_loss",
           "mse_loss", "l1_loss", "dropout", "linear",
           "batch_norm", "flatten", "leaky_relu", "one_hot"]


_is_tensor = is_tensor
_val, _arr, _shape, _dtype, _float_input, _same_dtype = val, arr, shape, dtype, float_input, same_dtype


# --- activations ---------------------------------------------------------------------------

def relu(input, inplace: bool = False):
    """max(x, 0); relu'(0) = 0. `inplace` is accepted for PyTorch compatibility (the
    result is a new tensor)."""
    input = _arr(input, "relu")
    _float_input("relu", input)
    return nnops.relu(input)


@grad_fn("LeakyReluBackward0")
def leaky_relu(input, negative_slope: float = 0.01, inplace: bool = False):
    input = _arr(input, "leaky_relu")
    return fnp.where(fnp.greater(input, 0), input, fnp.multiply(input, negative_slope))


def sigmoid(input):
    input = _arr(input, "sigmoid")
    _float_input("sigmoid", input)
    return ew.logistic(input)


def softplus(input, beta: float = 1.0, threshold: float = 20.0):
    """log(1 + exp(beta x)) / beta, linear where beta x > threshold (PyTorch's definition):
    the softplus primitive (fgrad.ops.nn.softplus), finite at any magnitude and exact to every
    derivative order at 0; at beta x == threshold, derivatives of order >= 2 are 0 as in PyTorch."""
    input = _arr(input, "softplus")
    _float_input("softplus", input)
    return nnops.softplus(input, beta, threshold)


def tanh(input):
    input = _arr(input, "tanh")
    _float_input("tanh", input)
    return ew.tanh(input)


_softmax_dim = softmax_dim


def _as_float(name, x, dtype):
    x = _arr(x, name)
    if dtype is not None:
        x = cast(x, np.dtype(getattr(dtype, "_np", dtype)))
    _float_input(name, x)
    return x


def log_softmax(input, dim=None, _stacklevel: int = 3, dtype=None):
    """log(softmax(x)) along `dim`, computed stably."""
    input = _as_float("log_softmax", input, dtype)
    return nnops.log_softmax(input, _softmax_dim("log_softmax", len(_shape(input)), dim))


@grad_fn("SoftmaxBackward0")
def softmax(input, dim=None, _stacklevel: int = 3, dtype=None):
    input = _as_float("softmax", input, dtype)
    return nnops.softmax(input, _softmax_dim("softmax", len(_shape(input)), dim))


# --- losses ----------------------------------------------------------------------------------

_reduction = reduction_mode


def cross_entropy(input, target, weight=None, size_average=None, ignore_index: int = -100,
                  reduce=None, reduction: str = "mean", label_smoothing: float = 0.0):
    """PyTorch's cross_entropy: `input` holds logits [N, C, ...] (or [C]); `target` holds
    class indices [N, ...] or class probabilities shaped like `input`."""
    input = _arr(input, "cross_entropy")
    _float_input("cross_entropy", input)
    return nnops.cross_entropy(input, target, weight, ignore_index,
                               _reduction(size_average, reduce, reduction), label_smoothing)


def nll_loss(input, target, weight=None, size_average=None, ignore_index: int = -100,
             reduce=None, reduction: str = "mean"):
    """Negative log-likelihood of log-probabilities `input` [N, C, ...] at class indices."""
    input = _arr(input, "nll_loss")
    _float_input("nll_loss", input)
    return nnops.nll_loss(input, target, weight, ignore_index,
                          _reduction(size_average, reduce, reduction))


def _pointwise_loss(name, diff_fn, input, target, reduction):
    input, target = _arr(input, name), _arr(target, name)
    if _shape(input) != _shape(target):
        warnings.warn(f"Using a target size ({_shape(target)}) that is different to the input size "
                      f"({_shape(input)}). This will likely lead to incorrect results due to "
                      "broadcasting. Please ensure they have the same size.", UserWarning,
                      stacklevel=3)
    return reduce_loss(name, diff_fn(fnp.subtract(input, target)), reduction)


@grad_fn("MseLossBackward0")
def mse_loss(input, target, size_average=None, reduce=None, reduction: str = "mean"):
    """Mean squared error (input - target)**2, reduced."""
    return _pointwise_loss("mse_loss", fnp.square, input, target,
                           _reduction(size_average, reduce, reduction))


def l1_loss(input, target, size_average=None, reduce=None, reduction: str = "mean"):
    """Mean absolute error |input - target|, reduced (grad_fn named as PyTorch's composition)."""
    reduction = _reduction(size_average, reduce, reduction)
    out = _pointwise_loss("l1_loss", fnp.abs, input, target, reduction)
    name = {"mean": "MeanBackward0", "sum": "SumBackward0", "none": "AbsBackward0"}[reduction]
    return named(out, name, input, target) if _is_tensor(out) else out


def one_hot(tensor, num_classes: int = -1):
    """Integer class indices -> int64 one-hot rows (not differentiable)."""
    v = np.asarray(_val(tensor))
    if v.dtype.kind not in "iu":
        raise FgradRuntimeError("one_hot is only applicable to index tensor (an integer dtype)")
    n = int(v.max()) + 1 if num_classes == -1 else int(num_classes)
    out = (v[..., None] == np.arange(n)).astype(np.int64)
    return facade.wrap(out) if _is_tensor(tensor) else out


# --- layers ----------------------------------------------------------------------------------

def linear(input, weight, bias=None):
    """input @ weight.T + bias, with weight [out, in] (PyTorch's layout)."""
    input, weight = _arr(input, "linear"), _arr(weight, "linear")
    xs, ws = _shape(input), _shape(weight)
    if len(ws) != 2 or not xs or xs[-1] != ws[1]:
        raise FgradRuntimeError(f"linear: mat1 and mat2 shapes cannot be multiplied (input shape {xs}, "
                           f"weight shape {ws}: the input's last dimension must equal weight.shape[1])")
    _same_dtype("linear", input, weight, bias)
    if bias is not None and _shape(bias) != (ws[0],):
        raise FgradRuntimeError(f"linear: bias of shape {_shape(bias)} does not match weight shape {ws}")
    return nnops.linear(input, weight, bias)


def flatten(input, start_dim: int = 0, end_dim: int = -1):
    input = _arr(input, "flatten")
    shape = _shape(input)
    if not shape:
        return reshape(input, (1,))
    nd = len(shape)
    s, e = start_dim % nd, end_dim % nd
    if s > e:
        raise FgradRuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    return reshape(input, shape[:s] + (int(np.prod(shape[s:e + 1], dtype=np.int64)),) + shape[e + 1:])


def dropout(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero each element with probability p and scale the rest by 1/(1-p) (when training).
    The mask is torch's for the same seed (`bernoulli_(1 - p)` on the default generator)."""
    if not 0.0 <= p <= 1.0:
        raise FgradValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    return _spatial._dropout(_arr(input, "dropout"), p, training, feature=False, alpha=False)


@grad_fn("NativeBatchNormBackward0")
def batch_norm(input, running_mean, running_var, weight=None, bias=None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5):
    """Normalise over every axis but 1 (channels): in training with batch statistics (and
    running_mean/running_var, when given, updated in place with momentum); in eval with the
    running statistics."""
    input = _arr(input, "batch_norm")
    _float_input("batch_norm", input)
    shape = _shape(input)
    if len(shape) < 2:
        raise FgradValueError(f"batch_norm: expected an input with a channel axis ([N, C, ...]), got "
                         f"shape {shape}")
    axes = (0,) + tuple(range(2, len(shape)))
    dt = _dtype(input)
    bshape = tuple(d if i == 1 else 1 for i, d in enumerate(shape))
    if training:
        n = int(np.prod([shape[a] for a in axes]))
        if n <= 1:
            raise FgradValueError(f"Expected more than 1 value per channel when training, got input size "
                             f"{list(shape)}")
        mean = fnp.mean(input, axis=axes, keepdims=True)
        centered = fnp.subtract(input, mean)
        var = fnp.mean(fnp.square(centered), axis=axes, keepdims=True)
        if running_mean is not None or running_var is not None:
            _update_running(running_mean, running_var, mean, var, momentum, n)
    else:
        if running_mean is None or running_var is None:
            raise FgradValueError("batch_norm: running_mean and running_var are needed when not training")
        mean = reshape(_cast_like(running_mean, dt), bshape)
        var = reshape(_cast_like(running_var, dt), bshape)
        centered = fnp.subtract(input, mean)
    inv = ew.div(ew.const(var, 1.0), ew.sqrt(ew.add(var, ew.const(var, eps))))
    y = fnp.multiply(centered, inv)
    if weight is not None:
        y = fnp.multiply(y, reshape(weight, bshape))
    if bias is not None:
        y = fnp.add(y, reshape(bias, bshape))
    return y


def _cast_like(x, dt):
    return x if _dtype(x) == dt else fnp.astype(x, dt)


_update_running = update_running


# lax-level kernels, re-exported for users who want them without the facade
conv2d_input_grad = nnops.conv2d_input_grad
conv2d_weight_grad = nnops.conv2d_weight_grad

# convolution, pooling, padding, resampling, channel dropout
from . import (  # noqa: E402  (the families, written on the helpers above)  # noqa: E402
    _activations,
    _conv_functional,
    _losses,
    _normalization,
    _pool_functional,
    _resample,
    _spatial,
)
from ._activations import *  # noqa: E402,F401,F403
from ._conv_functional import *  # noqa: E402,F401,F403
from ._losses import *  # noqa: E402,F401,F403
from ._normalization import *  # noqa: E402,F401,F403
from ._pool_functional import *  # noqa: E402,F401,F403
from ._resample import *  # noqa: E402,F401,F403
from ._spatial import *  # noqa: E402,F401,F403

__all__ += _activations.__all__ + _losses.__all__ + _normalization.__all__
__all__ += _conv_functional.__all__ + _pool_functional.__all__ + _spatial.__all__ + _resample.__all__

# attention (scaled_dot_product_attention, multi_head_attention_forward)
from . import _attention_functional  # noqa: E402
from ._attention_functional import *  # noqa: E402,F401,F403

__all__ += _attention_functional.__all__
