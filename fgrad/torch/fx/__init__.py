"""torch.fx on fgrad.torch: symbolic tracing, Graph editing, code generation, interpreters.

`symbolic_trace(module)` runs the module's forward on Proxy objects; everything done to
them (operators, method calls, attribute reads, submodule calls, fgrad.torch functions)
becomes a Node of a Graph, and `GraphModule` turns the graph back into a Module whose forward
is generated Python. `Interpreter`/`Transformer` run or rebuild a graph node by node,
`subgraph_rewriter.replace_pattern` rewrites matches of a pattern, `passes.shape_prop`
records shapes.

Beyond torch.fx: `GraphModule.to_jaxpr(*example_inputs)` gives fgrad's typed IR of the module
(parameters and buffers as inputs), and `fgrad.torch.compile(model)` captures a model with
`symbolic_trace` and runs that program under fgrad.jit, with gradients (fgrad/torch/_compile.py).

How fgrad.torch functions see a Proxy. PyTorch's functions are C functions that look for a
`__torch_function__` on non-Tensor arguments; fgrad.torch's are Python functions, and giving
each a check for Proxies would cost every call of every op. Instead, while a capture is held
(during `Tracer.trace`, and while any Proxy object is alive — a hand-built graph in the style
of `Proxy(graph.placeholder("x"))` holds it too), the public functions of `torch`,
`torch.nn.functional`, `torch.linalg` and `torch.special` are replaced, as module attributes,
by wrappers that record a call_function node (target: the original function) when a Proxy is
among their arguments and call the original otherwise; the originals are restored when the
last Proxy is gone. Programs that never build a Proxy never run a wrapper, so the Tensor path
is untouched. A trace also swaps in stand-ins for torch functions bound by name
(`from torch import relu`) in the globals of the traced function and of the traced modules'
classes; elsewhere such a name (a hand-built graph's helper, say) calls the function
itself on the Proxy, where PyTorch would record it.

The stand-ins compare and hash equal to the functions they stand for, so
`node.target == torch.relu` holds inside a Transformer (where Proxies are alive); `is` does
not. While installed, a stand-in adds a few microseconds to each call. Tensor operators get
stand-ins too, for a Tensor constant on the left of a Proxy (`scale * x` records
`scale.mul(x)`, as torch.fx does), and so do `math`'s functions while tracing (torch.fx's
autowrap). A torch.nn.functional call is recorded as PyTorch's Python functions pass it on:
required parameters positionally, the others by keyword with their values or defaults.
The ops of `torch.ops` (`torch.ops.aten.add.Tensor`, `torch.ops.profiler._record_function_enter`)
check for a Proxy themselves, through a hook this package installs in fgrad.torch.ops: their
nodes have the op object as target and print and generate code as `torch.ops.aten.add.Tensor`.

Differences from torch.fx: no `*args` forward parameters and no pytree inputs; a concrete
argument's guard calls `torch.fx._symbolic_trace._assert` (fgrad.torch has no
`torch._assert`); the functional calls that PyTorch implements in C under `torch._C._nn`
(F.gelu, F.linear, ...) print under `torch.nn.functional`.
"""
from . import passes  # noqa: F401
from . import subgraph_rewriter  # noqa: F401
from ._symbolic_trace import Tracer, symbolic_trace, wrap
from .graph import Graph
from .graph_module import GraphModule
from .interpreter import Interpreter, Transformer
from .node import Node, map_arg
from .proxy import Proxy
from .subgraph_rewriter import replace_pattern
from . import node, proxy, graph, graph_module, interpreter  # noqa: F401,E402

__all__ = ["Graph", "GraphModule", "Interpreter", "Node", "Proxy", "Tracer", "Transformer", "map_arg",
           "replace_pattern", "symbolic_trace", "wrap"]
