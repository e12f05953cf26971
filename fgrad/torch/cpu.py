"""`torch.cpu`: the CPU as a device module (what `torch.get_device_module("cpu")` returns), and
the device-generic `torch.Stream` / `torch.Event` for the CPU.

The CPU runs every operation in order on one stream, so a stream is always idle (`query()` is
True, `synchronize()` returns at once) and, as in PyTorch, the CPU backend records no events:
`Event.record`, `Stream.record_event` and `Stream.wait_stream` raise PyTorch's error."""
from __future__ import annotations

from typing import Any

from ..core.errors import FgradRuntimeError, FgradValueError
from ._tensor._device import as_device
from ._tensor._device import device as _device

__all__ = ["is_available", "is_initialized", "synchronize", "current_device", "current_stream", "stream",
           "set_device", "device_count", "Stream", "StreamContext", "Event"]

_NO_EVENTS = "cpu backend doesn't support events."
_CPU_TYPE = 0  # PyTorch's DeviceType enum value of the CPU (Stream.device_type)


def _cpu_only(device: Any, what: str) -> _device:
    dev = as_device("cpu" if device is None else device)
    if dev.type != "cpu":
        raise FgradRuntimeError(f"fgrad.torch.{what} supports the CPU only, got device {str(dev)!r}; GPU work "
                                "runs on CuPy's current stream")
    return dev


class Stream:
    """A CPU stream (torch.Stream("cpu") / torch.cpu.Stream()): work on the CPU runs in order as
    it is issued, so the stream is always complete."""

    def __init__(self, device: Any = None, priority: int = 0, **kwargs: Any) -> None:
        _cpu_only(device, "Stream")
        self.device = _device("cpu")
        self.device_index = -1
        self.device_type = _CPU_TYPE
        self.stream_id = 0

    def query(self) -> bool:
        """Whether all work issued to the stream is done: always, on the CPU.

        Returns:
            True.
        """
        return True

    def synchronize(self) -> None:
        """Wait for the stream's work: nothing is pending on the CPU."""

    def wait_event(self, event: "Event") -> None:
        """Make later work wait for `event`: CPU events are always complete.

        Args:
            event: an Event.
        """

    def wait_stream(self, stream: "Stream") -> None:
        """Raises, as PyTorch's CPU backend does (waiting needs an event).

        Raises:
            RuntimeError: always.
        """
        raise FgradRuntimeError(_NO_EVENTS)

    def record_event(self, event: "Event | None" = None) -> "Event":
        """Raises, as PyTorch's CPU backend does.

        Raises:
            RuntimeError: always.
        """
        raise FgradRuntimeError(_NO_EVENTS)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stream) and (other.device_type, other.device_index, other.stream_id) == \
            (self.device_type, self.device_index, self.stream_id)

    def __hash__(self) -> int:
        return hash((self.device_type, self.device_index, self.stream_id))

    def __enter__(self) -> "Stream":
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def __repr__(self) -> str:
        return f"torch.Stream device_type=cpu, device_index={self.device_index}, stream_id={self.stream_id}"


class Event:
    """A CPU event (torch.Event("cpu")): complete from the start; recording one raises, as PyTorch's
    CPU backend does."""

    def __init__(self, device: Any = None, *, enable_timing: bool = False, blocking: bool = False,
                 interprocess: bool = False) -> None:
        _cpu_only(device, "Event")
        self.device = _device("cpu")
        self.event_id = 0
        self._flag = 1 if enable_timing else 0

    def query(self) -> bool:
        """Whether the event has completed: always, on the CPU.

        Returns:
            True.
        """
        return True

    def record(self, stream: Stream | None = None) -> None:
        """Raises, as PyTorch's CPU backend does.

        Raises:
            RuntimeError: always.
        """
        raise FgradRuntimeError(_NO_EVENTS)

    def synchronize(self) -> None:
        """Wait for the event: CPU events are complete."""

    def wait(self, stream: Stream | None = None) -> None:
        """Make `stream` wait for the event: nothing to wait for on the CPU.

        Args:
            stream: a Stream (the current one when None).
        """

    def elapsed_time(self, end_event: "Event") -> float:
        """Raises, as PyTorch does for CPU events: timing needs both events created with
        enable_timing=True and recorded, and CPU events cannot be recorded.

        Raises:
            ValueError: always.
        """
        if not (self._flag and getattr(end_event, "_flag", 0)):
            raise FgradValueError("Both events must be created with argument 'enable_timing=True'.")
        raise FgradValueError("Both events must be recorded before calculating elapsed time (the CPU backend "
                              "records no events).")

    def __repr__(self) -> str:
        return f"torch.Event device_type=cpu, device_index=-1, event_flag={self._flag}, event_id={self.event_id}"


_CURRENT = Stream()


class StreamContext:
    """`with torch.cpu.stream(s):` — selects `s` (on the CPU, the one stream there is)."""

    def __init__(self, stream: Stream | None) -> None:
        self.stream = stream

    def __enter__(self) -> Stream | None:
        return self.stream

    def __exit__(self, *exc: Any) -> None:
        return None


def stream(stream: Stream | None) -> StreamContext:
    """A context selecting `stream` (torch.cpu.stream).

    Args:
        stream: a Stream or None.

    Returns:
        A StreamContext.
    """
    return StreamContext(stream)


def is_available() -> bool:
    """Whether the CPU is available: always.

    Returns:
        True.
    """
    return True


def is_initialized() -> bool:
    """Whether the CPU device is initialised: always.

    Returns:
        True.
    """
    return True


def synchronize(device: Any = None) -> None:
    """Wait for all CPU work: it has finished when this is called.

    Args:
        device: "cpu", a CPU device or None.
    """
    _cpu_only(device, "cpu.synchronize")


def current_device() -> str:
    """The current CPU device's name, as PyTorch gives it.

    Returns:
        "cpu".
    """
    return "cpu"


def current_stream(device: Any = None) -> Stream:
    """The CPU's stream.

    Args:
        device: "cpu", a CPU device or None.

    Returns:
        A Stream.
    """
    _cpu_only(device, "cpu.current_stream")
    return _CURRENT


def set_device(device: Any) -> None:
    """Select a CPU device: there is one, so this checks `device` names the CPU.

    Args:
        device: "cpu" or a CPU device.
    """
    _cpu_only(device, "cpu.set_device")


def device_count() -> int:
    """The number of CPU devices.

    Returns:
        1.
    """
    return 1

