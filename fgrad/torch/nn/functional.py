"""fgrad.torch.nn.functional: PyTorch's torch.nn.functional on fgrad's primitives.

Every function accepts Tensors (results are Tensors with a grad_fn when an input requires
grad) and plain arrays or tracers (results are arrays or tracers), so the same model code
runs under `loss.backward()` and under `fgrad.grad`/`jvp`/`hessian`/`vmap`.
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ... import numpy as fnp
from ...core.errors import FgradRuntimeError, FgradValueError
from ...core.trace import _state, aval_of
from ... import lax
from ...extend.numpy import cast
from ...extend import lax as xlax
from ...extend import nn as nnops
from ...extend.nn import nll as _nll
from ...extend.lax import reshape, transpose
from .._tensor._boundary import call, replayable
from .._tensor.tensor import _EMPTY, Tensor, _tensor_bind, node_class, wrap
from .parameter import Parameter
from .._tensor._scalar_ops import add_scalar, div_scalar, mul_scalar
from ._util import (
    arr,
    dtype,
    float_input,
    on_tensors,
    reduce_loss,
    reduction_mode,
    same_dtype,
    shape,
    softmax_dim,
    torch_call,
    torch_op,
    update_running,
    val,
)

__all__ = ["relu", "softplus", "sigmoid", "tanh", "softmax", "log_softmax", "cross_entropy", "nll_loss",
           "mse_loss", "l1_loss", "dropout", "linear", "bilinear",
           "batch_norm", "flatten", "leaky_relu", "one_hot"]


_val, _arr, _shape, _dtype, _float_input, _same_dtype = val, arr, shape, dtype, float_input, same_dtype
_RELU, _LOGISTIC, _TANH, _SOFTPLUS = lax.relu_p, lax.logistic_p, lax.tanh_p, lax.softplus_p
_LOG_SOFTMAX, _LINEAR = lax.log_softmax_p, lax.linear_p


def _checked(prim, args, params):
    """A single-primitive torch op on Tensors (the facade's fast path, one node named after
    the primitive), after the primitive's shape/dtype rule as fgrad.ops' _checked_bind."""
    prim.abstract_eval(*[aval_of(a._value if isinstance(a, Tensor) else a) for a in args], **params)
    return _tensor_bind(prim, args, params)


# --- activations ---------------------------------------------------------------------------
# relu, sigmoid, tanh and softplus are one primitive each, whose node has PyTorch's name
# (ReluBackward0, ...): on a Tensor the facade binds it directly (the cheapest path).

def relu(input, inplace: bool = False):
    """max(x, 0); relu'(0) = 0. `inplace` is accepted for PyTorch compatibility (the
    result is a new tensor)."""
    if isinstance(input, Tensor):
        _float_input("relu", input)
        return _tensor_bind(_RELU, (input,), _EMPTY)
    input = _arr(input, "relu")
    _float_input("relu", input)
    return nnops.relu(input)


@torch_op("LeakyReluBackward0")
def leaky_relu(input, negative_slope: float = 0.01, inplace: bool = False):
    """x for x > 0, negative_slope * x otherwise; the derivative at 0 is negative_slope and
    every second derivative 0 (PyTorch's)."""
    input = _arr(input, "leaky_relu")
    return _activations._leaky(input, negative_slope)


def sigmoid(input):
    """1 / (1 + exp(-input)), element-wise (PyTorch's F.sigmoid; also for fgrad.numpy arrays).

    Args:
        input: a floating-point Tensor.

    Returns:
        A Tensor of input's shape (grad_fn SigmoidBackward0).
    """
    if isinstance(input, Tensor):
        _float_input("sigmoid", input)
        return _tensor_bind(_LOGISTIC, (input,), _EMPTY)
    input = _arr(input, "sigmoid")
    _float_input("sigmoid", input)
    return xlax.logistic(input)


def softplus(input, beta: float = 1.0, threshold: float = 20.0):
    """log(1 + exp(beta x)) / beta, linear where beta x > threshold (PyTorch's definition):
    the softplus primitive (fgrad.ops.nn.softplus), finite at any magnitude and exact to every
    derivative order at 0; at beta x == threshold, derivatives of order >= 2 are 0 as in PyTorch."""
    if isinstance(input, Tensor):
        _float_input("softplus", input)
        return _tensor_bind(_SOFTPLUS, (input,), {"beta": float(beta), "threshold": float(threshold)})
    input = _arr(input, "softplus")
    _float_input("softplus", input)
    return nnops.softplus(input, beta, threshold)


def tanh(input):
    """The hyperbolic tangent, element-wise (PyTorch's F.tanh; also for fgrad.numpy arrays).

    Args:
        input: a floating-point Tensor.

    Returns:
        A Tensor of input's shape.
    """
    if isinstance(input, Tensor):
        _float_input("tanh", input)
        return _tensor_bind(_TANH, (input,), _EMPTY)
    input = _arr(input, "tanh")
    _float_input("tanh", input)
    return xlax.tanh(input)


_softmax_dim = softmax_dim


def _as_float(name, x, dtype):
    x = _arr(x, name)
    if dtype is not None:
        x = cast(x, np.dtype(getattr(dtype, "_np", dtype)))
    _float_input(name, x)
    return x


def _log_softmax_axis(x, dim) -> int:
    nd = len(_shape(x))
    return int(_softmax_dim("log_softmax", nd, dim)) % max(nd, 1) if nd else 0


def log_softmax(input, dim=None, _stacklevel: int = 3, dtype=None):
    """log(softmax(x)) along `dim`, computed stably."""
    if isinstance(input, Tensor) and dtype is None:
        _float_input("log_softmax", input)
        return _tensor_bind(_LOG_SOFTMAX, (input,), {"axis": _log_softmax_axis(input, dim)})
    if isinstance(input, Tensor):  # PyTorch casts first: a ToCopyBackward0 node below
        input = input.to(dtype)
        _float_input("log_softmax", input)
        return _tensor_bind(_LOG_SOFTMAX, (input,), {"axis": _log_softmax_axis(input, dim)})
    input = _as_float("log_softmax", input, dtype)
    return nnops.log_softmax(input, _softmax_dim("log_softmax", len(_shape(input)), dim))


def softmax(input, dim=None, _stacklevel: int = 3, dtype=None):
    """exp(input) normalised to sum 1 along `dim` (PyTorch's F.softmax).

    Args:
        input: a Tensor.
        dim: the axis (None: PyTorch's legacy choice, with its warning).
        _stacklevel: accepted for PyTorch's signature.
        dtype: cast input to this dtype first.

    Returns:
        A Tensor of input's shape.
    """
    if isinstance(input, Tensor) and dtype is not None:  # PyTorch casts first (ToCopyBackward0)
        input = input.to(dtype)
        dtype = None
    return torch_call("SoftmaxBackward0", _softmax, (input, dim, dtype))


@replayable
def _softmax(input, dim, dtype):
    input = _as_float("softmax", input, dtype)
    return nnops.softmax(input, _softmax_dim("softmax", len(_shape(input)), dim))


# --- losses ----------------------------------------------------------------------------------

_reduction = reduction_mode


def cross_entropy(input, target, weight=None, size_average=None, ignore_index: int = -100,
                  reduce=None, reduction: str = "mean", label_smoothing: float = 0.0):
    """PyTorch's cross_entropy: `input` holds logits [N, C, ...] (or [C]); `target` holds
    class indices [N, ...] or class probabilities shaped like `input`. On Tensors, as
    PyTorch's graph: NllLossBackward0 over LogSoftmaxBackward0."""
    reduction = _reduction(size_average, reduce, reduction)
    if isinstance(input, Tensor):
        _float_input("cross_entropy", input)
        if not label_smoothing and not _is_prob_target(target):
            nd = len(input._value.shape)
            logp = _tensor_bind(_LOG_SOFTMAX, (input,), {"axis": 1 if nd > 1 else 0})
            return _nll_op(logp, target, weight, ignore_index, reduction, "cross_entropy")
        return _composed_cross_entropy(input, target, weight, ignore_index, reduction, float(label_smoothing))
    input = _arr(input, "cross_entropy")
    _float_input("cross_entropy", input)
    return nnops.cross_entropy(input, target, weight, ignore_index, reduction, label_smoothing)


def _composed_cross_entropy(input, target, weight, ignore_index, reduction, label_smoothing):
    """cross_entropy on a Tensor with probability targets or label smoothing, as PyTorch's
    composition of torch ops: probabilities give the negated sum of log_softmax(x) * target
    (times the class weights), divided by the number of rows for 'mean' (DivBackward1 of
    NegBackward0 of SumBackward0 ...); label smoothing adds the smoothing term to nll_loss
    (AddBackward0 of two MulBackward1: (1 - ε) nll and ε / C times the masked negated sum
    of log_softmax(x))."""
    if not 0.0 <= label_smoothing <= 1.0:
        raise FgradValueError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if reduction not in ("mean", "sum", "none"):
        raise FgradValueError(f"{reduction} is not a valid value for reduction")
    class_dim = 0 if input.dim() == 1 else 1
    n = input.shape[class_dim]
    if weight is not None:
        weight = _as_tensor(weight)
        if weight.dim() != 1 or weight.numel() != n:
            raise FgradRuntimeError(f"cross_entropy: weight tensor should be defined either for all {n} classes or no "
                                    f"classes but got weight tensor of shape: {list(weight.shape)}")
        if input.dim() > 1:
            weight = weight.view([n if d == class_dim else 1 for d in range(input.dim())])
    logp = _tensor_bind(_LOG_SOFTMAX, (input,), {"axis": class_dim})
    if _is_prob_target(target):
        target = _as_tensor(target)
        if tuple(target.shape) != tuple(input.shape):
            raise FgradValueError(f"cross_entropy: probability targets of shape {list(target.shape)} must match the "
                                  f"input's shape {list(input.shape)}")
        if label_smoothing > 0.0:
            target = add_scalar(mul_scalar(target, 1 - label_smoothing), label_smoothing / n)
        prod = logp * target if weight is None else logp * target * weight
        if reduction == "mean":
            if not logp.numel():
                return -prod.sum() * float("nan")
            return div_scalar(-prod.sum(), logp.numel() // n)
        return -prod.sum() if reduction == "sum" else -prod.sum(class_dim)
    target = _as_tensor(target)
    nll = _nll_op(logp, target, None if weight is None else weight.reshape(-1), ignore_index, reduction,
                  "cross_entropy")
    ignore = target == ignore_index
    smooth = -logp.sum(class_dim) if weight is None else -(logp * weight).sum(class_dim)
    smooth.masked_fill_(ignore, 0.0)
    if reduction == "mean":
        if weight is None:
            ret = smooth.sum() / (~ignore).sum()
        else:
            ret = smooth.sum() / weight.reshape(-1).gather(0, target.masked_select(~ignore).flatten()).sum()
    else:
        ret = smooth.sum() if reduction == "sum" else smooth
    return mul_scalar(nll, 1 - label_smoothing) + mul_scalar(ret, label_smoothing / n)


def _as_tensor(x):
    return x if isinstance(x, Tensor) else wrap(_arr(x, "cross_entropy"))


def _is_prob_target(target) -> bool:
    v = _val(target)
    return getattr(v, "dtype", np.dtype(np.int64)).kind in "fc"


def _nll_op(logp, target, weight, ignore_index, reduction, name):
    """nll_loss on a Tensor of log-probabilities: one NllLossBackward0 node over it (the target
    and the class weights are constants of the op, as in PyTorch's graph)."""
    t, w = _val(target), _val(weight)
    nd = len(logp._value.shape)
    if type(t) is np.ndarray and t.dtype.kind in "iu" and logp._value.size:
        # (checked here: the op's computation may be taped, and a tape sees no values)
        nnops.check_targets(t, logp._value.shape[1 if nd > 1 else 0], ignore_index)
    node = "NllLossBackward0" if nd <= 2 else "NllLoss2DBackward0"
    out_shape = None
    if nd == 3 or nd > 4:
        # PyTorch's nll_loss_nd: nll_loss2d of the [N, C, 1, -1] view (viewed back for 'none')
        s = logp._value.shape
        if logp._value.size and getattr(t, "shape", ())[1:] == s[2:]:
            logp, t = logp.contiguous().view(s[0], s[1], 1, -1), fnp.reshape(t, (s[0], 1, -1))
            out_shape = (s[0],) + tuple(s[2:]) if reduction == "none" else None
        else:
            node = "NllLossBackward0"
    if name == "nll_loss":
        out = call(node, _nll_values, (logp, t, w, ignore_index, reduction))
    else:  # cross_entropy's log_softmax is already the input: the rest of it (its messages too)
        out = call(node, _nll_of_log_softmax, (logp, t, w, ignore_index, reduction, name))
    return out if out_shape is None else out.view(out_shape)


@replayable
def _nll_values(lp, target, weight, ignore_index, reduction):
    return nnops.nll_loss(lp, target, weight, ignore_index, reduction)


@replayable
def _nll_of_log_softmax(lp, target, weight, ignore_index, reduction, name):
    return _nll(lp, target, weight, ignore_index, reduction, 0.0, name)


def nll_loss(input, target, weight=None, size_average=None, ignore_index: int = -100,
             reduce=None, reduction: str = "mean"):
    """Negative log-likelihood of log-probabilities `input` [N, C, ...] at class indices."""
    reduction = _reduction(size_average, reduce, reduction)
    if isinstance(input, Tensor):
        _float_input("nll_loss", input)
        return _nll_op(input, target, weight, ignore_index, reduction, "nll_loss")
    input = _arr(input, "nll_loss")
    _float_input("nll_loss", input)
    return nnops.nll_loss(input, target, weight, ignore_index, reduction)


def _pointwise_loss(name, input, target):
    if _shape(input) != _shape(target):
        warnings.warn(f"Using a target size ({_shape(target)}) that is different to the input size "
                      f"({_shape(input)}). This will likely lead to incorrect results due to "
                      "broadcasting. Please ensure they have the same size.", UserWarning,
                      stacklevel=3)


def mse_loss(input, target, size_average=None, reduce=None, reduction: str = "mean"):
    """Mean squared error (input - target)**2, reduced."""
    input, target = _arr(input, "mse_loss"), _arr(target, "mse_loss")
    _pointwise_loss("mse_loss", input, target)
    return torch_call("MseLossBackward0", _mse, (input, target), {"reduction": _reduction(size_average, reduce,
                                                                                            reduction)})


@replayable
def _mse(input, target, reduction):
    return reduce_loss("mse_loss", fnp.square(fnp.subtract(input, target)), reduction)


@on_tensors
def l1_loss(input, target, size_average=None, reduce=None, reduction: str = "mean"):
    """Mean absolute error |input - target|, reduced; as PyTorch's graph, a composition of
    torch ops (SubBackward0, AbsBackward0, then MeanBackward0 or SumBackward0)."""
    reduction = _reduction(size_average, reduce, reduction)
    _pointwise_loss("l1_loss", input, target)
    return _reduced("l1_loss", (input - target).abs(), reduction)


def one_hot(tensor, num_classes: int = -1):
    """Integer class indices -> int64 one-hot rows (not differentiable)."""
    v = np.asarray(_val(tensor))
    if v.dtype.kind not in "iu":
        raise FgradRuntimeError("one_hot is only applicable to index tensor (an integer dtype)")
    n = int(v.max()) + 1 if num_classes == -1 else int(num_classes)
    out = (v[..., None] == np.arange(n)).astype(np.int64)
    return _wrap(out) if isinstance(tensor, Tensor) else out


# --- layers ----------------------------------------------------------------------------------

def linear(input, weight, bias=None):
    """input @ weight.T + bias, with weight [out, in] (PyTorch's layout). On Tensors the graph
    is PyTorch's: for a 2-D input AddmmBackward0 over (bias, input, TBackward0 of weight)
    (MmBackward0 without bias); other ranks view the input as 2-D around it."""
    input, weight = _arr(input, "linear"), _arr(weight, "linear")
    xs, xd, ws, wd = _shape(input), _dtype(input), _shape(weight), _dtype(weight)
    if len(ws) != 2 or not xs or xs[-1] != ws[1]:
        raise FgradRuntimeError(f"linear: mat1 and mat2 shapes cannot be multiplied (input shape {xs}, "
                           f"weight shape {ws}: the input's last dimension must equal weight.shape[1])")
    if bias is not None:
        bs, bd = _shape(bias), _dtype(bias)
        if xd != wd or bd != wd:
            _same_dtype("linear", input, weight, bias)
        if bs != (ws[0],):
            raise FgradRuntimeError(f"linear: bias of shape {bs} does not match weight shape {ws}")
    elif xd != wd:
        _same_dtype("linear", input, weight)
    if not (isinstance(input, Tensor) or isinstance(weight, Tensor) or isinstance(bias, Tensor)):
        return nnops.linear(input, weight, bias)
    if not _grad_needed(input, weight, bias):  # no graph: one primitive on the values
        if bias is not None:
            return _tensor_bind(_LINEAR, (input, weight, bias), _EMPTY)
        return call("MmBackward0", nnops.linear, (input, weight))
    # (an exact Tensor's t() is TBackward0's transpose, bound directly; a subclass may define its own)
    wt = _tensor_bind(lax.transpose_p, (weight,), _T_PARAMS, _T_NODE) if type(weight) in _PLAIN_WEIGHTS \
        else weight.t() if isinstance(weight, Tensor) else weight.T
    if len(xs) == 1 and bias is None and isinstance(input, Tensor):
        # (PyTorch's matmul of a vector: a one-row matrix product, its row squeezed in place)
        return call("MmBackward0", _mm_t, (input.unsqueeze(0), wt)).squeeze_(0)
    if len(xs) == 2:
        if bias is None:
            return call("MmBackward0", _mm_t, (input, wt))
        if isinstance(bias, Tensor) and isinstance(input, Tensor) and isinstance(wt, Tensor):
            # (the training path: addmm is one primitive over the op's operands in order, so
            # it binds directly, its node of the op's class)
            return _tensor_bind(lax.addmm_p, (bias, input, wt), _EMPTY, _ADDMM)
        return call("AddmmBackward0", _addmm_t, (bias, input, wt))
    x2 = input.reshape(-1, xs[-1]) if isinstance(input, Tensor) else reshape(input, (-1, xs[-1]))
    if bias is None:
        out = call("MmBackward0", _mm_t, (x2, wt))
        return call("UnsafeViewBackward0", reshape, (out, xs[:-1] + (ws[0],)))
    return call("AddmmBackward0", _addmm_t, (bias, x2, wt)).view(*xs[:-1], ws[0])


_ADDMM = node_class("AddmmBackward0")
_T_NODE, _T_PARAMS = node_class("TBackward0"), {"permutation": (1, 0)}
_PLAIN_WEIGHTS = (Tensor, Parameter)  # (exact types: a subclass may define its own t())


def _grad_needed(*xs) -> bool:
    return _state.grad_enabled and any(isinstance(x, Tensor) and x._requires_grad for x in xs)


def _mm_t(x, wt):
    return nnops.linear(x, transpose(wt, (1, 0)))


def _addmm_t(b, x, wt):
    # one primitive over the op's operands in order: the op's node is addmm's own (the same
    # GEMM as linear's, wt being the weight's transposed view)
    return lax.addmm_p.bind(b, x, wt)


@on_tensors
def bilinear(input1, input2, weight, bias=None):
    """y[..., o] = sum_ij input1[..., i] weight[o, i, j] input2[..., j] + bias[o]. As PyTorch's
    graph: both inputs viewed as 2-D, one TrilinearBackward0 node over (input1, weight,
    input2), the result viewed back (ViewBackward0) and the bias added (AddBackward0)."""
    s1, s2, ws = tuple(input1.shape), tuple(input2.shape), tuple(weight.shape)
    if len(s1) != len(s2):
        raise FgradRuntimeError(f"bilinear(): input dimensions do not match: got {len(s1)} and {len(s2)}")
    if s1[:-1] != s2[:-1]:
        raise FgradRuntimeError(f"bilinear(): input batch dimensions do not match: got {list(s1)} and {list(s2)}")
    if len(ws) != 3 or not s1 or s1[-1] != ws[1] or s2[-1] != ws[2]:
        raise FgradRuntimeError(f"bilinear(): weight of size {list(ws)} does not fit inputs of sizes {list(s1)} and "
                                f"{list(s2)} (expected [out, {s1[-1] if s1 else '?'}, {s2[-1] if s2 else '?'}])")
    if bias is not None and tuple(bias.shape) != (ws[0],):
        raise FgradRuntimeError(f"bilinear(): bias size does not match weight size: got {tuple(bias.shape)[-1:]} "
                                f"but expected {ws[0]}")
    y = call("TrilinearBackward0", _trilinear, (input1.reshape(-1, s1[-1]), weight, input2.reshape(-1, s2[-1])))
    y = y.view(*s1[:-1], ws[0])
    return y if bias is None else y + bias


def _trilinear(x1, w, x2):
    return fnp.einsum("bi,oij,bj->bo", x1, w, x2)


def flatten(input, start_dim: int = 0, end_dim: int = -1):
    """`input` with dimensions start_dim..end_dim merged into one (PyTorch's torch.flatten).

    Args:
        input: a Tensor.
        start_dim: the first dimension merged.
        end_dim: the last dimension merged.

    Returns:
        The flattened Tensor.
    """
    input = _arr(input, "flatten")
    if isinstance(input, Tensor):
        return input.flatten(start_dim, end_dim)
    shape = _shape(input)
    if not shape:
        return reshape(input, (1,))
    nd = len(shape)
    s, e = start_dim % nd, end_dim % nd
    if s > e:
        raise FgradRuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    return reshape(input, shape[:s] + (int(np.prod(shape[s:e + 1], dtype=np.int64)),) + shape[e + 1:])


def dropout(input, p: float = 0.5, training: bool = True, inplace: bool = False) -> Any:
    """Zero each element with probability p and scale the rest by 1/(1-p) (when training).
    The mask is torch's for the same seed (`bernoulli_(1 - p)` on the default generator)."""
    if not 0.0 <= p <= 1.0:
        raise FgradValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    return _spatial._dropout(_arr(input, "dropout"), p, training, feature=False, alpha=False)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5):
    """Normalise over every axis but 1 (channels): in training with batch statistics (and
    running_mean/running_var, when given, updated in place with momentum); in eval with the
    running statistics. On Tensors one NativeBatchNormBackward0 node over (input, weight, bias)."""
    input = _arr(input, "batch_norm")
    _float_input("batch_norm", input)
    shape = _shape(input)
    if len(shape) < 2:
        raise FgradValueError(f"batch_norm: expected an input with a channel axis ([N, C, ...]), got "
                         f"shape {shape}")
    axes = (0,) + tuple(range(2, len(shape)))
    n = int(np.prod([shape[a] for a in axes]))
    if training:
        if n <= 1:
            raise FgradValueError(f"Expected more than 1 value per channel when training, got input size "
                             f"{list(shape)}")
        rm = rv = None
    else:
        if running_mean is None or running_var is None:
            raise FgradValueError("batch_norm: running_mean and running_var are needed when not training")
        rm, rv = _val(running_mean), _val(running_var)
    # the running statistics are constants of the op (PyTorch's graph has no edge to them)
    y, mean, var = torch_call("NativeBatchNormBackward0", _batch_norm, (input, weight, bias),
                              {"rm": rm, "rv": rv, "training": training, "eps": eps}, (0, 1, 2))
    if training and (running_mean is not None or running_var is not None):
        _update_running(running_mean, running_var, _val(mean), _val(var), momentum, n)
    return y


def _batch_norm(input, weight, bias, rm, rv, training, eps):
    """(y, batch mean, batch biased variance) of batch_norm over plain values (the statistics
    only in training, for the running update outside)."""
    shape = _shape(input)
    axes = (0,) + tuple(range(2, len(shape)))
    dt = _dtype(input)
    bshape = tuple(d if i == 1 else 1 for i, d in enumerate(shape))
    if training:
        mean = fnp.mean(input, axis=axes, keepdims=True)
        centered = fnp.subtract(input, mean)
        var = fnp.mean(fnp.square(centered), axis=axes, keepdims=True)
    else:
        mean = reshape(_cast_like(rm, dt), bshape)
        var = reshape(_cast_like(rv, dt), bshape)
        centered = fnp.subtract(input, mean)
    inv = xlax.div(xlax.const(var, 1.0), xlax.sqrt(xlax.add(var, xlax.const(var, eps))))
    y = fnp.multiply(centered, inv)
    if weight is not None:
        y = fnp.multiply(y, reshape(weight, bshape))
    if bias is not None:
        y = fnp.add(y, reshape(bias, bshape))
    return y, mean, var


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
from ._losses import _reduced  # noqa: E402  (l1_loss's reduction, as the other composed losses')
from ._normalization import *  # noqa: E402,F401,F403
from ._pool_functional import *  # noqa: E402,F401,F403
from ._resample import *  # noqa: E402,F401,F403
from ._spatial import *  # noqa: E402,F401,F403

__all__ += _activations.__all__ + _losses.__all__ + _normalization.__all__
__all__ += _conv_functional.__all__ + _pool_functional.__all__ + _spatial.__all__ + _resample.__all__

# attention (scaled_dot_product_attention, multi_head_attention_forward)
from . import _attention_functional  # noqa: E402
from ._attention_functional import *  # noqa: E402,F401,F403
from .._tensor.tensor import wrap as _wrap

__all__ += _attention_functional.__all__

# in-place activations, *_with_indices, margin losses over classes, gumbel_softmax, and the
# nn.functional names of torch's top-level functions
from . import _functional_more  # noqa: E402
from ._functional_more import *  # noqa: E402,F401,F403

__all__ += _functional_more.__all__

# 3-D pooling: max with indices, average, power-average, adaptive max, unpooling
from . import _pool3d  # noqa: E402
from ._pool3d import *  # noqa: E402,F401,F403

__all__ += _pool3d.__all__

# fractional max pooling (torch's random window placement)
from . import _fractional  # noqa: E402
from ._fractional import *  # noqa: E402,F401,F403

__all__ += _fractional.__all__
