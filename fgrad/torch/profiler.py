"""torch.profiler and torch.autograd.profiler on fgrad.torch: the wall time of each torch op and
of the user's `record_function` blocks, summed per name into PyTorch's table.

While a profile runs it sits among the op interceptors (`_tensor.forward_ad.install`, as a dual
level or saved-tensor hooks do): every torch op (`_boundary.call`) and primitive op
(`_tensor_bind`) is timed once, under PyTorch's operator name (`aten::div` for DivBackward0's
op), and ops run inside another op are not counted twice. Only the CPU is profiled: a request for
CUDA activity (use_cuda=True, ProfilerActivity.CUDA) raises rather than returning an empty column.
"""
from __future__ import annotations

import bisect
import enum
import json
import os
import sys
import types
import warnings
from collections import defaultdict
import re
import socket
import time
from collections import OrderedDict
from typing import Any, Callable, Iterable

from ..core.errors import FgradNotImplementedError, FgradRuntimeError
from ._tensor import forward_ad as _fa
from ._tensor import tensor as _tensor_module
from ._tensor._boundary import call as _call
from ._tensor._names import grad_fn_name
from ._tensor.tensor import FORWARD_AD, _EMPTY

__all__ = ["profile", "record_function", "ProfilerActivity", "ProfilerAction", "DeviceType", "schedule",
           "tensorboard_trace_handler", "supported_activities", "kineto_available", "EventList", "FunctionEvent",
           "FunctionEventAvg", "RecordScope", "ProfilerState", "EnforceUnique", "KinetoStepTracker", "MemRecordsAcc",
           "emit_nvtx", "emit_itt", "itt"]


class ProfilerActivity(enum.Enum):
    """What a profile records: CPU (the only one fgrad profiles) or an accelerator's kernels
    (PyTorch's values)."""

    CPU = 0
    XPU = 1
    CUDA = 2
    HPU = 3
    MTIA = 4
    PrivateUse1 = 5


class ProfilerAction(enum.Enum):
    """What a schedule asks of the profiler at a step."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3
    DEVICE_STOPPED = 4


class DeviceType(enum.Enum):
    """The device an event ran on (fgrad's events are all CPU); PyTorch's members and values."""

    CPU = 0
    CUDA = 1
    MKLDNN = 2
    OPENGL = 3
    OPENCL = 4
    IDEEP = 5
    HIP = 6
    FPGA = 7
    MAIA = 8
    XLA = 9
    Vulkan = 10
    Metal = 11
    XPU = 12
    MPS = 13
    MTIA = 19
    Meta = 14
    HPU = 15
    VE = 16
    Lazy = 17
    IPU = 18
    PrivateUse1 = 20


def kineto_available() -> bool:
    """Whether PyTorch's Kineto tracer is built in: never in fgrad, which times ops itself
    (the profile API works without it).

    Returns:
        False.
    """
    return False


def supported_activities() -> set:
    """The activities fgrad can profile.

    Returns:
        {ProfilerActivity.CPU}.
    """
    return {ProfilerActivity.CPU}


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0) -> Callable[[int], ProfilerAction]:
    """PyTorch's profiler schedule: after skip_first steps, cycles of `wait` idle steps,
    `warmup` steps and `active` recorded steps (the last one saves), `repeat` times (0: forever).

    Args:
        wait, warmup, active, repeat, skip_first: the step counts.
        skip_first_wait: skip the first cycle's wait steps.

    Returns:
        A function from the step number to its ProfilerAction.
    """
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise FgradRuntimeError(f"Invalid profiler schedule arguments: wait={wait}, warmup={warmup}, "
                                f"active={active}, repeat={repeat}, skip_first={skip_first} (active must be "
                                "positive, the others non-negative)")

    def action(step: int) -> ProfilerAction:
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait:
            step += wait
        period = wait + warmup + active
        if repeat > 0 and step // period >= repeat:
            return ProfilerAction.NONE
        mod = step % period
        if mod < wait:
            return ProfilerAction.NONE
        if mod < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod < period - 1 else ProfilerAction.RECORD_AND_SAVE
    return action


def _aten_name(name: str | None, fn: Any = None) -> str:
    """PyTorch's operator name for a grad_fn name: DivBackward0 -> aten::div."""
    if name is None:
        name = getattr(fn, "__name__", "op")
    base = re.sub(r"Backward\d*$", "", name)
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", base).lower()
    return "aten::" + snake


class FunctionEvent:
    """One timed interval: an op or a record_function block (times in microseconds).

    Args:
        name: the event's name ("aten::mul", or the record_function's).
        start_us, end_us: its start and end on the profile's clock.
        is_user_annotation: a record_function block.
    """

    def __init__(self, name: str, start_us: float, end_us: float, is_user_annotation: bool = False) -> None:
        self.name = self.key = name
        self.start_us, self.end_us = start_us, end_us
        self.is_user_annotation = is_user_annotation
        self.count = 1
        self.cpu_children: list[FunctionEvent] = []
        self.cpu_parent: FunctionEvent | None = None
        self.input_shapes: list = []
        self.device_type = DeviceType.CPU

    @property
    def cpu_time_total(self) -> float:
        """The interval's length (microseconds)."""
        return self.end_us - self.start_us

    @property
    def self_cpu_time_total(self) -> float:
        """Its length less its children's."""
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    cpu_time = cpu_time_total
    device_time_total = self_device_time_total = cuda_time_total = self_cuda_time_total = 0.0

    def __repr__(self) -> str:
        return (f"<FunctionEvent id={id(self)} name={self.name} cpu_time={_fmt_us(self.cpu_time_total)} "
                f"start_us={self.start_us:.3f} end_us={self.end_us:.3f} cpu_children={[id(c) for c in self.cpu_children]}>")


class FunctionEventAvg:
    """The events of one name summed: count, total and self CPU time (microseconds)."""

    def __init__(self, key: str) -> None:
        self.key = self.name = key
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.is_user_annotation = False
        self.input_shapes = ""
        self.device_time_total = self.self_device_time_total = self.cuda_time_total = self.self_cuda_time_total = 0.0

    def add(self, ev: "FunctionEvent | FunctionEventAvg") -> "FunctionEventAvg":
        """Add an event (or an average) of this key.

        Args:
            ev: the event.

        Returns:
            self.
        """
        self.count += ev.count
        self.cpu_time_total += ev.cpu_time_total
        self.self_cpu_time_total += ev.self_cpu_time_total
        self.is_user_annotation = ev.is_user_annotation
        return self

    @property
    def cpu_time(self) -> float:
        """The mean time per call (microseconds)."""
        return self.cpu_time_total / self.count if self.count else 0.0

    def __repr__(self) -> str:
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={_fmt_us(self.self_cpu_time_total)} "
                f"cpu_time={_fmt_us(self.cpu_time)}  self_cuda_time=0.000us cuda_time=0.000us input_shapes= "
                "cpu_memory_usage=0 cuda_memory_usage=0>")


def _fmt_us(us: float) -> str:
    """PyTorch's time format: 1.234s, 1.234ms or 1.234us."""
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


_SORT_KEYS = {"self_cpu_time_total", "cpu_time_total", "cpu_time", "count", "self_cuda_time_total",
              "cuda_time_total", "self_device_time_total", "device_time_total"}


class EventList(list):
    """A list of FunctionEvent (or FunctionEventAvg) with PyTorch's summaries."""

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0) -> "EventList":
        """The events summed per name, in order of first appearance.

        Args:
            group_by_input_shape, group_by_stack_n: accepted for PyTorch's signature (fgrad
                records neither shapes nor stacks).

        Returns:
            An EventList of FunctionEventAvg.
        """
        groups: "OrderedDict[str, FunctionEventAvg]" = OrderedDict()
        for ev in self:
            groups.setdefault(ev.key, FunctionEventAvg(ev.key)).add(ev)
        return EventList(groups.values())

    def total_average(self) -> FunctionEventAvg:
        """All events summed into one.

        Returns:
            A FunctionEventAvg with key "Total".
        """
        total = FunctionEventAvg("Total")
        for ev in self:
            total.add(ev)
        return total

    @property
    def self_cpu_time_total(self) -> float:
        """The sum of the events' self times (microseconds)."""
        return sum(ev.self_cpu_time_total for ev in self)

    def table(self, sort_by: str | None = None, row_limit: int = 100, max_src_column_width: int = 75,
              max_name_column_width: int = 55, max_shapes_column_width: int = 80, header: str | None = None,
              top_level_events_only: bool = False, time_unit: str | None = None) -> str:
        """PyTorch's table of the events: name, self and total CPU time (and their shares of the
        total self time), mean time per call and number of calls.

        Args:
            sort_by: an attribute to sort by, largest first ("self_cpu_time_total",
                "cpu_time_total", "count", ...), or None for the events' order.
            row_limit: the most rows to show.
            max_name_column_width: the widest the name column gets.
            header: a line printed above the table.
            top_level_events_only: only events with no parent.
            max_src_column_width, max_shapes_column_width, time_unit: accepted for PyTorch's
                signature.

        Returns:
            The table as a string.

        Raises:
            AttributeError: an unknown sort_by.
        """
        rows = [ev for ev in self if not top_level_events_only or getattr(ev, "cpu_parent", None) is None]
        if sort_by is not None:
            if sort_by not in _SORT_KEYS:
                raise AttributeError(f"'FunctionEventAvg' object has no attribute '{sort_by}' (sort by one of "
                                     f"{sorted(_SORT_KEYS)})")
            rows = sorted(rows, key=lambda ev: getattr(ev, sort_by), reverse=True)
        total_self = sum(ev.self_cpu_time_total for ev in self) or 1.0
        name_w = min(max([len(ev.key) for ev in rows] + [4]) + 4, max_name_column_width)
        cols = ["Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "# of Calls"]
        widths = [name_w] + [12] * len(cols)
        line = "".join("-" * w + "  " for w in widths)
        out = []
        if header:
            out += ["=" * len(line), header]
        out += [line, "".join(s.rjust(w) + "  " for s, w in zip(["Name"] + cols, widths)), line]
        for ev in rows[:row_limit]:
            name = ev.key if len(ev.key) <= name_w else ev.key[:name_w - 3] + "..."
            cells = [name, f"{100 * ev.self_cpu_time_total / total_self:.2f}%", _fmt_us(ev.self_cpu_time_total),
                     f"{100 * ev.cpu_time_total / total_self:.2f}%", _fmt_us(ev.cpu_time_total),
                     _fmt_us(ev.cpu_time_total / ev.count if ev.count else 0.0), str(ev.count)]
            out.append("".join(c.rjust(w) + "  " for c, w in zip(cells, widths)))
        out += [line, f"Self CPU time total: {_fmt_us(total_self if self else 0.0)}", ""]
        return "\n".join(out)

    def export_chrome_trace(self, path: str) -> None:
        """Write the events as a Chrome trace (chrome://tracing, Perfetto) JSON file.

        Args:
            path: the file to write.

        Returns:
            None.
        """
        events = [{"name": ev.name, "ph": "X", "ts": ev.start_us, "dur": ev.cpu_time_total, "pid": 0, "tid": 0,
                   "cat": "user_annotation" if ev.is_user_annotation else "cpu_op", "args": {}}
                  for ev in self if isinstance(ev, FunctionEvent)]
        with open(path, "w", encoding="utf8") as f:
            json.dump({"traceEvents": events, "displayTimeUnit": "ms"}, f)

    def __str__(self) -> str:
        return self.table()


# the profiles recording now, innermost last (record_function blocks report to each)
_ACTIVE: list = []


class _Recorder:
    """The op interceptor of a running profile (see the module doc)."""

    def __init__(self, prof: "profile") -> None:
        self.prof = prof

    def call(self, name, fn, args: tuple, kwargs: dict = _EMPTY):
        FORWARD_AD[0] = _fa.below(self)
        start = self.prof._now()
        try:
            return _call(name, fn, args, kwargs)
        finally:
            self.prof._add(_aten_name(name, fn), start, self.prof._now())
            FORWARD_AD[0] = self

    def bind(self, prim, args: tuple, params: dict, cls=None):
        FORWARD_AD[0] = _fa.below(self)
        start = self.prof._now()
        try:
            return _tensor_module._tensor_bind(prim, args, params, cls)
        finally:
            name = cls.__name__ if cls is not None else grad_fn_name(prim.name)
            self.prof._add(_aten_name(name), start, self.prof._now())
            FORWARD_AD[0] = self

    def inplace(self, t, new) -> None:
        inner = _fa.below(self)
        if inner is not None:
            inner.inplace(t, new)


class profile:
    """Profile the torch ops run inside a `with` block (PyTorch's `torch.profiler.profile` and
    `torch.autograd.profiler.profile`): `prof.key_averages().table(sort_by="self_cpu_time_total")`
    prints the time per op name; `prof.events()` / `prof.function_events` list the intervals.

    Args:
        enabled: record (False: the block runs unprofiled; autograd.profiler's first argument).
        activities: the ProfilerActivity set (CPU; CUDA is refused: fgrad times host work only).
        schedule: a function from step to ProfilerAction (see `schedule`), with `step()` calls.
        on_trace_ready: called with the profile when a scheduled cycle ends (or at exit).
        use_cuda, use_device: autograd.profiler's GPU switches (a GPU is refused).
        record_shapes, profile_memory, with_stack, with_flops, with_modules, use_kineto, use_cpu,
            experimental_config, acc_events, execution_trace_observer,
            custom_trace_id_callback: accepted for PyTorch's signatures; not recorded.
    """

    def __init__(self, enabled: bool = True, *, activities: Iterable | None = None, schedule=None,
                 on_trace_ready=None, use_cuda: bool = False, use_device: str | None = None,
                 record_shapes: bool = False, profile_memory: bool = False, with_stack: bool = False,
                 with_flops: bool = False, with_modules: bool = False, use_kineto: bool = False,
                 use_cpu: bool = True, experimental_config=None, execution_trace_observer=None,
                 acc_events: bool = False, custom_trace_id_callback=None) -> None:
        acts = set(activities) if activities is not None else {ProfilerActivity.CPU}
        if use_cuda or (use_device not in (None, "cpu")) or acts - {ProfilerActivity.CPU}:
            raise FgradNotImplementedError("fgrad's profiler records CPU activity only: profile CUDA kernels with "
                                           "NVIDIA's tools (nsys), or drop use_cuda / ProfilerActivity.CUDA")
        self.enabled = enabled
        self.schedule = schedule
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self._events: list[FunctionEvent] = []
        self._stack: list[FunctionEvent] = []
        self._recorder = _Recorder(self)
        self._t0 = 0.0
        self._recording = False

    # --- the clock and the events ---
    def _now(self) -> float:
        return (time.perf_counter() - self._t0) * 1e6

    def _add(self, name: str, start: float, end: float, user: bool = False) -> FunctionEvent:
        ev = FunctionEvent(name, start, end, user)
        if self._stack:
            ev.cpu_parent = self._stack[-1]
            self._stack[-1].cpu_children.append(ev)
        self._events.append(ev)
        return ev

    # --- running ---
    def _record(self, on: bool) -> None:
        if on and not self._recording:
            _fa.install(self._recorder)
            _ACTIVE.append(self)
        elif not on and self._recording:
            _fa.uninstall(self._recorder)
            if self in _ACTIVE:
                _ACTIVE.remove(self)
        self._recording = on

    def start(self) -> None:
        """Start recording (or, with a schedule, start at step 0)."""
        if not self.enabled:
            return
        self._t0 = time.perf_counter()
        self._record(self.schedule is None or self.schedule(0) in (ProfilerAction.RECORD,
                                                                    ProfilerAction.RECORD_AND_SAVE))

    def stop(self) -> None:
        """Stop recording (and hand the profile to on_trace_ready, if any)."""
        if not self.enabled:
            return
        was = self._recording
        self._record(False)
        if self.on_trace_ready is not None and (was or self.schedule is None):
            self.on_trace_ready(self)

    def step(self) -> None:
        """End a step of a scheduled profile: record, warm up or idle as the schedule says."""
        if not self.enabled or self.schedule is None:
            self.step_num += 1
            return
        prev = self.schedule(self.step_num)
        self.step_num += 1
        action = self.schedule(self.step_num)
        if prev == ProfilerAction.RECORD_AND_SAVE and self.on_trace_ready is not None:
            self._record(False)
            self.on_trace_ready(self)
        self._record(action in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE))

    def __enter__(self) -> "profile":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    # --- results ---
    def events(self) -> EventList:
        """Every recorded interval, in order of their starts (an enclosing one before those
        inside it), as PyTorch lists them.

        Returns:
            An EventList of FunctionEvent.
        """
        return EventList(sorted(self._events, key=lambda ev: (ev.start_us, -ev.end_us)))

    @property
    def function_events(self) -> EventList:
        """The recorded intervals (autograd.profiler's name for events())."""
        return self.events()

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0) -> EventList:
        """The intervals summed per name (see EventList.key_averages).

        Returns:
            An EventList of FunctionEventAvg.
        """
        return self.events().key_averages(group_by_input_shape, group_by_stack_n)

    def table(self, *args, **kwargs) -> str:
        """The table of the key averages (see EventList.table)."""
        return self.key_averages().table(*args, **kwargs)

    @property
    def self_cpu_time_total(self) -> float:
        """The total self time of all intervals (microseconds)."""
        return self.events().self_cpu_time_total

    def export_chrome_trace(self, path: str) -> None:
        """Write the intervals as a Chrome trace (see EventList.export_chrome_trace)."""
        self.events().export_chrome_trace(path)

    def __str__(self) -> str:
        return self.table()


class record_function:
    """Time a block (or, as a decorator, each call of a function) as one event named `name`
    in the running profiles; the ops inside are its children.

    Args:
        name: the event's name.
        args: accepted for PyTorch's signature.
    """

    def __init__(self, name: str, args: str | None = None) -> None:
        self.name = name
        self._open: list = []

    def __enter__(self) -> "record_function":
        opened = []
        for prof in _ACTIVE:
            ev = FunctionEvent(self.name, prof._now(), 0.0, True)
            if prof._stack:
                ev.cpu_parent = prof._stack[-1]
            prof._stack.append(ev)
            opened.append((prof, ev))
        self._open.append(opened)
        return self

    def __exit__(self, *exc) -> None:
        for prof, ev in self._open.pop():
            ev.end_us = prof._now()
            if prof._stack and prof._stack[-1] is ev:
                prof._stack.pop()
            if ev.cpu_parent is not None:
                ev.cpu_parent.cpu_children.append(ev)
            prof._events.append(ev)

    def __call__(self, fn: Callable) -> Callable:
        def timed(*args, **kwargs):
            with record_function(self.name):
                return fn(*args, **kwargs)
        timed.__name__ = getattr(fn, "__name__", "timed")
        timed.__doc__ = fn.__doc__
        return timed


def _timed_op(name: str, fn: Callable[[], Any]) -> Any:
    """Run `fn` as one op event named `name` in the running profiles: for the work of an op
    that no op interceptor sees (the handle Tensor torch.ops.profiler's enter op makes).

    Args:
        name: the event's name ("aten::empty").
        fn: the work, called once with no arguments.

    Returns:
        What `fn` returns.
    """
    if not _ACTIVE:
        return fn()
    starts = [(prof, prof._now()) for prof in _ACTIVE]
    out = fn()
    for prof, start in starts:
        prof._add(name, start, prof._now())
    return out


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None, use_gzip: bool = False) -> Callable:
    """An on_trace_ready that writes each profile as a Chrome trace into `dir_name`.

    Args:
        dir_name: the folder (made if missing).
        worker_name: the file name's prefix (default: the host name and process id).
        use_gzip: accepted for PyTorch's signature (the file is plain JSON).

    Returns:
        The handler.
    """
    def handler(prof: profile) -> None:
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        prof.export_chrome_trace(os.path.join(dir_name, f"{worker}.{int(time.time() * 1000)}.pt.trace.json"))
    return handler


class RecordScope(enum.Enum):
    """Where a recorded function comes from (PyTorch's members and values; fgrad's op events are
    FUNCTION, record_function blocks USER_SCOPE)."""

    FUNCTION = 0
    BACKWARD_FUNCTION = 1
    TORCHSCRIPT_FUNCTION = 2
    KERNEL_FUNCTION_DTYPE = 3
    CUSTOM_CLASS = 4
    BUILD_FEATURE = 5
    LITE_INTERPRETER = 6
    USER_SCOPE = 7
    STATIC_RUNTIME_OP = 8
    STATIC_RUNTIME_MODEL = 9


class ProfilerState(enum.Enum):
    """The profiler backends PyTorch's autograd profiler names (its members and values; fgrad's
    profile is CPU timing, emit_nvtx is NVTX)."""

    Disabled = 0
    CPU = 1
    CUDA = 2
    NVTX = 3
    ITT = 4
    PRIVATEUSE1 = 5
    KINETO = 6
    KINETO_GPU_FALLBACK = 7
    KINETO_PRIVATEUSE1_FALLBACK = 8
    KINETO_PRIVATEUSE1 = 9


class EnforceUnique:
    """Raises if a key is seen twice (a helper of trace parsers)."""

    def __init__(self) -> None:
        self.seen: set = set()

    def see(self, *key: Any) -> None:
        """Note `key`.

        Args:
            *key: the key's parts.

        Returns:
            None.

        Raises:
            RuntimeError: `key` was seen before.
        """
        if key in self.seen:
            raise FgradRuntimeError("duplicate key: " + str(key))
        self.seen.add(key)


PROFILER_STEP_NAME = "ProfilerStep"


class KinetoStepTracker:
    """The global step count as the maximum of each requester's count ("ProfilerStep", an
    optimizer's), so two requesters stepping together advance it once. PyTorch's profile only
    counts its steps here for the Kineto daemon (KINETO_USE_DAEMON), which fgrad has not: its
    profiles leave the count alone, as PyTorch's do without the daemon."""

    _current_step = 0
    _step_dict: dict = defaultdict(int)

    @classmethod
    def init_step_count(cls, requester: str) -> None:
        """Start counting `requester` at the current global step.

        Args:
            requester: its name.

        Returns:
            None.
        """
        cls._step_dict[requester] = cls._current_step

    @classmethod
    def erase_step_count(cls, requester: str) -> bool:
        """Stop counting `requester`.

        Args:
            requester: its name.

        Returns:
            Whether it was counted.
        """
        return cls._step_dict.pop(requester, None) is not None

    @classmethod
    def increment_step(cls, requester: str) -> int:
        """Count a step of `requester` (starting it if new).

        Args:
            requester: its name.

        Returns:
            The global step after it.
        """
        if requester not in cls._step_dict:
            cls.init_step_count(requester)
        cls._step_dict[requester] += 1
        new = max(cls._step_dict.values())
        if new > cls._current_step:
            if new - cls._current_step > 1:
                warnings.warn(f"Profiler step count has increased more than 1 - current_step = "
                              f"{cls._current_step} step dict =  {dict(cls._step_dict)}", stacklevel=2)
            cls._current_step = new
        return cls._current_step

    @classmethod
    def current_step(cls) -> int:
        """The global step.

        Returns:
            An int.
        """
        return cls._current_step


class MemRecordsAcc:
    """Memory records by start time, for the records inside an interval.

    Args:
        mem_records: a list of records whose first item has `start_ns()` (PyTorch's
            (event, ...) tuples).
    """

    def __init__(self, mem_records: list) -> None:
        self._mem_records = mem_records
        order = sorted((r[0].start_ns(), i) for i, r in enumerate(mem_records))
        self._start_nses = [start for start, _ in order]
        self._indices = [i for _, i in order]

    def in_interval(self, start_ns: int, end_ns: int):
        """The records starting in [start_ns, end_ns], by start time.

        Args:
            start_ns, end_ns: the interval's ends (nanoseconds).

        Yields:
            The records.
        """
        lo = bisect.bisect_left(self._start_nses, start_ns)
        hi = bisect.bisect_right(self._start_nses, end_ns)
        for k in range(lo, hi):
            yield self._mem_records[self._indices[k]]


class _NvtxMarker:
    """emit_nvtx's op interceptor: each op runs inside an NVTX range named as PyTorch's
    operator (`aten::mul`)."""

    def __init__(self, nvtx: Any) -> None:
        self.nvtx = nvtx

    def call(self, name, fn, args: tuple, kwargs: dict = _EMPTY):
        FORWARD_AD[0] = _fa.below(self)
        self.nvtx.RangePush(_aten_name(name, fn))
        try:
            return _call(name, fn, args, kwargs)
        finally:
            self.nvtx.RangePop()
            FORWARD_AD[0] = self

    def bind(self, prim, args: tuple, params: dict, cls=None):
        FORWARD_AD[0] = _fa.below(self)
        self.nvtx.RangePush(_aten_name(cls.__name__ if cls is not None else grad_fn_name(prim.name)))
        try:
            return _tensor_module._tensor_bind(prim, args, params, cls)
        finally:
            self.nvtx.RangePop()
            FORWARD_AD[0] = self

    def inplace(self, t, new) -> None:
        inner = _fa.below(self)
        if inner is not None:
            inner.inplace(t, new)


class emit_nvtx:
    """Mark every torch op run inside the block with an NVTX range named by its operator
    (`aten::mul`), for NVIDIA's Nsight Systems / nvprof timelines. Like PyTorch it first
    synchronizes the GPU, so without CUDA (no CuPy, or no GPU) entering raises, as PyTorch's
    CPU build does; enabled=False makes it do nothing. Ranges carry the operator name only
    (no sequence numbers or shapes).

    Args:
        enabled: mark the ops (False: a no-op block).
        record_shapes: accepted for PyTorch's signature (shapes are not added to the names).
    """

    def __init__(self, enabled: bool = True, record_shapes: bool = False) -> None:
        self.enabled = enabled
        self.entered = False
        self.record_shapes = record_shapes
        self._marker: _NvtxMarker | None = None

    def __enter__(self) -> "emit_nvtx | None":
        if not self.enabled:
            return None
        if self.entered:
            raise FgradRuntimeError("NVTX annotation context manager is not reentrant")
        from ._tensor import cuda  # (imported on use: the device module loads CuPy)
        cuda.synchronize()
        self.entered = True
        self._marker = _NvtxMarker(_cupy_nvtx())
        _fa.install(self._marker)
        return self

    def __exit__(self, *exc) -> bool:
        if not self.enabled or self._marker is None:
            return False
        from ._tensor import cuda  # (imported on use, as above)
        _fa.uninstall(self._marker)
        self._marker = None
        cuda.synchronize()
        return False


def _cupy_nvtx() -> Any:
    """CuPy's NVTX bindings (cupy.cuda.nvtx)."""
    from ._tensor._device import cupy as cupy_module  # (imported on use: loads CuPy)
    nvtx = getattr(cupy_module().cuda, "nvtx", None)
    if nvtx is None or not getattr(nvtx, "available", True):
        raise FgradRuntimeError("emit_nvtx: this CuPy has no NVTX support (cupy.cuda.nvtx); install a CuPy wheel "
                                "built with NVTX (the cupy-cuda12x / cupy-cuda13x wheels are)")
    return nvtx


def _itt_missing(*args: Any, **kwargs: Any) -> None:
    raise FgradRuntimeError("ITT functions not installed. Are you sure you have a ITT build? (fgrad has no Intel "
                            "ITT instrumentation: torch.profiler.itt.is_available() is False; use "
                            "torch.profiler.profile for op timings)")


def _itt_range(msg: str, *args: Any, **kwargs: Any):
    """A block marked as an ITT range (raises: fgrad has no ITT).

    Args:
        msg: the range's name.

    Raises:
        RuntimeError: always.
    """
    _itt_missing()


def _itt_range_push(msg: str) -> None:
    """Open an ITT range named `msg` (raises: fgrad has no ITT).

    Args:
        msg: the range's name.

    Raises:
        RuntimeError: always.
    """
    _itt_missing()


def _itt_range_pop() -> None:
    """Close the innermost ITT range (raises: fgrad has no ITT).

    Raises:
        RuntimeError: always.
    """
    _itt_missing()


def _itt_mark(msg: str) -> None:
    """An instant ITT event named `msg` (raises: fgrad has no ITT).

    Args:
        msg: the event's name.

    Raises:
        RuntimeError: always.
    """
    _itt_missing()


itt = types.ModuleType("fgrad.torch.profiler.itt", "torch.profiler.itt: Intel ITT (VTune) annotations. fgrad has no "
                       "ITT instrumentation, as a PyTorch build without ITT: is_available() is False and the "
                       "annotation functions raise.")
itt.is_available = lambda: False
itt.is_available.__doc__ = "Whether ITT annotations are available: never in fgrad.\n\nReturns:\n    False."
itt.range_push, itt.range_pop, itt.mark, itt.range = _itt_range_push, _itt_range_pop, _itt_mark, _itt_range
sys.modules.setdefault(itt.__name__, itt)


class emit_itt:
    """Mark every op in the block as an Intel ITT range for VTune (PyTorch's emit_itt). fgrad
    has no ITT instrumentation (torch.profiler.itt.is_available() is False), so entering an
    enabled block raises, as in a PyTorch build without ITT; enabled=False does nothing.

    Args:
        enabled: mark the ops (False: a no-op block).
        record_shapes: accepted for PyTorch's signature.
    """

    def __init__(self, enabled: bool = True, record_shapes: bool = False) -> None:
        self.enabled = enabled
        self.record_shapes = record_shapes

    def __enter__(self) -> None:
        if self.enabled:
            _itt_missing()

    def __exit__(self, *exc) -> bool:
        return False

