"""MultiheadAttention with PyTorch's parameters (in_proj_weight [3E, E] or q/k/v_proj_weight,
in_proj_bias, out_proj, bias_k, bias_v), initialisation and forward semantics; the computation
is fgrad.torch.nn.functional.multi_head_attention_forward."""
from __future__ import annotations

from .. import _tensor as T  # the facade namespace: T.empty, ...
from ...core.errors import FgradValueError
from ...extend.lax import transpose
from .._tensor.tensor import Tensor
from . import init
from ._attention_functional import multi_head_attention_forward
from ._util import shape
from .layers import Linear
from .module import Module
from .parameter import Parameter

__all__ = ["MultiheadAttention"]


class NonDynamicallyQuantizableLinear(Linear):
    """The Linear of MultiheadAttention.out_proj, under PyTorch's name (which repr shows)."""


def _swap01(x):
    if isinstance(x, Tensor):  # PyTorch's x.transpose(1, 0): TransposeBackward0
        return x.transpose(1, 0)
    return transpose(x, (1, 0) + tuple(range(2, len(shape(x)))))


class MultiheadAttention(Module):
    """Attention over num_heads subspaces of embed_dim: softmax(Q K^T / sqrt(head_dim)) V per
    head, heads concatenated and projected by out_proj.

    Inputs are [L, N, E] ([N, L, E] with batch_first) or unbatched [L, E]; key and value may
    have other widths (kdim, vdim: then q/k/v_proj_weight replace in_proj_weight). Boolean
    masks mark positions NOT allowed (True = ignore); float masks are added to the scores.
    forward returns (attn_output, attn_weights), the weights averaged over heads unless
    average_attn_weights=False, and None with need_weights=False."""

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: int | None = None,
                 vdim: int | None = None, batch_first: bool = False, device=None, dtype=None) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise FgradValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                             f"num_heads={num_heads} instead")
        super().__init__()
        self.embed_dim = int(embed_dim)
        self.kdim = int(kdim) if kdim is not None else self.embed_dim
        self.vdim = int(vdim) if vdim is not None else self.embed_dim
        self._qkv_same_embed_dim = self.kdim == self.embed_dim and self.vdim == self.embed_dim
        self.num_heads, self.dropout, self.batch_first = int(num_heads), float(dropout), bool(batch_first)
        self.head_dim = self.embed_dim // self.num_heads
        if self.head_dim * self.num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        E = self.embed_dim

        def param(*s):
            return Parameter(T.empty(*s, dtype=dtype, device=device))
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = param(E, E)
            self.k_proj_weight = param(E, self.kdim)
            self.v_proj_weight = param(E, self.vdim)
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = param(3 * E, E)
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = param(3 * E)
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(E, E, bias=bias, device=device, dtype=dtype)
        if add_bias_kv:
            self.bias_k = param(1, 1, E)
            self.bias_v = param(1, 1, E)
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = bool(add_zero_attn)
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        """PyTorch's init: xavier_uniform_ projections, zero biases, xavier_normal_ bias_k/v."""
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(self, query, key, value, key_padding_mask=None, need_weights: bool = True, attn_mask=None,
                average_attn_weights: bool = True, is_causal: bool = False):
        """(attn_output, attn_weights or None); see the class docstring for shapes and masks.
        is_causal is PyTorch's hint that attn_mask is the causal mask (which must be given)."""
        batched = len(shape(query)) == 3
        if self.batch_first and batched:
            # keep query is key is value (self-attention: one projection GEMM) through the swap
            if key is value:
                if query is key:
                    query = key = value = _swap01(query)
                else:
                    query, key = _swap01(query), _swap01(key)
                    value = key
            else:
                query, key, value = _swap01(query), _swap01(key), _swap01(value)
        out, weights = multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias,
            self.bias_k, self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight,
            self.out_proj.bias, training=self.training, key_padding_mask=key_padding_mask,
            need_weights=need_weights, attn_mask=attn_mask,
            use_separate_proj_weight=not self._qkv_same_embed_dim, q_proj_weight=self.q_proj_weight,
            k_proj_weight=self.k_proj_weight, v_proj_weight=self.v_proj_weight,
            average_attn_weights=average_attn_weights, is_causal=is_causal)
        if self.batch_first and batched:
            out = _swap01(out)
        return out, weights
