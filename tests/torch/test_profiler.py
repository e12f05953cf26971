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
