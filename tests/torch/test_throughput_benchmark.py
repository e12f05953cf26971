"""torch.ThroughputBenchmark / BenchmarkConfig / BenchmarkExecutionStats against torch 2.13: the
config's defaults, run_once's output, how many calls a benchmark makes (warm-up per calling
thread plus num_iters shared) and on which inputs, the stats, and the error without inputs."""
from __future__ import annotations

import threading
from collections import Counter

import numpy as np
import pytest

import fgrad.torch as ftorch

torch = pytest.importorskip("torch")


def _counting_module(lib):
    class Counting(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.calls, self.lock = [], threading.Lock()

        def forward(self, x, k=0):
            with self.lock:
                self.calls.append((float(x.sum()), k))
            return x * 2
    return Counting()


def test_config_defaults():
    f, t = ftorch.BenchmarkConfig(), torch.BenchmarkConfig()
    for name in ("num_calling_threads", "num_worker_threads", "num_warmup_iters", "num_iters",
                 "profiler_output_path"):
        assert getattr(f, name) == getattr(t, name), name


@pytest.mark.parametrize("threads,warmup,iters", [(1, 1, 5), (2, 3, 10), (3, 0, 7)])
def test_calls_inputs_and_stats(threads, warmup, iters):
    seen = {}
    for lib in (ftorch, torch):
        m = _counting_module(lib)
        bench = lib.ThroughputBenchmark(m)
        bench.add_input(lib.ones(2))
        bench.add_input(lib.zeros(2), k=5)
        config = lib.BenchmarkConfig()
        config.num_calling_threads, config.num_warmup_iters, config.num_iters = threads, warmup, iters
        stats = bench.benchmark(config)
        assert isinstance(stats, lib.BenchmarkExecutionStats)
        assert stats.num_iters == iters and stats.latency_avg_ms > 0
        assert set(Counter(m.calls)) <= {(2.0, 0), (0.0, 5)}  # only the pool's inputs, kwargs kept
        seen[lib.__name__] = len(m.calls)
    assert seen["fgrad.torch"] == seen["torch"] == warmup * threads + iters


def test_run_once_and_errors():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    outs = []
    for lib in (ftorch, torch):
        lib.manual_seed(0)
        m = lib.nn.Linear(3, 2)
        with lib.no_grad():
            m.weight.copy_(lib.tensor(np.eye(2, 3, dtype=np.float32)))
            m.bias.fill_(0.5)
        outs.append(lib.ThroughputBenchmark(m).run_once(lib.tensor(x)).detach().numpy())
        with pytest.raises(RuntimeError, match="Please provide benchmark inputs"):
            lib.ThroughputBenchmark(m).benchmark(lib.BenchmarkConfig())
    np.testing.assert_array_equal(outs[0], outs[1])
    with pytest.raises(TypeError, match="callable"):
        ftorch.ThroughputBenchmark(3)
    bench = ftorch.ThroughputBenchmark(lambda x: 1 / 0)
    bench.add_input(ftorch.ones(1))
    with pytest.raises(ZeroDivisionError):  # the model's own error reaches the caller
        bench.benchmark(ftorch.BenchmarkConfig())
