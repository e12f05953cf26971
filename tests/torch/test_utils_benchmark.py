"""fgrad.torch.utils.benchmark against torch.utils.benchmark: Measurements built from the same
timings print and summarize the same (but for the object's address line), and Timer measures
what PyTorch's does (statement, setup, globals, block sizes, callbacks, errors)."""
from __future__ import annotations

import pytest

import fgrad.torch as ftorch
import fgrad.torch.utils.benchmark as fbench
from fgrad.torch.utils.benchmark import Timer

torch = pytest.importorskip("torch")
import torch.utils.benchmark as tbench  # noqa: E402

SPECS = {
    "plain": dict(stmt="x.sum()", setup="pass"),
    "labels": dict(stmt="x.sum()", setup="import math", label="sum", sub_label="float",
                   description="n=100", num_threads=4),
    "multi-line": dict(stmt="y = x * 2\ny.sum()", setup="a = 1\nb = 2", sub_label="twice"),
}
TIMES = {
    "one": [1.5e-3],
    "two": [2.0e-6, 2.2e-6],
    "four steady": [1.00e-4, 1.01e-4, 0.99e-4, 1.00e-4],
    "fluctuating": [1e-6, 1.2e-6, 0.9e-6, 1.15e-6, 1e-6],
    "noisy": [1e-9 * v for v in (5, 9, 3, 12, 4, 8, 7)],
    "seconds": [3.0, 3.5, 2.9, 4.1],
}


def _measurement(bench, spec, times, number=10):
    return bench.Measurement(number_per_run=number, raw_times=list(times),
                             task_spec=bench.TaskSpec(**SPECS[spec]))


@pytest.mark.parametrize("spec", sorted(SPECS))
@pytest.mark.parametrize("times", sorted(TIMES))
def test_measurement_prints_and_summarizes_like_torch(spec, times):
    f, t = _measurement(fbench, spec, TIMES[times]), _measurement(tbench, spec, TIMES[times])
    assert repr(f).splitlines()[1:] == repr(t).splitlines()[1:]
    assert repr(f).splitlines()[0].startswith("<fgrad.torch._benchmark.Measurement object at")
    for attribute in ("times", "median", "mean", "iqr", "has_warnings", "title", "env",
                      "as_row_name", "stmt", "label", "num_threads"):
        assert getattr(f, attribute) == pytest.approx(getattr(t, attribute)) \
            if isinstance(getattr(t, attribute), float) else getattr(f, attribute) == getattr(t, attribute)
    assert f.meets_confidence(0.2) == t.meets_confidence(0.2)
    if len(TIMES[times]) >= 4:
        assert f.significant_figures == t.significant_figures


def test_merge_pools_replicates():
    parts = [_measurement(fbench, "plain", [1e-3, 2e-3], number=10),
             _measurement(fbench, "labels", [5e-3]), _measurement(fbench, "plain", [3e-3], number=1)]
    merged = fbench.Measurement.merge(parts)
    expected = tbench.Measurement.merge([_measurement(tbench, "plain", [1e-3, 2e-3], number=10),
                                         _measurement(tbench, "labels", [5e-3]),
                                         _measurement(tbench, "plain", [3e-3], number=1)])
    assert [(m.number_per_run, m.raw_times, m.stmt) for m in merged] == \
        [(m.number_per_run, m.raw_times, m.stmt) for m in expected]


@pytest.mark.parametrize("t", [3e-10, 4.2e-8, 7e-6, 0.0123, 2.5, 1e-3, 1e-6])
def test_units(t):
    assert fbench.select_unit(t) == tbench.select_unit(t)
    assert fbench.trim_sigfig(t * 3.14159, 2) == pytest.approx(tbench.trim_sigfig(t * 3.14159, 2))


def test_timeit_runs_statement_with_setup_and_globals():
    calls = []
    timer = fbench.Timer("calls.append(k)", setup="k = 7", globals={"calls": calls},
                         label="append")
    m = timer.timeit(50)
    # a warm-up of max(50 // 100, 2) runs, then the 50 timed ones
    assert calls == [7] * 52
    assert m.number_per_run == 50 and len(m.raw_times) == 1 and m.raw_times[0] > 0
    assert m.title == "append" and m.task_spec == fbench.TaskSpec(stmt="calls.append(k)", setup="k = 7",
                                                                label="append")


def test_import_paths():
    assert Timer is fbench.Timer is ftorch.utils.benchmark.Timer


def test_default_torch_is_fgrad_torch():
    seen = []
    fbench.Timer("seen.append(torch)", globals={"seen": seen}).timeit(1)
    assert seen[-1] is ftorch
    other = object()
    fbench.Timer("seen.append(torch)", globals={"seen": seen, "torch": other}).timeit(1)
    assert seen[-1] is other


def test_blocked_autorange_spends_min_run_time_in_blocks():
    blocks = []
    x = ftorch.ones(10)
    m = fbench.Timer("x + x", globals={"x": x}).blocked_autorange(
        callback=lambda number, seconds: blocks.append((number, seconds)), min_run_time=0.02)
    assert sum(m.raw_times) >= 0.02
    assert [(m.number_per_run, s) for s in m.raw_times] == blocks
    assert str(m.number_per_run).strip("0") == "1"  # a power of ten, as PyTorch picks
    assert m.median == pytest.approx(sorted(m.times)[len(m.times) // 2], rel=1.0)


def test_adaptive_autorange_stops_within_max_run_time():
    m = fbench.Timer("sum(range(50))").adaptive_autorange(threshold=0.5, max_run_time=0.5)
    assert len(m.raw_times) >= 4 or sum(m.raw_times) > 0.5


def test_errors_match_torch():
    for bench in (fbench, tbench):
        with pytest.raises(ValueError, match="Currently only a `str` stmt is supported."):
            bench.Timer(lambda: None)
        with pytest.raises(ValueError, match="global_setup is C\\+\\+ only"):
            bench.Timer("pass", global_setup="#include <x>")
        with pytest.raises(ValueError, match="Invalid language `fortran`."):
            bench.Timer("pass", language="fortran")
        for method in ("repeat", "autorange"):
            with pytest.raises(NotImplementedError, match="See `Timer.blocked_autorange.`"):
                getattr(bench.Timer("pass"), method)()
    with pytest.raises(NotImplementedError, match="Python statements only"):
        fbench.Timer("x;", language="cpp")


def _results(bench, rows):
    return [bench.Measurement(number_per_run=n, raw_times=list(times),
                              task_spec=bench.TaskSpec(stmt="f(x)", setup="pass", **spec))
            for n, times, spec in rows]


NOISY = [1e-6 * v for v in (5, 9, 3, 12, 4, 8, 7)]
STEADY = [2.0e-5, 2.02e-5, 1.98e-5, 2.01e-5]
TABLES = {
    "one column": [(10, STEADY, dict(label="add", sub_label="a", description="n=1")),
                   (10, [3e-4], dict(label="add", sub_label="b", description="n=1"))],
    "grid with a hole": [(10, STEADY, dict(label="mm", sub_label="a", description="n=1")),
                         (100, [3e-3, 3.1e-3], dict(label="mm", sub_label="b", description="n=1")),
                         (10, [4e-4], dict(label="mm", sub_label="b", description="n=64"))],
    "threads and envs": [(10, STEADY, dict(label="t", sub_label="a", description="d", num_threads=1, env="old")),
                         (10, [1e-5], dict(label="t", sub_label="a", description="d", num_threads=1, env="new")),
                         (10, [6e-6], dict(label="t", sub_label="a", description="d", num_threads=4, env="old")),
                         (10, NOISY, dict(label="t", sub_label="b", description="e", num_threads=4, env="new"))],
    "two labels, replicates merged": [(10, STEADY, dict(label="x", sub_label="a", description="d")),
                                      (10, [2.1e-5], dict(label="x", sub_label="a", description="d")),
                                      (1, NOISY, dict(label="y", sub_label="b", description="d"))],
    "statement as row name": [(5, [1e-2, 1.1e-2], dict(label="s", description="n=1")),
                              (5, [4e-2], dict(label="s", description="n=2"))],
}


@pytest.mark.parametrize("options", ["", "trim", "colorize", "colorize rowwise", "highlight",
                                     "trim highlight colorize"])
@pytest.mark.parametrize("table", sorted(TABLES))
def test_compare_prints_torch_tables(table, options):
    outputs = []
    for bench in (fbench, tbench):
        compare = bench.Compare(_results(bench, TABLES[table]))
        if "trim" in options:
            compare.trim_significant_figures()
        if "colorize" in options:
            compare.colorize(rowwise="rowwise" in options)
        if "highlight" in options:
            compare.highlight_warnings()
        outputs.append(str(compare))
    assert outputs[0] == outputs[1]


def test_compare_rejects_other_results():
    for bench in (fbench, tbench):
        with pytest.raises(ValueError, match="Expected an instance of `Measurement`, got <class 'int'> instead."):
            bench.Compare([1])


def test_compare_of_timer_results(capsys):
    x = ftorch.ones(8)
    results = [fbench.Timer("x * 2", globals={"x": x}, label="mul", sub_label=str(n),
                            description="ones").timeit(20) for n in (1, 2)]
    fbench.Compare(results).print()
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("[") and "mul" in lines[0] and lines[1].strip().startswith("|  ones")
    assert [line for line in lines if line][-1].startswith("Times are in ")
