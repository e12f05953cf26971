"""torch.profiler / torch.autograd.profiler on fgrad.torch against PyTorch 2.13: the op names
and call counts of key_averages, record_function blocks and their children, the table's layout,
schedules, chrome traces, and the refusals (CUDA activity, unknown sort keys)."""
import json

import pytest

import fgrad.torch as ft
from fgrad.torch import profiler as fprof

torch = pytest.importorskip("torch")


def _run(lib, prof_mod):
    x = lib.randn(2, 3, requires_grad=True)
    y = lib.rand(2, 3, requires_grad=True)
    z = lib.ones(2, 3, requires_grad=True)
    with prof_mod.profile() as prf:
        for _ in range(20):
            z = (z / x) * y
        with prof_mod.record_function("block"):
            z = z.tanh()
    return prf


def test_counts_names_and_table_layout():
    f = _run(ft, fprof)
    t = _run(torch, torch.autograd.profiler)
    fk = {e.key: e.count for e in f.key_averages()}
    tk = {e.key: e.count for e in t.key_averages()}
    for name in ("aten::div", "aten::mul", "aten::tanh", "block"):
        assert fk[name] == tk[name], name
    table = f.key_averages().table(sort_by="self_cpu_time_total")
    lines = table.splitlines()
    ref = t.key_averages().table(sort_by="self_cpu_time_total").splitlines()
    assert lines[1].split() == ref[1].split()  # the header
    assert lines[0].replace("-", "").split() == [] and lines[-1].startswith("Self CPU time total: ")
    rows = lines[3:-2]
    assert [float(r.split()[1].rstrip("%")) for r in rows] == sorted(
        [float(r.split()[1].rstrip("%")) for r in rows], reverse=True)
    block = next(e for e in f.events() if e.name == "block")
    assert [c.name for c in block.cpu_children] == ["aten::tanh"]
    assert block.cpu_time_total >= block.self_cpu_time_total >= 0


def test_torch_profiler_namespace_schedule_and_trace(tmp_path):
    a = ft.ones(3)
    seen = []
    sched = fprof.schedule(wait=1, warmup=1, active=2, repeat=1)
    assert [sched(i) for i in range(6)] == [getattr(fprof.ProfilerAction, n) for n in
                                             ("NONE", "WARMUP", "RECORD", "RECORD_AND_SAVE", "NONE", "NONE")]
    tsched = torch.profiler.schedule(wait=1, warmup=1, active=2, repeat=1)
    assert [tsched(i).name for i in range(6)] == [sched(i).name for i in range(6)]
    with fprof.profile(activities=[fprof.ProfilerActivity.CPU], schedule=sched,
                       on_trace_ready=lambda p: seen.append(len(p.events()))) as p:
        for _ in range(5):
            a = a * 2
            p.step()
    assert seen and seen[0] == 2  # the two recorded steps' mul ops
    path = tmp_path / "trace.json"
    p.export_chrome_trace(str(path))
    events = json.loads(path.read_text())["traceEvents"]
    assert {e["name"] for e in events} == {"aten::mul"}


def test_decorator_and_disabled_and_refusals():
    @fprof.record_function("f")
    def f(x):
        return x + 1
    with fprof.profile() as p:
        f(ft.ones(2))
    # events in order of their starts, an enclosing range first (PyTorch's order)
    assert [e.key for e in p.key_averages()] == ["f", "aten::add"]
    tf = torch.autograd.profiler.record_function("f")(lambda x: x + x)
    tx = torch.ones(2)
    with torch.autograd.profiler.profile() as tp:
        tf(tx)
    assert [e.key for e in tp.key_averages()] == ["f", "aten::add"]
    with fprof.profile(enabled=False) as q:
        ft.ones(2) + 1
    assert len(q.events()) == 0
    assert (ft.ones(2) + 1).tolist() == [2.0, 2.0]  # nothing left installed
    with pytest.raises(NotImplementedError, match="CPU activity only"):
        fprof.profile(use_cuda=True)
    with pytest.raises(NotImplementedError, match="CPU activity only"):
        fprof.profile(activities=[fprof.ProfilerActivity.CUDA])
    with pytest.raises(AttributeError, match="sort by one of"):
        p.key_averages().table(sort_by="nope")


def test_enums_as_torch():
    for name in ("ProfilerActivity", "ProfilerAction", "DeviceType"):
        f, t = getattr(fprof, name), getattr(torch.profiler, name)
        assert sorted((m.name, m.value) for m in f) == sorted((m, int(getattr(v, "value", v))) for m, v in t.__members__.items())
    assert fprof.kineto_available() is False and fprof.supported_activities() == {fprof.ProfilerActivity.CPU}


def test_enums_and_helpers_are_torchs():
    tp = torch.autograd.profiler
    for ours, theirs in ((fprof.RecordScope, torch.profiler.RecordScope), (fprof.ProfilerState, tp.ProfilerState)):
        assert {n: m.value for n, m in ours.__members__.items()} == {
            n: int(m) for n, m in theirs.__members__.items()}
    for lib in (fprof, tp):
        u = lib.EnforceUnique()
        u.see(1, "a")
        u.see(1, "b")
        with pytest.raises(RuntimeError, match=r"duplicate key: \(1, 'a'\)"):
            u.see(1, "a")

    class Ev:
        def __init__(self, ns):
            self.ns = ns

        def start_ns(self):
            return self.ns
    recs = [(Ev(n), i) for i, n in enumerate([50, 10, 30, 30, 90])]
    for lo, hi in ((0, 100), (30, 30), (11, 89), (91, 95)):
        assert [r[1] for r in fprof.MemRecordsAcc(recs).in_interval(lo, hi)] == [
            r[1] for r in tp.MemRecordsAcc(recs).in_interval(lo, hi)]


def test_kineto_step_tracker_counts_as_torchs():
    def run(tracker):
        base = tracker.current_step()
        out = [tracker.increment_step("fgrad_test_a") - base, tracker.increment_step("fgrad_test_b") - base,
               tracker.increment_step("fgrad_test_a") - base]
        tracker.init_step_count("fgrad_test_c")
        out.append(tracker.increment_step("fgrad_test_c") - base)
        out += [tracker.erase_step_count(n) for n in ("fgrad_test_a", "fgrad_test_b", "fgrad_test_c", "nobody")]
        return out
    assert run(fprof.KinetoStepTracker) == run(torch.autograd.profiler.KinetoStepTracker) == [
        1, 2, 2, 3, True, True, True, False]
    before = fprof.KinetoStepTracker.current_step()
    with fprof.profile() as p:  # (PyTorch's profiles count here only for the Kineto daemon)
        p.step()
    assert fprof.KinetoStepTracker.current_step() == before


def test_emit_nvtx_and_itt_on_the_cpu():
    x = ft.ones(2)
    with fprof.emit_nvtx(enabled=False):
        x = x * 2
    with fprof.emit_itt(enabled=False):
        x = x * 2
    assert x.tolist() == [4.0, 4.0]
    with pytest.raises(RuntimeError, match="CUDA requested"):  # (PyTorch's CPU build: not compiled with CUDA)
        with fprof.emit_nvtx():
            pass
    assert fprof.itt.is_available() is False
    with pytest.raises(RuntimeError, match="ITT functions not installed"):
        with fprof.emit_itt():
            pass
    with pytest.raises(RuntimeError, match="ITT functions not installed"):
        fprof.itt.range_push("r")
    (ft.ones(2) + 1).tolist()  # nothing left installed


def test_emit_nvtx_marks_each_op_with_a_range(monkeypatch):
    import sys
    import types
    calls = []
    nvtx = types.SimpleNamespace(RangePush=lambda name: calls.append(("push", name)),
                                 RangePop=lambda: calls.append(("pop",)))

    class Device:
        id = 0

        def __init__(self, index=None):
            pass

        def synchronize(self):
            calls.append(("sync",))
    cuda = types.SimpleNamespace(nvtx=nvtx, Device=Device,
                                 runtime=types.SimpleNamespace(getDeviceCount=lambda: 1, getDevice=lambda: 0))
    monkeypatch.setitem(sys.modules, "cupy", types.SimpleNamespace(cuda=cuda))
    x, y = ft.ones(2), ft.ones(2)
    with fprof.emit_nvtx():
        z = (x * y).exp()
    assert calls == [("sync",), ("push", "aten::mul"), ("pop",), ("push", "aten::exp"), ("pop",), ("sync",)]
    assert z.tolist() == pytest.approx([2.718281828] * 2)
    calls.clear()
    (x * y).tolist()
    assert calls == []
