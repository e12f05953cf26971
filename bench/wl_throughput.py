"""W8, element-wise throughput (issue 28): the gradient of a 20-step chain
`x = sin(x) * 1.01 + tanh(x) * 0.5`, summed, over n = 10^3 ... 10^6 (10^7 with
FGRAD_W8_MAX_EXP=7) elements, float64 and float32.

fgrad eager is compared with PyTorch eager `.backward()`, fgrad jit with jax.jit(grad). Every
(dtype, n) is its own interleaved measurement, so its ratios come from rounds taken moments
apart; the curve table collects the per-call medians and ratios of all of them.
"""
from __future__ import annotations

import os
import statistics
from dataclasses import asdict

import numpy as onp
import wl_libs as L
from wl_harness import Config, Impl, allclose, log, measure

STEPS = 20
# Environment, not a flag: the worker process reads it (workloads.py passes its environment on).
MAX_EXP = int(os.environ.get("FGRAD_W8_MAX_EXP", "6"))
SIZES = [10 ** k for k in range(3, MAX_EXP + 1)]
DTYPES = ("float64", "float32")
# result tolerances per dtype: the chain's derivative is a product of 20 factors of about 1,
# so float32 results differ between libraries by a few hundred ulps of float32
TOLERANCE = {"float64": (1e-9, 1e-12), "float32": (2e-4, 1e-5)}


def row_name(name: str, dtype: str, n: int) -> str:
    """The report's name for implementation `name` measured at (`dtype`, `n`)."""
    return f"{name} [{dtype}, n={n:.0e}]"


def chain(m, x):
    """The W8 chain over a NumPy-like module `m`, summed."""
    for _ in range(STEPS):
        x = m.sin(x) * 1.01 + m.tanh(x) * 0.5
    return m.sum(x)


def _impls(x0: onp.ndarray) -> list[Impl]:
    def fgrad_grad(jit):
        def build():
            fg = L.fgrad()
            g = fg.grad(lambda x: chain(fg.numpy, x))
            g = fg.jit(g) if jit else g
            return lambda: g(x0)
        return build

    def torch_eager():
        t = L.torch()

        def run():  # a fresh leaf per call, as a training loop would have
            x = t.from_numpy(x0).requires_grad_()
            chain(t, x).backward()
            return x.grad
        return run

    def jax_jit():
        jax = L.jax()
        g = jax.jit(jax.grad(lambda x: chain(jax.numpy, x)))
        x = jax.numpy.asarray(x0)
        return lambda: L.block(g(x))

    return [
        Impl("fgrad grad", "fgrad", fgrad_grad(False), anchor="PyTorch eager .backward()"),
        Impl("fgrad jit(grad)", "fgrad", fgrad_grad(True), anchor="jax.jit(grad)"),
        Impl("PyTorch eager .backward()", "PyTorch", torch_eager, reference=True),
        Impl("jax.jit(grad)", "JAX", jax_jit),
    ]


def _config_for(config: Config, n: int) -> Config:
    """Fewer rounds for the largest arrays, where one call already lasts tens of ms."""
    rounds = config.rounds if n < 10 ** 6 else max(3, config.rounds // 3)
    return Config(rounds=rounds, warmup=config.warmup, min_time=config.min_time,
                  max_number=config.max_number, quick=config.quick)


def w8(config) -> dict:
    rows, curve = [], []
    for dtype in DTYPES:
        for n in SIZES:
            x0 = onp.random.default_rng(0).uniform(-1, 1, n).astype(dtype)
            log(f"  W8 {dtype} n={n:,}")
            got = measure(_impls(x0), _config_for(config, n), allclose(*TOLERANCE[dtype]))
            by = {r.name: r for r in got}
            for r in got:
                r.name = row_name(r.name, dtype, n)
                if r.anchor:
                    r.anchor = row_name(r.anchor, dtype, n)
            rows += got
            curve.append(_curve_row(dtype, n, by))
    table = {"title": "W8 curve: per-call median in ms, ratio = median over rounds of fgrad / anchor",
             "header": ["dtype", "n", "fgrad eager", "PyTorch eager", "eager ratio", "fgrad jit",
                        "jax.jit", "jit ratio", "jit / fgrad eager"],
             "rows": curve}
    return {"id": "W8", "title": f"grad of sum({STEPS} x [x = sin(x)*1.01 + tanh(x)*0.5]), n = 10^3..10^{MAX_EXP}",
            "rows": [asdict(r) for r in rows], "tables": [table]}


def _ms(row) -> str:
    return f"{row.median_s * 1e3:.3g}" if row is not None and row.median_s is not None else row.status if row else "–"


def _ratio(row) -> str:
    return f"{row.ratio:.2f}x" if row is not None and row.ratio is not None else "n/a"


def _curve_row(dtype: str, n: int, by: dict) -> list[str]:
    eager, jit = by.get("fgrad grad"), by.get("fgrad jit(grad)")
    self_ratio = "n/a"
    if eager and jit and eager.times and len(eager.times) == len(jit.times):
        self_ratio = f"{statistics.median(j / e for j, e in zip(jit.times, eager.times)):.2f}x"
    return [dtype, f"{n:.0e}", _ms(eager), _ms(by.get("PyTorch eager .backward()")), _ratio(eager),
            _ms(jit), _ms(by.get("jax.jit(grad)")), _ratio(jit), self_ratio]
