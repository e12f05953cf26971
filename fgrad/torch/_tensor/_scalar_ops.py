"""ATen's Tensor-and-Scalar overloads, as PyTorch's C++ composites call them.

Inside ATen, `tensor + 1.0` is add(Tensor, Scalar): its node (AddBackward1, MulBackward1, ...)
has the Tensor as its only edge, where Python's `t + 1.0` is AddBackward0 with a (None, 0) entry
for the wrapped number. A composite written on Tensors (cov, trapezoid, rms_norm, the losses)
uses these for such steps, so its graph is PyTorch's. The number promotes as PyTorch's wrapped
numbers do (an integer Tensor times 0.5 is a float Tensor; a float Tensor keeps its dtype).
"""
from __future__ import annotations

from ... import numpy as fnp
from ...core.trace import aval_of
from ._boundary import call, replayable
from ._policy import TORCH as P
from .tensor import Tensor, wrap

__all__ = ["add_scalar", "sub_scalar", "mul_scalar", "div_scalar", "scalar_sub"]


def add_scalar(input: Tensor, other: float) -> Tensor:
    """ATen's add(Tensor, Scalar): input + other, one AddBackward1 node with input's edge only.

    Args:
        input: a Tensor.
        other: a Python number.

    Returns:
        A Tensor of input's shape (input's dtype, or PyTorch's promotion of it with `other`).
    """
    return call("AddBackward1", _add, (input, other))


def sub_scalar(input: Tensor, other: float) -> Tensor:
    """ATen's sub(Tensor, Scalar): input - other, one SubBackward1 node with input's edge only.

    Args:
        input: a Tensor.
        other: a Python number.

    Returns:
        A Tensor of input's shape (input's dtype, or PyTorch's promotion of it with `other`).
    """
    return call("SubBackward1", _sub, (input, other))


def mul_scalar(input: Tensor, other: float) -> Tensor:
    """ATen's mul(Tensor, Scalar) (C++'s `double * Tensor` too): input * other, one MulBackward1
    node with input's edge only.

    Args:
        input: a Tensor.
        other: a Python number.

    Returns:
        A Tensor of input's shape (input's dtype, or PyTorch's promotion of it with `other`).
    """
    return call("MulBackward1", _mul, (input, other))


def div_scalar(input: Tensor, other: float) -> Tensor:
    """ATen's div(Tensor, Scalar): input / other, one DivBackward1 node with input's edge only.

    Args:
        input: a Tensor (an integer one gives PyTorch's default float dtype).
        other: a Python number.

    Returns:
        A Tensor of input's shape.
    """
    return call("DivBackward1", _div, (input, other))


def scalar_sub(other: float, input: Tensor) -> Tensor:
    """C++'s `Scalar - Tensor` inside ATen's composites: a tensor filled with `other`, minus
    input, one SubBackward0 node whose first entry (the filled tensor) is (None, 0).

    Args:
        other: a Python number.
        input: a Tensor.

    Returns:
        A Tensor of input's shape and dtype.
    """
    a = aval_of(input._value)
    return call("SubBackward0", _sub_filled, (wrap(fnp.full(a.shape, other, a.dtype)), input))


@replayable
def _add(v, other):
    return fnp.add(v, other, policy=P)


@replayable
def _sub(v, other):
    return fnp.subtract(v, other, policy=P)


@replayable
def _mul(v, other):
    return fnp.multiply(v, other, policy=P)


@replayable
def _div(v, other):
    return fnp.true_divide(v, other, policy=P)


@replayable
def _sub_filled(filled, v):
    return fnp.subtract(filled, v)
