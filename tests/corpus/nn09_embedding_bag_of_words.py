"""Text classification with nn.Embedding(padding_idx) and mean pooling over padded token ids."""
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
sentences = ["good great fun", "bad awful boring", "great movie", "awful plot bad acting",
             "fun and good", "boring and bad", "good acting great plot", "bad movie"]
labels = torch.tensor([1, 0, 1, 0, 1, 0, 1, 0])
vocab = {"<pad>": 0}
for s in sentences:
    for w in s.split():
        vocab.setdefault(w, len(vocab))
print("vocab size:", len(vocab))
max_len = max(len(s.split()) for s in sentences)
ids = torch.zeros(len(sentences), max_len, dtype=torch.long)
for i, s in enumerate(sentences):
    toks = [vocab[w] for w in s.split()]
    ids[i, :len(toks)] = torch.tensor(toks)
print("padded ids:\n", ids)


class BagOfWords(nn.Module):
    def __init__(self, vocab_size, dim):
        super().__init__()
        self.emb = nn.Embedding(vocab_size, dim, padding_idx=0)
        self.out = nn.Linear(dim, 2)

    def forward(self, tokens):
        mask = (tokens != 0).unsqueeze(-1).float()
        vecs = self.emb(tokens) * mask
        mean = vecs.sum(1) / mask.sum(1)
        return self.out(mean)


model = BagOfWords(len(vocab), 6)
rng = np.random.default_rng(0)
with torch.no_grad():
    model.emb.weight.copy_(torch.tensor(rng.normal(0, 1, (len(vocab), 6)), dtype=torch.float32))
    model.emb.weight[0].zero_()
    model.out.weight.copy_(torch.tensor(rng.normal(0, 0.3, (2, 6)), dtype=torch.float32))
    model.out.bias.zero_()
print("padding row is zero:", model.emb.weight[0].abs().sum().item())
opt = torch.optim.Adam(model.parameters(), lr=0.05)
for epoch in range(40):
    opt.zero_grad()
    logits = model(ids)
    loss = nn.functional.cross_entropy(logits, labels)
    loss.backward()
    opt.step()
    if epoch % 10 == 9:
        print(f"epoch {epoch + 1} loss {loss.item():.5f} acc {(logits.argmax(1) == labels).float().mean().item():.3f}")
print("padding row grad stays zero:", model.emb.weight.grad[0].abs().sum().item())
print("padding row unchanged:", model.emb.weight[0].abs().sum().item())
test = torch.tensor([[vocab["great"], vocab["fun"], 0], [vocab["boring"], vocab["plot"], 0]])
with torch.no_grad():
    print("test predictions:", model(test).argmax(1).tolist())
pretrained = nn.Embedding.from_pretrained(torch.eye(4), freeze=True)
print("from_pretrained:", pretrained(torch.tensor([2, 0])), pretrained.weight.requires_grad)
print("functional embedding:", nn.functional.embedding(torch.tensor([[1, 3]]), torch.arange(8.0).reshape(4, 2)))
