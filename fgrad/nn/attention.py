"""jax.nn.dot_product_attention: JAX's XLA implementation (the reference one; `cudnn` is a GPU
kernel and is not provided), with multi-head, grouped-query and multi-query attention, bias,
boolean masks, causal and local-window masks, padding by sequence lengths, and the logsumexp
residual.

As in JAX, the softmax runs in float32 whatever the input dtype (its result is cast back), so a
float64 attention has float32 precision in its probabilities.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import FgradValueError
from .. import numpy as jnp
from ..api import stop_gradient
from .reductions import logsumexp, softmax


def _ensure_4d(t: Any) -> Any:
    t = jnp.asarray(t)
    return jnp.expand_dims(t, tuple(range(4 - t.ndim))) if t.ndim < 4 else t


def _check(t: Any, shape: list, dtype: Any, name: str) -> None:
    if t is None:
        return
    if t.ndim != len(shape):
        raise FgradValueError(f"dot_product_attention: {name} ndim should be {len(shape)}, but got {t.ndim} "
                         f"(shape {t.shape})")
    if dtype is not None and t.dtype != dtype:
        raise FgradValueError(f"dot_product_attention: {name} dtype should be {dtype}, but got {t.dtype}")
    if any(want != -1 and got != want for got, want in zip(t.shape, shape)):
        raise FgradValueError(f"dot_product_attention: {name} shape should be {tuple(shape)} (-1: any), "
                         f"but got {t.shape}")


def _large_negative(dtype: np.dtype) -> Any:
    # capped at float32's range: the softmax runs in float32 and must see a finite number
    return jnp.asarray(-0.7 * min(np.finfo(dtype).max, np.finfo(np.float32).max), dtype=dtype)


def _grouped(t: Any, k: int, g: int) -> Any:
    """A (B|1, N|1, T, S) bias or mask laid out as (B|1, K|1, G|1, T, S) to meet the grouped logits."""
    if t is None:
        return None
    tb, tn, tt, ts = t.shape
    return jnp.reshape(t, (tb, 1, 1, tt, ts) if tn == 1 else (tb, k, g, tt, ts))


def _mask(t: int, s: int, mask: Any, is_causal: bool, q_seqlen: Any, kv_seqlen: Any,
          local_window_size: tuple | None) -> Any:
    """The combined boolean mask broadcastable to the (B, K, G, T, S) logits, or None."""
    combined = mask
    q_pos, k_pos = np.arange(t)[:, None], np.arange(s)[None, :]
    static = np.ones((t, s), bool)
    if is_causal:
        static &= q_pos >= k_pos
    if local_window_size is not None:
        left, right = local_window_size
        static &= (q_pos <= k_pos + left) & (q_pos >= k_pos - right)
    if is_causal or local_window_size is not None:
        combined = static if combined is None else jnp.logical_and(combined, static)
    if q_seqlen is not None or kv_seqlen is not None:
        padding = True
        if q_seqlen is not None:
            padding = np.arange(t)[None, :, None] < q_seqlen[:, None, None]
        if kv_seqlen is not None:
            padding = jnp.logical_and(padding, np.arange(s)[None, None, :] < kv_seqlen[:, None, None])
        padding = jnp.expand_dims(padding, (1, 2))  # (B, T, S) -> (B, 1, 1, T, S)
        combined = padding if combined is None else jnp.logical_and(combined, padding)
    return combined


def dot_product_attention(query: Any, key: Any, value: Any, bias: Any = None, mask: Any = None, *,
                          scale: float | None = None, is_causal: bool = False,
                          query_seq_lengths: Any = None, key_value_seq_lengths: Any = None,
                          local_window_size: int | tuple[int, int] | None = None,
                          implementation: str | None = None, return_residual: bool = False) -> Any:
    """softmax(Q Kᵀ · scale + bias, masked) V per head, as jax.nn.dot_product_attention.

    query (B, T, N, H), key and value (B, S, K, H) with N a multiple of K (K < N: grouped-query
    attention); leading dimensions may be left out (up to 4). `bias` and boolean `mask`
    broadcast to (B, N, T, S); `mask` True takes part. `scale` defaults to 1/sqrt(H).
    `is_causal`, `local_window_size` ((left, right) or one int for both) and the int32
    sequence lengths (B,) mask further. Returns an array of query's shape, and with
    `return_residual` also the float32 logsumexp of the logits, of shape query.shape[:-1]
    (cast to key's dtype)."""
    if implementation not in (None, "xla"):
        raise FgradValueError(f"dot_product_attention: implementation {implementation!r} is not available in "
                         f"fgrad; use None or 'xla' (the cudnn kernel is GPU-only)")
    output_shape = jnp.asarray(query).shape
    query, key, value = _ensure_4d(query), _ensure_4d(key), _ensure_4d(value)
    bias = None if bias is None else _ensure_4d(bias)
    mask = None if mask is None else _ensure_4d(mask)
    q_seqlen = None if query_seq_lengths is None else jnp.asarray(query_seq_lengths)
    kv_seqlen = None if key_value_seq_lengths is None else jnp.asarray(key_value_seq_lengths)
    if isinstance(local_window_size, int):
        local_window_size = (local_window_size, local_window_size)
    b, s, k, h = key.shape
    _check(value, [b, s, k, h], key.dtype, "value")
    _check(query, [b, -1, -1, h], key.dtype, "query")
    _check(mask, [-1] * 4, np.dtype(bool), "mask")
    _check(bias, [-1] * 4, None, "bias")
    _check(q_seqlen, [b], np.dtype("int32"), "query_seq_lengths")
    _check(kv_seqlen, [b], np.dtype("int32"), "key_value_seq_lengths")
    _, t, n, _ = query.shape
    if n % k:
        raise FgradValueError(f"dot_product_attention: the number of query heads must be a multiple of the "
                         f"number of key/value heads, but got {n} vs {k}")
    g = n // k
    scale = 1.0 / np.sqrt(h) if scale is None else scale

    logits_dtype = np.promote_types(query.dtype, np.float32)
    grouped_q = jnp.reshape(query, (b, t, k, g, h))
    logits = jnp.einsum("BTKGH,BSKH->BKGTS", grouped_q, key).astype(logits_dtype)
    logits = logits * jnp.asarray(scale, dtype=logits_dtype)
    if bias is not None:
        logits = (logits + _grouped(bias, k, g)).astype(logits_dtype)
    combined = _mask(t, s, _grouped(mask, k, g), is_causal, q_seqlen, kv_seqlen, local_window_size)
    if combined is not None:
        logits = jnp.where(combined, logits, _large_negative(logits_dtype))
    # JAX runs the softmax in float32 whatever the input dtype
    logits = logits.astype(np.float32)
    probs = softmax(logits, axis=-1).astype(key.dtype)
    encoded = jnp.einsum("BKGTS,BSKH->BTKGH", probs, value)
    if q_seqlen is not None:
        encoded = encoded * (np.arange(t)[None, :] < q_seqlen[:, None]).astype(encoded.dtype)[:, :, None, None, None]
    out = jnp.reshape(encoded, output_shape)
    if not return_residual:
        return out
    lse = logsumexp(logits, axis=-1).astype(key.dtype)  # (B, K, G, T)
    lse = jnp.reshape(jnp.moveaxis(lse, 3, 1), (b, t, n))
    return out, jnp.reshape(stop_gradient(lse), output_shape[:-1])
