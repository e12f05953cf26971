"""ShapeProp: run a GraphModule on example inputs and note each node's tensor metadata."""
from __future__ import annotations

from typing import Any, NamedTuple

from ..._tensor import Tensor
from ..interpreter import Interpreter
from ..node import Node, map_aggregate


class TensorMetadata(NamedTuple):
    """What ShapeProp records of a Tensor result (torch.fx's fields)."""

    shape: Any
    dtype: Any
    requires_grad: bool
    stride: tuple
    memory_format: Any
    is_quantized: bool
    qparams: dict


def _strides(shape) -> tuple:
    """Row-major strides in elements (fgrad.torch Tensors have no stride of their own)."""
    out, step = [], 1
    for d in reversed(tuple(shape)):
        out.append(step)
        step *= max(int(d), 1)
    return tuple(reversed(out))


def _extract(t: Tensor) -> TensorMetadata:
    return TensorMetadata(t.shape, t.dtype, t.requires_grad, _strides(t.shape), None, False, {})


class ShapeProp(Interpreter):
    """Interpreter that stores `node.meta['tensor_meta']` (a TensorMetadata, or a structure
    of them for a tuple/list result) and `node.meta['type']` for every node it runs."""

    def run_node(self, n: Node) -> Any:
        result = super().run_node(n)
        found = []

        def meta(x):
            if isinstance(x, Tensor):
                found.append(True)
                return _extract(x)
            return x
        m = map_aggregate(result, meta)
        if found:
            n.meta["tensor_meta"] = m
        n.meta["type"] = type(result)
        return result

    def propagate(self, *args) -> Any:
        """Run the module on `args`, recording metadata.

        Returns:
            the module's output."""
        return super().run(*args)
