"""torch.fx's GraphModule: a Module whose forward is Python generated from a Graph."""
from __future__ import annotations

from typing import Any

from .. import nn
from .graph import Graph
import copy
from ...core.errors import FgradRuntimeError


def _fetch(obj: Any, path: str) -> Any:
    for part in path.split("."):
        if not hasattr(obj, part):
            raise AttributeError(f"{type(obj).__name__} has no attribute {part!r} (looking up {path!r})")
        obj = getattr(obj, part)
    return obj


def _assign(dst: nn.Module, path: str, value: Any) -> None:
    *prefix, last = path.split(".")
    for part in prefix:
        sub = dst._modules.get(part) if part in dst._modules else dst.__dict__.get(part)
        if sub is None:
            sub = nn.Module()
            dst.add_module(part, sub)
        dst = sub
    if isinstance(value, (nn.Module, nn.Parameter)):
        setattr(dst, last, value)
    else:
        from .._tensor import Tensor  # (imported on use: a cycle within fgrad.torch)
        if isinstance(value, Tensor):
            dst.register_buffer(last, value)
        else:
            setattr(dst, last, value)


class GraphModule(nn.Module):
    """A Module that runs `graph`: its forward is generated Python (`.code`), and it holds
    the submodules, parameters, buffers and attributes the graph's nodes refer to, copied
    from `root` (a Module, or a dict from dotted path to object).

    Each GraphModule gets a class of its own (named `class_name`, the root's class name by
    default), so recompiling one does not change another's forward."""

    def __new__(cls, *args, **kwargs):
        if not getattr(cls, "_fx_per_instance", False):
            root = args[0] if args else kwargs.get("root")
            name = kwargs.get("class_name") or (args[2] if len(args) > 2 else None) or (
                type(root).__name__ if isinstance(root, nn.Module) else "GraphModule")
            cls = type(name, (cls,), {"_fx_per_instance": True})
        return object.__new__(cls)

    def __init__(self, root: nn.Module | dict, graph: Graph, class_name: str = "GraphModule") -> None:
        super().__init__()
        if isinstance(root, nn.Module):
            self.training = root.training
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    _assign(self, node.target, _fetch(root, node.target))
        elif isinstance(root, dict):
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    if node.target not in root:
                        raise FgradRuntimeError(f"Node {node.name} referenced target {node.target} but that "
                                           "target was not provided in ``root``!")
                    _assign(self, node.target, root[node.target])
        else:
            raise FgradRuntimeError(f"Unsupported type {type(root).__name__} passed for root (Module or dict expected)")
        self.graph = graph

    @property
    def graph(self) -> Graph:
        """The Graph this module runs; assigning one recompiles."""
        return self.__dict__["_graph"]

    @graph.setter
    def graph(self, g: Graph) -> None:
        self.__dict__["_graph"] = g
        g.owning_module = self
        self.recompile()

    @property
    def code(self) -> str:
        """The generated source of forward."""
        return self.__dict__["_code"]

    def to_jaxpr(self, *args, **kwargs):
        """fgrad's typed IR of this module on example inputs (beyond torch.fx): the ClosedJaxpr
        whose inputs are the parameters, the buffers and the Tensor arguments (see
        fgrad.torch._compile.module_jaxpr; fgrad.torch.compile runs this program).

        Args:
            *args, **kwargs: example inputs, as forward takes them.

        Returns:
            the ClosedJaxpr."""
        from .._compile import module_jaxpr  # (imported on use: _compile imports fx)
        return module_jaxpr(self, *args, **kwargs)

    def recompile(self):
        """Regenerate forward from the (edited) graph.

        Returns:
            the PythonCode generated."""
        pc = self.graph.python_code("self")
        glb = dict(pc.globals)
        exec(compile(pc.src, f"<eval_with_key>.{type(self).__name__}", "exec"), glb)
        type(self).forward = glb["forward"]
        self.__dict__["_code"] = pc.src
        return pc

    def print_readable(self, print_output: bool = True) -> str:
        """The module as a class definition with its generated forward.

        Args:
            print_output: print it too.
        Returns:
            the text."""
        lines = self.code.strip("\n").rstrip().splitlines()
        at = next(i for i, line in enumerate(lines) if line.startswith("def forward"))
        # (torch.fx notes where each node came from; nodes here carry no stack trace)
        lines.insert(at + 1, "    # No stacktrace found for following nodes")
        text = f"class {type(self).__name__}(torch.nn.Module):\n" + "\n".join(
            "    " + line if line else line for line in lines) + "\n"
        if print_output:
            print(text)
        return text

    def __str__(self) -> str:
        return (super().__repr__() + "\n" + self.code
                + "\n# To see more debug info, please use `graph_module.print_readable()`")

    def __deepcopy__(self, memo: dict) -> "GraphModule":
        fake = nn.Module()
        state = {k: v for k, v in self.__dict__.items() if k not in ("_graph", "_code")}
        fake.__dict__.update(copy.deepcopy(state, memo))
        return GraphModule(fake, copy.deepcopy(self.graph), type(self).__name__)

    def add_submodule(self, target: str, m: nn.Module) -> bool:
        """Install `m` at the dotted path `target`, creating empty Modules on the way.

        Returns:
            False when a non-Module attribute is in the way, else True."""
        *prefix, last = target.split(".")
        mod: nn.Module = self
        for part in prefix:
            sub = getattr(mod, part, None)
            if sub is None:
                sub = nn.Module()
                mod.add_module(part, sub)
            elif not isinstance(sub, nn.Module):
                return False
            mod = sub
        mod.add_module(last, m)
        return True

    def delete_submodule(self, target: str) -> bool:
        """Remove the submodule at the dotted path `target`.

        Returns:
            whether there was one to remove."""
        *prefix, last = target.split(".")
        mod = self
        for part in prefix:
            mod = getattr(mod, part, None)
            if not isinstance(mod, nn.Module):
                return False
        if last not in mod._modules:
            return False
        delattr(mod, last)
        return True

    def delete_all_unused_submodules(self) -> None:
        """Remove the submodules no call_module or get_attr node of the graph refers to."""
        used = set()
        for node in self.graph.nodes:
            if node.op in ("call_module", "get_attr"):
                parts = node.target.split(".")
                used.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
                if node.op == "call_module":  # everything inside a called module is in use
                    sub = _fetch(self, node.target)
                    used.update(f"{node.target}.{n}" for n, _ in sub.named_modules() if n)
        for name, _ in reversed(list(self.named_modules())):
            if name and name not in used:
                self.delete_submodule(name)
