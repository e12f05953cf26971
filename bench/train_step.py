"""One training step (zero_grad, forward, cross-entropy, backward, SGD with momentum) of two
networks, fgrad against PyTorch on the CPU, both on one thread:

  MLP  784-512-512-10, batch 256, float32            goal: fgrad <= 1.05x PyTorch
  CNN  conv 1->16 5x5 pad 2, relu, maxpool 2, conv 16->32 5x5 pad 2, relu, maxpool 2,
       linear 1568->10; batch 64, 28x28, float32      goal: fgrad <= 1.3x PyTorch

Rounds alternate between the two libraries and the best time of each is kept, so load from
other processes affects both alike. fgrad's first backward pass calls
fgrad.torch.nn.utils.tune_malloc() (glibc keeps freed memory instead of returning it to the kernel,
which saves thousands of page faults per step; it applies to both libraries, which share
the process); --default-malloc runs with FGRAD_TUNE_MALLOC=0, glibc's defaults.

    python bench/train_step.py [--rounds 30] [--profile] [--default-malloc]
"""
from __future__ import annotations

import argparse
import time

import numpy as np


def mlp(nn):
    return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                         nn.Linear(512, 10))


def cnn(nn):
    return nn.Sequential(nn.Conv2d(1, 16, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(16, 32, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(32 * 7 * 7, 10))


def make_step(lib, build, x, y):
    net = build(lib.nn)
    opt = lib.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    crit = lib.nn.CrossEntropyLoss()
    data, target = lib.tensor(x), lib.tensor(y)

    def step():
        opt.zero_grad()
        loss = crit(net(data), target)
        loss.backward()
        opt.step()
        return loss
    return step, net


def copy_weights(src, dst, torch):
    with torch.no_grad():
        for p, q in zip(src.parameters(), dst.parameters()):
            q.copy_(torch.tensor(p.detach().numpy()))


def bench(name, build, x, y, rounds, per_round, goal, profile):
    import torch

    import fgrad
    fgrad.torch.manual_seed(0)
    f_step, f_net = make_step(fgrad.torch, build, x, y)
    t_step, t_net = make_step(torch, build, x, y)
    copy_weights(f_net, t_net, torch)
    # same weights, same data: the first losses agree
    lf, lt = f_step().item(), t_step().item()
    assert abs(lf - lt) < 1e-4 * max(1.0, abs(lt)), (lf, lt)
    times = {"fgrad": [], "torch": []}
    for _ in range(3):  # warm-up (Numba kernels, caches)
        f_step(), t_step()
    for _ in range(rounds):
        for lib, step in (("fgrad", f_step), ("torch", t_step)):
            t0 = time.perf_counter()
            for _ in range(per_round):
                step()
            times[lib].append((time.perf_counter() - t0) / per_round)
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
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(20):
            f_step()
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(15)
    return ratio


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--profile", action="store_true", help="cProfile the fgrad step")
    parser.add_argument("--only", choices=["mlp", "cnn"])
    parser.add_argument("--default-malloc", action="store_true",
                        help="do not call fgrad.torch.nn.utils.tune_malloc()")
    args = parser.parse_args(argv)

    import os
    if args.default_malloc:
        os.environ["FGRAD_TUNE_MALLOC"] = "0"
    print(f"malloc: {'glibc defaults' if args.default_malloc else 'tuned by the first fgrad optimizer'}")

    import torch
    from threadpoolctl import threadpool_limits
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    results = {}
    with threadpool_limits(1):
        if args.only in (None, "mlp"):
            x = rng.standard_normal((256, 784)).astype(np.float32)
            y = rng.integers(0, 10, 256)
            results["mlp"] = bench("MLP 784-512-512-10, batch 256", mlp, x, y, args.rounds, 2, 1.05,
                                   args.profile)
        if args.only in (None, "cnn"):
            x = rng.random((64, 1, 28, 28), dtype=np.float32)
            y = rng.integers(0, 10, 64)
            results["cnn"] = bench("CNN seed-style, batch 64x1x28x28", cnn, x, y, args.rounds, 2, 1.3,
                                   args.profile)
    return results


if __name__ == "__main__":
    main()
