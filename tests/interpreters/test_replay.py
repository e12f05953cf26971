"""Replayed backward passes (fgrad/interpreters/replay.py): once a graph structure has been
seen HOT times, eager grad runs its backward pass as a generated program. It must give the
engine's result bit for bit, for every primitive (the registry's cases), and must stand
aside wherever the engine has to walk the graph itself."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad
import fgrad.numpy as fnp
from fgrad.interpreters import replay
from tests.ops.test_primitives import GRAD_CASES


@pytest.fixture
def fresh(monkeypatch):
    """An empty replay cache (restored afterwards) and the counters' values now."""
    monkeypatch.setattr(replay, "_cache", {})
    return replay.stats.replays, replay.stats.programs


def _engine_only(monkeypatch):
    monkeypatch.setattr(replay, "HOT", 10 ** 9)


def _scalarised(case, args):
    """sum(w * case.fn(*args)) with fixed weights: a real scalar of every output element."""
    out = np.asarray(case.fn(*args))
    w = np.random.default_rng(1).uniform(0.5, 1.5, out.shape).astype(out.dtype if out.dtype.kind == "f" else float)

    def f(x, *rest):
        return fnp.sum(case.fn(x, *rest) * w)
    return f


def _replayable(case):
    args = case.make_args()
    if not args or not isinstance(args[0], np.ndarray) or args[0].dtype.kind != "f":
        return None
    try:
        out = np.asarray(case.fn(*args))
    except Exception:  # noqa: BLE001  (cases that need a transform; not this test's subject)
        return None
    return args if out.dtype.kind == "f" else None


REPLAY_CASES = [c for c in GRAD_CASES if _replayable(c) is not None]


@pytest.mark.parametrize("case", REPLAY_CASES, ids=lambda c: c.name)
def test_replay_equals_engine_bit_for_bit(case, fresh, monkeypatch):
    args = case.make_args()
    g = fgrad.grad(_scalarised(case, args))
    results = [g(*args) for _ in range(replay.HOT + 2)]  # the last ones replay, if replayable
    with monkeypatch.context() as m:
        _engine_only(m)
        m.setattr(replay, "_cache", {})
        want = g(*args)
    for r in results:
        np.testing.assert_array_equal(r, want, strict=True)


def test_most_cases_do_replay(fresh):
    """The bit-for-bit test above must not pass vacuously: most cases take the replay path."""
    replayed = 0
    for case in REPLAY_CASES:
        args = case.make_args()
        g = fgrad.grad(_scalarised(case, args))
        before = replay.stats.replays
        for _ in range(replay.HOT + 1):
            g(*args)
        replayed += replay.stats.replays > before
    assert replayed >= 0.8 * len(REPLAY_CASES), (replayed, len(REPLAY_CASES))


def chain(x):
    for _ in range(10):
        x = fnp.tanh(fnp.sin(x) * 0.9 + 0.1) * x
    return fnp.sum(x)


def test_program_is_built_at_hot_and_reused(fresh):
    replays, programs = fresh
    x = np.linspace(-1, 1, 16)
    g = fgrad.grad(chain)
    for _ in range(replay.HOT - 1):
        g(x)
    assert replay.stats.replays == replays and replay.stats.programs == programs
    for k in range(5):
        g(x + k)  # new values, same structure
    assert replay.stats.programs == programs + 1
    assert replay.stats.replays == replays + 5


def test_new_structure_new_key(fresh):
    """Shapes, dtypes, wiring and aliasing are part of the key: each gets its own program and
    the right answer."""
    g = fgrad.grad(chain)
    for x in (np.linspace(-1, 1, 16), np.linspace(-1, 1, 5), np.linspace(-1, 1, 5).astype(np.float32)):
        want = None
        for _ in range(replay.HOT + 1):
            r = g(x)
            want = r if want is None else want
            np.testing.assert_array_equal(r, want, strict=True)
    h = fgrad.grad(lambda x, y: fnp.sum(x * y))
    x = np.arange(3.0)
    for _ in range(replay.HOT + 1):
        np.testing.assert_array_equal(h(x, x + 1), x + 1)  # x * y with y another array
        np.testing.assert_array_equal(h(x, x), x)          # x * x: one object (y is x)


def test_value_dependent_control_flow_is_keyed(fresh):
    """Python branches on values change the recorded graph, hence the key."""
    def f(x):
        return fnp.sum(fnp.sin(x) if x[0] > 0 else fnp.cos(x))
    g = fgrad.grad(f)
    for _ in range(replay.HOT + 1):
        np.testing.assert_allclose(g(np.array([1.0, 2.0])), np.cos([1.0, 2.0]), rtol=0, atol=0)
        np.testing.assert_allclose(g(np.array([-1.0, 2.0])), -np.sin([-1.0, 2.0]), rtol=0, atol=0)


def test_grads_under_a_transform_use_the_engine(fresh):
    replays, _ = fresh
    for _ in range(replay.HOT + 2):
        fgrad.vmap(fgrad.grad(lambda v: fnp.sum(fnp.sin(v))))(np.ones((2, 3)))
        fgrad.jit(fgrad.grad(lambda v: fnp.sum(fnp.sin(v))))(np.ones(3))
        fgrad.jvp(fgrad.grad(lambda v: fnp.sum(fnp.sin(v))), (np.ones(3),), (np.ones(3),))
    # the grads see tracers of an enclosing transform: never replayed
    assert replay.stats.replays == replays


def test_grad_of_grad_replays_only_the_outer_pass(fresh):
    """In grad(grad(f)) the inner pass runs under the outer recording (engine); the outer one
    is a plain first-order pass over concrete values, and replays."""
    replays, _ = fresh
    f = lambda x: fnp.sin(x) * x
    gg = fgrad.grad(fgrad.grad(f))
    want = gg(0.7)
    for _ in range(replay.HOT + 2):
        assert gg(0.7) == want
    assert want == pytest.approx(2 * np.cos(0.7) - 0.7 * np.sin(0.7))
    assert replay.stats.replays == replays + (replay.HOT + 3) - (replay.HOT - 1)  # all calls from the HOT-th


def test_debug_nans_and_large_arrays_use_the_engine(fresh, monkeypatch):
    from fgrad.interpreters.record import RecordTrace
    replays, _ = fresh
    g = fgrad.grad(lambda v: fnp.sum(fnp.sin(v)))
    monkeypatch.setattr(RecordTrace, "MAX_BYTES", 8 * 1000)
    big = np.ones(1001)
    for _ in range(replay.HOT + 2):
        g(big)
    with fgrad.debug_nans():
        for _ in range(replay.HOT + 2):
            g(np.ones(3))
    assert replay.stats.replays == replays


def test_rules_that_do_not_stage_fall_back(fresh, monkeypatch):
    """A graph whose rules cannot be staged is remembered as not replayable; the engine's
    result (and error) stand."""
    replays, programs = fresh
    monkeypatch.setattr(replay, "_build", lambda *a: None)
    g = fgrad.grad(chain)
    x = np.linspace(-1, 1, 4)
    want = g(x)
    for _ in range(replay.HOT + 2):
        np.testing.assert_array_equal(g(x), want)
    assert replay.stats.replays == replays and replay.stats.programs == programs
    assert None in replay._cache.values()


def test_cache_is_bounded(fresh, monkeypatch):
    monkeypatch.setattr(replay, "MAX_KEYS", 8)
    g = fgrad.grad(lambda v: fnp.sum(fnp.sin(v)))
    for n in range(1, 30):
        g(np.ones(n))
    assert len(replay._cache) <= 8


def test_leaked_tracer_does_not_keep_the_tape(fresh):
    """grad drops its tape when it returns, so a leaked tracer does not hold every node."""
    leaked = []

    def f(x):
        y = fnp.sin(x)
        leaked.append(y)
        return fnp.sum(y)
    fgrad.grad(f)(np.ones(3))
    assert leaked[0]._trace.tape is None


def test_the_tape_stops_past_its_budget(fresh, monkeypatch):
    """Nodes the output does not depend on stay alive while taped: past MAX_BYTES of
    recorded outputs (or MAX_NODES nodes) the tape stops, and that call uses the engine."""
    from fgrad.interpreters.record import RecordTrace
    replays, _ = fresh
    monkeypatch.setattr(RecordTrace, "MAX_BYTES", 10 * 16 * 8)  # ten 16-element float64 outputs
    g = fgrad.grad(chain)  # 40 recorded outputs
    x = np.linspace(-1, 1, 16)
    want = g(x)
    for _ in range(replay.HOT + 2):
        np.testing.assert_array_equal(g(x), want)
    assert replay.stats.replays == replays
    monkeypatch.setattr(RecordTrace, "MAX_BYTES", 64 << 20)
    monkeypatch.setattr(RecordTrace, "MAX_NODES", 10)
    for _ in range(replay.HOT + 2):
        np.testing.assert_array_equal(g(x), want)
    assert replay.stats.replays == replays


def test_dead_branches_are_freed_when_not_taped(fresh):
    """Under a transform grad records with the plain recorder: a node nothing depends on is
    freed at once (no tape holds it)."""
    import weakref
    refs = []

    def f(x):
        dead = fnp.sin(x)
        refs.append(weakref.ref(dead.node))
        del dead
        return fnp.sum(fnp.cos(x))
    fgrad.jvp(fgrad.grad(f), (np.ones(3),), (np.ones(3),))
    assert refs[0]() is None


def test_replayed_quiet_ops_stay_quiet(fresh):
    """A replayed program silences floating-point warnings exactly where the impls do: log's
    derivative 1/x at 0 is inf without a warning, on the engine's path and the program's."""
    import warnings
    replays, _ = fresh
    g = fgrad.grad(lambda v: fnp.sum(fnp.log(v) * 2.0))
    x = np.array([0.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(replay.HOT + 1):
            np.testing.assert_array_equal(g(x), [np.inf, 2.0])
    assert replay.stats.replays > replays


def test_value_dependent_shapes_are_keyed(fresh):
    """A boolean mask's gather has a shape that depends on the mask's values, and the key
    records no output that was not saved: the shape reaches the key through the gather's index
    array and the product's saved operand. Masks with 2 and 3 true entries alternate; each
    gets its own program and the engine's answer."""
    def f(x):
        return fnp.sum(x[x > 0.0] * 2.0)
    g = fgrad.grad(f)
    xs = (np.array([1.0, -2.0, 3.0, -4.0]), np.array([1.0, 2.0, 3.0, -4.0]))
    for _ in range(replay.HOT + 1):
        for x in xs:
            np.testing.assert_array_equal(g(x), np.where(x > 0, 2.0, 0.0))
    assert replay.stats.programs == fresh[1] + 2
