"""Data-parallel training throughput over MPI (fgrad.distributed): the MLP 784-512-512-10 on
a global batch of 256 (float32, cross-entropy, SGD with momentum), trained by 1 and by 2
processes, each process on one BLAS thread and on its shard of the global batch:

  ddp            the facade: DistributedDataParallel(net) (gradients reduced in buckets of
                 --bucket-mb MB while backward runs), loss.backward(), optimizer.step()
  data_parallel  the functional side: data_parallel(jit(value_and_grad(loss))), then SGD on
                 the parameter dict

It prints samples/s at each process count, the scaling efficiency (throughput at N processes
/ (N x throughput at 1)) and the communication share of a step: the time one all-reduce of
the 2.7 MB of gradients takes alone, and the time backward() still waits for the reductions
at its end (the part that did not overlap the backward computation).

On a 2-core machine shared with other work, the numbers are indicative only: two processes
then use both cores, and anything else running takes from them.

    python bench/distributed.py [--steps 20] [--rounds 5] [--procs 1 2] [--bucket-mb 1]
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import time

import numpy as np

GLOBAL_BATCH = 256
SIZES = (784, 512, 512, 10)


def _worker(args) -> None:
    from threadpoolctl import threadpool_limits

    import fgrad
    import fgrad.distributed as dist
    import fgrad.torch.nn as nn
    import fgrad.torch.nn.functional as F
    import fgrad.numpy as fnp
    from fgrad.tree_util import tree_map

    threadpool_limits(1)  # one core per process: the scaling compared is processes, not threads
    dist.init(timeout=300)
    rank, world = dist.rank(), dist.world_size()
    local = GLOBAL_BATCH // world
    rng = np.random.default_rng(0)
    x_all = rng.standard_normal((GLOBAL_BATCH, SIZES[0])).astype(np.float32)
    y_all = rng.integers(0, SIZES[-1], GLOBAL_BATCH)
    x, y = x_all[rank * local:(rank + 1) * local], y_all[rank * local:(rank + 1) * local]

    def timed(step) -> float:
        """Best over rounds of the slowest rank's mean step time (s)."""
        for _ in range(3):
            step()
        best = float("inf")
        for _ in range(args.rounds):
            dist.barrier()
            start = time.perf_counter()
            for _ in range(args.steps):
                step()
            elapsed = (time.perf_counter() - start) / args.steps
            best = min(best, float(dist.all_reduce(np.float64(elapsed), "max")))
        return best

    # the facade
    fgrad.torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(SIZES[0], SIZES[1]), nn.ReLU(), nn.Linear(SIZES[1], SIZES[2]), nn.ReLU(),
                        nn.Linear(SIZES[2], SIZES[3]))
    ddp = dist.DistributedDataParallel(net, bucket_cap_mb=args.bucket_mb)
    opt = fgrad.torch.optim.SGD(ddp.parameters(), lr=0.01, momentum=0.9)
    data, target = fgrad.torch.tensor(x), fgrad.torch.tensor(y)
    reducer = ddp._reducer
    waited = [0.0]
    finish = reducer._finish

    def timed_finish():
        start = time.perf_counter()
        finish()
        waited[0] += time.perf_counter() - start
    reducer._finish = timed_finish

    def ddp_step():
        opt.zero_grad()
        F.cross_entropy(ddp(data), target).backward()
        opt.step()
    ddp_time = timed(ddp_step)
    waited[0] = 0.0
    for _ in range(args.steps):
        ddp_step()
    wait_time = float(dist.all_reduce(np.float64(waited[0] / args.steps), "max"))

    # one all-reduce of the gradients alone
    grads = [p.detach().numpy().copy() for p in net.parameters()]
    nbytes = sum(g.nbytes for g in grads)

    def reduce_only():
        dist.all_reduce(grads)
    reduce_time = timed(reduce_only)

    # the functional side
    params = {f"w{i}": p.detach().numpy().copy() for i, p in enumerate(net.parameters())}
    onehot = np.eye(SIZES[-1], dtype=np.float32)[y]

    def loss(p, xb, yb):
        h = fnp.maximum(xb @ p["w0"].T + p["w1"], 0)
        h = fnp.maximum(h @ p["w2"].T + p["w3"], 0)
        logits = h @ p["w4"].T + p["w5"]
        logp = logits - fnp.log(fnp.sum(fnp.exp(logits), axis=1, keepdims=True))
        return -fnp.mean(fnp.sum(logp * yb, axis=1))
    grad_step = dist.data_parallel(fgrad.jit(fgrad.value_and_grad(loss)))
    state = {"params": params}

    def functional_step():
        _, g = grad_step(state["params"], x, onehot)
        state["params"] = tree_map(lambda p, g: p - 0.01 * g, state["params"], g)
    functional_time = timed(functional_step)

    if rank == 0:
        print("RESULT " + json.dumps({"world": world, "ddp": ddp_time, "wait": wait_time, "reduce": reduce_time,
                                      "bytes": nbytes, "data_parallel": functional_time,
                                      "buckets": ddp.bucket_sizes}), flush=True)


def _launch(n: int, args) -> dict:
    launcher = pathlib.Path(sys.executable).parent / "mpirun"
    cmd = [str(launcher) if launcher.exists() else "mpirun", "-n", str(n), sys.executable, __file__, "--worker",
           "--steps", str(args.steps), "--rounds", str(args.rounds), "--bucket-mb", str(args.bucket_mb)]
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
    for line in out.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    raise SystemExit(f"{' '.join(cmd)} failed (exit {out.returncode}):\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=20, help="steps per timed round")
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds (the best is kept)")
    parser.add_argument("--procs", type=int, nargs="+", default=[1, 2], help="process counts to run")
    parser.add_argument("--bucket-mb", type=float, default=1.0, help="DistributedDataParallel's bucket_cap_mb")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        _worker(args)
        return
    results = {n: _launch(n, args) for n in args.procs}
    base = results[min(results)]
    print(f"MLP {'-'.join(map(str, SIZES))}, global batch {GLOBAL_BATCH}, float32, one BLAS thread per process, "
          f"{os.cpu_count()} cores (indicative: other load on the machine takes from these numbers)")
    print(f"DistributedDataParallel buckets (parameters per bucket): {base['buckets']}, bucket_cap_mb={args.bucket_mb}")
    print(f"{'processes':>9} | {'ddp samples/s':>13} {'efficiency':>10} | {'data_parallel samples/s':>23} "
          f"{'efficiency':>10} | {'all-reduce alone':>16} {'share':>6} | {'backward waits':>14} {'share':>6}")
    single = results.get(1)
    for n, r in sorted(results.items()):
        row = []
        for key in ("ddp", "data_parallel"):
            rate = GLOBAL_BATCH / r[key]
            # throughput at n processes / (n x throughput at one): needs the one-process run
            eff = f"{rate / (n * GLOBAL_BATCH / single[key]):.0%}" if single else "n/a"
            row.append((rate, eff))
        print(f"{n:>9} | {row[0][0]:>13.0f} {row[0][1]:>10} | {row[1][0]:>23.0f} {row[1][1]:>10} | "
              f"{r['reduce'] * 1e3:>13.2f} ms {r['reduce'] / r['ddp']:>6.1%} | {r['wait'] * 1e3:>11.2f} ms "
              f"{r['wait'] / r['ddp']:>6.1%}")
    print(f"(all-reduce alone: one all_reduce of the {base['bytes'] / 2**20:.2f} MB of gradients; its share is of a "
          "ddp step. backward waits: what backward() still waits for the reductions at its end, the part "
          "not overlapped with the backward computation)")


if __name__ == "__main__":
    main()
