"""Derivative workloads on small float64 inputs: W1 (grad of a 200-op chain), W4 (full
Hessian, n = 256), W5 (4th derivative of a scalar function, plus IR sizes), W7 (tracing a
5,000-op function) and E200 (the 200-op chain on 10^4 elements, fgrad jit vs eager).

Every workload returns {"id", "title", "rows", "tables"}; rows come from wl_harness.measure.
The functions are written once over a NumPy-like module `m` (fgrad.numpy, torch, jax.numpy,
autograd.numpy), so every library computes the same expression.
"""
from __future__ import annotations

from dataclasses import asdict

import numpy as onp
import wl_libs as L
from wl_harness import (
    Impl,
    MismatchError,
    allclose,
    describe_error,
    measure,
    missing_library,
)


def chain(m, x, n_ops: int):
    """`n_ops` element-wise ops cycling through WORKLOADS.md's block of ten:
    sin, x0.9, +0.1, tanh, exp, x0.5, cos, x*x, -0.2, tanh (values stay bounded)."""
    for i in range(n_ops):
        k = i % 10
        if k == 0:
            x = m.sin(x)
        elif k == 1:
            x = x * 0.9
        elif k == 2:
            x = x + 0.1
        elif k == 3:
            x = m.tanh(x)
        elif k == 4:
            x = m.exp(x)
        elif k == 5:
            x = x * 0.5
        elif k == 6:
            x = m.cos(x)
        elif k == 7:
            x = x * x
        elif k == 8:
            x = x - 0.2
        else:
            x = m.tanh(x)
    return x


def _fnp():
    return L.fgrad().numpy


def _jnp():
    return L.jax().numpy


def _anp():
    return L.autograd().numpy


def _result(wid: str, title: str, rows, tables=()) -> dict:
    return {"id": wid, "title": title, "rows": [asdict(r) for r in rows], "tables": list(tables)}


# --- W1 ------------------------------------------------------------------------------------

def w1(config) -> dict:
    x0 = onp.random.default_rng(0).uniform(-1, 1, 16)

    def loss(m):
        return lambda x: m.sum(chain(m, x, 200))

    def fgrad_grad(jit):
        def build():
            fg = L.fgrad()
            g = fg.grad(loss(_fnp()))
            g = fg.jit(g) if jit else g
            return lambda: g(x0)
        return build

    def torch_eager():
        t = L.torch()
        f = loss(t)

        def run():  # a fresh leaf per call, as a training loop would have
            x = t.from_numpy(x0).requires_grad_()
            f(x).backward()
            return x.grad
        return run

    def torch_func():
        t = L.torch()
        g, x = t.func.grad(loss(t)), t.from_numpy(x0)
        return lambda: g(x)

    def jax_grad(jit):
        def build():
            jax = L.jax()
            g = jax.grad(loss(_jnp()))
            g = jax.jit(g) if jit else g
            x = _jnp().asarray(x0)
            return lambda: L.block(g(x))
        return build

    def autograd_grad():
        g = L.autograd().grad(loss(_anp()))
        return lambda: g(x0)

    impls = [
        Impl("fgrad grad", "fgrad", fgrad_grad(False), anchor="PyTorch eager .backward()"),
        Impl("fgrad jit(grad)", "fgrad", fgrad_grad(True), anchor="jax.jit(grad)"),
        Impl("PyTorch eager .backward()", "PyTorch", torch_eager, reference=True),
        Impl("torch.func.grad", "PyTorch", torch_func),
        Impl("JAX grad", "JAX", jax_grad(False)),
        Impl("jax.jit(grad)", "JAX", jax_grad(True)),
        Impl("autograd grad", "autograd", autograd_grad),
    ]
    rows = measure(impls, config, allclose(rtol=1e-9, atol=1e-12))
    return _result("W1", "grad of sum(chain(x)), 200 element-wise ops, 16 float64", rows)


# --- W4 ------------------------------------------------------------------------------------

def w4(config) -> dict:
    n = 256
    rng = onp.random.default_rng(0)
    w0 = rng.standard_normal((n, n)) / onp.sqrt(n)
    x0 = rng.standard_normal(n)

    def f(m, w):
        return lambda x: m.sum(m.tanh(w @ x)) + 0.5 * m.sum(x * x)

    def fgrad_hessian(jit):
        def build():
            fg = L.fgrad()
            h = fg.hessian(f(_fnp(), w0))
            h = fg.jit(h) if jit else h
            return lambda: h(x0)
        return build

    def torch_hessian():
        t = L.torch()
        h = t.func.hessian(f(t, t.from_numpy(w0)))
        x = t.from_numpy(x0)
        return lambda: h(x)

    def jax_hessian(jit):
        def build():
            jax, jnp = L.jax(), _jnp()
            h = jax.hessian(f(jnp, jnp.asarray(w0)))
            h = jax.jit(h) if jit else h
            x = jnp.asarray(x0)
            return lambda: L.block(h(x))
        return build

    def autograd_hessian():
        h = L.autograd().hessian(f(_anp(), w0))
        return lambda: h(x0)

    impls = [
        Impl("fgrad hessian", "fgrad", fgrad_hessian(False), anchor="torch.func.hessian"),
        Impl("fgrad jit(hessian)", "fgrad", fgrad_hessian(True), anchor="jax.jit(jax.hessian)"),
        Impl("torch.func.hessian", "PyTorch", torch_hessian, reference=True),
        Impl("jax.hessian", "JAX", jax_hessian(False)),
        Impl("jax.jit(jax.hessian)", "JAX", jax_hessian(True)),
        Impl("autograd hessian", "autograd", autograd_hessian),
    ]
    rows = measure(impls, config, allclose(rtol=1e-9, atol=1e-12))
    return _result("W4", "full Hessian of sum(tanh(W x)) + 0.5 x.x, n = 256, float64", rows)


# --- W5 ------------------------------------------------------------------------------------

def _f5(m):
    return lambda x: m.sin(x) * m.exp(-x ** 2)


def _nest(grad, f, k: int):
    for _ in range(k):
        f = grad(f)
    return f


def derivative_impls(k: int, x: float = 0.7) -> list[Impl]:
    """The k-th derivative of W5's sin(x) exp(-x^2) at x, by every library: W5 takes k = 4,
    bench/scaling.py's order curve k = 1 ... 8. Names carry k ("fgrad grad^4")."""
    x0 = onp.asarray(x)

    def fgrad_dk(jit):
        def build():
            fg = L.fgrad()
            g = _nest(fg.grad, _f5(_fnp()), k)
            g = fg.jit(g) if jit else g
            return lambda: g(x0)
        return build

    def torch_create_graph():
        t = L.torch()
        f = _f5(t)
        xt = t.tensor(x, dtype=t.float64, requires_grad=True)

        def run():
            y = f(xt)
            for _ in range(k):  # create_graph on every order, as the anchor does
                (y,) = t.autograd.grad(y, xt, create_graph=True)
            return y
        return run

    def torch_func():
        t = L.torch()
        g = _nest(t.func.grad, _f5(t), k)
        xt = t.tensor(x, dtype=t.float64)
        return lambda: g(xt)

    def jax_dk(jit):
        def build():
            jax = L.jax()
            g = _nest(jax.grad, _f5(_jnp()), k)
            g = jax.jit(g) if jit else g
            xj = _jnp().asarray(x)
            return lambda: L.block(g(xj))
        return build

    def autograd_dk():
        g = _nest(L.autograd().grad, _f5(_anp()), k)
        return lambda: g(x0)

    return [
        Impl(f"fgrad grad^{k}", "fgrad", fgrad_dk(False), anchor=f"PyTorch create_graph x{k}"),
        Impl(f"fgrad jit(grad^{k})", "fgrad", fgrad_dk(True), anchor=f"jax.jit(grad^{k})"),
        Impl(f"PyTorch create_graph x{k}", "PyTorch", torch_create_graph, reference=True),
        Impl(f"torch.func.grad^{k}", "PyTorch", torch_func),
        Impl(f"JAX grad^{k}", "JAX", jax_dk(False)),
        Impl(f"jax.jit(grad^{k})", "JAX", jax_dk(True)),
        Impl(f"autograd grad^{k}", "autograd", autograd_dk),
    ]


def w5(config) -> dict:
    impls = derivative_impls(4)
    rows = measure(impls, config, allclose(rtol=1e-9, atol=1e-12))
    return _result("W5", "4th derivative of sin(x) exp(-x^2) at 0.7, float64 scalar", rows,
                   [_ir_sizes()])


def _eqn_count(make_jaxpr, grad, m, k: int):
    try:
        closed = make_jaxpr(_nest(grad, _f5(m), k))(0.7)
        return len(closed.jaxpr.eqns)
    except Exception as exc:  # noqa: BLE001 -- reported in the table
        return "error: " + describe_error(exc)


def _ir_sizes() -> dict:
    """Equations in make_jaxpr(grad^k f), k = 0..4 (WORKLOADS.md quotes JAX: 5, 14, 37, 91, 208)."""
    rows = []
    def count(lib, k):
        try:
            mod = lib()
        except Exception as exc:  # noqa: BLE001 -- reported in the table
            return "n/a" if missing_library(exc) else "error: " + describe_error(exc)
        return _eqn_count(mod.make_jaxpr, mod.grad, mod.numpy, k)

    for k in range(5):
        ours, theirs = count(L.fgrad, k), count(L.jax, k)
        ratio = f"{ours / theirs:.2f}" if isinstance(ours, int) and isinstance(theirs, int) else "n/a"
        rows.append([str(k), str(ours), str(theirs), ratio])
    return {"title": "equations in make_jaxpr(grad^k f)(0.7)", "header": ["k", "fgrad", "JAX", "fgrad / JAX"],
            "rows": rows}


# --- W7 ------------------------------------------------------------------------------------

W7_OPS = 5000


def _fresh(m):
    """A new function object on every call, so no trace cache keyed on the function can hit."""
    def f(x):
        return chain(m, x, W7_OPS)
    return f


def _compare_traces(ref, out):
    """Traces are compared by what they compute on the input and by their size."""
    (v_ref, n_ref), (v_out, n_out) = ref, out
    allclose(rtol=1e-12, atol=1e-14)(v_ref, v_out)
    if not 0.9 * n_ref <= n_out <= 1.1 * n_ref:
        raise MismatchError(f"{n_out} equations, reference has {n_ref}")


def w7(config) -> dict:
    x0 = onp.random.default_rng(0).uniform(-1, 1, 16)
    last = {}

    def fgrad_trace():
        fg = L.fgrad()

        def run():
            last["fgrad"] = fg.make_jaxpr(_fresh(fg.numpy))(x0)
            return last["fgrad"]

        def inspect():
            closed = last["fgrad"]
            out = closed(x0)
            return onp.asarray(out[0] if isinstance(out, (list, tuple)) else out), len(closed.jaxpr.eqns)
        return run, inspect

    def jax_trace():
        jax = L.jax()
        from jax.extend.core import jaxpr_as_fun

        def run():
            last["jax"] = jax.make_jaxpr(_fresh(jax.numpy))(x0)
            return last["jax"]

        def inspect():
            closed = last["jax"]
            return onp.asarray(jaxpr_as_fun(closed)(x0)[0]), len(closed.jaxpr.eqns)
        return run, inspect

    impls = [
        Impl("fgrad.make_jaxpr", "fgrad", fgrad_trace, anchor="jax.make_jaxpr"),
        Impl("jax.make_jaxpr", "JAX", jax_trace, reference=True),
    ]
    rows = measure(impls, config, _compare_traces)
    sizes = {"title": "equations in the traced IR", "header": ["library", "equations"], "rows": []}
    for lib, closed in last.items():
        sizes["rows"].append([lib, str(len(closed.jaxpr.eqns))])
    return _result("W7", f"trace a {W7_OPS:,}-op element-wise function (16 float64), fresh function each call",
                   rows, [sizes])


# --- E200: the 200-op chain at n = 10^4, jit against eager ----------------------------------

def e200(config) -> dict:
    """Element-wise fusion: jit should beat eager by 3x or more once arrays are large enough
    for per-op memory traffic to dominate. The grad rows are informational."""
    x0 = onp.random.default_rng(0).uniform(-1, 1, 10 ** 4)

    def fgrad_fn(jit, grad):
        def build():
            fg = L.fgrad()
            fnp = fg.numpy
            f = (lambda x: fnp.sum(chain(fnp, x, 200))) if grad else (lambda x: chain(fnp, x, 200))
            f = fg.grad(f) if grad else f
            f = fg.jit(f) if jit else f
            return lambda: f(x0)
        return build

    def numpy_fn():
        return lambda: chain(onp, x0, 200)

    fwd = [
        Impl("fgrad eager f(x)", "fgrad", fgrad_fn(False, False)),
        Impl("fgrad jit f(x)", "fgrad", fgrad_fn(True, False), anchor="fgrad eager f(x)"),
        Impl("NumPy f(x)", "NumPy", numpy_fn, reference=True),
    ]
    bwd = [
        Impl("fgrad eager grad", "fgrad", fgrad_fn(False, True)),
        Impl("fgrad jit(grad)", "fgrad", fgrad_fn(True, True), anchor="fgrad eager grad"),
    ]
    rows = measure(fwd, config, allclose(rtol=1e-9, atol=1e-12))
    rows += measure(bwd, config, allclose(rtol=1e-9, atol=1e-12))
    result = _result("E200", "200-op element-wise chain on 10^4 float64: fgrad jit vs eager", rows)
    note = ("The target is on f(x) (speedup = eager time / jit time, median over rounds); NumPy is the "
            "floor for eager, the grad rows are for information.")
    result["notes"] = [note]
    return result
