"""The staging trace's fast paths (issue 10, W7): abstract_eval results cached by primitive,
input avals and params; weak typing carried by the tracer's class (so fgrad.numpy trusts a
strong tracer's shape and dtype); origins shared between values; cse and dce on long
jaxprs. Each is checked against what the slow path gives."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad
import fgrad.numpy as fnp
from fgrad.core.avals import ShapedArray, WeakShapedArray
from fgrad.core.errors import FgradTypeError, TracerBoolConversionError
from fgrad.core.ir import Literal, cse_jaxpr, dce_jaxpr, typecheck_jaxpr
from fgrad.core.primitive import ALL_PRIMITIVES, Primitive
from fgrad.interpreters import staging
from fgrad.interpreters.staging import StagingTracer, WeakStagingTracer


def _probe_primitive(calls: list) -> Primitive:
    """A primitive whose abstract_eval counts its calls and rejects a bool `k` (the cache is
    emptied first, so that it cannot fill up and be cleared during a test)."""
    staging._AVAL_CACHE.clear()
    p = Primitive("staging_probe")
    ALL_PRIMITIVES.remove(p)  # a test's own: not one of fgrad's (test_primitives lists those)
    p.def_impl(lambda x, *, k, xp: x)

    def aval(x, *, k):
        calls.append(k)
        if type(k) is bool:
            raise FgradTypeError("staging_probe: k must not be a bool")
        return ShapedArray(x.shape, x.dtype)
    p.def_abstract_eval(aval)
    return p


def test_abstract_eval_is_cached_by_avals_and_params():
    calls: list = []
    p = _probe_primitive(calls)
    x = np.ones(3)
    f = lambda v: p.bind(p.bind(v, k=1), k=1)
    fgrad.make_jaxpr(f)(x)
    fgrad.make_jaxpr(f)(x)
    assert calls == [1]
    fgrad.make_jaxpr(f)(np.ones(4))  # another shape: another entry
    fgrad.make_jaxpr(f)(np.ones(3, np.float32))  # another dtype
    fgrad.make_jaxpr(lambda v: p.bind(v, k=2))(x)  # another param
    assert calls == [1, 1, 1, 2]
    # a weak aval equals the strong one of its dtype and shape, so the key holds its class
    fgrad.make_jaxpr(lambda v: p.bind(v, k=1))(np.ones(()))
    fgrad.make_jaxpr(lambda v: p.bind(v, k=1))(2.0)
    assert calls == [1, 1, 1, 2, 1, 1]


def test_equal_params_of_another_type_are_not_served_from_the_cache():
    calls: list = []
    p = _probe_primitive(calls)
    fgrad.make_jaxpr(lambda v: p.bind(v, k=1))(np.ones(2))
    with pytest.raises(FgradTypeError, match="must not be a bool"):  # True == 1, but the rule sees a bool
        fgrad.make_jaxpr(lambda v: p.bind(v, k=True))(np.ones(2))


def test_params_that_are_not_plain_values_skip_the_cache():
    """Unhashable params (a list) and objects (a function, a jaxpr: keyed by identity, they
    would only pin what they hold) are never cached; tuples of plain values are."""
    calls: list = []
    p = _probe_primitive(calls)
    closed = fgrad.make_jaxpr(lambda v: v + 1.0)(np.ones(2))
    for k in ([1, 2], np.sin, closed, (1, (2.0, "a"))):
        size = len(staging._AVAL_CACHE)
        for _ in range(2):
            fgrad.make_jaxpr(lambda v, k=k: p.bind(v, k=k))(np.ones(2))
        cached = isinstance(k, tuple)
        assert len(staging._AVAL_CACHE) == size + cached
        assert calls[-(2 - cached):] == [k] * (2 - cached)


def test_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(staging, "_AVAL_CACHE_MAX", 4)
    staging._AVAL_CACHE.clear()
    calls: list = []
    p = _probe_primitive(calls)
    for k in range(10):
        fgrad.make_jaxpr(lambda v, k=k: p.bind(v, k=k))(np.ones(2))
    assert len(staging._AVAL_CACHE) <= 4 and len(calls) == 10


def test_weak_typing_is_the_tracer_class():
    seen = {}

    def f(s, x):
        seen["s"], seen["x"], seen["ss"] = s, x, s * 2.0
        return x * (s * 2.0)
    closed = fgrad.make_jaxpr(f)(3.0, np.ones(2, np.float32))
    assert type(seen["s"]) is WeakStagingTracer and type(seen["ss"]) is WeakStagingTracer
    assert type(seen["x"]) is StagingTracer and not seen["x"]._weak
    assert isinstance(seen["ss"].aval, WeakShapedArray)
    assert closed.out_avals[0].dtype == np.float32  # the weak scalar did not promote x
    # a strong 0-d float64 does promote
    closed = fgrad.make_jaxpr(lambda s, x: x * s)(np.float64(3.0), np.ones(2, np.float32))
    assert closed.out_avals[0].dtype == np.float64
    typecheck_jaxpr(closed)


def test_origins_name_every_input_a_value_depends_on():
    def f(a, b, c):
        u = fnp.sin(a) * fnp.cos(a)  # one origin, shared
        return u + b if u + b > 0 else c
    with pytest.raises(TracerBoolConversionError) as e:
        fgrad.make_jaxpr(f)(1.0, 2.0, 3.0)
    msg = str(e.value)
    assert "argument 0 ('a')" in msg and "argument 1 ('b')" in msg and "'c'" not in msg


def test_cse_and_dce_on_a_long_chain_match_the_plain_definitions():
    def f(x):
        for _ in range(50):
            x = fnp.sin(x) * 0.5 + fnp.sin(x) * 0.5  # sin twice: merged
        unused = fnp.exp(x)  # noqa: F841 (dropped)
        return x * -0.0 + x * 0.0  # -0.0 and 0.0 literals stay apart
    closed = fgrad.make_jaxpr(f)(np.ones(3))
    names = [e.primitive.name for e in closed.eqns]
    assert names.count("sin") == 50 and "exp" not in names
    lits = [a.val for e in closed.eqns for a in e.invars if isinstance(a, Literal) and a.val == 0]
    assert sorted(np.signbit(lits).tolist()) == [False, True]
    again, _ = dce_jaxpr(cse_jaxpr(closed.jaxpr))
    assert len(again.eqns) == len(closed.eqns)
    np.testing.assert_allclose(closed(np.ones(3))[0], f(np.ones(3)))
