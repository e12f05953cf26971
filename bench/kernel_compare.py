"""The kernels under W2 and W3, alone: what bounds fgrad's training steps (issue 28).

    python bench/kernel_compare.py [--rounds N] [--mkl PATH/libmkl_rt.so] [--only gemm,linear,conv]

One core, one thread per library (wl_harness.pin_process), glibc's malloc tuned as in the
workloads (fgrad.torch.nn.utils.tune_malloc). Each round times every library
once per case, interleaved, so load from other work on the machine hits all of them alike;
the table gives the median over rounds of each time, in microseconds.

- GEMM: every matrix product of the W2 step (784-512-512-10, batch 256, float32), with the
  operand layouts fgrad's rules pass (a transposed operand is a BLAS trans flag, not a copy),
  and the products an im2col convolution would run for W3's second layer. NumPy's matmul
  (the OpenBLAS that NumPy ships, which fgrad calls) against torch.mm and a jitted jax dot.
  With --mkl, also MKL's cblas_sgemm (sequential layer) through ctypes, to size what
  adopting MKL would bring. With oneDNN installed (fgrad's optional extra), also oneDNN's
  matmul primitive (transposed operands as strided memory descriptors).
  The last column is fgrad's own path (fgrad.ops.linalg.matmul_2d: oneDNN's sgemm where
  onednn.gemm_eligible, as under the pinned single thread here, else NumPy's).
- Linear layers: W2's three forward layers as a whole, x @ W.T + b (then ReLU on the hidden
  ones): NumPy's GEMM with the bias and ReLU applied in place, oneDNN's matmul with the bias and
  a ReLU post-op fused (which maps NaN to 0, so fgrad does not use it), fgrad's linear and relu
  impls, and torch's linear + relu_.
- Convolution: each W3 layer's forward and the gradients a step takes of it, fgrad's impls
  (with oneDNN when installed, and with fgrad's own kernels: im2col + GEMM or FFT) against
  PyTorch's (oneDNN: conv2d, then aten.convolution_backward); then each product alone.
"""
from __future__ import annotations

import argparse
import contextlib
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


def _onednn_matmul(M: int, K: int, N: int, ta: bool, tb: bool, bias: bool = False, relu: bool = False):
    """C[M, N] = op(A) @ op(B) (+ b, then ReLU) by oneDNN's matmul primitive, or None when
    oneDNN is not installed. A transposed operand is a strided descriptor over the stored
    array (no copy), as the BLAS trans flags are."""
    import numpy as np

    from fgrad.ops.nn import onednn as D
    lib = D.library()
    if lib is None:
        return None
    C = lib.lib
    pp, i, d, p = ctypes.POINTER(ctypes.c_void_p), ctypes.c_int, ctypes.POINTER(ctypes.c_int64), ctypes.c_void_p
    C.dnnl_memory_desc_create_with_strides.argtypes = [pp, i, d, i, d]
    C.dnnl_matmul_primitive_desc_create.argtypes = [pp, p, p, p, p, p, p]
    C.dnnl_post_ops_create.argtypes = [pp]
    C.dnnl_post_ops_append_eltwise.argtypes = [p, i, ctypes.c_float, ctypes.c_float]
    C.dnnl_primitive_attr_create.argtypes = [pp]
    C.dnnl_primitive_attr_set_post_ops.argtypes = [p, p]

    def desc(rows, cols, transposed):
        md = ctypes.c_void_p()
        strides = (1, rows) if transposed else (cols, 1)  # the stored array is [cols, rows] if transposed
        lib.check(C.dnnl_memory_desc_create_with_strides(ctypes.byref(md), 2, D._Dims(rows, cols), D._F32,
                                                         D._Dims(*strides)), "memory_desc_create_with_strides")
        return md
    a, b, c = desc(M, K, ta), desc(K, N, tb), desc(M, N, False)
    bmd = desc(1, N, False) if bias else None
    attr = ctypes.c_void_p()
    lib.check(C.dnnl_primitive_attr_create(ctypes.byref(attr)), "attr")
    lib.check(C.dnnl_primitive_attr_set_scratchpad_mode(attr, D._SCRATCHPAD_USER), "scratchpad mode")
    if relu:
        po = ctypes.c_void_p()
        lib.check(C.dnnl_post_ops_create(ctypes.byref(po)), "post_ops_create")
        lib.check(C.dnnl_post_ops_append_eltwise(po, 0x20, 0.0, 0.0), "append relu")  # dnnl_eltwise_relu
        lib.check(C.dnnl_primitive_attr_set_post_ops(attr, po), "set_post_ops")
    pd = ctypes.c_void_p()
    lib.check(C.dnnl_matmul_primitive_desc_create(ctypes.byref(pd), lib.engine, a, b, bmd, c, attr),
              "matmul_primitive_desc_create")
    prim = D._Primitive(lib, pd)
    mems = {41 if k == "b" else k: D._Memory(lib, md) for k, md in ((1, a), (33, b), (17, c), ("b", bmd)) if md}
    scratch = D._scratch_memory(lib, prim)
    args = list(mems.items()) + ([(D._ARG_SCRATCHPAD, scratch[0])] if scratch else [])

    def run(A, B, bvec, out):
        mems[1].bind(A.ctypes.data)
        mems[33].bind(B.ctypes.data)
        mems[17].bind(out.ctypes.data)
        if bias:
            mems[41].bind(bvec.ctypes.data)
        prim.run(args)
        return out
    run.keep = (prim, mems, scratch)
    return run


def gemm_table(rounds: int, mkl: str | None) -> list[str]:
    import jax
    import numpy as np
    import torch
    torch.set_num_threads(1)
    from fgrad.ops.nn import onednn
    sgemm = _mkl_sgemm(mkl) if mkl else None
    dnnl = onednn.available()
    rng = np.random.default_rng(0)
    from fgrad.ops.linalg import matmul_2d
    head = ("| GEMM | M x K x N | NumPy (OpenBLAS) µs | torch.mm µs | jax.jit µs |" + (" MKL µs |" if mkl else "")
            + (" oneDNN matmul µs |" if dnnl else "") + " fgrad (matmul_2d) µs |")
    lines = [head, "|---|---|---|---|---|" + ("---|" if mkl else "") + ("---|" if dnnl else "") + "---|"]
    total = {"numpy": 0.0, "torch": 0.0, "jax": 0.0, "mkl": 0.0, "onednn": 0.0, "fgrad": 0.0}
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
        if dnnl:
            mm, out3 = _onednn_matmul(M, K, N, ta, tb), np.empty((M, N), np.float32)
            cases["onednn"] = lambda: mm(A, B, None, out3)
            np.testing.assert_allclose(mm(A, B, None, out3), a @ b, rtol=1e-3, atol=1e-3)
        # what fgrad's dot_general runs: oneDNN's sgemm where onednn.gemm_eligible, else NumPy's
        cases["fgrad"] = lambda: matmul_2d(a, b, xp=np)
        t = _rounds(cases, rounds)
        if name.startswith("W2"):
            for k, v in t.items():
                total[k] += v
        row = f"| {name} | {M} x {K} x {N} | " + " | ".join(f"{t[k] * 1e6:.0f}" for k in cases) + " |"
        lines.append(row)
    keys = ["numpy", "torch", "jax"] + (["mkl"] if mkl else []) + (["onednn"] if dnnl else []) + ["fgrad"]
    lines.append("| **W2 step's GEMMs, sum** | | " + " | ".join(f"**{total[k] * 1e6:.0f}**" for k in keys) + " |")
    return lines


def linear_table(rounds: int) -> list[str]:
    """W2's forward layers with their epilogues: NumPy GEMM + in-place bias and ReLU (fgrad's
    impls) against oneDNN's matmul with the bias and ReLU fused, and torch."""
    import numpy as np
    import torch
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    from fgrad.ops.nn import dense
    lines = ["| W2 layer, float32 | NumPy GEMM + bias + ReLU in place µs | oneDNN matmul, bias + ReLU fused µs "
             "| fgrad linear + relu impls µs | torch linear + relu_ µs |", "|---|---|---|---|---|"]
    for M, K, N, relu in ((256, 784, 512, True), (256, 512, 512, True), (256, 512, 10, False)):
        x = rng.standard_normal((M, K)).astype(np.float32)
        W = (rng.standard_normal((N, K)) * 0.05).astype(np.float32)
        b = rng.standard_normal(N).astype(np.float32)
        out, out2 = np.empty((M, N), np.float32), np.empty((M, N), np.float32)
        mm = _onednn_matmul(M, K, N, False, True, bias=True, relu=relu)
        tx, tW, tb = map(torch.from_numpy, (x, W, b))

        def numpy_layer():
            np.matmul(x, W.T, out=out)
            np.add(out, b, out=out)
            if relu:
                np.maximum(out, 0, out=out)

        def torch_layer():
            y = torch.nn.functional.linear(tx, tW, tb)
            return y.relu_() if relu else y
        def fgrad_layer():
            y = dense._linear_impl(x, W, b, xp=np)
            return dense._relu_impl(y, xp=np) if relu else y
        numpy_layer()
        mm(x, W, b, out2)
        np.testing.assert_allclose(out2, out, rtol=1e-4, atol=1e-3)
        t = _rounds({"numpy": numpy_layer, "onednn": lambda: mm(x, W, b, out2), "fgrad": fgrad_layer,
                     "torch": torch_layer}, rounds)
        lines.append(f"| {M} x {K} x {N}{' + ReLU' if relu else ''} | {t['numpy'] * 1e6:.0f} | "
                     f"{t['onednn'] * 1e6:.0f} | {t['fgrad'] * 1e6:.0f} | {t['torch'] * 1e6:.0f} |")
    return lines


W3_LAYERS = (("conv1 (64x1x28x28, 16 5x5 kernels)", (64, 1, 28, 16)),
             ("conv2 (64x16x14x14, 32 5x5 kernels)", (64, 16, 14, 32)))


@contextlib.contextmanager
def _fgrad_own_kernels():
    """conv.py's impls without oneDNN (im2col + GEMM or the FFT, by their cost model)."""
    from fgrad.ops.nn import conv as C
    saved = C._onednn_layout
    C._onednn_layout = lambda *a, **k: None
    try:
        yield
    finally:
        C._onednn_layout = saved


def conv_table(rounds: int) -> list[str]:
    import numpy as np
    import torch

    from fgrad.ops.nn import conv as C
    from fgrad.ops.nn import onednn
    torch.set_num_threads(1)
    dnnl = onednn.available()
    rng = np.random.default_rng(0)
    pr = dict(stride=(1, 1), padding=((2, 2), (2, 2)), dilation=(1, 1), groups=1)
    cb = torch.ops.aten.convolution_backward
    lines = ["| W3 layer, float32: forward, then the gradients a step needs | fgrad ms "
             + ("(oneDNN) | fgrad, own kernels ms " if dnnl else "") + "| PyTorch (oneDNN) ms | ratio |",
             "|---|---|---|---|" + ("---|" if dnnl else "")]
    per_op = ["| product, float32 | " + ("fgrad oneDNN ms | " if dnnl else "")
              + "fgrad own kernels ms | PyTorch ms |", "|---|---|---|" + ("---|" if dnnl else "")]
    tf = tt = to = 0.0
    for layer, (N, Cin, H, O) in W3_LAYERS:
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

        def fgrad_own_layer():
            with _fgrad_own_kernels():
                fgrad_layer()

        def torch_layer():
            torch.conv2d(tx, tw, tb, padding=2)
            cb(tg, tx, tw, [O], [1, 1], [2, 2], [1, 1], False, [0, 0], 1, [need_dx, True, True])
        cases = {"fgrad": fgrad_layer, "own": fgrad_own_layer, "torch": torch_layer}
        if not dnnl:
            del cases["own"]
        t = _rounds(cases, rounds)
        tf += t["fgrad"]
        tt += t["torch"]
        to += t.get("own", 0.0)
        lines.append(f"| {layer} | {t['fgrad'] * 1e3:.2f} | " + (f"{t['own'] * 1e3:.2f} | " if dnnl else "")
                     + f"{t['torch'] * 1e3:.2f} | {t['fgrad'] / t['torch']:.2f}x |")

        # each product alone (own kernels: nothing shared through the memo)
        def own(fn):
            def run():
                with _fgrad_own_kernels():
                    C._memo.clear()
                    fn()
            return run
        products = {
            "forward": (lambda: C._conv_impl(x, w, b, xp=np, **pr),
                        lambda: torch.conv2d(tx, tw, tb, padding=2)),
            "input gradient": (lambda: C._input_grad_impl(g, w, x_hw=(H, H), xp=np, **pr),
                               lambda: cb(tg, tx, tw, [O], [1, 1], [2, 2], [1, 1], False, [0, 0], 1,
                                          [True, False, False])),
            "weight gradient": (lambda: C._weight_grad_impl(x, g, k_hw=(5, 5), xp=np, **pr),
                                lambda: cb(tg, tx, tw, [O], [1, 1], [2, 2], [1, 1], False, [0, 0], 1,
                                           [False, True, False])),
        }
        for name, (fg, th) in products.items():
            if name == "input gradient" and not need_dx:
                continue
            cases = {"onednn": fg, "own": own(fg), "torch": th} if dnnl else {"own": own(fg), "torch": th}
            t = _rounds(cases, rounds)
            per_op.append(f"| {layer.split()[0]} {name} | " + (f"{t['onednn'] * 1e3:.2f} | " if dnnl else "")
                          + f"{t['own'] * 1e3:.2f} | {t['torch'] * 1e3:.2f} |")
    lines.append(f"| **both layers** | **{tf * 1e3:.2f}** | " + (f"**{to * 1e3:.2f}** | " if dnnl else "")
                 + f"**{tt * 1e3:.2f}** | **{tf / tt:.2f}x** |")
    return lines + [""] + per_op


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--mkl", help="path of libmkl_rt.so (the `mkl` wheel's), to add MKL's sgemm")
    ap.add_argument("--cpu", type=int, default=1)
    ap.add_argument("--only", default="gemm,linear,conv", help="comma-separated tables: gemm, linear, conv")
    args = ap.parse_args()
    only = set(args.only.split(","))
    pin_process(args.cpu)
    import fgrad.torch
    # as in the workloads (an fgrad optimizer does this): glibc keeps freed megabyte arrays
    # instead of returning them, so allocations do not cost page faults, for every library
    fgrad.torch.nn.utils.tune_malloc()
    load = os.getloadavg()[0]
    from fgrad.ops.nn import onednn
    tables = [("gemm", lambda: gemm_table(args.rounds, args.mkl)), ("conv", lambda: conv_table(args.rounds))]
    if onednn.available():
        tables.insert(1, ("linear", lambda: linear_table(args.rounds)))
    for name, table in tables:
        if name in only:
            print("\n".join(table()) + "\n", flush=True)
    print(f"\n{args.rounds} interleaved rounds, medians; load average {load:.2f} at the start, "
          f"{os.getloadavg()[0]:.2f} at the end.")


if __name__ == "__main__":
    main()
