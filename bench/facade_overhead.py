"""Overhead of the Tensor facade: forward + backward of a 200-op chain of tiny tensors
(16 elements; ops cycle through mul, add, sin, exp, tanh: single-primitive ops, the fast
path), fgrad vs PyTorch eager. `--chain composite` cycles through ops that are several
primitives each (mean, clamp, softmax, var, mse_loss: one boundary node per op).

    python bench/facade_overhead.py [--chain simple|composite] [--ops 200] [--repeat 30]

Prints best-of-N microseconds per op for each library and the ratio fgrad / PyTorch. With
16-element tensors the arithmetic is negligible: the numbers measure per-op dispatch, graph
recording and the backward walk. PyTorch runs with one thread.
"""
from __future__ import annotations

import argparse
import functools
import time

import numpy as np


def composite_chain(lib, x, w, n_ops: int):
    h = x
    F = lib.nn.functional
    for i in range(n_ops):
        k = i % 5
        if k == 0:
            h = h - h.mean()
        elif k == 1:
            h = lib.clamp(h, -3.0, 3.0)
        elif k == 2:
            h = lib.softmax(h, 0) * 4.0  # (the scaling counts as one more op)
        elif k == 3:
            h = h + h.var()
        else:
            h = h + F.mse_loss(h, w)
    return h.sum()


def chain(lib, x, w, n_ops: int):
    h = x
    for i in range(n_ops):
        k = i % 5
        if k == 0:
            h = h * w
        elif k == 1:
            h = h + w
        elif k == 2:
            h = lib.sin(h)
        elif k == 3:
            h = lib.exp(h * 0.01)  # keeps values bounded; counts as one step of the chain
        else:
            h = lib.tanh(h)
    return h.sum()


def _step(lib, x0, w0, n_ops: int, fn=chain):
    x = lib.tensor(x0, requires_grad=True)
    w = lib.tensor(w0)
    loss = fn(lib, x, w, n_ops)
    loss.backward()
    return x.grad


def best_time(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chain", choices=("simple", "composite"), default="simple")
    ap.add_argument("--ops", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--size", type=int, default=16)
    ap.add_argument("--profile", action="store_true", help="cProfile the fgrad side")
    args = ap.parse_args(argv)

    import fgrad
    rng = np.random.default_rng(0)
    x0 = rng.standard_normal(args.size).astype(np.float32)
    w0 = rng.standard_normal(args.size).astype(np.float32)
    fn = chain if args.chain == "simple" else composite_chain
    step = functools.partial(_step, fn=fn)

    step(fgrad.torch, x0, w0, args.ops)  # warm up
    t_fgrad = best_time(lambda: step(fgrad.torch, x0, w0, args.ops), args.repeat)
    result = {"fgrad_us_per_op": t_fgrad / args.ops * 1e6}
    print(f"fgrad   : {result['fgrad_us_per_op']:7.2f} us/op  (forward + backward, {args.ops}-op chain, "
          f"{args.size} elements, {args.chain} ops)")
    try:
        import torch
    except ImportError:
        print("PyTorch not installed: no ratio")
        return result
    torch.set_num_threads(1)
    g_fgrad = step(fgrad.torch, x0, w0, args.ops).numpy()
    g_torch = step(torch, x0, w0, args.ops).numpy()
    np.testing.assert_allclose(g_fgrad, g_torch, rtol=1e-4, atol=1e-6)  # same computation
    t_torch = best_time(lambda: step(torch, x0, w0, args.ops), args.repeat)
    result["torch_us_per_op"] = t_torch / args.ops * 1e6
    result["ratio"] = t_fgrad / t_torch
    print(f"PyTorch : {result['torch_us_per_op']:7.2f} us/op  (eager, 1 thread, torch {torch.__version__})")
    print(f"ratio   : {result['ratio']:.2f}x  (fgrad / PyTorch)")
    if args.profile:
        import cProfile
        import pstats
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(20):
            step(fgrad.torch, x0, w0, args.ops)
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)
    return result


if __name__ == "__main__":
    main()
