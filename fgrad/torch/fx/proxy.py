"""torch.fx's Proxy: a stand-in value that records what is done to it as Graph nodes."""
from __future__ import annotations

import builtins
import operator
from typing import Any

from . import _capture
from .graph import Graph
from .node import Node, map_aggregate
from ...core.errors import FgradRuntimeError
from .._errors import TraceError  # noqa: F401 (torch.fx.proxy.TraceError)



class TracerBase:
    """What a Proxy needs from its tracer: a graph and the node/proxy factories."""

    graph: Graph
    root: Any = None

    def create_node(self, kind: str, target: Any, args: tuple, kwargs: dict,
                    name: str | None = None, type_expr: Any = None) -> Node:
        """Add a node to `self.graph` (override to tag or redirect nodes)."""
        return self.graph.create_node(kind, target, args, kwargs, name, type_expr)

    def proxy(self, node: Node) -> "Proxy":
        """The Proxy standing for `node`."""
        return Proxy(node, self)

    def create_proxy(self, kind: str, target: Any, args: tuple, kwargs: dict,
                     name: str | None = None, type_expr: Any = None, proxy_factory_fn=None) -> "Proxy":
        """Record one operation: its arguments through `create_arg`, a node, its Proxy.

        Args:
            kind: the node op.
            target: the node target.
            args, kwargs: the operation's arguments (Proxies among them).
            name: the wanted node name.
            type_expr: an optional type annotation.
            proxy_factory_fn: makes the Proxy from the node (default: `self.proxy`).
        Returns:
            the Proxy of the new node."""
        args_ = self.create_arg(tuple(args))
        kwargs_ = self.create_arg(dict(kwargs))
        node = self.create_node(kind, target, args_, kwargs_, name, type_expr)
        return self.proxy(node) if proxy_factory_fn is None else proxy_factory_fn(node)

    def create_arg(self, a: Any) -> Any:
        """`a` as a node argument: Proxies become their nodes, containers are rebuilt."""
        def leaf(x):
            if isinstance(x, Proxy):
                return x.node
            return x
        return map_aggregate(a, leaf)

    def iter(self, obj: "Proxy"):
        raise TraceError(
            "Proxy object cannot be iterated. This can be attempted when the Proxy is used in a loop "
            "or as a *args or **kwargs function argument. See the torch.fx docs on pytorch.org for a "
            "more detailed explanation of what types of control flow can be traced, and check out the "
            "Proxy docstring for help troubleshooting Proxy iteration errors")

    def to_bool(self, obj: "Proxy") -> bool:
        raise TraceError("symbolically traced variables cannot be used as inputs to control flow")

    def keys(self, obj: "Proxy"):
        return Attribute(obj, "keys")()


class GraphAppendingTracer(TracerBase):
    """A tracer that appends to an existing `graph` (for Proxies built by hand)."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.root = None


class Proxy:
    """A symbolic value: operators, method calls, attribute reads and torch functions applied
    to it become nodes of its tracer's graph. While any Proxy is alive, fgrad.torch's
    functions record calls that receive one (see the package doc)."""

    def __init__(self, node: Node, tracer: TracerBase | None = None) -> None:
        if tracer is None:
            tracer = GraphAppendingTracer(node.graph)
        self.__dict__["tracer"] = tracer
        self.__dict__["node"] = node
        self.__dict__["_held"] = True
        _capture.acquire()

    def __del__(self) -> None:
        if self.__dict__.get("_held"):
            self.__dict__["_held"] = False
            if _capture is not None:  # (None once the interpreter is tearing modules down)
                _capture.release()

    def __repr__(self) -> str:
        return f"Proxy({self.node.name})"

    def __getattr__(self, k: str) -> "Attribute":
        if k.startswith("__") and k.endswith("__"):
            raise AttributeError(k)
        return Attribute(self, k)

    def __call__(self, *args, **kwargs) -> "Proxy":
        return self.tracer.create_proxy("call_method", "__call__", (self,) + args, kwargs)

    def __iter__(self):
        return self.tracer.iter(self)

    def __bool__(self) -> bool:
        return self.tracer.to_bool(self)

    def __len__(self) -> int:
        raise FgradRuntimeError("'len' is not supported in symbolic tracing by default. If you want this call "
                           "to be recorded, please call torch.fx.wrap('len') at module scope")

    def keys(self):
        return self.tracer.keys(self)

    def __hash__(self) -> int:
        return id(self)

    def __setitem__(self, key, value) -> None:
        self.tracer.create_proxy("call_function", operator.setitem, (self, key, value), {})

    def __index__(self):
        raise TraceError("symbolically traced variables cannot be used as an index (__index__)")


def _binary(op):
    def f(self, other):
        return self.tracer.create_proxy("call_function", op, (self, other), {})

    def r(self, other):
        return self.tracer.create_proxy("call_function", op, (other, self), {})
    return f, r


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or",
              "xor", "lshift", "rshift"):
    _op = getattr(operator, _name + "_" if _name in ("and", "or") else _name)
    _f, _r = _binary(_op)
    setattr(Proxy, f"__{_name}__", _f)
    setattr(Proxy, f"__r{_name}__", _r)
for _name in ("eq", "ne", "lt", "le", "gt", "ge", "getitem"):
    setattr(Proxy, f"__{_name}__", _binary(getattr(operator, _name))[0])
for _name in ("neg", "pos", "invert", "abs"):
    def _unary(self, _op=getattr(operator, _name)):
        return self.tracer.create_proxy("call_function", _op, (self,), {})
    setattr(Proxy, f"__{_name}__", _unary)
Proxy.__hash__ = lambda self: id(self)


class Attribute(Proxy):
    """`proxy.attr`: a call_method node when called, a getattr node when used as a value."""

    def __init__(self, root: Proxy, attr: str) -> None:
        self.__dict__["root"] = root
        self.__dict__["attr"] = attr
        self.__dict__["tracer"] = root.tracer
        self.__dict__["_node"] = None
        self.__dict__["_held"] = True
        _capture.acquire()

    @property
    def node(self) -> Node:
        if self._node is None:
            self.__dict__["_node"] = self.tracer.create_proxy(
                "call_function", builtins.getattr, (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args, **kwargs) -> Proxy:
        return self.tracer.create_proxy("call_method", self.attr, (self.root,) + args, kwargs)
