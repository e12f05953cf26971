"""Sequence models as scripts: the same source text runs under `import torch` and under
`import fgrad.torch as torch` (only that line differs), trains a few steps from the same initial
weights on the same generated data, and the losses must agree step by step.

  * an LSTM language model over variable-length sequences (pad_sequence, pack_padded_sequence
    with enforce_sorted=False, a 2-layer LSTM, pad_packed_sequence, cross-entropy ignoring the
    padding), Adam, gradient clipping;
  * a small causal transformer language model (Embedding, TransformerEncoder with a causal
    mask and key padding, Linear), SGD with momentum.

The `slow` tests train each model on a generated task until it meets a stated loss."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad

torch = pytest.importorskip("torch")

LSTM_SCRIPT = '''
import numpy as np
{import_line}

nn, F = torch.nn, torch.nn.functional
rnn_utils = torch.nn.utils.rnn
V, E, H = 17, 8, 12
rng = np.random.default_rng(0)


class LM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, E)
        self.rnn = nn.LSTM(E, H, num_layers=2, batch_first=True)
        self.out = nn.Linear(H, V)

    def forward(self, tokens, lengths):
        x = self.emb(tokens)
        packed = rnn_utils.pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        out, (h, c) = self.rnn(packed)
        padded, _ = rnn_utils.pad_packed_sequence(out, batch_first=True, total_length=tokens.shape[1])
        return self.out(padded), h


model = LM()
# the same initial weights in either library: drawn here with NumPy
model.load_state_dict({{k: torch.tensor(rng.uniform(-0.3, 0.3, tuple(v.shape)), dtype=torch.float32)
                       for k, v in model.state_dict().items()}})
opt = torch.optim.Adam(model.parameters(), lr=0.03)
losses = []
for step in range(STEPS):
    lengths = rng.integers(3, 9, size=5)
    seqs = [torch.tensor((rng.integers(0, V) + np.arange(n + 1)) % V) for n in lengths]
    batch = rnn_utils.pad_sequence(seqs, batch_first=True, padding_value=-1)
    inputs, targets = batch[:, :-1].clamp(min=0), batch[:, 1:]
    logits, h = model(inputs, torch.tensor(lengths))
    loss = F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1), ignore_index=-1)
    opt.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    losses.append(loss.item())
'''

TRANSFORMER_SCRIPT = '''
import numpy as np
{import_line}

nn, F = torch.nn, torch.nn.functional
V, D, T, B = 13, 16, 10, 6
rng = np.random.default_rng(1)


class TinyGPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(V, D)
        self.pos = nn.Parameter(torch.zeros(T, D))
        layer = nn.TransformerEncoderLayer(D, nhead=2, dim_feedforward=32, dropout=0.0, activation="gelu",
                                           batch_first=True, norm_first=True)
        self.body = nn.TransformerEncoder(layer, num_layers=2, **EXTRA)
        self.head = nn.Linear(D, V)

    def forward(self, x, pad):
        mask = nn.Transformer.generate_square_subsequent_mask(x.shape[1])
        h = self.tok(x) + self.pos[:x.shape[1]]
        pad_mask = torch.zeros(pad.shape).masked_fill(pad, float("-inf"))  # float, like the causal mask
        return self.head(self.body(h, mask=mask, src_key_padding_mask=pad_mask, is_causal=True))


model = TinyGPT()
model.load_state_dict({{k: torch.tensor(rng.uniform(-0.3, 0.3, tuple(v.shape)), dtype=torch.float32)
                       for k, v in model.state_dict().items()}})
opt = torch.optim.SGD(model.parameters(), lr=0.3, momentum=0.9)
losses = []
for step in range(STEPS):
    x = torch.tensor(rng.integers(0, V, size=(B, T)))
    target = torch.roll(x, 1, 1)                        # predict the previous token
    pad = torch.tensor(np.arange(T)[None, :] >= rng.integers(6, T + 1, size=(B, 1)))
    logits = model(x, pad)
    loss = F.cross_entropy(logits[:, 1:].reshape(-1, V), target[:, 1:].reshape(-1), reduction="none")
    loss = (loss * (~pad[:, 1:]).reshape(-1).float()).sum() / (~pad[:, 1:]).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    losses.append(loss.item())
'''


def _run(script: str, lib: str, steps: int) -> list:
    line = "import torch" if lib == "torch" else "import fgrad.torch as torch"
    ns = {"STEPS": steps, "EXTRA": {"enable_nested_tensor": False} if lib == "torch" else {}}
    exec(compile(script.format(import_line=line), f"<{lib} script>", "exec"), ns)
    return ns["losses"]


@pytest.mark.parametrize("script", [LSTM_SCRIPT, TRANSFORMER_SCRIPT], ids=["lstm-lm", "transformer-lm"])
def test_scripts_train_alike_under_both_libraries(script):
    steps = 20
    ours, ref = _run(script, "fgrad", steps), _run(script, "torch", steps)
    assert len(ours) == len(ref) == steps
    np.testing.assert_allclose(ours, ref, rtol=2e-4, atol=1e-5)
    assert np.mean(ref[-3:]) < np.mean(ref[:3])  # (the scripts do train)


# --- training to a stated loss ----------------------------------------------------------------------

def _lag_batch(rng, V, B, T, lag):
    """Random tokens; the target at step t is the token at t - lag (0 before the start)."""
    x = rng.integers(1, V, size=(B, T))
    y = np.zeros_like(x)
    y[:, lag:] = x[:, :-lag]
    return x, y


@pytest.mark.slow
def test_lstm_learns_a_delayed_copy():
    """A 1-layer LSTM recalls the token seen 3 steps earlier: cross-entropy below 0.05 nats
    (chance is log 9 = 2.2) within 400 Adam steps."""
    fgrad.torch.manual_seed(0)
    rng = np.random.default_rng(0)
    V, lag = 10, 3
    emb, lstm, head = fgrad.torch.nn.Embedding(V, 16), fgrad.torch.nn.LSTM(16, 64, batch_first=True), fgrad.torch.nn.Linear(64, V)
    params = list(emb.parameters()) + list(lstm.parameters()) + list(head.parameters())
    opt = fgrad.torch.optim.Adam(params, lr=0.01)
    for step in range(400):
        x, y = _lag_batch(rng, V, 32, 20, lag)
        out, _ = lstm(emb(fgrad.torch.tensor(x)))
        loss = fgrad.torch.nn.functional.cross_entropy(head(out).reshape(-1, V), fgrad.torch.tensor(y).reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
    x, y = _lag_batch(rng, V, 256, 20, lag)
    with fgrad.torch.no_grad():
        out, _ = lstm(emb(fgrad.torch.tensor(x)))
        final = fgrad.torch.nn.functional.cross_entropy(head(out).reshape(-1, V), fgrad.torch.tensor(y).reshape(-1)).item()
    assert final < 0.05, final


@pytest.mark.slow
def test_transformer_learns_a_delayed_copy():
    """A 2-layer causal transformer (sinusoid-free: learned positions) recalls the token 3
    positions back: cross-entropy below 0.05 nats within 400 Adam steps."""
    fgrad.torch.manual_seed(0)
    rng = np.random.default_rng(1)
    V, T, D, lag = 10, 16, 32, 3
    nn = fgrad.torch.nn
    tok, pos, head = nn.Embedding(V, D), nn.Parameter(fgrad.torch.randn(T, D) * 0.1), nn.Linear(D, V)
    body = nn.TransformerEncoder(nn.TransformerEncoderLayer(D, 4, 64, dropout=0.0, batch_first=True), 2)
    params = list(tok.parameters()) + [pos] + list(body.parameters()) + list(head.parameters())
    opt = fgrad.torch.optim.Adam(params, lr=3e-3)
    mask = nn.Transformer.generate_square_subsequent_mask(T)

    def loss_of(x, y):
        h = body(tok(fgrad.torch.tensor(x)) + pos, mask=mask, is_causal=True)
        return nn.functional.cross_entropy(head(h).reshape(-1, V), fgrad.torch.tensor(y).reshape(-1))
    for step in range(400):
        loss = loss_of(*_lag_batch(rng, V, 32, T, lag))
        opt.zero_grad()
        loss.backward()
        opt.step()
    body.eval()
    with fgrad.torch.no_grad():
        final = loss_of(*_lag_batch(rng, V, 256, T, lag)).item()
    assert final < 0.05, final
