"""One training step (zero_grad, forward, cross-entropy, backward, SGD with momentum) of two
sequence models, fgrad against PyTorch on the CPU, both on one thread, float32:

  LSTM LM      Embedding(1000, 256) -> LSTM(256, 256, num_layers=2) -> Linear(256, 1000);
               seq 35, batch 20 (the PTB "medium" shape)            goal: fgrad <= 1.5x PyTorch
  Transformer  Embedding(1000, 128) -> TransformerEncoder(2 x TransformerEncoderLayer(d_model
               128, nhead 4, dim_feedforward 512, dropout 0.1, batch_first), causal mask)
               -> Linear(128, 1000); seq 64, batch 32                goal: fgrad <= 1.5x PyTorch

Both libraries start from the same weights (fgrad's state_dict loaded into PyTorch's module)
and the first losses are checked equal (dropout off for that step). Rounds alternate between
the libraries and the best time of each is kept, so load from other processes affects both
alike; --cpu-time measures process CPU time instead of wall time (steadier on a shared
machine). PyTorch's LSTM runs oneDNN's fused RNN kernel; fgrad's GEMMs are NumPy's BLAS.

    python bench/nn_models.py [--rounds 20] [--only lstm|transformer] [--profile] [--cpu-time]
"""
from __future__ import annotations

import argparse
import os
import time

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # before NumPy, Numba and PyTorch start their thread pools

import numpy as np  # noqa: E402

VOCAB = 1000


def lstm_lm(L):
    nn = L.nn

    class LSTMLM(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(VOCAB, 256)
            self.rnn = nn.LSTM(256, 256, num_layers=2)
            self.dec = nn.Linear(256, VOCAB)

        def forward(self, x):
            out, _ = self.rnn(self.emb(x))
            return self.dec(out)
    return LSTMLM()


def transformer_lm(L, T=64):
    nn = L.nn

    class TransformerLM(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(VOCAB, 128)
            layer = nn.TransformerEncoderLayer(128, 4, dim_feedforward=512, dropout=0.1, batch_first=True)
            kw = dict(enable_nested_tensor=False) if L.__name__ == "torch" else {}
            self.enc = nn.TransformerEncoder(layer, 2, **kw)
            self.dec = nn.Linear(128, VOCAB)
            self.mask = nn.Transformer.generate_square_subsequent_mask(T)

        def forward(self, x):
            return self.dec(self.enc(self.emb(x), mask=self.mask, is_causal=True))
    return TransformerLM()


def make_step(L, model, x, y):
    opt = L.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    data, target = L.tensor(x), L.tensor(y)

    def step():
        opt.zero_grad()
        logits = model(data)
        loss = L.nn.functional.cross_entropy(logits.reshape(-1, VOCAB), target.reshape(-1))
        loss.backward()
        opt.step()
        return loss
    return step


def bench(name, build, x, y, rounds, goal, profile, clock):
    import torch

    import fgrad
    fgrad.torch.manual_seed(0)
    f_model, t_model = build(fgrad.torch), build(torch)
    t_model.load_state_dict({k: torch.tensor(v.numpy()) for k, v in f_model.state_dict().items()})
    # same weights, same data: the first losses agree (dropout off for this check)
    f_model.eval(), t_model.eval()
    with torch.no_grad():
        lt = torch.nn.functional.cross_entropy(t_model(torch.tensor(x)).reshape(-1, VOCAB),
                                               torch.tensor(y).reshape(-1)).item()
    lf = fgrad.torch.nn.functional.cross_entropy(f_model(fgrad.torch.tensor(x)).reshape(-1, VOCAB),
                                           fgrad.torch.tensor(y).reshape(-1)).item()
    assert abs(lf - lt) < 1e-4 * max(1.0, abs(lt)), (lf, lt)
    f_model.train(), t_model.train()
    f_step, t_step = make_step(fgrad.torch, f_model, x, y), make_step(torch, t_model, x, y)
    times = {"fgrad": [], "torch": []}
    for _ in range(3):  # warm-up (Numba kernels, caches)
        f_step(), t_step()
    for _ in range(rounds):
        for lib, step in (("fgrad", f_step), ("torch", t_step)):
            t0 = clock()
            step()
            times[lib].append(clock() - t0)
    best = {k: min(v) for k, v in times.items()}
    median = {k: float(np.median(v)) for k, v in times.items()}
    ratio = best["fgrad"] / best["torch"]
    verdict = "ok" if ratio <= goal else "MISSED"
    print(f"{name}: fgrad {1e3 * best['fgrad']:7.2f} ms   torch {1e3 * best['torch']:7.2f} ms   "
          f"ratio {ratio:5.2f}x   (goal <= {goal}x: {verdict});  medians {1e3 * median['fgrad']:.2f} / "
          f"{1e3 * median['torch']:.2f} ms = {median['fgrad'] / median['torch']:.2f}x", flush=True)
    if profile:
        import cProfile
        import pstats
        prof = cProfile.Profile(clock)
        prof.enable()
        for _ in range(10):
            f_step()
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(15)
    return ratio


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--profile", action="store_true", help="cProfile the fgrad step")
    parser.add_argument("--only", choices=["lstm", "transformer"])
    parser.add_argument("--cpu-time", action="store_true", help="time with process CPU time")
    args = parser.parse_args(argv)

    import torch
    from threadpoolctl import threadpool_limits
    torch.set_num_threads(1)
    clock = time.process_time if args.cpu_time else time.perf_counter
    rng = np.random.default_rng(0)
    results = {}
    with threadpool_limits(1):
        if args.only in (None, "lstm"):
            x, y = rng.integers(0, VOCAB, (35, 20)), rng.integers(0, VOCAB, (35, 20))
            results["lstm"] = bench("LSTM LM 2x256, seq 35, batch 20", lstm_lm, x, y, args.rounds, 1.5,
                                    args.profile, clock)
        if args.only in (None, "transformer"):
            x, y = rng.integers(0, VOCAB, (32, 64)), rng.integers(0, VOCAB, (32, 64))
            results["transformer"] = bench("Transformer 2x(d128, 4 heads, ff 512), seq 64, batch 32",
                                           transformer_lm, x, y, args.rounds, 1.5, args.profile, clock)
    return results


if __name__ == "__main__":
    main()
