"""torch.fx's Graph: a doubly linked list of Nodes, their names, and the Python code they become."""
from __future__ import annotations

import builtins
import contextlib
import inspect
import keyword
import operator
import re
from typing import Any, Callable, Iterator

from .node import _INFIX, _PREFIX, Node, map_arg
from ...core.errors import FgradRuntimeError

_RESERVED = set(keyword.kwlist) | set(dir(builtins)) | {"inf", "nan", "NoneType", "torch", "self"}
_SUFFIX = re.compile(r"(.*)_(\d+)$")
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _snake_case(s: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", s).lower()


class _Namespace:
    """Unique, legal Python names for nodes (torch.fx's rule: `add`, `add_1`, ...; builtins
    and keywords get a suffix: `sum_1`, `float_1`)."""

    def __init__(self) -> None:
        self._used: set[str] = set()
        self._next: dict[str, int] = {}

    def create_name(self, candidate: str) -> str:
        name = re.sub(r"[^0-9A-Za-z_]", "_", candidate) or "_"
        if name[0].isdigit():
            name = "_" + name
        m = _SUFFIX.match(name)
        base, num = (m.group(1), int(m.group(2))) if m else (name, None)
        if num is None and name not in self._used and name not in _RESERVED:
            self._used.add(name)
            return name
        n = self._next.get(base, 1) if num is None else num
        while True:
            cand = f"{base}_{n}"
            if cand not in self._used and cand not in _RESERVED:
                break
            n += 1
        if num is None:
            self._next[base] = n + 1
        self._used.add(cand)
        return cand

    def release(self, name: str) -> None:
        self._used.discard(name)


class _NodeList:
    """The graph's nodes in order; iterating tolerates erasing the current node."""

    def __init__(self, graph: "Graph", reverse: bool = False) -> None:
        self._graph, self._reverse = graph, reverse

    def __len__(self) -> int:
        return self._graph._len

    def __iter__(self) -> Iterator[Node]:
        root = self._graph._root
        cur = root._prev if self._reverse else root._next
        while cur is not root:
            nxt = cur._prev if self._reverse else cur._next
            if not cur._erased:
                yield cur
            cur = nxt

    def __reversed__(self) -> "_NodeList":
        return _NodeList(self._graph, not self._reverse)


class Graph:
    """torch.fx's intermediate representation: Nodes in execution order, ending in `output`."""

    def __init__(self, owning_module=None, tracer_cls=None, tracer_extras=None) -> None:
        self._root = Node.__new__(Node)
        self._root._prev = self._root._next = self._root
        self._root._erased = False
        self._len = 0
        self._ns = _Namespace()
        self._insert = self._root.prepend
        self.owning_module = owning_module

    @property
    def nodes(self) -> _NodeList:
        """The nodes in order (supports `reversed` and `len`)."""
        return _NodeList(self)

    # --- building ----------------------------------------------------------------------------
    def create_node(self, op: str, target: Any, args: tuple | None = None, kwargs: dict | None = None,
                    name: str | None = None, type_expr: Any = None) -> Node:
        """Insert a new node at the insertion point (the end unless inserting_before/after).

        Args:
            op: placeholder, get_attr, call_function, call_method, call_module or output.
            target: what the op calls or reads (a callable for call_function, else a string).
            args, kwargs: its arguments (Nodes among them are inputs).
            name: the wanted name (made unique); by default derived from `target`.
            type_expr: an optional type annotation.
        Returns:
            the new Node."""
        # a function reached while Proxies live is a stand-in: the node keeps the function itself
        target = getattr(target, "_fx_original", target) if op == "call_function" else target
        candidate = name if name is not None else self._target_to_str(target)
        node = Node(self, self._ns.create_name(candidate), op, target, tuple(args or ()),
                    dict(kwargs or {}), type_expr)
        self._insert(node)
        self._len += 1
        return node

    @staticmethod
    def _target_to_str(target: Any) -> str:
        if callable(target) and not isinstance(target, str):
            from . import _capture  # (imported on use: a cycle within fgrad.torch)
            path = _capture.path_of(target)  # (torch's name: fgrad's arctan is atan's code)
            if path is not None and path.startswith("torch.ops."):
                path = None  # (an op is named by op and overload: aten.add.Tensor -> add_tensor)
            name = path.rsplit(".", 1)[1] if path else (getattr(target, "__name__", None)
                                                         or type(target).__name__)
        else:
            name = str(target).replace(".", "_")
        if name.startswith("__") and name.endswith("__") and len(name) > 4:
            name = name[2:-2]
        return _snake_case(name)

    def placeholder(self, name: str, type_expr: Any = None,
                    default_value: Any = inspect.Signature.empty) -> Node:
        """A forward input named `name` (with a default when `default_value` is given)."""
        args = () if default_value is inspect.Signature.empty else (default_value,)
        return self.create_node("placeholder", name, args, {}, name=name, type_expr=type_expr)

    def get_attr(self, qualified_name: str, type_expr: Any = None) -> Node:
        """A read of the module attribute at the dotted path `qualified_name`."""
        return self.create_node("get_attr", qualified_name, (), {}, type_expr=type_expr)

    def call_module(self, module_name: str, args: tuple | None = None, kwargs: dict | None = None,
                    type_expr: Any = None) -> Node:
        """A call of the submodule at the dotted path `module_name`."""
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def call_method(self, method_name: str, args: tuple | None = None, kwargs: dict | None = None,
                    type_expr: Any = None) -> Node:
        """`args[0].method_name(*args[1:], **kwargs)`."""
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_function(self, the_function: Callable, args: tuple | None = None,
                      kwargs: dict | None = None, type_expr: Any = None) -> Node:
        """`the_function(*args, **kwargs)`."""
        return self.create_node("call_function", the_function, args, kwargs, type_expr=type_expr)

    def output(self, result: Any, type_expr: Any = None) -> Node:
        """The graph's result (`result` may nest Nodes in tuples, lists, dicts)."""
        return self.create_node("output", "output", (result,), {}, name="output", type_expr=type_expr)

    def node_copy(self, node: Node, arg_transform: Callable[[Node], Any] = lambda x: x) -> Node:
        """A copy of `node` (from any graph) inserted here, its input Nodes mapped by `arg_transform`."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        new = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        new.meta = dict(node.meta)
        return new

    def graph_copy(self, g: "Graph", val_map: dict) -> Any:
        """Copy every node of `g` but its output into this graph (`val_map`: old node -> new,
        filled in; pre-seeded entries are used as they are). Returns the output's argument mapped."""
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                return map_arg(node.args[0], lambda n: val_map[n])
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def __deepcopy__(self, memo: dict | None = None) -> "Graph":
        """A copy with new nodes (same names, targets and constants; meta copied shallowly)."""
        g = Graph()
        val_map: dict = {}
        out = g.graph_copy(self, val_map)
        old_out = next((n for n in self.nodes if n.op == "output"), None)
        if old_out is not None:
            g.output(out, old_out.type)
        return g

    def erase_node(self, to_erase: Node) -> None:
        """Remove a node that no other node uses.

        Raises:
            RuntimeError: when the node still has users."""
        if to_erase.users:
            raise FgradRuntimeError(f"Tried to erase Node {to_erase} but it still had {len(to_erase.users)} "
                               f"users in the graph: {to_erase.users}!")
        if to_erase.graph is not self:
            raise FgradRuntimeError(f"Attempting to remove {to_erase} from wrong graph!")
        if to_erase._erased:
            return
        to_erase._remove_from_list()
        to_erase._erased = True
        self._len -= 1
        to_erase._update_args_kwargs((), {})
        self._ns.release(to_erase.name)

    @contextlib.contextmanager
    def _inserting(self, fn):
        saved = self._insert
        self._insert = fn
        try:
            yield
        finally:
            self._insert = saved

    def inserting_before(self, n: Node | None = None):
        """Context manager: new nodes go just before `n` (None: the start of the graph)."""
        if n is None:
            return self.inserting_after(self._root)
        return self._inserting(n.prepend)

    def inserting_after(self, n: Node | None = None):
        """Context manager: new nodes go just after `n`, in order (None: the end)."""
        if n is None:
            return self._inserting(self._root.prepend)
        state = [n]

        def insert(x):
            state[0].append(x)
            state[0] = x
        return self._inserting(insert)

    # --- checks and passes ------------------------------------------------------------------
    def lint(self) -> None:
        """Check the graph: unique names, every input defined earlier in this graph, at most
        one output, at the end.

        Raises:
            RuntimeError: naming the offending node."""
        seen: set[Node] = set()
        names: set[str] = set()
        for node in self.nodes:
            if node.graph is not self:
                raise FgradRuntimeError(f"Node {node} does not belong to this Graph")
            if node.name in names:
                raise FgradRuntimeError(f"Node redefined name {node.name}!")
            names.add(node.name)
            for inp in node.all_input_nodes:
                if inp not in seen:
                    raise FgradRuntimeError(f"Argument '{inp}' of Node '{node}' was used before it has been "
                                       "defined! Please check that Nodes in the graph are topologically ordered")
            if node.op == "output" and node.next is not self._root:
                raise FgradRuntimeError(f"output node {node} is not the last node of the graph")
            seen.add(node)

    def eliminate_dead_code(self) -> bool:
        """Erase, from the end backwards, the pure nodes nothing uses.

        Returns:
            whether the graph changed."""
        changed = False
        for node in reversed(self.nodes):
            if not node.users and not node.is_impure():
                self.erase_node(node)
                changed = True
        return changed

    def find_nodes(self, *, op: str, target: Any = None) -> list[Node]:
        """The nodes with this op (and target, when given)."""
        return [n for n in self.nodes if n.op == op and (target is None or n.target == target)]

    # --- printing ----------------------------------------------------------------------------
    def __str__(self) -> str:
        lines = ["graph():"]
        lines += ["    " + n.format_node() for n in self.nodes]
        return "\n".join(lines)

    def print_tabular(self) -> None:
        """Print the nodes as a table: opcode, name, target, args, kwargs."""
        rows = [[n.op, n.name, str(n.target), str(n.args), str(n.kwargs)] for n in self.nodes]
        head = ["opcode", "name", "target", "args", "kwargs"]
        # tabulate's "simple" layout, which torch.fx prints with: a column is at least its
        # header plus two wide
        widths = [max([len(h) + 2] + [len(r[i]) for r in rows]) for i, h in enumerate(head)]
        fmt = lambda r: "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731
        print("\n".join([fmt(head), fmt(["-" * w for w in widths])] + [fmt(r) for r in rows]))

    # --- code generation ---------------------------------------------------------------------
    def python_code(self, root_module: str = "self") -> "PythonCode":
        """The `forward` source this graph runs as, and the globals it needs."""
        return _codegen(self, root_module)


class PythonCode:
    """Generated source (`src`) of `forward` and the globals (`globals`) it refers to."""

    def __init__(self, src: str, globals_: dict) -> None:
        self.src = src
        self.globals = globals_


def _attr_path(base: str, path: str) -> str:
    out = base
    for part in path.split("."):
        out = f"{out}.{part}" if _IDENT.match(part) and not keyword.iskeyword(part) else f'getattr({out}, "{part}")'
    return out


def _codegen(graph: Graph, root: str) -> PythonCode:
    from ... import torch as _torch_mod  # (imported on use: a cycle within fgrad.torch)

    glb: dict[str, Any] = {"torch": _torch_mod, "inf": float("inf"), "nan": float("nan"),
                           "NoneType": type(None)}
    objs: dict[int, str] = {}
    wrapped: list[str] = []

    def global_name(obj: Any, hint: str) -> str:
        if id(obj) in objs:
            return objs[id(obj)]
        name = re.sub(r"[^0-9A-Za-z_]", "_", hint)
        if name[0:1].isdigit():
            name = "_" + name
        base, k = name, 0
        while name in glb or name in _RESERVED:
            k += 1
            name = f"{base}_{k}"
        glb[name] = obj
        objs[id(obj)] = name
        return name

    def fmt(a: Any) -> str:
        if isinstance(a, Node):
            return a.name
        if isinstance(a, tuple) and not hasattr(a, "_fields"):
            inner = ", ".join(fmt(e) for e in a)
            return f"({inner},)" if len(a) == 1 else f"({inner})"
        if isinstance(a, list):
            return "[" + ", ".join(fmt(e) for e in a) + "]"
        if isinstance(a, dict):
            return "{" + ", ".join(f"{k!r}: {fmt(v)}" for k, v in a.items()) + "}"
        if isinstance(a, slice):
            return f"slice({fmt(a.start)}, {fmt(a.stop)}, {fmt(a.step)})"
        if a is None or a is Ellipsis or type(a) in (bool, int, str):
            return repr(a)
        if type(a) is float:
            return repr(a) if a == a and a not in (float("inf"), float("-inf")) else (
                "nan" if a != a else ("inf" if a > 0 else "-inf"))
        if type(a) is complex:
            return repr(a)
        return global_name(a, type(a).__name__.lower())

    def call_args(args: tuple, kwargs: dict) -> str:
        parts = [fmt(a) for a in args] + [f"{k} = {fmt(v)}" for k, v in kwargs.items()]
        return ", ".join(parts)

    def fn_expr(fn: Callable) -> str:
        from . import _capture  # (imported on use: a cycle within fgrad.torch)
        path = _capture.path_of(fn)
        if path is not None:
            return path
        if getattr(builtins, getattr(fn, "__name__", ""), None) is fn:
            if _capture.is_wrapped(fn) and fn.__name__ not in wrapped:
                wrapped.append(fn.__name__)
            return fn.__name__
        module = (getattr(fn, "__module__", None) or "").replace(".", "_")
        name = global_name(fn, f"{module}_{getattr(fn, '__name__', 'fn')}")
        if _capture.is_wrapped(fn) and name not in wrapped:
            wrapped.append(name)
        return name

    # the last user of each node: where the generated code drops its reference
    # (walking backwards, each input is last used where it is first met; per node, in the
    # order of its arguments, as torch.fx lists them)
    last_use: dict[Node, Node] = {}
    to_free: dict[Node, list[Node]] = {}
    for node in reversed(graph.nodes):
        for inp in node.all_input_nodes:
            if inp not in last_use:
                last_use[inp] = node
                to_free.setdefault(node, []).append(inp)
    for node in graph.nodes:  # a value nothing reads is dropped where it is made
        if not node.users and node.op not in ("placeholder", "output"):
            to_free.setdefault(node, []).append(node)

    params, body = [], []
    for node in graph.nodes:
        op, t, a, k = node.op, node.target, node.args, node.kwargs
        if op == "placeholder":
            params.append(t if not a else f"{t} = {fmt(a[0])}")
            if node.name != t:
                body.append(f"{node.name} = {t}")
            continue
        if op == "output":
            body.append(f"return {fmt(a[0])}")
            continue
        if op == "get_attr":
            expr = _attr_path(root, t)
        elif op == "call_module":
            expr = f"{_attr_path(root, t)}({call_args(a, k)})"
        elif op == "call_method":
            expr = f"{fmt(a[0])}.{t}({call_args(a[1:], k)})"
        elif t in _INFIX and len(a) == 2 and not k:
            expr = f"{fmt(a[0])} {_INFIX[t]} {fmt(a[1])}"
        elif t in _PREFIX and len(a) == 1 and not k:
            expr = f"{_PREFIX[t]}{fmt(a[0])}"
        elif t is operator.getitem and len(a) == 2 and not k:
            expr = f"{fmt(a[0])}[{fmt(a[1])}]"
        elif t is builtins.getattr and len(a) == 2 and isinstance(a[1], str) and _IDENT.match(a[1]):
            expr = f"{fmt(a[0])}.{a[1]}"
        else:
            expr = f"{fn_expr(t)}({call_args(a, k)})"
        line = f"{node.name} = {expr}"
        free = [n for n in to_free.get(node, ())]
        if free:
            line += ";  " + " = ".join(n.name for n in free) + " = None"
        body.append(line)
    if not body or not body[-1].startswith("return"):
        body.append("pass")
    sig = ", ".join([root] + params)
    # (a wrapped function stays one call when this code is itself traced, as in torch.fx)
    wraps = "\n".join(f'torch.fx._symbolic_trace.wrap("{w}")' for w in wrapped)
    src = f"\n{wraps}\n\ndef forward({sig}):\n" + "".join(f"    {b}\n" for b in body) + "    "
    return PythonCode(src, glb)
