"""Activation functions of fgrad.torch.nn.functional beyond relu/sigmoid/tanh/softplus: each is a
composition of fgrad ops (so every derivative order works), and each piecewise one takes
PyTorch's branch at its switch points, so first derivatives at the kinks equal PyTorch's
(e.g. hardtanh'(at a bound) = 0, elu'(0) = alpha, hardswish'(-3) = 0). On Tensors each is
one torch op (one node with PyTorch's grad_fn name, `torch_op`) over that composition."""
from __future__ import annotations

import math

import numpy as np

from ... import numpy as fnp
from ...core.errors import FgradRuntimeError, FgradValueError
from ...extend import lax as xlax
from ...extend import nn as nnops
from .._tensor.creation import _gen
from .._tensor.tensor import Tensor
from ._util import arr, dtype, float_input, on_tensors, shape, softmax_dim, torch_call, torch_op, val


def _float(name: str, x):
    x = arr(x, name)
    float_input(name, x)
    return x


@torch_op("EluBackward0")
def elu(input, alpha: float = 1.0, inplace: bool = False):
    """x for x > 0, alpha * (exp(x) - 1) otherwise."""
    x = _float("elu", input)
    return fnp.where(fnp.greater(x, 0), x, fnp.multiply(fnp.expm1(x), alpha))


@torch_op("EluBackward0")
def selu(input, inplace: bool = False):
    """scale * elu(x, alpha) with the self-normalising constants."""
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    return fnp.multiply(elu(input, alpha), scale)


@torch_op("CeluBackward0")
def celu(input, alpha: float = 1.0, inplace: bool = False):
    """x for x > 0, alpha * (exp(x / alpha) - 1) otherwise."""
    if alpha == 0:
        raise FgradRuntimeError("ZeroDivisionError: celu's alpha must not be 0")
    x = _float("celu", input)
    return fnp.where(fnp.greater(x, 0), x, fnp.multiply(fnp.expm1(fnp.divide(x, alpha)), alpha))


@torch_op("GeluBackward0")
def gelu(input, approximate: str = "none"):
    """x * Phi(x) (the normal CDF), or PyTorch's tanh approximation with approximate='tanh'."""
    x = _float("gelu", input)
    if approximate == "none":
        return fnp.multiply(fnp.multiply(x, 0.5), fnp.add(xlax.erf(fnp.multiply(x, 1 / math.sqrt(2))), 1.0))
    if approximate == "tanh":
        inner = fnp.multiply(fnp.add(x, fnp.multiply(fnp.power(x, 3), 0.044715)), math.sqrt(2 / math.pi))
        return fnp.multiply(fnp.multiply(x, 0.5), fnp.add(fnp.tanh(inner), 1.0))
    raise FgradRuntimeError(f"approximate argument must be either none or tanh, got {approximate!r}")


@torch_op("SiluBackward0")
def silu(input, inplace: bool = False):
    """x * sigmoid(x) (swish)."""
    x = _float("silu", input)
    return fnp.multiply(x, xlax.logistic(x))


@torch_op("MishBackward0")
def mish(input, inplace: bool = False):
    """x * tanh(softplus(x))."""
    x = _float("mish", input)
    return fnp.multiply(x, fnp.tanh(nnops.softplus(x, 1.0, 20.0)))


@torch_op("HardtanhBackward0")
def hardtanh(input, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False):
    """x clipped to [min_val, max_val]; the gradient is 0 at and beyond the bounds."""
    if min_val > max_val:
        raise FgradValueError("min_val cannot be greater than max_val")
    x = arr(input, "hardtanh")
    inner = fnp.where(fnp.greater_equal(x, max_val), fnp.asarray(max_val, dtype(x)), x)
    return fnp.where(fnp.less_equal(x, min_val), fnp.asarray(min_val, dtype(x)), inner)


@torch_op("HardtanhBackward0")
def relu6(input, inplace: bool = False):
    return hardtanh(input, 0.0, 6.0)


@torch_op("HardsigmoidBackward0")
def hardsigmoid(input, inplace: bool = False):
    """relu6(x + 3) / 6; the gradient is 1/6 strictly inside (-3, 3), else 0."""
    x = _float("hardsigmoid", input)
    mid = fnp.add(fnp.divide(x, 6.0), 0.5)
    return fnp.where(fnp.less_equal(x, -3.0), fnp.zeros_like(x),
                     fnp.where(fnp.greater_equal(x, 3.0), fnp.ones_like(x), mid))


@torch_op("HardswishBackward0")
def hardswish(input, inplace: bool = False):
    """x * relu6(x + 3) / 6; the derivative is 0 at -3 and 1 at 3 (PyTorch's)."""
    x = _float("hardswish", input)
    mid = fnp.divide(fnp.multiply(x, fnp.add(x, 3.0)), 6.0)
    return fnp.where(fnp.less_equal(x, -3.0), fnp.zeros_like(x), fnp.where(fnp.greater_equal(x, 3.0), x, mid))


@torch_op("LogSigmoidBackward0")
def logsigmoid(input):
    """log(sigmoid(x)) = -softplus(-x), finite for any x."""
    x = _float("logsigmoid", input)
    return fnp.negative(nnops.softplus(fnp.negative(x), 1.0, 20.0))


@on_tensors
def softsign(input):
    """x / (1 + |x|), as PyTorch's composition of torch ops (DivBackward0 over AbsBackward0
    and AddBackward0)."""
    x = _float("softsign", input)
    return x / (x.abs() + 1)


@on_tensors
def tanhshrink(input):
    """x - tanh(x), as PyTorch's composition (SubBackward0 over TanhBackward0)."""
    x = _float("tanhshrink", input)
    return x - x.tanh()


@torch_op("SoftshrinkBackward0")
def softshrink(input, lambd: float = 0.5):
    """x - lambd above lambd, x + lambd below -lambd, 0 between (gradient 0 at ±lambd)."""
    if lambd < 0:
        raise FgradRuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    x = _float("softshrink", input)
    return fnp.where(fnp.greater(x, lambd), fnp.subtract(x, lambd),
                     fnp.where(fnp.less(x, -lambd), fnp.add(x, lambd), fnp.zeros_like(x)))


@torch_op("HardshrinkBackward0")
def hardshrink(input, lambd: float = 0.5):
    """x where |x| > lambd, else 0."""
    x = _float("hardshrink", input)
    return fnp.where(fnp.greater(fnp.abs(x), lambd), x, fnp.zeros_like(x))


@torch_op("ThresholdBackward0")
def threshold(input, threshold: float, value: float, inplace: bool = False):
    """x where x > threshold, else value."""
    x = arr(input, "threshold")
    return fnp.where(fnp.greater(x, threshold), x, fnp.asarray(value, dtype(x)))


def prelu(input, weight):
    """x for x > 0, weight * x otherwise; weight has 1 or C (= input.shape[1]) entries. As
    PyTorch, a C-entry weight is first viewed as [C, 1, ...] (a ViewBackward0 on Tensors)."""
    x, w = _float("prelu", input), arr(weight, "prelu")
    n = int(np.prod(shape(w)))
    xs = shape(x)
    if n != 1 and (len(xs) < 2 or xs[1] != n):
        raise FgradRuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = {n} "
                           f"and channel size = {xs[1] if len(xs) > 1 else 1}.")
    ws = (n,) + (1,) * (len(xs) - 2) if n != 1 else ()
    w = w.reshape(ws) if isinstance(w, Tensor) else fnp.reshape(w, ws)
    return torch_call("PreluKernelBackward0", _prelu, (x, w))


def _prelu(x, w):
    n = int(np.prod(shape(w)))
    xs = shape(x)
    w = fnp.reshape(w, (n,) + (1,) * (len(xs) - 2)) if n != 1 else fnp.reshape(w, ())
    return fnp.where(fnp.greater(x, 0), x, fnp.multiply(w, x))


def rrelu(input, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False, inplace: bool = False):
    """Leaky relu with a slope drawn from U(lower, upper) per element when training, the mean
    slope otherwise. On concrete values the slopes are torch's for the same seed (one draw per
    element <= 0, in order, from the default generator); under a trace, where the signs are
    unknown, every element draws one. The draws happen before the torch op (whose function
    runs again for create_graph): the slopes are its constant."""
    x = _float("rrelu", input)
    if training:
        v, dt = val(x), dtype(x)
        lo, hi = float(dt.type(lower)), float(dt.type(upper))  # torch rounds the bounds to opmath
        engine = _gen().engine
        # torch's rrelu loop is compiled without fma: u * (hi - lo) + lo rounded twice
        if isinstance(v, np.ndarray):
            slope = np.ones(v.shape, dt)
            neg = v <= 0
            slope[neg] = (engine.uniform(int(neg.sum())) * (hi - lo) + lo).astype(dt)
            return torch_call("RreluWithNoiseBackward0", _scaled, (x, slope))
        slope = (engine.uniform(math.prod(shape(x))) * (hi - lo) + lo).astype(dt).reshape(shape(x))
    else:
        slope = (lower + upper) / 2
    return torch_call("RreluWithNoiseBackward0", _leaky, (x, slope))


def _scaled(x, slope):
    return fnp.multiply(x, slope)


def _leaky(x, slope):
    return fnp.where(fnp.greater(x, 0), x, fnp.multiply(x, slope))


@torch_op("GluBackward0")
def glu(input, dim: int = -1):
    """a * sigmoid(b), where a and b are the two halves of input along dim."""
    x = _float("glu", input)
    n = shape(x)[dim]
    if n % 2:
        raise FgradRuntimeError(f"Halving dimension must be even, but dimension {dim % len(shape(x))} is size {n}")
    a, b = fnp.split(x, 2, axis=dim)
    return fnp.multiply(a, xlax.logistic(b))


def softmin(input, dim=None, _stacklevel: int = 3, dtype=None):
    """softmax(-x) along dim (as PyTorch's graph: SoftmaxBackward0 over NegBackward0)."""
    x = arr(input, "softmin")
    if dtype is not None:
        x = x.to(dtype) if isinstance(x, Tensor) else fnp.astype(x, np.dtype(getattr(dtype, "dtype", dtype)))
    float_input("softmin", x)
    dim = softmax_dim("softmin", len(shape(x)), dim)
    return torch_call("SoftmaxBackward0", _softmax, (-x if isinstance(x, Tensor) else fnp.negative(x), dim))


def _softmax(x, dim):
    return nnops.softmax(x, dim)


__all__ = ["elu", "selu", "celu", "gelu", "silu", "mish", "hardtanh", "relu6", "hardsigmoid", "hardswish",
           "logsigmoid", "softsign", "tanhshrink", "softshrink", "hardshrink", "threshold", "prelu", "rrelu",
           "glu", "softmin"]
