"""A short GPU benchmark: fgrad on CuPy against PyTorch CUDA, float32.

  W2 step      the MLP training step 784-512-512-10, batch 256, cross-entropy, SGD momentum 0.9
               (bench/wl_training.py's W2), through the facade: zero_grad, forward, backward, step
  elementwise  y = x * w + sin(x) on 4096x4096 (64 MiB per operand), fgrad.numpy on CuPy arrays
  grad elem    the gradient of sum(tanh(x) * x) on 4096x4096
  matmul       4096x4096 @ 4096x4096 (TF32 off on both sides: PyTorch's and CuPy's default)

Each row is the median of `--repeats` timed runs of `--iters` calls after warm-up, with the
GPU synchronised before each clock read. Prints the environment and a Markdown table; with
--markdown FILE (or $OUT set: $OUT/gpu_bench.md) writes the table there too. Without CuPy or
a GPU the rows say so and the exit status is 0 unless --require-gpu; a failed row exits 1.

    PYTHONPATH=. python bench/gpu_bench.py [--quick] [--markdown FILE]
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
import traceback
from typing import Callable

import numpy as np

import fgrad
import fgrad.numpy as fnp
from fgrad.torch import nn


def _timed(fn: Callable[[], object], sync: Callable[[], None], iters: int, repeats: int, warmup: int) -> float:
    """Median seconds per call of `fn` over `repeats` runs of `iters` calls each."""
    for _ in range(warmup):
        fn()
    sync()
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        sync()
        runs.append((time.perf_counter() - t0) / iters)
    return statistics.median(runs)


def _torch_cuda():
    """torch when it sees a GPU, else (None, why)."""
    try:
        import torch
    except ImportError:
        return None, "PyTorch not installed"
    if not torch.cuda.is_available():
        return None, f"PyTorch {torch.__version__} sees no GPU"
    return torch, ""


def environment() -> list[tuple[str, str]]:
    """(what, version) rows: Python, NumPy, CuPy and its CUDA, the GPU, PyTorch."""
    rows = [("Python", platform.python_version()), ("NumPy", np.__version__), ("fgrad", fgrad.__version__)]
    try:
        import cupy
        rows.append(("CuPy", f"{cupy.__version__} (CUDA runtime {cupy.cuda.runtime.runtimeGetVersion()})"
                     if hasattr(cupy.cuda.runtime, "runtimeGetVersion") else cupy.__version__))
    except ImportError:
        rows.append(("CuPy", "not installed"))
    except Exception as e:  # CuPy present, CUDA broken: say so, the rows below will too
        rows.append(("CuPy", f"error: {type(e).__name__}: {e}"))
    if fgrad.torch.cuda.is_available():
        major, minor = fgrad.torch.cuda.get_device_capability()
        _, total = fgrad.torch.cuda.mem_get_info()
        rows.append(("GPU", f"{fgrad.torch.cuda.get_device_name()} (sm_{major}{minor}, {total / 2**30:.0f} GiB, "
                     f"{fgrad.torch.cuda.device_count()} visible)"))
    else:
        rows.append(("GPU", "none visible to CuPy"))
    torch, why = _torch_cuda()
    if torch is None:
        rows.append(("PyTorch", why))
    else:
        rows.append(("PyTorch", f"{torch.__version__} (CUDA {torch.version.cuda}, {torch.cuda.get_device_name()})"))
    return rows


# --- the benchmarks: each returns (fgrad seconds, torch seconds or None, note) ----------------

def bench_w2(args, torch) -> tuple:
    def build(lib):
        return lib.nn.Sequential(lib.nn.Linear(784, 512), lib.nn.ReLU(), lib.nn.Linear(512, 512), lib.nn.ReLU(),
                                 lib.nn.Linear(512, 10))

    rng = np.random.default_rng(0)
    x = rng.standard_normal((256, 784)).astype(np.float32)
    y = rng.integers(0, 10, 256)
    fgrad.torch.manual_seed(0)
    f_net = build(fgrad.torch).cuda()
    f_opt = fgrad.torch.optim.SGD(f_net.parameters(), lr=0.01, momentum=0.9)
    f_crit = nn.CrossEntropyLoss()
    fx, fy = fgrad.torch.tensor(x, device="cuda"), fgrad.torch.tensor(y, device="cuda")

    def f_step():
        f_opt.zero_grad()
        loss = f_crit(f_net(fx), fy)
        loss.backward()
        f_opt.step()
        return loss

    t_fgrad = _timed(f_step, fgrad.torch.cuda.synchronize, args.iters, args.repeats, args.warmup)
    if torch is None:
        return t_fgrad, None, ""
    t_net = build(torch).cuda()
    with torch.no_grad():  # the same weights (shared through DLPack): the losses must agree
        for p, q in zip(f_net.parameters(), t_net.parameters()):
            q.copy_(torch.from_dlpack(p.detach()))
    t_opt = torch.optim.SGD(t_net.parameters(), lr=0.01, momentum=0.9)
    t_crit = torch.nn.CrossEntropyLoss()
    tx, ty = torch.from_numpy(x).cuda(), torch.from_numpy(y).cuda()

    def t_step():
        t_opt.zero_grad()
        loss = t_crit(t_net(tx), ty)
        loss.backward()
        t_opt.step()
        return loss

    lf = f_crit(f_net(fx), fy).item()
    lt = t_crit(t_net(tx), ty).item()
    note = f"same weights, loss {lf:.5f} vs {lt:.5f}"
    if abs(lf - lt) > 1e-3 * max(1.0, abs(lt)):
        note = f"LOSSES DIFFER: {lf:.6f} vs {lt:.6f}"
    return t_fgrad, _timed(t_step, torch.cuda.synchronize, args.iters, args.repeats, args.warmup), note


def _big(args, cp):
    n = 512 if args.quick else 4096
    rng = np.random.default_rng(1)
    return n, cp.asarray(rng.standard_normal((n, n), dtype=np.float32)), \
        cp.asarray(rng.standard_normal((n, n), dtype=np.float32))


def bench_elementwise(args, torch) -> tuple:
    import cupy as cp  # the benchmark's own data lives in CuPy arrays
    n, x, w = _big(args, cp)
    t_fgrad = _timed(lambda: fnp.add(fnp.multiply(x, w), fnp.sin(x)), fgrad.torch.cuda.synchronize,
                     args.iters, args.repeats, args.warmup)
    if torch is None:
        return t_fgrad, None, f"{n}x{n}"
    tx, tw = torch.from_dlpack(x), torch.from_dlpack(w)
    return t_fgrad, _timed(lambda: tx * tw + torch.sin(tx), torch.cuda.synchronize, args.iters, args.repeats,
                           args.warmup), f"{n}x{n}, 3 kernels each"


def bench_grad_elementwise(args, torch) -> tuple:
    import cupy as cp  # the benchmark's own data lives in CuPy arrays
    n, x, _ = _big(args, cp)
    g = fgrad.grad(lambda a: fnp.sum(fnp.tanh(a) * a))
    t_fgrad = _timed(lambda: g(x), fgrad.torch.cuda.synchronize, args.iters, args.repeats, args.warmup)
    if torch is None:
        return t_fgrad, None, f"{n}x{n}"
    tx = torch.from_dlpack(x).clone().requires_grad_(True)

    def t_grad():
        (gx,) = torch.autograd.grad((torch.tanh(tx) * tx).sum(), tx)
        return gx
    return t_fgrad, _timed(t_grad, torch.cuda.synchronize, args.iters, args.repeats, args.warmup), f"{n}x{n}"


def bench_matmul(args, torch) -> tuple:
    import cupy as cp  # the benchmark's own data lives in CuPy arrays
    n, x, w = _big(args, cp)
    t_fgrad = _timed(lambda: fnp.matmul(x, w), fgrad.torch.cuda.synchronize, args.iters, args.repeats, args.warmup)
    flops = 2 * n ** 3
    if torch is None:
        return t_fgrad, None, f"{n}x{n}, fgrad {flops / t_fgrad / 1e12:.1f} TFLOP/s"
    torch.backends.cuda.matmul.allow_tf32 = False
    tx, tw = torch.from_dlpack(x), torch.from_dlpack(w)
    t_torch = _timed(lambda: tx @ tw, torch.cuda.synchronize, args.iters, args.repeats, args.warmup)
    return t_fgrad, t_torch, (f"{n}x{n}, {flops / t_fgrad / 1e12:.1f} vs {flops / t_torch / 1e12:.1f} TFLOP/s")


BENCHMARKS = [
    ("W2 MLP step 784-512-512-10, b=256 (facade)", bench_w2),
    ("elementwise x*w + sin(x)", bench_elementwise),
    ("grad of sum(tanh(x) * x)", bench_grad_elementwise),
    ("matmul float32", bench_matmul),
]


def _ms(t: float | None) -> str:
    return "-" if t is None else f"{1e3 * t:.3f}"


def run(args) -> tuple[str, int]:
    """(the Markdown report, how many benchmarks failed)."""
    lines = ["### Environment", "", "| | |", "| --- | --- |"]
    lines += [f"| {k} | {v} |" for k, v in environment()]
    lines += ["", "### fgrad (CuPy) vs PyTorch CUDA, float32", "",
              "| benchmark | fgrad ms | PyTorch ms | fgrad / PyTorch | note |", "| --- | --- | --- | --- | --- |"]
    failed = 0
    if not fgrad.torch.cuda.is_available():
        lines += [f"| {name} | - | - | - | skipped: no GPU visible to CuPy |" for name, _ in BENCHMARKS]
        return "\n".join(lines), 0
    torch, why = _torch_cuda()
    for name, fn in BENCHMARKS:
        try:
            t_f, t_t, note = fn(args, torch)
        except Exception as e:  # one broken row must not hide the others
            failed += 1
            lines.append(f"| {name} | - | - | - | FAILED: {type(e).__name__}: {str(e)[:150]} |")
            print(f"{name}: FAILED", file=sys.stderr)
            traceback.print_exc()
            continue
        ratio = "-" if t_t is None else f"{t_f / t_t:.2f}x"
        lines.append(f"| {name} | {_ms(t_f)} | {_ms(t_t)} | {ratio} | {note or why} |")
        print(f"{name}: fgrad {_ms(t_f)} ms, torch {_ms(t_t)} ms", file=sys.stderr, flush=True)
    lines += ["", f"Median of {args.repeats} runs of {args.iters} calls after {args.warmup} warm-up calls; "
              "the GPU synchronised before each clock read."]
    return "\n".join(lines), failed


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes and few runs (a smoke test)")
    parser.add_argument("--iters", type=int, default=None, help="calls per timed run (default 20, quick 2)")
    parser.add_argument("--repeats", type=int, default=None, help="timed runs (default 5, quick 2)")
    parser.add_argument("--warmup", type=int, default=None, help="untimed calls first (default 5, quick 1)")
    parser.add_argument("--markdown", help="also write the report to this file (default: $OUT/gpu_bench.md)")
    parser.add_argument("--require-gpu", action="store_true",
                        help="exit 1 when no GPU is visible to CuPy (gpu_check.sh passes it when nvidia-smi sees one)")
    args = parser.parse_args(argv)
    args.iters = args.iters or (2 if args.quick else 20)
    args.repeats = args.repeats or (2 if args.quick else 5)
    args.warmup = args.warmup or (1 if args.quick else 5)
    report, failed = run(args)
    print(report, flush=True)
    if args.require_gpu and not fgrad.torch.cuda.is_available():
        print("gpu_bench: --require-gpu, but CuPy sees no GPU", file=sys.stderr)
        failed += 1
    path = args.markdown or (os.path.join(os.environ["OUT"], "gpu_bench.md") if os.environ.get("OUT") else None)
    if path:
        with open(path, "w") as f:
            f.write(report + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    if os.environ.get("FGRAD_FAKE_CUPY") == "1":  # the CuPy stand-in (tests/gpu/fake_cupy.py): logic only
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
        from tests.gpu import fake_cupy
        fake_cupy.install()
    sys.exit(main())
