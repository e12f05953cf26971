"""Symbolic tracing: run a module's forward on Proxies and keep the Graph it records."""
from __future__ import annotations

import builtins
import inspect
import math
import sys
import types
from typing import Any, Callable

from .. import nn
from .._tensor import Tensor
from ..nn.parameter import Parameter
from . import _capture
from .graph import Graph
from .proxy import Proxy, TracerBase
from ...core.errors import FgradNotImplementedError

# (globals dict, name) of the functions `wrap` registered: patched while tracing
_wrapped: list[tuple[dict, str]] = []


def wrap(fn_or_name: Callable | str):
    """Record calls of a module-level function as one call_function node instead of tracing
    into it (torch.fx.wrap). Call it at module scope, with the function or its name.

    Args:
        fn_or_name: the function (or its name) in the calling module's globals.
    Returns:
        `fn_or_name`, unchanged (so it works as a decorator)."""
    name = fn_or_name if isinstance(fn_or_name, str) else getattr(fn_or_name, "__name__", None)
    if not name or name == "<lambda>":
        raise FgradNotImplementedError(f"wrap needs a named module-level function or its name, got {fn_or_name!r}")
    frame = sys._getframe(1)
    if frame.f_code.co_name != "<module>":
        raise FgradNotImplementedError("wrap must be called at the top level of a module")
    if not any(g is frame.f_globals and n == name for g, n in _wrapped):
        _wrapped.append((frame.f_globals, name))
    return fn_or_name


def _assert(condition, message: str) -> None:
    """torch._assert: raise AssertionError(message) unless `condition` holds (a traced guard)."""
    if not bool(condition):
        raise AssertionError(message)


def _assert_is_none(value, msg: str) -> None:
    """The guard of a concrete argument specialized to None."""
    if value is not None:
        raise AssertionError(msg)


_capture.name_target(_assert, "torch.fx._symbolic_trace._assert")
_capture.name_target(_assert_is_none, "torch.fx._symbolic_trace._assert_is_none")
_GUARDED = (bool, int, float, complex, str)


class Tracer(TracerBase):
    """Turns a Module's forward (or a function) into a Graph by running it on Proxies.

    Standard fgrad.torch.nn modules are leaves (one call_module node); other modules are traced
    through. Parameters and buffers read in a traced forward become get_attr nodes; other
    Tensors met as arguments become `_tensor_constant<i>` attributes of the root."""

    def __init__(self, autowrap_modules: tuple = (math,), autowrap_functions: tuple = (),
                 param_shapes_constant: bool = False) -> None:
        self.autowrap_modules = tuple(autowrap_modules)
        self.autowrap_functions = tuple(autowrap_functions)
        self.graph = Graph()
        self.root = None
        self.tensor_attrs: dict[int, str] = {}

    # --- overridable policy ------------------------------------------------------------------
    def is_leaf_module(self, m: nn.Module, module_qualified_name: str) -> bool:
        """Whether `m` is recorded as one call_module node (standard torch.nn modules) rather
        than traced through."""
        mod = type(m).__module__ or ""
        return (mod.startswith("fgrad.torch.nn") or mod.startswith("torch.nn")) and not isinstance(m, nn.Sequential)

    def path_of_module(self, mod: nn.Module) -> str:
        """The dotted path of submodule `mod` in the root.

        Raises:
            NameError: when `mod` is not a submodule of the root."""
        for name, m in self.root.named_modules():
            if m is mod:
                return name
        raise NameError("module is not installed as a submodule")

    def call_module(self, m: nn.Module, forward: Callable, args: tuple, kwargs: dict) -> Any:
        """A submodule call met while tracing: one call_module node for a leaf, else its
        forward traced inline."""
        path = self.path_of_module(m)
        if not self.is_leaf_module(m, path):
            return forward(*args, **kwargs)
        return self.create_proxy("call_module", path, args, kwargs)

    def getattr(self, attr: str, attr_val: Any, parameter_proxy_cache: dict) -> Any:
        """What a traced forward sees for a module attribute: a get_attr Proxy for a parameter
        of the root (one per parameter and trace), the value otherwise (a buffer becomes a
        get_attr node where it is used, as in torch.fx)."""
        if isinstance(attr_val, Parameter):
            key = id(attr_val)
            if key in parameter_proxy_cache:
                return parameter_proxy_cache[key]
            name = self._tensor_path(attr_val, create=False)
            if name is not None:
                proxy = self.create_proxy("get_attr", name, (), {})
                parameter_proxy_cache[key] = proxy
                return proxy
        return attr_val

    def _tensor_path(self, t: Tensor, create: bool) -> str | None:
        if id(t) in self.tensor_attrs:
            return self.tensor_attrs[id(t)]
        for name, p in self.root.named_parameters():
            if p is t:
                return name
        for name, b in self.root.named_buffers():
            if b is t:
                return name
        if not create:
            return None
        i = 0
        while hasattr(self.root, f"_tensor_constant{i}"):
            i += 1
        name = f"_tensor_constant{i}"
        setattr(self.root, name, t)
        self.tensor_attrs[id(t)] = name
        return name

    def create_arg(self, a: Any) -> Any:
        """`a` as a node argument: Proxies become nodes; a Tensor becomes a get_attr node (its
        parameter/buffer path, or a new `_tensor_constant<i>` attribute of the root)."""
        def leaf(x):
            if isinstance(x, Proxy):
                return x.node
            if isinstance(x, Tensor) and self.root is not None:
                return self.create_node("get_attr", self._tensor_path(x, create=True), (), {})
            if isinstance(x, nn.Module):
                raise FgradNotImplementedError(f"argument of type {type(x).__name__} (a Module) cannot be "
                                          "a node argument; call it instead")
            return x
        from .node import map_aggregate  # (imported on use: a cycle within fgrad.torch)
        return map_aggregate(a, leaf)

    # --- tracing -----------------------------------------------------------------------------
    def trace(self, root: nn.Module | Callable, concrete_args: dict | None = None) -> Graph:
        """Trace `root`'s forward (or the function `root`) into a new Graph.

        Args:
            root: a Module or a function.
            concrete_args: inputs given values instead of placeholders (by parameter name).
        Returns:
            the Graph (also `self.graph`; `self.root` is the module traced)."""
        if isinstance(root, nn.Module):
            self.root = root
            fn = type(root).forward
            bound = (root,)
        else:
            self.root = nn.Module()
            fn = root
            bound = ()
        self.graph = Graph()
        # Tensors kept as plain module attributes (not parameters or buffers) are read by name
        self.tensor_attrs = {}
        for prefix, m in self.root.named_modules():
            for k, v in vars(m).items():
                if isinstance(v, Tensor) and not k.startswith("__"):
                    self.tensor_attrs.setdefault(id(v), f"{prefix}.{k}" if prefix else k)
        concrete_args = dict(concrete_args or {})
        sig = inspect.signature(fn)
        params = list(sig.parameters.values())[len(bound):]
        args = []
        for p in params:
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise FgradNotImplementedError(f"tracing {fn.__qualname__}: *args/**kwargs parameters "
                                          f"({p.name}) are not supported; give named parameters")
            default = () if p.default is inspect.Parameter.empty else (p.default,)
            if p.name in concrete_args:
                # torch.fx's rule: the input stays (renamed, with its default), guarded to have
                # the traced value
                value = concrete_args[p.name]
                ph = self.create_proxy("placeholder", f"{p.name}_1", default, {}, name=f"{p.name}_1")
                msg = f"{p.name} has been specialized to have value {value} but got another value"
                if value is None:
                    self.create_proxy("call_function", _assert_is_none, (ph, msg), {})
                elif type(value) in _GUARDED:
                    self.create_proxy("call_function", _assert, (ph == value, msg), {})
                args.append(value)
                continue
            args.append(self.create_proxy("placeholder", p.name, default, {}, name=p.name))
        cache: dict = {}
        tracer = self
        orig_call, orig_getattr = nn.Module.__call__, nn.Module.__getattr__

        def module_call(mod, *a, **k):
            if any(isinstance(x, Proxy) for x in (*a, *k.values())) or _capture._proxy_in(a, k):
                return tracer.call_module(mod, lambda *a2, **k2: orig_call(mod, *a2, **k2), a, k)
            return orig_call(mod, *a, **k)

        def module_getattr(mod, name):
            return tracer.getattr(name, orig_getattr(mod, name), cache)

        # (a wrapped builtin, `wrap("len")`, is shadowed in the module's globals while tracing)
        patched = [(g, n, g[n] if n in g else getattr(builtins, n)) for g, n in _wrapped
                   if n in g or hasattr(builtins, n)]
        absent = [(g, n) for g, n in _wrapped if n not in g and hasattr(builtins, n)]
        # autowrap (math by default): the modules' functions, and the traced function's global
        # names bound to them (`from math import sqrt`), record calls that receive a Proxy
        fn_globals = getattr(fn, "__globals__", {})
        auto = {id(f_) for f_ in self.autowrap_functions}
        for mod in self.autowrap_modules:
            for k, v in vars(mod).items():
                if not k.startswith("_") and isinstance(v, (types.BuiltinFunctionType, types.FunctionType)):
                    patched.append((vars(mod), k, v))
                    auto.add(id(v))
        for k, v in list(fn_globals.items()):
            if id(v) in auto:
                patched.append((fn_globals, k, v))
        # torch functions bound by name (`from torch import relu`) in the traced code's modules
        stand_ins = _capture.stand_ins()
        scopes = {id(fn_globals): fn_globals}
        for _, m in self.root.named_modules():
            g = getattr(type(m).forward, "__globals__", None)
            if g is not None and not g.get("__name__", "").startswith("fgrad."):
                scopes.setdefault(id(g), g)
        by_name = []
        for g in scopes.values():
            for k, v in g.items():
                if not k.startswith("__") and id(v) in stand_ins:
                    by_name.append((g, k, v))
        _capture.acquire()
        nn.Module.__call__ = module_call
        nn.Module.__getattr__ = module_getattr
        for g, n, orig in patched:
            _capture._wrapped_ids.add(id(orig))
            g[n] = _capture.capturing(orig)
        for g, n, orig in by_name:
            g[n] = stand_ins[id(orig)]
        try:
            result = fn(*bound, *args)
            self.create_node("output", "output", (self.create_arg(result),), {}, name="output")
        finally:
            nn.Module.__call__ = orig_call
            nn.Module.__getattr__ = orig_getattr
            for g, n, orig in patched + by_name:
                g[n] = orig
            for g, n in absent:
                g.pop(n, None)
            del args, cache
            _capture.release()
        return self.graph


def symbolic_trace(root: nn.Module | Callable, concrete_args: dict | None = None):
    """Trace `root` and wrap the Graph in a GraphModule (torch.fx.symbolic_trace).

    Args:
        root: a Module or a function.
        concrete_args: inputs given values instead of placeholders.
    Returns:
        a GraphModule running the traced graph."""
    from .graph_module import GraphModule  # (imported on use: a cycle within fgrad.torch)
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = type(root).__name__ if isinstance(root, nn.Module) else root.__name__
    return GraphModule(tracer.root, graph, name)
