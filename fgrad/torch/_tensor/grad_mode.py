"""Grad modes: no_grad, enable_grad, set_grad_enabled (per thread; context managers and
decorators). They decide whether facade ops record graph nodes; the functional transforms
(fgrad.grad, vjp, ...) are not affected."""
from __future__ import annotations

import functools
import inspect
from typing import Callable, Literal, TypeVar, cast, overload

from ...core.errors import FgradTypeError
from ...core.trace import _state

# A decorated function keeps its own type: `@no_grad()` changes what it records, not its signature.
_F = TypeVar("_F", bound=Callable)
_M = TypeVar("_M", bound="_BareDecorator")

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode",
           "is_inference_mode_enabled"]


def is_grad_enabled() -> bool:
    """Whether operations are recorded for autograd now: False inside no_grad() or
    set_grad_enabled(False) (PyTorch's torch.is_grad_enabled).

    Returns:
        A bool.
    """
    return _state.grad_enabled


def is_inference_mode_enabled() -> bool:
    """Whether an inference_mode block (not one with mode=False) is active in this thread.

    Returns:
        bool.
    """
    return getattr(_state, "inference_mode", False)


class _GradMode:
    """Base: a context manager that sets grad mode to `self.mode`, usable as a decorator."""

    mode = True

    def __enter__(self):
        self._prev = _state.grad_enabled
        _state.grad_enabled = self.mode
        return self

    def __exit__(self, *exc) -> Literal[False]:
        _state.grad_enabled = self._prev
        return False

    def __call__(self, fn: _F) -> _F:
        if inspect.isclass(fn):
            raise FgradTypeError(f"{type(self).__name__} decorates functions, not classes")
        mode_cls, args = type(self), self._args()

        if inspect.isgeneratorfunction(fn):
            @functools.wraps(fn)
            def gen_wrapper(*a, **k):
                gen = fn(*a, **k)
                with mode_cls(*args):
                    value = next(gen)
                while True:
                    try:
                        sent = yield value
                    except GeneratorExit:
                        gen.close()
                        raise
                    with mode_cls(*args):
                        try:
                            value = gen.send(sent)
                        except StopIteration as stop:
                            return stop.value
            return cast(_F, gen_wrapper)

        @functools.wraps(fn)
        def wrapper(*a, **k):
            with mode_cls(*args):
                return fn(*a, **k)
        return cast(_F, wrapper)

    def _args(self) -> tuple:
        return ()

    def clone(self):
        return type(self)(*self._args())


class _BareDecorator(_GradMode):
    """A mode whose class also decorates a function itself: `@fgrad.torch.no_grad`, no call."""

    @overload
    def __new__(cls: type[_M], fn: None = None) -> _M: ...

    @overload
    def __new__(cls: type[_M], fn: _F) -> _F: ...

    def __new__(cls, fn=None):
        self = super().__new__(cls)
        if fn is not None and callable(fn):  # bare @fgrad.torch.no_grad
            self.__init__()
            return self(fn)
        return self


class no_grad(_BareDecorator):
    """Ops on tensors record nothing inside ``with torch.no_grad():`` or a function decorated
    with ``@torch.no_grad()`` (or bare ``@torch.no_grad``), as in PyTorch: results have
    ``requires_grad=False`` and no ``grad_fn``, and nothing is saved for backward.

    Args:
        fn: with the bare decorator form, the function to wrap; otherwise omitted.

    Returns:
        A context manager that is also a decorator (or, given `fn`, the wrapped function).

    Example:
        >>> import fgrad.torch as torch
        >>> w = torch.tensor([1.0, 2.0], requires_grad=True)
        >>> with torch.no_grad():
        ...     y = w * 2
        >>> y.requires_grad, y.grad_fn
        (False, None)
    """

    mode = False


class enable_grad(_BareDecorator):
    """Re-enables recording inside a no_grad region."""

    mode = True


class set_grad_enabled(_GradMode):
    """`fgrad.torch.set_grad_enabled(False)` switches grad mode off right away (restored on
    `__exit__` when used as a context manager), like PyTorch."""

    def __init__(self, mode: bool) -> None:
        self.mode = bool(mode)
        self._prev = _state.grad_enabled
        _state.grad_enabled = self.mode

    def __enter__(self):
        return self

    def _args(self) -> tuple:
        return (self.mode,)

    def __call__(self, fn: _F) -> _F:
        _state.grad_enabled = self._prev  # used as a decorator: do not leave the mode switched
        return super().__call__(fn)


class inference_mode(_GradMode):
    """Like no_grad (fgrad has no separate inference tensors); is_inference_mode_enabled()
    reports it."""

    def __init__(self, mode: bool = True) -> None:
        self.mode = not mode

    def __enter__(self):
        self._prev_inference = getattr(_state, "inference_mode", False)
        _state.inference_mode = not self.mode
        return super().__enter__()

    def __exit__(self, *exc) -> Literal[False]:
        _state.inference_mode = self._prev_inference
        return super().__exit__(*exc)

    def _args(self) -> tuple:
        return (not self.mode,)


# whether a parameter's first gradient follows its layout (enforce_grad_layout_policy; read by
# tensor.accumulate_grad)
GRAD_LAYOUT = [True]


class enforce_grad_layout_policy:
    """Whether a parameter's first gradient follows the parameter's strides (PyTorch's gradient
    layout contract, on by default): `with enforce_grad_layout_policy(False):` lets it keep the
    layout the backward pass produced. Usable as a function, a context manager or a decorator.

    Args:
        enable: enforce the contract (True) or relax it (False).
    """

    def __init__(self, enable: bool = True) -> None:
        self._flag = GRAD_LAYOUT
        self.prev = GRAD_LAYOUT[0]
        self.mode = bool(enable)
        GRAD_LAYOUT[0] = self.mode

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc) -> Literal[False]:
        self._flag[0] = self.prev
        return False

    def __call__(self, fn: _F) -> _F:
        self._flag[0] = self.prev  # used as a decorator: the switch applies inside fn only
        mode = self.mode

        @functools.wraps(fn)
        def wrapper(*a, **k):
            with enforce_grad_layout_policy(mode):
                return fn(*a, **k)
        return cast(_F, wrapper)

    def clone(self) -> "enforce_grad_layout_policy":
        """A new switch with this one's setting.

        Returns:
            An enforce_grad_layout_policy.
        """
        return type(self)(self.mode)
