"""torch.utils.data's DataPipe names (PyTorch's deprecated torchdata-style pipelines):
IterDataPipe and MapDataPipe with functional forms registered by @functional_datapipe
(`dp.map(...)` style chaining), DFIterDataPipe, DataChunk, the determinism switches
(non_deterministic, guaranteed_datapipes_determinism) and the type checks
(argument_validation, runtime_validation, runtime_validation_disabled).

Types are those of plain classes: `class P(IterDataPipe[int])` has `P.type` int, and the
checks compare with isinstance/issubclass; typing constructs (List[int], Union, ...) are
checked by their origin class (list, ...) and Any accepts everything. (PyTorch 2.13's
DataPipe classes no longer carry the `type` its runtime_validation reads, so there a
validated __iter__ raises AttributeError; fgrad checks as described.) PyTorch's finer typing
rules and its one-iterator-at-a-time guard on IterDataPipe.__iter__ are not reproduced."""
from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Generic, TypeVar

from ....core.errors import FgradRuntimeError, FgradTypeError
from .dataset import Dataset, IterableDataset

__all__ = ["DFIterDataPipe", "DataChunk", "IterDataPipe", "MapDataPipe", "argument_validation",
           "functional_datapipe", "guaranteed_datapipes_determinism", "non_deterministic", "runtime_validation",
           "runtime_validation_disabled"]

T_co = TypeVar("T_co", covariant=True)
_T = TypeVar("_T")

_determinism = False
_runtime_validation_enabled = True


def _type_of(cls: type) -> Any:
    """The type argument of the DataPipe base a class derives from (Any when unparameterised)."""
    for klass in cls.__mro__:
        for base in getattr(klass, "__orig_bases__", ()):
            origin = typing.get_origin(base)
            if isinstance(origin, type) and issubclass(origin, (IterDataPipe, MapDataPipe)):
                args = typing.get_args(base)
                if args and not isinstance(args[0], TypeVar):
                    return args[0]
    return Any


def _is_instance(value: Any, hint: Any) -> bool:
    if hint is Any or isinstance(hint, TypeVar):
        return True
    origin = typing.get_origin(hint)
    if origin is typing.Union:
        return any(_is_instance(value, h) for h in typing.get_args(hint))
    cls = origin if origin is not None else hint
    return isinstance(value, cls) if isinstance(cls, type) else True


def _is_subtype(sub: Any, sup: Any) -> bool:
    if sup is Any or isinstance(sup, TypeVar):
        return True
    if sub is Any:
        return False
    a, b = typing.get_origin(sub) or sub, typing.get_origin(sup) or sup
    return issubclass(a, b) if isinstance(a, type) and isinstance(b, type) else a == b


class _Registry:
    """The functional forms registered on a DataPipe family (`dp.<name>(...)`)."""

    functions: dict[str, Callable]

    def __getattr__(self, attribute_name: str):
        functions = type(self)._functions()
        if attribute_name in functions:
            function = functools.partial(functions[attribute_name], self)
            functools.update_wrapper(wrapper=function, wrapped=functions[attribute_name].func, assigned=("__doc__",))
            return function
        raise AttributeError(f"'{self.__class__.__name__}' object has no attribute '{attribute_name}")

    @classmethod
    def register_function(cls, function_name: str, function: Callable) -> None:
        """Register `function(self, ...)` as the functional form `function_name`.

        Args:
            function_name: the attribute name.
            function: called with the DataPipe first."""
        cls._functions()[function_name] = function

    @classmethod
    def register_datapipe_as_function(cls, function_name: str, cls_to_register: type,
                                      enable_df_api_tracing: bool = False) -> None:
        """Register the DataPipe class `cls_to_register` as the functional form `function_name`:
        `dp.function_name(*args)` is `cls_to_register(dp, *args)`.

        Args:
            function_name: the attribute name.
            cls_to_register: a DataPipe class taking the source DataPipe first.
            enable_df_api_tracing: accepted as PyTorch's.

        Raises:
            Exception: the name is taken (PyTorch's exception type)."""
        functions = cls._functions()
        if function_name in functions:
            raise Exception(f"Unable to add DataPipe function name {function_name} as it is already taken")  # noqa: TRY002

        def class_function(cls_, source_dp, *args, **kwargs):
            return cls_(source_dp, *args, **kwargs)
        functions[function_name] = functools.partial(class_function, cls_to_register)

    def __dir__(self):
        return list(super().__dir__()) + list(type(self)._functions())

    def __repr__(self) -> str:
        return str(self.__class__.__qualname__)

    def __str__(self) -> str:
        return str(self.__class__.__qualname__)

    @property
    def type(self) -> Any:
        """The element type the DataPipe declares (IterDataPipe[int] -> int; Any by default)."""
        return _type_of(type(self))


class IterDataPipe(_Registry, IterableDataset, Generic[T_co]):
    """An iterable-style DataPipe; functional forms registered with @functional_datapipe
    chain as methods."""

    _registry: dict[str, Callable] = {}

    @classmethod
    def _functions(cls) -> dict:
        return IterDataPipe._registry

    def __getattr__(self, attribute_name: str):
        return _Registry.__getattr__(self, attribute_name)


class MapDataPipe(_Registry, Dataset, Generic[T_co]):
    """A map-style DataPipe (__getitem__, __len__); functional forms as IterDataPipe's."""

    _registry: dict[str, Callable] = {}

    @classmethod
    def _functions(cls) -> dict:
        return MapDataPipe._registry

    def __getattr__(self, attribute_name: str):
        return _Registry.__getattr__(self, attribute_name)


class DFIterDataPipe(IterDataPipe):
    """An IterDataPipe of data frames (PyTorch's marker class)."""

    def _is_dfpipe(self) -> bool:
        return True


class DataChunk(list, Generic[_T]):
    """A list of items a DataPipe yields as one element (a batch).

    Args:
        items: the items."""

    def __init__(self, items: Iterable) -> None:
        items = list(items)
        super().__init__(items)
        self.items = items

    def as_str(self, indent: str = "") -> str:
        """indent + "[" + the items joined by ", " + "]"."""
        return indent + "[" + ", ".join(str(i) for i in iter(self)) + "]"

    def __iter__(self) -> Iterator:
        yield from super().__iter__()

    def raw_iterator(self) -> Iterator:
        """The items as given."""
        yield from self.items


class functional_datapipe:
    """Class decorator: register a DataPipe class as the functional form `name` of its family
    (`dp.name(*args)` builds `cls(dp, *args)`).

    Args:
        name: the functional form's name.
        enable_df_api_tracing: accepted as PyTorch's."""

    name: str

    def __init__(self, name: str, enable_df_api_tracing: bool = False) -> None:
        self.name, self.enable_df_api_tracing = name, enable_df_api_tracing

    def __call__(self, cls):
        if isinstance(cls, type) and issubclass(cls, IterDataPipe):
            IterDataPipe.register_datapipe_as_function(self.name, cls, self.enable_df_api_tracing)
        elif isinstance(cls, type) and issubclass(cls, MapDataPipe):
            MapDataPipe.register_datapipe_as_function(self.name, cls)
        else:
            raise FgradTypeError("`functional_datapipe` can only decorate IterDataPipe or MapDataPipe classes, "
                                 f"got {cls!r}")
        return cls


class guaranteed_datapipes_determinism:
    """Within this block (or from its creation until exit), DataPipes marked
    non_deterministic refuse to be created."""

    prev: bool

    def __init__(self) -> None:
        global _determinism
        self.prev, _determinism = _determinism, True

    def __enter__(self) -> None:
        pass

    def __exit__(self, exc_type: Any, exc_value: Any, traceback: Any) -> None:
        global _determinism
        _determinism = self.prev


class non_deterministic:
    """Mark an IterDataPipe class as non-deterministic: the decorated name then builds the
    class, refusing under guaranteed_datapipes_determinism. Given a function of the
    constructor's arguments returning a bool instead, decorates a class that is
    non-deterministic when the function returns True.

    Args:
        arg: an IterDataPipe class, or a function (*args, **kwargs) -> bool.

    Raises:
        TypeError: a class that is not an IterDataPipe, something else that is not callable,
            or (when building) a refusal under guaranteed_datapipes_determinism."""

    cls: type | None = None

    def __init__(self, arg) -> None:
        if isinstance(arg, type):
            if not issubclass(arg, IterDataPipe):
                raise FgradTypeError(f"Only `IterDataPipe` can be decorated with `non_deterministic`, but "
                                     f"{arg.__name__} is found")
            self.cls = arg
        elif callable(arg):
            self.deterministic_fn = arg
        else:
            raise FgradTypeError(f"{arg} can not be decorated by non_deterministic")

    def __call__(self, *args, **kwargs):
        if self.cls is not None:
            if _determinism:
                raise FgradTypeError(f"{self.cls.__name__} is non-deterministic, but you set "
                                     "'guaranteed_datapipes_determinism'. You can turn off determinism for this "
                                     "DataPipe if that is acceptable for your application")
            return self.cls(*args, **kwargs)
        if not (isinstance(args[0], type) and issubclass(args[0], IterDataPipe)):
            raise FgradTypeError(f"Only `IterDataPipe` can be decorated, but {args[0].__name__} is found")
        self.cls = args[0]
        return self.deterministic_wrapper_fn

    def deterministic_wrapper_fn(self, *args, **kwargs):
        """Build the class after asking deterministic_fn whether these arguments make it
        non-deterministic."""
        res = self.deterministic_fn(*args, **kwargs)
        if not isinstance(res, bool):
            raise FgradTypeError("deterministic_fn of `non_deterministic` decorator is required to return a boolean "
                                 f"value, but {type(res)} is found")
        if _determinism and res:
            raise FgradTypeError(f"{self.cls.__name__} is non-deterministic with the inputs, but you set "
                                 "'guaranteed_datapipes_determinism'. You can turn off determinism for this "
                                 "DataPipe if that is acceptable for your application")
        return self.cls(*args, **kwargs)


def argument_validation(f: Callable) -> Callable:
    """Decorator: arguments annotated with a DataPipe type must be DataPipes of a compatible
    element type (IterDataPipe[int] accepts an IterDataPipe whose type is int or a subclass).

    Args:
        f: the function (typically a DataPipe's __init__).

    Returns:
        The checking wrapper.

    Raises:
        TypeError: at call time, an argument that does not fit its annotation."""
    signature = inspect.signature(f)
    hints = typing.get_type_hints(f)

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        for name, value in bound.arguments.items():
            hint = hints.get(name)
            origin = typing.get_origin(hint) or hint
            if not (isinstance(origin, type) and issubclass(origin, (IterDataPipe, MapDataPipe))):
                continue
            if not isinstance(value, origin):
                raise FgradTypeError(f"Expected argument '{name}' as a {origin.__name__}, but found {type(value)}")
            want = typing.get_args(hint)[0] if typing.get_args(hint) else Any
            if not _is_subtype(value.type, want):
                raise FgradTypeError(f"Expected type of argument '{name}' as a subtype of hint {want}, but found "
                                     f"{value.type}")
        return f(*args, **kwargs)
    return wrapper


class runtime_validation_disabled:
    """Within this block, runtime_validation checks nothing."""

    prev: bool

    def __init__(self) -> None:
        global _runtime_validation_enabled
        self.prev, _runtime_validation_enabled = _runtime_validation_enabled, False

    def __enter__(self) -> None:
        pass

    def __exit__(self, exc_type: Any, exc_value: Any, traceback: Any) -> None:
        global _runtime_validation_enabled
        _runtime_validation_enabled = self.prev


def runtime_validation(f: Callable) -> Callable:
    """Decorator of an IterDataPipe's __iter__: every yielded element must be an instance of
    the DataPipe's type (outside runtime_validation_disabled).

    Args:
        f: the __iter__ method.

    Returns:
        The checking generator method.

    Raises:
        TypeError: f is not named __iter__.
        RuntimeError: at iteration, an element of another type."""
    if f.__name__ != "__iter__":
        raise FgradTypeError(f"Can not decorate function {f.__name__} with 'runtime_validation'")

    @functools.wraps(f)
    def wrapper(self):
        if not _runtime_validation_enabled:
            yield from f(self)
            return
        for d in f(self):
            if not _is_instance(d, self.type):
                raise FgradRuntimeError(f"Expected an instance as subtype of {self.type}, but found {d}({type(d)})")
            yield d
    return wrapper
