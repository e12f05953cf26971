"""nn.LSTM equals a manual LSTMCell loop with the same weights; GRUCell and nn.RNN (tanh) forecasting
a sine wave one step ahead."""
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
rng = np.random.default_rng(0)
lstm = nn.LSTM(input_size=3, hidden_size=5)
cell = nn.LSTMCell(3, 5)
with torch.no_grad():
    for p in lstm.parameters():
        p.copy_(torch.tensor(rng.uniform(-0.4, 0.4, tuple(p.shape)), dtype=torch.float32))
    cell.weight_ih.copy_(lstm.weight_ih_l0)
    cell.weight_hh.copy_(lstm.weight_hh_l0)
    cell.bias_ih.copy_(lstm.bias_ih_l0)
    cell.bias_hh.copy_(lstm.bias_hh_l0)
x = torch.tensor(rng.normal(size=(6, 2, 3)), dtype=torch.float32)  # (seq, batch, feature)
out, (h, c) = lstm(x)
hx, cx = torch.zeros(2, 5), torch.zeros(2, 5)
outs = []
for t in range(6):
    hx, cx = cell(x[t], (hx, cx))
    outs.append(hx)
print("LSTM == LSTMCell loop:", torch.allclose(out, torch.stack(outs), atol=1e-6), torch.allclose(c[0], cx, atol=1e-6))
print("last hidden:\n", h[0].detach())

gru_cell = nn.GRUCell(3, 4)
with torch.no_grad():
    for p in gru_cell.parameters():
        p.copy_(torch.tensor(rng.uniform(-0.5, 0.5, tuple(p.shape)), dtype=torch.float32))
hg = torch.zeros(2, 4)
for t in range(6):
    hg = gru_cell(x[t], hg)
print("GRUCell final state:\n", hg.detach())

t = torch.linspace(0, 12, 121)
wave = torch.sin(t)
inp, tgt = wave[:-1].reshape(1, -1, 1), wave[1:].reshape(1, -1, 1)
rnn = nn.RNN(1, 12, batch_first=True, nonlinearity="tanh")
head = nn.Linear(12, 1)
with torch.no_grad():
    for p in list(rnn.parameters()) + list(head.parameters()):
        p.copy_(torch.tensor(rng.uniform(-0.3, 0.3, tuple(p.shape)), dtype=torch.float32))
opt = torch.optim.Adam(list(rnn.parameters()) + list(head.parameters()), lr=0.02)
for step in range(40):
    y, _ = rnn(inp)
    loss = nn.functional.mse_loss(head(y), tgt)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 10 == 9:
        print(f"step {step + 1} mse {loss.item():.6f}")
h0 = torch.zeros(1, 1, 12)
_, hn = rnn(inp[:, :10], h0)
print("hidden after 10 steps:", tuple(hn.shape))
