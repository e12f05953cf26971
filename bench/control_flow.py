"""RK4 integration of a small neural ODE with fori_loop: fgrad vs jax.jit vs PyTorch eager.

    dy/dt = tanh(W y + b),  y(0) = y0,  1,000 RK4 steps of size h,  loss = sum(y(T) ** 2)

Times the loss and its gradient with respect to the initial state and the parameters
(W, b, y0), one thread each:
  * fgrad: fgrad.lax.fori_loop (a scan: reverse mode saves the carry of each step and
    reruns the body in the backward loop), eagerly and under fgrad.jit;
  * JAX: jax.jit of jax.lax.fori_loop and of jax.grad of it (x64);
  * PyTorch: eager Python loop, loss.backward().
Results are cross-checked first. Run: python bench/control_flow.py [--steps N] [--dim D]
"""
import os

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as onp  # noqa: E402

import fgrad  # noqa: E402
import fgrad.numpy as fnp  # noqa: E402


def problem(dim: int, seed: int = 0):
    rng = onp.random.default_rng(seed)
    W = rng.normal(size=(dim, dim)) / onp.sqrt(dim)
    b = rng.normal(size=dim) * 0.1
    y0 = rng.normal(size=dim)
    return W, b, y0


def make_fgrad(steps: int, h: float):
    def rhs(W, b, y):
        return fnp.tanh(W @ y + b)

    def loss(W, b, y0):
        def step(i, y):
            k1 = rhs(W, b, y)
            k2 = rhs(W, b, y + 0.5 * h * k1)
            k3 = rhs(W, b, y + 0.5 * h * k2)
            k4 = rhs(W, b, y + h * k3)
            return y + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        y = fgrad.lax.fori_loop(0, steps, step, y0)
        return fnp.sum(y * y)
    grad = fgrad.grad(loss, argnums=(0, 1, 2))
    return {"fgrad eager": (loss, grad), "fgrad jit": (fgrad.jit(loss), fgrad.jit(grad))}


def make_jax(steps: int, h: float):
    try:
        import jax  # optional: the reference
    except ImportError:
        return {}
    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_platforms", "cpu")
    import jax.numpy as jnp  # optional: the reference

    def rhs(W, b, y):
        return jnp.tanh(W @ y + b)

    def loss(W, b, y0):
        def step(i, y):
            k1 = rhs(W, b, y)
            k2 = rhs(W, b, y + 0.5 * h * k1)
            k3 = rhs(W, b, y + 0.5 * h * k2)
            k4 = rhs(W, b, y + h * k3)
            return y + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        y = jax.lax.fori_loop(0, steps, step, y0)
        return jnp.sum(y * y)
    f, g = jax.jit(loss), jax.jit(jax.grad(loss, argnums=(0, 1, 2)))

    def block(fn):
        return lambda *a: jax.block_until_ready(fn(*a))
    return {"jax.jit": (block(f), block(g))}


def make_torch(steps: int, h: float):
    try:
        import torch  # optional: the reference
    except ImportError:
        return {}
    torch.set_num_threads(1)

    def loss(W, b, y0):
        y = y0
        for _ in range(steps):
            k1 = torch.tanh(W @ y + b)
            k2 = torch.tanh(W @ (y + 0.5 * h * k1) + b)
            k3 = torch.tanh(W @ (y + 0.5 * h * k2) + b)
            k4 = torch.tanh(W @ (y + h * k3) + b)
            y = y + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        return (y * y).sum()

    def value(W, b, y0):
        with torch.no_grad():
            return loss(*[torch.from_numpy(a) for a in (W, b, y0)]).item()

    def grad(W, b, y0):
        ts = [torch.from_numpy(a).requires_grad_() for a in (W, b, y0)]
        loss(*ts).backward()
        return tuple(t.grad.numpy() for t in ts)
    return {"torch eager": (value, grad)}


def timeit(fn, args, repeat: int) -> float:
    fn(*args)  # warm-up (and jit compilation)
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--dim", type=int, default=16)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    h = 0.01
    data = problem(args.dim)
    impls = {**make_fgrad(args.steps, h), **make_jax(args.steps, h), **make_torch(args.steps, h)}
    ref_val, ref_grad = impls["fgrad eager"][0](*data), impls["fgrad eager"][1](*data)
    for name, (f, g) in impls.items():  # cross-check before timing
        onp.testing.assert_allclose(float(f(*data)), float(ref_val), rtol=1e-9, err_msg=name)
        for a, b in zip(g(*data), ref_grad):
            onp.testing.assert_allclose(onp.asarray(a), onp.asarray(b), rtol=1e-7, atol=1e-10, err_msg=name)
    print(f"RK4, {args.steps} steps, neural ODE of dimension {args.dim}, float64, one thread; "
          f"median of {args.repeat} (ms). Results cross-checked.")
    rows = {name: (timeit(f, data, args.repeat), timeit(g, data, args.repeat)) for name, (f, g) in impls.items()}
    base = rows.get("fgrad jit")
    print(f"{'':14s} {'loss':>10s} {'grad':>10s}   {'fgrad jit / this (loss, grad)':>30s}")
    for name, (tf, tg) in rows.items():
        print(f"{name:14s} {tf * 1e3:10.2f} {tg * 1e3:10.2f}   {base[0] / tf:14.2f} {base[1] / tg:14.2f}")


if __name__ == "__main__":
    main()
