"""Dispatch time of a jitted function for each kind of argument a user passes: NumPy arrays
and scalars, Python numbers, pytrees of them; fgrad.jit against jax.jit (one thread, x64).

    python bench/jit_dispatch.py [--calls 2000] [--batches 15] [--skip-jax]

Two functions: `x * 2 + 1` (every kind) and the fourth derivative of `sin(x) * x` (floating
kinds). Each cell is the median over batches of the mean time of one call, in microseconds,
and the fastest batch in brackets (the floor, less sensitive to other processes' load).
Prints a Markdown table.
"""
from __future__ import annotations

import argparse
import os
import statistics
import time

# one thread for XLA, set before JAX is imported
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402


def kinds() -> list[tuple[str, tuple, bool]]:
    """(name, arguments, floating: whether the fourth derivative applies)."""
    return [
        ("0-d array float64", (np.array(0.7),), True),
        ("Python float", (0.7,), True),
        ("np.float64", (np.float64(0.7),), True),
        ("np.float32", (np.float32(0.7),), True),
        ("0-d array float32", (np.array(0.7, np.float32),), True),
        ("Python int", (3,), False),
        ("np.int32", (np.int32(3),), False),
        ("np.int64", (np.int64(3),), False),
        ("Python bool", (True,), False),
        ("np.bool_", (np.bool_(True),), False),
        ("Python complex", (0.5 + 1j,), False),
        ("np.complex128", (np.complex128(0.5 + 1j),), False),
        ("tuple (np.float64, Python float)", ((np.float64(0.7), 0.3),), False),
        ("dict {a: 0-d array, b: np.float32}", ({"a": np.array(0.7), "b": np.float32(0.3)},), False),
    ]


def _leaf(x):
    return x * 2 + 1


def _tree(t):
    if isinstance(t, dict):
        return t["a"] * 2 + t["b"]
    return t[0] * 2 + t[1]


def timing(fn, args, calls: int, batches: int) -> tuple[float, float]:
    """(median, fastest) of `batches` batch means of one call of fn(*args), in microseconds."""
    for _ in range(3):
        fn(*args)
    means = []
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn(*args)
        means.append((time.perf_counter() - t0) / calls * 1e6)
    return statistics.median(means), min(means)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--calls", type=int, default=2000)
    p.add_argument("--batches", type=int, default=15)
    p.add_argument("--skip-jax", action="store_true")
    a = p.parse_args()

    import fgrad
    libs = [("fgrad", fgrad.jit, fgrad.grad, lambda x: fgrad.numpy.sin(x) * x)]
    if not a.skip_jax:
        try:
            import jax
            jax.config.update("jax_enable_x64", True)
            import jax.numpy as jnp
            libs.append(("jax", jax.jit, jax.grad, lambda x: jnp.sin(x) * x))
        except ImportError:
            pass

    def cell(t):
        return f"{t[0]:.2f} ({t[1]:.2f})"

    head = ["argument"] + [f"{name} x*2+1" for name, *_ in libs] + [f"{name} grad^4" for name, *_ in libs]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for name, args, floating in kinds():
        row = [name]
        grads = []
        for _, jit, grad, f in libs:
            fn = _tree if isinstance(args[0], (tuple, dict)) else _leaf
            row.append(cell(timing(jit(fn), args, a.calls, a.batches)))
            if floating:
                g4 = jit(grad(grad(grad(grad(f)))))
                grads.append(cell(timing(g4, args, a.calls, a.batches)))
            else:
                grads.append("")
        print("| " + " | ".join(row + grads) + " |")


if __name__ == "__main__":
    main()
