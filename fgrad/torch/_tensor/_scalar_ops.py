"""ATen's Tensor-and-Scalar overloads, as PyTorch's C++ composites call them.

Inside ATen, `tensor + 1.0` is add(Tensor, Scalar): its node (AddBackward1, MulBackward1, ...)
has the Tensor as its only edge, where Python's `t + 1.0` is AddBackward0 with a (None, 0) entry
for the wrapped number. A composite written on Tensors (cov, trapezoid, rms_norm, the losses)
uses these for such steps, so its graph is PyTorch's. The number promotes as PyTorch's wrapped
numbers do (an integer Tensor times 0.5 is a float Tensor; a float Tensor keeps its dtype).

The overloads differ only in their node's name and their operation, so they are rows of one
table (`TABLE[name] = (grad_fn, fgrad.numpy function, symbol, kind)`) and the functions are made
from the rows:
- SCALAR: `name(input, other)` is `input <symbol> other`, one node with input's edge only;
- FILLED: `name(other, input)` is C++'s `Scalar <symbol> Tensor`, which ATen computes as a tensor
  filled with `other` (input's shape and dtype) <symbol> input: a Tensor-Tensor node whose
  first entry, the filled tensor, is (None, 0).
"""
from __future__ import annotations

from collections.abc import Callable

from ... import numpy as fnp
from ...core.trace import aval_of
from ._boundary import call, replayable
from ._policy import TORCH as P
from .tensor import Tensor, wrap

SCALAR, FILLED = "scalar", "filled"

TABLE: dict[str, tuple[str, Callable, str, str]] = {
    "add_scalar": ("AddBackward1", fnp.add, "+", SCALAR),
    "sub_scalar": ("SubBackward1", fnp.subtract, "-", SCALAR),
    "mul_scalar": ("MulBackward1", fnp.multiply, "*", SCALAR),
    "div_scalar": ("DivBackward1", fnp.true_divide, "/", SCALAR),
    "scalar_sub": ("SubBackward0", fnp.subtract, "-", FILLED),
}

__all__ = list(TABLE)


def _scalar_op(name: str, grad_fn: str, fnp_fn: Callable, symbol: str) -> Callable[[Tensor, float], Tensor]:
    """The SCALAR row `name`: input <symbol> other as one `grad_fn` node over input."""
    @replayable
    def values(v, other):
        return fnp_fn(v, other, policy=P)

    def op(input: Tensor, other: float) -> Tensor:
        return call(grad_fn, values, (input, other))
    op.__doc__ = (f"ATen's {name.split('_')[0]}(Tensor, Scalar): input {symbol} other, one {grad_fn} node with "
                  f"input's edge only.\n\n    Args:\n        input: a Tensor.\n        other: a Python number.\n\n"
                  f"    Returns:\n        A Tensor of input's shape (input's dtype, or PyTorch's promotion of it "
                  f"with `other`).\n    ")
    return op


def _filled_op(name: str, grad_fn: str, fnp_fn: Callable, symbol: str) -> Callable[[float, Tensor], Tensor]:
    """The FILLED row `name`: full(input's shape, other) <symbol> input as one `grad_fn` node
    over (the filled tensor, input)."""
    @replayable
    def values(filled, v):
        return fnp_fn(filled, v, policy=P)

    def op(other: float, input: Tensor) -> Tensor:
        a = aval_of(input._value)
        return call(grad_fn, values, (wrap(fnp.full(a.shape, other, a.dtype)), input))
    op.__doc__ = (f"C++'s `Scalar {symbol} Tensor` inside ATen's composites: a tensor filled with `other`, "
                  f"{symbol} input, one {grad_fn} node whose first entry (the filled tensor) is (None, 0).\n\n"
                  f"    Args:\n        other: a Python number.\n        input: a Tensor.\n\n"
                  f"    Returns:\n        A Tensor of input's shape and dtype.\n    ")
    return op


_MAKERS = {SCALAR: _scalar_op, FILLED: _filled_op}


def _from_table(name: str) -> Callable:
    """The function of row `name`, named as the row."""
    grad_fn, fnp_fn, symbol, kind = TABLE[name]
    op = _MAKERS[kind](name, grad_fn, fnp_fn, symbol)
    op.__name__ = op.__qualname__ = name
    return op


# (assigned one by one, so that importers and static tools see the names)
add_scalar = _from_table("add_scalar")
sub_scalar = _from_table("sub_scalar")
mul_scalar = _from_table("mul_scalar")
div_scalar = _from_table("div_scalar")
scalar_sub = _from_table("scalar_sub")
