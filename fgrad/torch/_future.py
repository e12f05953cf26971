"""torch.Future: the result of an asynchronous computation, set once by its producer; waiting
blocks until then, and callbacks (`then`, `add_done_callback`) run when it is set."""
from __future__ import annotations

import threading
from typing import Any, Callable

from ..core.errors import FgradRuntimeError, FgradTypeError, FgradValueError
from ._tensor._device import as_device


class Future:
    """A value that will be set later (PyTorch's torch.Future, made with the list of devices its
    value lives on: `torch.Future([])` for the CPU)."""

    def __init__(self, devices: list) -> None:
        if not isinstance(devices, (list, tuple)):
            raise FgradTypeError(f"torch.Future: devices must be a list of devices (e.g. []), got "
                                 f"{type(devices).__name__}")
        for d in devices:
            dev = as_device(d)
            if dev.index is None:
                raise FgradValueError(f"Expected devices to have indices, got {dev}")
        self._cond = threading.Condition()
        self._done = False
        self._value: Any = None
        self._error: BaseException | None = None
        self._callbacks: list = []

    def done(self) -> bool:
        """Whether the value (or an error) has been set.

        Returns:
            A bool.
        """
        return self._done

    def _complete(self, value: Any, error: BaseException | None) -> None:
        with self._cond:
            if self._done:
                raise FgradRuntimeError("Attempting to mark a completed Future as complete again. Note that a "
                                        "Future can only be marked completed once.")
            self._value, self._error, self._done = value, error, True
            callbacks, self._callbacks = self._callbacks, []
            self._cond.notify_all()
        for cb in callbacks:
            cb(self)

    def set_result(self, result: Any) -> None:
        """Set the value, wake the waiters and run the callbacks.

        Args:
            result: the value.

        Raises:
            RuntimeError: the Future was completed already.
        """
        self._complete(result, None)

    def wait(self) -> Any:
        """Block until the value is set, then return it.

        Returns:
            The value.

        Raises:
            The error the Future completed with (a callback's, for a Future from `then`).
        """
        with self._cond:
            while not self._done:
                self._cond.wait()
        return self.value()

    def value(self) -> Any:
        """The value of a completed Future, without waiting.

        Returns:
            The value.

        Raises:
            RuntimeError: the Future is not completed yet.
        """
        if not self._done:
            raise FgradRuntimeError("Future.value(): the Future is not completed yet; call wait() to block until "
                                    "it is")
        if self._error is not None:
            raise self._error
        return self._value

    def then(self, callback: Callable[["Future"], Any]) -> "Future":
        """A Future of `callback(self)`, run when this one completes (at once if it has).

        Args:
            callback: a function of this Future.

        Returns:
            A Future; it completes with callback's error (a RuntimeError naming it) if callback raises.
        """
        out = Future([])

        def run(fut: Future) -> None:
            try:
                result = callback(fut)
            except Exception as e:  # noqa: BLE001 (handed to the chained Future, as PyTorch's)
                err = FgradRuntimeError(f"Got the following error when running the callback: "
                                        f"{type(e).__name__}: {e}")
                err.__cause__ = e
                out._complete(None, err)
                return
            out._complete(result, None)
        self.add_done_callback(run)
        return out

    def add_done_callback(self, callback: Callable[["Future"], Any]) -> None:
        """Run `callback(self)` when this Future completes (at once if it has).

        Args:
            callback: a function of this Future.
        """
        with self._cond:
            if not self._done:
                self._callbacks.append(callback)
                return
        callback(self)
