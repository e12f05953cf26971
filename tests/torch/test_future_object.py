"""torch.Future against torch 2.13: set once, wait across threads, value, then / add_done_callback
chains, a callback's error reaching the chained Future, and the constructor's device check."""
from __future__ import annotations

import threading

import pytest

import fgrad.torch as ftorch

torch = pytest.importorskip("torch")
LIBS = pytest.mark.parametrize("lib", [ftorch, torch], ids=["fgrad", "torch"])


@LIBS
def test_set_wait_value(lib):
    f = lib.Future([])
    assert not f.done()
    f.set_result(3)
    assert f.done() and f.wait() == 3 and f.value() == 3
    with pytest.raises(RuntimeError, match="completed Future as complete again"):
        f.set_result(4)
    late = lib.Future([])
    threading.Timer(0.02, lambda: late.set_result("late")).start()
    assert late.wait() == "late"


@LIBS
def test_callbacks(lib):
    g = lib.Future([])
    h = g.then(lambda fut: fut.wait() + 1)
    assert isinstance(h, lib.Future) and not h.done()
    seen = []
    g.add_done_callback(lambda fut: seen.append(fut.value()))
    g.set_result(10)
    assert h.wait() == 11 and seen == [10]
    done = lib.Future([])
    done.set_result(2)
    assert done.then(lambda fut: fut.value() * 3).wait() == 6  # on a completed Future: at once
    t = lib.Future([])
    chained = t.then(lambda fut: 1 / 0)
    t.set_result(1)
    with pytest.raises(RuntimeError, match="ZeroDivisionError: division by zero"):
        chained.wait()


@LIBS
def test_errors(lib):
    with pytest.raises(RuntimeError):
        lib.Future([]).value()
    with pytest.raises(ValueError, match="Expected devices to have indices"):
        lib.Future([lib.device("cpu")])
    with pytest.raises(TypeError):
        lib.Future()
