"""No reference cycles in the functional transforms' graphs or in jaxprs: with the garbage
collector off, memory stays flat and the collector finds nothing of fgrad's to free."""
import gc
import tracemalloc
import weakref

import numpy as onp

import fgrad
import fgrad.numpy as np


def _loss(w, x):
    h = np.tanh(x @ w)
    return np.sum(h * h) + np.sum(np.max(h, axis=1))


def _step(w, x):
    g = fgrad.grad(_loss)(w, x)
    h = fgrad.jvp(lambda v: fgrad.grad(_loss)(v, x), (w,), (g,))[1]
    per = fgrad.vmap(lambda xi: fgrad.grad(_loss)(w, xi[None]))(x)
    closed = fgrad.make_jaxpr(fgrad.grad(_loss))(w, x)
    fgrad.core.ir.eval_jaxpr(closed.jaxpr, closed.consts, w, x)
    return w - 0.01 * g - 0.001 * h - 0.001 * per.sum(0)


def test_functional_transforms_leave_no_cycles_and_flat_memory():
    rng = onp.random.default_rng(0)
    w, x = rng.standard_normal((4, 3)) * 0.1, rng.standard_normal((5, 4))
    jitted = fgrad.jit(lambda w: fgrad.grad(_loss)(w, x))
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(100):  # warm-up: caches and first-call allocations
            w = _step(w, x)
            jitted(w)
        tracemalloc.start()
        first, _ = tracemalloc.get_traced_memory()
        for _ in range(200):
            w = _step(w, x)
            jitted(w)
        second, _ = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        objects = len(gc.get_objects())  # tracked objects: leaked cycles would pile up here
        for _ in range(10_000):
            w = w - 1e-4 * fgrad.grad(_loss)(w, x)
        grown = len(gc.get_objects()) - objects
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        cyclic = [o for o in gc.garbage if type(o).__module__.startswith("fgrad")]
        gc.set_debug(0)
        gc.garbage.clear()
    finally:
        if was_enabled:
            gc.enable()
    assert not cyclic, f"{len(cyclic)} fgrad objects in reference cycles, e.g. {cyclic[:3]}"
    assert second - first < 100_000, f"memory grew by {second - first} bytes over 200 steps"
    assert grown < 100, f"{grown} more live objects after 10,000 grad steps"
    assert onp.all(onp.isfinite(w))


def test_vjp_residuals_are_freed_with_vjp_fn():
    gc.disable()
    try:
        _check_vjp_residuals_freed()
    finally:
        gc.enable()


def _check_vjp_residuals_freed():
    out, f_vjp = fgrad.vjp(lambda a: np.sum(np.sin(a) * a), onp.ones((64, 64)))
    cells = dict(zip(f_vjp.__code__.co_freevars, f_vjp.__closure__))
    node = weakref.ref(cells["out_nodes"].cell_contents[0])
    assert node() is not None
    del f_vjp, cells
    assert node() is None  # freed by reference counting alone (the collector never ran)
