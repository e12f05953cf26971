"""A character-level LSTM language model: Embedding -> 2-layer LSTM -> Linear, trained with Adam
and gradient clipping, perplexity, then greedy generation carrying the (h, c) state."""
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
text = ("the quick brown fox jumps over the lazy dog. the dog sleeps. the fox runs. "
        "a quick dog and a lazy fox meet over the hill. ") * 2
chars = sorted(set(text))
stoi = {c: i for i, c in enumerate(chars)}
itos = {i: c for c, i in stoi.items()}
data = torch.tensor([stoi[c] for c in text])
print("vocab:", len(chars), "length:", len(data))


class CharLM(nn.Module):
    def __init__(self, vocab, emb=12, hidden=32, layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.lstm = nn.LSTM(emb, hidden, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, x, state=None):
        out, state = self.lstm(self.embed(x), state)
        return self.head(out), state


model = CharLM(len(chars))
print("parameter names:", [n for n, _ in model.named_parameters()])
rng = np.random.default_rng(0)
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.tensor(rng.uniform(-0.2, 0.2, tuple(p.shape)), dtype=torch.float32))
seq_len, starts = 20, list(range(0, len(data) - 21, 13))
inputs = torch.stack([data[s:s + seq_len] for s in starts])
targets = torch.stack([data[s + 1:s + seq_len + 1] for s in starts])
print("batch:", tuple(inputs.shape))
opt = torch.optim.Adam(model.parameters(), lr=3e-2)
crit = nn.CrossEntropyLoss()
for step in range(40):
    logits, _ = model(inputs)
    loss = crit(logits.reshape(-1, len(chars)), targets.reshape(-1))
    opt.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    if step % 10 == 9:
        print(f"step {step + 1} loss {loss.item():.4f} perplexity {loss.exp().item():.3f}")

model.eval()
with torch.no_grad():
    prompt = "the "
    x = torch.tensor([[stoi[c] for c in prompt]])
    logits, state = model(x)
    print("state shapes:", tuple(state[0].shape), tuple(state[1].shape))
    out = prompt
    nxt = logits[0, -1].argmax().item()
    for _ in range(25):
        out += itos[nxt]
        logits, state = model(torch.tensor([[nxt]]), state)
        nxt = logits[0, -1].argmax().item()
print("greedy sample:", repr(out))
