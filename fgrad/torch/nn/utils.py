"""fgrad.torch.nn.utils: gradient clipping, parameter <-> vector, weight_norm / spectral_norm,
conv/linear-batchnorm fusion, skip_init, and an allocator setting for training loops on the
CPU."""
from __future__ import annotations

import copy
import inspect
import math
import sys
import warnings

import numpy as np

from .. import random as _random
from .. import _tensor as T  # the facade namespace: T(data), T.zeros, T.float32, ...
from ...core.allocator import tune_malloc  # noqa: F401  (fgrad's own: see fgrad.core.allocator)
from ...core.errors import FgradRuntimeError, FgradValueError
from .._tensor.grad_mode import no_grad
from .._tensor.tensor import Tensor
from . import utils_rnn as rnn
from ._weight_norms import remove_spectral_norm, remove_weight_norm, spectral_norm, weight_norm
from ._memory_formats import convert_conv2d_weight_memory_format, convert_conv3d_weight_memory_format
from .module import Module
from .parameter import Parameter

# `from fgrad.torch.nn.utils.rnn import pad_sequence` (PyTorch's path): utils is a module, so its
# `rnn` is registered as the submodule Python's import looks up
sys.modules[__name__ + ".rnn"] = rnn

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "clip_grads_with_norm_",
           "get_total_norm", "parameters_to_vector", "vector_to_parameters", "weight_norm",
           "remove_weight_norm", "spectral_norm", "remove_spectral_norm", "fuse_conv_bn_eval",
           "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights", "skip_init",
           "tune_malloc", "convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _params(parameters) -> list:
    """The parameters as a list, read once: callers pass generators (model.parameters()),
    which a second pass would find empty."""
    return [parameters] if isinstance(parameters, Tensor) else list(parameters)


def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False):
    """Scale the gradients in place so that their joint norm is at most max_norm; returns the
    norm before clipping (a 0-d Tensor), as PyTorch does."""
    parameters = _params(parameters)
    grads = [p._grad._value for p in parameters if p._grad is not None]
    if not grads:
        return T(0.0)
    norm_type = float(norm_type)
    if norm_type == math.inf:
        total = max(float(np.abs(g).max()) for g in grads)
    else:
        total = float(sum(float(np.sum(np.abs(g.astype(np.float64)) ** norm_type)) for g in grads)
                      ** (1.0 / norm_type))
    if error_if_nonfinite and not math.isfinite(total):
        raise FgradRuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is "
                           "non-finite, so it cannot be clipped. To disable this error and scale the "
                           "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`")
    coef = float(max_norm) / (total + 1e-6)
    if coef < 1.0:
        with no_grad():
            for p in parameters:
                if p._grad is not None:
                    p._grad._value *= p._grad._value.dtype.type(coef)
                    p._grad._vbox[0] += 1
    return T(total, dtype=T.float32)


def clip_grad_norm(parameters, max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None):
    """PyTorch's deprecated spelling of clip_grad_norm_ (warns FutureWarning).

    Args:
        parameters, max_norm, norm_type, error_if_nonfinite: as clip_grad_norm_'s.
        foreach: accepted as PyTorch's; no effect.

    Returns:
        The total norm before clipping."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite)


def get_total_norm(tensors, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach: bool | None = None):
    """The norm of the norms of `tensors` (of their concatenation), as PyTorch computes it:
    vector_norm(stack([vector_norm(t, p) for t in tensors]), p), outside autograd.

    Args:
        tensors: a Tensor or an iterable of Tensors (typically the gradients).
        norm_type: the order p (inf for the max norm).
        error_if_nonfinite: raise when the total is nan or inf.
        foreach: accepted as PyTorch's; no effect.

    Returns:
        A 0-d Tensor (float32 0.0 for no tensors).

    Raises:
        RuntimeError: a non-finite total with error_if_nonfinite."""
    tensors = _params(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return T(0.0)
    with no_grad():
        total = T.stack([t.norm(norm_type) for t in tensors]).norm(norm_type)
    if error_if_nonfinite and not math.isfinite(float(total)):
        raise FgradRuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is "
                                "non-finite, so it cannot be clipped. To disable this error and scale the "
                                "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters, max_norm: float, total_norm, foreach: bool | None = None) -> None:
    """Scale the gradients in place by min(1, max_norm / (total_norm + 1e-6)) (PyTorch's second
    half of clip_grad_norm_, with a total norm from get_total_norm).

    Args:
        parameters: a Tensor or an iterable of Tensors whose .grad is scaled.
        max_norm: the largest norm allowed.
        total_norm: the gradients' total norm (a Tensor or a number).
        foreach: accepted as PyTorch's; no effect."""
    grads = [p._grad for p in _params(parameters) if p._grad is not None]
    if not grads:
        return
    with no_grad():
        total = total_norm if isinstance(total_norm, Tensor) else T(float(total_norm))
        coef = T.clamp(float(max_norm) / (total + 1e-6), max=1.0)
        for g in grads:
            g.mul_(coef.to(g.dtype))


def _fused(w, b, rm, rv, eps, bn_w, bn_b, shape, weight_scale_dim):
    w_dtype = w.dtype
    b_dtype = b.dtype if b is not None else w_dtype
    b = T.zeros_like(rm) if b is None else b
    bn_w = T.ones_like(rm) if bn_w is None else bn_w
    bn_b = T.zeros_like(rm) if bn_b is None else bn_b
    scale = bn_w * T.rsqrt(rv + eps)
    fw = (w * (scale.reshape(shape) if weight_scale_dim is None else scale.unsqueeze(-1))).to(w_dtype)
    fb = ((b - rm) * scale + bn_b).to(b_dtype)
    return Parameter(fw, w.requires_grad), Parameter(fb, b.requires_grad)


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps: float, bn_w, bn_b,
                         transpose: bool = False) -> tuple:
    """The weight and bias of one convolution equal to a convolution followed by an eval-mode
    batch norm: w * g / sqrt(rv + eps) per output channel, (b - rm) * g / sqrt(rv + eps) + beta.

    Args:
        conv_w: the convolution's weight (output channels first; second with transpose).
        conv_b: its bias or None.
        bn_rm, bn_rv: the batch norm's running mean and variance.
        bn_eps: its eps.
        bn_w, bn_b: its affine weight and bias, or None.
        transpose: conv_w is a transposed convolution's weight.

    Returns:
        (weight, bias) Parameters."""
    rest = [1] * (conv_w.dim() - 2)
    shape = [1, -1] + rest if transpose else [-1, 1] + rest
    return _fused(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, shape, None)


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps: float, bn_w, bn_b) -> tuple:
    """The weight and bias of one Linear equal to a Linear followed by an eval-mode batch norm.

    Args:
        linear_w: the Linear's (out, in) weight.
        linear_b: its bias or None.
        bn_rm, bn_rv, bn_eps, bn_w, bn_b: the batch norm's statistics, eps and affine parameters.

    Returns:
        (weight, bias) Parameters."""
    if bn_w is None or bn_b is None:
        raise FgradValueError("fuse_linear_bn_weights needs the batch norm's affine weight and bias "
                              "(bn_w, bn_b), got None")
    return _fused(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, None, -1)


def _check_eval(a, bn) -> None:
    if a.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")


def fuse_conv_bn_eval(conv, bn, transpose: bool = False):
    """A new convolution (a deep copy of `conv`) equal to conv followed by bn, both in eval mode.

    Args:
        conv: a Conv module.
        bn: a BatchNorm module with running statistics.
        transpose: conv is a transposed convolution.

    Returns:
        The fused convolution.

    Raises:
        AssertionError: a module in training mode, or bn without running statistics."""
    _check_eval(conv, bn)
    fused = copy.deepcopy(conv)
    fused.weight, fused.bias = fuse_conv_bn_weights(fused.weight, fused.bias, bn.running_mean,
                                                    bn.running_var, bn.eps, bn.weight, bn.bias, transpose)
    return fused


def fuse_linear_bn_eval(linear, bn):
    """A new Linear (a deep copy of `linear`) equal to linear followed by bn, both in eval mode.

    Args:
        linear: a Linear module.
        bn: a BatchNorm module with running statistics, bn.num_features equal to
            linear.out_features or 1.

    Returns:
        The fused Linear.

    Raises:
        AssertionError: a module in training mode, mismatched features, or no running statistics."""
    _check_eval(linear, bn)
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError(f"To fuse, linear.out_features == bn.num_features or bn.num_features == 1, got "
                             f"linear.out_features={linear.out_features} and bn.num_features={bn.num_features}")
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(fused.weight, fused.bias, bn.running_mean,
                                                      bn.running_var, bn.eps, bn.weight, bn.bias)
    return fused


def skip_init(module_cls, *args, **kwargs):
    """An instance of module_cls whose parameters are left uninitialised: as PyTorch's, the
    default generator is not advanced (fgrad builds the module normally and then restores the
    generator, so the values are those of an initialisation the stream never saw).

    Args:
        module_cls: a Module class whose constructor takes `device`.
        *args, **kwargs: the constructor's arguments.

    Returns:
        The module.

    Raises:
        RuntimeError: module_cls is not a Module class, or takes no `device` argument."""
    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise FgradRuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise FgradRuntimeError("Module must support a 'device' arg to skip initialization")
    state = _random.get_rng_state()
    try:
        return module_cls(*args, **kwargs)
    finally:
        _random.set_rng_state(state)


def clip_grad_value_(parameters, clip_value: float) -> None:
    """Clamp every gradient element to [-clip_value, clip_value] in place."""
    c = float(clip_value)
    for p in _params(parameters):
        if p._grad is not None:
            np.clip(p._grad._value, -c, c, out=p._grad._value)
            p._grad._vbox[0] += 1


def parameters_to_vector(parameters):
    """One 1-D tensor holding every parameter (differentiable, like PyTorch's)."""
    return T.cat([p.reshape(-1) for p in _params(parameters)])


def vector_to_parameters(vec, parameters) -> None:
    """Copy slices of the 1-D tensor `vec` into the parameters, in order."""
    start = 0
    with no_grad():
        for p in _params(parameters):
            n = p.numel()
            p.copy_(vec[start:start + n].reshape(tuple(p.shape)))
            start += n
    if start != vec.numel():
        raise FgradValueError(f"vector_to_parameters: the vector has {vec.numel()} elements but the "
                         f"parameters hold {start}")
