"""fgrad.viz: computation graphs and IR you can look at.

    fgrad.viz.draw(f, x)                   # f's IR: inputs, primitives (shape, dtype), constants, outputs
    fgrad.viz.draw(fgrad.grad(f), x)       # forward and backward equations in two colours
    fgrad.viz.draw(fgrad.jit(f), x)        # the compiled program, each fused region boxed
    fgrad.viz.draw(loss, params=dict(model.named_parameters()), show_saved=True)  # a Tensor's grad_fn graph

Each call returns a `Graph`: it displays inline in Jupyter, `.save("g.svg")` / `.save("g.png")`
write it, `.source` is its Graphviz DOT text. Rendering needs the `graphviz` Python package
(`pip install 'fgrad[viz]'`) and the Graphviz binaries (`apt-get install graphviz`,
`conda install graphviz` or `brew install graphviz`); `.source` needs neither.

How `draw` tells forward from backward equations is explained in `fgrad.viz._jaxpr`: an
equation is backward when the reverse-mode engine was running as it was traced.
"""
from __future__ import annotations

from typing import Any, Mapping

from ..core.errors import FgradTypeError
from ..core.ir import ClosedJaxpr, Jaxpr
from ..torch._tensor.tensor import Tensor
from ._graph import INSTALL_HINT, Graph, GraphvizNotFoundError, binaries_available
from ._jaxpr import input_labels, is_jitted, jaxpr_graph, jit_program, trace
from ._tensor import tensor_graph

__all__ = ["draw", "Graph", "GraphvizNotFoundError", "binaries_available", "INSTALL_HINT"]


def _name(f) -> str:
    return getattr(f, "__name__", type(f).__name__)


def draw(obj: Any, *args: Any, params: Mapping[str, Tensor] | None = None, show_saved: bool = False,
         format: str = "svg", rankdir: str = "TB") -> Graph:
    """A picture of a computation, by what `obj` is:

    - a function, with example positional arguments `args` (arrays, numbers, Tensors or
      pytrees of them; only their shapes and dtypes matter): its traced IR, as
      `fgrad.make_jaxpr(obj)(*args)` gives it. A node per input (named after the function's
      parameters), constant, equation (primitive, its params, the output's dtype and shape) and
      output. Where the function runs reverse mode (`fgrad.grad(f)`, `vjp`, `jacrev`,
      `hessian`, `Tensor.backward()` inside it), equations are coloured by phase: forward, or
      the backward pass that emitted them (a legend names the colours).
    - a function made by `fgrad.jit`, with example arguments: the program jit compiles for
      them, each fused element-wise region (one Numba loop, or plain Python for 0-d values)
      drawn as a box around its equations, labelled with its kernel as `lower().as_text()`
      names it.
    - a Tensor, or a list of Tensors (no `args`): the facade's recorded graph from it back to
      its leaves, as torchviz's make_dot draws it: a node per `grad_fn` (MulBackward0, ...),
      the leaves labelled with their name in `params` (e.g.
      `params=dict(model.named_parameters())`) and their dtype and shape. `show_saved=True`
      adds the values each node saved for its backward pass, with their shapes.
    - a `ClosedJaxpr` or `Jaxpr` (no `args`): that IR.

    `format` is the picture Jupyter shows inline ("svg" or "png"); `rankdir` Graphviz's
    layout direction ("TB" top to bottom, "LR" left to right).
    """
    is_tensors = isinstance(obj, Tensor) or (
        isinstance(obj, (list, tuple)) and len(obj) > 0 and all(isinstance(t, Tensor) for t in obj))
    if not is_tensors and (params is not None or show_saved):
        raise FgradTypeError("fgrad.viz.draw: params= and show_saved= apply to a Tensor's graph "
                        f"(draw(loss, params=...)), not to a {type(obj).__name__}")
    if is_tensors or isinstance(obj, (Jaxpr, ClosedJaxpr)):
        if args:
            raise FgradTypeError(f"fgrad.viz.draw: a {type(obj).__name__} takes no arguments; to trace "
                            "a function on example arguments, pass the function: draw(f, *args)")
        if is_tensors:
            return tensor_graph(obj, params, show_saved, format, rankdir)
        return jaxpr_graph(obj, "jaxpr", format=format, rankdir=rankdir)
    if is_jitted(obj):
        closed, program = jit_program(obj, args)
        kernels = sum(s.kind == "kernel" for s in program.steps)
        title = (f"jit of {_name(obj)}: {len(program.steps)} step{'s' * (len(program.steps) != 1)}, "
                 f"{kernels} fused kernel{'s' * (kernels != 1)}")
        return jaxpr_graph(closed, title, input_labels(obj, args), program=program, format=format,
                           rankdir=rankdir)
    if callable(obj):
        closed, labels, phase_of, passes = trace(obj, args)
        title = f"jaxpr of {_name(obj)}" + (" (forward and backward)" if passes else "")
        return jaxpr_graph(closed, title, labels, phase_of, passes, format=format, rankdir=rankdir)
    raise FgradTypeError("fgrad.viz.draw takes a function with example arguments, a function made by "
                    "fgrad.jit, a Tensor (or a list of Tensors) or a jaxpr; got a "
                    f"{type(obj).__name__}")
