"""torch.ThroughputBenchmark, torch.BenchmarkConfig and torch.BenchmarkExecutionStats: a model
called from several threads on inputs drawn from a pool, as PyTorch's inference throughput
benchmark does. Each calling thread first runs its warm-up calls; then the threads share
`num_iters` calls between them, and the stats give the average latency of one call."""
from __future__ import annotations

import random
import threading
import time
from typing import Any, Callable

from ..core.errors import FgradNotImplementedError, FgradRuntimeError, FgradTypeError


class BenchmarkConfig:
    """The settings of ThroughputBenchmark.benchmark (PyTorch's defaults): num_calling_threads,
    num_worker_threads (the intra-op threads PyTorch would give each call; fgrad's kernels use
    torch.set_num_threads'), num_warmup_iters (per calling thread), num_iters (shared by the
    threads) and profiler_output_path (empty: no profiling)."""

    def __init__(self) -> None:
        self.num_calling_threads = 1
        self.num_worker_threads = 1
        self.num_warmup_iters = 1
        self.num_iters = 100
        self.profiler_output_path = ""


class BenchmarkExecutionStats:
    """What ThroughputBenchmark.benchmark measured: latency_avg_ms (the average time of one call,
    in milliseconds, taking the threads' overlap into account) and num_iters (the calls counted)."""

    def __init__(self, latency_avg_ms: float = -1.0, num_iters: int = -1) -> None:
        self.latency_avg_ms = latency_avg_ms
        self.num_iters = num_iters

    def __repr__(self) -> str:
        return f"BenchmarkExecutionStats(latency_avg_ms={self.latency_avg_ms:.4f}, num_iters={self.num_iters})"


class ThroughputBenchmark:
    """Benchmark a model (a Module or any callable) for inference throughput: `add_input(*args,
    **kwargs)` adds one call's arguments to the pool, `run_once(*args, **kwargs)` calls the model
    once, `benchmark(config)` runs it from config.num_calling_threads threads on inputs drawn at
    random from the pool. Calls into the model are serialised, as the GIL serialises a Python
    Module's in PyTorch."""

    def __init__(self, module: Callable) -> None:
        if not callable(module):
            raise FgradTypeError(f"ThroughputBenchmark: expected a Module or a callable, got {type(module).__name__}")
        self._module = module
        self._inputs: list = []
        self._lock = threading.Lock()

    def add_input(self, *args: Any, **kwargs: Any) -> None:
        """Add one call's arguments to the pool the benchmark draws from.

        Args:
            *args: positional arguments of the model.
            **kwargs: keyword arguments of the model.
        """
        self._inputs.append((args, kwargs))

    def run_once(self, *args: Any, **kwargs: Any) -> Any:
        """Call the model once.

        Args:
            *args: positional arguments of the model.
            **kwargs: keyword arguments of the model.

        Returns:
            The model's output.
        """
        with self._lock:
            return self._module(*args, **kwargs)

    def benchmark(self, config: BenchmarkConfig) -> BenchmarkExecutionStats:
        """Run the benchmark `config` describes.

        Args:
            config: a BenchmarkConfig.

        Returns:
            BenchmarkExecutionStats.

        Raises:
            RuntimeError: no input was added.
            NotImplementedError: config.profiler_output_path is set (fgrad has no profiler trace).
        """
        if not self._inputs:
            raise FgradRuntimeError("Please provide benchmark inputs.Did you forget to call add_input()? ")
        if config.profiler_output_path:
            raise FgradNotImplementedError("ThroughputBenchmark: fgrad writes no profiler traces; leave "
                                           "profiler_output_path empty")
        threads = max(int(config.num_calling_threads), 1)
        warmup, total = int(config.num_warmup_iters), int(config.num_iters)
        draw = random.Random()  # (PyTorch draws each thread's inputs from a randomly seeded engine)
        plans = [[self._inputs[draw.randrange(len(self._inputs))] for _ in range(warmup + total)]
                 for _ in range(threads)]
        started = threading.Barrier(threads + 1)
        remaining = [total]
        counter = threading.Lock()
        errors: list = []

        def worker(plan):
            try:
                for args, kwargs in plan[:warmup]:
                    self.run_once(*args, **kwargs)
            except BaseException as e:  # noqa: BLE001 (re-raised in the calling thread)
                errors.append(e)
            started.wait()
            i = warmup
            while not errors:
                with counter:
                    if remaining[0] <= 0:
                        return
                    remaining[0] -= 1
                args, kwargs = plan[i]
                i += 1
                try:
                    self.run_once(*args, **kwargs)
                except BaseException as e:  # noqa: BLE001
                    errors.append(e)
        pool = [threading.Thread(target=worker, args=(plan,), daemon=True) for plan in plans]
        for t in pool:
            t.start()
        started.wait()
        begin = time.perf_counter()
        for t in pool:
            t.join()
        elapsed_ms = (time.perf_counter() - begin) * 1000.0
        if errors:
            raise errors[0]
        return BenchmarkExecutionStats(elapsed_ms * threads / total if total else 0.0, total)
