"""Under jit, a loop equation's first calls run in Python over its region-compiled body; once
it has run loops.JIT_MIN_WORK body equations over its calls, it runs as a compiled Numba
loop. The switch is a function of the call history only, and arithmetic that rounds the same
way in both tiers gives the same bits in both."""
from __future__ import annotations

import numpy as onp
import pytest

import fgrad
import fgrad.numpy as np
from fgrad import lax
from fgrad.interpreters.compile import loops

pytest.importorskip("numba")


def _eqn(f, x, name: str):
    return next(e for e in fgrad.make_jaxpr(f)(x).eqns if e.primitive.name == name)


def _counts():
    return loops.STATS["compiled_runs"], loops.STATS["program_steps"]


def _scan(x):
    # exactly rounded operations only: +, *, /, sqrt, max
    def body(c, xi):
        c = np.sqrt(c * c + xi * xi) / 1.5 + np.maximum(c, xi) * 0.25
        return c, c - xi
    return lax.scan(body, x[0], x)


def test_scan_runs_interpreted_until_its_work_is_reached_then_compiled(monkeypatch):
    x = onp.linspace(0.1, 2.0, 40).reshape(10, 4)
    f = fgrad.jit(_scan)
    eqns = len(_eqn(_scan, x, "scan").params["jaxpr"].jaxpr.eqns)
    # three calls' worth of interpreted work: calls 1-2 interpreted, call 3 reaches it
    monkeypatch.setattr(loops, "JIT_MIN_WORK", 3 * 10 * eqns)
    results, tiers = [], []
    for _ in range(4):
        runs, steps = _counts()
        results.append(f(x))
        runs2, steps2 = _counts()
        tiers.append(("compiled" if runs2 == runs + 1 else "python", steps2 - steps))
    assert tiers == [("python", 10), ("python", 10), ("compiled", 0), ("compiled", 0)]
    for r in results[1:]:
        for a, b in zip(r, results[0]):
            assert onp.asarray(a).tobytes() == onp.asarray(b).tobytes()


def test_long_scan_compiles_on_its_first_call(monkeypatch):
    monkeypatch.setattr(loops, "JIT_MIN_WORK", 50)  # below one call's work (10 trips)
    x = onp.linspace(0.1, 2.0, 40).reshape(10, 4)
    runs, steps = _counts()
    fgrad.jit(_scan)(x)
    assert _counts() == (runs + 1, steps)


def _newton(a):
    def body(s):
        x, k = s
        return 0.5 * (x + a / x), k + 1
    return lax.while_loop(lambda s: np.max(np.abs(s[0] * s[0] - a)) > 1e-13, body, (a + 1.0, 0))


def test_while_loop_switches_to_compiled_code_mid_loop_after_its_budget(monkeypatch):
    a = onp.linspace(1.0, 9.0, 8)
    want = _newton(a)  # eagerly, never compiled (a few trips)
    jaxpr = _eqn(_newton, a, "while").params
    per_trip = len(jaxpr["cond_jaxpr"].jaxpr.eqns) + len(jaxpr["body_jaxpr"].jaxpr.eqns)
    monkeypatch.setattr(loops, "JIT_MIN_WORK", 3 * per_trip)  # 3 trips interpreted in all
    f = fgrad.jit(_newton)
    runs, steps = _counts()
    got = f(a)
    runs2, steps2 = _counts()
    # cond and body each ran 3 times in Python, then the compiled loop did the rest
    assert (runs2 - runs, steps2 - steps) == (1, 6)
    got2 = f(a)  # the budget is spent: compiled from the first trip
    assert _counts() == (runs2 + 1, steps2)
    for x, y, z in zip(got, got2, want):
        assert onp.asarray(x).tobytes() == onp.asarray(y).tobytes() == onp.asarray(z).tobytes()

