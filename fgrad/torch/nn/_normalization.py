"""Normalisation and embedding functions of fgrad.torch.nn.functional: layer_norm, group_norm,
instance_norm, rms_norm, normalize, local_response_norm, embedding, embedding_bag. Each is
a composition of fgrad ops (means, variances, gathers), so every derivative order works.
On Tensors each is one torch op (one node, named as PyTorch's or as the last op of PyTorch's
composition); running statistics and max_norm renormalisation happen outside it."""
from __future__ import annotations

import numpy as np

from ... import numpy as fnp
from ...api import stop_gradient
from ...core.errors import FgradNotImplementedError, FgradRuntimeError, FgradValueError
from ...core.trace import Tracer
from .._tensor.grad_mode import no_grad
from .._tensor.tensor import Tensor, wrap
from ._pool3d import avg_pool3d
from ._pool_functional import avg_pool2d
from ._spatial import pad
from .._tensor._scalar_ops import add_scalar
from ._util import (
    arr,
    concrete_or_none,
    dtype,
    float_input,
    has_tensor,
    on_tensors,
    shape,
    torch_call,
    torch_op,
    val,
)


def _normalize_over(x, axes: tuple, eps: float):
    mean = fnp.mean(x, axis=axes, keepdims=True)
    centered = fnp.subtract(x, mean)
    var = fnp.mean(fnp.square(centered), axis=axes, keepdims=True)
    return fnp.divide(centered, fnp.sqrt(fnp.add(var, eps)))


@torch_op("NativeLayerNormBackward0", operands=("input", "weight", "bias"))
def layer_norm(input, normalized_shape, weight=None, bias=None, eps: float = 1e-5):
    """(x - mean) / sqrt(var + eps) over the last len(normalized_shape) dimensions (biased
    variance, as PyTorch), then * weight + bias."""
    x = arr(input, "layer_norm")
    float_input("layer_norm", x)
    ns = (int(normalized_shape),) if isinstance(normalized_shape, (int, np.integer)) else tuple(normalized_shape)
    xs = shape(x)
    if not ns or xs[len(xs) - len(ns):] != ns:
        raise FgradRuntimeError(f"Given normalized_shape={list(ns)}, expected input with shape [*, "
                           f"{', '.join(map(str, ns))}], but got input of size{list(xs)}")
    y = _normalize_over(x, tuple(range(len(xs) - len(ns), len(xs))), eps)
    if weight is not None:
        y = fnp.multiply(y, weight)
    if bias is not None:
        y = fnp.add(y, bias)
    return y


@on_tensors
def rms_norm(input, normalized_shape, weight=None, eps: float | None = None):
    """x * rsqrt(mean(x²) + eps) over the trailing normalized_shape dims, then * weight: PyTorch's
    composition of torch ops (MulBackward0 over the input and RsqrtBackward0 of AddBackward1 of
    MeanBackward1 of PowBackward0; a half-precision input is computed in float32 and cast
    back). eps defaults to the machine epsilon of the computing dtype, as PyTorch's."""
    float_input("rms_norm", input)
    ns = (int(normalized_shape),) if isinstance(normalized_shape, (int, np.integer)) else tuple(normalized_shape)
    xs = tuple(input.shape)
    if len(ns) > len(xs) or xs[len(xs) - len(ns):] != ns:
        raise FgradRuntimeError(f"rms_norm: given normalized_shape={list(ns)}, expected input with shape "
                                f"[*, {', '.join(map(str, ns))}], but got input of size {list(xs)}")
    low = dtype(input).itemsize < 4  # (float16, bfloat16: PyTorch computes in float32)
    x = input.float() if low else input
    if eps is None:
        eps = float(np.finfo(dtype(x)).eps)
    dims = tuple(range(len(xs) - len(ns), len(xs)))
    y = x.mul(add_scalar(x.pow(2).mean(dims, keepdim=True), eps).rsqrt())
    if low:
        y = y.type_as(input)
    return y.mul(weight) if weight is not None else y


def _channel_shape(xs: tuple) -> tuple:
    return (1, xs[1]) + (1,) * (len(xs) - 2)


@torch_op("NativeGroupNormBackward0", operands=("input", "weight", "bias"))
def group_norm(input, num_groups: int, weight=None, bias=None, eps: float = 1e-5):
    """Normalise each group of num_groups channels over its channels and spatial dims."""
    x = arr(input, "group_norm")
    float_input("group_norm", x)
    xs = shape(x)
    if len(xs) < 2 or xs[1] % num_groups:
        raise FgradRuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(xs)} and num_groups={num_groups}")
    g = fnp.reshape(x, (xs[0], num_groups, -1))
    y = fnp.reshape(_normalize_over(g, (2,), eps), xs)
    if weight is not None:
        y = fnp.multiply(y, fnp.reshape(weight, _channel_shape(xs)))
    if bias is not None:
        y = fnp.add(y, fnp.reshape(bias, _channel_shape(xs)))
    return y


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats: bool = True, momentum: float = 0.1, eps: float = 1e-5):
    """Normalise each (example, channel) over its spatial dims; with running statistics when
    use_input_stats is False (tracked ones are updated when given and use_input_stats).
    PyTorch's composition of torch ops: a batch norm of the input viewed as [1, N * C, *spatial],
    with weight, bias and running statistics repeated N times, viewed back (ViewBackward0 of
    NativeBatchNormBackward0 of ViewBackward0 and RepeatBackward0s); each running statistic
    then takes the mean of its N updated copies. Arrays and tracers run the same composition."""
    from .functional import batch_norm  # (nn.functional imports this module)
    on_values = not has_tensor((input, weight, bias))
    x, w, b = (None if a is None else _as_tensor(a) for a in (input, weight, bias))
    float_input("instance_norm", x)
    xs = tuple(x.shape)
    if len(xs) < 3:
        raise FgradValueError(f"instance_norm: expected an input [N, C, *spatial] with spatial dims, got shape {list(xs)}")
    if not use_input_stats and (running_mean is None or running_var is None):
        raise FgradValueError("Expected running_mean and running_var to be defined when use_input_stats is false")
    n, c = xs[0], xs[1]
    rm, rv, w, b = (None if a is None else _as_tensor(a).repeat(n) for a in (running_mean, running_var, w, b))
    out = batch_norm(x.contiguous().view(1, n * c, *xs[2:]), rm, rv, w, b, use_input_stats, momentum, eps)
    if use_input_stats:
        for buf, copies in ((running_mean, rm), (running_var, rv)):
            if buf is not None:
                _store(buf, copies.view(n, c).mean(0))
    y = out.view(xs)
    return y._value if on_values else y


def _as_tensor(a):
    """a as a Tensor (an array or tracer wrapped, needing no grad)."""
    return a if isinstance(a, Tensor) else wrap(arr(a, "instance_norm"))


def _store(buf, new) -> None:
    """The running statistic `buf` (a Tensor or an array) := new, in place and outside any graph;
    skipped while staging (jit/vmap), where values are abstract."""
    v = concrete_or_none(new)
    if v is None:
        return
    if isinstance(buf, Tensor):
        with no_grad():
            buf.copy_(new)
    elif not isinstance(buf, Tracer):
        buf[...] = np.asarray(v).astype(buf.dtype, copy=False)


@on_tensors
def normalize(input, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out=None):
    """x / max(‖x‖_p, eps) along dim, as PyTorch's composition of torch ops (DivBackward0 over
    the input and ExpandBackward0 of ClampMinBackward0 of LinalgVectorNormBackward0)."""
    if not input.dim():
        return input / input.abs().clamp_min(eps)
    return input / input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)


@on_tensors
def local_response_norm(input, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0):
    """x / (k + alpha/size * (sum of x² over `size` neighbouring channels))**beta, as PyTorch's
    composition of torch ops (the windowed mean of x² is an average pooling of the padded
    squares: DivBackward0 over the input and PowBackward0 of AddBackward0 of MulBackward0 ...)."""
    dim = input.dim()
    if dim < 3:
        raise FgradValueError(f"Expected 3D or higher dimensionality input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    div = input.mul(input)
    if dim == 3:
        div = pad(div.unsqueeze(1), (0, 0, size // 2, (size - 1) // 2))
        div = avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = tuple(input.shape)
        div = div.view(sizes[0], 1, sizes[1], sizes[2], -1)
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1).view(sizes)
    return input / div.mul(alpha).add(k).pow(beta)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False):
    """weight[input]; the row at padding_idx gets no gradient. With max_norm, the rows used
    are renormalised in place first (as PyTorch, outside the graph)."""
    c = concrete_or_none(input)
    if c is not None and np.asarray(c).dtype.kind not in "iu":
        raise FgradRuntimeError(f"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {dtype(input)} instead (while checking arguments for embedding)")
    n = shape(weight)[0]
    if padding_idx is not None:
        if not -n <= padding_idx < n:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx %= n
    if scale_grad_by_freq:
        raise FgradNotImplementedError("embedding: scale_grad_by_freq=True is not supported by fgrad; leave it False")
    if max_norm is not None and c is not None:
        _renorm_rows(weight, np.unique(np.asarray(c)), max_norm, norm_type)
    # the indices are a constant of the op: PyTorch's EmbeddingBackward0 has one edge, to weight
    return torch_call("EmbeddingBackward0", _embedding, (weight,), {"idx": val(input), "padding_idx": padding_idx})


def _embedding(weight, idx, padding_idx):
    w = weight
    if padding_idx is not None:
        n = shape(weight)[0]
        rows = np.arange(n).reshape((n,) + (1,) * (len(shape(weight)) - 1)) == padding_idx
        w = fnp.where(rows, stop_gradient(weight), weight)
    return fnp.take(w, idx, axis=0)


def _renorm_rows(weight, rows, max_norm: float, norm_type: float) -> None:
    w = np.asarray(val(weight)) if not hasattr(val(weight), "__cuda_array_interface__") else val(weight)
    norms = np.linalg.norm(w[rows], ord=norm_type, axis=1)
    scale = np.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0).astype(w.dtype)
    w[rows] *= scale[:, None]
    if hasattr(weight, "_vbox"):
        weight._vbox[0] += 1


def _bags(idx: np.ndarray, offsets, include_last_offset: bool) -> tuple:
    """(flat indices, start and length of each bag) from a 2-D input (one bag a row) or a 1-D
    input cut at `offsets` (bag b is flat[offsets[b]:offsets[b + 1]], the last one running to
    the end unless include_last_offset, where offsets' last entry ends it)."""
    if idx.ndim == 2:
        if offsets is not None:
            raise FgradValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                                  "fixed length sequences.")
        n_bags, length = idx.shape
        return idx.reshape(-1), np.arange(n_bags, dtype=np.int64) * length, np.full(n_bags, length, np.int64)
    if offsets is None:
        raise FgradValueError("offsets has to be a 1D Tensor but got None")
    off = np.asarray(concrete_or_none(offsets)).reshape(-1).astype(np.int64)
    ends = off[1:] if include_last_offset else np.append(off[1:], idx.size)
    starts = off[:-1] if include_last_offset else off
    return idx, starts, np.maximum(ends - starts, 0)


def _bag_max(rows, seg, pos_in_bag, lengths, dim: int):
    """Per bag and column, the row holding the maximum (the first one among ties, as PyTorch's
    CPU kernel), gathered so that the gradient reaches exactly that row: the rows are laid out
    as [bag, position, column] (one gather, padding slots -inf), argmax over positions picks the
    row and take_along_axis reads it. Empty bags give 0."""
    n_bags, width = lengths.size, max(int(lengths.max(initial=0)), 1)  # >= 1 slot: argmax needs one
    m = shape(rows)[0]
    slots = np.full((n_bags, width), m, np.int64)      # slot m: the -inf padding row
    slots[seg, pos_in_bag] = np.arange(m)
    padded = fnp.concatenate([rows, fnp.full((1, dim), -np.inf, dtype(rows))], axis=0)
    dense = fnp.take(padded, slots, axis=0)            # [bags, width, dim]
    first = fnp.expand_dims(fnp.argmax(stop_gradient(dense), axis=1), 1)
    out = fnp.squeeze(fnp.take_along_axis(dense, first, axis=1), 1)
    return fnp.where((lengths == 0)[:, None], 0.0, out)


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type: float = 2, scale_grad_by_freq: bool = False,
                  mode: str = "mean", sparse: bool = False, per_sample_weights=None, include_last_offset: bool = False,
                  padding_idx=None):
    """Sums, means or maxima of embedding rows per bag: rows of a 2-D input, or the 1-D input
    cut at `offsets`. Entries equal to padding_idx are left out of their bag (of its count for
    the mean, of its maximum); an empty bag gives zeros. Vectorised: one gather of the used
    rows, then a segment sum (scatter-add, whose transpose is a gather, so gradients are exact)
    for sum and mean, or the per-bag argmax's row for max (its gradient goes to that row only,
    the first among ties, as PyTorch's)."""
    if mode not in ("sum", "mean", "max"):
        raise FgradValueError(f"mode has to be one of sum, mean or max, got {mode!r}")
    if per_sample_weights is not None and mode != "sum":
        raise FgradNotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                       f"supported for mode='sum' (got mode='{mode}'). Please open a feature request "
                                       "on GitHub.")
    if max_norm is not None:  # the rows used are renormalised in place, outside the graph
        c = concrete_or_none(input)
        if c is not None:
            _renorm_rows(weight, np.unique(np.asarray(c)), max_norm, norm_type)
    # PyTorch's one node EmbeddingBagBackward0, with edges to weight and per_sample_weights
    return torch_call("EmbeddingBagBackward0", _embedding_bag, (weight, per_sample_weights),
                      {"idx": val(input), "offsets": val(offsets), "mode": mode,
                       "include_last_offset": include_last_offset, "padding_idx": padding_idx}, (0, 1))


def _embedding_bag(weight, per_sample_weights, idx, offsets, mode, include_last_offset, padding_idx):
    """embedding_bag over plain values (see embedding_bag)."""
    input = idx
    flat, starts, lengths = _bags(np.asarray(concrete_or_none(input)), offsets, include_last_offset)
    n_bags, dim = lengths.size, shape(weight)[1]
    # every bag's entries, in order: position in flat, bag, position within the bag
    seg = np.repeat(np.arange(n_bags, dtype=np.int64), lengths)
    pos_in_bag = np.arange(seg.size, dtype=np.int64) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    pos = starts[seg] + pos_in_bag
    if padding_idx is not None:
        keep = flat[pos] != padding_idx % shape(weight)[0]
        pos, seg = pos[keep], seg[keep]
        lengths = np.bincount(seg, minlength=n_bags).astype(np.int64)
        pos_in_bag = np.arange(seg.size, dtype=np.int64) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    rows = embedding(flat[pos], weight, padding_idx)
    if mode == "max":
        return _bag_max(rows, seg, pos_in_bag, lengths, dim)
    if per_sample_weights is not None:
        psw = fnp.take(fnp.reshape(per_sample_weights, (-1,)), pos, axis=0)
        rows = fnp.multiply(rows, fnp.expand_dims(psw, -1))
    sums = fnp.at_add(fnp.zeros((n_bags, dim), dtype(rows)), seg, rows)
    if mode == "sum":
        return sums
    return fnp.divide(sums, np.maximum(lengths, 1).astype(dtype(rows))[:, None])


__all__ = ["layer_norm", "rms_norm", "group_norm", "instance_norm", "normalize", "local_response_norm", "embedding",
           "embedding_bag"]
