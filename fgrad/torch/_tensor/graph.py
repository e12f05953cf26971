"""fgrad.torch.autograd.graph: the graph recorded by Tensor operations, as a typed Jaxpr.

    x = fgrad.torch.randn(3, requires_grad=True)
    y = (x * x).sin().sum()
    print(fgrad.torch.autograd.graph.to_jaxpr(y))      # { lambda ; a:f32[3]. let b:f32[3] = mul a a ...
    fgrad.torch.autograd.graph.to_jaxpr(y)(x_new)      # reruns the recorded computation on x_new

The same conversion (`fgrad.interpreters.record.graph_to_jaxpr`) serves fgrad.vjp's
recording (`vjp_fn.forward_jaxpr()`): both recorders build the same nodes.
"""
from __future__ import annotations

from typing import Sequence

from ...core.errors import FgradRuntimeError, FgradTypeError
from ...core.ir import ClosedJaxpr
from ...interpreters.backward import toposort
from ...interpreters.record import graph_to_jaxpr
from .tensor import AccumulateGrad, ModifiedValue, Tensor, live_node, saved_values

__all__ = ["to_jaxpr"]


def _tensors(x, what: str) -> list:
    ts = [x] if isinstance(x, Tensor) else list(x)
    for i, t in enumerate(ts):
        if not isinstance(t, Tensor):
            raise FgradTypeError(f"to_jaxpr: {what}[{i}] is a {type(t).__name__}, not a Tensor")
    return ts


def _values_checked(input_values: set):
    """The `values` hook: a node's saved values, refusing a constant (not one of the inputs)
    that was overwritten in place since it was saved: the jaxpr could not replay it."""
    def values(node) -> tuple:
        out, primals = saved_values(node)
        for p, raw, x in zip(node.parents, node.primals, primals):
            if p is None and isinstance(x, ModifiedValue) and id(raw) not in input_values:
                raise FgradRuntimeError(x.message)
        return out, primals
    return values


def to_jaxpr(outputs: Tensor | Sequence[Tensor], inputs: Tensor | Sequence[Tensor] | None = None) -> ClosedJaxpr:
    """The computation recorded from `inputs` to `outputs` (grad mode on) as a `ClosedJaxpr`:
    `print` shows it as fgrad.make_jaxpr does; calling it with one array per input reruns it
    (`fgrad.core.ir.eval_jaxpr`) and returns the list of outputs.

    `inputs` default to the graph's leaves that require grad, in the order the recorded ops
    first used them. An input may also be a non-leaf Tensor (the graph is cut there) or a
    Tensor that does not require grad (the ops that read its value read the input instead).
    Any other value the graph read is a constant of the jaxpr, including what an op that is
    not recorded (no derivative: comparisons, argmax, integer results) computed from an
    input, e.g. relu's mask: at other input values the jaxpr reruns the recorded branch.
    Needs the saved values, so not after a backward() without retain_graph=True.
    """
    outs = _tensors(outputs, "outputs")
    roots = [n for n in map(live_node, outs) if n is not None]
    if inputs is None:
        ins = [n.variable for n in toposort(roots) if isinstance(n, AccumulateGrad)]
    else:
        ins = _tensors(inputs, "inputs")
    return graph_to_jaxpr([(live_node(t), t._value) for t in outs], [(live_node(t), t._value) for t in ins],
                          _values_checked({id(t._value) for t in ins}))
