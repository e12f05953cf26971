"""torch.fx's Node: one operation of a Graph, and the helpers that map over node arguments."""
from __future__ import annotations

import builtins
import operator
from typing import Any, Callable, Union
from ...core.errors import FgradValueError

_OPS = ("placeholder", "get_attr", "call_function", "call_method", "call_module", "output")


Target = Union[Callable[..., Any], str]
Argument = Any


def map_aggregate(a: Any, fn: Callable[[Any], Any]) -> Any:
    """`fn` applied to every leaf of `a`, rebuilding tuples (namedtuples too), lists, dicts
    and slices around the results.

    Args:
        a: an argument structure.
        fn: the function for each leaf.
    Returns:
        the structure of `a` with its leaves replaced."""
    t = type(a)
    if t is tuple or (isinstance(a, tuple) and hasattr(a, "_fields")):
        vals = [map_aggregate(e, fn) for e in a]
        return t(*vals) if t is not tuple else tuple(vals)
    if isinstance(a, list):
        return [map_aggregate(e, fn) for e in a]
    if isinstance(a, dict):
        return {k: map_aggregate(v, fn) for k, v in a.items()}
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn), map_aggregate(a.step, fn))
    return fn(a)


def map_arg(a: Any, fn: Callable[["Node"], Any]) -> Any:
    """`fn` applied to every Node inside the argument structure `a` (other leaves kept).

    Args:
        a: an argument structure (a Node's args or kwargs).
        fn: the function for each Node.
    Returns:
        the structure of `a` with its Nodes replaced."""
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


_INFIX = {
    operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/",
    operator.floordiv: "//", operator.mod: "%", operator.pow: "**", operator.matmul: "@",
    operator.and_: "&", operator.or_: "|", operator.xor: "^", operator.lshift: "<<",
    operator.rshift: ">>", operator.eq: "==", operator.ne: "!=", operator.lt: "<",
    operator.le: "<=", operator.gt: ">", operator.ge: ">=",
}
_PREFIX = {operator.neg: "-", operator.pos: "+", operator.invert: "~"}


def _qualified_name(target: Callable) -> str:
    """How torch.fx names a function target in printouts: `operator.add`,
    `torch.nn.functional.relu` (facade functions by the namespace they are reached through),
    `builtins.getattr`, else module.qualname."""
    from . import _capture  # (imported on use: a cycle within fgrad.torch)
    path = _capture.path_of(target)
    if path is not None:
        return path
    if getattr(builtins, getattr(target, "__name__", ""), None) is target:
        return f"builtins.{target.__name__}"
    module = getattr(target, "__module__", None) or ""
    if module == "_operator":
        module = "operator"
    name = getattr(target, "__qualname__", None) or getattr(target, "__name__", repr(target))
    return f"{module}.{name}" if module else name


def _format_arg(a: Any) -> str:
    if isinstance(a, Node):
        return f"%{a.name}"
    if isinstance(a, tuple) and not hasattr(a, "_fields"):
        inner = ", ".join(_format_arg(e) for e in a)
        return f"({inner},)" if len(a) == 1 else f"({inner})"
    if isinstance(a, list):
        return "[" + ", ".join(_format_arg(e) for e in a) + "]"
    if isinstance(a, dict):
        return "{" + ", ".join(f"{k}: {_format_arg(v)}" for k, v in a.items()) + "}"
    return str(a)


class Node:
    """One operation of a Graph.

    `op` is one of placeholder (a forward input), get_attr (a parameter, buffer or attribute
    of the module), call_function (`target(*args, **kwargs)`), call_method
    (`args[0].target(*args[1:], **kwargs)`), call_module (the submodule at the path `target`
    called) and output (what forward returns, `args[0]`). Nodes inside `args`/`kwargs` are
    its inputs; `users` holds the nodes that read it."""

    def __init__(self, graph, name: str, op: str, target: Any, args: tuple, kwargs: dict,
                 return_type: Any = None) -> None:
        if op not in _OPS:
            raise FgradValueError(f"Node op must be one of {_OPS}, got {op!r}")
        if op == "call_function" and not callable(target):
            raise FgradValueError(f"call_function node {name!r}: target {target!r} is not callable")
        if op in ("get_attr", "call_method", "call_module", "placeholder") and not isinstance(target, str):
            raise FgradValueError(f"{op} node {name!r}: target must be a string, got {type(target).__name__}")
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self.type = return_type
        self.users: dict[Node, None] = {}
        self.meta: dict[str, Any] = {}
        self._input_nodes: dict[Node, None] = {}
        self._args: tuple = ()
        self._kwargs: dict = {}
        self._prev = self._next = self
        self._erased = False
        self.stack_trace = None
        self._update_args_kwargs(args, kwargs)

    # --- linked list -----------------------------------------------------------------------
    @property
    def next(self) -> "Node":
        """The node after this one (the graph's root sentinel after the last)."""
        return self._next

    @property
    def prev(self) -> "Node":
        """The node before this one."""
        return self._prev

    def _remove_from_list(self) -> None:
        p, n = self._prev, self._next
        p._next, n._prev = n, p

    def prepend(self, x: "Node") -> None:
        """Move (or insert) node `x` to just before this node.

        Args:
            x: a node of the same graph."""
        if x is self:
            return
        x._remove_from_list()
        p = self._prev
        p._next, x._prev = x, p
        x._next, self._prev = self, x

    def append(self, x: "Node") -> None:
        """Move (or insert) node `x` to just after this node.

        Args:
            x: a node of the same graph."""
        self._next.prepend(x)

    # --- arguments -------------------------------------------------------------------------
    @property
    def args(self) -> tuple:
        """The positional arguments (Nodes among them are inputs)."""
        return self._args

    @args.setter
    def args(self, a: tuple) -> None:
        self._update_args_kwargs(tuple(a), self._kwargs)

    @property
    def kwargs(self) -> dict:
        """The keyword arguments."""
        return self._kwargs

    @kwargs.setter
    def kwargs(self, k: dict) -> None:
        self._update_args_kwargs(self._args, dict(k))

    def _update_args_kwargs(self, args: tuple, kwargs: dict) -> None:
        for old in self._input_nodes:
            old.users.pop(self, None)
        self._input_nodes = {}
        collect = lambda n: self._input_nodes.setdefault(n) or n  # noqa: E731
        self._args = map_arg(tuple(args), collect)
        self._kwargs = map_arg(dict(kwargs), collect)
        for n in self._input_nodes:
            n.users.setdefault(self)

    @property
    def all_input_nodes(self) -> list["Node"]:
        """The distinct Nodes in args and kwargs, in order of first appearance."""
        return list(self._input_nodes)

    def update_arg(self, idx: int, arg: Any) -> None:
        """Set positional argument `idx` to `arg`."""
        a = list(self._args)
        a[idx] = arg
        self.args = tuple(a)

    def update_kwarg(self, key: str, arg: Any) -> None:
        """Set keyword argument `key` to `arg`."""
        self.kwargs = {**self._kwargs, key: arg}

    def replace_all_uses_with(self, replace_with: "Node",
                              delete_user_cb: Callable[["Node"], bool] = lambda user: True,
                              *, propagate_meta: bool = False) -> list["Node"]:
        """Make every user of this node read `replace_with` instead.

        Args:
            replace_with: the node that takes this node's place as an input.
            delete_user_cb: which users to rewire (all by default).
            propagate_meta: copy this node's meta into `replace_with`'s.
        Returns:
            the users that were rewired."""
        if propagate_meta:
            for k, v in self.meta.items():
                replace_with.meta.setdefault(k, v)
        done = []
        for user in list(self.users):
            if not delete_user_cb(user):
                continue
            user.replace_input_with(self, replace_with)
            done.append(user)
        return done

    def replace_input_with(self, old_input: "Node", new_input: "Node") -> None:
        """Replace every occurrence of the input `old_input` in args/kwargs by `new_input`."""
        swap = lambda n: new_input if n is old_input else n  # noqa: E731
        self._update_args_kwargs(map_arg(self._args, swap), map_arg(self._kwargs, swap))

    def is_impure(self) -> bool:
        """Whether dead-code elimination must keep the node although nothing reads it."""
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_function":
            return self.target in (operator.setitem,) or getattr(self.target, "_fx_impure", False)
        if self.op == "call_method":
            return self.target.endswith("_") and not self.target.endswith("__")
        return False

    # --- printing --------------------------------------------------------------------------
    def format_node(self) -> str:
        """The node as `print(graph)` shows it (torch.fx's format)."""
        if self.op == "output":
            return f"return {_format_arg(self.args[0]).replace('%', '')}"
        head = f"%{self.name} : [num_users={len(self.users)}] = "
        if self.op == "placeholder":
            default = f"(default={self.args[0]})" if self.args else ""
            return head + f"placeholder[target={self.target}]" + default
        if self.op == "get_attr":
            return head + f"get_attr[target={self.target}]"
        target = _qualified_name(self.target) if self.op == "call_function" else self.target
        return (head + f"{self.op}[target={target}](args = {_format_arg(self.args)}, "
                f"kwargs = {_format_arg(self.kwargs)})")

    def __repr__(self) -> str:
        return self.name
