"""nn.MultiheadAttention: self-attention with batch_first, per-head and averaged weights,
a causal attn_mask, a key_padding_mask, and F.scaled_dot_product_attention."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
rng = np.random.default_rng(0)
mha = nn.MultiheadAttention(embed_dim=8, num_heads=2, batch_first=True)
print(mha)
print("params:", [(n, tuple(p.shape)) for n, p in mha.named_parameters()])
with torch.no_grad():
    for p in mha.parameters():
        p.copy_(torch.tensor(rng.normal(0, 0.3, tuple(p.shape)), dtype=torch.float32))
x = torch.tensor(rng.normal(size=(2, 4, 8)), dtype=torch.float32)
out, w = mha(x, x, x)
print("output:", tuple(out.shape), "weights:", tuple(w.shape))
print("weights rows sum to 1:", torch.allclose(w.sum(-1), torch.ones(2, 4)))
print("weights[0]:\n", w[0].detach())
_, w_heads = mha(x, x, x, average_attn_weights=False)
print("per-head weights:", tuple(w_heads.shape), "average equals:", torch.allclose(w_heads.mean(1), w, atol=1e-6))
causal = torch.triu(torch.ones(4, 4, dtype=torch.bool), diagonal=1)
_, wc = mha(x, x, x, attn_mask=causal)
print("causal weights[0]:\n", wc[0].detach())
kpm = torch.tensor([[False, False, False, True], [False, False, True, True]])
out_k, wk = mha(x, x, x, key_padding_mask=kpm)
print("masked keys get zero weight:", wk[0, :, 3].abs().max().item(), wk[1, :, 2:].abs().max().item())
out_k.sum().backward()
print("in_proj grad norm:", round(mha.in_proj_weight.grad.norm().item(), 5))

q = torch.tensor(rng.normal(size=(1, 2, 3, 4)), dtype=torch.float32)
k = torch.tensor(rng.normal(size=(1, 2, 5, 4)), dtype=torch.float32)
v = torch.tensor(rng.normal(size=(1, 2, 5, 4)), dtype=torch.float32)
sdpa = F.scaled_dot_product_attention(q, k, v)
manual = torch.softmax(q @ k.transpose(-2, -1) / 2.0, dim=-1) @ v
print("sdpa matches manual:", torch.allclose(sdpa, manual, atol=1e-6))
print("sdpa causal:", F.scaled_dot_product_attention(q, k[:, :, :3], v[:, :, :3], is_causal=True)[0, 0])
