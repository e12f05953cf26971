"""The kernels under W2 and W3, alone: what bounds fgrad's training steps (issue 28).

    python bench/kernel_compare.py [--rounds N] [--mkl PATH/libmkl_rt.so]

One core, one thread per library (wl_harness.pin_process), glibc's malloc tuned as in the
workloads (fgrad.torch.nn.utils.tune_malloc). Each round times every library
once per case, interleaved, so load from other work on the machine hits all of them alike;
the table gives the median over rounds of each time, in microseconds.

- GEMM: every matrix product of the W2 step (784-512-512-10, batch 256, float32), with the
  operand layouts fgrad's rules pass (a transposed operand is a BLAS trans flag, not a copy),
  and the products an im2col convolution would run for W3's second layer. NumPy's matmul
  (the OpenBLAS that NumPy ships, which fgrad calls) against torch.mm and a jitted jax dot.
  With --mkl, also MKL's cblas_sgemm (sequential layer) through ctypes, to size what
  adopting MKL would bring.
- Convolution: each W3 layer's forward and the gradients a step takes of it, fgrad's impls
  (their own algorithm choice: im2col + GEMM or FFT) against PyTorch's (oneDNN: conv2d, then
  aten.convolution_backward).
"""
from __future__ import annotations

import argparse
import ctypes
import os
import statistics
import sys
import time
from collections.abc import Callable

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from wl_harness import pin_process  # noqa: E402  (pinning must precede NumPy's import)

# (name, M, K, N, A transposed, B transposed): C[M, N] = op(A) @ op(B)
W2_GEMMS = [
    ("W2 fwd x@W1.T", 256, 784, 512, False, True),
    ("W2 fwd h1@W2.T", 256, 512, 512, False, True),
    ("W2 fwd h2@W3.T", 256, 512, 10, False, True),
    ("W2 bwd g3@W3", 256, 10, 512, False, False),
    ("W2 bwd g3.T@h2", 10, 256, 512, True, False),
    ("W2 bwd g2@W2", 256, 512, 512, False, False),
    ("W2 bwd g2.T@h1", 512, 256, 512, True, False),
    ("W2 bwd g1.T@x", 512, 256, 784, True, False),
]
CONV_GEMMS = [  # W3's second convolution (64x16x14x14, 32 5x5 kernels) as single GEMMs
    ("W3 conv2 fwd W@cols", 32, 400, 64 * 196, False, False),
    ("W3 conv2 dx W.T@g", 400, 32, 64 * 196, True, False),
    ("W3 conv2 dW g@cols.T", 32, 64 * 196, 400, False, False),
]


def _time(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _rounds(cases: dict[str, Callable[[], object]], rounds: int) -> dict[str, float]:
    """Median seconds per case over interleaved rounds (after two warm-up rounds)."""
    times: dict[str, list[float]] = {k: [] for k in cases}
    for r in range(rounds + 2):
        for k, fn in cases.items():
            t = _time(fn)
            if r >= 2:
                times[k].append(t)
    return {k: statistics.median(v) for k, v in times.items()}


def _mkl_sgemm(path: str):
    """C = op(A) @ op(B) through MKL's cblas_sgemm (row-major, sequential threading layer)."""
    import numpy as np
    lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    lib.MKL_Set_Threading_Layer(ctypes.c_int(1))  # MKL_THREADING_SEQUENTIAL
    f = lib.cblas_sgemm
    i, fl, p = ctypes.c_int, ctypes.c_float, ctypes.c_void_p
    f.argtypes = [i, i, i, i, i, i, fl, p, i, p, i, fl, p, i]

    def sgemm(A, B, ta: bool, tb: bool, out):
        M, N = out.shape
        K = A.shape[0] if ta else A.shape[1]
        assert A.flags.c_contiguous and B.flags.c_contiguous and out.dtype == np.float32
        f(101, 112 if ta else 111, 112 if tb else 111, M, N, K, 1.0, A.ctypes.data, A.shape[1],
          B.ctypes.data, B.shape[1], 0.0, out.ctypes.data, N)
    return sgemm


def gemm_table(rounds: int, mkl: str | None) -> list[str]:
    import jax
    import numpy as np
    import torch
    torch.set_num_threads(1)
    sgemm = _mkl_sgemm(mkl) if mkl else None
    rng = np.random.default_rng(0)
    head = "| GEMM | M x K x N | NumPy (OpenBLAS) µs | torch.mm µs | jax.jit µs |" + (" MKL µs |" if mkl else "")
    lines = [head, "|---|---|---|---|---|" + ("---|" if mkl else "")]
    total = {"numpy": 0.0, "torch": 0.0, "jax": 0.0, "mkl": 0.0}
    for name, M, K, N, ta, tb in W2_GEMMS + CONV_GEMMS:
        A = rng.standard_normal((K, M) if ta else (M, K)).astype(np.float32)
        B = rng.standard_normal((N, K) if tb else (K, N)).astype(np.float32)
        a, b = (A.T if ta else A), (B.T if tb else B)
        out = np.empty((M, N), np.float32)
        at, bt = torch.from_numpy(A), torch.from_numpy(B)
        at, bt = (at.T if ta else at), (bt.T if tb else bt)
        ja, jb = jax.numpy.asarray(A), jax.numpy.asarray(B)
        jf = jax.jit(lambda x, y, ta=ta, tb=tb: (x.T if ta else x) @ (y.T if tb else y))
        cases = {"numpy": lambda: np.matmul(a, b, out=out), "torch": lambda: torch.mm(at, bt),
                 "jax": lambda: jf(ja, jb).block_until_ready()}
        if sgemm is not None:
            out2 = np.empty((M, N), np.float32)
            cases["mkl"] = lambda: sgemm(A, B, ta, tb, out2)
        t = _rounds(cases, rounds)
        if name.startswith("W2"):
            for k, v in t.items():
                total[k] += v
        row = f"| {name} | {M} x {K} x {N} | " + " | ".join(f"{t[k] * 1e6:.0f}" for k in cases) + " |"
        lines.append(row)
    keys = ["numpy", "torch", "jax"] + (["mkl"] if mkl else [])
    lines.append("| **W2 step's GEMMs, sum** | | " + " | ".join(f"**{total[k] * 1e6:.0f}**" for k in keys) + " |")
    return lines


def conv_table(rounds: int) -> list[str]:
    import numpy as np
    import torch

    from fgrad.ops.nn import conv as C
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    pr = dict(stride=(1, 1), padding=((2, 2), (2, 2)), dilation=(1, 1), groups=1)
    cb = torch.ops.aten.convolution_backward
    lines = ["| W3 layer, float32: forward, then the gradients a step needs | fgrad ms | PyTorch (oneDNN) ms "
             "| ratio |", "|---|---|---|---|"]
    tf = tt = 0.0
    for layer, (N, Cin, H, O) in (("conv1 (64x1x28x28, 16 5x5 kernels)", (64, 1, 28, 16)),
                                  ("conv2 (64x16x14x14, 32 5x5 kernels)", (64, 16, 14, 32))):
        x = rng.random((N, Cin, H, H), dtype=np.float32)
        w = rng.standard_normal((O, Cin, 5, 5)).astype(np.float32)
        b = np.zeros(O, np.float32)
        g = rng.standard_normal((N, O, H, H)).astype(np.float32)
        tx, tw, tb, tg = map(torch.from_numpy, (x, w, b, g))
        need_dx = Cin > 1  # the first layer's input is the data: W3 takes no gradient there

        def fgrad_layer():
            # as in a step: the forward stores what the gradients reuse (im2col columns or
            # spectra, in the impls' memo); the weight is new each step, so it is copied
            wk = w.copy()
            C._conv_impl(x, wk, b, xp=np, **pr)
            if need_dx:
                C._input_grad_impl(g, wk, x_hw=(H, H), xp=np, **pr)
            C._weight_grad_impl(x, g, k_hw=(5, 5), xp=np, **pr)
            g.sum(axis=(0, 2, 3))  # the bias gradient

        def torch_layer():
            torch.conv2d(tx, tw, tb, padding=2)
            cb(tg, tx, tw, [O], [1, 1], [2, 2], [1, 1], False, [0, 0], 1, [need_dx, True, True])
        t = _rounds({"fgrad": fgrad_layer, "torch": torch_layer}, rounds)
        tf += t["fgrad"]
        tt += t["torch"]
        lines.append(f"| {layer} | {t['fgrad'] * 1e3:.2f} | {t['torch'] * 1e3:.2f} | "
                     f"{t['fgrad'] / t['torch']:.2f}x |")
    lines.append(f"| **both layers** | **{tf * 1e3:.2f}** | **{tt * 1e3:.2f}** | **{tf / tt:.2f}x** |")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--mkl", help="path of libmkl_rt.so (the `mkl` wheel's), to add MKL's sgemm")
    ap.add_argument("--cpu", type=int, default=1)
    args = ap.parse_args()
    pin_process(args.cpu)
    import fgrad.torch
    # as in the workloads (an fgrad optimizer does this): glibc keeps freed megabyte arrays
    # instead of returning them, so allocations do not cost page faults, for every library
    fgrad.torch.nn.utils.tune_malloc()
    load = os.getloadavg()[0]
    print("\n".join(gemm_table(args.rounds, args.mkl)))
    print()
    print("\n".join(conv_table(args.rounds)))
    print(f"\n{args.rounds} interleaved rounds, medians; load average {load:.2f} at the start, "
          f"{os.getloadavg()[0]:.2f} at the end.")


if __name__ == "__main__":
    main()
