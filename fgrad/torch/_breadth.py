"""torch's top-level functions that PyTorch also offers in torch.nn.functional or torch.linalg
(under its ATen signatures: positional flags, reductions as integers, `torch.embedding(weight,
indices)`), its deprecated linear-algebra names (cholesky, qr, svd, lu, triangular_solve, ...)
and small runtime queries (finfo, iinfo, warn_always, the deterministic debug mode).

Each is written on fgrad.torch.nn.functional / fgrad.torch.linalg or, for the older
linear-algebra names whose results differ from torch.linalg's (svd's V, lu's 1-based int32
pivots, triangular_solve's argument order), one boundary op over fgrad.numpy.linalg /
fgrad.scipy.linalg named as PyTorch's grad_fn. It sits above nn and linalg in fgrad.torch.
"""
from __future__ import annotations

import functools
import inspect
import math
import os
import threading
import warnings
from typing import Any, Callable, Sequence

import numpy as np

from .. import numpy as fnp
from ..core.errors import FgradRuntimeError, FgradTypeError, FgradValueError
from ..extend.numpy import cast, dtype_of
from ..lax import stop_gradient
from ..scipy import linalg as fsl
from . import amp as _amp
from . import linalg as _linalg
from .nn import functional as F
from .nn._util import aten_norm
from ._tensor import _dtypes as D
from ._tensor import _ops as O
from ._tensor import creation as C
from ._tensor import _ops_breadth
from ._tensor._ops_breadth import unsafe_chunk as _unsafe_chunk
from ._tensor._boundary import call
from ._tensor.anomaly_mode import set_detect_anomaly as _set_detect_anomaly
from ._tensor.grad_mode import is_inference_mode_enabled, no_grad
from ._errors import AcceleratorError, FatalError, OutOfMemoryError
from ._tensor.tensor import Tensor, check_inplace, commit_inplace
from . import runtime as _runtime
from . import sparse as S

_I64 = np.dtype(np.int64)
_REDUCTIONS = {0: "none", 1: "mean", 2: "sum", "none": "none", "mean": "mean", "sum": "sum"}


def _input(name: str, x: Any, arg: str = "input") -> Tensor:
    if not isinstance(x, Tensor):
        raise FgradTypeError(f"torch.{name}(): argument '{arg}' (position 1) must be Tensor, not "
                             f"{type(x).__name__}. Wrap data with fgrad.torch.tensor(...) first.")
    return x


def _reduction(name: str, reduction) -> str:
    """PyTorch's ATen reduction (0 none, 1 mean, 2 sum; the names accepted too) as F's name."""
    try:
        return _REDUCTIONS[reduction]
    except (KeyError, TypeError):
        raise FgradValueError(f"torch.{name}(): reduction must be 0 ('none'), 1 ('mean') or 2 ('sum'), got "
                              f"{reduction!r}") from None


# --- top-level aliases -----------------------------------------------------------------------------
# A row per torch function that IS another module's function under torch's top-level name (same
# signature and arguments, but for keywords torch's form fixes): (torch's name, the module, its
# name there[, the fixed keywords]). Each row becomes one generated function (see _alias), so a
# new alias is a row. Functions whose ATen signature differs from nn.functional's otherwise
# (another argument order, integer reductions, extra flags) are written below.

_ALIASES = (
    # (a dict: keywords fixed for torch's form, left out of its signature)
    ("max_pool1d", F, "max_pool1d", {"return_indices": False}),
    ("max_pool2d", F, "max_pool2d", {"return_indices": False}),
    ("max_pool3d", F, "max_pool3d", {"return_indices": False}),
    ("max_pool1d_with_indices", F, "max_pool1d", {"return_indices": True}),
    ("avg_pool1d", F, "avg_pool1d"),
    ("adaptive_max_pool1d", F, "adaptive_max_pool1d", {"return_indices": True}),
    ("celu", F, "celu", {"inplace": False}),
    ("selu", F, "selu", {"inplace": False}),
    ("threshold", F, "threshold", {"inplace": False}),
    ("conv1d", F, "conv1d"),
    ("conv2d", F, "conv2d"),
    ("conv3d", F, "conv3d"),
    ("conv_transpose1d", F, "conv_transpose1d"),
    ("conv_transpose2d", F, "conv_transpose2d"),
    ("adaptive_avg_pool1d", F, "adaptive_avg_pool1d"),
    ("rms_norm", F, "rms_norm"),
    ("bilinear", F, "bilinear"),
    ("prelu", F, "prelu"),
    ("hardshrink", F, "hardshrink"),
    ("pixel_shuffle", F, "pixel_shuffle"),
    ("pixel_unshuffle", F, "pixel_unshuffle"),
    ("cosine_similarity", F, "cosine_similarity"),
    ("pairwise_distance", F, "pairwise_distance"),
    ("native_channel_shuffle", _ops_breadth, "channel_shuffle"),
)


def _alias(name: str, module: Any, target_name: str, fixed: dict | None = None, tensor_first: bool = True,
           home: str = __name__) -> Callable:
    """The function `name` that is `module.target_name` under another name: the target's
    signature (less the `fixed` keywords) and docstring, headed by what it aliases.

    Args:
        name: the alias's name.
        module: the module holding the target.
        target_name: the target's name there.
        fixed: keywords always passed to the target with these values (torch's form has no
            such parameter: max_pool2d's return_indices, celu's inplace), or None.
        tensor_first: check, as torch's top-level functions do, that the first argument is a
            Tensor (nn.functional's functions also take arrays and tracers).
        home: the module the alias is listed in (its `__module__`).

    Returns:
        The alias.
    """
    target = getattr(module, target_name)
    if fixed:
        alias = _with_fixed(_alias(name, module, target_name, None, tensor_first, home), fixed)
        settings = ", ".join(f"{k}={v!r}" for k, v in fixed.items())
        alias.__doc__ = (f"{_public(module)}.{target_name} with {settings}"
                         f"{'' if name == target_name else ' under the name ' + name}.\n\n"
                         f"{inspect.cleandoc(target.__doc__ or '')}")
        return alias
    where = _public(module)
    if tensor_first:
        first = next(iter(inspect.signature(target).parameters))

        @functools.wraps(target)
        def alias(*args, **kwargs):
            if args:
                _input(name, args[0], first)
            elif first in kwargs:
                _input(name, kwargs[first], first)
            return target(*args, **kwargs)
    else:
        @functools.wraps(target)
        def alias(*args, **kwargs):
            return target(*args, **kwargs)
    alias.__name__ = alias.__qualname__ = name
    alias.__module__ = home
    head = f"The same function as {where}.{name}." if name == target_name else \
        f"{where}.{target_name} under the name {name}."
    alias.__doc__ = f"{head}\n\n{inspect.cleandoc(target.__doc__ or '')}"
    return alias


def _public(module: Any) -> str:
    """The public name of a module of fgrad.torch (its private parts left out:
    fgrad.torch._tensor._ops_breadth's functions are torch's own)."""
    return ".".join(part for part in module.__name__.split(".")[1:] if not part.startswith("_"))


def _with_fixed(alias: Callable, fixed: dict) -> Callable:
    """`alias` with the keywords `fixed` always passed, and left out of its signature."""
    sig = inspect.signature(alias)

    @functools.wraps(alias)
    def fixed_alias(*args, **kwargs):
        return alias(*args, **kwargs, **fixed)
    fixed_alias.__signature__ = sig.replace(parameters=[p for p in sig.parameters.values() if p.name not in fixed])
    return fixed_alias


for _row in _ALIASES:
    globals()[_row[0]] = _alias(*_row)


# --- nn.functional under ATen's signatures -------------------------------------------------------

def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1, padding: Any = 0,
                     output_padding: Any = 0, groups: int = 1, dilation: Any = 1):
    """The transposed 3-D convolution (the gradient of conv3d in its input): each input voxel
    scatters weight-scaled copies of its kernel into the output, `stride` apart, taps
    `dilation` apart, `padding` cropped from both ends, `output_padding` added at the end
    (ConvolutionBackward0).

    Args:
        input: (N, C_in, D, H, W) or (C_in, D, H, W).
        weight: (C_in, C_out / groups, kD, kH, kW).
        bias: (C_out,) or None.
        stride, padding, output_padding, dilation: an int or three.
        groups: channel groups, dividing C_in and C_out.

    Returns:
        A Tensor (N, C_out, D_out, H_out, W_out).
    """
    x = _input("conv_transpose3d", input)
    if x.dim() == 4:  # (an unbatched input: a batch of one, as PyTorch's)
        return O.squeeze(conv_transpose3d(O.unsqueeze(x, 0), weight, bias, stride, padding, output_padding, groups,
                                          dilation), 0)
    unbatched = False
    if x.dim() not in (4, 5) or weight.dim() != 5:
        raise FgradRuntimeError(f"conv_transpose3d: expected a 4-D or 5-D input and a 5-D weight, got {x.dim()}-D and "
                                f"{weight.dim()}-D")
    st, pd = _tuple3("conv_transpose3d", stride, "stride"), _tuple3("conv_transpose3d", padding, "padding")
    op_, dl = _tuple3("conv_transpose3d", output_padding, "output_padding"), _tuple3("conv_transpose3d", dilation,
                                                                                       "dilation")
    cin, cout_g = weight._value.shape[:2]
    c_x = x._value.shape[0 if unbatched else 1]
    if c_x != cin or cin % groups:
        raise FgradRuntimeError(f"conv_transpose3d: Given transposed=1, weight of size {list(weight._value.shape)}, "
                                f"expected input {list(x._value.shape)} to have {cin} channels (divisible by groups="
                                f"{groups}), but got {c_x} channels instead")
    if any(o >= max(s_, d_) for o, s_, d_ in zip(op_, st, dl)):
        raise FgradRuntimeError(f"conv_transpose3d: output padding must be smaller than either stride or dilation, "
                                f"got output_padding={op_}, stride={st}, dilation={dl}")
    k = tuple(weight._value.shape[2:])
    sizes = tuple(x._value.shape[-3:])
    full = tuple((i - 1) * s_ + d_ * (kk - 1) + 1 + o for i, s_, d_, kk, o in zip(sizes, st, dl, k, op_))
    outs = tuple(f - 2 * p_ for f, p_ in zip(full, pd))
    if any(o <= 0 for o in outs):
        raise FgradRuntimeError(f"conv_transpose3d: the output size {outs} is too small")
    args = (x, weight, bias)

    def values(v, w, b=None):
        v = fnp.expand_dims(v, 0) if unbatched else v
        n = fnp.shape(v)[0]
        vg = fnp.reshape(v, (n, groups, cin // groups) + sizes)
        wg = fnp.reshape(w, (groups, cin // groups, cout_g) + k)
        buf = fnp.zeros((n, groups, cout_g) + full, dtype_of(v))
        for a in range(k[0]):
            for b_ in range(k[1]):
                for c in range(k[2]):
                    part = fnp.einsum("ngcxyz,gco->ngoxyz", vg, wg[:, :, :, a, b_, c])
                    idx = (slice(None),) * 3 + tuple(slice(t * d_, t * d_ + s_ * (i - 1) + 1, s_)
                                                     for t, d_, s_, i in zip((a, b_, c), dl, st, sizes))
                    buf = fnp.at_add(buf, idx, part)
        out = fnp.reshape(buf, (n, groups * cout_g) + full)
        out = fnp.getitem(out, (slice(None), slice(None)) + tuple(slice(p_, p_ + o) for p_, o in zip(pd, outs)))
        if b is not None:
            out = fnp.add(out, fnp.reshape(b, (1, -1, 1, 1, 1)))
        return fnp.squeeze(out, 0) if unbatched else out
    return call("ConvolutionBackward0", values, args, operands=(0, 1, 2))


def convolution(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any, padding: Any, dilation: Any,
                transposed: bool, output_padding: Any, groups: int):
    """The general convolution behind conv{1,2,3}d and conv_transpose{1,2}d, chosen by the
    input's spatial dims and `transposed` (every argument positional, as ATen's).

    Args:
        input: (N, C_in, *spatial).
        weight: the kernel.
        bias: (C_out,) or None.
        stride, padding, dilation, output_padding: one int or one per spatial dim.
        transposed: a transposed convolution.
        groups: the channel groups.

    Returns:
        A Tensor.
    """
    x = _input("convolution", input)
    nd = x._value.ndim - 2
    if transposed:
        fns = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: conv_transpose3d}
        if nd not in fns:
            raise FgradRuntimeError(f"convolution(): expected a 3-D, 4-D or 5-D input (batch, channels, spatial), "
                                    f"got {x._value.ndim}-D")
        return fns[nd](x, weight, bias, stride, padding, output_padding, groups, dilation)
    fns = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
    if nd not in fns:
        raise FgradRuntimeError(f"convolution(): expected a 3-D, 4-D or 5-D input (batch, channels, spatial), got "
                                f"{x._value.ndim}-D")
    return fns[nd](x, weight, bias, stride, padding, dilation, groups)


def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor | None, pad: int = 0):
    """A 1-D convolution over time-batch-channel data: input (T, B, C_in), weight (K, C_in,
    C_out), bias (C_out,) -> (T + 2 pad - K + 1, B, C_out).

    Args:
        input: (time, batch, in channels).
        weight: (kernel width, in channels, out channels).
        bias: (out channels,).
        pad: zero padding at both ends of time.

    Returns:
        A Tensor.
    """
    x = _input("conv_tbc", input)
    if x._value.ndim != 3 or weight._value.ndim != 3 or bias._value.ndim != 1:
        raise FgradRuntimeError(f"conv_tbc(): Input must have 3 dims: time, batch, in_channel; weight 3 dims; bias 1 "
                                f"dim (got {x._value.ndim}, {weight._value.ndim}, {bias._value.ndim})")
    if x._value.shape[2] != weight._value.shape[1]:
        raise FgradRuntimeError(f"conv_tbc(): Input dim 2 (input channels) ({x._value.shape[2]}) is not == dim 1 in "
                                f"the weight tensor ({weight._value.shape[1]})")

    def values(v, w, b):  # (PyTorch's one ConvTbcBackward0 node over input, weight and bias)
        out = F.conv1d(fnp.transpose(v, (1, 2, 0)), fnp.transpose(w, (2, 1, 0)), b, 1, pad)
        return fnp.transpose(out, (2, 0, 1))
    return call("ConvTbcBackward0", values, (x, weight, bias), operands=(0, 1, 2))


def _tuple3(name: str, v, what: str, n: int = 3) -> tuple:
    t = tuple(int(a) for a in v) if isinstance(v, (list, tuple)) else (int(v),) * n
    if len(t) == 1:
        t = t * n
    if len(t) != n:
        raise FgradRuntimeError(f"{name}: {what} must be a single int or a tuple of {n} ints, got {v!r}")
    return t


def batch_norm(input: Tensor, weight: Tensor, bias: Tensor | None, running_mean: Tensor | None,
               running_var: Tensor | None, training: bool, momentum: float, eps: float, cudnn_enabled: bool = True):
    """nn.functional.batch_norm under ATen's argument order (weight and bias first; every
    argument positional; cudnn_enabled is ignored on the CPU).

    Args:
        input: (N, C, *).
        weight, bias: (C,) or None.
        running_mean, running_var: (C,) buffers updated in training, or None.
        training: use the batch's statistics (and update the running ones).
        momentum: the running statistics' update factor.
        eps: added to the variance.
        cudnn_enabled: accepted for the signature.

    Returns:
        A Tensor of input's shape.
    """
    return F.batch_norm(_input("batch_norm", input), running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input: Tensor, weight: Tensor, bias: Tensor | None, running_mean: Tensor | None,
                  running_var: Tensor | None, use_input_stats: bool, momentum: float, eps: float,
                  cudnn_enabled: bool = True):
    """nn.functional.instance_norm under ATen's argument order (see batch_norm).

    Args:
        input: (N, C, *).
        weight, bias: (C,) or None.
        running_mean, running_var: (C,) or None.
        use_input_stats: normalise with each instance's statistics.
        momentum: the running statistics' update factor.
        eps: added to the variance.
        cudnn_enabled: accepted for the signature.

    Returns:
        A Tensor of input's shape.
    """
    return F.instance_norm(_input("instance_norm", input), running_mean, running_var, weight, bias, use_input_stats,
                           momentum, eps)


def layer_norm(input: Tensor, normalized_shape: Any, weight: Tensor = None, bias: Tensor | None = None,
               eps: float = 1e-05, cudnn_enable: bool = True):
    """nn.functional.layer_norm (cudnn_enable is accepted and ignored).

    Args:
        input: a Tensor.
        normalized_shape: the trailing dims normalised.
        weight, bias: Tensors of normalized_shape, or None.
        eps: added to the variance.
        cudnn_enable: accepted for the signature.

    Returns:
        A Tensor of input's shape.
    """
    return F.layer_norm(_input("layer_norm", input), normalized_shape, weight, bias, eps)


def group_norm(input: Tensor, num_groups: int, weight: Tensor = None, bias: Tensor | None = None, eps: float = 1e-05,
               cudnn_enabled: bool = True):
    """nn.functional.group_norm (cudnn_enabled is accepted and ignored).

    Args:
        input: (N, C, *).
        num_groups: divides C.
        weight, bias: (C,) or None.
        eps: added to the variance.
        cudnn_enabled: accepted for the signature.

    Returns:
        A Tensor of input's shape.
    """
    return F.group_norm(_input("group_norm", input), num_groups, weight, bias, eps)


def embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1, scale_grad_by_freq: bool = False,
              sparse: bool = False):
    """The rows of `weight` at `indices` (ATen's order: weight first; padding_idx -1 means
    none).

    Args:
        weight: (num_embeddings, dim).
        indices: an integer Tensor.
        padding_idx: a row that gets no gradient, or -1.
        scale_grad_by_freq: scale gradients by the inverse frequency of the indices.
        sparse: accepted (the gradient is dense).

    Returns:
        A Tensor indices.shape + (dim,).
    """
    _input("embedding", weight, "weight")
    return F.embedding(indices, weight, None if padding_idx is None or padding_idx < 0 else padding_idx,
                       scale_grad_by_freq=scale_grad_by_freq)


def embedding_bag(weight: Tensor, indices: Tensor, offsets: Tensor, scale_grad_by_freq: bool = False, mode: int = 0,
                  sparse: bool = False, per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None):
    """ATen's embedding_bag: (output, offset2bag, bag_size, max_indices), the output that of
    nn.functional.embedding_bag (mode 0 sum, 1 mean, 2 max) and the bookkeeping PyTorch's CPU
    kernel returns beside it: each index's bag; each bag's size (zeros in sum mode); and in max
    mode, per bag and feature, the row that gave the maximum (mean mode repeats bag_size, sum
    mode gives zeros).

    Args:
        weight: (num_embeddings, dim).
        indices: a 1-D integer Tensor.
        offsets: a 1-D integer Tensor, where each bag starts in indices.
        scale_grad_by_freq: scale gradients by the inverse frequency of the indices.
        mode: 0 sum, 1 mean, 2 max.
        sparse: accepted (the gradient is dense).
        per_sample_weights: a Tensor of indices' shape (sum mode), or None.
        include_last_offset: offsets has one more entry, the end of the last bag.
        padding_idx: a row left out of every bag, or None.

    Returns:
        A tuple of four Tensors.
    """
    w = _input("embedding_bag", weight, "weight")
    if mode not in (0, 1, 2):
        raise FgradRuntimeError(f"embedding_bag: mode must be 0 (sum), 1 (mean) or 2 (max), got {mode}")
    if indices.dim() != 1 or offsets.dim() != 1:
        raise FgradRuntimeError(f"embedding_bag: expected 1-D indices and offsets, got {indices.dim()}-D and "
                                f"{offsets.dim()}-D")
    pad = None if padding_idx is None or padding_idx < 0 else padding_idx
    out = F.embedding_bag(indices, w, offsets, None, 2.0, scale_grad_by_freq, ("sum", "mean", "max")[mode], sparse,
                          per_sample_weights, include_last_offset, pad)
    idx = np.asarray(indices.detach().numpy()).astype(np.int64)
    offs = np.asarray(offsets.detach().numpy()).astype(np.int64)
    starts = offs[:-1] if include_last_offset else offs
    bags = len(starts)
    where = np.clip(np.searchsorted(starts, np.arange(len(idx)), side="right") - 1, 0, max(bags - 1, 0))
    keep = np.ones(len(idx), bool) if pad is None else idx != pad
    sizes = np.bincount(where[keep], minlength=bags).astype(np.int64)[:bags] if bags else np.zeros(0, np.int64)
    dim = w._value.shape[1]
    if mode == 0:
        bag_size, max_idx = np.zeros(bags, np.int64), np.zeros(bags, np.int64)
    elif mode == 1:
        bag_size, max_idx = sizes, sizes.copy()
    else:
        bag_size = sizes
        wv = np.asarray(w.detach().numpy())
        max_idx = np.zeros((bags, dim), np.int64)
        for b in range(bags):
            rows = idx[(where == b) & keep]
            if len(rows):
                max_idx[b] = rows[np.argmax(wv[rows], axis=0)]
    return out, C.tensor(where.astype(np.int64)), C.tensor(bag_size), C.tensor(max_idx)


def _dropout(name: str, fn, inplace: bool):
    def op(input, p: float, train: bool):
        x = _input(name, input)
        if inplace:
            check_inplace(x)
            return commit_inplace(x, fn(x, p, train))
        return fn(x, p, train)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"torch.{name}(input, p, train): nn.functional's {fn.__name__} (torch's random stream)"
                  + (", written into input" if inplace else "") + ".\n\nArgs:\n    input: a Tensor.\n    p: the "
                  "probability of an element (a channel, for the feature variants) being zeroed.\n    train: apply "
                  "it (else input is returned as it is).\n\nReturns:\n    A Tensor.")
    return op


def _feature(fn1, fn2, fn3):
    """Channel-wise dropout over (N, C, *spatial) for 1 to 3 spatial dims (PyTorch's
    feature_dropout, behind dropout1d/2d/3d)."""
    def run(x, p, train):
        nd = x._value.ndim
        fns = {3: fn1, 4: fn2, 5: fn3}
        if nd not in fns or fns[nd] is None:
            raise FgradRuntimeError(f"feature dropout expects a 3-D to 5-D input (batch, channels, spatial), got "
                                    f"{nd}-D")
        return fns[nd](x, p, train)
    run.__name__ = "feature dropout"
    return run


def _feature_alpha(x, p, train):
    return F.feature_alpha_dropout(x, p, train)


def _plain(fn):
    def run(x, p, train):
        return fn(x, p, train)
    run.__name__ = fn.__name__
    return run


dropout = _dropout("dropout", _plain(F.dropout), False)
dropout_ = _dropout("dropout_", _plain(F.dropout), True)
alpha_dropout = _dropout("alpha_dropout", _plain(F.alpha_dropout), False)
alpha_dropout_ = _dropout("alpha_dropout_", _plain(F.alpha_dropout), True)
feature_alpha_dropout = _dropout("feature_alpha_dropout", _feature_alpha, False)
feature_alpha_dropout_ = _dropout("feature_alpha_dropout_", _feature_alpha, True)
feature_dropout = _dropout("feature_dropout", _feature(F.dropout1d, F.dropout2d, F.dropout3d), False)
feature_dropout_ = _dropout("feature_dropout_", _feature(F.dropout1d, F.dropout2d, F.dropout3d), True)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False, generator: Any = None):
    """nn.functional.rrelu (the slope (lower + upper) / 2 outside training).

    Args:
        input: a Tensor.
        lower, upper: the range of the random negative slope.
        training: draw the slopes (else their mean).
        generator: must be None (the default generator is used).

    Returns:
        A Tensor.
    """
    if generator is not None:
        raise FgradValueError("torch.rrelu(): generator= is not supported; seed the default generator with "
                              "torch.manual_seed instead")
    return F.rrelu(_input("rrelu", input), lower, upper, training)


def pdist(input: Tensor, p: float = 2.0):
    """The p-norm distances between the rows of a 2-D input, for each pair i < j in row-major
    order (PdistBackward0).

    Args:
        input: (N, M).
        p: the norm's order, >= 0.

    Returns:
        A 1-D Tensor of N (N - 1) / 2 distances.
    """
    x = _input("pdist", input)
    if x._value.ndim != 2:
        raise FgradRuntimeError(f"pdist only supports 2D tensors, got: {x._value.ndim}D")
    if p < 0:
        raise FgradRuntimeError("pdist only supports non-negative p values")
    if x._value.dtype.kind != "f":
        raise FgradRuntimeError(f"pdist only supports floating-point dtypes, got {x.dtype}")
    n = x._value.shape[0]
    rows, cols = np.triu_indices(n, 1)

    def values(v):
        d = fnp.subtract(fnp.take(v, rows, axis=0), fnp.take(v, cols, axis=0))
        return fnp.linalg.norm(d, ord=p, axis=-1) if p != 0 else cast(fnp.sum(fnp.not_equal(d, 0), axis=-1),
                                                                      dtype_of(v))
    return call("PdistBackward0", values, (x,))


def kl_div(input: Tensor, target: Tensor, reduction: int | str = 1, *, log_target: bool = False):
    """nn.functional.kl_div with ATen's reduction (0 none, 1 mean, 2 sum).

    Args:
        input: log-probabilities.
        target: probabilities (log-probabilities with log_target).
        reduction: 0 none, 1 mean, 2 sum (or their names).
        log_target: target holds log-probabilities.

    Returns:
        A Tensor: per-element losses (reduction 0) or their mean (1) or sum (2).
    """
    return F.kl_div(_input("kl_div", input), target, reduction=_reduction("kl_div", reduction), log_target=log_target)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor = None,
                                     pos_weight: Tensor | None = None, reduction: int | str = 1):
    """nn.functional.binary_cross_entropy_with_logits with ATen's order (pos_weight before the
    reduction, an integer).

    Args:
        input: logits.
        target: probabilities of input's shape.
        weight: per-element weights, or None.
        pos_weight: the positive class's weight per class, or None.
        reduction: 0 none, 1 mean, 2 sum.

    Returns:
        A Tensor: per-element losses (reduction 0) or their mean (1) or sum (2).
    """
    return F.binary_cross_entropy_with_logits(_input("binary_cross_entropy_with_logits", input), target, weight,
                                              reduction=_reduction("binary_cross_entropy_with_logits", reduction),
                                              pos_weight=pos_weight)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          reduction: int | str = 1):
    """nn.functional.cosine_embedding_loss with ATen's integer reduction.

    Args:
        input1, input2: (N, D).
        target: (N,) of 1 or -1.
        margin: for dissimilar pairs.
        reduction: 0 none, 1 mean, 2 sum.

    Returns:
        A Tensor: per-element losses (reduction 0) or their mean (1) or sum (2).
    """
    return F.cosine_embedding_loss(_input("cosine_embedding_loss", input1, "input1"), input2, target, margin,
                                   reduction=_reduction("cosine_embedding_loss", reduction))


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0, reduction: int | str = 1):
    """nn.functional.margin_ranking_loss with ATen's integer reduction.

    Args:
        input1, input2: Tensors.
        target: 1 or -1 (which should rank higher).
        margin: the required gap.
        reduction: 0 none, 1 mean, 2 sum.

    Returns:
        A Tensor: per-element losses (reduction 0) or their mean (1) or sum (2).
    """
    return F.margin_ranking_loss(_input("margin_ranking_loss", input1, "input1"), input2, target, margin,
                                 reduction=_reduction("margin_ranking_loss", reduction))


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, reduction: int | str = 1):
    """nn.functional.hinge_embedding_loss with ATen's integer reduction.

    Args:
        input: distances.
        target: 1 or -1.
        margin: for the -1 pairs.
        reduction: 0 none, 1 mean, 2 sum.

    Returns:
        A Tensor: per-element losses (reduction 0) or their mean (1) or sum (2).
    """
    return F.hinge_embedding_loss(_input("hinge_embedding_loss", input), target, margin,
                                  reduction=_reduction("hinge_embedding_loss", reduction))


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-06, swap: bool = False, reduction: int | str = 1):
    """nn.functional.triplet_margin_loss with ATen's integer reduction.

    Args:
        anchor, positive, negative: (N, D).
        margin: the required gap.
        p: the distance's norm order.
        eps: added to the differences.
        swap: use the smaller of the two negative distances.
        reduction: 0 none, 1 mean, 2 sum.

    Returns:
        A Tensor: per-element losses (reduction 0) or their mean (1) or sum (2).
    """
    return F.triplet_margin_loss(_input("triplet_margin_loss", anchor, "anchor"), positive, negative, margin, p, eps,
                                 swap, reduction=_reduction("triplet_margin_loss", reduction))


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float, reduction: int | str):
    """nn.functional.poisson_nll_loss, every argument positional (reduction an integer).

    Args:
        input: the rate (its log with log_input).
        target: counts.
        log_input: input holds log-rates.
        full: add Stirling's approximation term.
        eps: keeps log(input) finite.
        reduction: 0 none, 1 mean, 2 sum.

    Returns:
        A Tensor: per-element losses (reduction 0) or their mean (1) or sum (2).
    """
    return F.poisson_nll_loss(_input("poisson_nll_loss", input), target, log_input, full, eps=eps,
                              reduction=_reduction("poisson_nll_loss", reduction))


def _lse3(a, b, c):
    """log(exp(a) + exp(b) + exp(c)), -inf where all three are -inf, with finite derivatives there."""
    m = fnp.maximum(fnp.maximum(a, b), c)
    m = fnp.where(fnp.isfinite(m), m, 0.0)
    total = fnp.add(fnp.add(fnp.exp(fnp.subtract(a, m)), fnp.exp(fnp.subtract(b, m))), fnp.exp(fnp.subtract(c, m)))
    ok = fnp.greater(total, 0)
    return fnp.where(ok, fnp.add(m, fnp.log(fnp.where(ok, total, 1.0))), -np.inf)


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any, blank: int = 0,
             reduction: int | str = 0, zero_infinity: bool = False):
    """The connectionist temporal classification loss: -log of the total probability of every
    alignment of each target to its input frames (blanks between and around the labels,
    repeats merged), by the forward recursion in log space (CtcLossBackward0).

    Args:
        log_probs: (T, N, C) or (T, C) log-probabilities (log_softmax over C).
        targets: (N, S) padded label rows, or the labels of the batch concatenated (1-D).
        input_lengths: (N,) frames used per sample (<= T).
        target_lengths: (N,) labels per sample.
        blank: the blank label.
        reduction: 0 / "none" per-sample losses (torch.ctc_loss's default, unlike
            nn.functional's), 1 / "mean" the mean of the losses each divided by its target
            length, 2 / "sum".
        zero_infinity: losses that are infinite (no alignment fits) and their gradients become 0.

    Returns:
        A Tensor.
    """
    lp = _input("ctc_loss", log_probs, "log_probs")
    red = _reduction("ctc_loss", reduction)
    unbatched = lp.dim() == 2
    if lp.dim() not in (2, 3) or lp._value.dtype.kind != "f":
        raise FgradRuntimeError(f"ctc_loss: expected float log_probs of 2 or 3 dims (T, [N,] C), got {lp.dim()} "
                                f"dims of {lp.dtype}")
    T_ = lp._value.shape[0]
    N = 1 if unbatched else lp._value.shape[1]
    C_ = lp._value.shape[-1]
    il = np.asarray(input_lengths.detach().numpy() if isinstance(input_lengths, Tensor) else input_lengths,
                    np.int64).reshape(-1)
    tl = np.asarray(target_lengths.detach().numpy() if isinstance(target_lengths, Tensor) else target_lengths,
                    np.int64).reshape(-1)
    tg = np.asarray(targets.detach().numpy() if isinstance(targets, Tensor) else targets, np.int64)
    if len(il) != N or len(tl) != N:
        raise FgradRuntimeError(f"ctc_loss: expected input_lengths and target_lengths of length {N} (the batch), got "
                                f"{len(il)} and {len(tl)}")
    if np.any(il > T_) or np.any(il < 0):
        raise FgradRuntimeError(f"ctc_loss: Expected input_lengths to have value at most {T_}, but got {il.tolist()}")
    if not 0 <= blank < C_:
        raise FgradRuntimeError(f"ctc_loss: blank must be in label range [0, {C_}), got {blank}")
    if tg.ndim == 1 and not unbatched:
        starts = np.concatenate([[0], np.cumsum(tl)[:-1]])
        rows = [tg[a:a + n] for a, n in zip(starts, tl)]
    elif unbatched:
        rows = [tg.reshape(-1)[:tl[0]]]
    else:
        if np.any(tl > tg.shape[1]):
            raise FgradRuntimeError(f"ctc_loss: Expected tensor to have size at least {tl.max()} at dimension 1, but "
                                    f"got size {tg.shape[1]} for argument #2 'targets'")
        rows = [tg[b, :tl[b]] for b in range(N)]
    L = max([len(r) for r in rows] + [0])
    S = 2 * L + 1
    ext = np.full((N, S), blank, np.int64)
    skip = np.zeros((N, S), bool)  # the s - 2 transition (a label differing from the one before it)
    for b, r in enumerate(rows):
        ext[b, 1:2 * len(r):2] = r
        for k in range(1, len(r)):
            skip[b, 2 * k + 1] = r[k] != r[k - 1]
    valid = np.arange(S)[None, :] < (2 * tl + 1)[:, None]
    last, prev = 2 * tl, np.maximum(2 * tl - 1, 0)

    def values(v):
        v = fnp.expand_dims(v, 1) if unbatched else v
        emit = fnp.take_along_axis(v, np.broadcast_to(ext[None], (T_, N, S)), axis=2)  # (T, N, S)
        neg = np.full((N, 1), -np.inf)
        start = np.where(np.arange(S)[None, :] < 2, 0.0, -np.inf)
        alpha = fnp.where(valid & (start == 0), fnp.take(emit, 0, axis=0), -np.inf)
        for t in range(1, T_):
            a1 = fnp.concatenate([neg, alpha[:, :-1]], axis=1)
            a2 = fnp.where(skip, fnp.concatenate([neg, neg, alpha[:, :-2]], axis=1) if S > 2 else -np.inf, -np.inf)
            new = fnp.where(valid, fnp.add(_lse3(alpha, a1, a2), fnp.take(emit, t, axis=0)), -np.inf)
            alpha = fnp.where((t < il)[:, None], new, alpha)
        end1 = fnp.take_along_axis(alpha, last[:, None], axis=1)[:, 0]
        end2 = fnp.where(tl > 0, fnp.take_along_axis(alpha, prev[:, None], axis=1)[:, 0], -np.inf)
        loss = fnp.negative(_lse3(end1, end2, np.full(N, -np.inf)))
        loss = fnp.where(il == 0, np.where(tl == 0, 0.0, np.inf), loss)
        # PyTorch's gradient in log_probs is exp(log_probs) - occupancy at the frames used, the
        # true one (-occupancy) plus exp(log_probs): through a log_softmax both give the same
        # gradient in the logits. The added term is 0 in value and carries that exp(log_probs).
        used = (np.arange(T_)[:, None] < il[None, :])[:, :, None]
        e = fnp.exp(v)
        extra = fnp.sum(fnp.where(used, fnp.subtract(e, stop_gradient(e)), 0.0), axis=(0, 2))
        loss = fnp.add(loss, extra)
        if zero_infinity:
            loss = fnp.where(fnp.isinf(loss), 0.0, loss)
        return cast(loss, dtype_of(v))
    loss = call("CtcLossBackward0", values, (lp,))
    if zero_infinity:  # (PyTorch's graph: a WhereBackward0 over zeros and the loss; the values are 0 already)
        loss = O.where(O.eq(loss, math.inf), C.zeros((), dtype=loss.dtype), loss)
    if red == "none":
        return O.squeeze(loss, 0) if unbatched else loss
    if red == "sum":
        return O.sum(loss)
    return O.mean(O.div(loss, C.tensor(np.maximum(tl, 1).astype(lp._value.dtype))))


def _inplace(name: str, fn):
    def op(input, *args, **kwargs):
        x = _input(name, input)
        check_inplace(x)
        return commit_inplace(x, fn(x, *args, **kwargs))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"torch.{name}: torch.{name[:-1]} written into input (returned).\n\nArgs:\n    input: a Tensor (not "
                  f"a leaf that requires grad, under grad mode).\n    *args, **kwargs: torch.{name[:-1]}'s other "
                  "arguments.\n\nReturns:\n    input.")
    return op


celu_ = _inplace("celu_", celu)
selu_ = _inplace("selu_", selu)
rrelu_ = _inplace("rrelu_", rrelu)
threshold_ = _inplace("threshold_", threshold)


# --- recurrent cells (ATen's: one step of an RNN, LSTM or GRU) ----------------------------------------

# PyTorch's CPU cells, each a step on the input's projection `gi` (input W_ih^T + b_ih; the
# layers of rnn_tanh/lstm/gru project the whole sequence at once and unbind it): the hidden
# state's linear map with gi added in place, the gates unsafe chunks activated in place

def _tanh_step(gi, h, w_hh, b_hh):
    return O.tanh(F.linear(h, w_hh, b_hh).add_(gi))


def _relu_step(gi, h, w_hh, b_hh):
    return O.relu(F.linear(h, w_hh, b_hh).add_(gi))


def _lstm_step(gi, hc, w_hh, b_hh):
    h, c = hc
    i, f, g, o = _unsafe_chunk(F.linear(h, w_hh, b_hh).add_(gi), 4, 1)
    i, f, g, o = i.sigmoid_(), f.sigmoid_(), g.tanh_(), o.sigmoid_()
    c2 = O.mul(f, c).add_(O.mul(i, g))
    return O.mul(o, O.tanh(c2)), c2


def _gru_step(gi, hx, w_hh, b_hh):
    xr, xz, xn = _unsafe_chunk(gi, 3, 1)
    hr, hz, hn = _unsafe_chunk(F.linear(hx, w_hh, b_hh), 3, 1)
    r = hr.add_(xr).sigmoid_()
    z = hz.add_(xz).sigmoid_()
    n = xn.add(hn.mul_(r)).tanh_()
    return O.sub(hx, n).mul_(z).add_(n)


def rnn_tanh_cell(input: Tensor, hx: Any, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
                  b_hh: Tensor | None = None):
    """tanh(input W_ih^T + b_ih + hx W_hh^T + b_hh): one step of an Elman RNN.

    Args:
        input: (batch, input_size).
        hx: (batch, hidden_size).
        w_ih, w_hh: (hidden_size, input_size), (hidden_size, hidden_size).
        b_ih, b_hh: (hidden_size,) or None.

    Returns:
        The new hidden state (batch, hidden_size).
    """
    return _tanh_step(F.linear(_input("rnn_tanh_cell", input), w_ih, b_ih), hx, w_hh, b_hh)


def rnn_relu_cell(input: Tensor, hx: Any, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
                  b_hh: Tensor | None = None):
    """relu(input W_ih^T + b_ih + hx W_hh^T + b_hh): see rnn_tanh_cell.

    Args:
        input: (batch, input_size).
        hx: (batch, hidden_size).
        w_ih, w_hh: the weights.
        b_ih, b_hh: the biases, or None.

    Returns:
        The new hidden state.
    """
    return _relu_step(F.linear(_input("rnn_relu_cell", input), w_ih, b_ih), hx, w_hh, b_hh)


def lstm_cell(input: Tensor, hx: Any, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
              b_hh: Tensor | None = None):
    """One LSTM step: gates (i, f, g, o) = input W_ih^T + b_ih + h W_hh^T + b_hh, c' = sigmoid(f) c
    + sigmoid(i) tanh(g), h' = sigmoid(o) tanh(c').

    Args:
        input: (batch, input_size).
        hx: (h, c), each (batch, hidden_size).
        w_ih, w_hh: (4 hidden_size, input_size), (4 hidden_size, hidden_size).
        b_ih, b_hh: (4 hidden_size,) or None.

    Returns:
        (h', c').
    """
    if not isinstance(hx, (tuple, list)) or len(hx) != 2:
        raise FgradTypeError("lstm_cell(): argument 'hx' must be a tuple of 2 Tensors (h, c)")
    return _lstm_step(F.linear(_input("lstm_cell", input), w_ih, b_ih), tuple(hx), w_hh, b_hh)


def gru_cell(input: Tensor, hx: Any, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
             b_hh: Tensor | None = None):
    """One GRU step: r = sigmoid(x_r + h_r), z = sigmoid(x_z + h_z), n = tanh(x_n + r h_n),
    h' = (1 - z) n + z h, with x_* = input W_ih^T + b_ih and h_* = hx W_hh^T + b_hh split in three.

    Args:
        input: (batch, input_size).
        hx: (batch, hidden_size).
        w_ih, w_hh: (3 hidden_size, input_size), (3 hidden_size, hidden_size).
        b_ih, b_hh: (3 hidden_size,) or None.

    Returns:
        The new hidden state (batch, hidden_size).
    """
    return _gru_step(F.linear(_input("gru_cell", input), w_ih, b_ih), hx, w_hh, b_hh)


def _rnn(name: str, cell, gates_per_layer: int, has_c: bool):
    def op(input, hx, params, has_biases: bool, num_layers: int, dropout: float, train: bool, bidirectional: bool,
           batch_first: bool):
        x = _input(name, input)
        dirs = 2 if bidirectional else 1
        per = 4 if has_biases else 2
        params = list(params)
        if len(params) != num_layers * dirs * per:
            raise FgradRuntimeError(f"{name}: expected {num_layers * dirs * per} parameter tensors ({per} per layer "
                                    f"and direction), got {len(params)}")
        h0, c0 = (hx[0], hx[1]) if has_c else (hx, None)
        if has_c and (not isinstance(hx, (tuple, list)) or len(hx) != 2):
            raise FgradTypeError(f"{name}(): hx must be a tuple of 2 Tensors (h_0, c_0)")
        seq = O.transpose(x, 0, 1) if batch_first else x
        unbatched = seq.dim() == 2
        if unbatched:
            seq, h0 = O.unsqueeze(seq, 1), O.unsqueeze(h0, 1)
            c0 = None if c0 is None else O.unsqueeze(c0, 1)
        # PyTorch's layers: each direction's outputs stacked, the directions concatenated along
        # the features, dropout on that whole output, the next layer unbinding it again
        layer_input = seq
        h_out, c_out = [], []
        for layer in range(num_layers):
            outs = []
            for d in range(dirs):
                k = layer * dirs + d
                w = params[k * per:(k + 1) * per]
                b_ih, b_hh = (w[2], w[3]) if has_biases else (None, None)
                steps = O.unbind(F.linear(layer_input, w[0], b_ih), 0)
                h = O.select(h0, 0, k)
                c = None if c0 is None else O.select(c0, 0, k)
                ys = [None] * len(steps)
                order = range(len(steps)) if d == 0 else reversed(range(len(steps)))
                for t in order:
                    if has_c:
                        h, c = cell(steps[t], (h, c), w[1], b_hh)
                    else:
                        h = cell(steps[t], h, w[1], b_hh)
                    ys[t] = h
                outs.append(O.stack(ys, 0))
                h_out.append(h)
                if has_c:
                    c_out.append(c)
            layer_input = outs[0] if dirs == 1 else O.cat(outs, -1)
            if dropout and train and layer < num_layers - 1:
                layer_input = F.dropout(layer_input, dropout, True)
        out = layer_input
        hn = O.stack(h_out, 0)
        cn = O.stack(c_out, 0) if has_c else None
        if unbatched:
            out, hn = O.squeeze(out, 1), O.squeeze(hn, 1)
            cn = None if cn is None else O.squeeze(cn, 1)
        if batch_first:
            out = out.transpose_(0, 1)
        return (out, hn, cn) if has_c else (out, hn)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"torch.{name}(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, "
                  f"batch_first): a whole multi-layer {name} over a padded sequence, ATen's flat form of nn's "
                  "recurrent modules: params lists w_ih, w_hh (and b_ih, b_hh) per layer and direction.\n\n"
                  "Args:\n    input: (T, B, in) or (B, T, in) with batch_first.\n    hx: h_0 (layers * dirs, B, "
                  "hidden)" + (", with c_0 as a tuple" if has_c else "") + ".\n    params: the weight Tensors.\n"
                  "    has_biases, num_layers, dropout, train, bidirectional, batch_first: as nn's.\n\n"
                  "Returns:\n    (output, h_n" + (", c_n)" if has_c else ")") + ".")
    return op


# --- ATen's native normalisations (their results with the saved statistics) ---------------------------

def native_layer_norm(input: Tensor, normalized_shape: Any, weight: Tensor, bias: Tensor | None, eps: float):
    """(layer_norm(input, ...), mean, rstd): the statistics over the normalized dims, kept as
    size-1 dims, rstd = 1 / sqrt(var + eps) (not differentiable, as PyTorch's).

    Args:
        input: a Tensor.
        normalized_shape: the trailing dims normalised.
        weight, bias: Tensors of normalized_shape, or None.
        eps: added to the variance.

    Returns:
        (output, mean, rstd).
    """
    x = _input("native_layer_norm", input)
    k = len(tuple(normalized_shape)) if isinstance(normalized_shape, (list, tuple)) else 1
    out = F.layer_norm(x, normalized_shape, weight, bias, eps)
    v = x.detach()
    axes = tuple(range(v.dim() - k, v.dim()))
    mean = O.mean(v, axes, keepdim=True)
    rstd = O.rsqrt(O.add(O.var(v, axes, unbiased=False, keepdim=True), eps))
    return out, mean, rstd


def native_batch_norm(input: Tensor, weight: Tensor, bias: Tensor | None, running_mean: Tensor | None,
                      running_var: Tensor | None, training: bool, momentum: float, eps: float):
    """(batch_norm(...), save_mean, save_invstd): in training the batch's mean and 1 / sqrt(var
    + eps) per channel (running statistics updated); in eval two empty tensors.

    Args:
        input: (N, C, *).
        weight, bias: (C,) or None.
        running_mean, running_var: (C,) or None.
        training: use (and save) the batch's statistics.
        momentum: the running statistics' update factor.
        eps: added to the variance.

    Returns:
        (output, save_mean, save_invstd).
    """
    x = _input("native_batch_norm", input)
    out = F.batch_norm(x, running_mean, running_var, weight, bias, training, momentum, eps)
    if not training:
        return out, C.empty(0, dtype=x.dtype), C.empty(0, dtype=x.dtype)
    v = x.detach()
    axes = (0,) + tuple(range(2, v.dim()))
    return out, O.mean(v, axes), O.rsqrt(O.add(O.var(v, axes, unbiased=False), eps))


def native_group_norm(input: Tensor, weight: Tensor, bias: Tensor | None, N: int, C: int, HxW: int, group: int,
                      eps: float):
    """(group_norm(...), mean, rstd), the statistics per (sample, group) of shape (N, group),
    all three one NativeGroupNormBackward0 node.

    Args:
        input: (N, C, *) with prod(*) == HxW.
        weight, bias: (C,) or None.
        N, C, HxW: input's sizes (checked).
        group: the number of groups, dividing C.
        eps: added to the variance.

    Returns:
        (output, mean, rstd).
    """
    x = _input("native_group_norm", input)
    shape = tuple(x._value.shape)
    if shape[0] != N or shape[1] != C or int(np.prod(shape[2:])) != HxW:
        raise FgradRuntimeError(f"native_group_norm: input of shape {list(shape)} does not match N={N}, C={C}, "
                                f"HxW={HxW}")
    if C % group:
        raise FgradRuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input "
                                f"of shape {list(shape)} and num_groups={group}")

    def values(v, w, b):
        g = fnp.reshape(v, (N, group, -1))
        mean = fnp.mean(g, axis=-1, keepdims=True)
        var = fnp.mean(fnp.square(fnp.subtract(g, mean)), axis=-1, keepdims=True)
        rstd = fnp.true_divide(1.0, fnp.sqrt(fnp.add(var, eps)))
        out = fnp.reshape(fnp.multiply(fnp.subtract(g, mean), rstd), shape)
        bshape = (1, C) + (1,) * (len(shape) - 2)
        if w is not None:
            out = fnp.multiply(out, fnp.reshape(w, bshape))
        if b is not None:
            out = fnp.add(out, fnp.reshape(b, bshape))
        return out, fnp.reshape(mean, (N, group)), fnp.reshape(rstd, (N, group))
    return call("NativeGroupNormBackward0", values, (x, weight, bias), operands=(0, 1, 2))


def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0):
    """The `pow`-norm of v over every dim but `dim`, kept with size-1 dims (dim = -1: the norm
    of every element, 0-d) -- weight_norm's g.

    Args:
        v: a Tensor.
        pow: the norm's order.
        dim: the dim kept, or -1.

    Returns:
        A Tensor.
    """
    x = _input("norm_except_dim", v, "v")
    # PyTorch's composition: the norm of a 2-D view with dim first (or last), viewed back
    if dim == -1:
        return aten_norm(x, pow)
    nd = x.dim()
    if dim == 0 or dim == nd - 1:
        n = x.shape[dim]
        flat = O.reshape(x.contiguous(), (n, -1) if dim == 0 else (-1, n))
        return O.reshape(aten_norm(flat, pow, 1 if dim == 0 else 0), tuple(n if i == dim else 1 for i in range(nd)))
    return O.transpose(norm_except_dim(O.transpose(x, 0, dim), pow, 0), 0, dim)


def embedding_renorm_(input: Tensor, indices: Tensor, max_norm: float, norm_type: float):
    """The rows of `input` (an embedding table) listed in `indices` whose norm exceeds
    `max_norm` scaled in place to norm max_norm (by max_norm / (norm + 1e-7)); returns input.

    Args:
        input: (num_embeddings, dim), written in place (under no_grad, as PyTorch's).
        indices: an integer Tensor of rows.
        max_norm: the largest norm kept.
        norm_type: the norm's order.

    Returns:
        input.
    """
    w = _input("embedding_renorm_", input)
    rows = np.unique(np.asarray(indices.detach().numpy()).reshape(-1))
    v = w.detach().numpy().copy()
    sel = v[rows]
    norms = np.linalg.norm(sel, ord=norm_type, axis=1) if norm_type != 0 else np.count_nonzero(sel, axis=1)
    scale = np.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0).astype(v.dtype)
    v[rows] = sel * scale[:, None]
    with no_grad():
        w.copy_(C.tensor(v))
    return w


def affine_grid_generator(theta: Tensor, size: Sequence[int], align_corners: bool):
    """nn.functional.affine_grid with every argument positional.

    Args:
        theta: (N, 2, 3) or (N, 3, 4) affine matrices.
        size: the output's (N, C, H, W) or (N, C, D, H, W).
        align_corners: as nn.functional.affine_grid's.

    Returns:
        The sampling grid.
    """
    return F.affine_grid(_input("affine_grid_generator", theta, "theta"), list(size), align_corners=align_corners)


_MODES = {0: "bilinear", 1: "nearest", 2: "bicubic"}
_PADDINGS = {0: "zeros", 1: "border", 2: "reflection"}


def grid_sampler(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int, align_corners: bool):
    """nn.functional.grid_sample with ATen's integer modes (interpolation 0 bilinear, 1 nearest,
    2 bicubic; padding 0 zeros, 1 border, 2 reflection).

    Args:
        input: (N, C, H, W).
        grid: (N, H_out, W_out, 2) in [-1, 1].
        interpolation_mode, padding_mode: the integer codes above.
        align_corners: as nn.functional.grid_sample's.

    Returns:
        A Tensor (N, C, H_out, W_out).
    """
    if interpolation_mode not in _MODES or padding_mode not in _PADDINGS:
        raise FgradRuntimeError(f"grid_sampler(): interpolation_mode must be 0, 1 or 2 and padding_mode 0, 1 or 2, "
                                f"got {interpolation_mode} and {padding_mode}")
    return F.grid_sample(_input("grid_sampler", input), grid, _MODES[interpolation_mode],
                         _PADDINGS[padding_mode], align_corners)


def _unnormalize(coord, size: int, align_corners: bool):
    if align_corners:
        return fnp.multiply(fnp.add(coord, 1.0), (size - 1) / 2.0)
    return fnp.true_divide(fnp.subtract(fnp.multiply(fnp.add(coord, 1.0), float(size)), 1.0), 2.0)


def _reflect(x, twice_low: int, twice_high: int):
    """PyTorch's reflect_coordinates: x mirrored into [twice_low / 2, twice_high / 2]."""
    if twice_low == twice_high:
        return fnp.zeros_like(x)
    low, span = twice_low / 2.0, (twice_high - twice_low) / 2.0
    d = fnp.abs(fnp.subtract(x, low))
    extra = fnp.fmod(d, span)
    flips = fnp.floor(fnp.true_divide(stop_gradient(d), span))
    return fnp.where(fnp.equal(fnp.fmod(flips, 2.0), 0.0), fnp.add(extra, low), fnp.add(fnp.subtract(span, extra), low))


def _source_index(coord, size: int, padding: str, align_corners: bool):
    x = _unnormalize(coord, size, align_corners)
    if padding == "border":
        x = fnp.clip(x, 0, size - 1)
    elif padding == "reflection":
        x = _reflect(x, 0, 2 * (size - 1)) if align_corners else _reflect(x, -1, 2 * size - 1)
        x = fnp.clip(x, 0, size - 1)
    return x


def grid_sampler_3d(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int, align_corners: bool):
    """Samples (N, C, D, H, W) input at the points of grid (N, D_out, H_out, W_out, 3), whose last
    dim holds (x, y, z) in [-1, 1] across W, H and D: trilinear (interpolation_mode 0) or
    nearest (1, ties to even) interpolation, points outside read zeros (padding_mode 0), the
    border (1) or the reflection (2) (GridSampler3DBackward0).

    Args:
        input: (N, C, D, H, W).
        grid: (N, D_out, H_out, W_out, 3).
        interpolation_mode: 0 bilinear or 1 nearest.
        padding_mode: 0 zeros, 1 border, 2 reflection.
        align_corners: -1 and 1 are the centres of the corner voxels (else their outer edges).

    Returns:
        A Tensor (N, C, D_out, H_out, W_out).
    """
    x = _input("grid_sampler_3d", input)
    if x.dim() != 5 or grid.dim() != 5 or grid._value.shape[-1] != 3 or grid._value.shape[0] != x._value.shape[0]:
        raise FgradRuntimeError(f"grid_sampler_3d(): expected 5D input (N, C, D, H, W) and grid (N, D, H, W, 3) with "
                                f"one batch size, got {list(x._value.shape)} and {list(grid._value.shape)}")
    if interpolation_mode not in (0, 1):
        raise FgradRuntimeError(f"grid_sampler_3d(): interpolation_mode must be 0 (bilinear) or 1 (nearest) for 3-D "
                                f"inputs, got {interpolation_mode}")
    if padding_mode not in _PADDINGS:
        raise FgradRuntimeError(f"grid_sampler_3d(): padding_mode must be 0, 1 or 2, got {padding_mode}")
    pad = _PADDINGS[padding_mode]
    n, c, D_, H, W = x._value.shape
    out_sp = tuple(grid._value.shape[1:4])

    def values(v, g):
        g = fnp.reshape(g, (n, -1, 3))
        ix = _source_index(g[..., 0], W, pad, align_corners)
        iy = _source_index(g[..., 1], H, pad, align_corners)
        iz = _source_index(g[..., 2], D_, pad, align_corners)
        flat = fnp.reshape(v, (n, c, D_ * H * W))

        def read(zi, yi, xi):
            ok = (zi >= 0) & (zi < D_) & (yi >= 0) & (yi < H) & (xi >= 0) & (xi < W)
            lin = cast(fnp.clip(zi, 0, D_ - 1) * (H * W) + fnp.clip(yi, 0, H - 1) * W + fnp.clip(xi, 0, W - 1), _I64)
            vals = fnp.take_along_axis(flat, fnp.broadcast_to(fnp.expand_dims(lin, 1), (n, c, fnp.shape(lin)[1])), 2)
            return fnp.where(fnp.expand_dims(ok, 1), vals, 0.0)
        if interpolation_mode == 1:
            out = read(*(stop_gradient(fnp.round(t)) for t in (iz, iy, ix)))
            # (the grid's gradient is zero, but the result depends on it, as PyTorch records)
            out = fnp.where(True, out, fnp.expand_dims(g[..., 0], 1))
        else:
            x0, y0, z0 = (stop_gradient(fnp.floor(t)) for t in (ix, iy, iz))
            fx, fy, fz = fnp.subtract(ix, x0), fnp.subtract(iy, y0), fnp.subtract(iz, z0)
            out = 0.0
            for dz in (0, 1):
                wz = fz if dz else fnp.subtract(1.0, fz)
                for dy in (0, 1):
                    wy = fy if dy else fnp.subtract(1.0, fy)
                    for dx in (0, 1):
                        wx = fx if dx else fnp.subtract(1.0, fx)
                        w = fnp.expand_dims(fnp.multiply(fnp.multiply(wz, wy), wx), 1)
                        out = fnp.add(out, fnp.multiply(w, read(z0 + dz, y0 + dy, x0 + dx)))
        return fnp.reshape(out, (n, c) + out_sp)
    return call("GridSampler3DBackward0", values, (x, grid))


def grid_sampler_2d(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int, align_corners: bool):
    """grid_sampler for 4-D inputs (PyTorch's 2-D kernel).

    Args:
        input: (N, C, H, W).
        grid: (N, H_out, W_out, 2).
        interpolation_mode: 0 bilinear, 1 nearest, 2 bicubic.
        padding_mode: 0 zeros, 1 border, 2 reflection.
        align_corners: as nn.functional.grid_sample's.

    Returns:
        A Tensor (N, C, H_out, W_out).
    """
    x = _input("grid_sampler_2d", input)
    if x.dim() != 4:
        raise FgradRuntimeError(f"grid_sampler_2d(): expected 4D input, got {x.dim()}D")
    return grid_sampler(x, grid, interpolation_mode, padding_mode, align_corners)


lstm = _rnn("lstm", _lstm_step, 4, True)
gru = _rnn("gru", _gru_step, 3, False)
rnn_tanh = _rnn("rnn_tanh", _tanh_step, 1, False)
rnn_relu = _rnn("rnn_relu", _relu_step, 1, False)


def native_dropout(input: Tensor, p: float, train: bool):
    """(output, mask): dropout with torch's mask stream (the same draws as nn.functional.dropout)
    and the bool mask of the kept elements (all True outside training) (NativeDropoutBackward0).

    Args:
        input: a float Tensor.
        p: the probability of zeroing an element.
        train: apply dropout.

    Returns:
        (output, mask).
    """
    x = _input("native_dropout", input)
    if not 0.0 <= p <= 1.0:
        raise FgradRuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    if train:
        kept = F.dropout(C.ones(tuple(x._value.shape), dtype=x.dtype), p, True).detach().numpy() != 0
    else:
        kept = np.ones(tuple(x._value.shape), bool)
    scale = 0.0 if p >= 1.0 else (1.0 / (1.0 - p) if train else 1.0)

    def values(v):
        return fnp.multiply(fnp.where(kept, v, fnp.zeros_like(v)), np.asarray(scale, dtype_of(v)))
    return call("NativeDropoutBackward0", values, (x,)), C.tensor(kept)


def batch_norm_update_stats(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None, momentum: float):
    """(mean, var) of each channel of (N, C, *) input (the variance biased), with running_mean
    and running_var updated in place by momentum (the running variance unbiased).

    Args:
        input: (N, C, *).
        running_mean, running_var: (C,) buffers, or None.
        momentum: the update factor.

    Returns:
        (mean, var), not differentiable.
    """
    x = _input("batch_norm_update_stats", input).detach()
    axes = (0,) + tuple(range(2, x.dim()))
    n = int(np.prod([x._value.shape[a] for a in axes]))
    mean, var = O.mean(x, axes), O.var(x, axes, unbiased=False)
    with no_grad():
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(O.mul(mean, momentum))
        if running_var is not None:
            running_var.mul_(1 - momentum).add_(O.mul(var, momentum * n / max(n - 1, 1)))
    return mean, var


_SEGMENT_EMPTY = {"sum": 0.0, "mean": float("nan"), "max": float("-inf"), "min": float("inf"), "prod": 1.0}


def segment_reduce(data: Tensor, reduce: str, *, lengths: Tensor | None = None, indices: Tensor = None,
                   offsets: Tensor = None, axis: int = 0, unsafe: bool = False, initial: float | None = None):
    """The reduction ("sum", "mean", "max", "min", "prod") of consecutive segments of `data`
    along `axis`, given their lengths or offsets (SegmentReduceBackward0). An empty segment
    gives `initial`, else 0, NaN, -inf, inf, 1; with `initial` it also joins every reduction
    (mean divides by the segment's length).

    Args:
        data: a Tensor.
        reduce: the reduction's name.
        lengths: a 1-D integer Tensor of segment lengths summing to data's size at axis.
        indices: not supported (PyTorch's is not either).
        offsets: a 1-D integer Tensor of segment bounds (len = segments + 1), instead of lengths.
        axis: the dim segmented.
        unsafe: skip the lengths check.
        initial: a number.

    Returns:
        A Tensor with `axis` of size the number of segments.
    """
    x = _input("segment_reduce", data, "data")
    if reduce not in _SEGMENT_EMPTY:
        raise FgradRuntimeError(f"segment_reduce: reduce must be one of {sorted(_SEGMENT_EMPTY)}, got {reduce!r}")
    if indices is not None:
        raise FgradRuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if (lengths is None) == (offsets is None):
        raise FgradRuntimeError("segment_reduce(): Either lengths or offsets must be defined (exactly one)")
    nd = x.dim()
    ax = axis % nd
    if lengths is not None:
        lens = np.asarray(lengths.detach().numpy()).astype(np.int64)
        if lens.ndim != 1:
            raise FgradRuntimeError("segment_reduce(): fgrad takes 1-D lengths (one segmentation for the whole data)")
        bounds = np.concatenate([[0], np.cumsum(lens)])
    else:
        bounds = np.asarray(offsets.detach().numpy()).astype(np.int64)
        if bounds.ndim != 1:
            raise FgradRuntimeError("segment_reduce(): fgrad takes 1-D offsets (one segmentation for the whole data)")
    if ax != 0:
        raise FgradRuntimeError(f"segment_reduce(): Expected axis to be the last dimension of lengths but got {axis} "
                                "(fgrad takes 1-D lengths or offsets, so axis 0)")
    if not unsafe and (bounds[-1] != x._value.shape[ax] or np.any(np.diff(bounds) < 0)):
        raise FgradRuntimeError(f"segment_reduce(): the segments must cover data's size {x._value.shape[ax]} at axis "
                                f"{ax} (got bounds {bounds.tolist()})")
    empty = _SEGMENT_EMPTY[reduce] if initial is None else float(initial)

    def values(v):
        outs = []
        for a, b in zip(bounds[:-1], bounds[1:]):
            seg = fnp.getitem(v, (slice(None),) * ax + (slice(int(a), int(b)),))
            shape = list(fnp.shape(v))
            del shape[ax]
            if b == a:
                outs.append(fnp.full(tuple(shape), empty, dtype_of(v)))
                continue
            fn = {"sum": fnp.sum, "mean": fnp.sum, "max": fnp.max, "min": fnp.min, "prod": fnp.prod}[reduce]
            r = fn(seg, axis=ax)
            if initial is not None:
                r = {"sum": fnp.add, "mean": fnp.add, "max": fnp.maximum, "min": fnp.minimum,
                     "prod": fnp.multiply}[reduce](r, np.asarray(initial, dtype_of(v)))
            if reduce == "mean":
                r = fnp.true_divide(r, np.asarray(b - a, dtype_of(v)))
            outs.append(r)
        return fnp.stack(outs, axis=ax)
    return call("SegmentReduceBackward0", values, (x,))


def _sparse_mm(name: str, sparse_out: bool):
    def op(input, mat2, out_dtype=None):
        out = S.mm(input, mat2)
        return out.to_sparse() if sparse_out else out
    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"torch.{name}(input, mat2): a sparse COO matrix times a dense one (torch.sparse.mm), "
                  f"{'as a sparse COO tensor' if sparse_out else 'dense'}.\n\nArgs:\n    input: a sparse (n, m) "
                  "tensor.\n    mat2: a dense (m, p) Tensor.\n\nReturns:\n    The (n, p) product.")
    return op


dsmm = _sparse_mm("dsmm", False)
spmm = _sparse_mm("spmm", False)
smm = _sparse_mm("smm", True)
hsmm = _sparse_mm("hsmm", True)
hspmm = _sparse_mm("hspmm", True)


def _sparse_addmm(name: str):
    def op(input, mat1, mat2, *, beta=1, alpha=1):
        base = input.to_dense() if getattr(input, "is_sparse", False) else input
        return S.addmm(base, mat1, mat2, beta=beta, alpha=alpha).to_sparse()
    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"torch.{name}(input, mat1, mat2, *, beta=1, alpha=1): beta input + alpha mat1 @ mat2 for a "
                  "sparse input and mat1, as a sparse COO tensor.\n\nArgs:\n    input: a sparse (n, p) tensor.\n"
                  "    mat1: a sparse (n, m) tensor.\n    mat2: a dense (m, p) Tensor.\n    beta, alpha: numbers."
                  "\n\nReturns:\n    A sparse (n, p) tensor.")
    return op


saddmm = _sparse_addmm("saddmm")
sspaddmm = _sparse_addmm("sspaddmm")


# --- the older linear-algebra names --------------------------------------------------------------------

def _square(name: str, a: Tensor) -> None:
    s = tuple(a._value.shape)
    if len(s) < 2 or s[-1] != s[-2]:
        raise FgradRuntimeError(f"torch.{name}: A must be batches of square matrices, but they are "
                                f"{s[-2] if len(s) > 1 else ''} by {s[-1] if s else ''} matrices")


def _mT(v):
    return fnp.swapaxes(v, -1, -2)


def _conj_t(v):
    return fnp.conj(_mT(v)) if dtype_of(v).kind == "c" else _mT(v)


def cholesky(input: Tensor, upper: bool = False):
    """The Cholesky factor of symmetric positive-definite matrices: L with A = L L^H, or U
    = L^H with `upper` (CholeskyBackward0; PyTorch deprecates it for linalg.cholesky).

    Args:
        input: (*, n, n) positive-definite matrices.
        upper: return the upper factor.

    Returns:
        A Tensor of input's shape.
    """
    a = _input("cholesky", input)
    _square("cholesky", a)
    out = _linalg.cholesky(a, upper=upper)  # (its checks and errors: linalg.cholesky's)
    del out

    def values(v):
        lo = fnp.linalg.cholesky(v)
        return _conj_t(lo) if upper else lo
    return call("CholeskyBackward0", values, (a,))


def cholesky_inverse(input: Tensor, upper: bool = False):
    """The inverse of A from its Cholesky factor (L, or U with `upper`) (CholeskyInverseBackward0).

    Args:
        input: (*, n, n) a triangular Cholesky factor.
        upper: the factor is upper-triangular.

    Returns:
        A Tensor (*, n, n).
    """
    f = _input("cholesky_inverse", input)
    _square("cholesky_inverse", f)
    return _linalg._cholesky_inverse(f, upper)


def cholesky_solve(B: Tensor, L: Tensor, upper: bool = False):
    """The solution X of A X = B given A's Cholesky factor L (or U with `upper`)
    (CholeskySolveBackward0).

    Args:
        B: (*, n, k) right-hand sides.
        L: (*, n, n) the factor.
        upper: the factor is upper-triangular.

    Returns:
        A Tensor (*, n, k).
    """
    b, f = _input("cholesky_solve", B), L
    if not isinstance(f, Tensor):
        raise FgradTypeError(f"cholesky_solve(): argument 'input2' (position 2) must be Tensor, not {type(f).__name__}")
    _square("cholesky_solve", f)
    if b._value.ndim < 2:
        raise FgradRuntimeError(f"b should have at least 2 dimensions, but has {b._value.ndim} dimensions instead")
    return _linalg._cholesky_solve(b, f, upper)


_qr_t = O.result_type("qr", ("Q", "R"))


def qr(input: Tensor, some: bool = True):
    """(Q, R) with input = Q R: reduced (`some`) or complete (LinalgQrBackward0).

    Args:
        input: (*, m, n).
        some: the reduced factorisation (else the complete one).

    Returns:
        torch.return_types.qr(Q, R).
    """
    q, r = _linalg.qr(_input("qr", input), "reduced" if some else "complete")
    return _qr_t(q, r)


_svd_t = O.result_type("svd", ("U", "S", "V"))


def svd(input: Tensor, some: bool = True, compute_uv: bool = True):
    """(U, S, V) with input = U diag(S) V^H (V, not linalg.svd's Vh; LinalgSvdBackward0).
    Without compute_uv, U and V are zero-filled and S carries no gradient... as PyTorch's,
    S is then computed without the vectors.

    Args:
        input: (*, m, n).
        some: the reduced factorisation (else the complete one).
        compute_uv: compute U and V.

    Returns:
        torch.return_types.svd(U, S, V).
    """
    a = _input("svd", input)
    if not compute_uv:
        s = _linalg.svdvals(a)
        m, n = a._value.shape[-2:]
        batch = tuple(a._value.shape[:-2])
        return _svd_t(C.zeros(batch + (m, m if not some else m), dtype=a.dtype),
                      s, C.zeros(batch + (n, n), dtype=a.dtype))
    u, s, vh = _linalg.svd(a, full_matrices=not some)
    return _svd_t(u, s, O.conj(O.transpose(vh, -2, -1)))


_triangular_t = O.result_type("triangular_solve", ("solution", "cloned_coefficient"))


def triangular_solve(b: Tensor, A: Tensor, upper: bool = True, transpose: bool = False, unitriangular: bool = False):
    """The solution X of A X = b (A^T X = b with `transpose`) for triangular A, and a copy of A
    (TriangularSolveBackward0; PyTorch deprecates it for linalg.solve_triangular).

    Args:
        b: (*, n, k) right-hand sides.
        A: (*, n, n) triangular matrices (only the `upper` or lower triangle is read).
        upper: A is upper-triangular.
        transpose: solve with A's transpose.
        unitriangular: A's diagonal is taken as ones.

    Returns:
        torch.return_types.triangular_solve(solution, cloned_coefficient).
    """
    bb = _input("triangular_solve", b)
    if not isinstance(A, Tensor):
        raise FgradTypeError(f"triangular_solve(): argument 'A' (position 2) must be Tensor, not {type(A).__name__}")
    _square("triangular_solve", A)
    if bb._value.ndim < 2:
        raise FgradRuntimeError(f"torch.triangular_solve: Expected b to have at least 2 dimensions, but it has "
                                f"{bb._value.ndim} dimensions instead")

    def values(bv, av):
        t = fnp.triu(av) if upper else fnp.tril(av)
        if unitriangular:
            n = fnp.shape(av)[-1]
            t = fnp.add(fnp.multiply(t, 1 - np.eye(n, dtype=dtype_of(av))), np.eye(n, dtype=dtype_of(av)))
        if transpose:
            t = _mT(t)
        return fnp.linalg.solve(t, bv)
    sol = call("TriangularSolveBackward0", values, (bb, A))
    return _triangular_t(sol, O.clone(A))


def pinverse(input: Tensor, rcond: float = 1e-15):
    """The Moore-Penrose pseudo-inverse, singular values below rcond * the largest cut
    (linalg.pinv; LinalgPinvBackward0).

    Args:
        input: (*, m, n).
        rcond: relative cut-off of the singular values.

    Returns:
        A Tensor (*, n, m).
    """
    return _linalg.pinv(_input("pinverse", input), rtol=rcond)


def matrix_power(input: Tensor, n: int):
    """linalg.matrix_power: the n-th power of square matrices (n < 0: of the inverse).

    Args:
        input: (*, n, n).
        n: the power (negative: of the inverse).

    Returns:
        A Tensor (*, n, n).
    """
    return _linalg.matrix_power(_input("matrix_power", input), n)


def matrix_exp(input: Tensor):
    """The matrix exponential of square matrices (LinalgMatrixExpBackward0).

    Args:
        input: (*, n, n).

    Returns:
        A Tensor of input's shape.
    """
    a = _input("matrix_exp", input)
    _square("matrix_exp", a)

    def values(v):
        if fnp.ndim(v) == 2:
            return fsl.expm(v)
        flat = fnp.reshape(v, (-1,) + tuple(fnp.shape(v)[-2:]))
        return fnp.reshape(fnp.stack([fsl.expm(flat[k]) for k in range(fnp.shape(flat)[0])]), fnp.shape(v))
    return call("LinalgMatrixExpBackward0", values, (a,))


_lu_unpack_t = O.result_type("lu_unpack", ("P", "L", "U"))


def _lu_values(v):
    """(LU, 1-based int32 pivots) of one matrix, or of each in a batch."""
    if fnp.ndim(v) == 2:
        lu_, piv = fsl.lu_factor(v)
        return lu_, cast(fnp.add(piv, 1), np.dtype(np.int32))
    shape = tuple(fnp.shape(v))
    flat = fnp.reshape(v, (-1,) + shape[-2:])
    pairs = [fsl.lu_factor(flat[k]) for k in range(shape[0] if len(shape) == 3 else fnp.shape(flat)[0])]
    lus = fnp.reshape(fnp.stack([p[0] for p in pairs]), shape)
    pivs = fnp.reshape(fnp.stack([p[1] for p in pairs]), shape[:-2] + (min(shape[-2:]),))
    return lus, cast(fnp.add(pivs, 1), np.dtype(np.int32))


def lu(A: Tensor, pivot: bool = True, get_infos: bool = False):
    """The LU factorisation with partial pivoting, packed as LAPACK's getrf: (LU, pivots) or
    (LU, pivots, infos) with `get_infos` (pivots 1-based int32; LinalgLuFactorExBackward0).

    Args:
        A: (*, m, n) matrices.
        pivot: must be True on the CPU.
        get_infos: also return the int32 LAPACK info per matrix (0: success).

    Returns:
        A tuple of Tensors.
    """
    a = _input("lu", A, "A")
    if not pivot:
        raise FgradRuntimeError("lu without pivoting is not implemented on the CPU")
    if a._value.ndim < 2:
        raise FgradRuntimeError(f"torch.lu: Expected tensor with 2 or more dimensions. Got size: "
                                f"{list(a._value.shape)} instead")
    lu_, piv = call("LinalgLuFactorExBackward0", _lu_values, (a,))
    if get_infos:
        return lu_, piv, C.zeros(tuple(a._value.shape[:-2]), dtype=D.int32)
    return lu_, piv


def _perm_of(piv: np.ndarray, m: int) -> np.ndarray:
    """The row order that LAPACK's 1-based row swaps `piv` make of range(m)."""
    perm = np.arange(m)
    for i, p in enumerate(piv):
        j = int(p) - 1
        perm[[i, j]] = perm[[j, i]]
    return perm


def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True, unpack_pivots: bool = True):
    """(P, L, U) from lu's packed factors, with A = P L U.

    Args:
        LU_data: (*, m, n) the packed factors.
        LU_pivots: (*, min(m, n)) 1-based int32 pivots.
        unpack_data: compute L and U (else empty tensors).
        unpack_pivots: compute P (else an empty tensor).

    Returns:
        torch.return_types.lu_unpack(P, L, U).
    """
    f = _input("lu_unpack", LU_data, "LU_data")
    shape = tuple(f._value.shape)
    m, n = shape[-2:]
    k = min(m, n)
    piv = np.asarray(LU_pivots.detach().numpy()).reshape(-1, k)
    perms = [np.eye(m, dtype=f._value.dtype)[:, _perm_of(p, m)] for p in piv]
    p_mat = C.tensor(np.stack(perms).reshape(shape[:-2] + (m, m))) if unpack_pivots else C.empty(0, dtype=f.dtype)
    if not unpack_data:
        return _lu_unpack_t(p_mat, C.empty(0, dtype=f.dtype), C.empty(0, dtype=f.dtype))
    eye = np.eye(m, k, dtype=f._value.dtype)

    def values(v):
        lo = fnp.add(fnp.tril(v[..., :, :k], -1), eye)
        return lo, fnp.triu(v[..., :k, :])
    lo, up = call("LuUnpackBackward0", values, (f,))
    return _lu_unpack_t(p_mat, lo, up)


def lu_solve(b: Tensor, LU_data: Tensor, LU_pivots: Tensor):
    """The solution X of A X = b from lu's factors of A (LinalgLuSolveBackward0).

    Args:
        b: (*, n, k) right-hand sides.
        LU_data: (*, n, n) from torch.lu.
        LU_pivots: (*, n) from torch.lu.

    Returns:
        A Tensor (*, n, k).
    """
    bb = _input("lu_solve", b)
    p, lo, up = lu_unpack(LU_data, LU_pivots)

    def values(bv, pv, lv, uv):
        y = fnp.linalg.solve(lv, fnp.matmul(_mT(pv), bv))
        return fnp.linalg.solve(uv, y)
    return call("LinalgLuSolveBackward0", values, (bb, p, lo, up))


def _removed(name: str, advice: str):
    def op(*args, **kwargs):
        raise FgradRuntimeError(f"This function was deprecated since version 1.9 and is now removed. {advice}")
    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"torch.{name}: removed from PyTorch (1.9); raises RuntimeError saying what replaces it, as "
                  f"PyTorch 2's does.\n\nArgs:\n    *args: ignored.\n\nReturns:\n    Never returns.")
    return op


lstsq = _removed("lstsq", "`torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`; it has reversed arguments "
                          "and does not return the QR decomposition.")
solve = _removed("solve", "`torch.solve` is deprecated in favor of `torch.linalg.solve`, which has its arguments "
                          "reversed and does not return the LU factorization (see `torch.lu`).")
eig = _removed("eig", "`torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` rather than real "
                      "tensors mimicking complex tensors; use `torch.linalg.eigvals(A)` for the eigenvalues.")
symeig = _removed("symeig", "Use `torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')` for the eigenvalues and "
                            "`torch.linalg.eigh(A, UPLO=...)` for both.")
matrix_rank = _removed("matrix_rank", "Please use the `torch.linalg.matrix_rank` function instead. The parameter "
                                      "'symmetric' was renamed in `torch.linalg.matrix_rank()` to 'hermitian'.")


_geqrf_t = O.result_type("geqrf", ("a", "tau"))


def geqrf(input: Tensor):
    """LAPACK's geqrf: the QR factorisation packed as R above the diagonal and the Householder
    vectors below it, with their scale factors tau (not differentiable, as PyTorch's).

    Args:
        input: (*, m, n).

    Returns:
        torch.return_types.geqrf(a, tau).
    """
    a = _input("geqrf", input)
    if a.dim() < 2:
        raise FgradRuntimeError(f"torch.geqrf: input must have at least 2 dimensions. (got {a.dim()})")
    v = np.asarray(a.detach().numpy())
    batch = v.shape[:-2]
    flat = v.reshape((-1,) + v.shape[-2:])
    hs, taus = [], []
    for m in flat:
        h, tau = np.linalg.qr(m, mode="raw")
        hs.append(h.T)
        taus.append(tau)
    return _geqrf_t(C.tensor(np.stack(hs).reshape(v.shape) if flat.shape[0] else v.copy()),
                    C.tensor(np.stack(taus).reshape(batch + (min(v.shape[-2:]),)) if flat.shape[0]
                             else np.zeros(batch + (min(v.shape[-2:]),), v.dtype)))


def orgqr(input: Tensor, tau: Tensor):
    """The Q of geqrf's packed factors: linalg.householder_product(input, tau).

    Args:
        input: (*, m, n) geqrf's packed reflectors.
        tau: (*, k) their scale factors.

    Returns:
        Q, a Tensor (*, m, n).
    """
    return _linalg.householder_product(_input("orgqr", input), tau)


def ormqr(input: Tensor, tau: Tensor, other: Any, left: bool = True, transpose: bool = False):
    """`other` multiplied by the Q of geqrf's packed factors (input, tau): Q other, Q^H other,
    other Q or other Q^H (OrmqrBackward0).

    Args:
        input: (*, m, k) the packed Householder vectors.
        tau: (*, k) their scale factors.
        other: (*, m, n) when `left`, else (*, n, m).
        left: multiply from the left.
        transpose: use Q's conjugate transpose.

    Returns:
        A Tensor of other's shape.
    """
    a = _input("ormqr", input)
    m = a._value.shape[-2]
    k = a._value.shape[-1]
    # Q (m, m): the product of the k reflectors, padded to square for the complete factor
    pad = O.cat([a, C.zeros(tuple(a._value.shape[:-1]) + (max(m - k, 0),), dtype=a.dtype)], -1) if m > k else a
    tau_full = O.cat([tau, C.zeros(tuple(tau._value.shape[:-1]) + (max(m - tau._value.shape[-1], 0),),
                                   dtype=tau.dtype)], -1) if m > tau._value.shape[-1] else tau
    q = _linalg.householder_product(pad, tau_full)
    if transpose:
        q = O.conj(O.transpose(q, -2, -1))
    out = O.matmul(q, other) if left else O.matmul(other, q)
    return call("OrmqrBackward0", fnp.copy, (out,)) if out._node is not None else out


def _mH(t):
    return O.conj(O.transpose(t, -2, -1))


def _mm(a, b):
    if a is None:
        return b
    if getattr(a, "is_sparse", False):
        return S.mm(a, b)
    return O.matmul(a, b)


def _approximate_basis(A, q: int, niter: int, M=None):
    """Q with q orthonormal columns such that Q Q^H (A - M) approximates A - M: a random
    Gaussian test matrix from the default generator (torch's stream), then niter subspace
    iterations, each orthonormalised by QR (Halko, Martinsson and Tropp 2009, algorithm 4.4)."""
    dt = A.dtype if A.dtype in (D.float16, D.float32, D.float64) or A.is_complex() else D.float32
    R = C.randn(A.shape[-1], q, dtype=dt)
    X = _mm(A, R)
    if M is not None:
        X = O.sub(X, _mm(M, R))
    Q = _linalg.qr(X)[0]
    for _ in range(niter):
        X = _mm(_mH(A), Q)
        if M is not None:
            X = O.sub(X, _mm(_mH(M), Q))
        Q = _linalg.qr(X)[0]
        X = _mm(A, Q)
        if M is not None:
            X = O.sub(X, _mm(M, Q))
        Q = _linalg.qr(X)[0]
    return Q


def _svd_lowrank(A, q, niter, M):
    m, n = A.shape[-2:]
    if M is not None:
        M = O.broadcast_to(M, tuple(A.shape))
    if m < n:
        A = _mH(A)
        M = None if M is None else _mH(M)
    Q = _approximate_basis(A, q, niter, M)
    B = _mm(_mH(Q), A)
    if M is not None:
        B = O.sub(B, _mm(_mH(Q), M))
    U, S, Vh = _linalg.svd(B, full_matrices=False)
    V = _mH(Vh)
    U = O.matmul(Q, U)
    if m < n:
        U, V = V, U
    return U, S, V


def svd_lowrank(A: Tensor, q: int | None = 6, niter: int | None = 2, M: Tensor | None = None):
    """An approximate SVD (U, S, V) of A - M (M = 0 when None) with q singular triplets, A ~ U
    diag(S) V^H, by randomized subspace iteration (Halko et al. 2009, algorithm 5.1), drawing its
    test matrix from the default generator as torch.svd_lowrank does (so one seed gives
    PyTorch's result).

    Args:
        A: (*, m, n), dense or sparse.
        q: the rank computed, a slight overestimate of A's.
        niter: subspace iterations (2 by default).
        M: (*, 1 or m, n) subtracted from A, or None.

    Returns:
        (U (*, m, q), S (*, q), V (*, n, q)).
    """
    a = A if getattr(A, "is_sparse", False) else _input("svd_lowrank", A, "A")
    return _svd_lowrank(a, 6 if q is None else q, 2 if niter is None else niter, M)


def pca_lowrank(A: Tensor, q: int | None = None, center: bool = True, niter: int = 2):
    """Principal component analysis of the rows of A by svd_lowrank, of A with its column
    means removed when `center` (torch.pca_lowrank's algorithm and random stream).

    Args:
        A: (*, m, n), dense (or sparse 2-D, not centred).
        q: the number of components (min(6, m, n) by default), at most min(m, n).
        center: remove the column means first.
        niter: subspace iterations.

    Returns:
        (U, S, V): A - mean ~ U diag(S) V^H; V's columns are the principal directions.
    """
    a = A if getattr(A, "is_sparse", False) else _input("pca_lowrank", A, "A")
    m, n = a.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not 0 <= q <= min(m, n):
        raise FgradValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise FgradValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(a, q, niter, None)
    if getattr(a, "is_sparse", False):
        raise FgradValueError("pca_lowrank: centring a sparse input is not supported; pass center=False or a dense "
                              "tensor")
    return _svd_lowrank(O.sub(a, O.mean(a, -2, keepdim=True)), q, niter, None)


# --- control flow (eager, as PyTorch runs it outside torch.compile) -------------------------------------

def cond(pred: Any, true_fn: Callable, false_fn: Callable, operands: Any = ()):
    """true_fn(*operands) when `pred` holds, else false_fn(*operands) (PyTorch's eager cond).

    Args:
        pred: a bool, or a one-element Tensor.
        true_fn, false_fn: functions of the operands returning the same structure.
        operands: a tuple or list of operands.

    Returns:
        The chosen function's result.
    """
    if isinstance(pred, Tensor):
        if pred._value.size != 1:
            raise FgradRuntimeError(f"cond(): expected pred to be a bool or a one-element tensor, got shape "
                                    f"{tuple(pred._value.shape)}")
        pred = bool(pred.item())
    if not isinstance(operands, (tuple, list)):
        raise FgradRuntimeError(f"cond(): expected operands to be a tuple or list, got {type(operands).__name__}")
    return (true_fn if pred else false_fn)(*operands)


def while_loop(cond_fn: Callable, body_fn: Callable, carried_inputs: Any):
    """Runs `carried = body_fn(*carried)` while cond_fn(*carried) holds (PyTorch's eager
    while_loop); returns the final carried values as a tuple.

    Args:
        cond_fn: carried values -> a bool or one-element bool Tensor.
        body_fn: carried values -> new carried values of the same structure.
        carried_inputs: a tuple or list of the initial values.

    Returns:
        A tuple.
    """
    if not isinstance(carried_inputs, (tuple, list)):
        raise FgradRuntimeError(f"while_loop(): carried_inputs must be a tuple or list, got "
                                f"{type(carried_inputs).__name__}")
    carried = tuple(carried_inputs)
    while bool(cond_fn(*carried)):
        out = body_fn(*carried)
        carried = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    return carried


# --- runtime queries --------------------------------------------------------------------------------------

class finfo:
    """The numeric limits of a float dtype: bits, eps, max, min, tiny (= smallest_normal),
    resolution, dtype (its name). finfo() is the default dtype's."""

    def __init__(self, type=None) -> None:
        d = D.get_default_dtype() if type is None else type
        if not isinstance(d, D.dtype) or D.np_dtype(d).kind not in "fc":
            raise FgradTypeError(f"torch.finfo() requires a floating point input type. Use torch.iinfo to handle "
                                 f"'{d}'")
        info = np.finfo(D.np_dtype(d))
        self.bits = int(info.bits)
        self.eps, self.max, self.min = float(info.eps), float(info.max), float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -int(info.precision)
        self.dtype = str(np.dtype(info.dtype))

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """The limits of an integer dtype (or bool): bits, max, min, dtype (its name)."""

    def __init__(self, type) -> None:
        if not isinstance(type, D.dtype) or D.np_dtype(type).kind not in "biu":
            raise FgradTypeError(f"torch.iinfo() requires an integer input type. Use torch.finfo to handle '{type}'")
        npd = D.np_dtype(type)
        if npd.kind == "b":
            self.bits, self.min, self.max = 8, 0, 1
        else:
            info = np.iinfo(npd)
            self.bits, self.min, self.max = int(info.bits), int(info.min), int(info.max)
        self.dtype = str(npd)

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"


_warn_always = [False]


def set_warn_always(b: bool) -> None:
    """Whether warnings that PyTorch issues once per process are issued every time (a flag
    that fgrad's own one-time warnings read through is_warn_always_enabled).

    Args:
        b: the flag.

    Returns:
        None.
    """
    _warn_always[0] = bool(b)


def is_warn_always_enabled() -> bool:
    """The flag set_warn_always sets (False by default).

    Returns:
        bool.
    """
    return _warn_always[0]


def set_deterministic_debug_mode(debug_mode: Any) -> None:
    """use_deterministic_algorithms by level: 0 / "default" off, 1 / "warn" warn only, 2 /
    "error" on.

    Args:
        debug_mode: 0, 1, 2 or "default", "warn", "error".
    """
    levels = {"default": 0, "warn": 1, "error": 2, 0: 0, 1: 1, 2: 2}
    if debug_mode not in levels:
        raise FgradRuntimeError(f"invalid value of debug_mode, expected one of `default`, `warn`, `error`, but "
                                f"got {debug_mode}")
    level = levels[debug_mode]
    _runtime.use_deterministic_algorithms(level > 0, warn_only=level == 1)


def get_deterministic_debug_mode() -> int:
    """0 (off), 1 (warn only) or 2 (on): see set_deterministic_debug_mode.

    Returns:
        0, 1 or 2.
    """
    if not _runtime.are_deterministic_algorithms_enabled():
        return 0
    return 1 if _runtime.is_deterministic_algorithms_warn_only_enabled() else 2


def set_flush_denormal(mode: bool) -> bool:
    """Whether flushing denormal floats to zero could be set: False, as NumPy offers no such
    switch (PyTorch also returns False where the CPU has none); nothing changes.

    Args:
        mode: whether to flush denormals.

    Returns:
        False.
    """
    return False


def init_num_threads() -> None:
    """PyTorch's per-thread OpenMP initialisation: NumPy's threads need none.

    Returns:
        None.
    """


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Turn anomaly detection on or off for the rest of the program (detect_anomaly's state).

    Args:
        enabled: turn anomaly detection on.
        check_nan: check each rule's results for NaN.

    Returns:
        None.
    """
    _set_detect_anomaly(enabled, check_nan)


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether an autocast region is active (torch.amp's).

    Args:
        device_type: the device ('cuda', 'cpu'), or None.

    Returns:
        bool.
    """
    return _amp.is_autocast_enabled(device_type)


def autocast_increment_nesting() -> int:
    """One more level of autocast nesting (autocast regions count themselves too).

    Returns:
        The new nesting level.
    """
    _amp._AUTOCAST["nesting"] += 1
    return _amp._AUTOCAST["nesting"]


def autocast_decrement_nesting() -> int:
    """One level of autocast nesting less (PyTorch lets it go below 0, and so does this).

    Returns:
        The new nesting level.
    """
    _amp._AUTOCAST["nesting"] -= 1
    return _amp._AUTOCAST["nesting"]


_AUTOCAST_CACHE = [True]


def is_autocast_cache_enabled() -> bool:
    """Whether autocast may cache its casts of leaf tensors (fgrad's autocast casts nothing,
    so nothing is cached either way); True by default.

    Returns:
        bool.
    """
    return _AUTOCAST_CACHE[0]


def set_autocast_cache_enabled(enabled: bool) -> None:
    """Sets the flag is_autocast_cache_enabled reads.

    Args:
        enabled: the flag.
    """
    _AUTOCAST_CACHE[0] = bool(enabled)


def clear_autocast_cache() -> None:
    """Empties autocast's cache of casts: fgrad's autocast keeps none, so there is nothing to drop."""


def set_default_tensor_type(t: Any) -> None:
    """The default float dtype from a legacy tensor type (torch.DoubleTensor or its name);
    PyTorch deprecates it for set_default_dtype.

    Args:
        t: a float tensor type or its name, e.g. "torch.FloatTensor".
    """
    name = t if isinstance(t, str) else getattr(t, "__name__", str(t))
    names = {"FloatTensor": D.float32, "DoubleTensor": D.float64, "HalfTensor": D.float16}
    key = name.rsplit(".", 1)[-1]
    if key not in names:
        raise FgradTypeError(f"only floating-point types are supported as the default type (got {name})")
    warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                  "torch.set_default_dtype() instead", UserWarning, stacklevel=2)
    D.set_default_dtype(names[key])


has_spectral = True  # (torch.fft and stft are available)


def to_dlpack(tensor: Tensor):
    """A DLPack capsule over the tensor's values (shared, as PyTorch's; on the CPU).

    Args:
        tensor: a Tensor.

    Returns:
        A PyCapsule named "dltensor".
    """
    return np.asarray(_input("to_dlpack", tensor, "tensor").detach().numpy()).__dlpack__()


def from_file(filename: str, shared: bool | None = None, size: int = 0, *, dtype: Any = None, **kwargs):
    """A 1-D tensor of `size` elements read from the binary file `filename` (its raw bytes as
    `dtype`, the default dtype by default). shared=True maps the file (writes go to it).

    Args:
        filename: the file's path.
        shared: map the file instead of reading it.
        size: the number of elements.
        dtype: the elements' dtype.

    Returns:
        A Tensor.
    """
    npd = D.np_dtype(dtype or D.get_default_dtype())
    need = size * npd.itemsize
    have = os.path.getsize(filename) if os.path.exists(filename) else -1
    if have < need:
        raise FgradRuntimeError(f"from_file: the file {filename!r} has {max(have, 0)} bytes, {need} are needed for "
                                f"{size} elements of {npd}")
    if shared:
        return C.from_numpy(np.memmap(filename, dtype=npd, mode="r+", shape=(size,)))
    return C.tensor(np.fromfile(filename, dtype=npd, count=size))


# torch's symbolic-shape helpers: on plain Python numbers (eager mode) they are these
def sym_float(a: Any):
    """float(a) (a symbolic float under torch.compile's tracing; a float here).

    Args:
        a: a number.

    Returns:
        A float.
    """
    return float(a)


def sym_int(a: Any):
    """int(a), rounding towards zero.

    Args:
        a: a number.

    Returns:
        An int.
    """
    return int(a)


def sym_max(a: Any, b: Tensor):
    """max(a, b).

    Args:
        a, b: numbers.

    Returns:
        The larger.
    """
    return a if a >= b else b


def sym_min(a: Any, b: Tensor):
    """min(a, b).

    Args:
        a, b: numbers.

    Returns:
        The smaller.
    """
    return a if a <= b else b


def sym_not(a: Any):
    """not a.

    Args:
        a: a bool.

    Returns:
        bool.
    """
    return not a


def sym_sqrt(a: Any):
    """math.sqrt(a).

    Args:
        a: a non-negative number.

    Returns:
        A float.
    """
    return math.sqrt(a)


def sym_ite(b: Tensor, t: Any, f: Any):
    """t if b else f.

    Args:
        b: the condition.
        t: the value when it holds.
        f: the value otherwise.

    Returns:
        t or f.
    """
    return t if b else f


def sym_sum(args: Any):
    """sum(args), starting from 0.

    Args:
        args: an iterable of numbers.

    Returns:
        Their sum.
    """
    total = 0
    for a in args:
        total = total + a
    return total


def sym_constrain_range(size: Sequence[int], min: int | None = None, max: int | None = None) -> None:
    """Checks that the int `size` lies in [min, max] (unbounded where None); on plain numbers
    (eager mode) that is all torch's shape-constraint hint does.

    Args:
        size: an int.
        min, max: the bounds, or None.
    """
    lo = -(2 ** 63) if min is None else int(min)
    hi = 2 ** 63 - 1 if max is None else int(max)
    if not lo <= int(size) <= hi:
        raise FgradRuntimeError(f"Invalid value range for {size} between [{lo}, {hi}].")


def sym_constrain_range_for_size(size: Sequence[int], min: int | None = None, max: int | None = None) -> None:
    """sym_constrain_range for a size: min defaults to 0.

    Args:
        size: an int.
        min: the lower bound (0 when None).
        max: the upper bound, or None.

    Returns:
        None.
    """
    sym_constrain_range(size, 0 if min is None else min, max)


def sym_fresh_size(expr: Any):
    """`expr` itself (a fresh symbolic size under tracing; a plain number here).

    Args:
        expr: a number.

    Returns:
        expr.
    """
    return expr


def thread_safe_generator(gen_func: Callable):
    """A decorator making a generator function's generators safe to advance from several
    threads (each next() under one lock), as torch.thread_safe_generator.

    Args:
        gen_func: a generator function.

    Returns:
        The wrapped function.
    """

    @functools.wraps(gen_func)
    def wrapper(*args, **kwargs):
        gen, lock = gen_func(*args, **kwargs), threading.Lock()

        class _Locked:
            def __iter__(self):
                return self

            def __next__(self):
                with lock:
                    return next(gen)
        return _Locked()
    return wrapper


GradScaler = _amp.GradScaler

has_lapack = True  # (NumPy's LAPACK: torch.linalg runs on it)

__all__ = [n for n, v in list(globals().items()) if not n.startswith("_") and getattr(v, "__module__", None) == __name__
           ] + ["has_lapack", "has_spectral", "GradScaler", "is_inference_mode_enabled", "AcceleratorError",
                "FatalError", "OutOfMemoryError"]
