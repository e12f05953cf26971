"""A tiny Transformer encoder classifier: nn.TransformerEncoderLayer (batch_first, dropout=0),
nn.TransformerEncoder, learned positions, src_key_padding_mask, masked mean pooling."""
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
rng = np.random.default_rng(0)
vocab, max_len, n = 10, 8, 48
lengths = rng.integers(3, max_len + 1, size=n)
tokens = torch.zeros(n, max_len, dtype=torch.long)
for i, L in enumerate(lengths):
    tokens[i, :L] = torch.tensor(rng.integers(1, vocab, size=L))
labels = ((tokens == 7).any(dim=1)).long()  # does the sequence contain token 7?
pad_mask = tokens == 0
print("positives:", labels.sum().item(), "of", n)


class TinyTransformer(nn.Module):
    def __init__(self, d_model=16, nhead=2, layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model, padding_idx=0)
        self.pos = nn.Parameter(torch.zeros(1, max_len, d_model))
        layer = nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward=32, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=layers, enable_nested_tensor=False)
        self.cls = nn.Linear(d_model, 2)

    def forward(self, x, mask):
        h = self.encoder(self.embed(x) + self.pos, src_key_padding_mask=mask)
        keep = (~mask).unsqueeze(-1).float()
        return self.cls((h * keep).sum(1) / keep.sum(1))


model = TinyTransformer()
names = [n for n, _ in model.named_parameters()]
print("parameters:", len(names), names[2:9])
with torch.no_grad():
    for name, p in model.named_parameters():
        if "norm" in name:
            continue
        p.copy_(torch.tensor(rng.normal(0, 0.2, tuple(p.shape)), dtype=torch.float32))
    model.embed.weight[0].zero_()
print(model.encoder.layers[0].self_attn)
opt = torch.optim.AdamW(model.parameters(), lr=5e-3)
for step in range(30):
    model.train()
    logits = model(tokens, pad_mask)
    loss = nn.functional.cross_entropy(logits, labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 5 == 4:
        print(f"step {step + 1} loss {loss.item():.5f} acc {(logits.argmax(1) == labels).float().mean().item():.4f}")
model.eval()
with torch.no_grad():
    out = model(tokens[:4], pad_mask[:4])
print("eval logits:\n", out)
print("causal mask:\n", nn.Transformer.generate_square_subsequent_mask(4))
