"""Issue 2 measurements: IR size of grad^k and grad overhead on a 200-op chain.

Run: python bench/core_bench.py   (JAX and HIPS autograd are compared when installed)
"""
from __future__ import annotations

import timeit

import numpy as onp

import fgrad
import fgrad.numpy as fnp


def ir_sizes(kmax: int = 4):
    rows = []
    f = lambda x: fnp.sin(x) * fnp.exp(-x ** 2)
    g = f
    try:
        import jax
        import jax.numpy as jnp
        jf = lambda x: jnp.sin(x) * jnp.exp(-x ** 2)
    except ImportError:
        jax = None
    jg = jf if jax else None
    for k in range(1, kmax + 1):
        g = fgrad.grad(g)
        ours = len(fgrad.make_jaxpr(g)(0.7).eqns)
        theirs = None
        if jax:
            jg = jax.grad(jg)
            theirs = len(jax.make_jaxpr(jg)(0.7).jaxpr.eqns)
        rows.append((k, ours, theirs))
    return rows


def chain(np_mod, x):
    for i in range(50):
        x = np_mod.sin(x)
        x = x * 1.01
        x = np_mod.tanh(x)
        x = x + 0.1
    return np_mod.sum(x)


def best(fn, number=20, repeat=7):
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def overhead():
    x = onp.linspace(-1, 1, 16)
    g = fgrad.grad(lambda x: chain(fnp, x))
    ours = best(lambda: g(x))
    theirs = None
    try:
        import autograd
        import autograd.numpy as anp
        ga = autograd.grad(lambda x: chain(anp, x))
        onp.testing.assert_allclose(ga(x), g(x), rtol=1e-10)
        theirs = best(lambda: ga(x))
    except ImportError:
        pass
    return ours, theirs


if __name__ == "__main__":
    print("IR size: equations in make_jaxpr(grad^k(f))(x), f(x) = sin(x) * exp(-x**2)")
    print("| k | fgrad | JAX | fgrad / JAX |")
    print("|---|---|---|---|")
    for k, ours, theirs in ir_sizes():
        ratio = f"{ours / theirs:.2f}" if theirs else "n/a"
        print(f"| {k} | {ours} | {theirs if theirs else 'not installed'} | {ratio} |")
    ours, theirs = overhead()
    print()
    print("grad(f)(x), f = 200-op elementwise chain on a 16-element vector (best of 7x20 calls)")
    print("| library | time per grad call (ms) | ratio to autograd |")
    print("|---|---|---|")
    print(f"| fgrad | {ours * 1e3:.3f} | {ours / theirs:.2f} |" if theirs else f"| fgrad | {ours * 1e3:.3f} | n/a |")
    if theirs:
        print(f"| HIPS autograd | {theirs * 1e3:.3f} | 1.00 |")
