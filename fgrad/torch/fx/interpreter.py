"""torch.fx's Interpreter (run a Graph node by node) and Transformer (rebuild it)."""
from __future__ import annotations

from typing import Any, Iterator

from .. import nn
from .graph import Graph
from .graph_module import GraphModule, _fetch
from .node import Node, map_aggregate, map_arg
from .proxy import Proxy, TracerBase
import inspect
from ...core.errors import FgradRuntimeError


class Interpreter:
    """Runs a GraphModule's graph one node at a time: `run_node` dispatches to the method
    named after the node's op (placeholder, get_attr, call_function, call_method,
    call_module, output), each of which a subclass may override."""

    def __init__(self, module: nn.Module, garbage_collect_values: bool = True, graph: Graph | None = None) -> None:
        self.module = module
        self.graph = graph if graph is not None else module.graph
        self.env: dict[Node, Any] = {}
        self.garbage_collect_values = garbage_collect_values
        self.args_iter: Iterator = iter(())
        self.user_to_last_uses: dict[Node, list[Node]] = {}
        last: dict[Node, Node] = {}
        for node in self.graph.nodes:
            for inp in node.all_input_nodes:
                last[inp] = node
        for n, user in last.items():
            self.user_to_last_uses.setdefault(user, []).append(n)

    def run(self, *args, initial_env: dict | None = None, enable_io_processing: bool = True) -> Any:
        """Run the graph on `args` (the placeholders' values, in order).

        Args:
            *args: the inputs.
            initial_env: values already known for some nodes (they are not run).
            enable_io_processing: kept for torch's signature.
        Returns:
            the output node's value."""
        self.env = dict(initial_env or {})
        self.args_iter = iter(args)
        for node in self.graph.nodes:
            if node in self.env:
                continue
            self.env[node] = self.run_node(node)
            if self.garbage_collect_values:
                for dead in self.user_to_last_uses.get(node, ()):
                    self.env.pop(dead, None)
            if node.op == "output":
                return self.env[node]
        return None

    def run_node(self, n: Node) -> Any:
        """Run one node: its arguments fetched from the environment, then `self.<n.op>`."""
        args, kwargs = self.fetch_args_kwargs_from_env(n)
        return getattr(self, n.op)(n.target, args, kwargs)

    def placeholder(self, target: str, args: tuple, kwargs: dict) -> Any:
        """The next input (or the placeholder's default)."""
        try:
            return next(self.args_iter)
        except StopIteration:
            if args:
                return args[0]
            raise FgradRuntimeError(f"Expected positional argument for parameter {target}, "
                               "but one was not passed in!") from None

    def get_attr(self, target: str, args: tuple, kwargs: dict) -> Any:
        """The module attribute at the path `target`."""
        return self.fetch_attr(target)

    def call_function(self, target, args: tuple, kwargs: dict) -> Any:
        """`target(*args, **kwargs)`."""
        return target(*args, **kwargs)

    def call_method(self, target: str, args: tuple, kwargs: dict) -> Any:
        """`args[0].target(*args[1:], **kwargs)`."""
        self_obj, *rest = args
        return getattr(self_obj, target)(*rest, **kwargs)

    def call_module(self, target: str, args: tuple, kwargs: dict) -> Any:
        """The submodule at the path `target`, called."""
        return self.fetch_attr(target)(*args, **kwargs)

    def output(self, target: str, args: tuple, kwargs: dict) -> Any:
        """The graph's result."""
        return args[0]

    def fetch_attr(self, target: str) -> Any:
        """The attribute of the module at the dotted path `target`."""
        return _fetch(self.module, target)

    def fetch_args_kwargs_from_env(self, n: Node) -> tuple[tuple, dict]:
        """`n`'s args and kwargs with each input node replaced by its value."""
        return self.map_nodes_to_values(n.args, n), self.map_nodes_to_values(n.kwargs, n)

    def map_nodes_to_values(self, args: Any, n: Node) -> Any:
        """`args` with every Node replaced by its value in the environment."""
        def load(x: Node):
            if x not in self.env:
                raise FgradRuntimeError(f"Node {n} referenced nonexistent value {x}! Run Graph.lint() "
                                   "to diagnose such issues")
            return self.env[x]
        return map_arg(args, load)


class _TransformerTracer(TracerBase):
    def __init__(self, graph: Graph, root: nn.Module) -> None:
        self.graph = graph
        self.root = root


class Transformer(Interpreter):
    """Builds a new GraphModule by running the graph on Proxies: each overridden method may
    return something else than the node it was given (`transform()` returns the result)."""

    def __init__(self, module: GraphModule) -> None:
        super().__init__(module)
        self.new_graph = Graph()
        self.tracer = _TransformerTracer(self.new_graph, module)

    def placeholder(self, target: str, args: tuple, kwargs: dict) -> Proxy:
        """A placeholder of the new graph (keeping its default)."""
        default = args[0] if args else inspect.Signature.empty
        return Proxy(self.new_graph.placeholder(target, default_value=default), self.tracer)

    def get_attr(self, target: str, args: tuple, kwargs: dict) -> Proxy:
        """A get_attr node of the new graph."""
        return self.tracer.create_proxy("get_attr", target, args, kwargs)

    def call_module(self, target: str, args: tuple, kwargs: dict) -> Proxy:
        """A call_module node of the new graph."""
        return self.tracer.create_proxy("call_module", target, args, kwargs)

    def call_function(self, target, args: tuple, kwargs: dict) -> Proxy:
        """A call_function node of the new graph."""
        return self.tracer.create_proxy("call_function", target, args, kwargs)

    def call_method(self, target: str, args: tuple, kwargs: dict) -> Proxy:
        """A call_method node of the new graph."""
        return self.tracer.create_proxy("call_method", target, args, kwargs)

    def transform(self) -> GraphModule:
        """Run the transformation.

        Returns:
            a GraphModule of the new graph, holding the original module's attributes."""
        result = self.run(enable_io_processing=False)
        self.new_graph.output(map_aggregate(result, lambda x: x.node if isinstance(x, Proxy) else x))
        return GraphModule(self.module, self.new_graph)
