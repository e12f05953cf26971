"""torch.utils.benchmark on fgrad.torch (imported as fgrad.torch.utils.benchmark): `Timer` and
the `Measurement` it returns. It lives here, above fgrad.torch.utils and runtime in the layers,
because it sets the thread count (runtime) and hands statements the fgrad.torch package.

`Timer(stmt, setup, globals=...)` times a Python statement as PyTorch's does: `timeit` runs it a
fixed number of times after a warm-up; `blocked_autorange` picks a block size that makes the
timer's own overhead negligible, then times blocks until `min_run_time` has passed;
`adaptive_autorange` times blocks until the interquartile range is within `threshold` of the
median. A Measurement prints like PyTorch's (statement, median, IQR, counts, and a warning when
the spread is large), and `Compare` lays many out in PyTorch's tables (one per label, a row per
sub-label or statement, a column per description, grouped by thread count). The statement runs with `torch` bound to fgrad.torch unless `globals`
binds it. C++ statements and Callgrind (PyTorch's instruction counts) are not offered.
"""
from __future__ import annotations

import collections
import dataclasses
import enum
import math
import textwrap
import timeit
from contextlib import contextmanager
from typing import Any, Callable, Iterable, Iterator

import numpy as np

from .. import torch as _fgrad_torch  # statements see it as `torch` (fgrad.torch imports this last)
from .runtime import get_num_threads, set_num_threads
from ..core.errors import FgradNotImplementedError, FgradValueError

__all__ = ["Colorize", "Compare", "Language", "Measurement", "TaskSpec", "Timer", "select_unit",
           "timer",
           "unit_to_english", "trim_sigfig", "ordered_unique", "set_torch_threads"]

_MAX_SIGNIFICANT_FIGURES = 4
_MIN_CONFIDENCE_INTERVAL = 25e-9
# A measurement warns when its interquartile range is this large a share of its median
_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25


def timer() -> float:
    """The default clock: `timeit.default_timer` (fgrad's CPU work is done when a call returns)."""
    return timeit.default_timer()


class Language(enum.Enum):
    """The statement's language; fgrad times Python only."""
    PYTHON = 0
    CPP = 1


@dataclasses.dataclass(init=True, repr=False, eq=True, frozen=True)
class TaskSpec:
    """What a Timer measures (its statement, setup and labels), without its globals."""
    stmt: str
    setup: str
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1

    @property
    def title(self) -> str:
        """The label (or the one-line statement), with the sub-label after a colon."""
        suffix = f": {self.sub_label}" if self.sub_label else ""
        if self.label is not None:
            return self.label + suffix
        if "\n" not in self.stmt:
            return self.stmt + suffix
        return (f"stmt:{f' ({self.sub_label})' if self.sub_label else ''}\n"
                f"{textwrap.indent(self.stmt, '  ')}")

    def setup_str(self) -> str:
        """The setup line(s) of a printed measurement ("" for no setup)."""
        if self.setup in ("pass", ""):
            return ""
        if "\n" in self.setup:
            return f"setup:\n{textwrap.indent(self.setup, '  ')}"
        return f"setup: {self.setup}"

    def summarize(self) -> str:
        """Title, description and setup, as a printed measurement's heading."""
        sections = [self.title, self.description or "", self.setup_str()]
        return "\n".join(f"{s}\n" if "\n" in s else s for s in sections if s)


_TASKSPEC_FIELDS = tuple(f.name for f in dataclasses.fields(TaskSpec))


@dataclasses.dataclass(init=True, repr=False)
class Measurement:
    """One or more timings of a statement: `raw_times[i]` seconds for `number_per_run` runs.

    Statistics (median, mean, iqr) are per run. TaskSpec's fields read through
    (`measurement.stmt`, `.label`, `.env`: None when unset, as PyTorch's returns).
    """
    number_per_run: int
    raw_times: list
    task_spec: TaskSpec
    metadata: dict | None = None

    def __post_init__(self) -> None:
        self._sorted_times: tuple = ()
        self._warnings: tuple = ()
        self._median = self._mean = self._p25 = self._p75 = -1.0

    def __getattr__(self, name: str) -> Any:
        if name in _TASKSPEC_FIELDS:
            return getattr(self.task_spec, name)
        return super().__getattribute__(name)

    @property
    def times(self) -> list:
        """Seconds per run, one entry per timed block."""
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def median(self) -> float:
        """Median seconds per run."""
        self._statistics()
        return self._median

    @property
    def mean(self) -> float:
        """Mean seconds per run."""
        self._statistics()
        return self._mean

    @property
    def iqr(self) -> float:
        """Interquartile range of the seconds per run."""
        self._statistics()
        return self._p75 - self._p25

    @property
    def significant_figures(self) -> int:
        """How many figures of the median the spread of the middle half supports (1 to 4)."""
        self._statistics()
        n = len(self._sorted_times)
        middle = self._sorted_times[n // 4:math.ceil(3 * n / 4)]
        std = float(np.std(np.asarray(middle, dtype=np.float32)))
        ci = max(1.645 * std / math.sqrt(len(middle)), _MIN_CONFIDENCE_INTERVAL)
        return min(max(math.floor(math.log10(self._median / ci)), 1), _MAX_SIGNIFICANT_FIGURES)

    @property
    def has_warnings(self) -> bool:
        """Whether the spread of the timings is large enough to warn about."""
        self._statistics()
        return bool(self._warnings)

    def _statistics(self) -> None:
        if not self.raw_times or self._sorted_times:
            return
        self._sorted_times = tuple(sorted(self.times))
        times = np.asarray(self._sorted_times, dtype=np.float64)
        self._median, self._p25, self._p75 = (float(np.quantile(times, q)) for q in (.5, .25, .75))
        self._mean = float(times.mean())
        for threshold, note in (
                (_IQR_GROSS_WARN_THRESHOLD, "This suggests significant environmental influence."),
                (_IQR_WARN_THRESHOLD, "This could indicate system fluctuation.")):
            if not self.meets_confidence(threshold):
                self._warnings += (f"  WARNING: Interquartile range is "
                                   f"{self.iqr / self.median * 100:.1f}% of the median measurement.\n"
                                   f"           {note}",)
                break

    def meets_confidence(self, threshold: float = _IQR_WARN_THRESHOLD) -> bool:
        """Whether the interquartile range is below `threshold` times the median."""
        return self.iqr / self.median < threshold

    @property
    def title(self) -> str:
        """The task's title (label or statement)."""
        return self.task_spec.title

    @property
    def as_row_name(self) -> str:
        """The sub-label, else the statement."""
        return self.sub_label or self.stmt or "[Unknown]"

    def __repr__(self) -> str:
        self._statistics()
        n = len(self._sorted_times)
        unit, scale = select_unit(self._median)
        lines = [object.__repr__(self), self.task_spec.summarize(),
                 f"  {'Median: ' if n > 1 else ''}{self._median / scale:.2f} {unit}"]
        if n >= 4:
            lines.append(f"  IQR:    {self.iqr / scale:.2f} {unit} ({self._p25 / scale:.2f} to "
                         f"{self._p75 / scale:.2f})")
        threads = self.task_spec.num_threads
        lines.append(f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs "
                     f"{'per measurement,' if n > 1 else ','} {threads} "
                     f"thread{'s' if threads > 1 else ''}")
        lines.append("\n".join(self._warnings))
        return "\n".join("\n".join(lines).strip().splitlines())

    @staticmethod
    def merge(measurements: Iterable[Measurement]) -> list[Measurement]:
        """Pool replicates of the same task into one Measurement each (per-run times, no metadata).

        Args:
            measurements: Measurements, possibly of several tasks.

        Returns:
            One Measurement per distinct TaskSpec, in first-seen order, with `number_per_run=1`.
        """
        groups: dict = collections.defaultdict(list)
        for m in measurements:
            groups[m.task_spec].extend(m.times)
        return [Measurement(1, times, spec) for spec, times in groups.items()]


def select_unit(t: float) -> tuple[str, float]:
    """The unit ("ns", "us", "ms" or "s") and its size in seconds that suits a time of `t` seconds.

    Args:
        t: a time in seconds.

    Returns:
        (unit, seconds per unit).
    """
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(int(math.log10(t) // 3), "s")
    return unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}[unit]


def unit_to_english(u: str) -> str:
    """"ns" -> "nanosecond", "us" -> "microsecond", "ms" -> "millisecond", "s" -> "second"."""
    return {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}[u]


def trim_sigfig(x: float, n: int) -> float:
    """`x` rounded to `n` significant figures (3.14159, 2 -> 3.1).

    Args:
        x: the value.
        n: how many significant figures to keep (an integer).

    Returns:
        The rounded value.
    """
    if n != int(n):
        raise FgradValueError(f"trim_sigfig: the number of significant figures must be an integer, got {n}")
    scale = 10 ** (math.ceil(math.log10(abs(x))) - n)
    return float(round(x / scale) * scale)


def ordered_unique(elements: Iterable) -> list:
    """The distinct elements in first-seen order."""
    return list(dict.fromkeys(elements))


@contextmanager
def set_torch_threads(n: int) -> Iterator[None]:
    """Run the block with fgrad.torch's thread count set to `n`, restoring it afterwards."""
    prior = get_num_threads()
    try:
        set_num_threads(n)
        yield
    finally:
        set_num_threads(prior)


class Timer:
    """Time a Python statement (PyTorch's `torch.utils.benchmark.Timer`).

    Args:
        stmt: the statement to time (a string; dedented).
        setup: code run once before timing (a string).
        global_setup: C++ only in PyTorch; must be empty.
        timer: the clock, a function returning seconds.
        globals: names the statement and setup see (`torch` defaults to fgrad.torch).
        label, sub_label, description, env: labels printed with the measurement.
        num_threads: fgrad.torch's thread count while timing.
        language: "python" (Language.PYTHON); C++ is not supported.

    Raises:
        ValueError: when `stmt` is not a string, `global_setup` is given, or `language` is unknown.
        NotImplementedError: for C++ statements.
    """

    def __init__(self, stmt: str = "pass", setup: str = "pass", global_setup: str = "",
                 timer: Callable[[], float] = timer, globals: dict | None = None,
                 label: str | None = None, sub_label: str | None = None,
                 description: str | None = None, env: str | None = None, num_threads: int = 1,
                 language: Language | str = Language.PYTHON) -> None:
        if not isinstance(stmt, str):
            raise FgradValueError("Currently only a `str` stmt is supported.")
        if language in (Language.CPP, "cpp", "c++"):
            raise FgradNotImplementedError("fgrad.torch's Timer times Python statements only "
                                      "(PyTorch compiles C++ statements with its own toolchain).")
        if language not in (Language.PYTHON, "py", "python"):
            raise FgradValueError(f"Invalid language `{language}`.")
        if global_setup:
            raise FgradValueError(f"global_setup is C++ only, got `{global_setup}`. Most likely this "
                             "code can simply be moved to `setup`.")
        self._globals = dict(globals or {})
        self._globals.setdefault("torch", _fgrad_torch)
        stmt, setup = (self._clean(code) for code in (stmt, setup))
        self._timer = timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = TaskSpec(stmt=stmt, setup=setup, global_setup=global_setup, label=label,
                                   sub_label=sub_label, description=description, env=env,
                                   num_threads=num_threads)

    @staticmethod
    def _clean(code: str) -> str:
        code = textwrap.dedent(code)
        return (code[1:] if code.startswith("\n") else code).rstrip()

    def _timeit(self, number: int) -> float:
        return max(self._timer.timeit(number), 1e-9)

    def timeit(self, number: int = 1000000) -> Measurement:
        """Run the statement `number` times (after a warm-up of number // 100, at least 2).

        Args:
            number: how many runs to time together.

        Returns:
            A Measurement of one block of `number` runs.
        """
        with set_torch_threads(self._task_spec.num_threads):
            self._timeit(max(number // 100, 2))
            return Measurement(number, [self._timeit(number)], self._task_spec)

    def repeat(self, repeat: int = -1, number: int = -1) -> None:
        """Not offered, as in PyTorch: use `blocked_autorange`."""
        raise FgradNotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback: Callable | None = None) -> None:
        """Not offered, as in PyTorch: use `blocked_autorange`."""
        raise FgradNotImplementedError("See `Timer.blocked_autorange.`")

    def _block_size(self, min_run_time: float) -> int:
        """Grow the block tenfold until the clock's overhead is under 0.01% of a block's time."""
        with set_torch_threads(self._task_spec.num_threads):
            overhead = float(np.median([self._timeit(0) for _ in range(5)]))
            number = 1
            while True:
                taken = self._timeit(number)
                if overhead / taken <= 1e-4 and taken >= min_run_time / 1000:
                    break
                if taken > min_run_time or number * 10 > 2147483647:
                    break
                number *= 10
        return number

    def _loop(self, number: int, stop: Callable[[list], bool], min_run_time: float,
              max_run_time: float | None, callback: Callable | None) -> list:
        total, times, can_stop = 0.0, [], False
        with set_torch_threads(self._task_spec.num_threads):
            while total < min_run_time or not can_stop:
                spent = self._timeit(number)
                times.append(spent)
                total += spent
                if callback:
                    callback(number, spent)
                can_stop = stop(times)
                if max_run_time and total > max_run_time:
                    break
        return times

    def blocked_autorange(self, callback: Callable[[int, float], Any] | None = None,
                          min_run_time: float = 0.2) -> Measurement:
        """Time blocks of runs until `min_run_time` seconds have been spent.

        Args:
            callback: called as `callback(number_per_block, seconds)` after each block.
            min_run_time: the total timed seconds to reach.

        Returns:
            A Measurement of every block.
        """
        number = self._block_size(min_run_time)
        times = self._loop(number, lambda times: True, min_run_time, None, callback)
        return Measurement(number, times, self._task_spec)

    def adaptive_autorange(self, threshold: float = 0.1, *, min_run_time: float = 0.01,
                           max_run_time: float = 10.0,
                           callback: Callable[[int, float], Any] | None = None) -> Measurement:
        """Time blocks until the interquartile range is below `threshold` times the median.

        Args:
            threshold: the relative spread to reach (checked once more than 3 blocks are timed).
            min_run_time: the least total timed seconds.
            max_run_time: the most total timed seconds, whatever the spread.
            callback: called as `callback(number_per_block, seconds)` after each block.

        Returns:
            A Measurement of every block.
        """
        number = self._block_size(0.05)

        def stop(times: list) -> bool:
            return (len(times) > 3
                    and Measurement(number, times, self._task_spec).meets_confidence(threshold))

        times = self._loop(number, stop, min_run_time, max_run_time, callback)
        return Measurement(number, times, self._task_spec)


# ANSI colours of Compare.colorize(): best, within 10%, at least 2x and at least 5x the best
_BEST, _GOOD, _BAD, _VERY_BAD = "\033[92m", "\033[34m", "\033[2m\033[91m", "\033[31m"
_BOLD, _END = "\033[1m", "\033[0m"


class Colorize(enum.Enum):
    """How Compare colours times: not at all, against the best of a column, or of a row."""
    NONE = "none"
    COLUMNWISE = "columnwise"
    ROWWISE = "rowwise"


def _colored(text: str, value: float, best: float) -> str:
    if value <= best * 1.01 or value <= best + 100e-9:
        return _BEST + _BOLD + text + _END * 2
    if value <= best * 1.1:
        return _GOOD + _BOLD + text + _END * 2
    if value >= best * 5:
        return _VERY_BAD + _BOLD + text + _END * 2
    if value >= best * 2:
        return _BAD + text + _END * 2
    return text


class _Column:
    """How one column writes its times: a shared width and number of decimals."""

    def __init__(self, groups: list, scale: float, trim: bool, highlight: bool) -> None:
        self.groups = groups  # per thread group, the column's results (None where missing)
        results = [m for group in groups for m in group if m is not None]
        self.trim = trim
        self.highlight = highlight and any(m.has_warnings for m in results)
        digits = [math.ceil(math.log10(m.median / scale)) for m in results]
        decimals = (min(max(m.significant_figures - d, 0) for d, m in zip(digits, results))
                    if trim else 1)
        width = max(digits) + decimals + (1 if decimals else 0)
        self.template = f"{{:>{width}.{decimals}f}}{{:>{7 if self.highlight else 0}}}"

    def text(self, value: float | None, sigfigs: int, spread: float | None) -> str:
        if value is None:
            return " " * len(self.text(1, sigfigs, None))
        if self.trim:
            value = trim_sigfig(value, sigfigs)
        note = f" (! {spread * 100:.0f}%)" if self.highlight and spread is not None else ""
        return self.template.format(value, note)


def _table(results: list, colorize: Colorize, trim: bool, highlight: bool) -> str:
    """One label's table: rows (threads, env, row name) in first-seen order grouped by thread
    count and env, columns by description."""
    unit, scale = select_unit(min(m.median for m in results))

    def row_key(m):
        return m.num_threads, m.env, m.as_row_name

    row_keys = ordered_unique(row_key(m) for m in results)
    row_keys.sort(key=lambda key: key[:2])
    col_keys = ordered_unique(m.description for m in results)
    grid = [[None] * len(col_keys) for _ in row_keys]
    for m in results:
        grid[row_keys.index(row_key(m))][col_keys.index(m.description)] = m
    envs = {m.env for m in results}
    show_env = len(envs) > 1
    env_width = max(len(e) for e in envs) if show_env else 0

    # thread groups: consecutive rows with one thread count
    group_of, groups, prior_threads = [], [], None
    for (threads, _, _), row in zip(row_keys, grid):
        if threads != prior_threads:
            groups.append([])
            prior_threads = threads
        groups[-1].append(row)
        group_of.append(len(groups) - 1)
    columns = [_Column([[row[j] for row in g] for g in groups], scale, trim, highlight)
               for j in range(len(col_keys))]

    cells = [[""] + ["" if k is None else k for k in col_keys]]
    prior_env, prior_threads = None, None
    separators = []
    for (threads, env, _), row in zip(row_keys, grid):
        first = next(m for m in row if m is not None)
        new_group = threads != prior_threads
        if new_group:
            prior_env = None
        label = (f"({env})" if show_env and env != prior_env else "").ljust(env_width + 4)
        line = ["  " + label + first.as_row_name]
        for m, column in zip(row, columns):
            line.append(column.text(None, 1, None) if m is None else column.text(
                m.median / scale, m.significant_figures,
                m.iqr / m.median if m.has_warnings else None))
        cells.append(line)
        separators.append(threads if new_group else None)
        prior_env, prior_threads = env, threads
    n_cols = max(len(c) for c in cells)
    for c in cells:
        c.extend([""] * (n_cols - len(c)))
    widths = [max(len(c[i]) for c in cells) for i in range(n_cols)]
    header = "  |  ".join(text.center(w) for text, w in zip(cells[0], widths))
    lines = [header]
    for line, row, threads, group in zip(cells[1:], grid, separators, group_of):
        if threads is not None:
            lines.append(f"{threads} threads: ".ljust(len(header), "-"))
        if colorize is Colorize.ROWWISE:
            best = [min(m.median for m in row if m is not None)] * len(columns)
        elif colorize is Colorize.COLUMNWISE:
            best = [min((m.median for m in col.groups[group] if m is not None), default=None)
                    for col in columns]
        else:
            best = [None] * len(columns)
        out = [line[0].ljust(widths[0])]
        for text, width, m, b in zip(line[1:], widths[1:], row, best):
            text = text.center(width)
            if colorize is not Colorize.NONE and m is not None and b is not None:
                text = _colored(text, m.median, b)
            out.append(text)
        lines.append("  |  ".join(out))
    label = results[0].label or ""
    warn = highlight and any(m.has_warnings for m in results)
    return (f"[{(' ' + label + ' ').center(len(header) - 2, '-')}]\n" + "\n".join(lines)
            + f"\n\nTimes are in {unit_to_english(unit)}s ({unit}).\n"
            + ("(! XX%) Measurement has high variance, where XX is the IQR / median * 100.\n"
               if warn else ""))


class Compare:
    """Tables of many Measurements, as PyTorch's `torch.utils.benchmark.Compare`.

    One table per label; in it a row per (thread count, env, sub-label or statement) and a
    column per description, each cell the median time of the replicates merged. `print()` or
    `str()` shows them.

    Args:
        results: Measurements (from Timer) to show.

    Raises:
        ValueError: when a result is not a Measurement.
    """

    def __init__(self, results: list) -> None:
        self._results: list = []
        self.extend_results(results)
        self._trim = False
        self._colorize = Colorize.NONE
        self._highlight = False

    def extend_results(self, results) -> None:
        """Add more Measurements.

        Args:
            results: Measurements.

        Returns:
            None.
        """
        results = list(results)
        for r in results:
            if not isinstance(r, Measurement):
                raise FgradValueError(f"Expected an instance of `Measurement`, got {type(r)} instead.")
        self._results.extend(results)

    def trim_significant_figures(self) -> None:
        """Show each time with only the figures its spread supports."""
        self._trim = True

    def colorize(self, rowwise: bool = False) -> None:
        """Colour times against the best of their column (or row, with `rowwise=True`)."""
        self._colorize = Colorize.ROWWISE if rowwise else Colorize.COLUMNWISE

    def highlight_warnings(self) -> None:
        """Mark times whose spread is large with their IQR as a share of the median."""
        self._highlight = True

    def __str__(self) -> str:
        by_label: dict = collections.defaultdict(list)
        for m in Measurement.merge(self._results):
            by_label[m.label].append(m)
        return "\n".join(_table(group, self._colorize, self._trim, self._highlight)
                         for group in by_label.values())

    def print(self) -> None:
        """Print the tables."""
        print(str(self))
