"""Attention in fgrad.torch.nn.functional: scaled_dot_product_attention and
multi_head_attention_forward (the computation behind nn.MultiheadAttention), with PyTorch's
argument conventions, masks and exception messages.

Both are compositions of fgrad ops (batched matmuls, softmax, where), so every derivative
order works and the functions accept Tensors, arrays and tracers. On Tensors each is one
torch op (one node; sdpa's is PyTorch's CPU kernel's, ScaledDotProductFlashAttentionForCpuBackward0),
whose dropout masks are drawn once and replayed when create_graph reruns it.

Masks, as in PyTorch:
  * scaled_dot_product_attention: a boolean attn_mask marks the positions that TAKE PART
    (True = attend); a float mask is added to the scores. A query whose every key is masked
    gets a zero output (and zero gradients), as PyTorch's CPU kernels give.
  * multi_head_attention_forward: boolean masks mark the positions that are NOT allowed
    (True = ignore), for attn_mask and key_padding_mask alike; float masks are added. A query
    with every key masked gets NaN when the weights are asked for (need_weights=True), as in
    PyTorch, and 0 otherwise (the path through scaled_dot_product_attention).
"""
from __future__ import annotations

import inspect
import math

import numpy as np

from ... import numpy as fnp
from ...core.errors import FgradRuntimeError
from ...core.trace import xp_of
from ...extend import nn as nnops
from ...extend.lax import concatenate, reshape, transpose
from ...extend.lax import slice as _slice
from .._tensor.tensor import Tensor
from ._spatial import fixed_draws
from ._util import arr, dtype, has_tensor, shape, torch_call, val
from .functional import dropout, linear

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward"]


def _mask_value(mask):
    """The NumPy value of a constant mask (the usual case), else None: a traced mask, or a
    Tensor that requires grad, keeps its derivative by staying a value of the graph."""
    if isinstance(mask, Tensor):
        return None if mask.requires_grad else _numpy(mask._value)
    return _numpy(mask)


def _numpy(v):
    return v if isinstance(v, np.ndarray) else None


def _on_device_of(ref, a):
    """A NumPy constant on the device of ref's value (CuPy arrays take CuPy operands)."""
    xp = xp_of((val(ref),))
    return a if xp is np or not isinstance(a, np.ndarray) else xp.asarray(a)


def _additive(mask, dt, allow_is_true: bool):
    """A float mask to add to the scores: booleans become 0 / -inf (True means "attend" when
    allow_is_true, "ignore" otherwise); float masks pass, cast to the scores' dtype."""
    mask = arr(mask, "attention mask")
    m = _mask_value(mask)
    if dtype(mask) == np.bool_:
        if m is None:
            keep = mask if allow_is_true else fnp.logical_not(mask)
            return fnp.where(keep, np.zeros((), dt), np.array(-np.inf, dt))
        keep = m if allow_is_true else ~m
        return np.where(keep, dt.type(0), dt.type(-np.inf)).astype(dt)
    if m is not None:
        return np.asarray(m, dt)
    return mask if dtype(mask) == dt else fnp.astype(mask, dt)


def _matmul_t(a, b):
    """a @ b^T over the last two axes (batch axes equal)."""
    nd = len(shape(a))
    return fnp.matmul(a, fnp.swapaxes(b, nd - 1, nd - 2))


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False):
    """See _sdpa (one torch op on Tensors)."""
    return torch_call("ScaledDotProductFlashAttentionForCpuBackward0", fixed_draws(_sdpa),
                      (query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa))


def _sdpa(query, key, value, attn_mask=None, dropout_p: float = 0.0, is_causal: bool = False,
          scale: float | None = None, enable_gqa: bool = False):
    """softmax(Q K^T * scale + mask) V over the last two axes: query [..., L, E], key
    [..., S, E], value [..., S, Ev] -> [..., L, Ev]. scale defaults to 1/sqrt(E);
    is_causal masks key positions after each query's; dropout_p drops attention weights
    (always, as PyTorch's function does: pass 0 in evaluation); enable_gqa lets key and value
    have fewer heads (axis -3) than query, each shared by a group of query heads."""
    q, k, v = arr(query, "scaled_dot_product_attention"), arr(key, "scaled_dot_product_attention"), \
        arr(value, "scaled_dot_product_attention")
    dq, dk, dv = dtype(q), dtype(k), dtype(v)
    if not dq == dk == dv:
        raise FgradRuntimeError(f"Expected query, key, and value to have the same dtype, but got query.dtype: "
                           f"{dq} key.dtype: {dk} and value.dtype: {dv} instead.")
    qs, ks, vs = shape(q), shape(k), shape(v)
    if len(qs) < 2 or len(ks) < 2 or len(vs) < 2 or qs[-1] != ks[-1] or ks[-2] != vs[-2]:
        raise FgradRuntimeError(f"scaled_dot_product_attention: query {qs}, key {ks} and value {vs} do not fit: "
                           "expected [..., L, E], [..., S, E] and [..., S, Ev]")
    if is_causal and attn_mask is not None:
        raise FgradRuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when "
                           "is_causal=True")
    if enable_gqa and len(qs) >= 3 and ks[-3] != qs[-3]:
        if qs[-3] % ks[-3] or ks[-3] != vs[-3]:
            raise FgradRuntimeError(f"scaled_dot_product_attention: with enable_gqa the query heads ({qs[-3]}) "
                               f"must be a multiple of the key/value heads ({ks[-3]}, {vs[-3]})")
        k = fnp.repeat(k, qs[-3] // ks[-3], axis=len(ks) - 3)
        v = fnp.repeat(v, qs[-3] // vs[-3], axis=len(vs) - 3)
    L, S = qs[-2], ks[-2]
    scale = 1.0 / math.sqrt(qs[-1]) if scale is None else float(scale)
    scores = fnp.multiply(_matmul_t(q, k), np.array(scale, dq))
    add = None
    if is_causal:
        add = np.where(np.tril(np.ones((L, S), bool)), dq.type(0), dq.type(-np.inf))
    elif attn_mask is not None:
        add = _additive(attn_mask, dq, allow_is_true=True)
    dead = None  # queries with every key masked: zero output, as PyTorch's CPU kernels give
    if add is not None:
        m = add if isinstance(add, np.ndarray) else None
        if m is not None:
            blocked = np.isneginf(m).all(axis=-1, keepdims=True)
            if blocked.any():
                dead = _on_device_of(q, blocked)
                add = np.where(blocked, dq.type(0), m)
        scores = fnp.add(scores, _on_device_of(q, add))
    weights = nnops.softmax(scores, len(shape(scores)) - 1)
    if dead is not None:
        weights = fnp.where(dead, np.zeros((), dq), weights)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, True)
    return fnp.matmul(weights, v)


# --- multi_head_attention_forward --------------------------------------------------------------

def _rows(w, a: int, b: int):
    """Rows a:b of a weight matrix or bias vector."""
    s = shape(w)
    return _slice(w, (a,) + (0,) * (len(s) - 1), (b,) + tuple(s[1:]))


def _pad_last(mask, n: int = 1):
    """A mask with n more columns that let through (False / 0.0)."""
    if mask is None:
        return None
    m = arr(mask, "attention mask")
    s = shape(m)
    z = np.zeros(s[:-1] + (n,), dtype(m))
    if isinstance(m, np.ndarray):
        return np.concatenate([m, z], -1)
    return concatenate([m, _on_device_of(m, z)], len(s) - 1)


def _heads(x, n: int, bh: int, hd: int):
    """[n, bsz, E] -> [bsz * heads, n, head_dim]."""
    return transpose(reshape(x, (n, bh, hd)), (1, 0, 2))


def multi_head_attention_forward(*args, **kwargs):
    """See _mha_forward (one torch op on Tensors, named after the output's last PyTorch node)."""
    if has_tensor(args, kwargs):
        return torch_call("ViewBackward0", fixed_draws(_mha_forward), args, kwargs)
    return _mha_forward(*args, **kwargs)


def _signed(public, impl):
    """`public` with `impl`'s signature and doc (help(), inspect.signature)."""
    public.__signature__ = inspect.signature(impl)
    public.__doc__ = impl.__doc__
    return public


def _mha_forward(query, key, value, embed_dim_to_check: int, num_heads: int, in_proj_weight,
                                 in_proj_bias, bias_k, bias_v, add_zero_attn: bool, dropout_p: float,
                                 out_proj_weight, out_proj_bias, training: bool = True, key_padding_mask=None,
                                 need_weights: bool = True, attn_mask=None,
                                 use_separate_proj_weight: bool = False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None,
                                 average_attn_weights: bool = True, is_causal: bool = False):
    """PyTorch's F.multi_head_attention_forward: inputs time-major [L, N, E] (or unbatched
    [L, E]); returns (attn_output [L, N, E], attn_weights [N, L, S] averaged over heads, or
    [N, heads, L, S], or None without need_weights)."""
    query, key, value = (arr(t, "multi_head_attention_forward") for t in (query, key, value))
    batched = len(shape(query)) == 3
    if not batched:
        if len(shape(query)) != 2:
            raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received "
                                 f"{len(shape(query))}-D query tensor")
        query, key, value = (reshape(t, (shape(t)[0], 1, shape(t)[1])) for t in (query, key, value))
        if key_padding_mask is not None:
            key_padding_mask = reshape(arr(key_padding_mask, "key_padding_mask"), (1,) + shape(key_padding_mask))
    tgt_len, bsz, embed_dim = shape(query)
    src_len = shape(key)[0]
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if shape(key)[:2] != shape(value)[:2]:
        raise AssertionError(f"key shape {shape(key)} does not match value shape {shape(value)}")
    if is_causal and attn_mask is None:
        raise FgradRuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer "
                           "module method `generate_square_subsequent_mask` to create this mask.")
    dt = dtype(query)
    # --- projections (self-attention: one GEMM for q, k and v together)
    E = embed_dim
    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        if query is key and key is value:
            qkv = linear(query, in_proj_weight, in_proj_bias)
            q, k, v = (_slice(qkv, (0, 0, a), (tgt_len, bsz, a + E)) for a in (0, E, 2 * E))
        else:
            bq, bk, bv = (None, None, None) if in_proj_bias is None else \
                (_rows(in_proj_bias, 0, E), _rows(in_proj_bias, E, 2 * E), _rows(in_proj_bias, 2 * E, 3 * E))
            q = linear(query, _rows(in_proj_weight, 0, E), bq)
            if key is value:
                kv = linear(key, _rows(in_proj_weight, E, 3 * E),
                            None if in_proj_bias is None else _rows(in_proj_bias, E, 3 * E))
                k, v = (_slice(kv, (0, 0, a), (src_len, bsz, a + E)) for a in (0, E))
            else:
                k = linear(key, _rows(in_proj_weight, E, 2 * E), bk)
                v = linear(value, _rows(in_proj_weight, 2 * E, 3 * E), bv)
    else:
        if q_proj_weight is None or k_proj_weight is None or v_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is True but q_proj_weight, k_proj_weight or "
                                 "v_proj_weight is None")
        bq, bk, bv = (None, None, None) if in_proj_bias is None else \
            (_rows(in_proj_bias, 0, E), _rows(in_proj_bias, E, 2 * E), _rows(in_proj_bias, 2 * E, 3 * E))
        q, k, v = linear(query, q_proj_weight, bq), linear(key, k_proj_weight, bk), linear(value, v_proj_weight, bv)
    # --- masks, as additive float masks (bool True = not allowed)
    if attn_mask is not None:
        attn_mask = _additive(attn_mask, dt, allow_is_true=False)
        nd = len(shape(attn_mask))
        if nd == 2:
            if tuple(shape(attn_mask)) != (tgt_len, src_len):
                raise FgradRuntimeError(f"The shape of the 2D attn_mask is {_size(attn_mask)}, but should be "
                                   f"{(tgt_len, src_len)}.")
            attn_mask = fnp.reshape(attn_mask, (1, tgt_len, src_len))
        elif nd == 3:
            if tuple(shape(attn_mask)) != (bsz * num_heads, tgt_len, src_len):
                raise FgradRuntimeError(f"The shape of the 3D attn_mask is {_size(attn_mask)}, but should be "
                                   f"{(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise FgradRuntimeError(f"attn_mask's dimension {nd} is not supported")
    if key_padding_mask is not None:
        key_padding_mask = _additive(key_padding_mask, dt, allow_is_true=False)
    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            raise AssertionError("bias cannot be added to static key/value.")
        k = concatenate([k, fnp.broadcast_to(bias_k, (1, bsz, E))], 0)
        v = concatenate([v, fnp.broadcast_to(bias_v, (1, bsz, E))], 0)
        attn_mask, key_padding_mask = _pad_last(attn_mask), _pad_last(key_padding_mask)
    elif (bias_k is None) != (bias_v is None):
        raise AssertionError("bias_k and bias_v must both be given or both be None")
    bh = bsz * num_heads
    q = _heads(q, tgt_len, bh, head_dim)
    if static_k is None:
        k = _heads(k, shape(k)[0], bh, head_dim)
    else:
        if tuple(shape(static_k)[:1] + shape(static_k)[2:]) != (bh, head_dim):
            raise AssertionError(f"expecting static_k of shape ({bh}, S, {head_dim}), got {shape(static_k)}")
        k = static_k
    if static_v is None:
        v = _heads(v, shape(v)[0], bh, head_dim)
    else:
        if tuple(shape(static_v)[:1] + shape(static_v)[2:]) != (bh, head_dim):
            raise AssertionError(f"expecting static_v of shape ({bh}, S, {head_dim}), got {shape(static_v)}")
        v = static_v
    if add_zero_attn:
        z = _on_device_of(q, np.zeros((bh, 1, head_dim), dt))
        k, v = concatenate([k, z], 1), concatenate([v, z], 1)
        attn_mask, key_padding_mask = _pad_last(attn_mask), _pad_last(key_padding_mask)
    src_len = shape(k)[1]
    if key_padding_mask is not None:
        if tuple(shape(key_padding_mask)) != (bsz, src_len):
            raise AssertionError(f"expecting key_padding_mask shape of {(bsz, src_len)}, but got "
                                 f"{_size(key_padding_mask)}")
        kpm = fnp.reshape(fnp.broadcast_to(fnp.reshape(key_padding_mask, (bsz, 1, 1, src_len)),
                                           (bsz, num_heads, 1, src_len)), (bh, 1, src_len))
        attn_mask = kpm if attn_mask is None else fnp.add(attn_mask, kpm)
    if not training:
        dropout_p = 0.0
    if need_weights:
        scores = _matmul_t(fnp.multiply(q, np.array(math.sqrt(1.0 / head_dim), dt)), k)
        if attn_mask is not None:
            scores = fnp.add(scores, _on_device_of(q, attn_mask))
        weights = nnops.softmax(scores, 2)
        if dropout_p > 0.0:
            weights = dropout(weights, dropout_p, True)
        out = fnp.matmul(weights, v)
    else:
        weights = None
        out = _sdpa(q, k, v, attn_mask, dropout_p)
    out = reshape(transpose(out, (1, 0, 2)), (tgt_len * bsz, embed_dim))
    out = reshape(linear(out, out_proj_weight, out_proj_bias), (tgt_len, bsz, embed_dim))
    if weights is not None:
        weights = reshape(weights, (bsz, num_heads, tgt_len, src_len))
        if average_attn_weights:
            weights = fnp.mean(weights, axis=1)
        if not batched:
            weights = reshape(weights, shape(weights)[1:])
    if not batched:
        out = reshape(out, (tgt_len, embed_dim))
    return out, weights


_signed(multi_head_attention_forward, _mha_forward)


def _size(x) -> str:
    """A shape as the Tensor facade prints it (torch.Size([...]), PyTorch's torch.Size)."""
    return f"torch.Size({list(shape(x))})"
