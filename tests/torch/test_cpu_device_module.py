"""torch.cpu, torch.get_device_module, and torch.Stream / torch.Event on the CPU, against torch
2.13: what the objects report, what completes at once, and what raises (the CPU backend has no
events; fgrad's Stream/Event are the CPU's)."""
from __future__ import annotations

import pytest

import fgrad.torch as ftorch

torch = pytest.importorskip("torch")


def test_get_device_module():
    assert ftorch.get_device_module("cpu") is ftorch.cpu
    assert ftorch.get_device_module(ftorch.device("cpu")) is ftorch.cpu
    assert ftorch.get_device_module("cuda:0") is ftorch.cuda
    assert torch.get_device_module("cpu") is torch.cpu and torch.get_device_module("cuda") is torch.cuda
    want = "cuda" if ftorch.cuda.is_available() else "cpu"
    assert ftorch.get_device_module() is getattr(ftorch, want)
    for lib in (ftorch, torch):
        with pytest.raises(RuntimeError):
            lib.get_device_module("foo")
        with pytest.raises(RuntimeError, match="Invalid value of device"):
            lib.get_device_module(3)


def test_cpu_module_as_torch():
    for name in ("is_available", "is_initialized", "current_device", "device_count"):
        assert getattr(ftorch.cpu, name)() == getattr(torch.cpu, name)(), name
    assert ftorch.cpu.synchronize() is None and torch.cpu.synchronize() is None
    assert ftorch.cpu.set_device("cpu") is None
    with pytest.raises(RuntimeError, match="CPU only"):
        ftorch.cpu.set_device("cuda")
    with ftorch.cpu.stream(ftorch.cpu.current_stream()) as s:
        assert s.query()
    assert ftorch.cpu.amp.autocast is ftorch.autocast


def test_stream_as_torch():
    for lib in (ftorch, torch):
        s, t = lib.Stream(), lib.Stream("cpu")
        assert s == t and hash(s) == hash(t)
        assert s.query() and s.synchronize() is None and s.wait_event(lib.Event()) is None
        with pytest.raises(RuntimeError, match="doesn't support events"):
            s.record_event()
        with pytest.raises(RuntimeError, match="doesn't support events"):
            s.wait_stream(t)
        with s:
            pass
    f, t = ftorch.Stream(), torch.Stream()
    assert repr(f) == repr(t)
    assert (f.device_type, f.device_index, f.stream_id, str(f.device)) == \
        (t.device_type, t.device_index, t.stream_id, str(t.device))
    with pytest.raises(RuntimeError):
        torch.Stream("foo")
    with pytest.raises(RuntimeError):
        ftorch.Stream("foo")


def test_event_as_torch():
    for lib in (ftorch, torch):
        e = lib.Event()
        assert e.query() and e.synchronize() is None and e.wait() is None
        with pytest.raises(RuntimeError, match="doesn't support events"):
            e.record()
        with pytest.raises(ValueError, match="enable_timing=True"):
            e.elapsed_time(e)
        timed = lib.Event(enable_timing=True)
        with pytest.raises(ValueError, match="must be recorded"):
            timed.elapsed_time(timed)
    for kw in ({}, {"enable_timing": True}):
        f, t = ftorch.Event(**kw), torch.Event(**kw)
        assert repr(f) == repr(t) and str(f.device) == str(t.device) and f.event_id == t.event_id
    if not ftorch.cuda.is_available():
        with pytest.raises(RuntimeError):
            ftorch.Event("cuda")
