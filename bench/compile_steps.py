"""torch.compile on fgrad against eager fgrad and PyTorch (eager and torch.compile), CPU,
one thread for every library:

  W2    MLP 784-512-512-10 training step, batch 256, float32, SGD momentum 0.9
  W3    CNN training step (conv-relu-pool x2, linear), batch 64 of 1x28x28, float32, SGD
  E200  forward and backward of a 200-op element-wise chain on 100,000 float32 values

Each workload is a module compiled whole (`torch.compile(model)`); the step is zero_grad,
forward, loss, backward and the optimizer's step, of which the forward and backward run
compiled. The first compiled call (capture and compilation) is timed apart. Rounds alternate
between the variants and the best time of each is kept, so load from other processes affects
all alike. The compiled results are checked against eager before timing.

    python bench/compile_steps.py [--rounds 15] [--no-torch-compile]
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np


def mlp(nn):
    return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))


def cnn(nn):
    return nn.Sequential(nn.Conv2d(1, 16, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(16, 32, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(32 * 7 * 7, 10))


def chain(nn):
    """200 element-wise ops (50 rounds of sin, multiply, add, tanh) and a sum."""
    class Chain(nn.Module):
        def forward(self, x):
            for _ in range(50):
                x = (x.sin() * 1.01 + 0.1).tanh()
            return x.sum()
    return Chain()


def make_step(lib, build, x, y, compiled: bool):
    """(step function, model) for `lib` (fgrad.torch or torch)."""
    lib.manual_seed(0)
    net = build(lib.nn)
    run = lib.compile(net) if compiled else net
    data = lib.tensor(x)
    if y is None:  # the chain: the gradient in the input, no parameters
        data.requires_grad_(True)

        def step():
            data.grad = None
            out = run(data)
            out.backward()
            return out
        return step, net
    opt = lib.optim.SGD(net.parameters(), lr=0.01, momentum=0.9 if build is mlp else 0.0)
    target = lib.tensor(y)
    crit = lib.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss = crit(run(data), target)
        loss.backward()
        opt.step()
        return loss
    return step, net


def bench(name, build, x, y, rounds, use_torch_compile):
    import torch

    import fgrad.torch as ftorch
    variants = {"fgrad eager": (ftorch, False), "fgrad.torch.compile": (ftorch, True),
                "torch eager": (torch, False)}
    if use_torch_compile:
        variants["torch.compile (inductor)"] = (torch, True)
    steps, first, best, results = {}, {}, {}, {}
    for key, (lib, comp) in variants.items():
        try:
            step, net = make_step(lib, build, x, y, comp)
            t = time.perf_counter()
            step()
            first[key] = time.perf_counter() - t
            out = step()
            results[key] = float(out.item())
            steps[key] = step
            best[key] = float("inf")
        except Exception as e:  # torch.compile needs a working C compiler; report and go on
            print(f"  {key}: failed ({type(e).__name__}: {str(e).splitlines()[0][:120]})")
    for _ in range(rounds):
        for key, step in steps.items():
            t = time.perf_counter()
            step()
            best[key] = min(best[key], time.perf_counter() - t)
    base = best["fgrad eager"]
    print(f"\n{name}")
    print(f"  {'variant':28s} {'step ms':>9s} {'vs fgrad eager':>15s} {'first call s':>13s} {'2nd-step value':>15s}")
    for key in steps:
        print(f"  {key:28s} {best[key] * 1e3:9.2f} {best[key] / base:14.2f}x {first[key]:13.2f} "
              f"{results[key]:15.6g}")
    if "torch.compile (inductor)" in best:
        print(f"  fgrad.torch.compile / torch.compile: {best['fgrad.torch.compile'] / best['torch.compile (inductor)']:.2f}x")
    print(f"  fgrad.torch.compile / torch eager:   {best['fgrad.torch.compile'] / best['torch eager']:.2f}x")
    return best


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--no-torch-compile", action="store_true")
    p.add_argument("--only", choices=["W2", "W3", "E200"], action="append")
    args = p.parse_args(argv)
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import torch

    import fgrad.torch as ftorch
    torch.set_num_threads(1)
    ftorch.set_num_threads(1)
    rng = np.random.default_rng(0)
    work = {
        "W2": ("W2 MLP step 784-512-512-10, batch 256", mlp,
               rng.standard_normal((256, 784)).astype(np.float32), rng.integers(0, 10, 256)),
        "W3": ("W3 CNN step, batch 64 of 1x28x28", cnn,
               rng.random((64, 1, 28, 28), dtype=np.float32), rng.integers(0, 10, 64)),
        "E200": ("E200 200-op element-wise chain, forward+backward, 100,000 float32", chain,
                 rng.standard_normal(100_000).astype(np.float32), None),
    }
    for key, (name, build, x, y) in work.items():
        if args.only and key not in args.only:
            continue
        bench(name, build, x, y, args.rounds, not args.no_torch_compile)


if __name__ == "__main__":
    main()
